"""Many lattice rows discretised a few dozen at a time (pipeline.discretize_many): 10^4 distinct
discrete Gaussians at delta 1e-10 spent 2.6 s in discretize.discretize_cells, about 90 NumPy
calls a row on arrays of about 2500 edges; together, 2.0 s (1000 rows on their coarser mesh:
0.40 s to 0.26 s).

``discretize_cells_many`` gives, for each row it can, exactly what ``discretize_cells`` gives:
the same cells, masses and fields, bit for bit, so that a streamed row made again one at a time
(packed.LazyRow) is the row the certificate was given. It does so by doing the same operations
on the same numbers, only on many rows' arrays side by side:

- each row's cut points are LatticeTails' (the same search on the same keys, the kind's
  ``stack.cut``), its runs of edges discretize.edge_pieces' (``_pieces``: the same integer
  steps for all rows at once); the edges of all rows are then made at once from the runs
  (integers: exact);
- the cdf and sf at the edges are the kind's own lookups, made for all rows at once (a kind's
  ``stack``: the discrete Gaussian's tail sums side by side; elementwise, so the same values);
- differences, products and comparisons are elementwise, so the same whichever array holds them;
- every sum the certificate reads (the normalisation, the moments) is each row's own pairwise
  ``np.sum`` over its own slice, as the single row's (a segmented sum would add in another
  order); the mass by width of cell is one ``np.bincount`` over (row, width), which adds each
  bin's masses in the same order as each row's own;
- what follows from the cells (the shift, the bias, the fields) is discretize.assemble itself.

A row this cannot take as it is (no stacked tables, a tail mass the tables do not answer, an
edge past the near tail sums, a grid too large) gets None, and the caller discretises it on its
own (the same answer, or the same error). Test: tests/accounting/numerics/test_lattice_batch.py
compares every field and array with discretize_cells'.
"""
from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from ..pairs.prv import PRV
from .discretize import Cells, CellStats, assemble

#: rows discretised together: their edges side by side (about 2500 a discrete Gaussian among 10^4
#: at delta 1e-10) stay in the cache, a megabyte an array (with 256 rows a batch, 10^4 discrete
#: Gaussians took as long as one by one; with 64, 2.0 s against 2.6 s)
BATCH_ROWS = 64
#: and at most this many bytes of their tables (Lattice.held), which a batch holds side by side
#: once more (at sigma 50 to 200, 64 discrete Gaussians hold 0.8 MB)
BATCH_BYTES = 32 * 2 ** 20
#: a row whose tables are larger is discretised alone: its tables' making is most of its work,
#: and a batch would copy them (300 discrete Gaussians at sigma 5 x 10^4 to 10^5, 13 MB of tail
#: sums each: 59 s alone, 65 to 68 s batched)
ROW_TABLE_MAX = 1 << 20

def stackable(prv: PRV) -> bool:
    """Whether ``prv`` is a lattice row whose kind stacks its tables (``stack``), with no atoms
    and a continuous part that is the lattice's own step function."""
    lat = getattr(prv, "lattice", None)
    c = prv.cont
    return (lat is not None and not prv.atoms and c is not None and c.mass > 0 and prv.finite_mass > 0
            and lat.cut is not None and getattr(type(lat.fns), "stack", None) is not None
            and c.cdf == lat.y_cdf and c.sf == lat.y_sf)


def batched(prv: PRV) -> bool:
    """Whether ``discretize_cells_many`` takes ``prv`` (``stackable``, its tables at most
    ROW_TABLE_MAX): pricing_many prices such rows at its cost."""
    return stackable(prv) and prv.lattice.held <= ROW_TABLE_MAX  # type: ignore[attr-defined]


