"""Privacy audits (queries/audit.py, audit_fdp.py): the one-run bound of Steinke, Nasr, Jagielski
against its closed form at delta = 0, monotonicity, the f-DP refinement of Mahloujifar, Melis,
Chaudhuri checked by a linear programme and by simulated audits, messages, and the planner."""
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog
from scipy.special import expit, logit, ndtr, ndtri
from scipy.stats import binom

from prvgui.accounting.queries import audit_fdp
from prvgui.accounting.queries.audit import (audit, audit_plan, fdp_epsilon, one_run_epsilon,
                                             one_run_p_value, tradeoff_p_value)

import references as ref


def bisect_closed_form(r, v, level):
    """The largest eps with P[Binom(r, expit(eps)) >= v] <= level, by plain bisection (60 steps)."""
    if binom.sf(v - 1, r, 0.5) > level:
        return 0.0
    lo, hi = 0.0, 50.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if binom.sf(v - 1, r, expit(mid)) <= level else (lo, mid)
    return lo


@pytest.mark.parametrize("m,r,v,conf", [(1000, 300, 280, 0.95), (100, 100, 100, 0.95), (50, 20, 17, 0.9),
                                        (10_000, 1000, 990, 0.99), (1000, 1000, 600, 0.95)])
def test_delta_zero_is_the_binomial_closed_form(m, r, v, conf):
    e = one_run_epsilon(m, r, v, 0.0, conf)
    assert e > 0
    assert abs(binom.sf(v - 1, r, expit(e)) - (1 - conf)) <= 1e-9
    assert binom.sf(v - 1, r, expit(e + 1e-6)) > 1 - conf  # a slightly larger eps is not rejected
    assert e == pytest.approx(bisect_closed_form(r, v, 1 - conf), abs=1e-9)


def test_all_correct_at_delta_zero_is_logit_of_a_root():
    # P[Binom(r, q) >= r] = q^r = level: q = level^(1/r)
    assert one_run_epsilon(1000, 1000, 1000) == pytest.approx(logit(0.05 ** (1 / 1000)), rel=1e-10)


@pytest.mark.parametrize("m,r,v", [(100, 10, 0), (100, 0, 0), (100, 10, 6), (1000, 1000, 500)])
def test_nothing_rejected_gives_zero(m, r, v):
    assert one_run_epsilon(m, r, v) == one_run_epsilon(m, r, v, 1e-5) == 0.0
    assert fdp_epsilon(m, r, v, 1e-5) == 0.0


def test_the_delta_term_only_lowers_the_bound_and_its_p_value_is_at_least_beta():
    assert one_run_epsilon(1000, 500, 450, 1e-5) < one_run_epsilon(1000, 500, 450, 0.0)
    for eps in (0.5, 2.0, 4.0):
        assert one_run_p_value(1000, 500, 450, eps, 1e-5) >= binom.sf(449, 500, expit(eps))


counts = st.integers(1, 2000).flatmap(lambda m: st.tuples(st.just(m), st.integers(1, m))).flatmap(
    lambda mr: st.tuples(st.just(mr[0]), st.just(mr[1]), st.integers(0, mr[1] - 1)))


@settings(max_examples=40, deadline=None)
@given(counts, st.sampled_from([0.0, 1e-8, 1e-6, 1e-5]))
def test_more_correct_never_lowers_the_bound(mrv, delta):
    m, r, v = mrv
    a, b = audit(m, r, v, delta), audit(m, r, v + 1, delta)
    assert b.one_run >= a.one_run - 1e-9
    assert b.epsilon_lower >= a.epsilon_lower - 1e-9


@settings(max_examples=40, deadline=None)
@given(counts, st.floats(1e-9, 1e-3), st.floats(1.5, 10.0))
def test_a_larger_delta_never_raises_the_bound(mrv, delta, factor):
    m, r, v = mrv
    v += 1
    small, large = audit(m, r, v, delta), audit(m, r, v, min(delta * factor, 0.5))
    assert large.one_run <= small.one_run + 1e-9
    assert large.fdp <= small.fdp + 1e-9


@settings(max_examples=40, deadline=None)
@given(counts, st.sampled_from([0.0, 1e-6]), st.floats(0.5, 0.98), st.floats(0.001, 0.019))
def test_higher_confidence_never_raises_the_bound(mrv, delta, conf, more):
    m, r, v = mrv
    v += 1
    low, high = audit(m, r, v, delta, conf), audit(m, r, v, delta, conf + more)
    assert high.one_run <= low.one_run + 1e-9
    assert high.epsilon_lower <= low.epsilon_lower + 1e-9


