"""Tight where float64 gives up (issue 13, item 5): compositions tilted towards the tail
(tilt.py) give brackets of at most 2 x eps_error down to delta = 1e-300, and every exact value
stays inside them. References: closed forms (Gaussian), an exact mpmath sum (Gaussian with
randomized responses), mpmath quadrature (two DP-SGD steps)."""
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import references as ref
from prvgui.accounting import Accountant, Gaussian, RandomizedResponse, Row, SubsampledGaussian
from prvgui.accounting.numerics.discretize import DiscretePRV
from prvgui.accounting.numerics.tilt import choose_lambda, tilt_rows

EPS_ERROR = 0.01


def _holds(delta_at, bounds, delta):
    """delta(lower) >= delta >= delta(upper): the true epsilon lies in the bracket."""
    return delta_at(bounds.lower) >= delta >= delta_at(bounds.upper)


@pytest.mark.parametrize("delta", [1e-15, 1e-100, 1e-300])
def test_gaussian_with_randomized_responses_deep_in_the_tail(delta):
    mu, eps0, k = 0.4, 0.3, 6
    rows = [Row(Gaussian(1 / mu), 1), Row(RandomizedResponse(eps0), k)]
    b = Accountant(rows, EPS_ERROR).epsilon(delta)
    assert b.upper - b.lower <= 2 * EPS_ERROR
    assert _holds(lambda e: ref.gaussian_rr_delta(mu, eps0, k, e), b, delta)


@settings(max_examples=12, deadline=None)
@given(sigma=st.floats(1.0, 30.0), k=st.integers(1, 200), log_delta=st.floats(-290.0, -10.0))
def test_fft_path_matches_the_gaussian_closed_form_at_any_delta(sigma, k, log_delta):
    """(Below 1e-290 the error level stops at 1e-300, a few % of delta, and the bracket widens a
    little past 2 x eps_error: 0.0203 at 1e-299.)"""
    delta = 10.0 ** log_delta
    mu = math.sqrt(k) / sigma
    acc = Accountant([Row(Gaussian(sigma), k)], EPS_ERROR, closed_forms=False)
    b = acc.epsilon(delta)
    assert b.upper - b.lower <= 2 * acc.eps_error_used * 1.001
    assert _holds(lambda e: float(ref.gaussian_delta_mp(mu, e)), b, delta)


@pytest.mark.parametrize("delta", [1e-15, 1e-60])
def test_two_dpsgd_steps_against_quadrature(delta):
    sigma, q = 0.5, 0.2
    b = Accountant([Row(SubsampledGaussian(sigma, q), 2)], EPS_ERROR).epsilon(delta)
    assert b.upper - b.lower <= 2 * EPS_ERROR
    worst = lambda e: max(ref.sgd_two_steps_delta(sigma, q, e, o) for o in ("remove", "add"))  # noqa: E731
    assert _holds(worst, b, delta)


@pytest.mark.parametrize("k", [10 ** 4, 10 ** 5])
def test_dpsgd_at_delta_1e15_is_tight_and_consistent_with_the_plain_pass(k):
    """No reference reaches DP-SGD at 1e-15 for 10^4 steps (prv_accountant refuses, dp-accounting
    truncates its tails at 1e-15), so: the bracket is 2 x eps_error wide, it overlaps the bracket
    of the plain pass where that one is finite (both are valid), and it lies below RDP's bound."""
    rows = [Row(SubsampledGaussian(1.0, 0.01), k)]
    acc = Accountant(rows, EPS_ERROR)
    b = acc.epsilon(1e-15)
    assert b.upper - b.lower <= 2 * EPS_ERROR
    assert any("tilt_lambda" in side for side in acc.error_budget(1e-15))
    plain = Accountant(rows, EPS_ERROR).epsilon(1e-12)  # a resolvable delta: the curve is monotone
    assert b.lower >= plain.lower
    from prvgui.accounting.queries.comparisons import compare_epsilon
    assert b.lower <= compare_epsilon(rows, 1e-15)["rdp"].value


def test_large_epsilon_is_tight():
    """Near epsilon 354 (sigma 0.1, q 0.01, 100 steps) the plain pass was 0.043 wide."""
    b = Accountant([Row(SubsampledGaussian(0.1, 0.01), 100)], EPS_ERROR).epsilon(1e-5)
    assert b.upper - b.lower <= 2 * EPS_ERROR and b.lower > 350