def discretize_cells_many(prvs: Sequence[PRV], h: float, taus: Sequence[float], max_cells: int,
                          coarse: tuple[float, int], tiers: tuple[tuple[float, int], ...],
                          let_go: bool = False) -> list[Cells | None]:
    """discretize_cells(prvs[i], h, taus[i], max_cells, coarse, None, tiers) for each row it
    can take (module docstring), None for the others. ``let_go``: each batch's rows let their
    tables go once it is done (Lattice.release, as pipeline.discretize_many's rows do one by one:
    else a chunk of rows of large tables would hold them all at once)."""
    out: list[Cells | None] = [None] * len(prvs)
    by_kind: dict[type, list[int]] = {}
    for i, prv in enumerate(prvs):
        if batched(prv):
            by_kind.setdefault(type(prv.lattice.fns), []).append(i)  # type: ignore[attr-defined]
    for kind, rows in by_kind.items():
        for part in _parts(rows, [int(prvs[i].lattice.held) for i in rows]):  # type: ignore[attr-defined]
            got = _batch(kind, [prvs[i] for i in part], h, [taus[i] for i in part], max_cells, coarse, tiers)
            for i, g in zip(part, got):
                out[i] = g
                release = prvs[i].lattice.release if let_go else None  # type: ignore[attr-defined]
                if release is not None:
                    release()
    return out


def _parts(rows: list[int], held: list[int]) -> list[list[int]]:
    """``rows`` in order, cut into batches of at most BATCH_ROWS rows whose tables (``held``
    bytes each) add up to at most BATCH_BYTES; a row whose own tables are more goes alone."""
    out: list[list[int]] = []
    part: list[int] = []
    total = 0
    for i, b in zip(rows, held):
        if part and (len(part) == BATCH_ROWS or total + b > BATCH_BYTES):
            out.append(part)
            part, total = [], 0
        part.append(i)
        total += b
    if part:
        out.append(part)
    return out


