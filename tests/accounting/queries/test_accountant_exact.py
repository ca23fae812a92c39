"""The certified bracket against exact references over many parameters.

References (tests/references.py): k-fold Gaussian via mu = sqrt(k) / sigma (Balle-Wang);
k-fold pure/approximate DP via the binomial formula (Kairouz-Oh-Viswanath); one Laplace and
one subsampled Gaussian step in closed form.
"""
import math

import pytest

from prvgui.accounting import (Accountant, ApproxDP, Gaussian, Laplace, PureDP, RandomizedResponse,
                               Row, SubsampledGaussian)

import references as ref

GAUSS_CASES = [(s, k, d) for s, k in [(0.5, 1), (1.0, 1), (2.0, 10), (5.0, 100), (0.9, 3),
                                       (10.0, 1000), (30.0, 20000), (3.0, 7)]
               for d in (1e-3, 1e-5, 1e-8)]


@pytest.mark.parametrize("sigma,k,delta", GAUSS_CASES)
def test_gaussian_epsilon_bracket(sigma, k, delta):
    acc = Accountant([Row(Gaussian(sigma), k)], eps_error=0.01, closed_forms=False)
    b = acc.epsilon(delta)
    exact = ref.gaussian_epsilon(math.sqrt(k) / sigma, delta)
    assert b.lower <= exact <= b.upper
    assert b.lower <= b.estimate <= b.upper
    assert b.upper - b.lower <= 2 * 0.01


@pytest.mark.parametrize("sigma,k", [(1.0, 1), (4.0, 50), (12.0, 3000)])
def test_gaussian_delta_bracket(sigma, k):
    acc = Accountant([Row(Gaussian(sigma), k)], closed_forms=False)
    mu = math.sqrt(k) / sigma
    for eps in (0.0, 0.3, 1.0, 2.5, 5.0):
        b = acc.delta(eps)
        exact = ref.gaussian_delta(mu, eps)
        assert b.lower <= exact <= b.upper, (eps, b, exact)


def test_heterogeneous_gaussians_compose_by_mu():
    rows = [Row(Gaussian(2.0), 3), Row(Gaussian(5.0, sensitivity=2.0), 10), Row(Gaussian(1.5), 1)]
    mu = math.sqrt(3 / 4 + 10 * 4 / 25 + 1 / 2.25)
    for delta in (1e-4, 1e-6):
        b = Accountant(rows, closed_forms=False).epsilon(delta)
        assert b.lower <= ref.gaussian_epsilon(mu, delta) <= b.upper


@pytest.mark.parametrize("eps0,k", [(0.1, 1), (0.1, 50), (0.5, 20), (1.0, 5), (0.01, 2000), (2.0, 3)])
@pytest.mark.parametrize("delta", [1e-3, 1e-6])
def test_pure_dp_binomial(eps0, k, delta):
    for mech in (PureDP(eps0), RandomizedResponse(eps0)):
        b = Accountant([Row(mech, k)], closed_forms=False).epsilon(delta)
        exact = ref.rr_kfold_epsilon(eps0, k, delta)
        assert b.lower <= exact <= b.upper, (mech, b, exact)
        assert b.upper - b.lower <= 0.02 + 1e-12


@pytest.mark.parametrize("eps0,d0,k", [(0.1, 1e-7, 30), (0.5, 1e-6, 10), (1.0, 1e-4, 4), (0.05, 1e-9, 500)])
def test_approx_dp_binomial(eps0, d0, k):
    acc = Accountant([Row(ApproxDP(eps0, d0), k)], closed_forms=False)
    for delta in (1e-3, 1e-5):
        b = acc.epsilon(delta)
        exact = ref.rr_kfold_epsilon(eps0, k, delta, d0)
        assert b.lower <= exact <= b.upper
    for eps in (0.0, 0.5, 2.0):
        b = acc.delta(eps)
        exact = ref.rr_kfold_delta(eps0, k, eps, d0)
        assert b.lower <= exact <= b.upper


def test_zero_epsilon_approx_dp_is_one_minus_power():
    d0, k = 1e-3, 25
    b = Accountant([Row(ApproxDP(0.0, d0), k)], closed_forms=False).delta(0.5)
    exact = 1 - (1 - d0) ** k
    assert b.lower <= exact <= b.upper
    assert b.upper - b.lower < 1e-9


@pytest.mark.parametrize("scale", [0.5, 1.0, 3.0])
def test_single_laplace(scale):
    acc = Accountant([Row(Laplace(scale), 1)])
    e0 = 1 / scale
    for eps in (0.0, 0.2 * e0, 0.7 * e0):
        b = acc.delta(eps)
        assert b.lower <= ref.laplace_delta(e0, eps) <= b.upper


