"""Many rows streamed (pipeline.discretize_many): past STREAM_BYTES of cells every row is held as
a packed.LazyRow and made again when its group takes it. The rows made again are the rows
(bit for bit), a row that came out otherwise is refused, and the brackets still hold the
closed form."""
import dataclasses
import math

import numpy as np
import pytest

import references as ref
from prvgui.accounting import Accountant, Gaussian, Laplace, Row, SubsampledGaussian
from prvgui.accounting.kinds.discrete_gaussian import DiscreteGaussian
from prvgui.accounting.numerics import pipeline, reuse, tree
from prvgui.accounting.numerics.packed import LazyRow, cells, dense, stub
from prvgui.accounting.numerics.window import cgf_blocks


def _mechs(n: int, seed: int = 3) -> list:
    rng = np.random.default_rng(seed)
    kinds = [lambda: DiscreteGaussian(float(rng.uniform(20.0, 80.0))),
             lambda: SubsampledGaussian(float(rng.uniform(0.8, 1.5)), float(rng.uniform(0.001, 0.01))),
             lambda: Laplace(float(rng.uniform(20.0, 60.0))),
             lambda: Gaussian(float(rng.uniform(20.0, 60.0)))]
    return [kinds[i % len(kinds)]() for i in range(n)]


def _discretized(mechs, stream_bytes, counts=None):
    prvs = [(m.prv("remove"), 1 if counts is None else counts[i]) for i, m in enumerate(mechs)]
    plan = pipeline.make_plan(0.01, 1.0, sum(k for _, k in prvs), 1e-16, len(prvs))
    return plan, prvs, pipeline.discretize_many(prvs, plan, 1 << 24, stream_bytes=stream_bytes)


def _same(x, y) -> bool:
    return np.array_equal(x, y) if isinstance(x, np.ndarray) or isinstance(y, np.ndarray) else x == y


def test_streamed_rows_are_made_again_bit_for_bit():
    mechs = _mechs(tree.TREE_ALWAYS + 8)
    _, _, eager = _discretized(mechs, 1 << 40)
    _, _, lazy = _discretized(mechs, 0)
    assert not any(isinstance(d, LazyRow) for d, _ in eager)
    assert all(isinstance(d, LazyRow) for d, _ in lazy)
    for (a, _), (b, _) in zip(eager, lazy):
        assert cells(a) == cells(b)
        da, db = dense(a), dense(b)
        assert np.array_equal(da.pmf, db.pmf)
        assert all(_same(getattr(da, f.name), getattr(db, f.name)) for f in dataclasses.fields(da))
        # the certificate's fields (without the tails' cell indices, which only the band path reads)
        sa, sb = stub(a), stub(b)
        assert all(_same(getattr(sa, f.name), getattr(sb, f.name))
                   for f in dataclasses.fields(sa) if f.name not in ("pmf", "sparse"))
        assert sb.sparse is None
        want = cgf_blocks(da, pipeline.LAZY_BLOCKS)
        assert np.allclose(b.blocks[0], want[0], rtol=0, atol=1e-12) and b.blocks[2] == want[2]
        assert np.allclose(b.blocks[1], want[1], rtol=0, atol=1e-12 * np.abs(want[1]).max())


