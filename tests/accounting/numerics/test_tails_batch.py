"""Many rows' tail scans made together (tails_batch.py) are each row's own discretize.Tails,
point for point and bit for bit, and a kind's family (Continuous.family) gives its rows' own
cdf and sf values bit for bit: a streamed row discretised again alone must have the cells the
certificate was given."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prvgui.accounting import Accountant, Row, SubsampledGaussian
from prvgui.accounting.kinds.subsampled_gaussian import subsampled_gaussian_prv
from prvgui.accounting.numerics import pipeline
from prvgui.accounting.numerics.discretize import Tails, discretize_cells
from prvgui.accounting.numerics.tails_batch import tails_many


def _bits(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a, dtype=float).view(np.uint64)


def _sg(rng, n: int, order: str) -> list:
    sigmas = np.exp(rng.uniform(np.log(0.2), np.log(50.0), n))
    qs = np.exp(rng.uniform(np.log(1e-5), np.log(0.9), n))
    return [subsampled_gaussian_prv(float(s), float(q), order).cont for s, q in zip(sigmas, qs)]


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10 ** 9), order=st.sampled_from(["remove", "add"]))
def test_a_family_gives_each_rows_own_values(seed, order):
    """Points sorted, reversed and shuffled (l0_of_t's two paths), beyond both ends of the
    support, near 1 (its branch point), each against the row's own cdf and sf."""
    rng = np.random.default_rng(seed)
    conts = _sg(rng, 8, order)
    family = conts[0].family[0]
    for c in conts:
        t = np.concatenate([np.sort(rng.uniform(-3, 30, 40)), 1.0 + rng.normal(0, 1e-3, 8),
                            [c.lo - 1.0 if np.isfinite(c.lo) else -50.0, c.hi + 1.0 if np.isfinite(c.hi) else 50.0]])
        for pts in (t, t[::-1].copy(), rng.permutation(t), np.sort(t)):
            params = tuple(np.full(pts.size, v) for v in c.family[1])
            for which, own in (("cdf", c.cdf), ("sf", c.sf)):
                assert np.array_equal(_bits(family(which, pts, params)), _bits(own(pts))), (which, order)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10 ** 9), n=st.integers(1, 40), order=st.sampled_from(["remove", "add"]),
       log_h=st.floats(-7.0, -1.0), log_tau=st.floats(-40.0, -3.0))
def test_scans_together_are_each_rows_scan(seed, n, order, log_h, log_tau):
    rng = np.random.default_rng(seed)
    conts = _sg(rng, n, order)
    h = 10.0 ** log_h
    taus = (10.0 ** (log_tau + rng.uniform(-2, 2, n))).tolist()
    got = tails_many(conts, h, taus)
    for c, tau, t in zip(conts, taus, got):
        alone = Tails(c, h, tau)
        assert t is not None
        for a, b in ((t.left, alone.left), (t.right, alone.right)):
            assert np.array_equal(_bits(a[0]), _bits(b[0])) and np.array_equal(_bits(a[1]), _bits(b[1]))
        for a, b in zip(t._keys, alone._keys):
            assert np.array_equal(_bits(a), _bits(b))


def test_parts_without_a_family_are_left_alone():
    from prvgui.accounting.kinds.discrete_gaussian import DiscreteGaussian
    dg = DiscreteGaussian(10.0).prv("remove").cont
    sg = subsampled_gaussian_prv(1.0, 0.01, "remove").cont
    got = tails_many([dg, None, sg], 1e-3, [1e-12] * 3)
    assert got[0] is None and got[1] is None and isinstance(got[2], Tails)


@pytest.mark.parametrize("order", ["remove", "add"])
def test_a_row_discretised_from_the_batch_scan_is_the_row_discretised_alone(order):
    rng = np.random.default_rng(4)
    plan = pipeline.make_plan(0.01, 1.0, 1000, 1e-16, rows=1000)
    prvs = [subsampled_gaussian_prv(float(s), float(q), order)
            for s, q in zip(rng.uniform(0.5, 3.0, 20), rng.uniform(1e-3, 0.2, 20))]
    scans = tails_many([p.cont for p in prvs], plan.h, [plan.tau(p) for p in prvs])
    for prv, scan in zip(prvs, scans):
        a = discretize_cells(prv, plan.h, plan.tau(prv), 1 << 26, plan.coarse, None, plan.tiers, scan)
        b = discretize_cells(prv, plan.h, plan.tau(prv), 1 << 26, plan.coarse, None, plan.tiers)
        assert np.array_equal(a[1], b[1]) and np.array_equal(_bits(a[2]), _bits(b[2])) and a[3] == b[3]
        assert a[0].shift == b[0].shift and a[0].bias == b[0].bias and a[0].classes == b[0].classes


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10 ** 9), n=st.integers(1, 30), order=st.sampled_from(["remove", "add"]),
       plan_rows=st.sampled_from([1, 1000]))
