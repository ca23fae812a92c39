"""A workload's shares of the privacy cost and a total budget split over its rows
(accounting/queries/workload.py), against closed forms."""
import math

import numpy as np
import pytest

from prvgui.accounting import Accountant, Gaussian, Laplace, Row
from prvgui.accounting.core.values import Relation
from prvgui.accounting.kinds.approx_dp import ApproxDP
from prvgui.accounting.kinds.discrete_gaussian import DiscreteGaussian
from prvgui.accounting.kinds.pmf_pair import PmfPair
from prvgui.accounting.kinds.zcdp import ZCDP
from prvgui.accounting.pairs.rdp import ORDERS
from prvgui.accounting.queries.calibrate import Infeasible
from prvgui.accounting.queries.comparisons import _rdp_eps
from prvgui.accounting.queries.workload import (dominant_rows, row_shares, split_epsilon, split_rho)

REPLACE_3 = Relation("replace_one", 3)


def test_gaussian_rows_share_rho_in_closed_form():
    """rho of a row = count mu^2 / 2 (Bun, Steinke 2016, Prop. 1.6); the shares are its fraction."""
    rows = [Row(Gaussian(2.0, 1.0), 10), Row(Gaussian(0.5, 3.0), 1), Row(Gaussian(30.0, 1.0), 1000)]
    s = row_shares(rows, delta=1e-6)
    rho = [k * (d / sigma) ** 2 / 2 for sigma, d, k in ((2.0, 1.0, 10), (0.5, 3.0, 1), (30.0, 1.0, 1000))]
    assert s.currency == "rho" and s.additive and s.order is None
    assert s.values == pytest.approx(rho, rel=1e-15)
    assert s.shares == pytest.approx([r / math.fsum(rho) for r in rho], rel=1e-14)
    assert s.total == pytest.approx(math.fsum(rho), rel=1e-15)
    assert s.dominant == (1,)  # 18 of 19.86: one row is over 80%
    # replace-one, groups of 3: each sensitivity six times as large, rho 36 times; the shares stay
    t = row_shares(rows, REPLACE_3, 1e-6)
    assert t.values == pytest.approx([36 * r for r in rho], rel=1e-14) and t.shares == pytest.approx(s.shares)


def test_a_census_of_100_discrete_gaussians_shares_delta2_over_2sigma2():
    rng = np.random.default_rng(3)
    sigmas = rng.uniform(2.0, 40.0, 100).round(2)
    sens = rng.integers(1, 4, 100)
    rows = [Row(DiscreteGaussian(float(s), int(d)), 1) for s, d in zip(sigmas, sens)]
    s = row_shares(rows, delta=1e-10)
    rho = sens.astype(float) ** 2 / (2 * sigmas ** 2)
    assert s.currency == "rho" and s.values == pytest.approx(rho.tolist(), rel=1e-15)
    assert math.fsum(s.shares) == pytest.approx(1.0, rel=1e-12)
    top = [s.shares[i] for i in s.dominant]
    assert top == sorted(top, reverse=True) and sum(top) >= 0.8 > sum(top[:-1])
    assert top[-1] >= max(v for i, v in enumerate(s.shares) if i not in s.dominant)


def test_zcdp_rows_share_their_rho_and_mix_with_gaussians():
    rows = [Row(ZCDP(0.01), 3), Row(Gaussian(1.0), 2), Row(DiscreteGaussian(2.0, 2), 1)]
    s = row_shares(rows)
    assert s.currency == "rho" and s.values == pytest.approx([0.03, 1.0, 0.5], rel=1e-15)


def test_without_rho_the_shares_are_rdp_at_the_order_best_for_the_whole():
    rows = [Row(Gaussian(2.0), 10), Row(Laplace(1.0), 3), Row(ZCDP(0.01, xi=0.1), 1)]
    s = row_shares(rows, delta=1e-5)
    curve = sum(r.count * r.mechanism.rdp(ORDERS) for r in rows)
    k = int(np.flatnonzero(ORDERS == s.order)[0])
    a = s.order
    at_order = curve[k] + math.log1p(-1 / a) - (math.log(1e-5) + math.log(a)) / (a - 1)
    assert s.currency == "rdp" and at_order == pytest.approx(float(_rdp_eps(curve, 1e-5)), rel=1e-12)
    assert s.values == pytest.approx([r.count * r.mechanism.rdp(np.array([a]))[0] for r in rows], rel=1e-12)
    assert s.total == pytest.approx(curve[k], rel=1e-12) and s.dominant[0] == 0


def test_rows_without_rdp_fall_back_to_each_rows_epsilon_not_additive():
    rows = [Row(Gaussian(1.0), 4), Row(ApproxDP(0.5, 1e-7), 2)]
    s = row_shares(rows, delta=1e-5, eps_error=0.05)
    assert s.currency == "epsilon" and not s.additive
    alone = [Accountant([r], 0.05).epsilon(1e-5).upper for r in rows]
    assert s.values == pytest.approx(alone, rel=1e-12)
    assert s.shares == pytest.approx([v / sum(alone) for v in alone], rel=1e-12)