@pytest.mark.parametrize("delta", [1e-5, 1e-40])
def test_large_epsilon_two_steps_against_quadrature(delta):
    sigma, q = 0.1, 0.05
    b = Accountant([Row(SubsampledGaussian(sigma, q), 2)], EPS_ERROR).epsilon(delta)
    assert b.upper - b.lower <= 2 * EPS_ERROR and b.lower > 20
    worst = lambda e: max(ref.sgd_two_steps_delta(sigma, q, e, o) for o in ("remove", "add"))  # noqa: E731
    assert _holds(worst, b, delta)


@pytest.mark.parametrize("eps", [8.1655797, 12.0, 20.0])
def test_delta_at_epsilon_deep_in_the_tail(eps):
    """delta(eps) for a Gaussian composed on the FFT path: inside, and within what eps_error asks
    (the exact delta at eps +- eps_error, to 1%)."""
    mu = 1.0
    b = Accountant([Row(Gaussian(10.0), 100)], EPS_ERROR, closed_forms=False).delta(eps)
    exact = float(ref.gaussian_delta_mp(mu, eps))
    assert b.lower <= exact <= b.upper
    assert b.lower >= 0.99 * float(ref.gaussian_delta_mp(mu, eps + EPS_ERROR))
    assert b.upper <= 1.01 * float(ref.gaussian_delta_mp(mu, eps - EPS_ERROR))


def test_tilted_rows_keep_the_composition():
    """Tilting then untilting is the identity on a composition (the identity tilt.py rests on):
    two draws of a small row, composed by hand, tilted and not."""
    pmf = np.array([0.1, 0.2, 0.4, 0.3])
    d = DiscretePRV(pmf, -1, 0.5, 0.0, 0.0, 0.0, 0.0, centre=2)
    (t, _), = tilt_rows([(d, 1)], 0.7)[0]
    info = tilt_rows([(d, 2)], 0.7)[1]
    y = d.values
    direct = np.convolve(pmf, pmf)
    tilted = np.convolve(t.pmf, t.pmf)
    ys = (2 * d.start + np.arange(direct.size)) * d.h
    assert np.allclose(tilted * np.exp(info["L"] - 0.7 * ys), direct, rtol=1e-13)
    assert np.isclose(t.pmf.sum(), 1.0) and t.pmf[-1] > pmf[-1] and y[-1] > 0


def test_lambda_follows_the_target():
    d = DiscretePRV(np.full(201, 1 / 201), -100, 0.01, 0.0, 0.0, 0.0, 0.0, centre=100)
    assert choose_lambda([(d, 10)], -1.0) is None  # below the mean: nothing to tilt towards
    lams = [choose_lambda([(d, 10)], target) for target in (1.0, 5.0, 9.0)]
    assert 0 < lams[0] < lams[1] < lams[2]


@pytest.mark.parametrize("delta", [1e-3, 1e-10, 1e-30])
def test_chernoffs_lambda_minimises_the_bound_on_epsilon(delta):
    """choose_lambda_for_delta (a root finder on the slope's sign) gives the lambda at which
    Chernoff's bound (log E[e^{lam S}] + log(1 / delta)) / lam is smallest: no lambda of a fine
    geometric grid does better (the same block summaries, evaluated directly)."""
    from prvgui.accounting.numerics.tilt import cgf_and_mean, choose_lambda_for_delta, stacked_blocks
    up = np.exp(-np.linspace(0.0, 8.0, 400))
    a = DiscretePRV(up / up.sum(), -40, 0.02, 0.0, 0.0, 0.0, 0.0, centre=10)
    sym = np.exp(-0.5 * np.linspace(-4.0, 4.0, 301) ** 2)
    b = DiscretePRV(sym / sym.sum(), -150, 0.01, 0.05, 0.0, 0.0, 0.0, centre=150)
    rows = [(a, 3), (b, 7)]
    stacked = stacked_blocks(rows)
    lam = choose_lambda_for_delta(rows, delta, stacked)

    def bound(x: float) -> float:
        return (cgf_and_mean(stacked, x)[0] - math.log(delta)) / x
    grid = np.geomspace(lam / 50, lam * 50, 4001)
    best = min(bound(float(x)) for x in grid)
    assert bound(lam) <= best + 1e-9 * abs(best)
    assert bound(lam) < bound(lam * 1.01) and bound(lam) < bound(lam / 1.01)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(1, 70), min_size=1, max_size=40), st.integers(1, 300),
       st.floats(1e-4, 50.0), st.integers(0, 2 ** 31))
