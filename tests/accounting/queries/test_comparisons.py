"""Tests for prvgui.accounting.queries.comparisons (the older accountants).

References, each computed independently of the module under test:
* exact Gaussian epsilon: Balle-Wang delta(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2),
  inverted by brentq here;
* exact k-fold (eps0, delta0)-DP: brute-force enumeration of the dominating pair for small k,
  the closed form of Kairouz-Oh-Viswanath 2015 Thm 3.3 (math.comb), and scipy.stats.binom;
* dp_accounting 0.6.0: RdpAccountant (same RDP method, other orders) and PLDAccountant
  (value_discretization_interval=1e-4, itself approximate, hence the 0.05 tolerance).
"""
from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy import stats
from scipy.optimize import brentq
from scipy.special import ndtr

from prvgui.accounting.queries.comparisons import (
    Comparison, compare_delta, compare_epsilon, epsilon_vs_count, gdp_delta_curve, gdp_mu,
    gdp_tradeoff, rdp_delta_curve)
from prvgui.accounting.mechanisms import (
    ApproxDP, Gaussian, Laplace, PureDP, RandomizedResponse, Row, SubsampledGaussian,
    SubsampledLaplace)

NAMES = ["rdp", "gdp", "basic", "advanced", "exact"]


def gaussian_delta(mu: float, eps: float) -> float:
    return ndtr(-eps / mu + mu / 2) - math.exp(eps) * ndtr(-eps / mu - mu / 2)


def gaussian_eps(mu: float, delta: float) -> float:
    if gaussian_delta(mu, 0.0) <= delta:
        return 0.0
    return brentq(lambda e: gaussian_delta(mu, e) - delta, 0.0, 10 * mu * mu + 50 * mu,
                  xtol=1e-14, rtol=1e-14)


def brute_delta(e0: float, d0: float, k: int, eps: float) -> float:
    """Hockey-stick divergence of the k-fold (eps0, delta0) dominating pair, by enumeration."""
    p = math.exp(e0) / (1 + math.exp(e0))
    P, Q = [d0, (1 - d0) * p, (1 - d0) * (1 - p)], [0.0, (1 - d0) * (1 - p), (1 - d0) * p]
    return sum(max(0.0, math.prod(P[i] for i in s) - math.exp(eps) * math.prod(Q[i] for i in s))
               for s in itertools.product(range(3), repeat=k))


def kov_formula(e0: float, d0: float, k: int, i: int) -> float:
    """KOV 2015 Thm 3.3: delta at eps = (k - 2i) e0."""
    dr = sum(math.comb(k, l) * (math.exp((k - l) * e0) - math.exp((k - 2 * i + l) * e0))
             for l in range(i)) / (1 + math.exp(e0)) ** k
    return 1 - (1 - d0) ** k * (1 - dr)


def values(out: dict[str, Comparison]) -> dict[str, float | None]:
    return {k: v.value for k, v in out.items()}


# ---------------------------------------------------------------- structure and edge cases
def test_keys_kinds_and_as_dict():
    out = compare_epsilon([Row(SubsampledGaussian(1.0, 0.01), 100)], 1e-5)
    assert list(out) == NAMES
    assert [c.kind for c in out.values()] == ["bound", "approximation", "bound", "bound", "exact"]
    assert out["gdp"].note == "approximation, may under-report"
    d = out["basic"].as_dict()
    assert d == {"name": "basic", "label": "Basic composition", "kind": "bound",
                 "value": None, "note": d["note"]} and d["note"]
    inf = compare_epsilon([Row(Gaussian(0.0), 1)], 1e-5)["rdp"].as_dict()
    assert inf["value"] == math.inf and isinstance(inf["value"], float)


@pytest.mark.parametrize("rows", [[], [Row(Gaussian(1.0), 0)],
                                  [Row(Laplace(1.0, sensitivity=0.0), 5), Row(PureDP(0.0), 3),
                                   Row(SubsampledGaussian(1.0, 0.0), 9)]])
def test_empty_composition_is_zero(rows):
    assert all(v == 0.0 for v in values(compare_epsilon(rows, 1e-6)).values())
    assert all(v == 0.0 for v in values(compare_delta(rows, 0.0)).values())
    assert gdp_mu(rows) == 0.0
    assert np.all(rdp_delta_curve(rows, [0.0, 1.0]) == 0.0)


@pytest.mark.parametrize("mech", [Gaussian(0.0), Laplace(0.0), ApproxDP(1.0, 1.0),
                                  SubsampledGaussian(0.0, 1.0), SubsampledLaplace(0.0, 1.0)])
