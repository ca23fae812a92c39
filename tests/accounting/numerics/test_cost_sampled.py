"""The estimate of many rows made from the rows it pictures (pricing_many.Sampled): it makes no
other row's PRV, it prices what the PRVs made would price, and what it reads instead of every
row's PRV (Mechanism.loss_bounds) bounds the accountant's own numbers on the safe side."""
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from prvgui.accounting import Accountant, ApproxDP, Row, SubsampledGaussian
from prvgui.accounting.core.cost import ZERO
from prvgui.accounting.kinds.discrete_gaussian import DiscreteGaussian
from prvgui.accounting.numerics import pricing_many, reuse
from prvgui.accounting.numerics.compose import N_MAX
from prvgui.accounting.numerics.pricing import CostModel
from prvgui.accounting.numerics.pricing_many import SAMPLE_ROWS, Sampled


def _dg(n, seed=3):
    rng = np.random.default_rng(seed)
    return [Row(DiscreteGaussian(float(s)), 1) for s in rng.uniform(50, 200, n)]


def _sg(n, seed=3):
    rng = np.random.default_rng(seed)
    return [Row(SubsampledGaussian(float(s), float(q)), 1)
            for s, q in zip(rng.uniform(0.8, 1.5, n), rng.uniform(0.001, 0.01, n))]


def _counting(monkeypatch, kind):
    made = []
    real = kind._prv
    monkeypatch.setattr(kind, "_prv", lambda self, order, *a: made.append(self) or real(self, order, *a))
    return made


@pytest.mark.parametrize("rows, kind", [(_dg(3000), DiscreteGaussian), (_sg(1000), SubsampledGaussian)])
def test_many_rows_are_priced_from_the_rows_pictured(monkeypatch, rows, kind):
    """Only the pictured rows' PRVs are made (64 an order), and the estimate is the one the PRVs
    made give: the same seconds, the same bytes but for the PRVs' own, estimated from 64 rows."""
    made = _counting(monkeypatch, kind)
    for delta in (1e-5, 1e-10):
        reuse.clear()  # (the PRVs made below would be found)
        acc = Accountant(rows, 0.01)
        sampled = acc.cost(delta=delta)
        assert 0 < len(made) <= SAMPLE_ROWS * len(acc.orders)
        assert all(isinstance(acc._priced_rows(o), Sampled) for o in acc.orders)
        whole = Accountant(rows, 0.01)
        for o in whole.orders:
            whole._order_prvs(o)
        full = whole.cost(delta=delta)
        assert sampled.seconds == pytest.approx(full.seconds, rel=1e-9)
        assert sampled.bytes == pytest.approx(full.bytes, rel=0.05)
        assert sampled.bytes != full.bytes or kind is SubsampledGaussian  # (estimated, not summed)
        made.clear()


def test_a_sampled_order_holds_its_pictured_rows_only():
    acc = Accountant(_dg(600), 0.01)
    rows = acc._priced_rows("remove")
    assert isinstance(rows, Sampled) and len(rows) == 600
    assert sorted(rows.prvs) == pricing_many.sample_indices([1] * 600)
    with pytest.raises(KeyError):
        rows[1]  # (not pictured: 600 rows, 64 of them spread evenly)
    with pytest.raises(TypeError):
        list(rows)
    # once the PRVs are made (a query), the model takes them
    acc._order_prvs("remove")
    assert isinstance(acc._priced_rows("remove"), list)


def test_few_rows_are_priced_from_all_their_prvs():
    acc = Accountant(_dg(100), 0.01)
    assert isinstance(acc._priced_rows("remove"), list)


def test_rows_that_spend_delta_are_still_seen_among_many():
    """An approximate-DP row among 3000 discrete Gaussians spends delta 1e-3 whatever epsilon
    is: below it epsilon is infinite at once, and the estimate of many rows, made without their
    PRVs, says so (Mechanism.loss_bounds is the PRV's own for a kind quick to make)."""
    rows = _dg(3000) + [Row(ApproxDP(0.5, 1e-3), 1)]
    acc = Accountant(rows, 0.01)
    assert acc.cost(delta=1e-4) == ZERO
    assert acc.cost(delta=1e-2).seconds > 0
    assert math.isinf(acc.epsilon(1e-4).upper)


