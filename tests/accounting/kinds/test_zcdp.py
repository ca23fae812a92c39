"""A mechanism known only to be (xi, rho)-zCDP, against independent references.

* The exact CKS conversion (Canonne, Kamath, Steinke 2020, Prop. 12):
  delta(eps) = inf_{a > 1} exp((a - 1)(a rho + xi - eps)) / a (1 - 1/a)^(a - 1), minimised here in
  mpmath (40 digits) by bisection on the derivative (2a - 1) rho + xi - eps + log(1 - 1/a).
* Concrete (xi, rho)-zCDP mechanisms, whose exact compositions are LOWER bounds on the worst
  case: the Gaussian with mu^2 / 2 = rho (Balle-Wang closed form, mu^2 adding up), randomized
  response at sqrt(2 rho) (eps-DP is eps^2/2-zCDP; KOV closed form) and randomized response at
  xi beside a Gaussian (pure xi-DP is (xi, 0)-zCDP; the exact sum of the two losses).
"""
import math

import mpmath as mp
import numpy as np
import pytest

import references as ref
from prvgui.accounting import Accountant, Gaussian, Row
from prvgui.accounting.queries.certified import best_upper
from prvgui.accounting.queries.comparisons import compare_epsilon
from prvgui.accounting.core.values import Relation
from prvgui.accounting.kinds.zcdp import ZCDP, cks_delta, profile_points, zcdp_prv
from prvgui.document import Document, RowSpec, dumps
from prvgui.document.fileio import FileFormatError, loads_composition

mp.mp.dps = 40


def cks(rho, xi, e):
    rho, xi, e = mp.mpf(rho), mp.mpf(xi), mp.mpf(e)
    slope = lambda a: (2 * a - 1) * rho + xi - e + mp.log(1 - 1 / a)  # noqa: E731
    lo, hi = mp.mpf(1) + mp.mpf(10) ** -30, mp.mpf(2) + (abs(e - xi) + 1) / rho
    if slope(lo) >= 0:
        return mp.mpf(1)
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if slope(mid) < 0 else (lo, mid)
    a = hi
    return min(mp.mpf(1), mp.exp((a - 1) * (a * rho + xi - e)) / a * (1 - 1 / a) ** (a - 1))


def cks_epsilon(rho, xi, delta):
    lo, hi = mp.mpf(0), mp.mpf(1)
    while cks(rho, xi, hi) > delta:
        hi *= 2
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if cks(rho, xi, mid) > delta else (lo, mid)
    return float(hi)


@pytest.mark.parametrize("rho,xi", [(0.1, 0.0), (1e-4, 0.0), (2.0, 0.0), (0.05, 0.5), (50.0, 3.0),
                                    (1e-12, 0.2)])
def test_the_conversion_is_an_upper_bound_within_rounding(rho, xi):
    eps = np.concatenate([np.linspace(0, xi + rho + 6 * math.sqrt(rho) + 1, 23), [xi / 2, xi]])
    got = cks_delta(rho, xi, eps)
    for e, g in zip(eps, got):
        want = cks(rho, xi, e)
        assert want <= g <= want * (1 + 1e-10) + 1e-300, (e, g, want)


def test_profile_points_lie_on_the_conversion_and_the_pair_through_them():
    """The points are the conversion (rounded up); the pair's delta is at most the chord between
    neighbours and within 2e-3 of the conversion at the midpoints; a few points near eps = 0 are
    implied by the others (a symmetric pair's (eps, delta) at eps > 0 bound its total variation
    below the conversion's delta(0)), so there the pair is below the conversion: tighter, and
    still above a concrete rho-zCDP mechanism (the Gaussian with mu^2/2 = rho)."""
    rho = 0.1
    pts = profile_points(rho, 0.0)
    assert pts[0][0] == 0.0 and pts[-1][1] <= 1e-40
    for e, d in pts[::40]:
        assert cks(rho, 0, e) <= d <= cks(rho, 0, e) * (1 + 1e-10)
    e = np.array([p[0] for p in pts])
    d = np.array([p[1] for p in pts])
    assert np.all(np.diff(d) <= 0)
    prv, mu = zcdp_prv(rho, 0.0), math.sqrt(2 * rho)
    for i in range(0, len(pts) - 1, 25):
        mid = 0.5 * (e[i] + e[i + 1])
        got, exact = prv.delta(mid), float(cks(rho, 0, mid))
        assert got <= d[i] + (d[i + 1] - d[i]) * math.expm1(mid - e[i]) / math.expm1(e[i + 1] - e[i]) + 1e-15
        assert got >= ref.gaussian_delta(mu, mid)
        if mid > 0.15:  # where every point binds
            assert exact <= got <= exact * (1 + 2e-3) + 1e-300
    assert ref.gaussian_delta(mu, 0.0) <= prv.delta(0.0) < float(cks(rho, 0, 0.0))