@pytest.mark.parametrize("delta", [0.0, 1e-6])
def test_all_correct_with_more_canaries_shows_more(delta):
    bounds = [one_run_epsilon(m, m, m, delta) for m in (10, 100, 1000, 10_000)]
    assert bounds == sorted(bounds) and bounds[-1] > bounds[0] + 5


def test_fdp_refinement_is_larger_where_the_paper_shows_it():
    a = audit(1000, 1000, 1000, 1e-5)
    assert a.fdp > a.one_run > 5 and a.method == "fdp" and a.epsilon_lower == a.fdp
    assert math.isfinite(a.fdp) and a.fdp < 30
    assert set(a.as_dict()) == {"epsilon_lower", "method", "one_run", "fdp", "canaries", "guesses", "correct",
                                "delta", "confidence"}


def test_at_delta_zero_the_refinement_does_not_apply():
    a = audit(1000, 1000, 1000, 0.0)
    assert a.fdp is None and a.method == "one_run" and a.epsilon_lower == a.one_run


def lp_p_value(m, r, v, mu, tangents=500):
    """sup P[W >= v] over the constraints (*) of audit_fdp with F relaxed to its tangent lines (a
    linear programme: slightly above the exact value)."""
    i = np.arange(r + 1)
    b0 = np.geomspace(1e-12, 1 - 1e-9, tangents)
    z = ndtri(b0)
    slope = np.exp(-0.5 * (z + mu) ** 2 + 0.5 * z ** 2)
    rows, rhs = [], []
    for t in range(r):
        a_row, b_row = np.where(i >= t + 1, i, 0) / m, np.where(i >= t, r - i, 0) / m
        rows += [a_row - s * b_row for s in slope]
        rhs += list(ndtr(z + mu) - slope * b0)
    res = linprog(-(i >= v).astype(float), A_ub=np.array(rows), b_ub=rhs, A_eq=np.ones((1, r + 1)), b_eq=[1],
                  bounds=[(0, None)] * (r + 1), method="highs")
    return -res.fun


@pytest.mark.parametrize("m,r,v,mu", [(20, 10, 9, 1.0), (20, 10, 10, 2.0), (40, 8, 7, 1.0), (15, 15, 12, 1.2)])
def test_the_greedy_fill_is_the_optimum_of_the_constraints(m, r, v, mu):
    p = audit_fdp.p_value(audit_fdp.gaussian_finv(mu), m, r, v)
    lp = lp_p_value(m, r, v, mu)
    assert p <= lp + 1e-9 and p == pytest.approx(lp, abs=2e-4)