def test_the_bounds_priced_are_the_accountants_own_once_known():
    """Once the accountant has made the rows' PRVs, the estimate reads their infinite mass and loss
    cap; before, the rows' bounds (no more and no less)."""
    rows = _dg(600) + [Row(ApproxDP(0.5, 1e-3), 2)]
    acc = Accountant(rows, 0.01)
    spent, cap = acc._priced_extremes()
    assert acc._inf is None and not acc._prvs  # (nothing made)
    assert spent == pytest.approx(1 - (1 - 1e-3) ** 2, rel=1e-12) and math.isinf(cap)
    exact = acc.infinite_mass()[0]
    assert spent <= exact and acc._priced_extremes() == (exact, acc.loss_cap())


@settings(max_examples=60, deadline=None)
@given(st.floats(1e-3, 1e5), st.integers(1, 4))
def test_discrete_gaussian_loss_bounds(sigma, sens):
    m = DiscreteGaussian(sigma, sens)
    for order in ("remove", "add"):
        spent, top = m.loss_bounds(order)
        prv = m.prv(order)
        assert 0 <= spent <= prv.inf_mass and top >= prv.max_loss


@settings(max_examples=60, deadline=None)
@given(st.floats(0.0, 50.0), st.floats(1e-6, 1.0), st.floats(0.0, 3.0))
def test_subsampled_gaussian_loss_bounds(sigma, q, sens):
    m = SubsampledGaussian(sigma, q, sens)
    if m.is_trivial():
        return
    for order in ("remove", "add"):
        spent, top = m.loss_bounds(order)
        prv = m.prv(order)
        assert 0 <= spent <= prv.inf_mass and top >= prv.max_loss


def test_one_row_drawn_often_among_many_drawn_once_pays_its_own_power():
    """compose.power raises only the rows drawn more than once: a steps curve's one row at 10
    draws among 3000 drawn once costs about what they cost (it was priced as if every row were
    powered: 18 s against 6.4 for 10^4 discrete Gaussians), and every row drawn twice costs more."""
    from prvgui.accounting.numerics.pipeline import error_level
    from prvgui.accounting.numerics.pricing import CostModel
    acc = Accountant(_dg(3000), 0.01)
    level = error_level(1e-5)
    model = CostModel({o: acc._priced_rows(o) for o in acc.orders}, 0.01, acc.n_max, level * 1e-3)
    ones = (1,) * 3000
    base = model.build("remove", level, counts=ones)[0].seconds
    one_row = model.build("remove", level, counts=(10,) + ones[1:])[0].seconds
    twice = model.build("remove", level, counts=(2,) * 3000)[0].seconds
    assert base <= one_row < 1.2 * base
    assert twice > 1.5 * base


def _branchy(n, seed=0):
    """DP-SGD steps at sigma 0.01 to 0.02 and q 1e-10: each row's loss split between its bulk
    near 0 and a branch 1250 to 5000 nats out, so that a group's tilted window grows with its
    rows, not with their square root."""
    rng = np.random.default_rng(seed)
    return [Row(SubsampledGaussian(float(s), 1e-10), 1) for s in rng.uniform(0.01, 0.02, n)]


def test_the_estimate_does_not_jump_where_the_sample_starts():
    """255 rows are priced from every row, 256 from 64 of them. Both go in groups (tree.py):
    255 were priced on one window (637 s, 28 GB) and 256 with every level above the first a
    third of the first (18 s, 2.7 GB); 256 took 56 s and 1.74 GB, after the check of the
    groups' grids (fits_many.py)."""
    few = Accountant(_branchy(255), 0.01).cost(delta=1e-10)
    many = Accountant(_branchy(256), 0.01).cost(delta=1e-10)
    assert 0.5 <= few.seconds / many.seconds <= 2.0
    assert 30.0 <= many.seconds <= 200.0
    assert few.fits and many.fits


def test_a_level_is_priced_on_its_own_windows():
    """pricing_many.levels pictures each level of the tree on its own windows: wider for more
    rows, at most sqrt(FAN_IN) = 4 times (and a half) the level below for these DP-SGD steps
    (skewed sums: 1.3 times here), where the branchy rows above grow 5 times from 16 rows to
    256; capped at the whole window."""
    acc = Accountant(_sg(4096), 0.01)
    model = CostModel({"remove": acc._priced_rows("remove")}, 0.01, N_MAX)
    pic = model.picture("remove")
    counts = [1] * len(pic.rows)
    got = pricing_many.levels(pic.rows, counts, 1e-12, pic.weight, 4096, math.inf)
    assert [k for k, _ in got] == [256, 16, 1]
    assert 1.0 < got[1][1] / got[0][1] <= 6.0 and 1.0 < got[2][1] / got[1][1] <= 6.0
    capped = pricing_many.levels(pic.rows, counts, 1e-12, pic.weight, 4096, got[1][1])
    assert [w for _, w in capped] == [got[0][1], got[1][1], got[1][1]]