def test_streaming_starts_once_the_cells_pass_the_budget():
    mechs = _mechs(tree.TREE_ALWAYS + 8)
    _, _, eager = _discretized(mechs, 1 << 40)
    sizes = [pipeline.row_bytes(d) for d, _ in eager]
    assert all(s > 0 for s in sizes)
    # the budget passed at row 100: every row is streamed, those before it too
    _, _, rows = _discretized(mechs, sum(sizes[:100]))
    assert all(isinstance(d, LazyRow) for d, _ in rows)
    # never passed: none is
    _, _, rows = _discretized(mechs, 2 * sum(sizes))
    assert not any(isinstance(d, LazyRow) for d, _ in rows)
    # projected past it from STREAM_SAMPLE rows on: every row is streamed although the budget
    # itself (at or above the rows' total) is never passed
    held = np.cumsum(sizes)
    i = np.arange(len(sizes))
    projected = float(np.max((held * len(sizes) / (i + 1))[pipeline.STREAM_SAMPLE - 1:]))
    assert projected > sum(sizes)
    _, _, rows = _discretized(mechs, int(0.5 * (sum(sizes) + projected)))
    assert all(isinstance(d, LazyRow) for d, _ in rows)
    # rows drawn so often that one window serves them (tree.band_counts) are never streamed
    _, _, rows = _discretized(mechs, 0, counts=[tree.BAND_COUNT] * len(mechs))
    assert not any(isinstance(d, LazyRow) for d, _ in rows)
    # nor are a few rows (below tree.TREE_ALWAYS)
    _, _, rows = _discretized(mechs[:40], 0)
    assert not any(isinstance(d, LazyRow) for d, _ in rows)


def test_a_row_made_again_otherwise_is_refused():
    mechs = _mechs(tree.TREE_ALWAYS)
    _, _, rows = _discretized(mechs, 0)
    d = rows[5][0]
    made = d.remake()
    dense(d)  # (as made)
    for bad in (dataclasses.replace(dense(made), bias=stub(made).bias * 2 + 1e-30),
                dataclasses.replace(dense(made), tail_prob=stub(made).tail_prob + 1e-30),
                dataclasses.replace(dense(made), pmf=np.append(dense(made).pmf, 0.0))):
        odd = dataclasses.replace(d, remake=lambda bad=bad: bad)
        with pytest.raises(RuntimeError, match="other cells"):
            dense(odd)


@pytest.mark.parametrize("delta", [1e-6, 1e-11, 1e-15])
def test_streamed_bracket_holds_the_closed_form(monkeypatch, delta):
    """300 distinct Gaussians composed by FFT (closed forms off), streamed: the bracket holds
    mu-GDP's epsilon, as wide as that of the rows held whole, and the tree makes the
    compositions _node_count counts with folding (tree.FOLD_FROM)."""
    rng = np.random.default_rng(7)
    sigmas = rng.uniform(20.0, 60.0, 300)
    rows = [Row(Gaussian(float(s)), 1) for s in sigmas]
    mu = math.sqrt(float(np.sum(1.0 / sigmas ** 2)))
    exact = ref.gaussian_epsilon(mu, delta)
    got, groups = {}, {}
    for stream_bytes in (0, 1 << 40):
        monkeypatch.setattr(pipeline, "STREAM_BYTES", stream_bytes)
        reuse.clear()
        acc = Accountant(rows, 0.01, closed_forms=False)
        got[stream_bytes] = b = acc.epsilon(delta)
        assert b.lower <= exact <= b.upper, (stream_bytes, b, exact)
        assert b.upper - b.lower <= 0.02
        groups[stream_bytes] = max(side.get("groups", 0) for side in acc.error_budget(delta))
        tilted = any("tilt_lambda" in side for side in acc.error_budget(delta))
    assert got[0].upper - got[0].lower <= 1.01 * (got[1 << 40].upper - got[1 << 40].lower)
    assert groups[1 << 40] == tree._node_count(300)
    assert groups[0] == tree._node_count(300, tree.FOLD_FROM) >= groups[1 << 40]
    if not tilted and groups[0] == groups[1 << 40]:  # (the same tree, the same rows: the same numbers)
        assert got[0] == got[1 << 40]


def test_the_check_reads_every_field_but_the_masses():
    from prvgui.accounting.numerics.discretize import DiscretePRV
    from prvgui.accounting.numerics.packed import _fields
    _, _, rows = _discretized(_mechs(tree.TREE_ALWAYS), 0)
    names = [f.name for f in dataclasses.fields(DiscretePRV) if f.name not in ("pmf", "sparse")]
    s = stub(rows[0][0])
    # (a streamed row keeps its classes as a k x 2 array: read as pairs of floats)
    assert isinstance(s.classes, np.ndarray) and s.classes.shape[1:] == (2,)
    want = tuple(getattr(s, n) if n != "classes" else tuple(map(tuple, s.classes.tolist())) for n in names)
    assert _fields(s) == want
    made = stub(rows[0][0].remake())
    assert isinstance(made.classes, tuple) and _fields(made) == want


