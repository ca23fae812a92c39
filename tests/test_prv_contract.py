"""One contract, every mechanism (both orders of the pair), in the style of scipy.stats' tests."""
import math

import numpy as np
import pytest
from scipy import integrate, stats

from prvgui.accounting import (ApproxDP, Gaussian, Laplace, PureDP, RandomizedResponse,
                               SubsampledGaussian, SubsampledLaplace)
from prvgui.accounting.discretize import discretize

import references as ref

MECHS = [Gaussian(1.0), Gaussian(0.3), Gaussian(4.0, 2.0), Laplace(1.0), Laplace(0.2), PureDP(0.5),
         RandomizedResponse(2.0), ApproxDP(0.3, 1e-3), ApproxDP(0.0, 0.2),
         SubsampledGaussian(0.8, 0.01), SubsampledGaussian(0.3, 0.5), SubsampledGaussian(5.0, 1e-4),
         SubsampledGaussian(1.0, 0.999), SubsampledLaplace(1.0, 0.1), SubsampledLaplace(0.3, 0.03)]
CASES = [(m, o) for m in MECHS for o in (("remove", "add") if not m.symmetric else ("remove",))]


def ids(c):
    return f"{c[0]!r}-{c[1]}"


@pytest.mark.parametrize("case", CASES, ids=ids)
def test_masses_add_up(case):
    prv = case[0].prv(case[1])
    total = prv.inf_mass + sum(m for _, m in prv.atoms) + (prv.cont.mass if prv.cont else 0.0)
    assert abs(total - 1) < 1e-12
    if prv.cont is not None:
        c = prv.cont
        t = np.linspace(max(c.lo, -30), min(c.hi, 30), 50)
        assert np.allclose(c.cdf(t) + c.sf(t), c.mass, rtol=0, atol=1e-13)
        assert np.all(np.diff(c.cdf(t)) >= -1e-15)


@pytest.mark.parametrize("case", CASES, ids=ids)
def test_likelihood_ratio_identity(case):
    """E[e^{-Y}; Y finite] = Q(dP/dQ > 0): 1 except for the delta part of approx_dp."""
    mech, order = case
    prv = mech.prv(order)
    d = discretize(prv, 1e-4, 1e-14)
    val = float(np.sum(d.pmf * np.exp(-d.values))) * (1 - prv.inf_mass)
    expected = 1.0 - (mech.delta if isinstance(mech, ApproxDP) else 0.0)
    assert val == pytest.approx(expected, abs=2e-4)


@pytest.mark.parametrize("case", CASES, ids=ids)
def test_discretisation_preserves_mean(case):
    prv = case[0].prv(case[1])
    if prv.finite_mass == 0:
        return
    d = discretize(prv, 1e-3, 1e-16)
    assert abs(d.mean() - prv.mean / prv.finite_mass) < 1e-9
    assert abs(d.shift) <= 0.5e-3 * (1 + 1e-6)


@pytest.mark.parametrize("sigma,q", [(0.8, 0.01), (0.3, 0.5), (5.0, 1e-4), (2.0, 0.9)])
def test_subsampled_gaussian_mean_is_kl(sigma, q):
    """Independent: E[Y] = int l(x) p(x) dx by scipy quad, l(x) = log(q e^{(2x-1)/(2 s^2)} + 1 - q)."""
    l = lambda x: np.logaddexp(math.log(q) + (2 * x - 1) / (2 * sigma ** 2), math.log1p(-q))  # noqa
    p = lambda x: q * stats.norm.pdf(x, 1, sigma) + (1 - q) * stats.norm.pdf(x, 0, sigma)  # noqa
    fwd = integrate.quad(lambda x: l(x) * p(x), -40 * sigma, 1 + 40 * sigma, limit=500,
                         epsabs=1e-15, points=[0, 1])[0]
    back = integrate.quad(lambda x: -l(x) * stats.norm.pdf(x, 0, sigma), -40 * sigma, 40 * sigma,
                          limit=500, epsabs=1e-15, points=[0, 1])[0]
    m = SubsampledGaussian(sigma, q)
    assert m.prv("remove").mean == pytest.approx(fwd, rel=1e-7, abs=1e-14)
    assert m.prv("add").mean == pytest.approx(back, rel=1e-7, abs=1e-14)


@pytest.mark.parametrize("eps", [0.0, 0.1, 0.7, 2.0])
def test_direct_delta_matches_closed_forms(eps):
    assert Gaussian(1.3).prv().delta(eps) == pytest.approx(ref.gaussian_delta(1 / 1.3, eps), abs=1e-10)
    assert Laplace(0.8).prv().delta(eps) == pytest.approx(ref.laplace_delta(1.25, eps), abs=1e-10)
    for o in ("remove", "add"):
        got = SubsampledGaussian(0.9, 0.05).prv(o).delta(eps)
        assert got == pytest.approx(ref.subsampled_gaussian_delta(0.9, 0.05, eps, o), abs=1e-9)


def test_written_out_gauss_legendre_rule_is_numpys():
    import numpy as np
    from prvgui.accounting.prv import _GL_W, _GL_X
    x, w = np.polynomial.legendre.leggauss(16)
    assert np.array_equal(_GL_X, x) and np.array_equal(_GL_W, w)