@pytest.mark.parametrize("m,k,mu", [(200, 20, 1.0), (100, 100, 3.0), (400, 40, 2.0)])
def test_simulated_gaussian_audits_never_beat_the_fdp_p_value(m, k, mu):
    # independent canaries, score N(mu S_j, 1): mu-GDP for each canary; guess "in" on the top
    # k/2 scores and "out" on the bottom k/2
    rng = np.random.default_rng(7)
    n = 4000
    s = rng.integers(0, 2, (n, m))
    order = np.argsort(rng.normal(mu * s, 1.0), axis=1)
    rows = np.arange(n)[:, None]
    w = s[rows, order[:, m - k // 2:]].sum(1) + (1 - s[rows, order[:, :k // 2]]).sum(1)
    finv = audit_fdp.gaussian_finv(mu)
    for v in np.unique(np.quantile(w, [0.5, 0.9, 0.99]).astype(int)):
        emp = (w >= v).mean()
        assert emp <= audit_fdp.p_value(finv, m, k, int(v)) + 3 * math.sqrt(emp * (1 - emp) / n) + 1e-3


def test_levels_keep_zero_and_the_top_and_stay_few():
    assert audit_fdp.levels(5) == [4, 3, 2, 1, 0]
    big = audit_fdp.levels(10**6)
    assert big[0] == 10**6 - 1 and big[-1] == 0 and len(big) <= audit_fdp.LEVELS + 1
    assert big == sorted(big, reverse=True)


def test_a_certified_curve_on_a_grid_tests_conservatively():
    mu = 2.0
    alpha = np.concatenate([[0.0], np.geomspace(1e-12, 1.0, 400)])
    tpr = ndtr(ndtri(alpha) + mu)
    for m, r, v in [(1000, 1000, 900), (200, 60, 60)]:
        exact = audit_fdp.p_value(audit_fdp.gaussian_finv(mu), m, r, v)
        p = tradeoff_p_value(alpha, tpr, m, r, v)
        assert exact <= p <= exact * 1.1
    finv = audit_fdp.hull_finv(alpha, tpr)
    assert all(finv(t) <= a + 1e-12 for a, t in zip(alpha[1:], tpr[1:]))


LABELS = {"canaries": "--canaries", "guesses": "--guesses", "correct": "--correct", "delta": "--delta",
          "confidence": "--confidence"}


@pytest.mark.parametrize("args,words", [
    ((100, 12, 15), "correct must be an integer between 0 and guesses (12); you typed 15"),
    ((100, 120, 5), "guesses must be an integer between 0 and canaries (100); you typed 120"),
    ((2.5, 1, 1), "canaries must be an integer between 1 and 10000000; you typed 2.5"),
    ((True, 1, 1), "canaries must be an integer"),
    ((100, float("nan"), 1), "guesses must be an integer between 0 and canaries (100); you typed nan"),
    ((100, 10, math.inf), "correct must be an integer between 0 and guesses (10); you typed inf"),
    ((100, -1, 0), "guesses must be an integer between 0 and canaries (100); you typed -1"),
    ((0, 0, 0), "canaries must be an integer between 1 and"),
    ((100, 10, "5"), 'correct must be an integer between 0 and guesses (10); you typed "5"'),
    ((100, 10, 5, 1.0), "delta must be at least 0 and less than 1; you typed 1"),
    ((100, 10, 5, -1e-5), "delta must be at least 0 and less than 1; you typed -1e-5"),
    ((100, 10, 5, float("nan")), "delta must be a number"),
    ((100, 10, 5, 0.0, 1.0), "confidence must be greater than 0 and less than 1; you typed 1"),
    ((100, 10, 5, 0.0, 0), "confidence must be greater than 0 and less than 1; you typed 0"),
])
def test_bad_input_names_the_field_and_the_value(args, words):
    for fn in (audit, one_run_epsilon, fdp_epsilon):
        with pytest.raises(ValueError) as err:
            fn(*args)
        assert words in str(err.value)


def test_messages_use_the_labels_given():
    with pytest.raises(ValueError) as err:
        audit(100, 12, 15, labels=LABELS)
    assert str(err.value) == "--correct must be an integer between 0 and --guesses (12); you typed 15"


@pytest.mark.parametrize("mu", [0.5, 1.0, 2.0, 4.0])
@pytest.mark.parametrize("m", [100, 1000, 10_000])
def test_the_plan_for_a_gaussian_mechanism_stays_below_its_epsilon(mu, m):
    alpha = np.concatenate([[0.0], np.geomspace(1e-8, 1.0, 200)])
    plan = audit_plan(alpha, ndtr(ndtri(alpha) + mu), m, 1e-5)
    true_eps = ref.gaussian_epsilon(mu, 1e-5)
    assert 0 < plan.epsilon_lower < true_eps
    assert 0 < plan.correct <= plan.guesses <= m and plan.alpha in alpha
    tpr = ndtr(ndtri(plan.alpha) + mu)
    assert plan.correct <= m * tpr and plan.guesses >= m * (tpr + plan.alpha) - 1e-6
    assert plan.epsilon_lower == one_run_epsilon(m, plan.guesses, plan.correct, 1e-5)
    assert set(plan.as_dict()) == {"canaries", "epsilon_lower", "guesses", "correct", "alpha"}


def test_a_plan_grows_with_the_canaries_and_is_empty_without_information():
    alpha = np.linspace(0, 1, 101)
    tpr = ndtr(ndtri(alpha) + 2.0)
    plans = [audit_plan(alpha, tpr, m).epsilon_lower for m in (100, 1000, 10_000)]
    assert plans == sorted(plans)
    none = audit_plan(alpha, alpha, 1000)
    assert (none.epsilon_lower, none.guesses, none.correct, none.alpha) == (0.0, 0, 0, None)
    with pytest.raises(ValueError, match="as many"):
        audit_plan(alpha, tpr[:-1], 1000)