def test_many_discrete_gaussians_keep_tables_up_to_a_budget(monkeypatch):
    """DiscreteGaussian.prvs keeps at most lattice.KEEP_BYTES of tables: the PRVs past it let
    theirs go as they are made, and discretise to the very rows of PRVs that kept them."""
    from prvgui.accounting.kinds import discrete_gaussian as dg
    rng = np.random.default_rng(5)
    mechs = [DiscreteGaussian(float(s)) for s in rng.uniform(20.0, 200.0, 300)]
    monkeypatch.setattr(dg, "KEEP_BYTES", 1 << 40)
    kept = DiscreteGaussian.prvs(mechs, "add")
    assert all(p.lattice.release.__self__._near is not None for p in kept)
    budget = sum(p.lattice.held for p in kept) // 3
    monkeypatch.setattr(dg, "KEEP_BYTES", budget)
    some = DiscreteGaussian.prvs(mechs, "add")
    held = [p.lattice.release.__self__._near is not None for p in some]
    assert 0 < sum(held) < len(held)
    assert sum(p.lattice.held for p, h in zip(some, held) if h) <= budget
    plan = pipeline.make_plan(0.01, 1.0, len(mechs), 1e-12, len(mechs))
    for a, b in zip(kept, some):
        da = dense(pipeline.discretize_many([(a, 1)], plan, 1 << 24)[0][0])
        db = dense(pipeline.discretize_many([(b, 1)], plan, 1 << 24)[0][0])
        assert np.array_equal(da.pmf, db.pmf) and da.bias == db.bias and da.tail_prob == db.tail_prob


