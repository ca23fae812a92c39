"""Many lattice rows discretised together (lattice_batch.py) give each row exactly what
discretize_cells gives it alone: every field, every cell index and mass, bit for bit (a streamed
row made again alone must be the row the certificate was given), on the plans many rows get
(tiers by class, coarse tails, none), and rows the batch cannot take are left to discretize_cells."""
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prvgui.accounting import Accountant, Gaussian, Row
from prvgui.accounting.core.errors import GridTooLarge
from prvgui.accounting.kinds.discrete_gaussian import DiscreteGaussian
from prvgui.accounting.kinds.discrete_laplace import DiscreteLaplace
from prvgui.accounting.numerics import pipeline
from prvgui.accounting.numerics.discretize import discretize_cells
from prvgui.accounting.numerics.lattice_batch import discretize_cells_many, stackable


def _same(a, b) -> bool:
    """The same value to the bit (arrays: dtype, shape, values and signs of zeros)."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a, b = np.asarray(a), np.asarray(b)
        if a.dtype != b.dtype or a.shape != b.shape:
            return False
        if a.dtype.kind == "f":
            return bool(np.array_equal(a.view(np.uint64), b.view(np.uint64)))
        return bool(np.array_equal(a, b))
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, float) and isinstance(b, float):
        return math.copysign(1.0, a) == math.copysign(1.0, b) and (a == b or (a != a and b != b))
    return type(a) is type(b) and a == b


def _check(prvs, h, taus, max_cells, coarse, tiers):
    got = discretize_cells_many(prvs, h, taus, max_cells, coarse, tiers)
    taken = 0
    for prv, tau, g in zip(prvs, taus, got):
        if g is None:
            continue
        taken += 1
        ref = discretize_cells(prv, h, tau, max_cells, coarse, None, tiers)
        for field in ref[0].__dataclass_fields__:
            assert _same(getattr(g[0], field), getattr(ref[0], field)), field
        for x, y in zip(g[1:], ref[1:]):
            assert _same(x, y)
    return got, taken


def _plan(rows: int, delta: float = 1e-10):
    return pipeline.make_plan(0.01, 1.0, rows, 0.1 * delta, rows)


@pytest.mark.parametrize("rows", [300, 2000, 10 ** 4, 10 ** 5])
def test_many_discrete_gaussians_are_each_the_row_discretised_alone(rows):
    plan = _plan(rows)
    rng = np.random.default_rng(rows)
    prvs = [DiscreteGaussian(float(s), int(d)).prv() for s, d in
            zip(rng.uniform(0.5, 400.0, 150), rng.integers(1, 4, 150))]
    got, taken = _check(prvs, plan.h, [plan.tau(p) for p in prvs], 2 ** 26, plan.coarse, plan.tiers)
    assert taken >= 140  # (the batch takes nearly all of them: else it is no faster)


@pytest.mark.parametrize("coarse,tiers", [((0.0, 1), ()), ((1e-6, 7), ()), ((1e-5, 9), ((1e-3, 3),))])
def test_other_plans_give_the_same_rows(coarse, tiers):
    prvs = [DiscreteGaussian(s).prv() for s in (0.8, 3.0, 17.5, 60.0, 125.0, 900.0)]
    for h in (1e-2, 1e-3, 2e-5):
        for tau in (1e-6, 1e-12, 1e-21):
            _check(prvs, h, [tau] * len(prvs), 2 ** 26, coarse, tiers)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.floats(0.3, 2000.0), min_size=1, max_size=12), st.floats(1e-6, 1e-1),
       st.sampled_from([1e-8, 1e-15, 1e-25, 1e-40]), st.integers(1, 3))
def test_any_sigmas_mesh_and_cut(sigmas, h, tau, sens):
    prvs = [DiscreteGaussian(s, sens).prv() for s in sigmas]
    try:
        _check(prvs, h, [tau] * len(prvs), 2 ** 22, (0.0, 1), ((1e-4, 3), (1e-7, 9)))
    except GridTooLarge:
        pass  # (from discretize_cells on a row the batch left alone: the same refusal)


def test_rows_it_cannot_take_are_left_alone():
    """Another kind (no stacked tables), a tail cut past the near sums (the whole table) and a
    grid too large each get None: discretize_cells then does what it does for them."""
    dg = DiscreteGaussian(40.0).prv()
    others = [Gaussian(2.0).prv(), DiscreteLaplace(0.5).prv()]
    assert stackable(dg) and not any(stackable(p) for p in others)
    got = discretize_cells_many([others[0], dg, others[1]], 1e-3, [1e-10] * 3, 2 ** 26, (0.0, 1), ())
    assert got[0] is None and got[2] is None and got[1] is not None
    far = discretize_cells_many([dg], 1e-3, [1e-300], 2 ** 26, (0.0, 1), ())
    assert far == [None]
    with pytest.raises(GridTooLarge):
        discretize_cells(dg, 1e-9, 1e-10, 2 ** 10)
    assert discretize_cells_many([dg], 1e-9, [1e-10], 2 ** 10, (0.0, 1), ()) == [None]


def test_an_accountant_answers_the_same_with_and_without_the_batch(monkeypatch):
    """Through the whole pipeline (discretize_many, the tree, the certificate): the same bracket
    to the bit, streamed or not (a streamed row is made again alone and checked against the
    fields it was first given)."""
    rng = np.random.default_rng(5)
    rows = [Row(DiscreteGaussian(float(s)), 1) for s in rng.uniform(20.0, 200.0, 400)]
    with_batch = Accountant(rows, 0.05).epsilon(1e-8)
    monkeypatch.setattr(pipeline, "discretize_cells_many", lambda chunk, *a: [None] * len(chunk))
    alone = Accountant(rows, 0.05).epsilon(1e-8)
    assert (with_batch.lower, with_batch.estimate, with_batch.upper) == (alone.lower, alone.estimate, alone.upper)
    monkeypatch.undo()
    monkeypatch.setattr(pipeline, "STREAM_BYTES", 1)  # (every row streamed: made again alone)
    streamed = Accountant(rows, 0.05).epsilon(1e-8)
    assert (streamed.lower, streamed.upper) == (with_batch.lower, with_batch.upper)


def test_a_batch_holds_a_bounded_share_of_tables(monkeypatch):
    """A batch copies its rows' tables side by side: at most BATCH_BYTES of them together, and a
    row whose own tables are over ROW_TABLE_MAX (a discrete Gaussian at sigma 10^5 holds about
    13 MB of tail sums) is left to discretize_cells; with a batch's rows let go once it is done,
    no more than a batch's tables are made at once."""
    from prvgui.accounting.numerics import lattice_batch
    sizes = []
    real = lattice_batch._batch
    monkeypatch.setattr(lattice_batch, "_batch",
                        lambda kind, prvs, *a: sizes.append(sum(p.lattice.held for p in prvs)) or real(kind, prvs, *a))
    monkeypatch.setattr(lattice_batch, "BATCH_BYTES", 100_000)
    prvs = [DiscreteGaussian(s).prv() for s in (1e5, 300.0, 30.0, 700.0, 40.0, 900.0, 3000.0)]
    held = [p.lattice.held for p in prvs]
    assert held[0] > lattice_batch.ROW_TABLE_MAX
    got, taken = _check(prvs, 1e-6, [1e-12] * len(prvs), 2 ** 26, (0.0, 1), ())
    assert got[0] is None and taken == len(prvs) - 1
    assert len(sizes) >= 3 and all(s <= 100_000 or s in held for s in sizes)
    assert lattice_batch._parts([0, 1, 2], [5, 5, 5]) == [[0, 1, 2]]
    assert lattice_batch._parts([0, 1, 2, 3], [2 ** 22, 1, 2 ** 22, 1]) == [[0], [1], [2], [3]]
    for p in prvs:
        p.lattice.release()
    lattice_batch.discretize_cells_many(prvs[1:], 1e-6, [1e-12] * 6, 2 ** 26, (0.0, 1), (), let_go=True)
    assert all(p.lattice.fns._near is None for p in prvs[1:])