def test_cgf_and_mean_a_chunk_of_rows_at_a_time(sizes, chunk, lam, seed):
    """cgf_and_mean works through the stacked rows a chunk at a time (its temporaries stay
    small for 10^5 rows): whatever the chunk, it gives what each row's log-sum-exp and tilted
    mean give, worked out row by row here (scipy's logsumexp), and the same bits as in one go."""
    from scipy.special import logsumexp
    from prvgui.accounting.numerics import tilt
    rng = np.random.default_rng(seed)
    logp, y = rng.normal(0.0, 5.0, sum(sizes)), rng.normal(0.0, 1.0, sum(sizes))
    first = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    k = rng.integers(1, 9, len(sizes)).astype(float)
    stacked = (logp, y, first, k)
    want_f = want_m = 0.0
    for a, n, kk in zip(first, sizes, k):
        e = logp[a:a + n] + lam * y[a:a + n]
        want_f += kk * logsumexp(e)
        want_m += kk * float(np.dot(np.exp(e - logsumexp(e)), y[a:a + n]))
    whole = tilt.cgf_and_mean(stacked, lam)
    old = tilt.CGF_CHUNK
    try:
        tilt.CGF_CHUNK = chunk
        got = tilt.cgf_and_mean(stacked, lam)
    finally:
        tilt.CGF_CHUNK = old
    assert got == whole
    scale = float(np.sum(k * (np.abs(logp[first]) + lam * np.max(np.abs(y)) + 10)))
    assert got[0] == pytest.approx(want_f, rel=1e-12, abs=1e-12 * scale)
    assert got[1] == pytest.approx(want_m, rel=1e-12, abs=1e-12 * float(k.sum()))


def test_lambda_puts_the_tilted_mean_on_the_target():
    # a skewed row (a mass far up, like a subsampled loss) and a symmetric one, composed
    up = np.exp(-np.linspace(0.0, 8.0, 400))
    up /= up.sum()
    a = DiscretePRV(up, 0, 0.02, 0.0, 0.0, 0.0, 0.0, centre=10)
    b = DiscretePRV(np.full(101, 1 / 101), -50, 0.01, 0.0, 0.0, 0.0, 0.0, centre=50)
    rows = [(a, 30), (b, 4)]

    def mean(lam):  # the tilted composition's mean: each row's tilted mean times its count
        out = 0.0
        for d, k in rows:
            y = (d.start + np.arange(d.pmf.size)) * d.h
            w = d.pmf * np.exp(lam * (y - y.max()))
            out += k * float(np.dot(w, y) / w.sum())
        return out
    for target in (40.0, 100.0, 200.0, 240.0):
        lam = choose_lambda(rows, target)
        assert lam is not None and abs(mean(lam) - target) <= 1e-10 * target


def test_a_target_beyond_every_loss_stays_valid():
    """Pure DP rows have no loss above k eps0: tilting towards a larger epsilon must not
    under-report anything."""
    rows = [Row(RandomizedResponse(0.5), 4), Row(Gaussian(3.0), 1)]
    acc = Accountant(rows, EPS_ERROR)
    b = acc.delta(40.0)
    mu = 1 / 3.0
    assert b.lower <= float(ref.gaussian_rr_delta(mu, 0.5, 4, 40.0)) <= b.upper


def test_a_million_steps_go_straight_to_the_tilted_composition():
    """At 10^6 DP-SGD steps float64's plain composition cannot reach 2 x eps_error at 1e-5
    (cost.needs_long_double says so before composing): the first order is composed tilted at
    once. Its bracket is narrow and meets the plain one (both hold)."""
    rows = [Row(SubsampledGaussian(0.8, 0.01), 10 ** 6)]
    acc = Accountant(rows, EPS_ERROR)
    b = acc.epsilon(1e-5)
    assert b.upper - b.lower <= 2 * EPS_ERROR
    assert not any(key[0] == "remove" and not key[3] for key in acc._cache)  # no plain remove build
    assert any("tilt_lambda" in side for side in acc.error_budget(1e-5))
    plain = Accountant(rows, EPS_ERROR)._epsilon_at(1e-5, 1e-11)
    assert plain.upper - plain.lower > 2 * EPS_ERROR
    assert b.lower <= plain.upper and plain.lower <= b.upper


