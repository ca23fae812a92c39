"""A pair of distributions (p, q) over finitely many outcomes, against independent references.

* The exact k-fold composition, in mpmath (40 digits), by enumerating every tuple of outcomes:
  delta(eps) = sum over tuples of max(0, P(tuple) - e^eps Q(tuple)), for the order (P, Q) and the
  order (Q, P); the worst of the two (or the first only when the user states the pair is
  symmetric). epsilon(delta) is the smallest eps with that delta, by bisection in mpmath.
* Randomized response written as a pair: the randomized_response kind (KOV closed form).
* The exact Renyi divergence of the pair, in mpmath.
"""
import itertools
import json
import math

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import references as ref
from prvgui.accounting import Accountant, Row
from prvgui.accounting.queries.comparisons import compare_epsilon
from prvgui.accounting.core.values import Relation
from prvgui.accounting.kinds.pmf_pair import PmfPair
from prvgui.accounting.kinds.randomized_response import RandomizedResponse
from prvgui.accounting.core.validate import NumberError
from prvgui.document.fileio import FileFormatError, loads_composition

mp.mp.dps = 40


def exact_delta(p, q, k, eps, orders=("remove", "add")):
    """delta(eps) of the k-fold product of (p, q) (and of (q, p)), normalised as the kind does."""
    out = mp.mpf(0)
    for order in orders:
        a, b = (p, q) if order == "remove" else (q, p)
        sa, sb = mp.fsum(mp.mpf(x) for x in a), mp.fsum(mp.mpf(x) for x in b)
        pa = [mp.mpf(x) / sa for x in a]
        pb = [mp.mpf(x) / sb for x in b]
        e = mp.exp(mp.mpf(eps))
        total = mp.mpf(0)
        for t in itertools.product(range(len(a)), repeat=k):
            P = mp.fprod(pa[i] for i in t)
            Q = mp.fprod(pb[i] for i in t)
            if P > e * Q:
                total += P - e * Q
        out = max(out, total)
    return out


def exact_epsilon(p, q, k, delta, orders=("remove", "add")):
    if exact_delta(p, q, k, 0.0, orders) <= delta:
        return 0.0
    lo, hi = mp.mpf(0), mp.mpf(1)
    while exact_delta(p, q, k, hi, orders) > delta:
        hi *= 2
        if hi > 1e4:
            return math.inf
    for _ in range(50):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if exact_delta(p, q, k, mid, orders) > delta else (lo, mid)
    return float(hi)


PAIRS = [
    ((0.75, 0.25), (0.25, 0.75)),                      # randomized response, eps = log 3
    ((0.5, 0.375, 0.125), (0.25, 0.25, 0.5)),          # asymmetric: the two orders differ
    ((0.5, 0.3, 0.2), (0.6, 0.4, 0.0)),                # q_3 = 0 < p_3: mass 0.2 at +infinity
    ((0.7, 0.0, 0.2, 0.1), (0.4, 0.3, 0.2, 0.1)),      # p_2 = 0: no P-mass; under (Q, P): +infinity
]


@pytest.mark.parametrize("p,q", PAIRS)
@pytest.mark.parametrize("k", [1, 2, 3, 5])
def test_the_bracket_holds_the_exact_composition(p, q, k):
    acc = Accountant([Row(PmfPair(p, q), k)], eps_error=0.01)
    for eps in (0.0, 0.4, 1.3):
        b = acc.delta(eps)
        want = float(exact_delta(p, q, k, eps))
        assert b.lower - 1e-12 <= want <= b.upper + 1e-12, (eps, b, want)
    for delta in (1e-3, 0.35):
        want = exact_epsilon(p, q, k, delta)
        b = acc.epsilon(delta)
        if math.isinf(want):
            assert math.isinf(b.upper)
        else:
            assert b.lower - 1e-9 <= want <= b.upper + 1e-9, (delta, b, want)
            assert b.upper - b.lower <= 0.05