def test_blatant_row(mech):
    rows = [Row(Gaussian(1.0), 3), Row(mech, 1)]
    assert all(v == math.inf for v in values(compare_epsilon(rows, 1e-5)).values())
    assert all(v == 1.0 for v in values(compare_delta(rows, 5.0)).values())
    assert np.all(rdp_delta_curve(rows, [0.0, 3.0]) == 1.0) and gdp_mu(rows) == math.inf
    assert np.all(gdp_delta_curve(rows, [0.0, 3.0]) == 1.0)


def test_not_applicable_notes():
    out = compare_epsilon([Row(ApproxDP(1.0, 1e-8), 10), Row(Gaussian(2.0), 1)], 1e-5)
    # RDP covers the Gaussian; the approx_dp rows join by basic composition
    gauss_only = compare_epsilon([Row(Gaussian(2.0), 1)], 1e-5 - 1e-7)["rdp"].value
    assert out["rdp"].value == pytest.approx(gauss_only + 10.0, rel=1e-12)
    assert out["rdp"].note == "Approximate (ε, δ)-DP rows with δ > 0 added by basic composition"
    assert out["gdp"].value is None and out["exact"].value is None and out["exact"].note
    assert out["basic"].value is None
    assert out["basic"].note == "Gaussian has no single (ε, δ) guarantee per run"
    assert "approx_dp" not in out["exact"].note and "gaussian" not in out["exact"].note
    out = compare_epsilon([Row(ApproxDP(1.0, 1e-3), 10)], 1e-5)  # deltas exceed target
    assert out["basic"].value == math.inf and out["advanced"].value is None
    assert rdp_delta_curve([Row(ApproxDP(1.0, 1e-8), 1)], [0.5, 1.0]).tolist() == [1.0, 1e-8]
    assert gdp_mu([Row(ApproxDP(1.0, 1e-8), 1)]) is None


def test_approx_dp_with_zero_delta_is_pure():
    a = values(compare_epsilon([Row(ApproxDP(0.5, 0.0), 40)], 1e-6))
    b = values(compare_epsilon([Row(PureDP(0.5), 40)], 1e-6))
    c = values(compare_epsilon([Row(RandomizedResponse(0.5), 25), Row(PureDP(0.5), 15)], 1e-6))
    assert a == b == c


def test_full_sampling_is_the_gaussian():
    a = values(compare_epsilon([Row(SubsampledGaussian(2.0, 1.0, 1.0), 30)], 1e-6))
    b = values(compare_epsilon([Row(Gaussian(2.0), 30)], 1e-6))
    assert a == b


# ---------------------------------------------------------------- Gaussian closed forms
@pytest.mark.parametrize("rows,mu", [
    ([Row(Gaussian(1.0), 1)], 1.0),
    ([Row(Gaussian(5.0), 100)], 2.0),
    ([Row(Gaussian(3.0, 2.0), 7), Row(Gaussian(10.0), 50)], math.sqrt(7 * 4 / 9 + 0.5)),
    ([Row(Gaussian(0.5), 1)], 2.0),
])
@pytest.mark.parametrize("delta", [1e-3, 1e-5, 1e-10])
def test_gaussian_gdp_exact_and_rdp_bound(rows, mu, delta):
    exact = gaussian_eps(mu, delta)
    out = compare_epsilon(rows, delta)
    assert out["gdp"].kind == "exact"
    assert gdp_mu(rows) == pytest.approx(mu, rel=1e-12)
    assert abs(out["gdp"].value - exact) < 1e-9
    assert out["rdp"].value >= exact
    d = compare_delta(rows, exact)
    assert d["gdp"].value == pytest.approx(delta, rel=1e-8)
    assert d["rdp"].value >= delta * (1 - 1e-12)


def test_gdp_delta_curve_and_tradeoff():
    rows = [Row(Gaussian(2.0), 9)]
    eps = np.array([0.0, 0.5, 2.0, 6.0])
    ref = [gaussian_delta(1.5, e) for e in eps]
    np.testing.assert_allclose(gdp_delta_curve(rows, eps), ref, rtol=1e-10)
    alpha = np.array([0.0, 1e-12, 0.05, 0.5, 1.0])
    beta = gdp_tradeoff(1.5, alpha)
    np.testing.assert_allclose(beta, stats.norm.cdf(stats.norm.isf(alpha) - 1.5), rtol=1e-12)
    assert beta[0] == 1.0 and beta[-1] == 0.0
    np.testing.assert_allclose(gdp_tradeoff(0.0, alpha), 1 - alpha)
    assert np.all(gdp_tradeoff(math.inf, alpha) == 0.0)