class _Cuts:
    """A row's cut point of each tail mass, as discretize.edge_pieces asks for them."""

    def __init__(self, lower: dict, upper: dict) -> None:
        self.lower, self.upper = lower, upper

    def cuts(self, upper: bool, taus):
        return [(self.upper if upper else self.lower)[t] for t in taus]


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 10 ** 9), st.integers(1, 30), st.integers(0, 4), st.floats(1e-4, 1.0))
def test_runs_for_all_rows_are_each_rows_edge_pieces(seed, rows, tiers_n, h):
    """lattice_batch._pieces (every row's runs of edges at once) gives, row by row, the edges
    of discretize.edge_pieces: random cuts on either side of the fine cells (some inside, some
    past the ends, some crossing), tiers used by some rows and not others (their tau)."""
    from prvgui.accounting.numerics.discretize import edge_pieces
    from prvgui.accounting.numerics.lattice_batch import _pieces, _runs
    rng = np.random.default_rng(seed)
    widths = sorted(rng.choice([3, 5, 9, 15, 27, 81, 243], tiers_n + 1, replace=False).tolist())
    ps = sorted(10.0 ** rng.uniform(-14, -1, tiers_n + 1), reverse=True)
    use = list(zip(ps, widths))
    coarse, tiers = use[-1], tuple(use[:-1])
    taus = 10.0 ** rng.uniform(-16, 0, rows)
    centre = rng.uniform(-50, 50, rows)
    spread = 10.0 ** rng.uniform(-2, 1, rows)
    lower = np.empty((rows, 2 + len(use)))
    upper = np.empty_like(lower)
    lower[:, 0], upper[:, 0] = centre - spread * 3, centre + spread * 3
    lower[:, 1] = upper[:, 1] = centre
    for t in range(len(use)):  # (inner tiers further in, with noise that may cross)
        frac = rng.uniform(-0.2, 1.2, rows) * (len(use) - t) / (len(use) + 1)
        lower[:, 2 + t] = lower[:, 0] + frac * spread * 3
        upper[:, 2 + t] = upper[:, 0] - rng.uniform(-0.2, 1.2, rows) * (len(use) - t) / (len(use) + 1) * spread * 3
    fine = np.ones_like(lower, dtype=bool)
    live, pieces = _pieces(lower, upper, fine, taus, h, 10 ** 9, use)
    assert live.tolist() == list(range(rows))
    counts = pieces[2].sum(axis=1)
    edges = _runs(*(x.ravel() for x in pieces))
    at = 0
    for i in range(rows):
        j_lo = math.floor(lower[i, 0] / h + 0.5)
        j_hi = max(math.ceil(upper[i, 0] / h - 0.5), j_lo)
        q = [p / 2 for p, _ in use]
        c = _Cuts(dict(zip(q, lower[i, 2:].tolist())), dict(zip(q, upper[i, 2:].tolist())))
        want = np.concatenate([f + s * np.arange(n) for f, s, n in edge_pieces(c, h, j_lo, j_hi, taus[i], coarse, tiers)])
        assert np.array_equal(edges[at:at + counts[i]], want), i
        at += counts[i]
    assert at == edges.size


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([0.0, 0.0, 1e-300, 1e-17, 0.3, 1.0, 7e-5]), st.sampled_from([1, 1, 3, 5, 9])),
                min_size=1, max_size=300),
       st.sampled_from([None, 9, 5]), st.floats(1e-6, 1.0))
def test_cell_sums_are_the_sums_over_every_cell(cells, coarse_r, h):
    """discretize.cell_sums runs over the cells with mass only (so lattice_batch can leave the
    empty ones out): each sum is the one over every cell, summed exactly, within its rounding."""
    from prvgui.accounting.numerics.discretize import cell_sums
    masses = np.array([m for m, _ in cells])
    width = np.array([w for _, w in cells])
    got = cell_sums(masses, width, h, coarse_r)
    coarse = width == coarse_r if coarse_r is not None else np.zeros(width.size, bool)
    half = [0.5 * h * int(w) for w in width]
    want = (math.fsum(m for m, c in zip(masses, coarse) if c),
            math.fsum(m * hw * hw for m, hw, c in zip(masses, half, coarse) if not c),
            math.fsum(m * hw for m, hw in zip(masses, half)))
    for g, w in zip(got, want):
        assert abs(g - w) <= 1e-13 * abs(w) + 1e-300
    # the empty cells left out: the same bits
    live = masses > 0
    assert cell_sums(masses[live], width[live], h, coarse_r) == got
