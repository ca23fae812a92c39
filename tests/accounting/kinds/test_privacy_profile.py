"""A mechanism known only through (epsilon, delta) points, against independent references.

* The Gaussian mechanism's exact privacy profile (Balle, Wang 2018), in mpmath (40 digits):
  every point sampled from it (delta rounded up) is a valid guarantee of the Gaussian, so the
  composed profile pair is never below the Gaussian's exact composed epsilon (mu sqrt(k)-GDP), and
  it approaches it as the points get denser.
* One point (eps, delta): the (eps, delta)-DP pair (the approx_dp kind, and Kairouz-Oh-Viswanath's
  closed form for its compositions).
* The profile pair's own exact composition, by enumerating its atoms in mpmath.
"""
import itertools
import json
import math

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prvgui.accounting import Accountant, Row
from prvgui.accounting.kinds.approx_dp import ApproxDP
from prvgui.accounting.core.values import Relation
from prvgui.accounting.kinds.privacy_profile import PrivacyProfile
from prvgui.accounting.pairs.profile_pair import implied_points
from prvgui.accounting.core.validate import NumberError
from prvgui.document.fileio import FileFormatError, loads_composition

import references as ref

mp.mp.dps = 40


def gauss_delta(mu, eps):
    """Balle-Wang: Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2), in mpmath."""
    mu, eps = mp.mpf(mu), mp.mpf(eps)
    return mp.ncdf(-eps / mu + mu / 2) - mp.exp(eps) * mp.ncdf(-eps / mu - mu / 2)


def gauss_epsilon(mu, delta):
    lo, hi = mp.mpf(0), mp.mpf(1)
    while gauss_delta(mu, hi) > delta:
        hi *= 2
    for _ in range(80):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if gauss_delta(mu, mid) > delta else (lo, mid)
    return float(lo)  # the float at or below the exact value


def up(x):
    """A float at or above the mpmath value x."""
    f = float(x)
    return f if mp.mpf(f) >= x else math.nextafter(f, math.inf)


def gaussian_points(mu, n, top=6.0):
    return tuple((float(e), min(1.0, up(gauss_delta(mu, float(e))))) for e in np.linspace(0.0, top, n))


def test_sampled_gaussian_profiles_bound_the_gaussian_and_approach_it():
    mu, k, delta = 1.0, 10, 1e-5
    exact = gauss_epsilon(mu * math.sqrt(k), delta)
    assert exact == pytest.approx(ref.gaussian_epsilon(mu * math.sqrt(k), delta), rel=1e-9)
    uppers = []
    for n in (8, 32, 128, 512):
        b = Accountant([Row(PrivacyProfile(gaussian_points(mu, n)), k)], eps_error=0.01).epsilon(delta)
        assert b.upper >= exact, (n, b, exact)
        uppers.append(b.upper)
    assert uppers == sorted(uppers, reverse=True)  # denser points: never looser
    assert uppers[0] - exact > 1.0 and uppers[-1] - exact < 0.02


def test_one_point_is_the_approximate_dp_pair():
    for eps0, d0 in ((1.0, 1e-6), (0.1, 0.0), (3.0, 0.2)):
        mine, theirs = PrivacyProfile(((eps0, d0),)), ApproxDP(eps0, d0)
        for e in (0.0, 0.05, 0.5, 0.99 * eps0, 2 * eps0):
            assert mine.prv().delta(e) == pytest.approx(theirs.prv().delta(e), rel=1e-12, abs=1e-15)
        for k in (1, 20):
            target = 1 - (1 - d0) ** k + 1e-3
            b = Accountant([Row(mine, k)], eps_error=0.01).epsilon(target)
            exact = ref.rr_kfold_epsilon(eps0, k, target, d0)
            assert b.lower - 1e-9 <= exact <= b.upper + 1e-9, (eps0, d0, k, b, exact)
    # a group of 2 records: the approximate-DP group rule applied to the point
    g = PrivacyProfile(((1.0, 1e-6),)).under(Relation("add_remove", 2))
    assert g.points[0] == ApproxDP(1.0, 1e-6).under(Relation("add_remove", 2)).eps_delta()


def exact_composed_delta(prv, k, eps):
    """E[(1 - e^{eps - S})_+] for S the sum of k draws of the discrete privacy loss, in mpmath."""
    atoms = [(mp.mpf(y), mp.mpf(m)) for y, m in prv.atoms]
    total = mp.mpf(0)
    for t in itertools.product(atoms, repeat=k):
        s = mp.fsum(y for y, _ in t)
        if s > eps:
            total += mp.fprod(m for _, m in t) * (1 - mp.exp(eps - s))
    fin = 1 - mp.mpf(prv.inf_mass)
    return 1 - fin ** k + total  # the masses of the finite part already carry the factor


