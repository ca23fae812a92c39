"""One contract, every kind: each kind's example instances (``Mechanism.example_instances``: a new
row's parameters and the corners its module lists in ``examples``), under every relation it
supports, in both orders of its pair. A kind added as a module is checked here without a line of
test code. In the style of scipy.stats' distribution tests: each check is a property any PRV must
have, computed independently of the engine where it can be (quadrature of the PRV's own tails)."""
import math
import pickle

import numpy as np
import pytest
from scipy import integrate

from prvgui.accounting import Accountant, Row
from prvgui.accounting.core.values import Relation
from prvgui.accounting.mechanisms import MECHANISM_KINDS
from prvgui.accounting.numerics.discretize import discretize

RELATIONS = (Relation("add_remove"), Relation("replace_one"), Relation("add_remove", 2))


def _supported(mech):
    out = []
    for rel in RELATIONS:
        try:
            mech.check_relation(rel)
        except ValueError:
            continue
        out.append(rel)
    return out


CASES = [(m, rel) for cls in MECHANISM_KINDS.values() for m in cls.example_instances() for rel in _supported(m)]
PAIRS = [(m, rel, o) for m, rel in CASES for o in m.orders(rel)]


def _id(case) -> str:
    return "-".join(str(c) if not hasattr(c, "kind") else f"{c.kind}{tuple(c.params().values())}"
                    if hasattr(c, "params") else repr(c) for c in case)


def test_every_kind_has_examples_under_a_relation():
    kinds = {m.kind for m, _ in CASES}
    assert kinds == set(MECHANISM_KINDS)
    assert all(len(cls.example_instances()) >= 2 for cls in MECHANISM_KINDS.values())


@pytest.mark.parametrize("mech, rel, order", PAIRS, ids=[repr(p) for p in range(len(PAIRS))])
def test_the_pair_is_a_probability_distribution(mech, rel, order):
    prv = mech.prv(order, rel)
    total = prv.inf_mass + sum(m for _, m in prv.atoms) + (prv.cont.mass if prv.cont else 0.0)
    assert abs(total - 1) < 1e-12
    assert all(m >= 0 for _, m in prv.atoms) and prv.inf_mass >= 0
    if prv.cont is not None:
        c = prv.cont
        lo, hi = c.lower_cut(1e-12), c.upper_cut(1e-12)
        t = np.linspace(lo, hi, 201)
        assert np.allclose(c.cdf(t) + c.sf(t), c.mass, rtol=0, atol=1e-12)
        assert np.all(np.diff(c.cdf(t)) >= -1e-15) and np.all(np.diff(c.sf(t)) <= 1e-15)


@pytest.mark.parametrize("mech, rel, order", PAIRS, ids=[repr(p) for p in range(len(PAIRS))])
def test_the_loss_bounds_hold_the_pairs_own(mech, rel, order):
    """Mechanism.loss_bounds, which an estimate of many rows reads instead of their PRVs: at most
    the PRV's mass at +infinity, at least its largest loss."""
    spent, top = mech.under(rel).loss_bounds(order)
    prv = mech.prv(order, rel)
    assert 0.0 <= spent <= prv.inf_mass and top >= prv.max_loss


@pytest.mark.parametrize("mech, rel, order", PAIRS, ids=[repr(p) for p in range(len(PAIRS))])
def test_the_likelihood_ratio_of_the_pair_integrates_to_at_most_one(mech, rel, order):
    """E_P[e^{-Y}; Y finite] = Q(dP/dQ > 0) <= 1, on a fine discretisation (values moved by at
    most h / 2: e^{-Y} by a factor e^{h / 2})."""
    prv = mech.prv(order, rel)
    if prv.finite_mass == 0:
        return
    h = 1e-3
    d = discretize(prv, h, 1e-15)
    with np.errstate(over="ignore"):
        val = float(np.sum(d.pmf * np.exp(-d.values))) * prv.finite_mass
    assert val <= math.exp(h) * (1 + 1e-9)


@pytest.mark.parametrize("mech, rel", CASES, ids=[repr(p) for p in range(len(CASES))])
def test_one_step_brackets_the_delta_of_its_own_prv(mech, rel):
    """delta(eps) = P(Y = inf) + sum over atoms above eps of m (1 - e^(eps - y)) + int_eps^inf
    e^(eps - y) sf(y) dy (integration by parts), by quadrature of the PRV's own tails: inside the
    accountant's bracket for one step, the larger over the orders."""
    acc = Accountant([Row(mech, 1)], 1e-3, rel, closed_forms=False)
    for eps in (0.05, 0.5, 2.0):
        ref = 0.0
        for order in mech.orders(rel):
            prv = mech.prv(order, rel)
            d = prv.inf_mass + sum(m * -math.expm1(eps - y) for y, m in prv.atoms if y > eps)
            if prv.cont is not None and prv.cont.mass > 0:
                c = prv.cont
                top = c.upper_cut(1e-17)
                if top > eps:
                    d += integrate.quad(lambda y: math.exp(eps - y) * float(c.sf(np.array([y]))[0]),
                                        max(eps, c.lo), top, limit=500, epsabs=1e-13, epsrel=1e-9)[0]
            ref = max(ref, d)
        got = acc.delta(eps)
        assert got.lower - 1e-9 <= ref <= got.upper + 1e-9, (eps, ref, got)


@pytest.mark.parametrize("mech, rel", CASES, ids=[repr(p) for p in range(len(CASES))])
def test_instances_are_values(mech, rel):
    back = pickle.loads(pickle.dumps(mech))
    assert back == mech and hash(back) == hash(mech)
    assert mech.under(rel) == mech.under(rel)
