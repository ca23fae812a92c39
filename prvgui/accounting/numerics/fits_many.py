"""Whether many rows composed in groups (tree.py) fit their grids, found before composing any.

A group's composition is read cell by cell (tree.compose_many: agg_max 0), so a group whose
window needs more than n_max points raises GridTooLarge, and pipeline.coarsened starts the whole
build again on a coarser mesh. In the tree that is found only when the group's turn comes, the
narrowest groups first, and the next wider group fails on the next mesh: 256 distinct DP-SGD
steps at sigma 0.01 to 0.02 and q 1e-10 (each row's loss split between its bulk and a branch
about 5000 nats out, so that a group's tilted window grows with its rows, not their square
root) were composed nine groups deep on each of five meshes before the first that fit, more
than ten minutes for a composition of one.

``check`` works out, before composing, the windows of the compositions most likely not to fit:
the widest full group of the first level, the tree's largest group (the first FAN_IN^L rows, or
d FAN_IN^L from tree.FOLD_FROM on when streamed rows are folded), and the top. (The top might
take compose.py's band path past n_max points, where its inverse transform is decimated: taken
as not, as the cost model takes it; the tops of 1000 distinct DP-SGD steps and 3000 discrete
Gaussians composed on at most 10^5 points did not, and failed there, after every group was
composed.) The windows come from the rows' block summaries (window.cgf_blocks: each block's
log mass and mean, BLOCKS a row, a streamed row's own), tilted by the composition's lambda:
Chernoff's bound with each block's mass at its mean. Within a block that is Jensen's inequality
the wrong way for a bound (untilted, the summary's cumulants are at most the row's), so the
windows are a little narrower than the certified ones compose.py chooses (within 25%, the tests
say; tilted, the blocks' masses are tilted at their means, an approximation): a grid found too
long here is too long there, and the mesh is coarsened for the summary's width, the smaller.
With window._cgf_bounds' bound on each block's spread added, the windows came out wider than
compose's instead (its groups' own cumulants are tighter than their leaves' bounds summed), and
400 DP-SGD steps on 2 x 10^4 points were coarsened 18% further than they needed. A grid that
passes here may still fail there, as before (the composition raises: the same 400 steps' top,
4% too long, on that grid). Only a screen looks at every row: SAMPLE rows first (the widest full group's and the rest spread
evenly, each standing for its share), and all the rows only when those come within SCREEN of
n_max (tens of thousands of narrow rows pay a few milliseconds).
"""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from .compose import fft_len
from .packed import LazyRow, PackedRow, Row, cells, stub
from ..core.errors import GridTooLarge
from .window import LAMBDAS, COARSE, cgf_blocks

#: rows summarised first; the sampled windows must come within a factor SCREEN of n_max for
#: every row to be summarised
SAMPLE, SCREEN = 64, 2.0
#: blocks a row is summarised on (tilt.STEER_BLOCKS' count)
BLOCKS = 256


def row_summary(r: Row, blocks: int = BLOCKS) -> tuple[np.ndarray, np.ndarray, float] | None:
    """The row's cgf_blocks (None: no finite mass); a streamed row's own summary, kept when it
    was first discretised (pipeline.LAZY_BLOCKS blocks), so that it is not made again."""
    if isinstance(r, LazyRow):
        return r.blocks
    if isinstance(r, PackedRow):  # (from its nonzero cells)
        return cgf_blocks(r, blocks) if r.idx.size else None
    return cgf_blocks(r, blocks) if r.pmf.any() else None


def summary_window(parts: Sequence[tuple[tuple[np.ndarray, np.ndarray, float], float]], lam: float,
                   mass: float) -> tuple[float, float]:
    """Chernoff's window [lo, hi] with ``mass`` outside, of the sum of the rows whose summaries
    (window.cgf_blocks: log masses, means) are ``parts``, each with its count (which may be
    fractional: a sampled row standing for others), every row tilted by ``lam`` first: each
    block's mass at its mean, on window.LAMBDAS, every COARSE-th and then next to the best, as
    window.choose_window looks. Clipped to the sum of the rows' outermost block means. The rows
    are taken CHUNK blocks at a time (10^5 streamed rows hold 6.4 x 10^6 blocks: a few arrays of
    them at once would add 0.3 GB to the peak)."""
    if not parts:
        return 0.0, 0.0
    log_t = math.log(2.0 / mass)
    coarse = np.arange(0, LAMBDAS.size, COARSE)
    first = _sums(parts, lam, np.concatenate([LAMBDAS[coarse], -LAMBDAS[coarse]]))
    g_up, g_down = ((first[0][i * coarse.size:(i + 1) * coarse.size] + log_t) / LAMBDAS[coarse] for i in (0, 1))
    near = [np.arange(max(0, j - COARSE + 1), min(LAMBDAS.size, j + COARSE))
            for j in (int(coarse[int(np.argmin(g))]) for g in (g_up, g_down))]
    again = _sums(parts, lam, np.concatenate([LAMBDAS[near[0]], -LAMBDAS[near[1]]]))[0]
    hi = min(float(g_up.min()), float(((again[:near[0].size] + log_t) / LAMBDAS[near[0]]).min()))
    lo = -min(float(g_down.min()), float(((again[near[0].size:] + log_t) / LAMBDAS[near[1]]).min()))
    lo_all, hi_all = first[1], first[2]
    return max(lo, lo_all), min(hi, hi_all)


#: blocks summary_window takes at a time
CHUNK = 1 << 18