def test_a_tilt_that_resolves_nothing_gives_vacuous_bounds():
    """When every composed value lies where e^{L - lambda y} is beyond LOG_CUT, the untilted
    composition is exact nowhere: epsilon's upper end is infinite and delta's upper end is 1."""
    from prvgui.accounting.numerics.compose import Composed
    from prvgui.accounting.numerics.profile import CertifiedProfile
    from prvgui.accounting.numerics.tilt import untilt
    c = Composed(np.array([0.2, 0.5, 0.3]), 0, 0.1, 0.0, 0.0, 1e-15, 1e-12, 0.0, {})
    p = CertifiedProfile(untilt(c, {"lam": 1.0, "L": 1e4, "log_rel": 0.0, "lost": 0.0, "mag": 1e4}), 0.01, 0.0)
    assert math.isinf(p.epsilon(1e-5).upper)
    assert np.all(p.delta(np.array([0.0, 0.1, 1.0]))[2] == 1.0)


def test_delta_far_in_the_tail_of_both_orders():
    """DP-SGD (the bundled MNIST example) at epsilon 50: delta ~ 1e-244. The add order's loss is
    bounded above (by K log(1 / (1 - q)) = 60.1), so its tilt needs a large lambda, whose tilted
    mean block averages could not follow: the bracket must still be narrow, positive and below
    RDP's bound (a valid upper bound)."""
    rows = [Row(SubsampledGaussian(1.1, 0.004266666666666667), 14063)]
    b = Accountant(rows, EPS_ERROR).delta(50.0)
    from prvgui.accounting.queries.comparisons import compare_delta
    assert 0 < b.lower <= b.estimate <= b.upper < 1.5 * b.lower
    assert b.upper <= compare_delta(rows, 50.0)["rdp"].value


def test_delta_beyond_the_first_levels_reach():
    """delta ~ 5e-147: the first compositions cut the rows' tails long before epsilon (their
    Chernoff estimate underflows in float64); the level then follows it in logs, and the bracket
    lies within what eps_error asks (the exact delta at eps -+ eps_error, to 2%)."""
    mu, eps0, k, eps = 2.01, 0.291, 2, 54.086
    b = Accountant([Row(Gaussian(1 / mu), 1), Row(RandomizedResponse(eps0), k)], EPS_ERROR).delta(eps)
    exact = float(ref.gaussian_rr_delta(mu, eps0, k, eps))
    assert b.lower <= exact <= b.upper
    assert b.lower >= 0.98 * float(ref.gaussian_rr_delta(mu, eps0, k, eps + EPS_ERROR))
    assert b.upper <= 1.02 * float(ref.gaussian_rr_delta(mu, eps0, k, eps - EPS_ERROR))


@pytest.mark.parametrize("eps", [2.0, 4.0])
def test_an_unresolved_estimate_does_not_set_the_tilted_level(monkeypatch, eps):
    """Forty Gaussians and a (0, 1e-280) row: below the plain composition's additive error its
    estimate is the mass at +inf, 1e-280, which says nothing of delta (1e-28, 1e-105). The tilted
    step starts from the certified upper end instead (a level of 1e-286 would cut every row's
    tails there: 400 mixed rows took 56 s so) and refines from its own estimate; the bracket
    holds the closed form delta0 + (1 - delta0) delta_G(eps)."""
    from prvgui.accounting.kinds.approx_dp import ApproxDP
    from prvgui.accounting.queries import accountant
    levels = []
    real = accountant.Accountant._tilted_side
    monkeypatch.setattr(accountant.Accountant, "_tilted_side",
                        lambda self, order, err, *a, **k: levels.append(err) or real(self, order, err, *a, **k))
    rng = np.random.default_rng(3)
    sigmas = rng.uniform(20.0, 60.0, 40)
    d0 = 1e-280
    rows = [Row(Gaussian(float(s)), 1) for s in sigmas] + [Row(ApproxDP(0.0, d0), 1)]
    b = Accountant(rows, EPS_ERROR, closed_forms=False).delta(eps)
    mu = math.sqrt(float(np.sum(1 / sigmas ** 2)))
    exact = d0 + (1 - d0) * ref.gaussian_delta(mu, eps)
    assert b.lower <= exact <= b.upper
    # (within what eps_error asks: the exact delta at eps -+ eps_error, to 2%)
    assert b.lower >= 0.98 * ref.gaussian_delta(mu, eps + EPS_ERROR)
    assert b.upper <= 1.02 * ref.gaussian_delta(mu, eps - EPS_ERROR)
    assert levels and levels[0] >= 1e-30