def test_randomized_response_as_a_pair_is_the_randomized_response_kind():
    eps0 = 0.8
    hi = 1 / (1 + math.exp(-eps0))
    pair = PmfPair((hi, 1 - hi), (1 - hi, hi))
    rr = RandomizedResponse(eps0)
    for order in ("remove", "add"):  # the same privacy loss, up to rounding (the pair's rounds up)
        got, want = pair.prv(order), rr.prv(order)
        assert got.inf_mass == 0 and len(got.atoms) == 2
        for (y, m), (y0, m0) in zip(got.atoms, sorted(want.atoms)):
            assert y0 <= y <= y0 + 1e-14 and m == pytest.approx(m0, rel=1e-14)
    for k in (1, 30, 1000):
        b = Accountant([Row(pair, k)], eps_error=0.01).epsilon(1e-6)
        exact = ref.rr_kfold_epsilon(eps0, k, 1e-6)
        assert b.lower - 1e-9 <= exact <= b.upper + 1e-9, (k, b, exact)
        assert b.upper - b.lower <= 0.03 + 2.5e-4 * exact


def test_both_orders_are_composed_unless_the_pair_is_stated_symmetric():
    p, q = PAIRS[1]
    both, one = PmfPair(p, q), PmfPair(p, q, symmetric="yes")
    assert both.orders() == ("remove", "add") and one.orders() == ("remove",)
    forward = float(exact_delta(p, q, 3, 0.3, ("remove",)))
    backward = float(exact_delta(q, p, 3, 0.3, ("remove",)))
    assert abs(backward - forward) > 0.02  # the orders differ here
    b_both, b_one = Accountant([Row(both, 3)]).delta(0.3), Accountant([Row(one, 3)]).delta(0.3)
    worst = max(forward, backward)
    assert b_both.lower - 1e-12 <= worst <= b_both.upper + 1e-12
    assert b_one.lower - 1e-12 <= forward <= b_one.upper + 1e-12
    # a file says so with "symmetric": "yes"
    comp = loads_composition(json.dumps({"format": "prvgui.composition", "version": 2, "mechanisms": [
        {"kind": "pmf_pair", "p": list(p), "q": list(q), "symmetric": "yes"}]}))
    assert comp.engine_rows()[0].mechanism == one


def test_outcomes_only_one_side_can_produce_are_infinite_losses():
    m = PmfPair((0.5, 0.3, 0.2), (0.6, 0.4, 0.0))
    assert m.prv("remove").inf_mass == pytest.approx(0.2, rel=1e-15)
    assert m.prv("add").inf_mass == 0  # q puts no mass where p is 0
    for k in (1, 4):  # delta never below the chance that some run shows the third outcome
        assert Accountant([Row(m, k)]).delta(50.0).lower >= 1 - 0.8 ** k - 1e-12
    assert m.eps_delta()[1] == pytest.approx(0.2, rel=1e-15)
    disjoint = PmfPair((1.0, 0.0), (0.0, 1.0))
    assert disjoint.is_blatant() and math.isinf(Accountant([Row(disjoint, 1)]).epsilon(0.5).upper)
    same = PmfPair((0.3, 0.7), (0.3, 0.7))
    assert same.is_trivial() and Accountant([Row(same, 10)]).epsilon(1e-6).upper == 0


@pytest.mark.parametrize("p,q", PAIRS)
def test_renyi_divergence_and_the_eps_delta_guarantee_are_exact_upper_bounds(p, q):
    m = PmfPair(p, q)
    orders = np.array([1.5, 2.0, 5.0, 32.0])
    got = m.rdp(orders)
    for a, g in zip(orders, got if got is not None else [None] * len(orders)):
        want = mp.mpf("-inf")
        for x, y in ((p, q), (q, p)):
            if any(xi > 0 and yi == 0 for xi, yi in zip(x, y)):
                want = mp.inf
                break
            s = mp.fsum(mp.mpf(xi) ** a * mp.mpf(yi) ** (1 - a) for xi, yi in zip(x, y) if xi > 0)
            want = max(want, mp.log(s) / (a - 1))
        if want == mp.inf:  # mass at +infinity: RDP does not describe the pair
            assert got is None
            break
        else:
            assert float(want) <= g <= float(want) * (1 + 1e-12) + 1e-13, (a, g, want)
    eps, delta = m.eps_delta()
    assert float(exact_delta(p, q, 1, eps)) <= delta + 1e-15  # a valid guarantee of one run
    rows = [Row(m, 3)]
    rdp = compare_epsilon(rows, 1e-3)["rdp"].value  # a bound: never below the certified lower bound
    assert rdp is not None and rdp >= Accountant(rows).epsilon(1e-3).lower - 1e-9