def test_an_infinite_row_takes_the_whole_share_and_a_silent_one_none():
    s = row_shares([Row(Gaussian(0.0), 1), Row(Gaussian(1.0), 1), Row(Gaussian(1.0, 0.0), 5)])
    assert s.shares == (1.0, 0.0, 0.0) and s.dominant == (0,)
    z = row_shares([Row(Gaussian(1.0, 0.0), 5)])
    assert z.total == 0 and z.shares == (0.0,) and z.dominant == ()


@pytest.mark.parametrize("shares,dominant", [
    ((0.5, 0.3, 0.2), (0, 1)), ((0.2, 0.2, 0.2, 0.2, 0.2), (0, 1, 2, 3, 4)), ((0.1, 0.85, 0.05), (1,)),
    ((0.0, 0.0), ()), ((0.8, 0.2), (0,)), ((0.3, 0.1, 0.3, 0.2, 0.1), (0, 2, 3)),
    ((0.45, 0.1, 0.1, 0.25, 0.1), (0, 3, 1, 2, 4)),
])
def test_the_dominant_rows_are_the_fewest_that_reach_80_percent(shares, dominant):
    assert dominant_rows(shares) == dominant


def _rho(rows, relation=None):
    from prvgui.accounting.queries.workload import row_rho
    return [row_rho(r, relation or Relation()) for r in rows]


@pytest.mark.parametrize("relation", [None, REPLACE_3])
def test_a_rho_split_meets_the_total_exactly_with_shares_by_weight(relation):
    rows = [Row(Gaussian(1.0, 2.5), 7), Row(DiscreteGaussian(3.0, 2), 1), Row(ZCDP(0.5), 4),
            Row(Gaussian(9.0), 1000)]
    weights = [1.0, 2.0, 3.5, 0.25]
    new = split_rho(rows, 1.5, weights, relation)
    got = _rho(new, relation)
    want = [1.5 * w / sum(weights) for w in weights]
    assert math.fsum(got) == pytest.approx(1.5, rel=1e-13)
    assert got == pytest.approx(want, rel=1e-13) and all(g <= w for g, w in zip(got, want))
    assert [r.count for r in new] == [r.count for r in rows]
    assert [type(r.mechanism) for r in new] == [type(r.mechanism) for r in rows]
    # by the closed form: sigma = Delta_rel sqrt(count / (2 rho_i)), Delta_rel = 6 Delta under replace-one x 3
    factor = 6.0 if relation else 1.0
    assert new[0].mechanism.sigma == pytest.approx(2.5 * factor * math.sqrt(7 / (2 * want[0])), rel=1e-14)


def test_a_rho_split_refuses_rows_whose_rho_is_not_exact_naming_them():
    with pytest.raises(ValueError, match=r"row 2 \(Laplace\): a ρ split sets the noise of Gaussian"):
        split_rho([Row(Gaussian(1.0), 1), Row(Laplace(1.0), 1)], 1.0)
    with pytest.raises(ValueError, match=r"row 1 \(zCDP \(ρ\)\): ξ > 0"):
        split_rho([Row(ZCDP(0.1, 0.2), 1)], 1.0)
    with pytest.raises(ValueError, match=r"row 1 \(Discrete Gaussian\): its share ρ = 1e-12 needs sigma"):
        split_rho([Row(DiscreteGaussian(1.0), 1)], 1e-12)
    with pytest.raises(ValueError, match="leaks nothing"):
        split_rho([Row(Gaussian(1.0, 0.0), 1)], 1.0)
    with pytest.raises(ValueError, match="one per row: 2 rows, 1 weights"):
        split_rho([Row(Gaussian(1.0), 1)] * 2, 1.0, [1.0])
    with pytest.raises(ValueError, match="Weight 2 must be greater than 0"):
        split_rho([Row(Gaussian(1.0), 1)] * 2, 1.0, [1.0, 0.0])


def test_an_epsilon_split_certifies_each_row_and_the_whole_within_the_total():
    rows = [Row(Gaussian(1.0), 5), Row(Laplace(1.0), 2), Row(DiscreteGaussian(1.0), 1)]
    weights, total, delta = [1.0, 1.0, 2.0], 3.0, 1e-6
    new = split_epsilon(rows, total, delta, weights, eps_error=0.05)
    for r, w in zip(new, weights):  # each row alone, certified, at its share and delta / n
        assert Accountant([r], 0.05).epsilon(delta / 3).upper <= total * w / 4
    assert Accountant(new, 0.05).epsilon(delta).upper <= total
    assert [r.count for r in new] == [5, 2, 1] and new[1].mechanism.scale > 1.0


def test_an_epsilon_split_refuses_rows_without_noise_and_targets_out_of_reach():
    pair = PmfPair((0.5, 0.5), (0.25, 0.75))
    with pytest.raises(ValueError, match=r"row 2 \(Pair of distributions \(p, q\)\): it has no noise parameter"):
        split_epsilon([Row(Gaussian(1.0), 1), Row(pair, 1)], 1.0, 1e-6)
    with pytest.raises(Infeasible, match=r"^row 1 \(Approximate \(ε, δ\)-DP\): "):
        split_epsilon([Row(ApproxDP(1.0, 1e-3), 1)], 1.0, 1e-6, eps_error=0.05)
