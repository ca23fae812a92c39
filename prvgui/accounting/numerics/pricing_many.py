"""What a composition of many distinct rows costs (tree.py's groups), priced from a sample.

From tree.TREE_ALWAYS rows on (unless drawn so often that one window serves: tree.band_counts),
the cost model (pricing.py) pictures SAMPLE_ROWS of them, spread over the rows, each standing for ``weight`` = rows / sample of them: a coarse picture of every
row would cost about as much as the work. What the sample gives:

* discretising: the sampled rows' cell edges and cells, times the weight;
* the composition's window: the sampled rows' cumulants times the weight (window.py's Chernoff
  bound over cumulants that add up: an estimate of the whole window, not a bound);
* the first level's groups: FAN_IN / weight neighbouring sampled rows (tree.py groups rows of
  similar width) on their own window, the length L every row is transformed at; each level
  above pictured the same way on groups of FAN_IN^l rows (``levels``: a group's window grows as
  the square root of its rows when their sum is close to normal, as the rows themselves when
  each holds a far branch of its mass), a point priced by its length (``point_seconds``); a
  level that does not fit the grid is found before composing (fits_many.py), once the rows
  are discretised, and that attempt is priced so; the top composes the rows left on each level (``top_rows``: one
  a level from tree.FOLD_FROM on when the rows are streamed) at the whole window's length;
* memory: the rows held as their nonzero cells (about one per cell edge, at most one per
  lattice point, 12 bytes each: index and mass; so many distinct rows are not kept for reuse),
  or, past pipeline.STREAM_BYTES of them, streamed (a few kB a row, and a second
  discretisation),
  a few groups' dense rows, the top's rows and a batch of their transforms. The rows' PRVs,
  which the query makes first and holds throughout, are added once to the whole query's
  (pricing.prv_bytes: a discrete Gaussian's holds part of its lattice's tail sums, ~14 kB at
  sigma 100), estimated from the sampled rows' PRVs: the estimate makes only those (``Sampled``).

Calibration (development machine, 2 shared cores, numpy's pocketfft; ``python
benchmarks/bench_many.py`` prints the estimate beside the measured time, within 0.79 to 2.65
times it and 0.64 to 1.5 times the memory in the run of 2026-11-27; ROW_S, GROUP_POINT_S and
LATTICE_EDGE_S, and pricing.TILT_MANY_CELL_S, measured again on 2026-11-29 after the lattice
batch, the band screen and a row drawn once being its own spectrum, to which the estimates had
not followed: 10^4 distinct discrete Gaussians at delta 1e-10 were priced at 18.9 s and took
6.5): per row, the window's
cumulants and a group's bookkeeping about ROW_S; per grid point and row of a group
GROUP_POINT_S, of the top TOP_POINT_S; a power GROUP_POWER_S per coefficient; a lattice row
discretised with others LATTICE_EDGE_S per cell edge.
"""
from __future__ import annotations

import math
from typing import Callable, Sequence

import numpy as np

from .compose import BATCH_N, BATCH_ROWS, fft_len
from .lattice_batch import batched
from . import pipeline
from ..core.errors import GridTooLarge
from .tree import FAN_IN, FOLD_FROM, TREE_ALWAYS, TREE_COST, TREE_MIN, band_counts
from .window import choose_window
from ..pairs.prv import PRV