@settings(max_examples=20, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 20), st.integers(0, 20)), min_size=2, max_size=4),
       st.integers(1, 4), st.floats(0.0, 3.0))
def test_property_the_bracket_contains_the_exact_delta(weights, k, eps):
    wp, wq = [w for w, _ in weights], [w for _, w in weights]
    if sum(wp) == 0 or sum(wq) == 0:
        return
    p = tuple(w / sum(wp) for w in wp)
    q = tuple(w / sum(wq) for w in wq)
    if abs(math.fsum(p) - 1) > 1e-9 or abs(math.fsum(q) - 1) > 1e-9:
        return
    m = PmfPair(p, q)
    b = Accountant([Row(m, k)], eps_error=0.05).delta(eps)
    want = float(exact_delta(p, q, k, eps))
    assert b.lower - 1e-12 <= want <= b.upper + 1e-12, (p, q, k, eps, b, want)


def test_group_privacy_is_refused_and_both_relations_take_the_pair_as_given():
    m = PmfPair((0.75, 0.25), (0.25, 0.75))
    assert m.under(Relation("replace_one")) is m and m.under(Relation("add_remove")) is m
    with pytest.raises(ValueError, match="group privacy of a pair cannot be derived"):
        m.check_relation(Relation("add_remove", 2))
    text = json.dumps({"format": "prvgui.composition", "version": 2, "group_size": 3, "mechanisms": [
        {"kind": "pmf_pair", "p": [0.75, 0.25], "q": [0.25, 0.75]}]})
    with pytest.raises(FileFormatError, match=r"^row 1 \(Pair of distributions \(p, q\)\), kind: "):
        loads_composition(text)


@pytest.mark.parametrize("p,q,field,message", [
    ([0.5, 0.6], [0.5, 0.5], "p", "Probabilities p must sum to 1 (within 1e-9); they sum to 1.1"),
    ([0.5, 0.5], [0.5, 0.25, 0.25], "q",
     "Probabilities q must be a list of as many probabilities as p (2); it has 3"),
    ([0.5, -0.5, 1.0], [0.5, 0.5, 0], "p",
     "Probabilities p must be a list of probabilities (between 0 and 1); entry 2: the file has -0.5"),
    ([], [1.0], "p", "Probabilities p must be a list of probabilities (between 0 and 1); the list is empty"),
    (0.5, [1.0], "p", "Probabilities p must be a list of probabilities (between 0 and 1); the file has 0.5"),
    ([1.0], ["1"], "q", 'Probabilities q must be a list of probabilities (between 0 and 1); entry 1: '
                        'the file has "1"'),
    ([1.0], [1.0], None, None),
])
def test_bad_vectors_in_a_file_are_named(p, q, field, message):
    text = json.dumps({"format": "prvgui.composition", "version": 2,
                       "mechanisms": [{"kind": "pmf_pair", "p": p, "q": q}]})
    if message is None:
        assert loads_composition(text).rows[0].params["p"] == (1.0,)
        return
    with pytest.raises(FileFormatError) as err:
        loads_composition(text)
    assert str(err.value) == f"row 1 (Pair of distributions (p, q)), {field}: {message}"


def test_limits_and_versions():
    n = 100_001
    with pytest.raises(NumberError, match="at most 100,000 probabilities; it has 100,001"):
        PmfPair((1.0 / n,) * n, (1.0 / n,) * n)
    n = 100_000
    uniform = (1.0 / n,) * n
    tilted = tuple(2.0 * (i + 0.5) / n / n for i in range(n))
    assert PmfPair(uniform, tilted).eps_delta()[0] == pytest.approx(math.log(n / 1.0), rel=1e-6)
    v1 = json.dumps({"format": "prvgui.composition", "version": 1, "mechanisms": [
        {"kind": "pmf_pair", "p": [1.0], "q": [1.0]}]})
    with pytest.raises(FileFormatError, match="'pmf_pair' is not part of version 1 files"):
        loads_composition(v1)
    with pytest.raises(FileFormatError, match="1e400"):
        loads_composition(v1.replace('"version": 1', '"version": 2')
                          .replace('[1.0], "q"', '[1e400], "q"'))


def test_lists_are_never_searched_by_calibration():
    from prvgui.accounting.queries.calibrate import parameters_for
    assert parameters_for("pmf_pair") == ["count"] and parameters_for("privacy_profile") == ["count"]
