"""Many rows' tail scans made together (pipeline.discretize_many, rows of one kind's family).

discretize.Tails scans each tail of a row outwards on points 2^(1/16) apart until it holds less
than tau: a thousand distinct DP-SGD steps spent 0.53 s there, in about ten calls of the kind's
cdf or sf a row on 64 to 256 points, each call's cost mostly its own. A kind whose continuous
part names a family (``Continuous.family``: one function for all its rows, each point with its
own row's parameters) has the scans of a batch of rows made in a few calls: each round
evaluates the next block of every row still scanning.

Each row's scan is the one Tails makes alone, point for point and value for value: the blocks
are Tails.first_block's and next_block's, the points the same operations on the same numbers
(elementwise, whichever array holds them), the trimming at a finite end the same, and the
family's values are the row's own functions' (the kind's test checks them bit for bit). So a
streamed row discretised again alone (packed.LazyRow) has the cells the certificate was given.
A row whose scan would raise (a tail that does not decay) is left to scan alone, which raises.

The rows' cells follow the same way (``discretize_many``): each row runs discretize.cells_steps,
the very code of discretize_cells, up to the cdf and sf at its edges, which two family calls
give for all the rows; so each row is discretize_cells' answer alone, bit for bit.
Test: tests/accounting/numerics/test_tails_batch.py.
"""
from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from ..pairs.prv import PRV, Continuous
from .discretize import Cells, Tails, cells_steps

Scan = tuple[np.ndarray, np.ndarray]


def tails_many(conts: Sequence[Continuous | None], h: float, taus: Sequence[float]) -> list[Tails | None]:
    """Tails(c, h, tau) of each part with a family (by family, its rows' scans together);
    None for the others and for a row whose scan is left to Tails (module docstring)."""
    out: list[Tails | None] = [None] * len(conts)
    by_family: dict = {}
    for i, c in enumerate(conts):
        if c is not None and c.family is not None and c.mass > 0:
            by_family.setdefault(c.family[0], []).append(i)
    for family, rows in by_family.items():
        cs = [conts[i] for i in rows]
        params = [np.array(col, dtype=float) for col in zip(*(c.family[1] for c in cs))]  # type: ignore[union-attr]
        tau = [taus[i] for i in rows]
        left = _scan_many(family, "cdf", -1.0, cs, params, h, tau)
        right = _scan_many(family, "sf", 1.0, cs, params, h, tau)
        for i, c, a, b in zip(rows, cs, left, right):
            if a is not None and b is not None:
                out[i] = Tails.of_scans(c, a, b)
    return out


#: discretize_many evaluates the edges of the rows waiting for their values once they pass this
#: many points: the waiting rows' steps hold their edges (a few arrays of them each), so that 64
#: rows of a million edges each are not held at once (a row past it is evaluated alone)
EDGE_POINTS = 1 << 21


def discretize_many(prvs: Sequence[PRV], h: float, taus: Sequence[float], max_cells: int,
                    coarse: tuple[float, int], tiers: tuple[tuple[float, int], ...],
                    scans: Sequence[Tails | None]) -> list[Cells | None]:
    """discretize_cells(prvs[i], h, taus[i], max_cells, coarse, None, tiers, scans[i]) for each
    row given a scan whose part has a family: every row runs discretize.cells_steps, and the
    cdf and sf at the edges of the rows waiting (up to EDGE_POINTS of them) are evaluated in two
    calls of the family (the rows' own values, bit for bit), so each row's answer is the one it
    gets alone. None for a row without a scan or a family, or whose steps raise (discretised
    alone, in its turn, it raises the same)."""
    out: list[Cells | None] = [None] * len(prvs)
    waiting: list[tuple[int, Any, Continuous, np.ndarray, np.ndarray]] = []
    points = 0
    for i, (prv, tau, scan) in enumerate(zip(prvs, taus, scans)):
        c = prv.cont
        if scan is None or c is None or c.family is None:
            continue
        run = cells_steps(prv, h, tau, max_cells, coarse, tiers, scan)
        try:
            _, lo, hi = next(run)
        except StopIteration as done:
            out[i] = done.value
            continue
        except Exception:  # (discretised alone, in its turn, it raises the same)
            continue
        if waiting and points + lo.size + hi.size > EDGE_POINTS:
            _answer(waiting, out)
            waiting, points = [], 0
        waiting.append((i, run, c, lo, hi))
        points += lo.size + hi.size
    _answer(waiting, out)
    return out