def test_gdp_mu_closed_forms():
    # Bu, Dong, Long, Su 2019: DP-SGD is about q sqrt(T (e^{1/sigma^2} - 1))-GDP
    assert gdp_mu([Row(SubsampledGaussian(1.1, 0.01), 5000)]) == pytest.approx(
        0.01 * math.sqrt(5000 * math.expm1(1 / 1.21)), rel=1e-12)
    # CLT for k-fold eps-DP: mu = 2 k m / sqrt(k v), m = e tanh(e/2), v = e^2 - m^2
    e, k = 0.3, 400
    m = e * math.tanh(e / 2)
    assert gdp_mu([Row(PureDP(e), k)]) == pytest.approx(2 * k * m / math.sqrt(k * (e * e - m * m)))
    # Laplace: m = e - 1 + e^-e and E[Y^2] = e^2 - 2e + 4 - 2 (e + 2) e^-e (PRV paper, App. B)
    e = 2.0
    m, y2 = e - 1 + math.exp(-e), e * e - 2 * e + 4 - 2 * (e + 2) * math.exp(-e)
    assert gdp_mu([Row(Laplace(1 / e), 9)]) == pytest.approx(6 * m / math.sqrt(y2 - m * m), rel=1e-9)
    assert compare_epsilon([Row(Laplace(1.0), 5)], 1e-5)["gdp"].note == "approximation, may under-report"


