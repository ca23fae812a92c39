"""profile_pair: the least pair satisfying finitely many (eps, delta) points.

References: the implied tradeoff function f(a) = max_i max(0, 1 - delta_i - e^eps_i a,
e^-eps_i (1 - delta_i - a)) written out here, and the pair's own tradeoff curve computed by
Neyman-Pearson from its outcomes (P and Q masses rebuilt from the PRV's atoms: an atom y of
P-mass m is an outcome of Q-mass m e^-y; the mass at +infinity is P-only, the rest of Q is
Q-only); closed forms for the Gaussian's profile (Balle-Wang) and randomized response.
"""
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import references as ref
from prvgui.accounting import Accountant, ApproxDP, Row
from prvgui.accounting.kinds.approx_dp import approx_dp_prv
from prvgui.accounting.pairs.profile_pair import MAX_POINTS, check_points, profile_delta, profile_prv


def implied_tradeoff(points, alpha):
    f = np.zeros_like(alpha)
    for e, d in points:
        f = np.maximum(f, np.maximum(1 - d - math.exp(e) * alpha, math.exp(-e) * (1 - d - alpha)))
    return f


def pair_tradeoff(prv, alpha):
    """The pair's tradeoff function by Neyman-Pearson over its outcomes (likelihood ratio down)."""
    outs = [(math.inf, prv.inf_mass, 0.0)] + [(y, m, m * math.exp(-y)) for y, m in prv.atoms]
    q_only = 1.0 - sum(q for _, _, q in outs)
    outs.append((-math.inf, 0.0, max(q_only, 0.0)))
    outs.sort(key=lambda o: -o[0])
    qc = np.concatenate([[0.0], np.cumsum([o[2] for o in outs])])
    pc = np.concatenate([[0.0], np.cumsum([o[1] for o in outs])])
    return np.interp(alpha, qc, 1.0 - pc)


def chord(points, eps):
    """Linear interpolation in e^eps between the neighbouring points."""
    (e0, d0), (e1, d1) = max(p for p in points if p[0] <= eps), min(p for p in points if p[0] >= eps)
    if e1 == e0:
        return d0
    return d0 + (d1 - d0) * math.expm1(eps - e0) / math.expm1(e1 - e0)


GAUSS = [(float(e), ref.gaussian_delta(1.0, float(e))) for e in np.linspace(0, 6, 25)]
ALPHA = np.linspace(0, 1, 401)


@pytest.mark.parametrize("eps,delta", [(0.0, 0.0), (0.5, 0.0), (1.0, 1e-6), (0.3, 0.2), (0.0, 0.3),
                                       (4.0, 1e-12)])
def test_one_point_is_the_approximate_dp_pair(eps, delta):
    got, want = profile_prv([(eps, delta)]), approx_dp_prv(eps, delta)
    assert got.inf_mass == want.inf_mass
    merged = {}
    for y, m in want.atoms:
        merged[y] = merged.get(y, 0.0) + m
    assert len(got.atoms) == len(merged)
    for (y, m), (y2, m2) in zip(got.atoms, sorted(merged.items())):
        assert y == pytest.approx(y2, abs=1e-15) and y >= y2 and m == pytest.approx(m2, rel=1e-14)
    for e in (0.0, eps / 2, eps, eps + 1):
        assert got.delta(e) == pytest.approx(want.delta(e), rel=1e-12, abs=1e-15)


def test_delta_equals_the_points_and_the_chord_between_them():
    """Points of a true profile (the Gaussian's, mu = 1): delta at each eps_i is delta_i; between
    neighbours it is the chord, linear in e^eps, which is above the Gaussian's profile."""
    prv = profile_prv(GAUSS)
    for e, d in GAUSS:
        assert prv.delta(e) == pytest.approx(d, rel=1e-12, abs=1e-15)
    for e in np.linspace(0.01, 5.99, 57):
        c = chord(GAUSS, e)
        assert prv.delta(e) == pytest.approx(c, rel=1e-12, abs=1e-15)
        assert c >= ref.gaussian_delta(1.0, e) - 1e-15
    assert prv.inf_mass == GAUSS[-1][1]


def test_the_pair_has_exactly_the_implied_tradeoff_function():
    for points in (GAUSS, [(0.3, 0.5), (1.0, 0.1), (2.0, 1e-5)], [(0.0, 0.01), (2.0, 0.0)], [(1.0, 0.0)]):
        prv = profile_prv(points)
        assert np.allclose(pair_tradeoff(prv, ALPHA), implied_tradeoff(points, ALPHA), rtol=0, atol=1e-12)