#: rows pictured when there are TREE_ALWAYS or more
SAMPLE_ROWS = 64
#: seconds per row beside its cells: its group's window (cumulants on window.ONCE_BLOCKS
#: blocks), packing and unpacking, its share of a group's composition and read-out (measured on
#: 10^4 distinct discrete Gaussians: 0.08 ms the window from a warm start, 0.05 the read-out,
#: 0.03 unpacking, 0.02 the row's group as a row, the rest bookkeeping; the band test, 0.04,
#: is now screened out in 0.005: band._stays_above_floor)
ROW_S = 0.2e-3
#: seconds per cell edge of a lattice row discretised with others (lattice_batch.py), all its
#: work included (10^4 discrete Gaussians at delta 1e-10: 2.0 s for 3.3 x 10^7 edges)
LATTICE_EDGE_S = 60e-9
#: bytes per nonzero cell of a packed row (an int32 index and a float64 mass)
PACKED_BYTES = 12
#: bytes a streamed row holds (packed.LazyRow: its certificate fields, about 1 kB, and in its
#: stores its width classes and 64 blocks' summary, 1.4 kB; tracemalloc over 3000 discrete
#: Gaussians: 2.4 kB; the summaries go once a tilt is chosen), resident: with the holes the
#: allocators keep (10^5 discrete Gaussians: pymalloc's arenas 304 MB for 184 MB of objects)
LAZY_ROW_BYTES = 3500
#: seconds per point of a group's window and row: a short transform (tens of thousands of
#: points, eight rows a call on every core), the product, the group's share of its inverse
#: transform, up to 64k points (``point_seconds`` for longer). Measured 2026-11-29 (a row drawn once is its own spectrum; 2 cores): 5.6 ns at 10^4
#: distinct discrete Gaussians (groups of 16k to 64k points), 4 to 5.3 ns at 1000 distinct
#: DP-SGD steps (14 ns before those changes)
GROUP_POINT_S = 6e-9
#: the same past compose.BATCH_N points, each row transformed alone (point_seconds)
LONG_POINT_S = 20e-9
#: seconds per coefficient of a power X^k, k > 1 (compose.power; measured 58 to 79 ns at 2e4 to
#: 1e6 coefficients)
GROUP_POWER_S = 75e-9
#: bytes per point and row of a batch of the tree's largest compositions: the rows written into
#: a float64 array, their complex spectra, the transform's own buffers, and the freed rows' pages
#: the heap keeps (measured: 45 at 10^4 discrete Gaussians, 31 at 2 x 10^4)
MERGE_BYTES = 32.0
#: seconds per point and row composed on the whole window (transforms eight to a call on every
#: core, and the product: 25 rows on 921,600 points took 0.48 s)
TOP_POINT_S = 20e-9


class Sampled(Sequence[tuple[PRV, int]]):
    """One order's rows as the cost model sees many of them before their PRVs are made: every
    row's count, and the PRVs of the rows it pictures (``sample_indices``) only. Making every
    PRV first took longer than the estimate and held more than a limit it was to enforce (10^6
    discrete Gaussians: 101 s and 1.9 GB to price; 10^6 DP-SGD steps, 0.3 ms a PRV). Row i is
    (PRV, count) as in a list of them; a row not pictured raises KeyError (what the model sums
    over every row, it estimates from the pictured ones: ``row_sum``)."""

    def __init__(self, counts: Sequence[int], prvs: dict[int, PRV]) -> None:
        self.counts = tuple(int(k) for k in counts)
        self.prvs = prvs

    def __len__(self) -> int:
        return len(self.counts)

    def __getitem__(self, i):  # type: ignore[override]  # (no slices)
        return self.prvs[i], self.counts[i]

    def __iter__(self):
        raise TypeError("a Sampled order holds the pictured rows' PRVs only")


def counts_of(prvs: "Sequence[tuple[PRV, int]] | Sampled") -> tuple[int, ...]:
    """Every row's count."""
    return prvs.counts if isinstance(prvs, Sampled) else tuple(k for _, k in prvs)


def row_sum(prvs: "Sequence[tuple[PRV, int]] | Sampled", fn: Callable[[PRV], float]) -> float:
    """``fn`` of every row's PRV, summed; of a Sampled order, the pictured rows' times the rows
    each stands for (an estimate)."""
    if isinstance(prvs, Sampled):
        return len(prvs) / max(1, len(prvs.prvs)) * math.fsum(fn(prv) for prv in prvs.prvs.values())
    return math.fsum(fn(prv) for prv, _ in prvs)