@pytest.mark.parametrize("n", [tree.TREE_ALWAYS, 529, 1100])
def test_streamed_rows_are_folded_one_waiting_row_a_level(monkeypatch, n):
    """From tree.FOLD_FROM on, each row arriving at a level is composed with the one waiting
    there: the compositions made are those _node_count counts (the window's mass is shared
    among them), no level ever holds two rows from then on, and the result is a composition of
    every row (its mass and mean are the rows' within the errors)."""
    rng = np.random.default_rng(n)
    mechs = [Gaussian(float(s)) for s in rng.uniform(20.0, 60.0, n)]
    _, _, rows = _discretized(mechs, 0)
    assert all(isinstance(d, LazyRow) for d, _ in rows)
    means = sum(float(np.dot(dense(d).pmf, np.arange(cells(d)) + stub(d).start) * stub(d).h + stub(d).shift)
                for d, _ in rows)
    calls = []
    real = tree.compose

    def spy(g, *a, **k):
        calls.append(len(g))
        return real(g, *a, **k)
    monkeypatch.setattr(tree, "compose", spy)
    got = tree.compose_many(rows, 1e-12)
    groups = tree._node_count(n, tree.FOLD_FROM)
    assert got.parts["groups"] == groups == len(calls) - 1
    # (the levels below FOLD_FROM compose FAN_IN rows at once, every fold two, the top the rows
    # left on each level)
    whole = sum(n // tree.FAN_IN ** (level + 1) for level in range(tree.FOLD_FROM))
    assert calls[:-1].count(tree.FAN_IN) == whole and calls[:-1].count(2) == groups - whole
    assert (groups > tree._node_count(n)) == (n // tree.FAN_IN ** tree.FOLD_FROM >= 2)
    total = float(got.pmf.sum())
    assert abs(total - 1.0) <= 1e-9
    mean = float(np.dot(got.pmf, got.values)) / total
    assert abs(mean - means) <= 1e-6 * max(1.0, abs(means))


def test_the_row_terms_worked_out_before_composing_certify_as_the_rows_do():
    """accountant._build_at works out the certificate's terms before composing (so that the
    rows can go as they are composed): the profile and the budget are those of the rows."""
    mechs = _mechs(tree.TREE_ALWAYS + 8)
    plan, _, lazy = _discretized(mechs, 0)
    terms = pipeline.row_terms(lazy, plan)
    composed = tree.compose_many(list(lazy), plan.e_w)
    by_rows, budget_rows = pipeline.certify(composed, lazy, plan)
    by_terms, budget_terms = pipeline.certify(composed, terms, plan)
    assert budget_terms == budget_rows
    assert (by_terms.err_abs, by_terms.lo_factor, by_terms.hi_factor) == \
        (by_rows.err_abs, by_rows.lo_factor, by_rows.hi_factor)
    assert by_terms.epsilon(1e-8) == by_rows.epsilon(1e-8)
    assert budget_rows["K"] == len(mechs) and budget_rows["mass_rel"] > 0


def test_a_streamed_composition_hands_the_freed_heap_back(monkeypatch):
    """heap.give_back is called while streamed rows are discretised and composed (throttled to
    one trim every TRIM_SECONDS), and never for rows that are not streamed."""
    from prvgui.accounting.numerics import heap
    calls = []
    monkeypatch.setattr(heap, "_trim_function", lambda: (lambda pad: calls.append(pad)))
    monkeypatch.setattr(heap, "TRIM_SECONDS", 0.0)
    mechs = _mechs(tree.TREE_ALWAYS + 8)
    plan, _, eager = _discretized(mechs, 1 << 40)
    tree.compose_many(list(eager), plan.e_w)
    assert calls == []
    plan, _, lazy = _discretized(mechs, 0)
    after_discretising = len(calls)
    assert after_discretising >= len(mechs) // 2
    tree.compose_many(list(lazy), plan.e_w)
    assert len(calls) > after_discretising and set(calls) == {0}


def test_give_back_trims_at_most_once_in_its_interval(monkeypatch):
    from prvgui.accounting.numerics import heap
    calls = []
    monkeypatch.setattr(heap, "_trim_function", lambda: (lambda pad: calls.append(pad)))
    monkeypatch.setattr(heap, "_state", {"libc": None, "last": -1e9})
    assert heap.give_back() and not heap.give_back()
    assert heap.give_back(force=True)
    assert calls == [0, 0]


def test_the_store_keeps_values_side_by_side():
    from prvgui.accounting.numerics.packed import Store
    st = Store(chunk=10)
    a, b = st.put(np.arange(4.0)), st.put(np.array([5.5, -6.25]))
    big = st.put(np.arange(20.0))  # (longer than a chunk: an array of its own)
    c = st.put(np.array([1e-300, 7.0, 8.0, 9.0, 10.0]))  # (past the 4 left in the first one)
    assert a.tolist() == [0.0, 1.0, 2.0, 3.0] and b.tolist() == [5.5, -6.25] and c.tolist()[0] == 1e-300
    assert big.tolist() == list(np.arange(20.0)) and a.dtype == big.dtype == np.float64
    assert a.base is b.base and big.base is not a.base and c.base is not a.base
    a[:] = -1.0  # (views side by side: writing one leaves its neighbour)
    assert b.tolist() == [5.5, -6.25]


def test_streamed_rows_certify_as_the_rows_made_again():
    """A streamed row keeps its width classes and block summary in the store: the certificate's
    terms read from them are those of the same rows made again, bit for bit."""
    from prvgui.accounting.numerics.discretize import coupling_failure
    plan, _, rows = _discretized(_mechs(tree.TREE_ALWAYS), 0)
    assert all(isinstance(d, LazyRow) for d, _ in rows)
    lazy_parts = [(stub(d), k) for d, k in rows]
    made_parts = [(stub(d.remake()), k) for d, k in rows]
    assert any(len(s.classes) > 1 for s, _ in lazy_parts)
    assert coupling_failure(lazy_parts, plan.t, plan.h) == coupling_failure(made_parts, plan.t, plan.h)
    got = pipeline.row_terms(rows, plan)
    want = pipeline.row_terms([(d.remake(), k) for d, k in rows], plan)
    assert got == want


def test_summaries_are_let_go_once_the_tilt_is_chosen(monkeypatch):
    """A streamed row's block summary is the row's cgf_blocks, read from its store; a consuming
    tilted composition lets the stores go once lambda is chosen (a read afterwards raises), and
    the width classes, which the check of a row made again reads, stay."""
    from prvgui.accounting.numerics import packed, tilt
    plan, _, rows = _discretized(_mechs(tree.TREE_ALWAYS), 0)
    first = rows[0][0]
    want = cgf_blocks(first.remake(), pipeline.LAZY_BLOCKS)
    got = first.blocks
    assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1]) and got[2] == want[2]
    released = []
    real = packed.let_go_summaries
    monkeypatch.setattr(tilt, "let_go_summaries", lambda r: (released.append(len(r)), real(r)))
    keep = list(rows)
    c = tilt.compose_tilted(rows, ("delta", 1e-10), plan.e_w, consume=True)
    assert c is not None and released == [len(keep)] and rows == []
    with pytest.raises(RuntimeError, match="let go"):
        _ = keep[3][0].blocks
    dense(keep[3][0])  # (made again and checked against its fields, classes included)