def _cuts(stack, lats: list, asked: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """LatticeTails' cut points of each row at its tail masses ``asked`` (a row of them a
    lattice): (lower, upper, ok), read as LatticeTails._read reads them (Lattice.cut, then
    Lattice.values plus half a step), for all rows at once."""
    lo, hi, ok = stack.cut(asked)
    origin = np.array([lat.origin for lat in lats])[:, None]
    step = np.array([lat.step for lat in lats])[:, None]
    half = 0.5 * step
    return (origin + step * lo.astype(float)) + half, (origin + step * hi.astype(float)) + half, ok


def _runs(first: np.ndarray, step: np.ndarray, count: np.ndarray) -> np.ndarray:
    """The integers first + step * arange(count) of every run, one after the other."""
    total = int(count.sum())
    run = np.repeat(np.arange(count.size), count)
    at = np.arange(total) - np.repeat(np.cumsum(count) - count, count)
    return first[run] + step[run] * at


def _pieces(lower: np.ndarray, upper: np.ndarray, fine: np.ndarray, taus: np.ndarray, h: float,
            max_cells: int, use: list[tuple[float, int]]) -> tuple[np.ndarray, tuple[np.ndarray, ...]]:
    """discretize.edge_pieces of every row the batch takes, worked out for all rows at once:
    (the rows taken, (first, step, count) of their runs, a row of 2 T + 1 runs each for T tiers).
    Integers throughout, and the same floor and ceil of the same quotients, so the same runs;
    where edge_pieces stops early, or leaves out a tier below the row's tau (the tiers used are
    the first ones: their tail masses fall), the run here is empty, which adds no edge.
    A row is left out (None: its own discretisation) where a tail mass it uses has no cut in
    the tables, where a cut is not finite, or where its grid is too large or too far out."""
    t_n = len(use)
    used = np.array([q / 2 for q, _ in use])[None, :] > taus[:, None]  # (rows, tiers)
    with np.errstate(invalid="ignore", over="ignore"):
        fl = np.floor(lower / h + 0.5)
        ce = np.ceil(upper / h - 0.5)
    cols = np.concatenate([[True, True], np.zeros(t_n, dtype=bool)])[None, :] | np.pad(used, ((0, 0), (2, 0)))
    finite = np.isfinite(fl) & np.isfinite(ce)
    ok = np.all((fine & finite) | ~cols, axis=1)
    ok &= (np.abs(fl[:, 0]) < 2.0 ** 52) & (np.abs(ce[:, 0]) < 2.0 ** 52)
    live = np.flatnonzero(ok)
    fl, ce, used = fl[live], ce[live], used[live]
    j_lo = fl[:, 0].astype(np.int64)
    j_hi = np.maximum(ce[:, 0].astype(np.int64), j_lo)
    small = j_hi - j_lo + 2 <= max_cells
    live, fl, ce, used, j_lo, j_hi = live[small], fl[small], ce[small], used[small], j_lo[small], j_hi[small]
    rows = live.size
    # each tier's points (j_a left, j_b right), outward; a tier not used: j_lo and j_hi
    j_a = np.empty((rows, t_n), dtype=np.int64)
    j_b = np.empty((rows, t_n), dtype=np.int64)
    with np.errstate(invalid="ignore"):  # (a tier not used may have no cut: its column is not read)
        for t in range(t_n):
            a = np.maximum(j_lo, np.minimum(j_hi, fl[:, 2 + t])).astype(np.int64)
            j_a[:, t] = np.where(used[:, t], a if t == 0 else np.minimum(a, j_a[:, t - 1]), j_lo)
        for t in range(t_n):
            b = np.minimum(j_hi, np.maximum(j_a[:, 0], ce[:, 2 + t])).astype(np.int64)
            j_b[:, t] = np.where(used[:, t], b if t == 0 else np.maximum(b, j_b[:, t - 1]), j_hi)
    first = np.empty((rows, 2 * t_n + 1), dtype=np.int64)
    step = np.empty_like(first)
    count = np.empty_like(first)
    e = j_a[:, 0] if t_n else j_lo
    for t, (_, r) in enumerate(use):  # (left: tier t's run is column t_n - 1 - t)
        stop = np.maximum(j_a[:, t + 1] if t + 1 < t_n else j_lo, j_lo)
        w = _within(r, e - j_lo)
        n = np.where(e > stop, -(-(e - stop) // w), 0)
        first[:, t_n - 1 - t], step[:, t_n - 1 - t], count[:, t_n - 1 - t] = e - w * n, w, n
        e = e - n * w
    f0 = j_a[:, 0] if t_n else j_lo
    f1 = j_b[:, 0] if t_n else j_hi
    first[:, t_n], step[:, t_n], count[:, t_n] = f0, 1, f1 + 2 - f0
    e = f1 + 1
    for t, (_, r) in enumerate(use):
        stop = np.minimum(j_b[:, t + 1] + 1 if t + 1 < t_n else j_hi + 1, j_hi + 1)
        w = _within(r, j_hi + 1 - e)
        n = np.where(stop > e, -(-(stop - e) // w), 0)
        first[:, t_n + 1 + t], step[:, t_n + 1 + t], count[:, t_n + 1 + t] = e + w, w, n
        e = e + n * w
    return live, (first, step, count)


def _within(r: int, room: np.ndarray) -> np.ndarray:
    """discretize._within for each room: r, or the widest odd width within the room."""
    wide = np.maximum(1, room)
    return np.where(r <= room, r, wide - 1 + wide % 2)


def _batch(kind: Any, prvs: list[PRV], h: float, taus: list[float], max_cells: int,
           coarse: tuple[float, int], tiers: tuple[tuple[float, int], ...]) -> list[Cells | None]:
    out: list[Cells | None] = [None] * len(prvs)
    lats = [p.lattice for p in prvs]  # type: ignore[attr-defined]
    stack = kind.stack([lat.fns for lat in lats])
    # every row's tail masses: its tau, half its mass, and each tier's p / 2 (those a row does
    # not use are read and left)
    use = [(p, r) for p, r in (*tiers, coarse) if r >= 3]
    if any(p1 < p2 for (p1, _), (p2, _) in zip(use, use[1:])):
        return out  # (tiers out of order, which plans never make: each row on its own)
    asked = np.array([[t, 0.5 * p.cont.mass, *(q / 2 for q, _ in use)]  # type: ignore[union-attr]
                      for p, t in zip(prvs, taus)])
    lower, upper, fine = _cuts(stack, lats, asked)
    live_a, pieces = _pieces(lower, upper, fine, np.array(taus), h, max_cells, use)
    live = live_a.tolist()
    if not live:
        return out
    median = lower[live_a, 1]
    e_idx = _runs(*(x.ravel() for x in pieces))
    n_edges = pieces[2].sum(axis=1)
    first = np.cumsum(n_edges) - n_edges  # each row's first edge
    row = np.repeat(np.arange(len(live)), n_edges)
    edges = (e_idx - 0.5) * h
    # k: the last edge at or below the median (searchsorted, side right, minus one), within [1, n - 1]
    below = np.add.reduceat((edges <= median[row]).astype(np.int64), first)
    k = np.minimum(np.maximum(below - 1, 1), n_edges - 1)
    for r in np.flatnonzero(k == 1).tolist():  # (the first cell holds half the mass: all from the sf)
        c = prvs[live[r]].cont
        assert c is not None
        if float(c.cdf(edges[first[r] + 1:first[r] + 2])[0]) > 0.5 * c.mass:
            k[r] = 0
    lats = [lats[i] for i in live]
    if len(live) < len(prvs):
        stack = kind.stack([lat.fns for lat in lats])
    # the lattice index of each edge (Lattice.index, each row's own origin, step and ends)
    u = (edges - np.repeat([lat.origin for lat in lats], n_edges)) / np.repeat([lat.step for lat in lats], n_edges)
    lo = np.repeat(np.array([lat.lo - 1 for lat in lats], dtype=float), n_edges)
    hi = np.repeat(np.array([lat.hi for lat in lats], dtype=float), n_edges)
    y = np.floor(np.minimum(np.maximum(u, lo), hi)).astype(np.int64)
    del u, lo, hi
    cdf, sf, far_at = stack.cdf_sf(n_edges, y)
    # the cells (edge j to j + 1 of the whole array; those from a row's last edge are no cells):
    # masses from cdf differences left of each row's edge k, sf differences from it on
    split = np.repeat(first + k, n_edges)[:-1]
    from_left = np.arange(edges.size - 1) < split
    masses = np.where(from_left, cdf[1:] - cdf[:-1], -(sf[1:] - sf[:-1]))
    masses = np.maximum(masses, 0.0)
    # (a row reads the cdf at its edges 0..k and the sf at k..n-1, each at the index its own
    # functions read for both: a far point anywhere sends the row to its own discretisation)
    far = np.zeros(len(live), dtype=bool)
    far[row[far_at]] = True
    width = e_idx[1:] - e_idx[:-1]
    last = first + n_edges - 1
    width[last[:-1]] = 1  # (no cells: what they add below goes nowhere)
    # the cells with mass, in order (not the boundary "cells" between rows): what follows reads
    # these only (a discrete Gaussian at sigma 50 to 200 leaves about two cells in three empty),
    # as cells_steps' sums do (discretize.cell_sums), and by_width's empty cells would add zeros
    has_mass = masses > 0
    has_mass[last[:-1]] = False
    at_m = np.flatnonzero(has_mass)
    del has_mass
    m_all, w_all, row_m = masses[at_m], width[at_m], row[at_m]
    pos = e_idx[at_m] + (w_all - 1) // 2  # (a wide cell's mass at its middle cell)
    bounds = np.searchsorted(row_m, np.arange(len(live) + 1)).tolist()  # row r's: bounds[r]:bounds[r + 1]
    half_w = 0.5 * h * w_all
    spread_terms = m_all * half_w ** 2
    mean_terms = m_all * half_w
    w_top = int(width.max()) + 1
    by_width_all = np.bincount(row_m * w_top + w_all, weights=m_all, minlength=len(live) * w_top).reshape(len(live), w_top)
    coarse_r = coarse[1] if coarse[1] >= 3 else None
    # each row's widest cell, whether a cell wider than one holds mass, and its first and last
    # single cell (the boundary "cells" are one wide, hold nothing, and are no single cell)
    w_max_all = np.maximum.reduceat(width, first).tolist()
    wide_mass = (np.bincount(row_m[w_all > 1], minlength=len(live)) > 0).tolist()
    one = width == 1
    one[last[:-1]] = False
    at = np.flatnonzero(one)
    has_one = np.add.reduceat(one.astype(np.int64), first) > 0
    first_one = np.searchsorted(at, first).clip(max=max(at.size - 1, 0))
    last_one = (np.searchsorted(at, last) - 1).clip(min=0)
    fine_lo = (e_idx[at[first_one]] if at.size else np.zeros(len(live), np.int64)).tolist()
    fine_hi = (e_idx[at[last_one]] + 1 if at.size else np.zeros(len(live), np.int64)).tolist()
    has_one_l, first_l, last_l = has_one.tolist(), first.tolist(), last.tolist()
    far_l = far.tolist()
    # each row's scalars, elementwise on every row at once (the same operations on the same
    # float64 values as one row's, so the same bits): the cut tails, their moment and its error
    cut_lo_a, cut_hi_a = cdf[first], sf[last]
    lo_a, hi_a = edges[first], edges[last]
    cut_a = cut_lo_a + cut_hi_a
    cut_l = cut_a.tolist()
    moment_l = (lo_a * cut_lo_a + hi_a * cut_hi_a).tolist()
    moment_err_l = ((np.abs(lo_a) + np.abs(hi_a) + 64.0) * cut_a).tolist()
    edge_max_l = np.maximum(np.abs(lo_a), np.abs(hi_a)).tolist()
    sf_split_l = np.where(k > 0, (sf[first + k] - sf[last]) * (1 - 1e-12), math.inf).tolist()
    for r, i in enumerate(live):
        if far_l[r]:
            continue  # (its own functions read its whole table there)
        prv = prvs[i]
        s0 = first_l[r]  # (its first edge; its cells are s0 to its last edge - 1 of the whole array)
        a0, a1 = bounds[r], bounds[r + 1]  # (its cells with mass)
        m = m_all[a0:a1]
        w_top_r = w_max_all[r]
        coarse_mass, is_coarse = 0.0, None
        if coarse_r is not None and w_top_r >= coarse_r:
            is_coarse = width[s0:last_l[r]] == coarse_r
            if not is_coarse.any():
                is_coarse = None
        # (discretize.cell_sums' operations, on the same values in the same order)
        if is_coarse is None:
            spread = float(spread_terms[a0:a1].sum())
            w_max = w_top_r
        else:
            fine_part = ~is_coarse
            w_max = int(width[s0:last_l[r]][fine_part].max()) if fine_part.any() else 1
            coarse_m = w_all[a0:a1] == coarse_r
            coarse_mass = float(m[coarse_m].sum())
            spread = float(spread_terms[a0:a1][~coarse_m].sum())
        half_mean = float(mean_terms[a0:a1].sum())
        by_width = by_width_all[r, :max(2, w_top_r + 1)]
        fine_cells = None
        if (w_max > 1 or is_coarse is not None) and wide_mass[r] and has_one_l[r]:
            fine_cells = (fine_lo[r], fine_hi[r])
        st = CellStats(moment_l[r], moment_err_l[r], cut_l[r], coarse_mass, fine_cells, sf_split_l[r],
                       edge_max_l[r], spread, half_mean, by_width, w_max)
        out[i] = assemble(prv, h, max_cells, coarse, pos[a0:a1], m, st)
    return out