def _sums(parts, lam: float, ts: np.ndarray) -> tuple[np.ndarray, float, float]:
    """(sum over the rows of count x log E[e^{t Y}] for each t of ``ts``, each row tilted by
    ``lam`` and its blocks' masses at their means; the sums of the rows' least and greatest
    block means times their counts), a chunk of rows at a time."""
    out = np.zeros(ts.size)
    lo_all = hi_all = 0.0
    start = 0
    while start < len(parts):
        stop, held = start, 0
        while stop < len(parts) and (held == 0 or held + parts[stop][0][0].size <= CHUNK):
            held += parts[stop][0][0].size
            stop += 1
        chunk = parts[start:stop]
        start = stop
        y = np.concatenate([s[1] for s, _ in chunk])
        sizes = np.array([s[0].size for s, _ in chunk])
        first = np.concatenate([[0], np.cumsum(sizes)[:-1]])
        k = np.array([float(c) for _, c in chunk])
        base = np.concatenate([s[0] for s, _ in chunk]) + lam * y
        base -= np.repeat(_lse(base, first, sizes), sizes)  # (each row's tilted masses sum to 1)
        for i, t in enumerate(ts):
            out[i] += float(np.dot(k, _lse(base + t * y, first, sizes)))
        lo_all += float(np.dot(k, np.minimum.reduceat(y, first)))
        hi_all += float(np.dot(k, np.maximum.reduceat(y, first)))
    return out, lo_all, hi_all


def _lse(e: np.ndarray, first: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """Each row's log-sum-exp of ``e``, the rows' blocks side by side (``first``, ``sizes``)."""
    top = np.maximum.reduceat(e, first)
    return top + np.log(np.add.reduceat(np.exp(e - np.repeat(top, sizes)), first))


def sets(n_rows: int, fan_in: int, fold_from: int | None) -> list[tuple[int, int]]:
    """The positions [a, b) in the tree's order (narrowest first) of the rows under the
    compositions checked: the widest full group of the first level and the largest group."""
    out = []
    full = n_rows // fan_in
    if full:
        out.append(((full - 1) * fan_in, full * fan_in))
    level, size = 0, 1
    while size * fan_in <= n_rows:
        level, size = level + 1, size * fan_in
    if level >= 2:  # (level 1's largest group is one of the first level's, the widest above)
        digits = n_rows // size if fold_from is not None and level >= fold_from else 1
        out.append((0, digits * size))
    return out


def check(rows: Sequence[tuple[Row, int]], group_mass: float, top_mass: float, n_max: int,
          agg_max: float, fan_in: int, fold_from: int | None, lam: float = 0.0,
          summaries: Sequence | None = None) -> None:
    """Raises GridTooLarge (with the summary's width) when a group of ``rows`` composed on
    ``group_mass`` (cell by cell) or the top on ``top_mass`` (its length a multiple of the
    decimation ``agg_max`` allows) needs more than ``n_max`` points on the rows' mesh (module
    docstring). ``rows``: the live rows, in any order; ``lam``: the tilt they are composed at;
    ``summaries``: their row_summary each, when the caller has them."""
    if len(rows) < fan_in:
        return
    h = stub(rows[0][0]).h
    order = np.argsort(np.fromiter((cells(d) for d, _ in rows), dtype=np.int64, count=len(rows)), kind="stable")
    checked = sets(len(rows), fan_in, fold_from)

    def points(width: float, agg: float) -> int:
        return fft_len(math.ceil(width / h) + 3, h, agg)

    def windows(pos: Sequence[int], whole: set[int], summaries: dict[int, tuple | None]) -> list[tuple[int, float]]:
        """(points, width) of each checked set's window and of the top's, from the rows at
        ``pos`` (positions in ``order``): those of ``whole`` stand for themselves, the others
        each for their share of the set's rows not in ``whole``."""
        got = []
        for a, b in [*checked, (0, len(rows))]:
            inside = [p for p in pos if a <= p < b]
            others = sum(1 for p in inside if p not in whole)
            share = ((b - a) - sum(1 for p in whole if a <= p < b)) / max(1, others)
            parts = [(summaries[p], rows[int(order[p])][1] * (1.0 if p in whole else share))
                     for p in inside if summaries[p] is not None]
            top = (a, b) == (0, len(rows))
            lo, hi = summary_window(parts, lam, top_mass if top else group_mass)  # type: ignore[arg-type]
            got.append((points(hi - lo, agg_max if top else 0.0), hi - lo))
        return got

    n_rows = len(rows)
    widest = set(range(checked[0][0], n_rows)) if checked else set()
    rest = [p for p in range(n_rows) if p not in widest]
    picked = sorted(widest | set(_spread(rest, max(0, SAMPLE - len(widest)))))

    def summary(p: int):
        i = int(order[p])
        return row_summary(rows[i][0]) if summaries is None else summaries[i]
    got = {p: summary(p) for p in picked}
    if len(picked) < n_rows:
        if max((n for n, _ in windows(picked, widest, got)), default=0) * SCREEN <= n_max:
            return
        got.update({p: summary(p) for p in range(n_rows) if p not in got})
    n, w = max(windows(range(n_rows), set(range(n_rows)), got), default=(0, 0.0))
    if n > n_max:  # (the longest: coarsened to fit it, the others fit too)
        raise GridTooLarge(n, n_max, w)


def _spread(items: list[int], k: int) -> list[int]:
    """At most k of ``items``, spread evenly (pricing_many.spread's choice; that module imports
    tree.py, which imports this one)."""
    if k <= 0 or not items:
        return []
    if len(items) <= k:
        return list(items)
    return [items[int(i)] for i in np.unique(np.linspace(0, len(items) - 1, k).round().astype(int))]