def test_a_streamed_composition_lets_its_rows_prvs_go(monkeypatch):
    """Streamed rows hold their own PRVs (to be discretised again): the accountant forgets its
    list of them and reuse keeps none of a list longer than MAX_PRVS, so each goes as its row is
    composed and none is alive when the top of the tree is composed (but the modules' own, such
    as a constant point mass). A later query makes them again, and answers as a fresh accountant
    does."""
    import gc

    from prvgui.accounting.pairs.prv import PRV

    def count() -> int:
        gc.collect()
        return sum(1 for o in gc.get_objects() if isinstance(o, PRV))
    monkeypatch.setattr(pipeline, "STREAM_BYTES", 0)
    monkeypatch.setattr(reuse, "MAX_PRVS", 16)
    reuse.clear()
    rows = [Row(m, 1) for m in _mechs(tree.TREE_ALWAYS + 16)]
    alive: dict[str, list[int]] = {"group": [], "top": []}
    compose = tree.compose

    def counting(rows_, *args, **kwargs):  # (a group's composition has a window hint, the top none)
        alive["group" if "window_hint" in kwargs else "top"].append(count())
        events.append("composed")
        return compose(rows_, *args, **kwargs)
    from prvgui.accounting.queries import accountant
    made: list[str] = []
    rows_prvs = accountant._rows_prvs

    def making(rows_, order):
        made.append(order)
        events.append("made")
        return rows_prvs(rows_, order)
    events: list[str] = []
    before = count()
    monkeypatch.setattr(tree, "compose", counting)
    monkeypatch.setattr(accountant, "_rows_prvs", making)
    acc = Accountant(rows, 0.01)
    first = acc.epsilon(1e-6)
    # (the loss cap and the infinite mass are worked out before the PRVs go: none is made again
    # once the last composition is done, for the cap that the answer is capped by)
    assert events[-1] == "composed" and set(made) == set(acc.orders), (events[-5:], made)
    assert alive["top"] and all(n <= before for n in alive["top"]), (before, alive["top"])
    assert max(alive["group"]) >= before + tree.TREE_ALWAYS  # (the rows' own PRVs, while they wait)
    second = acc.epsilon(1e-7)
    monkeypatch.setattr(tree, "compose", compose)
    reuse.clear()
    assert Accountant(rows, 0.01).epsilon(1e-7) == second
    reuse.clear()
    assert Accountant(rows, 0.01).epsilon(1e-6) == first