@pytest.mark.parametrize("rho,xi,eps", [(0.1, 0.0, 0.5), (0.1, 0.0, 1.3), (0.1, 0.0, 2.7), (0.5, 0.2, 1.0),
                                        (0.5, 0.2, 4.0), (0.01, 0.0, 0.4)])
def test_one_run_brackets_the_exact_conversion(rho, xi, eps):
    b = Accountant([Row(ZCDP(rho, xi), 1)]).delta(eps)
    exact = float(cks(rho, xi, eps))
    assert b.lower <= exact <= b.upper
    assert b.upper <= float(cks(rho, xi, eps - 0.02))  # the certificate's width, no more


@pytest.mark.parametrize("rho,delta", [(0.1, 1e-6), (0.02, 1e-9), (1.0, 1e-5)])
def test_one_run_epsilon_brackets_the_exact_conversion(rho, delta):
    b = Accountant([Row(ZCDP(rho), 1)], 0.01).epsilon(delta)
    assert b.lower <= cks_epsilon(rho, 0, delta) <= b.upper


@pytest.mark.parametrize("rho,k,delta", [(0.1, 2, 1e-6), (0.05, 10, 1e-6), (0.01, 50, 1e-8), (0.5, 3, 1e-5)])
def test_composition_is_never_below_concrete_rho_zcdp_mechanisms(rho, k, delta):
    """The pair's composition and the k rho conversion are both upper bounds: each is above
    the exact composition of the Gaussian with mu^2/2 = rho and of randomized response at
    sqrt(2 rho), and the certified number (the smaller) is within the RDP grid's slack of the
    conversion of k rho."""
    rows = [Row(ZCDP(rho), k)]
    b = Accountant(rows, 0.01).epsilon(delta)
    gauss = ref.gaussian_epsilon(math.sqrt(2 * rho * k), delta)
    rr = ref.rr_kfold_epsilon(math.sqrt(2 * rho), k, delta)
    conv = cks_epsilon(k * rho, 0, delta)
    for lower_ref in (gauss, rr):
        assert lower_ref <= b.upper and lower_ref <= conv
    best = best_upper(b.upper, compare_epsilon(rows, delta))
    assert max(gauss, rr) <= best.value <= min(b.upper, conv * 1.01)


def test_xi_beside_rho_against_randomized_response_and_a_gaussian():
    """(xi, rho)-zCDP holds for RR(xi) released beside a Gaussian with mu^2/2 = rho; k of them:
    Y = xi (2 J - k) + N(k mu^2 / 2, k mu^2), J ~ Bin(k, e^xi / (1 + e^xi)), so
    delta(e) = sum_j P(J = j) delta_Gauss(mu sqrt(k), e - xi (2 j - k)) exactly."""
    rho, xi, k = 0.05, 0.1, 4
    mu, p = math.sqrt(2 * rho * k), 1 / (1 + math.exp(-xi))
    acc = Accountant([Row(ZCDP(rho, xi), k)], 0.01)
    for e in (0.5, 1.5, 2.5):
        exact = math.fsum(math.comb(k, j) * p ** j * (1 - p) ** (k - j)
                          * ref.gaussian_delta(mu, e - xi * (2 * j - k)) for j in range(k + 1))
        assert exact <= acc.delta(e).upper


