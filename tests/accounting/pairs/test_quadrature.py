"""The one quadrature rule (prvgui/accounting/pairs/quadrature.py): its written-out nodes are
numpy's Gauss-Legendre nodes, it integrates polynomials up to degree 31 exactly on a panel, and
its two composites agree with closed forms and with each other."""
import math

import numpy as np
import pytest

from prvgui.accounting.pairs.quadrature import GL_W, GL_X, integrate, log_integrate, lse_up


def test_the_written_out_rule_is_numpys_gauss_legendre():
    x, w = np.polynomial.legendre.leggauss(16)
    assert np.array_equal(GL_X, x) and np.array_equal(GL_W, w)


@pytest.mark.parametrize("degree", [0, 1, 7, 30, 31])
def test_one_panel_integrates_polynomials_up_to_degree_31_exactly(degree):
    # int_{-1}^{1} x^d dx = 2 / (d + 1) for even d, 0 for odd d
    exact = 2.0 / (degree + 1) if degree % 2 == 0 else 0.0
    assert float(np.sum(GL_W * GL_X ** degree)) == pytest.approx(exact, abs=1e-14)


def test_integrate_matches_closed_forms_with_an_honest_error_estimate():
    val, err = integrate(lambda x: np.exp(-0.5 * x * x), [-8.0, 0.0, 8.0])
    assert abs(val - math.sqrt(2 * math.pi) * math.erf(8 / math.sqrt(2))) <= max(err, 1e-13)
    val, err = integrate(np.sin, [0.0, math.pi], panels=8)
    assert abs(val - 2.0) <= max(err, 1e-13)


def test_log_integrate_is_the_log_of_the_integral_rounded_up():
    got = log_integrate(lambda x: -x, 0.0, 50.0, 0.5)  # log int_0^50 e^-x dx = log(1 - e^-50)
    assert got >= math.log1p(-math.exp(-50.0)) - 1e-15 and got == pytest.approx(0.0, abs=1e-12)
    big = log_integrate(lambda x: 800.0 - x, 0.0, 10.0, 0.1)  # beyond float64's exp: in logs
    assert big == pytest.approx(800.0 + math.log1p(-math.exp(-10.0)), rel=1e-13)


def test_lse_up_never_rounds_down():
    rng = np.random.default_rng(3)
    for _ in range(200):
        t = rng.normal(0.0, 30.0, size=rng.integers(1, 50))
        exact = math.log(math.fsum(math.exp(v - t.max()) for v in t)) + t.max()
        assert float(lse_up(t)) >= exact


def _add_divergence_mp(a: int, s: float, q: float) -> float:
    """D_a(Q0 || q P0 + (1 - q) Q0) for P0 = N(1, s^2), Q0 = N(0, s^2) in mpmath (50 digits):
    log E_{z ~ N(0,1)} (q e^{z/s - 1/(2 s^2)} + 1 - q)^(1 - a) / (a - 1), split at the
    integrand's peak."""
    import mpmath as mp
    with mp.workdps(50):
        c = mp.mpf(0.5) / (mp.mpf(s) ** 2)

        def f(z):
            return mp.npdf(z) * (q * mp.e ** (z / s - c) + 1 - q) ** (1 - a)
        peak = mp.findroot(lambda z: -z - (a - 1) * q * mp.e ** (z / s - c) / (s * (q * mp.e ** (z / s - c) + 1 - q)),
                           (mp.mpf(-(a - 1)) / s, mp.mpf(0)), solver="illinois")  # (g falls: one root)
        total = mp.quad(f, [-mp.inf, peak - 5, peak, peak + 5, mp.inf])
        return float(mp.log(total) / (a - 1))


@pytest.mark.parametrize("a,s,q", [(2, 1.0, 0.01), (3, 0.8, 0.005), (8, 1.2, 0.02), (32, 1.1, 0.004),
                                   (64, 0.9, 0.01), (256, 2.0, 0.001), (1024, 1.5, 0.003),
                                   (5, 0.5, 0.3), (16, 3.0, 0.9), (2, 0.6, 1e-5), (1024, 0.5, 0.5),
                                   (128, 0.3, 0.05)])
def test_subsampled_gaussian_add_against_mpmath(a, s, q):
    """The add order's quadrature (rdp.subsampled_gaussian_add) is an upper bound within 1e-9
    (relative) of the divergence worked out in mpmath, plus lse_up's rounding pad (a few 1e-14):
    its panels (H_SCALE / sqrt(kappa)) and range resolve the integrand."""
    from prvgui.accounting.pairs.rdp import subsampled_gaussian_add
    got, exact = subsampled_gaussian_add(a, s, q), _add_divergence_mp(a, s, q)
    assert exact - 1e-15 <= got <= exact * (1 + 1e-9) + 1e-13


def test_subsampled_gaussian_remove_orders_against_mpmath():
    """The remove order's binomial expansion at every integer order at once
    (rdp.subsampled_remove_orders, orders of alike size padded into one array) is an upper bound
    within lse_up's rounding pad of the sum worked out in mpmath."""
    import mpmath as mp
    from prvgui.accounting.pairs.rdp import ORDERS, subsampled_remove_orders
    whole = ORDERS[ORDERS == np.round(ORDERS)]
    for s, q in [(1.1, 0.005), (0.5, 0.3), (3.0, 0.9), (1.8453582830481956, 0.00026835072079142697)]:
        c = 0.5 / (s * s)
        got = subsampled_remove_orders(whole, q, lambda j: (j * j - j) * c)
        for a, g in zip(whole[::7].astype(int), got[::7]):
            with mp.workdps(40):
                total = mp.fsum(mp.binomial(a, j) * (1 - mp.mpf(q)) ** (a - j) * mp.mpf(q) ** j
                                * mp.e ** ((j * j - j) * mp.mpf(c)) for j in range(a + 1))
                exact = float(mp.log(total) / (a - 1))
            assert exact * (1 - 1e-15) <= g <= exact * (1 + 1e-9) + 1e-13, (s, q, a)
