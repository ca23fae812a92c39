"""Exact identities of the classic mechanisms' pairs (both orders); the contract every kind meets
(a distribution, the likelihood ratio, one step's delta) is test_contract.py, driven by the registry."""
import math

import numpy as np
import pytest
from scipy import integrate, stats

from prvgui.accounting import (ApproxDP, Gaussian, Laplace, PureDP, RandomizedResponse,
                               SubsampledGaussian, SubsampledLaplace)
from prvgui.accounting.numerics.discretize import discretize

import references as ref

MECHS = [Gaussian(1.0), Gaussian(0.3), Gaussian(4.0, 2.0), Laplace(1.0), Laplace(0.2), PureDP(0.5),
         RandomizedResponse(2.0), ApproxDP(0.3, 1e-3), ApproxDP(0.0, 0.2),
         SubsampledGaussian(0.8, 0.01), SubsampledGaussian(0.3, 0.5), SubsampledGaussian(5.0, 1e-4),
         SubsampledGaussian(1.0, 0.999), SubsampledLaplace(1.0, 0.1), SubsampledLaplace(0.3, 0.03)]
CASES = [(m, o) for m in MECHS for o in (("remove", "add") if not m.symmetric else ("remove",))]


def ids(c):
    return f"{c[0]!r}-{c[1]}"


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


def _mp_tails(kind, params, order):
    """(cdf, sf) of the PRV at 40 digits (the closed forms in prv.py's docstrings, by mpmath;
    each tail directly, so that neither loses digits to 1 - x)."""
    import mpmath as mp
    mp.mp.dps = 40
    phi = mp.ncdf
    if kind == "gaussian":
        mu = mp.mpf(params[0])
        return (lambda t: phi((mp.mpf(t) - mu * mu / 2) / mu),
                lambda t: phi((mu * mu / 2 - mp.mpf(t)) / mu))
    if kind == "laplace":
        e = mp.mpf(params[0])
        return (lambda t: (mp.exp((mp.mpf(t) - e) / 2) - mp.exp(-e)) / 2,
                lambda t: -mp.expm1((mp.mpf(t) - e) / 2) / 2)
    if kind == "sl":
        e, q = mp.mpf(params[0]), mp.mpf(params[1])

        def xl(t):  # (l0(t) / e + 1) / 2, clipped to [0, 1]
            x = (mp.log((mp.exp(mp.mpf(t)) - 1 + q) / q) / e + 1) / 2
            return min(max(x, mp.mpf(0)), mp.mpf(1))
        em = mp.exp(-e)
        if order == "remove":
            return (lambda t: q / 2 * (mp.exp(e * (xl(t) - 1)) - em) - (1 - q) / 2 * mp.expm1(-e * xl(t)),
                    lambda t: -q / 2 * mp.expm1(e * (xl(t) - 1)) + (1 - q) / 2 * (mp.exp(-e * xl(t)) - em))
        return (lambda t: (mp.exp(-e * xl(-t)) - mp.exp(-e)) / 2, lambda t: -mp.expm1(-e * xl(-t)) / 2)
    s, q = mp.mpf(params[0]), mp.mpf(params[1])

    def x_of(t):
        return s * s * mp.log((mp.exp(mp.mpf(t)) - 1 + q) / q) + mp.mpf(1) / 2
    if order == "remove":
        return (lambda t: q * phi((x_of(t) - 1) / s) + (1 - q) * phi(x_of(t) / s),
                lambda t: q * phi((1 - x_of(t)) / s) + (1 - q) * phi(-x_of(t) / s))
    return lambda t: phi(-x_of(-t) / s), lambda t: phi(x_of(-t) / s)


@pytest.mark.parametrize("kind,params,order", [
    ("gaussian", (0.05,), "remove"), ("gaussian", (3.0,), "remove"), ("sg", (0.8, 0.01), "remove"),
    ("sg", (0.8, 0.01), "add"), ("sg", (2.0, 0.2), "remove"), ("sg", (0.5, 0.001), "add"),
    ("laplace", (0.01,), "remove"), ("laplace", (3.0,), "remove"), ("sl", (1.0, 0.1), "remove"),
    ("sl", (1.0, 0.1), "add"), ("sl", (0.05, 0.5), "remove"),
    # tiny continuous parts (issue 16): the cdf must hold its accuracy relative to their mass
    ("laplace", (1e-7,), "remove"), ("laplace", (1e-4,), "remove"), ("laplace", (40.0,), "remove"),
    ("sl", (1e-6, 0.9), "remove"), ("sl", (1e-6, 0.9), "add"), ("sl", (1e-3, 1e-4), "remove"),
    ("sl", (1e-3, 1e-4), "add"), ("sl", (5.0, 1e-6), "remove"), ("sg", (1.0, 1e-7), "remove"),
    ("sg", (1.0, 1e-7), "add")])
def test_cdf_and_sf_hold_the_accuracy_discretize_assumes(kind, params, order):
    """discretize.mass_rounding trusts the cdf left of the centre to an absolute CDF_ULPS ulps of
    the continuous part's mass and the sf right of it to a relative CDF_ULPS ulps, each at a
    point within 64 ulps (1 + |t|) of the edge (its ``bias`` term). Long arrays and short ones
    both."""
    import mpmath as mp

    from prvgui.accounting.numerics.discretize import CDF_ULPS
    from prvgui.accounting.kinds.gaussian import gaussian_prv
    from prvgui.accounting.kinds.laplace import laplace_prv
    from prvgui.accounting.kinds.subsampled_gaussian import subsampled_gaussian_prv
    from prvgui.accounting.kinds.subsampled_laplace import subsampled_laplace_prv
    build = {"gaussian": gaussian_prv, "laplace": laplace_prv,
             "sg": lambda *a: subsampled_gaussian_prv(*a, order),
             "sl": lambda *a: subsampled_laplace_prv(*a, order)}
    prv = build[kind](*params)
    c, (ref_cdf, ref_sf) = prv.cont, _mp_tails(kind, params, order)
    lo, hi = c.lower_cut(1e-290), c.upper_cut(1e-290)
    t = np.unique(np.concatenate([np.linspace(lo, hi, 1500), c.centre + np.geomspace(1e-6, 1, 50),
                                  c.centre - np.geomspace(1e-6, 1, 50)]))
    t = t[(t > c.lo) & (t < c.hi)]
    u = 2.0 ** -53
    short = lambda f: np.concatenate([f(t[i:i + 100]) for i in range(0, t.size, 100)])  # noqa: E731
    for side, vals in (("cdf", c.cdf(t)), ("sf", c.sf(t)), ("cdf", short(c.cdf)), ("sf", short(c.sf))):
        keep = (t <= c.centre) if side == "cdf" else (t >= c.centre)
        for ti, v in zip(t[keep], vals[keep]):
            dt = 64 * 2 * u * (1 + abs(ti))
            if side == "cdf":
                a, b = ref_cdf(ti - dt), ref_cdf(ti + dt)
            else:
                a, b = ref_sf(ti + dt), ref_sf(ti - dt)
            if b < mp.mpf(1e-300):
                continue
            if side == "cdf":  # absolute, in units of the part's mass
                tol = CDF_ULPS * u * c.mass
                assert a - tol <= v <= b + tol, (side, ti, v, a, b)
            else:
                assert a * (1 - CDF_ULPS * u) <= v <= b * (1 + CDF_ULPS * u), (side, ti, v, a, b)