def test_a_point_the_others_imply_is_not_binding():
    """(2, 0) means the loss is at most 2, so delta(1) <= 1 - e^-1 ... : randomized response at 2
    is the pair, and the given (1, 0.9) is loose."""
    prv = profile_prv([(1.0, 0.9), (2.0, 0.0)])
    rr = approx_dp_prv(2.0, 0.0)
    assert prv.delta(1.0) == pytest.approx(rr.delta(1.0), rel=1e-12) and prv.delta(1.0) < 0.9
    assert profile_prv([(1.0, 1.0)]).inf_mass == 1.0  # says nothing: not private


def test_composition_of_one_point_agrees_with_approx_dp():
    """The accountant on the pair's PRV and on the approx_dp kind: the same bracket (KOV exact)."""
    from prvgui.accounting.kinds.base import Mechanism

    class OnePoint(Mechanism):
        __slots__ = ()
        title = "one point"

        def _prv(self, order):
            return profile_prv([(0.5, 1e-4)])

    b = Accountant([Row(OnePoint(), 20)], closed_forms=False).epsilon(1e-2)
    assert b.lower <= ref.rr_kfold_epsilon(0.5, 20, 1e-2, 1e-4) <= b.upper < math.inf
    same = Accountant([Row(ApproxDP(0.5, 1e-4), 20)], closed_forms=False).epsilon(1e-2)
    assert abs(b.upper - same.upper) < 1e-9


@st.composite
def profiles(draw):
    n = draw(st.integers(1, 12))
    eps = sorted(set(draw(st.lists(st.floats(0, 20), min_size=n, max_size=n))))
    ds = sorted(draw(st.lists(st.one_of(st.floats(0, 1), st.floats(1e-300, 1e-5)),
                              min_size=len(eps), max_size=len(eps))), reverse=True)
    return list(zip(eps, ds))


@given(profiles())
def test_any_valid_points_give_a_pair_that_satisfies_them(points):
    prv = profile_prv(points)
    masses = [m for _, m in prv.atoms]
    assert all(m > 0 for m in masses)
    assert math.fsum(masses) + prv.inf_mass == pytest.approx(1.0, abs=1e-13)
    # the pair is symmetric: E[e^-Y] = Q(P > 0) = 1 - (Q's mass where P = 0) = 1 - delta_min
    assert math.fsum(m * math.exp(-y) for y, m in prv.atoms) == pytest.approx(1 - prv.inf_mass, abs=1e-13)
    for e, d in points:
        assert prv.delta(e) <= d + 1e-13
    assert np.all(pair_tradeoff(prv, ALPHA) >= implied_tradeoff(points, ALPHA) - 1e-12)
    assert np.all(pair_tradeoff(prv, ALPHA) <= implied_tradeoff(points, ALPHA) + 1e-12)


@pytest.mark.parametrize("bad,text", [
    ([], "at least one"), ("0.5,1e-5", "list of"), (None, "list of"), (3.0, "list of"),
    ([(0.5,)], r"points\[0\] must be a pair"), ([(0.5, 1e-5, 1)], "must be a pair"),
    (["ab"], "must be a pair"),
    ([(math.nan, 1e-5)], r"epsilon must be a number \(between 0 and 700\); you typed nan"),
    ([(1.0, math.inf)], "delta must be between 0 and 1; you typed inf"),
    ([(-0.1, 1e-5)], "epsilon must be between 0 and 700; you typed -0.1"),
    ([(0.1, 1.5)], "delta must be between 0 and 1; you typed 1.5"),
    ([(0.1, -1e-9)], "delta must be between 0 and 1"), ([("0.1", 1e-5)], "epsilon must be a number"),
    ([(True, 0.1)], "epsilon must be a number"), ([(1.0, 1e-6), (1.0, 1e-5)], "appears twice"),
    ([(0.5, 1e-6), (1.0, 1e-3)], "must not increase"), ([(1e3, 0.0)], "epsilon must be between 0 and 700"),
])
def test_bad_points_are_refused_in_words(bad, text):
    with pytest.raises(ValueError, match=text):
        profile_prv(bad)
    with pytest.raises(ValueError, match=text):
        check_points(bad)


def test_points_are_sorted_and_bounded_in_number():
    assert check_points(np.array([[1.0, 1e-6], [0.5, 1e-3]])) == ((0.5, 1e-3), (1.0, 1e-6))
    with pytest.raises(ValueError, match="at most"):
        check_points([(i * 1e-3, 0.0) for i in range(MAX_POINTS + 1)])
    assert profile_delta([(0.5, 1e-3)], 0.5) == pytest.approx(1e-3, rel=1e-12)