def test_the_gaussian_with_the_same_rho_does_not_dominate():
    """Randomized response at sqrt(2 rho) is rho-zCDP (its Renyi divergence, in mpmath, is at most
    rho a) yet its delta(0) exceeds the Gaussian's with mu^2/2 = rho; the zcdp pair covers both."""
    rho = 0.5
    e0 = mp.sqrt(2 * mp.mpf(rho))
    p = 1 / (1 + mp.exp(-e0))
    for a in (1.5, 2, 5, 20, 100):
        a = mp.mpf(a)
        d = mp.log(p ** a * (1 - p) ** (1 - a) + (1 - p) ** a * p ** (1 - a)) / (a - 1)
        assert d <= rho * a
    rr0, g0 = float(mp.tanh(e0 / 2)), ref.gaussian_delta(float(e0), 0.0)
    assert rr0 > g0 + 0.05
    assert zcdp_prv(rho, 0.0).delta(0.0) >= rr0


def test_relations_groups_and_the_attack_pair():
    m = ZCDP(0.1)
    assert m.under(Relation("replace_one")) == m
    assert m.under(Relation("add_remove", 3)).rho == pytest.approx(0.9, rel=1e-15)  # k^2 rho (Bun, Steinke)
    with pytest.raises(ValueError, match="group"):
        ZCDP(0.1, 0.2).under(Relation("add_remove", 2))
    with pytest.raises(ValueError, match="group"):
        Accountant([Row(ZCDP(0.1, 0.2), 1)], group_size=2)
    attack = m.attack_pair(Relation("add_remove", 2))
    assert isinstance(attack, Gaussian) and attack.mu ** 2 / 2 == pytest.approx(0.4)
    assert not m.tight and m.orders() == ("remove",) and m.poisson_counterpart() is None
    assert np.allclose(ZCDP(0.1, 0.3).rdp(np.array([2.0, 10.0])), [0.5, 1.3])


def test_the_prv_is_a_symmetric_pair_with_its_mass():
    prv = zcdp_prv(0.3, 0.1)
    total = math.fsum(m for _, m in prv.atoms) + prv.inf_mass
    assert total == pytest.approx(1.0, abs=1e-13) and 0 < prv.inf_mass <= 1e-40
    assert math.fsum(m * math.exp(-y) for y, m in prv.atoms) == pytest.approx(1 - prv.inf_mass, abs=1e-13)
    assert prv.mean == pytest.approx(math.fsum(y * m for y, m in prv.atoms), rel=1e-12)


@pytest.mark.parametrize("rho,xi", [(1e-14, 0.0), (100.0, 0.0), (1e4, 0.0), (0.1, 100.0)])
def test_extreme_parameters_never_fail_open(rho, xi):
    """A tiny rho is accounted as 1e-12 (weaker, so valid); a huge one may come out as not
    private at all (the profile is cut at eps = 700): never a number below the truth."""
    b = Accountant([Row(ZCDP(rho, xi), 1)]).epsilon(1e-6)
    assert b.upper >= min(cks_epsilon(max(rho, 1e-12), xi, 1e-6), 700.0) - 1e-9


@pytest.mark.parametrize("params,text", [({"rho": 0.0}, "ρ must be greater than 0 and at most 10000; you typed 0"),
                                         ({"rho": -1.0}, "ρ must be greater than 0 and at most 10000; you typed -1"),
                                         ({"rho": math.inf}, "ρ must be .*; you typed inf"),
                                         ({"rho": math.nan}, "ρ must be a number .*; you typed nan"),
                                         ({"rho": "0.1"}, "ρ must be a number .*not text"),
                                         ({"rho": True}, "ρ must be a number .*; you typed true"),
                                         ({"rho": 1e5}, "ρ must be greater than 0 and at most 10000"),
                                         ({"rho": 0.1, "xi": -0.1}, "ξ must be at least 0; you typed -0.1"),
                                         ({"rho": 0.1, "xi": math.nan}, "ξ must be a number"),
                                         ({"xi": 0.1}, "ρ must be a number .*it is missing")])
def test_bad_parameters_are_refused_in_words(params, text):
    with pytest.raises(ValueError, match=text):
        ZCDP.from_params(params)


def test_files_name_the_bad_field():
    good = dumps(Document([RowSpec("zcdp", {"rho": 0.1, "xi": 0.2}, 3, "")]))
    assert loads_composition(good).rows[0].params == {"rho": 0.1, "xi": 0.2}
    with pytest.raises(FileFormatError, match=r"row 1 \(.*\), rho: ρ must be"):
        loads_composition(good.replace('"rho": 0.1', '"rho": -0.1'))
    with pytest.raises(FileFormatError, match="version 1"):
        loads_composition(good.replace('"version": 2', '"version": 1'))
