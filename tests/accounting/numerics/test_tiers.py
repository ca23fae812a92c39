"""Wider cells where Bernstein's inequality allows (discretize.py ``tiers``, pipeline.make_plan).

The pieces against direct computations (cell layout, the variance the bound uses, the
Bernstein term), the plan against its own promise, and the whole against exact Gaussian
references and against the engine without tiers on random compositions.
"""
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import references as ref
from prvgui.accounting import Accountant, Gaussian, Row, SubsampledGaussian
from prvgui.accounting.numerics import pipeline as pipeline_mod
from prvgui.accounting.numerics.discretize import Tails, _edges, class_failure, coupling_failure, discretize
from prvgui.accounting.kinds.gaussian import gaussian_prv
from prvgui.accounting.kinds.subsampled_gaussian import subsampled_gaussian_prv
from prvgui.accounting.numerics.pipeline import make_plan

TIERS = ((1e-2, 3), (1e-3, 9), (1e-4, 27))
PRVS = [gaussian_prv(0.05), subsampled_gaussian_prv(0.8, 0.01, "remove"),
        subsampled_gaussian_prv(0.8, 0.01, "add")]


@pytest.mark.parametrize("prv", PRVS)
def test_tier_cells_lie_beyond_their_tail_points(prv):
    h, tau, coarse = 1e-4, 1e-16, (1e-7, 81)
    c = prv.cont
    j_lo, j_hi = math.floor(c.lower_cut(tau, h / 4) / h + 0.5), math.ceil(c.upper_cut(tau, h / 4) / h - 0.5)
    e = _edges(Tails(c, h, tau), h, j_lo, j_hi, tau, coarse, TIERS)
    width = np.diff(e)
    assert np.all(width > 0) and set(width.tolist()) <= {1, 3, 9, 27, 81}
    assert e[0] <= j_lo and e[-1] >= j_hi + 1
    centre = int(np.argmax(width == 1))
    for p, r in (*TIERS, coarse):
        for i in np.flatnonzero(width == r):  # a cell r wide: the whole cell holds at most p / 2
            lo, hi = (e[i] - 0.5) * h, (e[i + 1] - 0.5) * h
            if i < centre:
                assert float(c.cdf(np.array([hi]))[0]) <= p / 2 * (1 + 1e-9)
            else:
                assert float(c.sf(np.array([lo]))[0]) <= p / 2 * (1 + 1e-9)
    # widths never shrink going outwards
    assert np.all(np.diff(width[:centre]) <= 0) and np.all(np.diff(width[np.flatnonzero(width == 1)[-1]:]) >= 0)


@pytest.mark.parametrize("prv", PRVS)
def test_tiered_row_keeps_the_mean_and_reports_its_variance(prv):
    h, tau, coarse = 1e-4, 1e-16, (1e-7, 81)
    plain = discretize(prv, h, tau, coarse=coarse)
    d = discretize(prv, h, tau, coarse=coarse, tiers=TIERS)
    assert d.mean() == pytest.approx(plain.mean(), abs=1e-12)
    assert plain.second_moment == pytest.approx((h / 2) ** 2, rel=1e-9)
    # every nonzero non-coarse cell holds its mass at the middle of a cell w wide: the variance
    # bound sum p (w/2)^2 lies between the all-fine value and the widest tier's
    assert (h / 2) ** 2 < d.second_moment < (h / 2) ** 2 * (1 + sum(p * r * r for p, r in TIERS))
    assert d.widest == pytest.approx(27 * h)
    assert np.count_nonzero(d.pmf) < 0.8 * np.count_nonzero(plain.pmf)


def test_coupling_failure_is_the_best_of_hoeffding_bernstein_and_the_classes():
    d = discretize(subsampled_gaussian_prv(0.8, 0.01, "remove"), 2e-5, 1e-18, coarse=(1e-9, 101),
                   tiers=TIERS)
    k, t, h = 10**5, 0.009, 2e-5
    got, terms = coupling_failure([(d, k)], t, h)
    lam = k * d.coarse_prob
    big = 0.5 * d.widest + abs(d.shift) + d.bias + d.coarse_prob * d.coarse_half

    def bound(m):
        u = t - k * d.bias - k * d.coarse_prob * d.coarse_half - m * d.coarse_half
        hoeff = math.exp(-2 * u * u / (k * d.widest ** 2))
        bern = math.exp(-u * u / (2 * (k * d.second_moment + big * u / 3)))
        return min(hoeff, bern) + lam ** (m + 1) / math.factorial(m + 1)
    best = min(min(bound(m) for m in range(7)), class_failure([(d, k)], t))
    assert got == pytest.approx(best + terms["truncation"], rel=1e-6)


