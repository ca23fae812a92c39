"""The composition window: an interval that holds all but a proved mass of the composed
discrete PRV, by Chernoff's inequality with the exact cumulant generating function of each
discrete row (evaluated on blocks, rounding each block's values outward, so that the bound
stays an upper bound). compose.py reads the composition on this window; the mass outside it
is an additive error of the certificate.
"""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from .discretize import DiscretePRV
from .packed import PackedRow, Row, cells, dense, stub
from .sums import row_dots


def cgf_blocks(d: Row, blocks: int = 2048) -> tuple[np.ndarray, np.ndarray, float]:
    """(log P_b, m_b, w) of ``_cgf_bounds``: block masses, block means and the half-width (of a
    packed row from its nonzero cells, without its array of cells)."""
    if isinstance(d, PackedRow):
        return _packed_blocks(d, blocks)
    d = dense(d)
    n = d.pmf.size
    size = max(1, -(-n // blocks))
    full = n // size  # whole blocks; the last, partial one is padded on its own
    whole = d.pmf[:full * size].reshape(-1, size)
    pm: tuple[np.ndarray, ...]
    if full * size < n:
        last = np.zeros((1, size))
        last[0, :n - full * size] = d.pmf[full * size:]
        pm = (whole, last)
    else:
        pm = (whole,)
    p = np.concatenate([b.sum(axis=1) for b in pm])
    local = np.arange(size, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        mloc = np.where(p > 0, np.concatenate([row_dots(b, local) for b in pm]) / p, 0.0)
        logp = np.log(p)
    centres = (d.start + np.arange(p.size) * size + mloc) * d.h + d.shift
    keep = p > 0
    return logp[keep], centres[keep], (size - 1) * d.h


def _packed_blocks(d: PackedRow, blocks: int) -> tuple[np.ndarray, np.ndarray, float]:
    """cgf_blocks of a packed row, the blocks' sums taken over its nonzero cells."""
    return blocks_many([d.stub], [d.cells], [blocks], d.idx, d.vals, np.array([d.idx.size]))[0]


def blocks_many(stubs: Sequence[DiscretePRV], cells: Sequence[int], blocks: Sequence[int], idx: np.ndarray,
                vals: np.ndarray, counts: np.ndarray) -> list[tuple[np.ndarray, np.ndarray, float]]:
    """cgf_blocks of each of several rows given by their nonzero cells: row r has ``cells[r]``
    cells, is summarised on ``blocks[r]`` blocks, and its ``counts[r]`` nonzero cells are the
    next ones of ``idx`` (indices, in order) and ``vals`` (masses). The blocks' sums are one
    bincount over (row, block) for all rows, which adds each block's masses in the order a
    row's own bincount would: each row's summary is the same alone or among others."""
    size = np.array([max(1, -(-c // b)) for c, b in zip(cells, blocks)], dtype=np.int64)
    n_blocks = np.maximum(1, -(-np.array(cells, dtype=np.int64) // size))  # (a row of no cells: one empty block)
    base = np.cumsum(n_blocks) - n_blocks  # each row's first block in the whole
    size_at = np.repeat(size, counts)
    b = idx // size_at
    key = np.repeat(base, counts) + b
    total = int(n_blocks.sum())
    p = np.bincount(key, vals, minlength=total)
    with np.errstate(invalid="ignore", divide="ignore"):
        mloc = np.where(p > 0, np.bincount(key, vals * (idx - b * size_at), minlength=total) / p, 0.0)
        logp = np.log(p)
    # each block's centre: (start + j size + mloc) h + shift, j its place in its own row
    j = np.arange(total) - np.repeat(base, n_blocks)
    start = np.repeat(np.array([s.start for s in stubs], dtype=np.int64), n_blocks)
    h = np.repeat(np.array([s.h for s in stubs]), n_blocks)
    shift = np.repeat(np.array([s.shift for s in stubs]), n_blocks)
    centres = (start + j * np.repeat(size, n_blocks) + mloc) * h + shift
    keep = p > 0
    # each row's blocks that hold mass: slices of the blocks kept, cut where each row's end
    ends = np.cumsum(np.add.reduceat(keep, base, dtype=np.int64)).tolist()
    logp, centres = logp[keep], centres[keep]
    return [(logp[a:z], centres[a:z], (w - 1) * s.h)
            for s, a, z, w in zip(stubs, [0, *ends[:-1]], ends, size.tolist())]


def _cgf_bounds(blocks: tuple[np.ndarray, np.ndarray, float], lams: np.ndarray) -> np.ndarray:
    """Upper bounds on log E[exp(lam Y~)] for each lam (positive or negative).

    Values are grouped in blocks; with block mass P_b, block mean m_b and
    |y - m_b| <= w inside a block, e^x <= 1 + x + x^2 e^|x| / 2 gives
    sum_b P_b e^{lam m_b} (1 + (lam w)^2 e^{|lam| w} / 2), the first-order
    terms cancelling by the choice of m_b. (2048 blocks: DP-SGD windows within 1% of those
    from 4096 blocks, at half the cost.) ``blocks`` is ``cgf_blocks`` of the row.
    """
    logp, centres, w = blocks
    out = np.empty(lams.size)
    for part in range(0, lams.size, 32):  # 32 lambdas at a time: a few MB of work space
        lam = lams[part:part + 32, None]
        e = lam * centres
        e += logp
        m = e.max(axis=1, keepdims=True)
        e -= m
        np.exp(e, out=e)
        out[part:part + 32] = m[:, 0] + np.log(e.sum(axis=1))
    x = np.abs(lams) * w
    with np.errstate(over="ignore"):
        corr = np.where(x < 600, np.log1p(0.5 * x * x * np.exp(np.minimum(x, 600))),
                        math.log(0.5) + 2 * np.log(np.maximum(x, 1e-300)) + x)
    return out + corr


#: Chernoff parameters (10 per decade: the window is within 1% of the 20-per-decade optimum)
LAMBDAS = np.geomspace(1e-4, 1e5, 91)
#: choose_window looks at every COARSE-th lambda first, then next to the best of those
COARSE = 6


#: blocks for a row drawn once (``PreparedRow``): its bound's correction enters the sum once,
#: not k times, so coarser blocks serve (a thousand such rows: windows 1 to 2% wider, the
#: cumulants 8 times cheaper)
ONCE_BLOCKS = 256


class PreparedRow:
    """A discrete row with its cumulant bounds at LAMBDAS, computed when first asked for and
    kept (a window needs about a third of them; a steps curve's counts share them). ``blocks``:
    cgf_blocks's count (ONCE_BLOCKS for a row drawn once); ``summary``: the row's cgf_blocks on
    that many blocks, when its maker has it (tilt_batch.py)."""

    def __init__(self, d: Row, blocks: int = 2048,
                 summary: tuple[np.ndarray, np.ndarray, float] | None = None) -> None:
        self.d = d  # (packed or not: its masses are made dense only for the blocks)
        self.blocks = blocks
        s = stub(d)
        #: the row's smallest and largest value
        self.lowest = s.start * s.h + s.shift
        self.highest = (s.start + cells(d) - 1) * s.h + s.shift
        self._blocks: tuple | None = summary  # (cgf_blocks(d, blocks), when the caller has it)
        self._cgf = np.full((2, LAMBDAS.size), np.nan)  # row 0: +lambda, row 1: -lambda

    def summary(self) -> tuple[np.ndarray, np.ndarray, float]:
        """The row's cgf_blocks, made when first asked for."""
        if self._blocks is None:
            self._blocks = cgf_blocks(dense(self.d), self.blocks)
        return self._blocks

    def cgf(self, negative: bool, idx: np.ndarray) -> np.ndarray:
        """Bounds on log E[exp(+-LAMBDAS[idx] Y~)]."""
        row = self._cgf[int(negative)]
        todo = idx[np.isnan(row[idx])]
        if todo.size:
            row[todo] = _cgf_bounds(self.summary(), -LAMBDAS[todo] if negative else LAMBDAS[todo])
        return row[idx]


def _fill(rows: Sequence[PreparedRow], sides: Sequence[tuple[bool, np.ndarray]]) -> None:
    """Each row's ``cgf`` at +-LAMBDAS[idx] for each (negative, idx) of ``sides``, for all of
    them in one pass over their blocks stacked side by side (``_cgf_bounds`` row by row costs a
    call per row and lambda chunk: a thousand rows' windows spent a second there). Each value
    is worked out on its own lambda's row of the work space, so the same whichever lambdas and
    rows are worked out with it."""
    blocks = [r.summary() for r in rows]
    sizes = np.array([b[0].size for b in blocks])
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    logp = np.concatenate([b[0] for b in blocks])
    centres = np.concatenate([b[1] for b in blocks])
    lams = np.concatenate([-LAMBDAS[idx] if negative else LAMBDAS[idx] for negative, idx in sides])
    out = np.empty((lams.size, len(rows)))
    for part in range(0, lams.size, 8):  # (8 lambdas at a time: a few MB of work space)
        e = lams[part:part + 8, None] * centres
        e += logp
        m = np.maximum.reduceat(e, starts, axis=1)
        e -= np.repeat(m, sizes, axis=1)
        np.exp(e, out=e)
        out[part:part + 8] = m + np.log(np.add.reduceat(e, starts, axis=1))
    x = np.abs(lams)[:, None] * np.array([b[2] for b in blocks])[None, :]
    with np.errstate(over="ignore"):
        corr = np.where(x < 600, np.log1p(0.5 * x * x * np.exp(np.minimum(x, 600))),
                        math.log(0.5) + 2 * np.log(np.maximum(x, 1e-300)) + x)
    out += corr
    at = 0
    for negative, idx in sides:
        got = out[at:at + idx.size]
        at += idx.size
        for i, r in enumerate(rows):
            r._cgf[int(negative)][idx] = got[:, i]


def _missing(rows: Sequence[tuple[PreparedRow, float]], sides: Sequence[tuple[bool, np.ndarray]]) -> list[PreparedRow]:
    """The rows whose bounds at any of ``sides``' lambdas are not kept yet."""
    out = []
    for r, _ in rows:
        if any(np.isnan(r._cgf[int(negative)][idx]).any() for negative, idx in sides):
            out.append(r)
    return out


def _cgf_sum(rows: Sequence[tuple[PreparedRow, float]], negative: bool, idx: np.ndarray) -> np.ndarray:
    """sum k cgf(+-LAMBDAS[idx]) over the rows, the bounds not kept yet made together; summed
    row after row (a cumulative sum down the rows: the order of a sum over them one by one)."""
    if not rows:
        return np.zeros(idx.size)
    sign = int(negative)
    cg = np.stack([r._cgf[sign][idx] for r, _ in rows])
    if np.isnan(cg).any():
        todo = [rows[i][0] for i in np.flatnonzero(np.isnan(cg).any(axis=1)).tolist()]
        if len(todo) > 1:
            _fill(todo, [(negative, idx)])
        for r in todo:  # (one row alone: its own bounds; filled: read back)
            r.cgf(negative, idx)
        cg = np.stack([r._cgf[sign][idx] for r, _ in rows])
    ks = np.array([float(k) for _, k in rows])
    return np.cumsum(ks[:, None] * cg, axis=0)[-1]


def choose_window(rows: Sequence[tuple[PreparedRow, float]], mass: float,
                  hint: dict[bool, int] | None = None) -> tuple[float, float, float]:
    """An interval [lo, hi] and a bound (<= ``mass``) on P(S~ outside it).

    ``hint``: the LAMBDAS index that was best for each side of a similar composition (tree.py's
    groups of one level), read and updated. The search then starts there and walks downhill
    (``_descend``) instead of looking at every COARSE-th lambda and next to the best of those: a
    few lambdas instead of about 27 a side. A side the hint does not know yet starts from the
    best COARSE-th lambda. The objective is quasi-convex near its minimum but not far beyond it
    (the block correction), so a start far out could stop at a worse local minimum: any lambda
    gives a valid bound, so a hint can only cost width, never validity."""
    if hint is None:
        return choose_windows(rows, None, np.zeros(1), mass)[0]
    log_t = math.log(2.0 / mass)
    last = LAMBDAS.size - 1
    if False in hint and True in hint:  # (both sides' first lambdas, _descend's, in one pass)
        sides = [(neg, np.arange(max(0, hint[neg] - 1), min(last, hint[neg] + 1) + 1)) for neg in (False, True)]
        todo = _missing(rows, sides)
        if len(todo) > 1:
            _fill(todo, sides)
    ends = []
    for negative in (False, True):
        def g(idx: np.ndarray, negative: bool = negative) -> np.ndarray:
            return (_cgf_sum(rows, negative, idx) + log_t) / LAMBDAS[idx]
        start = hint.get(negative)
        if start is None:
            coarse = np.arange(0, LAMBDAS.size, COARSE)
            start = int(coarse[int(np.argmin(g(coarse)))])
        best, hint[negative] = _descend(g, start)
        ends.append(best)
    return _within_support(-ends[1], ends[0], sum(k * r.lowest for r, k in rows),
                           sum(k * r.highest for r, k in rows), mass)


def _within_support(lo: float, hi: float, lo_all: float, hi_all: float, mass: float
                    ) -> tuple[float, float, float]:
    """The Chernoff ends [lo, hi], each clipped to the support's [lo_all, hi_all] (where it then
    leaves nothing out), and the mass outside: mass / 2 for each end that was not clipped."""
    err = 0.0
    if hi >= hi_all:
        hi = hi_all
    else:
        err += mass / 2
    if lo <= lo_all:
        lo = lo_all
    else:
        err += mass / 2
    return float(lo), float(hi), err


def _descend(g, start: int) -> tuple[float, int]:
    """The least value of g over LAMBDAS' indices near ``start`` and its index: g at start and
    its neighbours, then three more at a time towards the smaller end until the least is
    inside (a quasi-convex g has its grid minimum there)."""
    last = LAMBDAS.size - 1
    start = min(max(start, 0), last)
    idx = np.arange(max(0, start - 1), min(last, start + 1) + 1)
    vals = g(idx)
    while True:
        b = int(np.argmin(vals))
        if b == 0 and idx[0] > 0:
            more = np.arange(max(0, int(idx[0]) - 3), int(idx[0]))
            idx, vals = np.concatenate([more, idx]), np.concatenate([g(more), vals])
        elif b == idx.size - 1 and idx[-1] < last:
            more = np.arange(int(idx[-1]) + 1, min(last, int(idx[-1]) + 3) + 1)
            idx, vals = np.concatenate([idx, more]), np.concatenate([vals, g(more)])
        else:
            return float(vals[b]), int(idx[b])


def choose_windows(fixed: Sequence[tuple[PreparedRow, float]], row: PreparedRow | None, counts: np.ndarray,
                   mass: float) -> list[tuple[float, float, float]]:
    """``choose_window`` of the rows ``fixed`` plus ``row`` repeated c times, for each c of
    ``counts`` (a steps curve's windows), the Chernoff search done for all counts at once.

    Each side's bound is min over LAMBDAS of (sum k cgf(+-lambda) + log(2 / mass)) / lambda, so
    that P(+-S~ >= b) <= mass / 2. The objective is quasi-convex in lambda (a convex function
    plus a constant, over lambda), so its grid minimum lies next to the best of every COARSE-th
    lambda: each count looks there and in the union of all counts' neighbourhoods of their
    best (a superset of its own). Any lambda gives a valid bound, so the search can only cost
    width, never validity. (0, 0, 0) where nothing is composed."""
    cs = np.asarray(counts, dtype=float) if row is not None else np.zeros(len(counts))
    log_t = math.log(2.0 / mass)
    lo_f = sum(k * r.lowest for r, k in fixed)
    hi_f = sum(k * r.highest for r, k in fixed)
    lo_all, hi_all = lo_f + cs * 0.0, hi_f + cs * 0.0
    if row is not None:
        lo_all = lo_all + cs * row.lowest
        hi_all = hi_all + cs * row.highest

    def bound(negative: bool) -> np.ndarray:
        def g(idx: np.ndarray) -> np.ndarray:
            total = _cgf_sum(fixed, negative, idx)
            per = total[None, :] + log_t
            if row is not None:  # (a count of 0 adds nothing, even where the row's bound is inf)
                per = per + np.where(cs[:, None] > 0, cs[:, None] * row.cgf(negative, idx)[None, :], 0.0)
            else:  # (a row with nothing to compose, e.g. (0, 0)-DP: every count's window is the others')
                per = np.broadcast_to(per, (cs.size, per.shape[1]))
            return per / LAMBDAS[idx]
        coarse = np.arange(0, LAMBDAS.size, COARSE)
        vals = g(coarse)
        best = coarse[np.argmin(vals, axis=1)]
        near = np.unique(np.concatenate([np.arange(max(0, j - COARSE + 1), min(LAMBDAS.size, j + COARSE))
                                         for j in np.unique(best)]))
        return np.minimum(vals.min(axis=1), g(near).min(axis=1))

    out = []
    active = [bool(fixed) or (row is not None and c > 0) for c in cs]
    if not any(active):
        return [(0.0, 0.0, 0.0)] * len(cs)
    hi, lo = bound(False), -bound(True)
    for i in range(len(cs)):
        if not active[i]:
            out.append((0.0, 0.0, 0.0))
            continue
        out.append(_within_support(float(lo[i]), float(hi[i]), float(lo_all[i]), float(hi_all[i]), mass))
    return out