# ---------------------------------------------------------------- exact (KOV)
@pytest.mark.parametrize("e0,d0,k", [(0.5, 0.0, 5), (1.0, 0.01, 4), (0.3, 1e-3, 6), (2.0, 0.0, 3)])
def test_exact_matches_brute_force(e0, d0, k):
    mech = PureDP(e0) if d0 == 0 else ApproxDP(e0, d0)
    rows = [Row(mech, k)]
    for eps in (0.0, 0.2, 0.9, 1.7, k * e0):
        assert compare_delta(rows, eps)["exact"].value == pytest.approx(
            brute_delta(e0, d0, k, eps), rel=1e-10, abs=1e-15)
    for delta in (0.3, 0.05, 0.02, 1e-3):
        got = compare_epsilon(rows, delta)["exact"].value
        if brute_delta(e0, d0, k, 0.0) <= delta:
            assert got == 0.0
        elif brute_delta(e0, d0, k, k * e0 + 1e-9) > delta:
            assert got == math.inf
        else:
            ref = brentq(lambda e: brute_delta(e0, d0, k, e) - delta, 0, k * e0, xtol=1e-14)
            assert got == pytest.approx(ref, rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("e0,d0,k", [(0.3, 1e-4, 20), (0.1, 1e-6, 60), (1.0, 0.0, 11)])
def test_exact_matches_kov_formula(e0, d0, k):
    rows = [Row(ApproxDP(e0, d0), k)]
    for i in range(k // 2 + 1):
        assert compare_delta(rows, (k - 2 * i) * e0)["exact"].value == pytest.approx(
            kov_formula(e0, d0, k, i), rel=1e-9, abs=1e-300)


def test_exact_large_count_against_scipy_binomial():
    e0, k = 0.01, 10**6  # delta_RR(eps) = sum_{i: Y_i > eps} P(i) (1 - e^{eps - Y_i})
    i = np.arange(k // 2)
    y = e0 * (k - 2 * i)
    pmf = stats.binom.pmf(i, k, 1 / (1 + math.exp(e0)))
    for eps in (60.0, 90.0):
        ref = float(np.sum(np.where(y > eps, pmf * -np.expm1(eps - y), 0.0)))
        got = compare_delta([Row(PureDP(e0), k)], eps)["exact"].value
        assert got == pytest.approx(ref, rel=1e-6)
        eps_back = compare_epsilon([Row(PureDP(e0), k)], got)["exact"].value
        assert eps_back == pytest.approx(eps, rel=1e-9)


@settings(max_examples=40, deadline=None)
@given(e0=st.floats(0.01, 2.0), k=st.integers(1, 3000), log_delta=st.floats(-12, -0.7))
def test_bounds_never_below_exact_for_pure_dp(e0, k, log_delta):
    delta = 10.0 ** log_delta
    out = values(compare_epsilon([Row(PureDP(e0), k)], delta))
    exact = out["exact"]
    for name in ("rdp", "basic", "advanced"):
        assert out[name] >= exact - 1e-9, name
    assert out["basic"] >= out["advanced"] - 1e-12  # advanced is reported as min(adv, basic)
    assert out["basic"] == pytest.approx(k * e0)


def test_advanced_heterogeneous_formula():
    rows = [Row(PureDP(0.1), 100), Row(ApproxDP(0.2, 1e-7), 50)]
    delta = 1e-4
    dprime = delta - 50 * 1e-7
    s2, drift = 100 * 0.01 + 50 * 0.04, 100 * 0.1 * math.expm1(0.1) + 50 * 0.2 * math.expm1(0.2)
    adv = math.sqrt(2 * math.log(1 / dprime) * s2) + drift
    out = compare_epsilon(rows, delta)
    assert out["advanced"].value == pytest.approx(min(adv, 20.0), rel=1e-12)
    assert out["basic"].value == pytest.approx(20.0)
    back = compare_delta(rows, adv)["advanced"].value
    assert back == pytest.approx(delta, rel=1e-9)


# ---------------------------------------------------------------- RDP against the peers
@pytest.mark.parametrize("sigma", [0.8, 1.1])
@pytest.mark.parametrize("steps", [1000, 10000])
def test_rdp_dpsgd_against_dp_accounting(sigma, steps):
    from dp_accounting import dp_event
    from dp_accounting.rdp import rdp_privacy_accountant
    acc = rdp_privacy_accountant.RdpAccountant()
    acc.compose(dp_event.PoissonSampledDpEvent(0.01, dp_event.GaussianDpEvent(sigma)), steps)
    ref = acc.get_epsilon(1e-5)
    got = compare_epsilon([Row(SubsampledGaussian(sigma, 0.01), steps)], 1e-5)["rdp"].value
    assert 0.99 * ref <= got <= 1.04 * ref


@pytest.mark.parametrize("event,rows", [
    (("gauss", 0.01, 0.8), [Row(SubsampledGaussian(0.8, 0.01), 1000)]),
    (("gauss", 0.01, 1.1), [Row(SubsampledGaussian(1.1, 0.01), 1000)]),
    (("gauss", 0.2, 3.0), [Row(SubsampledGaussian(3.0, 0.2), 30)]),
    (("lap", 0.05, 1.0), [Row(SubsampledLaplace(1.0, 0.05), 1000)]),
    (("lap", 1.0, 3.0), [Row(Laplace(3.0), 100)]),
])
def test_rdp_is_an_upper_bound_against_pld(event, rows):
    from dp_accounting import dp_event
    from dp_accounting.pld import pld_privacy_accountant
    kind, q, scale = event
    base = dp_event.GaussianDpEvent(scale) if kind == "gauss" else dp_event.LaplaceDpEvent(scale)
    acc = pld_privacy_accountant.PLDAccountant(value_discretization_interval=1e-4)
    acc.compose(base if q == 1.0 else dp_event.PoissonSampledDpEvent(q, base), rows[0].count)
    for delta in (1e-3, 1e-6):
        assert compare_epsilon(rows, delta)["rdp"].value >= acc.get_epsilon(delta) - 0.05


# ---------------------------------------------------------------- consistency properties
def test_epsilon_vs_count_matches_compare_epsilon():
    rows = [Row(Gaussian(4.0), 3), Row(SubsampledGaussian(1.0, 0.02), 100), Row(Laplace(5.0), 2)]
    counts = np.array([0, 1, 50, 100, 2000])
    curve = epsilon_vs_count(rows, 1, counts, 1e-6)
    for c, r, g in zip(counts, curve["rdp"], curve["gdp"]):
        rows_c = [rows[0], Row(rows[1].mechanism, int(c)), rows[2]]
        out = compare_epsilon(rows_c, 1e-6)
        assert r == pytest.approx(out["rdp"].value, rel=1e-12)
        assert g == pytest.approx(out["gdp"].value, rel=1e-9)
    mixed = epsilon_vs_count([Row(ApproxDP(1.0, 1e-9), 1), Row(Gaussian(1.0))], 1, [1, 2], 1e-5)
    for c, r in zip([1, 2], mixed["rdp"]):
        assert r == pytest.approx(compare_epsilon([Row(ApproxDP(1.0, 1e-9), 1), Row(Gaussian(1.0), c)],
                                                  1e-5)["rdp"].value, rel=1e-12)
    assert mixed["gdp"] is None
    blat = epsilon_vs_count([Row(Gaussian(0.0), 1), Row(Gaussian(1.0))], 0, [0, 2], 1e-5)
    assert gaussian_eps(1.0, 1e-5) <= blat["rdp"][0] < math.inf
    assert blat["gdp"][0] == pytest.approx(gaussian_eps(1.0, 1e-5), abs=1e-9)
    assert blat["rdp"][1] == math.inf and blat["gdp"][1] == math.inf


def test_rdp_curve_inverts_rdp_epsilon():
    rows = [Row(SubsampledGaussian(1.0, 0.05), 500), Row(Laplace(10.0), 3)]
    for delta in (1e-3, 1e-7):
        eps = compare_epsilon(rows, delta)["rdp"].value
        d = rdp_delta_curve(rows, [eps, 0.999 * eps])
        assert d[0] <= delta * (1 + 1e-9) < d[1]
        assert compare_delta(rows, eps)["rdp"].value == d[0]


@settings(max_examples=25, deadline=None)
@given(sigma=st.floats(0.6, 5.0), q=st.floats(0.001, 1.0), steps=st.integers(1, 5000),
       d1=st.floats(-12, -1), d2=st.floats(-12, -1))
def test_epsilon_decreases_as_delta_increases(sigma, q, steps, d1, d2):
    lo, hi = sorted((10.0 ** d1, 10.0 ** d2))
    rows = [Row(SubsampledGaussian(sigma, q), steps)]
    a, b = values(compare_epsilon(rows, lo)), values(compare_epsilon(rows, hi))
    for name in ("rdp", "gdp"):
        assert a[name] >= b[name] >= 0.0
    curve = rdp_delta_curve(rows, np.linspace(0, 20, 41))
    assert np.all(np.diff(curve) <= 0) and np.all((curve >= 0) & (curve <= 1))


@pytest.mark.parametrize("rows", [
    [Row(Gaussian(1e-300), 10**9)], [Row(Gaussian(1e300), 10**9)],
    [Row(SubsampledGaussian(0.05, 0.5), 10**6)], [Row(SubsampledGaussian(1e-3, 1e-6), 10)],
    [Row(PureDP(1e5), 10**9)], [Row(Laplace(1e-6), 10)], [Row(ApproxDP(50.0, 0.5), 10**9)],
    [Row(SubsampledLaplace(1e-3, 0.5), 100)], [Row(SubsampledGaussian(0.0, 0.5), 3)],
])
def test_extreme_inputs_never_nan(rows):
    for delta in (1e-300, 1e-5, 0.999):
        for name, v in values(compare_epsilon(rows, delta)).items():
            assert v is None or (not math.isnan(v) and v >= 0), name
    for eps in (0.0, 1.0, 1e300):
        for name, v in values(compare_delta(rows, eps)).items():
            assert v is None or 0.0 <= v <= 1.0, name


# ---------------------------------------------------------------- validation
@pytest.mark.parametrize("delta", [0, 1, 1.0, -1e-3, 2, math.nan, math.inf, "0.1", None, True])
def test_bad_delta(delta):
    with pytest.raises(ValueError, match="^Target δ must be"):
        compare_epsilon([Row(Gaussian(1.0))], delta)
    with pytest.raises(ValueError, match="^Target δ must be"):
        epsilon_vs_count([Row(Gaussian(1.0))], 0, [1], delta)


@pytest.mark.parametrize("epsilon", [-1.0, math.nan, math.inf, -math.inf, "1", None])
def test_bad_epsilon(epsilon):
    with pytest.raises(ValueError, match="^ε must be"):
        compare_delta([Row(Gaussian(1.0))], epsilon)


def test_bad_arrays_and_rows():
    rows = [Row(Gaussian(1.0))]
    for bad in ([math.nan], [-1.0], [math.inf], [[1.0]]):
        with pytest.raises(ValueError, match="eps"):
            rdp_delta_curve(rows, bad)
        with pytest.raises(ValueError, match="eps"):
            gdp_delta_curve(rows, bad)
    with pytest.raises(ValueError, match="alpha"):
        gdp_tradeoff(1.0, [1.5])
    for mu in (math.nan, -1.0, "1"):
        with pytest.raises(ValueError, match="mu"):
            gdp_tradeoff(mu, [0.5])
    with pytest.raises(ValueError, match="rows"):
        compare_epsilon([Gaussian(1.0)], 1e-5)
    with pytest.raises(ValueError, match="row_index"):
        epsilon_vs_count(rows, 1, [1], 1e-5)
    for bad in ([1.5], [-1], [math.nan]):
        with pytest.raises(ValueError, match="counts"):
            epsilon_vs_count(rows, 0, bad, 1e-5)


def test_rdp_with_approx_rows_stays_above_the_certified_lower_bound():
    from prvgui.accounting import Accountant
    rows = [Row(SubsampledGaussian(0.8, 0.01), 3000), Row(ApproxDP(0.05, 1e-8), 2), Row(Laplace(10.0), 3)]
    for delta in (1e-4, 1e-6):
        prv = Accountant(rows).epsilon(delta)
        assert compare_epsilon(rows, delta)["rdp"].value >= prv.lower