def test_rows_discretised_together_are_each_rows_own(seed, n, order, plan_rows):
    """tails_batch.discretize_many (every row's cells_steps, the edges' values from two family
    calls) gives each row discretize_cells' answer alone: every field, index and mass, bit for
    bit; a row whose grid is too large is left to raise alone."""
    from dataclasses import fields

    from prvgui.accounting.numerics.tails_batch import discretize_many
    rng = np.random.default_rng(seed)
    plan = pipeline.make_plan(0.01, 1.0, 1000, 1e-16, rows=plan_rows)
    prvs = [subsampled_gaussian_prv(float(s), float(q), order)
            for s, q in zip(np.exp(rng.uniform(np.log(0.3), np.log(20.0), n)), np.exp(rng.uniform(np.log(1e-4), np.log(0.5), n)))]
    taus = [plan.tau(p) for p in prvs]
    scans = tails_many([p.cont for p in prvs], plan.h, taus)
    max_cells = int(rng.choice([1 << 26, 3000]))
    got = discretize_many(prvs, plan.h, taus, max_cells, plan.coarse, plan.tiers, scans)
    for prv, tau, g in zip(prvs, taus, got):
        try:
            want = discretize_cells(prv, plan.h, tau, max_cells, plan.coarse, None, plan.tiers)
        except Exception:
            assert g is None
            continue
        assert g is not None
        for f in fields(want[0]):
            a, b = getattr(g[0], f.name), getattr(want[0], f.name)
            assert (np.array_equal(a, b) if isinstance(a, np.ndarray) or isinstance(b, np.ndarray) else a == b), f.name
        assert np.array_equal(g[1], want[1]) and np.array_equal(_bits(g[2]), _bits(want[2])) and g[3] == want[3]


def test_rows_past_the_edge_budget_are_answered_in_turns(monkeypatch):
    """With a budget of a few thousand edge points the rows are evaluated a few at a time (one
    alone where its own edges pass it): the same answers, bit for bit."""
    from prvgui.accounting.numerics import tails_batch
    rng = np.random.default_rng(6)
    plan = pipeline.make_plan(0.01, 1.0, 1000, 1e-16, rows=1000)
    prvs = [subsampled_gaussian_prv(float(s), float(q), "add") for s, q in zip(rng.uniform(0.5, 3, 20), rng.uniform(1e-3, 0.3, 20))]
    taus = [plan.tau(p) for p in prvs]
    scans = tails_many([p.cont for p in prvs], plan.h, taus)
    calls = []
    family = prvs[0].cont.family[0]
    monkeypatch.setattr(tails_batch, "EDGE_POINTS", 3000)
    def counted(which, t, params):  # (one family for all rows, its calls counted)
        calls.append(t.size)
        return family(which, t, params)
    for p in prvs:
        object.__setattr__(p.cont, "family", (counted, p.cont.family[1]))
    got = tails_batch.discretize_many(prvs, plan.h, taus, 1 << 26, plan.coarse, plan.tiers, scans)
    assert len(calls) > 2 and max(calls) > 3000  # (several turns, each a pair of calls; a row alone past the budget)
    for prv, tau, g in zip(prvs, taus, got):
        want = discretize_cells(prv, plan.h, tau, 1 << 26, plan.coarse, None, plan.tiers)
        assert np.array_equal(g[1], want[1]) and np.array_equal(_bits(g[2]), _bits(want[2]))
        assert g[0].shift == want[0].shift and g[0].bias == want[0].bias


def test_an_accountant_answers_the_same_with_and_without_the_batch_scans(monkeypatch):
    rng = np.random.default_rng(8)
    rows = [Row(SubsampledGaussian(float(s), float(q)), 1)
            for s, q in zip(rng.uniform(0.8, 1.5, 300), rng.uniform(0.001, 0.01, 300))]
    together = Accountant(rows, 0.01).epsilon(1e-8)
    monkeypatch.setattr(pipeline, "tails_many", lambda conts, h, taus: [None] * len(conts))
    monkeypatch.setattr(pipeline, "family_cells", lambda prvs, *a: [None] * len(prvs))
    alone = Accountant(rows, 0.01).epsilon(1e-8)
    assert (together.lower, together.estimate, together.upper) == (alone.lower, alone.estimate, alone.upper)