@pytest.mark.parametrize("sigma,q", [(0.8, 0.01), (2.0, 0.5), (0.5, 0.001), (1.0, 0.2)])
def test_single_subsampled_gaussian_both_orders(sigma, q):
    acc = Accountant([Row(SubsampledGaussian(sigma, q), 1)])
    for eps in (0.0, 0.05, 0.5, 2.0):
        exact = max(ref.subsampled_gaussian_delta(sigma, q, eps, "remove"),
                    ref.subsampled_gaussian_delta(sigma, q, eps, "add"))
        b = acc.delta(eps)
        assert b.lower <= exact <= b.upper, (eps, b, exact)


def test_sampling_rate_one_is_gaussian():
    a = Accountant([Row(SubsampledGaussian(1.3, 1.0), 40)], closed_forms=False).epsilon(1e-6)
    b = Accountant([Row(Gaussian(1.3), 40)], closed_forms=False).epsilon(1e-6)
    assert a == b


def test_edge_values():
    assert Accountant([Row(Gaussian(0.0), 1)]).epsilon(1e-5).lower == math.inf
    assert Accountant([Row(SubsampledGaussian(0.0, 1.0), 3)]).epsilon(1e-5).lower == math.inf
    assert Accountant([Row(SubsampledGaussian(0.8, 0.0), 1000)]).epsilon(1e-5).upper == 0.0
    assert Accountant([]).epsilon(1e-5).upper == 0.0
    d = Accountant([]).delta(0.0)
    assert (d.lower, d.upper) == (0.0, 0.0)
    one = Accountant([Row(Gaussian(1.0), 1), Row(ApproxDP(1.0, 1.0), 1)]).delta(3.0)
    assert one.lower == 1.0
    # sigma = 0 with q < 1: the sampled record is revealed; delta is at least q
    b = Accountant([Row(SubsampledGaussian(0.0, 0.01), 1)]).delta(5.0)
    assert b.lower <= 0.01 <= b.upper


def test_tiny_delta_never_below_truth():
    """float64 cannot certify every delta: the answer may widen (up to inf), never undershoot."""
    mu = 1.0 / 0.7 * math.sqrt(50)
    acc = Accountant([Row(Gaussian(0.7), 50)], closed_forms=False)
    for delta in (1e-10, 1e-12, 1e-13, 1e-15):
        b = acc.epsilon(delta)
        exact = ref.gaussian_epsilon(mu, delta)
        assert b.lower <= exact <= b.upper, (delta, b, exact)
        assert not math.isnan(b.upper)


def test_grid_cap_widens_but_still_contains_truth():
    """When the window needs more points than allowed, the mesh coarsens and the bracket widens."""
    sigma, k = 3.0, 5000
    acc = Accountant([Row(Gaussian(sigma), k)], eps_error=0.01, n_max=2 ** 14,
                     closed_forms=False)
    b = acc.epsilon(1e-6)
    exact = ref.gaussian_epsilon(math.sqrt(k) / sigma, 1e-6)
    assert b.lower <= exact <= b.upper
    assert acc.eps_error_used > 0.01 and acc.warnings
    assert b.upper - b.lower <= 2 * acc.eps_error_used


@pytest.mark.parametrize("rows", [
    [Row(Gaussian(2.0), 10), Row(Gaussian(3.0, 2.0), 4)],
    [Row(PureDP(0.3), 40)],
    [Row(ApproxDP(0.2, 1e-6), 25)],
    [Row(RandomizedResponse(1.0), 3), Row(PureDP(1.0), 2)],
])
def test_closed_form_shortcut_agrees_with_fft_path(rows):
    for delta in (1e-4, 1e-7):
        exact = Accountant(rows).epsilon(delta)
        fft = Accountant(rows, closed_forms=False).epsilon(delta)
        if math.isinf(exact.estimate):
            assert math.isinf(fft.lower)
            continue
        assert exact.upper - exact.lower <= 1e-5 * max(1.0, exact.estimate)
        assert fft.lower <= exact.estimate <= fft.upper


def test_count_curve_with_capped_grid_still_contains_truth():
    acc = Accountant([Row(Gaussian(3.0), 5000)], eps_error=0.01, n_max=2 ** 14, closed_forms=False)
    cs, bounds = acc.epsilon_vs_count(0, [10, 500, 5000], 1e-6)
    for c, b in zip(cs, bounds):
        exact = ref.gaussian_epsilon(math.sqrt(c) / 3.0, 1e-6)
        assert b.lower <= exact <= b.upper
    assert acc.eps_error_used > 0.01
