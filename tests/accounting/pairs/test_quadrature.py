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