@pytest.mark.parametrize("points", [
    ((0.5, 1e-3), (1.0, 1e-5), (2.0, 1e-8)),
    ((0.0, 0.3), (0.7, 0.05), (1.5, 0.0)),
    ((2.0, 1e-8), (0.5, 0.1), (1.0, 0.2), (0.5, 0.01)),  # any order; some points implied by others
])
@pytest.mark.parametrize("k", [1, 2, 4])
def test_the_bracket_holds_the_exact_composition_of_the_profile_pair(points, k):
    m = PrivacyProfile(points)
    prv = m.prv()
    acc = Accountant([Row(m, k)], eps_error=0.01)
    for eps in (0.0, 0.3, 1.7):
        want = float(exact_composed_delta(prv, k, eps))
        b = acc.delta(eps)
        assert b.lower - 1e-12 <= want <= b.upper + 1e-12, (eps, b, want)
    # and one run satisfies every point it was given
    for e, d in points:
        assert prv.delta(e) <= d + 1e-15


def test_any_list_of_valid_points_is_accepted_and_only_implied_points_are_dropped():
    messy = ((2.0, 1e-8), (0.5, 0.1), (1.0, 0.2), (0.5, 0.01), (3.0, 1.0), (800.0, 1e-9))
    assert implied_points(messy) == ((0.5, 0.01), (2.0, 1e-8))
    assert PrivacyProfile(messy).prv() == PrivacyProfile(((0.5, 0.01), (2.0, 1e-8))).prv()
    # dropping a point never makes the pair more private
    loose = PrivacyProfile(((0.5, 0.01),)).prv()
    for e in (0.0, 0.5, 1.0, 2.0):
        assert loose.delta(e) >= PrivacyProfile(messy).prv().delta(e) - 1e-15


def test_vacuous_points_mean_no_privacy_without_an_error():
    m = PrivacyProfile(((1.0, 1.0), (5.0, 1.0)))
    assert m.is_blatant() and m.eps_delta() == (0.0, 1.0)
    assert math.isinf(Accountant([Row(m, 3)]).epsilon(1e-5).upper)
    comp = loads_composition(json.dumps({"format": "prvgui.composition", "version": 2, "mechanisms": [
        {"kind": "privacy_profile", "points": [[1, 1], [2, 1]]}]}))
    assert comp.rows[0].params["points"] == ((1.0, 1.0), (2.0, 1.0))


@pytest.mark.parametrize("points,message", [
    ([], "Profile points must be a list of [ε, δ] pairs; the list is empty"),
    ([[1, 0.1, 3]], 'Profile points must be a list of [ε, δ] pairs (two numbers each); entry 1: the file has '
                    '"[1, 0.1, 3]"'),
    ([[-1, 0.1]], "Profile points must be a list of [ε, δ] pairs with ε a finite number at least 0; "
                  "entry 1: the file has -1"),
    ([[1, 0.1], [2, 1.5]], "Profile points must be a list of [ε, δ] pairs with δ between 0 and 1; "
                           "entry 2: the file has 1.5"),
    ([[1, 0.1], ["1e400", 0]],
     "Profile points must be a list of [ε, δ] pairs with ε a finite number at least 0; entry 2: the file "
     "has 1e400"),
    ("abc", 'Profile points must be a list of [ε, δ] pairs; the file has "abc"'),
    ([[1, "x"]], 'Profile points must be a list of [ε, δ] pairs with δ between 0 and 1; entry 1: the file '
                 'has "x"'),
])
def test_bad_points_in_a_file_are_named(points, message):
    text = json.dumps({"format": "prvgui.composition", "version": 2,
                       "mechanisms": [{"kind": "privacy_profile", "points": points}]})
    text = text.replace('"1e400"', "1e400")
    with pytest.raises(FileFormatError) as err:
        loads_composition(text)
    assert str(err.value) == f"row 1 (Privacy profile (ε, δ points)), points: {message}"


def test_too_many_points_and_version_one():
    with pytest.raises(NumberError, match="at most 10,000 \\[ε, δ\\] pairs; it has 10,001"):
        PrivacyProfile(tuple((i * 1e-3, 0.5) for i in range(10_001)))
    v1 = json.dumps({"format": "prvgui.composition", "version": 1, "mechanisms": [
        {"kind": "privacy_profile", "points": [[1, 1e-5]]}]})
    with pytest.raises(FileFormatError, match="'privacy_profile' is not part of version 1 files"):
        loads_composition(v1)


@pytest.mark.slow
def test_ten_thousand_points_are_composed():
    pts = gaussian_points(0.5, 10_000, top=8.0)
    b = Accountant([Row(PrivacyProfile(pts), 100)], eps_error=0.05).epsilon(1e-6)
    exact = gauss_epsilon(5.0, 1e-6)
    assert exact <= b.upper <= exact + 0.15


@settings(max_examples=20, deadline=None)
@given(st.lists(st.tuples(st.floats(0.0, 3.0), st.floats(0.0, 0.5)), min_size=1, max_size=4),
       st.integers(1, 3), st.floats(0.0, 2.0))
def test_property_any_points_give_a_pair_that_satisfies_them_and_a_bracket_that_holds(points, k, eps):
    m = PrivacyProfile(tuple(points))
    prv = m.prv()
    for e, d in points:
        assert prv.delta(e) <= d + 1e-12
    want = float(exact_composed_delta(prv, k, eps))
    b = Accountant([Row(m, k)], eps_error=0.05).delta(eps)
    assert b.lower - 1e-12 <= want <= b.upper + 1e-12, (points, k, eps, b, want)