def _answer(waiting: list[tuple[int, Any, Continuous, np.ndarray, np.ndarray]], out: list[Cells | None]) -> None:
    """The cdf and sf at the waiting rows' edges, a family at a time, sent to their steps."""
    by_family: dict = {}
    for w in waiting:
        by_family.setdefault(w[2].family[0], []).append(w)  # type: ignore[index]
    for family, rows in by_family.items():
        values = []
        for which, at in (("cdf", 3), ("sf", 4)):
            sizes = np.array([r[at].size for r in rows], dtype=np.int64)
            params = zip(*(r[2].family[1] for r in rows))
            v = family(which, np.concatenate([r[at] for r in rows]),
                       tuple(np.repeat(np.array(col, dtype=float), sizes) for col in params))
            values.append(np.split(np.asarray(v, dtype=float), np.cumsum(sizes)[:-1]))
        for (i, run, _, _, _), left, right in zip(rows, *values):
            try:
                run.send((left, right))
            except StopIteration as done:
                out[i] = done.value
            except Exception:  # (as above)
                pass


def _scan_many(family, which: str, direction: float, cs: list[Continuous], params: list[np.ndarray],
               h: float, taus: list[float]) -> list[Scan | None]:
    """Tails._scan of each row's lower (direction -1, the cdf) or upper (+1, the sf) tail."""
    n = len(cs)
    steps = Tails.STEPS
    ends = [c.lo if direction < 0 else c.hi for c in cs]
    block = [Tails.first_block(c, direction, e, h, c.quick[0] if direction < 0 else c.quick[1])
             for c, e in zip(cs, ends)]
    j0 = [0] * n
    xs: list[list[np.ndarray]] = [[] for _ in range(n)]
    vals: list[list[np.ndarray]] = [[] for _ in range(n)]
    done: list[Scan | None] = [None] * n
    active = list(range(n))
    centre_all = np.array([c.centre for c in cs])
    end_all = np.array(ends)
    while active:
        counts = np.array([block[i] for i in active], dtype=np.int64)
        starts = np.cumsum(counts) - counts
        at = np.arange(int(counts.sum())) - np.repeat(starts, counts)
        j = np.repeat(np.array([j0[i] for i in active], dtype=np.int64), counts) + at
        dist = h * 2.0 ** (j / steps)
        sel = np.array(active)
        x = np.repeat(centre_all[sel], counts) + direction * dist
        with np.errstate(invalid="ignore"):  # (an infinite end: never past it)
            beyond = direction * (x - np.repeat(end_all[sel], counts)) >= 0
        # each row's points, cut at its first point at or past a finite end, which is put there
        pieces, past = [], []
        for r, i in enumerate(active):
            a, b = int(starts[r]), int(starts[r] + counts[r])
            xr = x[a:b]
            hit = np.flatnonzero(beyond[a:b]) if math.isfinite(ends[i]) else np.zeros(0, np.int64)
            if hit.size:
                xr = np.append(xr[:int(hit[0])], ends[i])
            pieces.append(xr)
            past.append(bool(hit.size))
        sizes = np.array([p.size for p in pieces], dtype=np.int64)
        pts = np.concatenate(pieces)
        v_all = np.asarray(family(which, pts, tuple(np.repeat(col[sel], sizes) for col in params)), dtype=float)
        still = []
        lo = 0
        for r, i in enumerate(active):
            v = v_all[lo:lo + sizes[r]]
            lo += int(sizes[r])
            xs[i].append(pieces[r])
            vals[i].append(v)
            if past[r] or v[-1] <= taus[i]:
                done[i] = (np.concatenate(xs[i]), np.concatenate(vals[i]))
                continue
            last = float(dist[int(starts[r] + counts[r]) - 1])
            j0[i] += block[i]
            block[i] = Tails.next_block(cs[i], direction, ends[i], h, j0[i], block[i])
            if last > 1e16 + abs(cs[i].centre):
                continue  # (Tails raises there: the row scans alone)
            still.append(i)
        active = still
    return done
