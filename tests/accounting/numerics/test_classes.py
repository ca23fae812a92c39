"""Cells of many widths (discretize.class_failure, pipeline.class_plan).

The bound against the exact tail of discretisation errors that meet its assumptions (every
draw's error within its cell's half-width of the shift, mean zero), the plan against its own
promise, and the engine with the plan against the engine without it.
"""
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prvgui.accounting import Accountant, Row, SubsampledGaussian
from prvgui.accounting.kinds.subsampled_gaussian import subsampled_gaussian_prv
from prvgui.accounting.numerics import pipeline as pipeline_mod
from prvgui.accounting.numerics.discretize import DiscretePRV, class_failure, coupling_failure, discretize
from prvgui.accounting.numerics.pipeline import error_level, make_plan


def _row(shift: float, classes) -> DiscretePRV:
    return DiscretePRV(np.ones(1), 0, 1.0, shift, 0.0, 0.0, 0.0, classes=tuple(classes))


def _exact_tail(widths, probs, ups, k: int, t: float) -> tuple[float, float]:
    """(P(sum D > t), the shift s) for k draws of D = s + Z: Z = +w_c / 2 with probability
    probs_c ups_c and -w_c / 2 with probs_c (1 - ups_c), s = -E Z (so E D = 0). Exact, on the
    lattice of half-units (odd widths: Z is a half-integer, 2 Z an odd integer)."""
    span = max(widths)
    pmf = np.zeros(2 * span + 1)  # 2 Z + span
    for w, p, up in zip(widths, probs, ups):
        pmf[span + w] += p * up
        pmf[span - w] += p * (1 - up)
    s = -float(np.dot(pmf, np.arange(pmf.size) - span)) / 2
    total = np.ones(1)
    for _ in range(k):
        total = np.convolve(total, pmf)
    two_z = np.arange(total.size) - k * span  # 2 sum Z
    return float(total[k * s + two_z / 2 > t].sum()), s


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([1, 3, 9, 27]), st.floats(0.05, 1.0), st.floats(0.1, 0.9)),
                min_size=1, max_size=4, unique_by=lambda c: c[0]),
       st.integers(5, 60), st.floats(0.5, 4.0))
def test_the_bound_holds_for_errors_that_meet_its_assumptions(classes, k, spread):
    widths = [w for w, _, _ in classes]
    weights = np.array([p for _, p, _ in classes])
    probs = weights / weights.sum()
    ups = [u for _, _, u in classes]
    t = spread * math.sqrt(k) * max(widths) / 2  # a few standard deviations out
    exact, s = _exact_tail(widths, probs, ups, k, t)
    bound = class_failure([(_row(s, [(w / 2, p) for w, p in zip(widths, probs)]), k)], t)
    assert exact <= bound * (1 + 1e-9) + 1e-300
    # and the same for the lower tail (-D meets the same assumptions)
    exact_lo, s_lo = _exact_tail(widths, probs, [1 - u for u in ups], k, t)
    assert exact_lo <= class_failure([(_row(s_lo, [(w / 2, p) for w, p in zip(widths, probs)]), k)], t) * (1 + 1e-9) + 1e-300


def test_errors_that_cannot_reach_t_fail_with_probability_zero():
    row = _row(0.0, [(0.5, 0.9), (1.5, 0.1)])
    assert class_failure([(row, 10)], 15.01) == 0.0  # |sum D| <= 10 * 1.5
    assert 0.0 < class_failure([(row, 10)], 14.0) < 1.0


def test_a_rare_wide_cell_costs_in_proportion_to_its_mass():
    """Hoeffding's range is the widest cell's; this bound barely moves when a cell 81 times
    wider holds 1e-12 of the mass."""
    fine = class_failure([(_row(0.0, [(0.5, 1.0)]), 1000)], 60.0)
    rare = class_failure([(_row(0.0, [(0.5, 1.0 - 1e-12), (40.5, 1e-12)]), 1000)], 60.0)
    assert fine < 1e-3 and rare <= 1.01 * fine


@pytest.mark.parametrize("k", [1000, 10**4, 10**5])
@pytest.mark.parametrize("delta", [1e-5, 1e-10])
def test_the_class_plan_keeps_its_promise(k, delta):
    """make_plan for many distinct rows: cells up to 3^i wide in the tails, and the coupling
    failure of a DP-SGD step discretised on it within the err / 4 it plans for."""
    err = error_level(delta)
    plan = make_plan(0.01, 1.0, k, err, rows=1000)
    assert plan.coarse == (0.0, 1) and [r for _, r in plan.tiers][:3] == [3, 9, 27]
    assert plan.h >= pipeline_mod.TIER_MESH * make_plan(0.01, 1.0, k, err).h
    for s, q, order in [(0.8, 0.01, "remove"), (1.2, 0.004, "add")]:
        prv = subsampled_gaussian_prv(s, q, order)
        d = discretize(prv, plan.h, plan.tau(prv), coarse=plan.coarse, tiers=plan.tiers)
        plain = discretize(prv, plan.h, plan.tau(prv))
        assert np.count_nonzero(d.pmf) < 0.5 * np.count_nonzero(plain.pmf)
        _, terms = coupling_failure([(d, k)], plan.t, plan.h)
        assert terms["by_class"] and terms["hoeffding"] <= err / 4


def test_few_rows_keep_the_plan_they_had():
    assert make_plan(0.01, 1.0, 10**4, 1e-11, rows=pipeline_mod.TIERED_ROWS - 1) \
        == make_plan(0.01, 1.0, 10**4, 1e-11)


@pytest.mark.parametrize("delta", [1e-5, 1e-10])
def test_many_rows_agree_with_and_without_the_class_plan(monkeypatch, delta):
    rng = np.random.default_rng(3)
    rows = [Row(SubsampledGaussian(float(s), float(q)), int(c)) for s, q, c in
            zip(rng.uniform(0.8, 1.5, 40), rng.uniform(0.001, 0.02, 40), rng.integers(1, 200, 40))]
    acc = Accountant(rows, 0.01)
    tiered = acc.epsilon(delta)
    assert any(side["tiers"] for side in acc.error_budget(delta))
    monkeypatch.setattr(pipeline_mod, "TIERED_ROWS", 10**9)
    plain = Accountant(rows, 0.01).epsilon(delta)
    assert tiered.lower <= plain.upper and plain.lower <= tiered.upper
    assert abs(tiered.estimate - plain.estimate) <= 0.25 * (plain.upper - plain.lower)
    assert tiered.upper - tiered.lower <= 0.02 * 1.001


@pytest.mark.parametrize("prv", [subsampled_gaussian_prv(0.8, 0.01, "remove"),
                                 subsampled_gaussian_prv(1.2, 0.004, "add")])
def test_the_scanned_tails_give_points_beyond_their_crossings(prv):
    """discretize.Tails: every cut it answers holds at most the mass asked beyond it, within the
    tolerance of the crossing when it searches, and below the scan's own tau too."""
    from prvgui.accounting.numerics.discretize import Tails
    c, h = prv.cont, 1e-4
    tails = Tails(c, h, 1e-12)
    for p in (0.3, 1e-3, 1e-8, 1e-12, 1e-15):
        for tol in (math.inf, h):
            a, b = tails.lower_cut(p, tol), tails.upper_cut(p, tol)
            assert float(c.cdf(np.array([a]))[0]) <= p and float(c.sf(np.array([b]))[0]) <= p
            if tol == h and c.lo < a:  # (searched: the crossing is within tol)
                assert float(c.cdf(np.array([a + 2 * h]))[0]) > p or a + 2 * h > c.centre