def sample_indices(counts: Sequence[int]) -> list[int]:
    """The rows pictured: all of them below TREE_ALWAYS rows or when they are composed on one
    window (tree.band_counts), else SAMPLE_ROWS spread evenly."""
    n_rows = len(counts)
    if n_rows < TREE_ALWAYS or band_counts([(None, k) for k in counts]):
        return list(range(n_rows))
    return spread(n_rows, SAMPLE_ROWS)


def spread(n: int, k: int) -> list[int]:
    """At most k of the indices 0 to n - 1, spread evenly (all of them when n <= k)."""
    return sorted(set(np.linspace(0, n - 1, min(n, k)).round().astype(int).tolist()))


def tree_pays(rows: Sequence, counts: Sequence[int], mass: float, whole: float) -> bool:
    """Whether tree.compose_many takes fewer than TREE_ALWAYS rows (all pictured: pricing._Row
    pictures with their counts) in groups: tree.pays on the coarse rows, the mean window of up
    to eight of its groups (rows of similar width together) against the whole window ``whole``
    (at ``mass``). (255 distinct DP-SGD steps at sigma 0.01 were priced on one window, 637 s
    and 28 GB, where the tree composes them.)"""
    live = [i for i, k in enumerate(counts) if k > 0]
    if len(live) < TREE_MIN or band_counts([(None, counts[i]) for i in live]):
        return False
    order = sorted(live, key=lambda i: rows[i].span)
    groups = [order[j:j + FAN_IN] for j in range(0, len(order), FAN_IN)]
    widths = [choose_window([(rows[i].prepared, counts[i]) for i in g], mass)[:2]
              for g in groups[::max(1, len(groups) // 8)]]
    return TREE_COST * sum(hi - lo for lo, hi in widths) / len(widths) <= whole


def group_width(rows: Sequence, counts: Sequence[float], mass: float, weight: float = 1.0,
                size: int = FAN_IN) -> float:
    """The mean window of the tree's groups of ``size`` leaves (``rows``: pricing._Row pictures,
    in sample order, with their own counts; each stands for ``weight`` rows). tree.py groups
    rows of similar width, so a group is pictured by the size / weight sampled rows next to
    each other in width (one sampled row ``size`` times over once ``weight`` >= size), their
    counts scaled to make ``size`` rows."""
    order = sorted(range(len(rows)), key=lambda i: rows[i].span)
    step = max(1, min(size, round(size / max(weight, 1.0)), len(order)))
    widths = []
    for j in range(0, len(order) - step + 1, step):
        part = order[j:j + step]
        g = [(rows[i].prepared, counts[i] * size / len(part)) for i in part if counts[i] > 0]
        if g:
            lo, hi, _ = choose_window(g, mass)
            widths.append(max(hi - lo, max(rows[i].span for i in part)))
    return float(np.mean(widths)) if widths else max(r.span for r in rows)


def levels(rows: Sequence, counts: Sequence[float], mass: float, weight: float, live: int,
           whole: float) -> list[tuple[int, float]]:
    """(compositions, mean window) of each level of the tree over ``live`` rows: level l composes
    FAN_IN rows of level l - 1 into each of its live // FAN_IN^l groups, on the window of
    FAN_IN^l leaves (``group_width``; at most the whole window). A group's window grows as the
    square root of its leaves when their sum is close to normal, and as the leaves themselves
    when each holds a far branch of its mass (a DP-SGD step at sigma 0.01, whose tilted groups
    of 16 and 256 steps spanned 56,000 and 61,000 nats), so each level is pictured, not
    scaled from the first."""
    out, size = [], FAN_IN
    while live // size:
        out.append((live // size, min(whole, group_width(rows, counts, mass, weight, size))))
        size *= FAN_IN
    return out


def point_seconds(n: float) -> float:
    """Seconds per point and row of a group's composition on n points: its transform, the
    product, its share of the inverse transform. Up to compose.BATCH_N points eight rows go to
    one call on every core; longer, each row is transformed alone, and every step slows as the
    arrays leave the caches (measured 2026-11-30, groups of 16 DP-SGD steps: 6 ns at 16k to 64k
    points, 9 to 12 at 1M, 20 at 2.1M, 23.5 at 7.7M, 27 at 22.7M)."""
    if n <= BATCH_N:
        return GROUP_POINT_S + 1e-9 * max(0.0, math.log2(max(n, 1.0) / (1 << 16)))
    return LONG_POINT_S + 2e-9 * max(0.0, math.log2(n / (2 * BATCH_N)))


def price(rows: Sequence, counts: Sequence[int], weight: float, live: int, whole: float, plan,
          extended: bool, n_max: int, irfft_s: float, disc_edge_s: float,
          disc_cell_s: float, fft_bytes: float, mass: float | None = None) -> tuple[float, float, int, int]:
    """(seconds, peak bytes, grid, output points) of tree.compose_many over ``live`` rows that
    the sampled ``rows`` (their own ``counts``) stand for, ``weight`` each, on the plan's mesh;
    ``whole`` is the whole window's estimated width, ``mass`` the whole window's mass (plan.e_w
    unless tilted). Raises GridTooLarge as the composition would."""
    h = plan.h
    cells = [r.cells(h) for r in rows]
    for r, c in zip(rows, cells):
        if c > n_max:
            raise GridTooLarge(c, n_max, r.span)
    edges = [max(r.edges(plan), 1.0) for r in rows]
    n = fft_len(math.ceil(whole / h) + 3, h, plan.agg_max)
    share = (plan.e_w if mass is None else mass) / (2 * max(1, live // FAN_IN))
    long_ = 7.0 if extended else 1.0
    # (lattice rows discretised together: lattice_batch.py; the others one at a time)
    seconds = weight * sum(LATTICE_EDGE_S * e if batched(r.prv) else disc_edge_s * r.edge_cost * e + disc_cell_s * c
                           for r, e, c in zip(rows, edges, cells))
    # (the rows as they are held: their nonzero cells from TREE_ALWAYS rows on, else every cell)
    packed = weight * (PACKED_BYTES * sum(min(r.nonzero(plan), c) for r, c in zip(rows, cells))
                       if live >= TREE_ALWAYS else 8.0 * sum(cells))
    # each level's groups, composed cell by cell (tree.py): one too long for n_max is found before
    # composing (fits_many.py), once the rows are discretised
    tiers = [(k, fft_len(math.ceil(w / h) + 3, h, 0.0)) for k, w in levels(rows, counts, share, weight, live, whole)]
    longest = max([n_l for _, n_l in tiers] + [n])
    if longest > n_max:  # (the longest: the engine coarsens to fit it)
        raise _spent(GridTooLarge(longest, n_max, longest * h), seconds, packed)
    seconds += live * ROW_S
    # a row drawn more than once is raised to its count on the first level (compose.power;
    # once, it needs no power): the share of the rows so drawn pays it (one row of a steps curve
    # among 10^4 drawn once had all of them priced with a power: 18 s for a composition of 6.4)
    drawn = min(1.0, weight * sum(1 for k in counts if k > 1) / max(live, 1))
    power = 0.5 * GROUP_POWER_S * long_ * drawn
    group = tiers[0][1] if tiers else n
    for i, (k, n_l) in enumerate(tiers):
        seconds += k * FAN_IN * (point_seconds(n_l) * long_ + (power if i == 0 else 0.0)) * n_l
    # the top: the rows left over on every level (the digits of ``live`` in base FAN_IN), each
    # transformed on the whole window
    streamed = packed > pipeline.STREAM_BYTES
    top = top_rows(live, FOLD_FROM if streamed else None)
    seconds += top * (TOP_POINT_S * long_ + power) * n + irfft_s * n
    if streamed:  # (pipeline.discretize_many; every row discretised twice)
        seconds += weight * sum(disc_edge_s * r.edge_cost * e + disc_cell_s * c for r, e, c in zip(rows, edges, cells))
        packed = packed * min(1.0, pipeline.STREAM_SAMPLE / max(live, 1)) + live * LAZY_ROW_BYTES
    # up to FAN_IN - 1 rows waiting on each level below the last, each as long as the windows of
    # the level that made it (the last level's wait for the top: top_cells)
    dense = 8.0 * FAN_IN * sum(n_l for _, n_l in tiers[:-1])
    # the top's rows (top_cells), and on a window up to BATCH_N a batch of their transforms
    # (BATCH_ROWS rows and spectra) beside the product; past it one row's transform at a time,
    # widest first, the transform's buffer and plan beside it (compose._transform): at 10^5
    # discrete Gaussians, 13 rows of 15.2 million cells on 7 million points
    held = 8.0 * top_cells(live, FOLD_FROM if streamed else None, group, n)
    if n <= BATCH_N:
        top_bytes = held + 16.0 * min(top, BATCH_ROWS) * n + fft_bytes * n
    else:
        top_bytes = held + (fft_bytes + 8.0) * n
    # the tree's largest compositions, the top's or those just below it: a batch of BATCH_ROWS
    # rows and their spectra on up to BATCH_N points beside the rows still waiting, MERGE_BYTES a
    # point and row (measured 2026-11-29 above the rows' cells and PRVs: 0.27 GB at 10^4
    # discrete Gaussians, batches on 746k points; 0.26 GB at 2 x 10^4, on 1M; priced 0.10 to
    # 0.14 GB before this term); past BATCH_N points one row at a time (as the top's)
    largest = max([n_l for _, n_l in tiers] + [min(n, BATCH_N)])
    merge = MERGE_BYTES * BATCH_ROWS * min(largest, BATCH_N) if largest <= BATCH_N else (fft_bytes + 8.0 + 16.0) * largest
    top_bytes = max(top_bytes, held + merge)
    return seconds, packed + dense + top_bytes, n, n


def _spent(exc: GridTooLarge, seconds: float, memory: float) -> GridTooLarge:
    """``exc`` carrying the seconds and bytes the composition spent before it was raised
    (pricing.CostModel adds them to the attempts that fail)."""
    exc.spent = (seconds, memory)  # type: ignore[attr-defined]
    return exc


def top_cells(live: int, fold_from: int | None, group: int, n: int) -> float:
    """The cells of the rows tree.compose_many composes on the whole window (``top_rows``'s): a
    row standing for m of the leaves spans about ``group`` sqrt(m / FAN_IN) cells (a sum's width
    grows as its standard deviation), at most the window's n. (10^5 discrete Gaussians: 18.2
    against the 15.2 million measured.)"""
    total, level, size = 0.0, 0, 1
    while live:
        live, digit = divmod(live, FAN_IN)
        if digit:
            if fold_from is None or level < fold_from:
                total += digit * min(n, group * math.sqrt(size / FAN_IN))
            else:
                total += min(n, group * math.sqrt(digit * size / FAN_IN))
        level, size = level + 1, size * FAN_IN
    return max(total, float(min(n, group)))


def top_rows(live: int, fold_from: int | None = None) -> int:
    """How many rows tree.compose_many composes on the whole window: those left over on each
    level, the digits of ``live`` in base FAN_IN; from level ``fold_from`` on (streamed rows:
    tree.FOLD_FROM) a level holds one folded row when its digit is not 0."""
    total, level = 0, 0
    while live:
        live, digit = divmod(live, FAN_IN)
        total += digit if fold_from is None or level < fold_from else int(digit > 0)
        level += 1
    return max(total, 1)