@pytest.mark.parametrize("k", [10**4, 10**5, 10**6])
def test_the_plan_keeps_its_promise(k):
    """The mesh make_plan chooses with tiers gives the coupling failure it plans for (err / 4
    for the Hoeffding-Bernstein term), on the DP-SGD step it was designed around."""
    err = 1e-11
    plan = make_plan(0.01, 1.0, k, err)
    assert plan.tiers and all(r < plan.coarse[1] for _, r in plan.tiers)
    prv = subsampled_gaussian_prv(0.8, 0.01, "remove")
    d = discretize(prv, plan.h, plan.tau(prv), coarse=plan.coarse, tiers=plan.tiers)
    _, terms = coupling_failure([(d, k)], plan.t, plan.h)
    assert terms["hoeffding"] <= err / 4


def test_short_compositions_keep_single_cells():
    assert make_plan(0.01, 1.0, 100, 1e-11).tiers == ()


@pytest.mark.parametrize("sigma,k", [(40.0, 20_000), (150.0, 200_000)])
def test_gaussian_compositions_with_tiers_hold_the_exact_value(sigma, k):
    acc = Accountant([Row(Gaussian(sigma), k)], closed_forms=False)
    mu = math.sqrt(k) / sigma
    for delta in (1e-3, 1e-6, 1e-9):
        b = acc.epsilon(delta)
        assert b.lower <= ref.gaussian_epsilon(mu, delta) <= b.upper
        assert b.upper - b.lower <= 0.02
    assert acc.error_budget(1e-6)[0]["tiers"]


@settings(max_examples=8, deadline=None)
@given(st.floats(0.6, 3.0), st.floats(0.002, 0.1), st.integers(5_000, 40_000),
       st.sampled_from([1e-4, 1e-6, 1e-8]))
def test_tiers_agree_with_single_cells(sigma, q, k, delta):
    rows = [Row(SubsampledGaussian(sigma, q), k), Row(Gaussian(30.0), 50)]
    tiered = Accountant(rows).epsilon(delta)
    orig = pipeline_mod.tier_plan
    try:
        pipeline_mod.tier_plan = lambda u, k_total, log_e, r: ((), u * math.sqrt(2.0 / (k_total * log_e)))
        plain = Accountant(rows).epsilon(delta)
    finally:
        pipeline_mod.tier_plan = orig
    assert tiered.lower <= plain.upper and plain.lower <= tiered.upper
    assert abs(tiered.estimate - plain.estimate) <= 0.25 * (plain.upper - plain.lower) + 1e-9


@pytest.mark.parametrize("rows,delta,mu,float64", [
    ([Row(Gaussian(10.0), 1000)], 1e-10, math.sqrt(1000) / 10.0, False),
    ([Row(SubsampledGaussian(1.0, 0.01), 10_000)], 1e-10, None, False),
    ([Row(SubsampledGaussian(0.8, 0.01), 100_000)], 1e-5, None, True),
])
def test_brackets_stay_within_twice_eps_error(rows, delta, mu, float64):
    """Within 2 x eps_error where float64 resolves delta (item 5 of issue 13 asks for more: down
    to 1e-15, not done yet); at 10^5 steps without the long-double pass (t = 0.88 eps_error)."""
    acc = Accountant(rows, 0.01, closed_forms=False)
    b = acc.epsilon(delta)
    assert b.upper - b.lower <= 0.02
    if mu is not None:
        assert b.lower <= ref.gaussian_epsilon(mu, delta) <= b.upper
    if float64:
        assert not any(side["long_double"] for side in acc.error_budget(delta))


@pytest.mark.slow
def test_a_million_gaussian_steps_hold_the_exact_value():
    """10^6 draws: tiers 3, 9, 27 and the direct long-double pass."""
    acc = Accountant([Row(Gaussian(1000.0), 10**6)], closed_forms=False)
    for delta in (1e-5, 1e-8):
        b = acc.epsilon(delta)
        assert b.lower <= ref.gaussian_epsilon(1.0, delta) <= b.upper
        assert b.upper - b.lower <= 0.02
    assert acc.error_budget(1e-5)[0]["tiers"] == [3, 9, 27]
