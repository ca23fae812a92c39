"""Truncate and discretise one PRV onto the global mesh (PRV paper, Algorithm 2).

Grid: cell j is [(j - 1/2) h, (j + 1/2) h) with centre c_j = j h; every row uses
the same mesh so that composed values stay on the mesh (plus a known offset).

Given a PRV Y (finite part, conditioned on being finite) we

1. cut both tails of the continuous part at mass ``tau`` each: Y^L = Y | Y in
   [a, b]; the total-variation distance between Y and Y^L is the cut mass, which
   becomes a coupling failure probability of the composition;
2. give cell j the mass of Y^L in it (differences of ``cdf`` on the left half,
   of ``sf`` on the right half, so tails keep their relative precision); atoms
   go to the cell that contains them;
3. shift all values by s = E[Y^L] - sum_j p_j c_j, so that the discrete variable
   Y~ has exactly the mean of Y^L (the paper's key step).

The coupling "Y^L in cell j  ->  Y~ = c_j + s" has D = Y~ - Y^L in
[s - h/2, s + h/2]: a range of width h and mean E[Y~] - E[Y^L], which is zero
up to ``bias`` (the error of our E[Y^L]); this is what Hoeffding's inequality
needs (``coupling_failure``).

Coarse tails. Far out, where a draw lands with probability at most p per draw, cells
are r times wider (r odd, mass at the middle cell), so |D - s| <= H / 2 = r h / 2 there.
Over K draws let N count the draws in coarse cells, lambda = sum of their p. Replacing D
by s on those draws gives variables F in [s - h/2, s + h/2] with |E F - E D| <= p H / 2,
and |sum D - sum F| <= N H / 2. Hence for any m >= 0, with B the summed ``bias``,

    P(sum D > t) <= exp(-2 (t - B - sum p H / 2 - m H / 2)^2 / (K h^2)) + lambda^(m+1) / (m+1)!

(Hoeffding for the F; the union bound over the (m+1)-sets of draws for N > m), and the
same for P(sum D < -t). The discretisation then evaluates the PRV's cdf at a fraction of
the edges: at k = 10^4 DP-SGD 90k of 227k cells, for 4% of t.

Wider cells where the variance allows (``tiers``). Between the fine cells and the coarse tails,
cells may be r_i h wide (r_i odd, mass at the middle cell) where each tail holds at most
p_i / 2. Hoeffding's inequality only sees the widest cell; Bernstein's sees the variance. For
the F above (coarse draws replaced by s), E[(F - s)^2] <= sigma^2 = sum_j p_j (w_j / 2)^2 over
the non-coarse cells j of width w_j (|F - s| <= w_j / 2 in cell j), and
F - E F <= M = w_max / 2 + |s| + bias + p H / 2 (w_max the widest non-coarse cell). Bernstein's
inequality for independent draws then gives

    P(sum F - E sum F > u) <= exp(-u^2 / (2 (sum_i k_i sigma_i^2 + M u / 3)))

which replaces the Hoeffding term when it is smaller (``coupling_failure`` takes the better of
the two, or ``class_failure``'s Chernoff bound by width of cell when that is smaller still: it
charges a wide cell in proportion to its mass, so that the tails of many distinct rows can have
cells hundreds of meshes wide; pipeline.class_plan). A tail holding 10^-3 of the mass in cells 3 h wide adds 0.8% to sigma^2 and saves two
thirds of its cdf evaluations; pipeline.make_plan sizes the tiers and the mesh together.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import chain
from typing import Any, Callable, Generator, NamedTuple, Protocol, Sequence

import numpy as np

from ..core.errors import GridTooLarge
from ..pairs.prv import PRV, _search

_ULP = 2.0 ** -52
_EMPTY = np.zeros(0)
#: accuracy, in units of 2^-53, that the PRVs' cdf (absolute, left of the split) and sf
#: (relative, right of it) are trusted to have (test_prv_contract checks it against mpmath)
CDF_ULPS = 64
#: share of the coupling distance t spent on coarse tail cells
COARSE_SHARE = 0.04
#: the number of coarse draws the cells are sized for, and the budget for more of them
#: (a fraction of the error level)
COARSE_DRAWS, COARSE_FAILURE = 3, 1 / 8


@dataclass(frozen=True, slots=True)
class DiscretePRV:
    """A discretised finite part of a PRV. Value of ``pmf[i]`` is (start + i) h + shift."""

    pmf: np.ndarray
    start: int
    h: float
    shift: float
    inf_mass: float
    #: probability that the finite Y was cut away (TV distance of the truncation)
    tail_prob: float
    #: bound on |E[Y~] - E[Y^L]|
    bias: float
    #: probability of a coarse cell, and half its width (0, 0 without coarse tails)
    coarse_prob: float = 0.0
    coarse_half: float = 0.0
    #: pmf indices [lo, hi) of the single-width cells, and the indices of the nonzero cells
    #: outside them (coarse cells' middles, atoms); None: every cell is single-width
    fine: tuple[int, int] | None = None
    sparse: np.ndarray | None = None
    #: the pmf index nearest the mean (the transforms are centred there)
    centre: int = 0
    #: bound on the relative change of any composed delta(eps) per draw of this row caused by
    #: the rounding of its masses (``mass_rounding``)
    mass_rel: float = 0.0
    #: sum over the non-coarse cells of p_j (w_j / 2)^2 (each half-width widened by the few ulps
    #: the computed edges may be off, as ``bias`` says), and the widest of them (None: every
    #: cell is h wide, so (h / 2)^2 and h)
    spread: float | None = None
    width_max: float | None = None
    #: (half-width, probability) of each width of cell that holds mass, coarse cells included,
    #: each half-width widened as ``spread``'s (the cells' classes of ``class_failure``); ()
    #: when not recorded: then every cell is taken as wide as the widest, coarse ones apart (a
    #: streamed row keeps them as a k x 2 array: packed.lazy)
    classes: tuple[tuple[float, float], ...] | np.ndarray = ()

    @property
    def second_moment(self) -> float:
        """A bound on E[(D - s)^2] over the non-coarse cells (Bernstein's variance)."""
        return (0.5 * self.h) ** 2 if self.spread is None else self.spread

    @property
    def width_classes(self) -> tuple[tuple[float, float], ...] | np.ndarray:
        """``classes``, or the bound that holds without them."""
        if len(self.classes):  # (a tuple, or a streamed row's k x 2 array: packed.lazy)
            return self.classes
        wide = ((self.coarse_half, self.coarse_prob),) if self.coarse_prob > 0 else ()
        return ((0.5 * self.widest, 1.0), *wide)

    @property
    def widest(self) -> float:
        """The widest non-coarse cell (Hoeffding's range, Bernstein's M)."""
        return self.h if self.width_max is None else self.width_max

    @property
    def values(self) -> np.ndarray:
        return (self.start + np.arange(self.pmf.size)) * self.h + self.shift

    def mean(self) -> float:
        return float(np.dot(self.pmf, self.values))

    def with_pmf(self, pmf: np.ndarray, centre: int | None = None) -> "DiscretePRV":
        """The row with other masses (and centre), its other fields the same: what
        ``dataclasses.replace`` gives, without its per-call field walk (many rows make several
        such copies each; a test checks that every field is carried)."""
        return DiscretePRV(pmf, self.start, self.h, self.shift, self.inf_mass, self.tail_prob, self.bias,
                           self.coarse_prob, self.coarse_half, self.fine, self.sparse,
                           self.centre if centre is None else centre, self.mass_rel, self.spread,
                           self.width_max, self.classes)


def coarse_plan(t: float, h: float, k_total: int, err: float) -> tuple[float, int]:
    """(p, r): coarse cells r h wide where a draw lands with probability at most p, sized so
    that COARSE_DRAWS coarse draws cost COARSE_SHARE of t and more of them happen with
    probability about COARSE_FAILURE * err. r = 1: no coarse tails (they would not pay)."""
    m = COARSE_DRAWS
    lam = (math.factorial(m + 1) * COARSE_FAILURE * err) ** (1.0 / (m + 1))
    r = int(2.0 * COARSE_SHARE * t / ((m + lam) * h))
    r -= 1 - r % 2  # odd: the middle cell is the middle of the coarse cell
    return (lam / k_total, r) if r >= 3 else (0.0, 1)


def coupling_failure(parts: list[tuple[DiscretePRV, int]], t: float, h: float) -> tuple[float, dict]:
    """A bound on the probability that the discretisation errors of the draws sum to more
    than t (the same bound holds for less than -t; each side of the profile uses one), plus
    the rows' cut tails; with its terms. The better of two bounds: the minimum over m of the
    coarse-tail bound (module docstring) and ``class_failure`` (cells of many widths)."""
    bias = sum(k * d.bias for d, k in parts)
    lam = sum(k * d.coarse_prob for d, k in parts) * (1 + 1e-9)
    mean_c = sum(k * d.coarse_prob * d.coarse_half for d, k in parts) * (1 + 1e-9)
    half = max((d.coarse_half for d, _ in parts if d.coarse_prob > 0), default=0.0)
    # Hoeffding's sum of squared ranges; Bernstein's variance and bound on F - E F
    ranges = sum(k * max(d.widest, h) ** 2 for d, k in parts) * (1 + 1e-9)
    var = sum(k * d.second_moment for d, k in parts) * (1 + 1e-9)
    big = max((0.5 * d.widest + abs(d.shift) + d.bias + d.coarse_prob * d.coarse_half
               for d, k in parts if k > 0), default=0.0) * (1 + 1e-9)
    best = (math.inf, 0.0, 0)
    for m in range(2 * COARSE_DRAWS + 1 if lam > 0 else 1):
        slack = t - bias - mean_c - m * half
        hoeff = min(math.exp(-2.0 * slack * slack / ranges),
                    math.exp(-slack * slack / (2.0 * (var + big * slack / 3.0)))) if slack > 0 else 1.0
        many = math.exp((m + 1) * math.log(lam) - math.lgamma(m + 2)) if lam > 0 else 0.0
        best = min(best, (hoeff + many, hoeff, m))
    by_class = class_failure(parts, t)
    if by_class < best[0]:
        best = (by_class, by_class, -1)
    trunc = sum(k * d.tail_prob for d, k in parts) * (1 + 1e-12)  # (1e-12: mass_rounding)
    return min(1.0, best[0] + trunc), {"hoeffding": best[1], "coarse": best[0] - best[1],
                                       "coarse_draws": max(best[2], 0), "by_class": best[2] < 0,
                                       "truncation": trunc, "bias": bias}


def bennett_g(x: np.ndarray) -> np.ndarray:
    """(e^x - 1 - x) / x^2 for x >= 0 (increasing; 1/2 at 0), rounded up; inf past overflow."""
    with np.errstate(all="ignore"):  # (small or huge x: the series, or inf)
        big = (np.expm1(x) - x) / (x * x)
    small = 0.5 + x / 6 + x * x / 12  # (the series' x^2 / 24 + x^3 / 120 + ... is below x^2 / 12)
    return np.where(x < 1e-3, small, big) * (1 + 1e-12)


def class_failure(parts: list[tuple[DiscretePRV, int]], t: float) -> float:
    """Chernoff's bound on P(sum D > t) (and on P(sum D < -t)) from the cells' widths.

    For one draw let Z = D - s (in [-w_J / 2, w_J / 2], w_J the width of the cell J the draw
    lands in, each widened as ``classes`` say) and X = D - E D = Z - E Z; |E D| <= bias, so
    sum D > t needs sum X > t - B (B the summed bias). With g(y) = (e^y - 1 - y) / y^2,
    increasing, e^y = 1 + y + y^2 g(y) for every y; for theta > 0, theta X <= theta m_c in a
    cell of class c (m_c = w_c / 2 + |s| + bias >= |X| there), so

        E e^(theta X) = 1 + theta^2 E[X^2 g(theta X)] <= 1 + theta^2 sum_c g(theta m_c) E[X^2; c]
                      <= 1 + theta^2 (g(theta m_f) V + sum_c (g(theta m_c) - g(theta m_f)) p_c m_c^2)

    with m_f the least m_c, V = sum_c p_c (w_c / 2)^2 >= E Z^2 >= E X^2 and E[X^2; c] <=
    p_c m_c^2. Hence P(sum X > u) <= exp(-theta u + sum_i k_i psi_i(theta)), psi_i the log of
    the right-hand side for row i, for every theta > 0: this takes the least over a grid of
    theta and a golden-section search around its best point (any theta is a valid bound). The
    same holds for -X; and when sum_i k_i max_c m_c < u the bound is 0. A wide cell costs in proportion to its mass: far tails may have cells
    hundreds of meshes wide (pipeline.make_plan's ``tiers`` for many rows)."""
    u = t - sum(k * d.bias for d, k in parts)
    rows = [(d, k) for d, k in parts if k > 0]
    if u <= 0 or not rows:
        return 1.0 if u <= 0 else 0.0
    # (every row's classes as arrays, not lists of floats: at 10^5 rows the lists took 0.17 GB
    # of small objects, which the heap kept; the same sums in the same order)
    n = len(rows)
    k_arr = np.fromiter((k for _, k in rows), float, n)
    a_arr = np.fromiter((abs(d.shift) + d.bias for d, _ in rows), float, n)
    classes = [d.width_classes for d, _ in rows]
    counts = np.fromiter((len(c) for c in classes), np.int64, n)
    if any(isinstance(c, np.ndarray) for c in classes):  # (streamed rows': packed.lazy)
        flat = np.concatenate([np.asarray(c, dtype=float).reshape(-1, 2) for c in classes])
    else:
        flat = np.fromiter(chain.from_iterable(chain.from_iterable(classes)), float,
                           2 * int(counts.sum())).reshape(-1, 2)
    del classes
    w_all, p_all = flat[:, 0], flat[:, 1]
    row_of = np.repeat(np.arange(n), counts)
    v_arr = np.bincount(row_of, weights=p_all * w_all * w_all, minlength=n)
    mf_arr = np.minimum.reduceat(w_all, np.concatenate([[0], np.cumsum(counts)[:-1]])) + a_arr
    m_all = w_all + a_arr[row_of]
    above = m_all > mf_arr[row_of]
    c_row, c_m = row_of[above], m_all[above]
    c_w = p_all[above] * c_m ** 2
    widest = mf_arr.copy()
    np.maximum.at(widest, c_row, c_m)
    if float(np.sum(k_arr * widest)) * (1 + 1e-9) < u:
        return 0.0  # (|X_i| <= m: the errors cannot sum to u)

    def exponent(theta: float) -> float:
        with np.errstate(all="ignore"):  # (past overflow: inf, or nan)
            g_f = bennett_g(theta * mf_arr)
            inner = g_f * v_arr
            if c_row.size:
                inner = inner + np.bincount(c_row, weights=(bennett_g(theta * c_m) - g_f[c_row]) * c_w,
                                            minlength=len(rows))
            total = float(np.sum(k_arr * np.log1p(theta * theta * inner))) * (1 + 1e-9)
        return -theta * u + total if math.isfinite(total) else math.inf

    theta0 = u / max(float(np.sum(k_arr * v_arr)), 1e-300)
    grid = theta0 * 2.0 ** (np.arange(-48, 97) / 4)
    vals = [exponent(x) for x in grid]
    j = int(np.argmin(vals))
    lo, hi = grid[max(j - 1, 0)], grid[min(j + 1, grid.size - 1)]
    best = vals[j]
    ratio = (math.sqrt(5) - 1) / 2
    a, b = hi - ratio * (hi - lo), lo + ratio * (hi - lo)
    fa, fb = exponent(a), exponent(b)
    for _ in range(24):
        if fa < fb:
            hi, b, fb = b, a, fa
            a = hi - ratio * (hi - lo)
            fa = exponent(a)
        else:
            lo, a, fa = a, b, fb
            b = lo + ratio * (hi - lo)
            fb = exponent(b)
    best = min(best, fa, fb)
    return min(1.0, math.exp(best)) if best < 700 else 1.0


#: the cdf and sf are evaluated this many edges at a time (progress on long rows)
EDGE_CHUNK = 1 << 20


def _tail_values(fn, x: np.ndarray, progress: Callable[[float], None] | None, done: int,
                 total: int) -> np.ndarray:
    """fn(x), EDGE_CHUNK points at a time when ``progress`` wants to hear (``done`` of ``total``
    edges were evaluated before these); the functions are elementwise, so the values are the
    same."""
    if progress is None or x.size <= EDGE_CHUNK:
        out = fn(x)
    else:
        out = np.empty(x.size)
        for lo in range(0, x.size, EDGE_CHUNK):
            out[lo:lo + EDGE_CHUNK] = fn(x[lo:lo + EDGE_CHUNK])
            progress((done + min(x.size, lo + EDGE_CHUNK)) / total)
    if progress is not None:
        progress((done + x.size) / total)
    return out


def discretize_cells(prv: PRV, h: float, tau: float, max_cells: int = 2 ** 26,
                     coarse: tuple[float, int] = (0.0, 1),
                     progress: Callable[[float], None] | None = None,
                     tiers: tuple[tuple[float, int], ...] = (), scan: "Tails | None" = None
                     ) -> tuple[DiscretePRV, np.ndarray, np.ndarray, int]:
    """``discretize`` as (the row without its masses, the indices of the cells that hold mass,
    their masses, the number of cells): a long row's wide tail cells leave most of its cells
    empty, and many rows are kept so (packed.py). ``scan``: Tails(prv.cont, h, tau) when the
    caller has it (tails_batch.py: the same scans), for a row without a lattice's tables."""
    run = cells_steps(prv, h, tau, max_cells, coarse, tiers, scan)
    try:
        c, lo, hi = next(run)
    except StopIteration as done:  # (no continuous part to evaluate)
        return done.value
    total = lo.size + hi.size  # (the edges and one)
    values = (_tail_values(c.cdf, lo, progress, 0, total), _tail_values(c.sf, hi, progress, lo.size, total))
    try:
        run.send(values)
    except StopIteration as done:
        return done.value
    raise AssertionError("cells_steps asks for the tails' values once")


Cells = tuple["DiscretePRV", np.ndarray, np.ndarray, int]


def cells_steps(prv: PRV, h: float, tau: float, max_cells: int, coarse: tuple[float, int],
                tiers: tuple[tuple[float, int], ...], scan: "Tails | None"
                ) -> Generator[tuple[Any, np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray], Cells]:
    """``discretize_cells`` as steps: it yields (the continuous part, the edges whose cdf it
    needs, those whose sf it needs), is sent (cdf there, sf there) and returns the answer (at
    once, without yielding, when there is no continuous part to evaluate). discretize_cells
    evaluates them with the part's own functions; tails_batch.discretize_many evaluates many
    rows' at once with their family (the same values), so both run this very code."""
    if not (h > 0 and math.isfinite(h)):
        raise ValueError(f"mesh h must be positive, got {h!r}")
    fin = prv.finite_mass
    if fin <= 0:
        return DiscretePRV(_EMPTY, 0, h, 0.0, 1.0, 0.0, 0.0), np.zeros(1, np.int64), np.ones(1), 1
    pos: list[np.ndarray] = []  # grid indices of the cells that get mass, and their masses
    val: list[np.ndarray] = []
    moment_cut, moment_cut_err, cut = 0.0, 0.0, 0.0
    c = prv.cont
    coarse_mass, fine_cells, sf_split, edge_max = 0.0, None, 1.0, 0.0
    spread = half_mean = 0.0  # sums of p_j (w_j / 2)^2 (non-coarse) and of p_j w_j / 2 (all)
    by_width: np.ndarray = np.zeros(2)  # mass by width of cell
    w_max = 1
    if c is not None and c.mass > 0:
        # (to 16 of the widest cells there: a few more cells, far fewer cdf evaluations to find it)
        r_out = max((r for p, r in (*tiers, coarse) if r >= 3 and p / 2 > tau), default=1)
        tails: Tails | LatticeTails | None = LatticeTails.of(
            prv, h, tau, [tau, 0.5 * c.mass, *(p / 2 for p, r in (*tiers, coarse) if r >= 3 and p / 2 > tau)])
        if tails is None:
            tails = Tails(c, h, tau) if scan is None else scan
        a, b = tails.lower_cut(tau, 16 * h * r_out), tails.upper_cut(tau, 16 * h * r_out)
        median = tails.lower_cut(0.5 * c.mass, math.inf)  # (left of the median: the scan's point)
        j_lo = math.floor(a / h + 0.5)
        j_hi = max(math.ceil(b / h - 0.5), j_lo)
        if j_hi - j_lo + 2 > max_cells:
            raise GridTooLarge(j_hi - j_lo + 2, max_cells, b - a)
        if not max(abs(j_lo), abs(j_hi)) < 2 ** 62:  # (cells no grid index reaches: losses near 1e300)
            raise GridTooLarge(2 ** 62, max_cells, max(abs(a), abs(b)))
        e_idx = _edges(tails, h, j_lo, j_hi, tau, coarse, tiers)
        edges = (e_idx - 0.5) * h
        edge_max = max(abs(float(edges[0])), abs(float(edges[-1])))
        # split at the last edge below the median: cdf differences left, sf right (each tail
        # keeps its relative precision, and the mass right of the split is at least half,
        # which mass_rounding needs)
        # (k = 0: the first cell holds half the mass, and everything comes from the sf)
        k = min(max(int(np.searchsorted(edges, median, side="right")) - 1, 1), edges.size - 1)
        if k == 1 and float(c.cdf(edges[1:2])[0]) > 0.5 * c.mass:
            k = 0
        left, right = yield c, edges[:k + 1], edges[k:]
        masses = np.concatenate([np.diff(left), -np.diff(right)])
        masses = np.maximum(masses, 0.0)
        cut_lo, cut_hi = float(left[0]), float(right[-1])
        # mass right of the split (inf: no left part, so no term for it in mass_rounding)
        sf_split = float(right[0] - right[-1]) * (1 - 1e-12) if k > 0 else math.inf
        cut = cut_lo + cut_hi
        # first moments of the cut tails: a bounded guess (the tails are ~tau)
        moment_cut = edges[0] * cut_lo + edges[-1] * cut_hi
        moment_cut_err = (abs(edges[0]) + abs(edges[-1]) + 64.0) * cut
        width = np.diff(e_idx)
        pos.append(e_idx[:-1] + (width - 1) // 2)  # (a wide cell's mass at its middle cell)
        val.append(masses)
        is_coarse = width == coarse[1] if coarse[1] >= 3 else None
        if is_coarse is not None and not is_coarse.any():
            is_coarse = None  # (then no cell is coarse: the sums below over all of them)
        w_max = int(width.max()) if is_coarse is None else \
            int(width[~is_coarse].max()) if (~is_coarse).any() else 1
        # the sums below run over the cells with mass only, in order (CellSums: many lattice
        # rows' cells are mostly empty, and lattice_batch.py leaves the empty ones out)
        sums = cell_sums(masses, width, h, coarse[1] if is_coarse is not None else None)
        coarse_mass, spread, half_mean = sums.coarse_mass, sums.spread, sums.half_mean
        by_width = np.bincount(width, weights=masses, minlength=2)
        if w_max > 1 or is_coarse is not None:
            single = np.flatnonzero(width == 1)
            if float(masses[width > 1].sum()) > 0 and single.size:
                fine_cells = (int(e_idx[single[0]]), int(e_idx[single[-1]]) + 1)  # grid indices
    for loc, m in prv.atoms:
        at = loc / h
        if not abs(at) < 2.0 ** 62:  # (an atom no grid index reaches: a pure-DP-like loss of 1e300)
            raise GridTooLarge(2 ** 62, max_cells, abs(loc))
        pos.append(np.array([int(round(at))]))
        val.append(np.array([m]))
        spread += m * (0.5 * h) ** 2
        half_mean += m * 0.5 * h
        by_width[1] += m
    # the cells with mass, in order (a continuous part's are; atoms are added to theirs), as
    # indices and masses: a long row's wide cells leave most of its span empty
    idx = np.concatenate(pos).astype(np.int64)
    mass = np.concatenate(val)
    if len(pos) > 1:
        idx, where = np.unique(idx, return_inverse=True)
        mass = np.bincount(where, weights=mass, minlength=idx.size)
    keep = mass > 0
    return assemble(prv, h, max_cells, coarse, idx[keep], mass[keep],
                    CellStats(moment_cut, moment_cut_err, cut, coarse_mass, fine_cells, sf_split, edge_max,
                              spread, half_mean, by_width, w_max))


class CellSums(NamedTuple):
    """A row's sums over its cells with mass: the coarse cells' mass, sum p_j (w_j / 2)^2 over
    the others, sum p_j w_j / 2 over all."""

    coarse_mass: float
    spread: float
    half_mean: float


def cell_sums(masses: np.ndarray, width: np.ndarray, h: float, coarse_r: int | None) -> CellSums:
    """``CellSums`` of the cells of these masses (>= 0) and widths (in meshes), the cells
    ``coarse_r`` wide being coarse (None: none is). Each a pairwise sum (numpy's, not a BLAS dot:
    the same bits whatever the thread settings) over the cells with mass, in order: one row's
    whole cells (cells_steps) and its cells with mass cut out of many rows' (lattice_batch.py)
    give the same bits."""
    live = masses > 0
    if not live.all():
        masses, width = masses[live], width[live]
    half_w = 0.5 * h * width
    if coarse_r is None:
        return CellSums(0.0, float(np.sum(masses * half_w ** 2)), float(np.sum(masses * half_w)))
    is_coarse = width == coarse_r
    fine = ~is_coarse
    return CellSums(float(masses[is_coarse].sum()), float(np.sum(masses[fine] * half_w[fine] ** 2)),
                    float(np.sum(masses * half_w)))


class CellStats(NamedTuple):
    """What ``assemble`` reads of a row's cells besides their indices and masses (the
    continuous part's, its atoms' added): the cut tails' first moment and its error, their
    mass, the coarse cells' mass, the single-width cells' grid indices [lo, hi) (None: no wide
    cell with mass), the continuous part's mass right of the split, the largest |edge|, the sums
    of p_j (w_j / 2)^2 (non-coarse) and p_j w_j / 2, the mass by width of cell, the widest
    non-coarse cell."""

    moment_cut: float
    moment_cut_err: float
    cut: float
    coarse_mass: float
    fine_cells: tuple[int, int] | None
    sf_split: float
    edge_max: float
    spread: float
    half_mean: float
    by_width: np.ndarray
    w_max: int


def assemble(prv: PRV, h: float, max_cells: int, coarse: tuple[float, int], idx: np.ndarray,
             mass: np.ndarray, st: CellStats) -> tuple[DiscretePRV, np.ndarray, np.ndarray, int]:
    """``discretize_cells``'s answer from the grid indices of the cells with mass, in order, their
    masses and the cells' ``CellStats``: the masses normalised, the shift to the true mean, and
    the certificate's fields (shared by lattice_batch.py, which works the cells out for many
    rows at once: the same operations on the same numbers, so the same bits)."""
    c = prv.cont
    if not idx.size:
        raise ArithmeticError("discretised PRV has no mass; the mechanism is degenerate")
    start, size = int(idx[0]), int(idx[-1] - idx[0]) + 1
    if size + 2 > max_cells:  # atoms far apart on a fine mesh (pure DP at epsilon 1e6)
        raise GridTooLarge(size + 2, max_cells, size * h)
    nz = idx - start
    kept = float(mass.sum())
    mass = mass / kept  # (a new array: ``mass`` may be a view of many rows' masses)
    idx_mean = float((mass * nz).sum())  # (the method: np.sum's own sum, without its wrapper)
    disc_mean = (start + idx_mean) * h
    true_mean = (prv.mean - st.moment_cut) / kept
    shift = true_mean - disc_mean
    # the computed cdf at an edge is that of a point within a few ulps of it (the PRV's
    # inverse of the loss): cells move by at most that much, which widens D's range
    bias = ((prv.mean_err + st.moment_cut_err) / kept
            + 8 * _ULP * (abs(true_mean) + h * (abs(start) + size)) + 64 * _ULP * (1.0 + st.edge_max))
    r = coarse[1] if st.coarse_mass > 0 else 1
    coarse_prob = st.coarse_mass / kept
    # |s| = |E[Y~ - s - Y^L]| <= E[w_J / 2]: the cells' mean half-width
    if not abs(shift) <= max(0.5 * h, st.half_mean / kept) * (1 + 1e-6) + bias:
        raise ArithmeticError(
            f"the discretised PRV's mean is off by {shift:.3g} (mesh {h:.3g}); the mechanism's "
            "mean could not be computed accurately enough for these parameters")
    tail_prob = st.cut / prv.finite_mass
    widen = 1 + 128 * _ULP * (1.0 + st.edge_max) / h
    by_width = st.by_width
    ws = (by_width > 0).nonzero()[0]  # (each width's (half-width, probability), worked out together)
    classes = tuple(zip((0.5 * ws * h * widen).tolist(), (by_width[ws] / kept * (1 + 1e-12)).tolist()))
    fine = sparse = None
    if st.fine_cells is not None:
        fine = (max(0, st.fine_cells[0] - start), min(size, st.fine_cells[1] - start))
        sparse = nz[(nz < fine[0]) | (nz >= fine[1])]
    stub = DiscretePRV(_EMPTY, start, h, shift, prv.inf_mass, tail_prob, bias, coarse_prob,
                       r * h / 2 if coarse_prob > 0 else 0.0, fine, sparse, int(round(idx_mean)),
                       mass_rounding(st.sf_split / c.mass if c is not None and c.mass > 0 else math.inf,
                                     size, bool(prv.atoms)),
                       st.spread / kept * (1 + 1e-12) * widen ** 2, st.w_max * h, classes)
    return stub, nz, mass, size


def discretize(prv: PRV, h: float, tau: float, max_cells: int = 2 ** 26,
               coarse: tuple[float, int] = (0.0, 1),
               progress: Callable[[float], None] | None = None,
               tiers: tuple[tuple[float, int], ...] = ()) -> DiscretePRV:
    """Discretise ``prv`` on mesh ``h``, cutting at most ``tau`` of mass from each tail, with
    cells r h wide beyond the points where each tail holds p / 2 (``coarse`` = (p, r), r odd;
    see ``coarse_plan``), and r_i h wide beyond the points where it holds p_i / 2 (``tiers``,
    (p_i, r_i) with odd r_i < r; module docstring). ``progress`` hears the fraction of the
    cdf evaluations done.

    Raises ``GridTooLarge`` (a MemoryError) instead of allocating more than ``max_cells``.
    """
    stub, nz, mass, size = discretize_cells(prv, h, tau, max_cells, coarse, progress, tiers)
    pmf = np.zeros(size)
    pmf[nz] = mass
    return stub.with_pmf(pmf)


def mass_rounding(sf_split: float, cells: int, atoms: bool = False) -> float:
    """Relative change of a composed delta(eps) per draw from the rounding of one row's masses.

    Masses are differences of computed cdf values left of the split edge k and of sf values
    right of it. Trusted accuracy (test_prv_contract checks it against mpmath): the sf to a
    relative k u, |e_j| <= k u sf_j, and the cdf to an absolute k u M (M the continuous part's
    mass, so a part of tiny mass, a Laplace loss at eps0 = 1e-7 say, needs its cdf to relative
    accuracy), each at a point within 64 ulps of the edge (``bias`` covers that shift). The
    composed delta is sum_j p_j G(y_j), G the delta of the other draws at eps - y:
    nondecreasing, in [0, 1]. Summing by parts on the right, sum_j (e_j - e_{j+1}) G_j is at
    most k u (sf_k G_k + sum_j sf_j (G_j - G_{j-1})) + k u sf_n <= 2 k u delta + k u (cut
    tail). On the left it is at most 3 k u M G_{k-1}, and delta >= sf_k G_{k-1}; ``sf_split``
    is sf_k / M, at least 1/2 as the split is at the part's median (inf when the first cell
    holds half the mass: then there is no left part). Atoms' masses are trusted to a relative
    k u, which changes delta by at most k u delta. Subtraction, clipping and normalisation (a
    pairwise sum) add (log2(cells) + 4) u. Hence a relative
    u (k (2 + 3 / sf_split + [atoms]) + log2(cells) + 4) per draw; the cut tail's k u tau is
    inside the truncation term. ``mass_factors`` composes it over the draws."""
    u = _ULP / 2
    cont = 2.0 + 3.0 / sf_split if sf_split > 0 else math.inf
    return u * (CDF_ULPS * (cont + float(atoms)) + math.log2(max(cells, 2)) + 4.0)


def mass_factors(parts: list[tuple[DiscretePRV, int]]) -> tuple[float, float]:
    """(lo, hi) with lo delta~ <= delta~_exact <= hi delta~ for every eps: delta~ composed from
    the rows' computed masses, delta~_exact from their exact ones.

    Rounding one draw's masses changes the composed delta by at most a relative r (its
    ``mass_rel``) of the delta before the change, whatever the other draws' masses are. Changing
    the draws one at a time, delta~ lies in [(1 - r)^k, (1 + r)^k] delta~_exact for k draws of
    that row: the factors multiply. (Their sum k r, used before, is too small on the upper
    side once k r is not small.) hi is inf when some r >= 1."""
    log_lo = log_hi = 0.0
    for d, k in parts:
        r = d.mass_rel
        if k > 0 and r > 0:
            log_lo -= k * math.log1p(r)
            log_hi = -k * math.log1p(-r) + log_hi if r < 1 else math.inf
    return math.exp(log_lo), (math.exp(log_hi) if log_hi < 709.0 else math.inf)


class Tails:
    """A continuous part's tails scanned once, outwards from its centre on points 2^(1/16) apart
    in distance (from one mesh step on), down to ``tau``; ``lower_cut`` and ``upper_cut`` as
    Continuous's, answered from the scan when ``tol`` allows (the first point beyond the
    crossing), else searched within the scan's bracket."""

    STEPS = 16  # points per doubling of the distance

    def __init__(self, c, h: float, tau: float) -> None:
        quick = c.quick
        self._set(c, self._scan(c, c.cdf, -1.0, c.lo, h, tau, quick[0]),
                  self._scan(c, c.sf, 1.0, c.hi, h, tau, quick[1]))

    @classmethod
    def of_scans(cls, c, left: tuple[np.ndarray, np.ndarray], right: tuple[np.ndarray, np.ndarray]) -> "Tails":
        """The Tails whose scans (points, values) are ``left`` and ``right`` (tails_batch.py's,
        made for many rows at once)."""
        t = cls.__new__(cls)
        t._set(c, left, right)
        return t

    def _set(self, c, left, right) -> None:
        self.c, self.left, self.right = c, left, right
        # each scan's running minimum, negated: nondecreasing, so the first point at or below a
        # tau (the first whose minimum is) is one binary search, for many taus at once (a NaN,
        # never at or below tau, counts as +inf)
        self._keys = tuple(-np.minimum.accumulate(np.where(np.isnan(v), np.inf, v))
                           for v in (self.left[1], self.right[1]))

    @classmethod
    def first_block(cls, c, direction: float, end: float, h: float, quick: float) -> int:
        """The points a scan evaluates in its first call."""
        block = 4 * cls.STEPS
        centre = c.centre
        if math.isfinite(end) and direction * (end - centre) > h:  # (up to the support's end: at once)
            block = int(math.ceil(cls.STEPS * math.log2(direction * (end - centre) / h))) + 1
            if math.isfinite(quick) and h < direction * (quick - centre) < direction * (end - centre):
                # (first to the last point where the functions are quick: Continuous.quick)
                block = int(math.floor(cls.STEPS * math.log2(direction * (quick - centre) / h))) + 1
        return block

    @classmethod
    def next_block(cls, c, direction: float, end: float, h: float, j0: int, block: int) -> int:
        """The points of a scan's next call, ``j0`` of them made so far (``block`` the last)."""
        if math.isfinite(end):  # (the rest of a finite tail at once)
            return max(1, int(math.ceil(cls.STEPS * math.log2(direction * (end - c.centre) / h))) + 1 - j0)
        return block

    @classmethod
    def _scan(cls, c, tail, direction: float, end: float, h: float, tau: float, quick: float = math.inf):
        xs, vals, j0 = [], [], 0
        centre = c.centre
        # (four doublings a call: a kind's tail is not evaluated much beyond its crossing, where
        # some overflow, e.g. the shuffled pair's hazard at a loss of 1e12 nats)
        block = cls.first_block(c, direction, end, h, quick)
        while True:
            dist = h * 2.0 ** ((j0 + np.arange(block)) / cls.STEPS)
            x = centre + direction * dist
            past = np.flatnonzero(direction * (x - end) >= 0) if math.isfinite(end) else np.zeros(0, int)
            if past.size:
                x = np.append(x[:int(past[0])], end)
            v = np.asarray(tail(x), dtype=float)
            xs.append(x)
            vals.append(v)
            if past.size or v[-1] <= tau:
                break
            j0 += block
            block = cls.next_block(c, direction, end, h, j0, block)
            if dist[-1] > 1e16 + abs(centre):  # (prv._search's limit, and its message)
                raise ArithmeticError("PRV tail does not decay; cannot truncate")
        return np.concatenate(xs), np.concatenate(vals)

    def _cut(self, upper: bool, tau: float, tol: float, i: int | None = None) -> float:
        xs = self.right[0] if upper else self.left[0]
        tail, direction = (self.c.sf, 1.0) if upper else (self.c.cdf, -1.0)
        if i is None:
            i = int(np.searchsorted(self._keys[upper], -tau, side="left"))
        if i == xs.size:  # (beyond the scan: the support's end, or a tau below the scan's)
            return _search(tail, tau, float(xs[-1]), self.c.hi if upper else self.c.lo, direction, tol)
        far = float(xs[i])
        near = float(xs[i - 1]) if i > 0 else self.c.centre
        if abs(far - near) <= tol:
            return far
        return _search(tail, tau, near, far, direction, tol)

    def lower_cut(self, tau: float, tol: float = 0.0) -> float:
        return self._cut(False, tau, tol)

    def upper_cut(self, tau: float, tol: float = 0.0) -> float:
        return self._cut(True, tau, tol)

    def cuts(self, upper: bool, taus: Sequence[float]) -> list[float]:
        """``upper_cut`` (or ``lower_cut``) of each tau with tol = inf: the scan's first point
        at or below it, found for all of them in one search."""
        first = np.searchsorted(self._keys[upper], -np.asarray(taus, dtype=float), side="left")
        return [self._cut(upper, t, math.inf, int(i)) for t, i in zip(taus, first)]


class LatticeTails:
    """``Tails``'s cut points read from a lattice PRV's own tables (pairs/lattice.py,
    Lattice.cut) instead of scanned: each halfway between two lattice points, so that the
    lattice index the cdf and sf read there is the one the cut names whatever the rounding of
    the values; the lower one has cdf <= tau, the upper one sf <= tau (as Tails' points). The
    tail masses a discretisation asks for (``taus``) are read in one call; a tail mass the tables
    do not answer goes to a Tails scan. ``of`` gives None for a PRV without such tables."""

    def __init__(self, prv: PRV, h: float, tau: float, taus: Sequence[float] = ()) -> None:
        self.lat = prv.lattice  # type: ignore[attr-defined]
        self._args = (prv.cont, h, tau)
        self._scan: Tails | None = None
        self._known: dict[float, tuple[float, float]] = {}
        self._read(taus)

    @staticmethod
    def of(prv: PRV, h: float, tau: float, taus: Sequence[float] = ()) -> "LatticeTails | None":
        lat = getattr(prv, "lattice", None)
        if prv.atoms or lat is None or lat.cut is None or prv.cont is None:
            return None
        return LatticeTails(prv, h, tau, taus)

    def _read(self, taus: Sequence[float]) -> None:
        if not len(taus):
            return
        asked = np.asarray(taus, dtype=float)
        lo, hi, ok = self.lat.cut(asked)
        half = 0.5 * self.lat.step
        a, b = self.lat.values(lo) + half, self.lat.values(hi) + half
        for t, x, y, fine in zip(asked.tolist(), a.tolist(), b.tolist(), ok.tolist()):
            if fine:
                self._known[t] = (x, y)

    def _point(self, upper: bool, tau: float, tol: float) -> float:
        if tau not in self._known:
            self._read([tau])
        got = self._known.get(tau)
        if got is not None:
            return got[int(upper)]
        if self._scan is None:
            self._scan = Tails(*self._args)
        return self._scan.upper_cut(tau, tol) if upper else self._scan.lower_cut(tau, tol)

    def lower_cut(self, tau: float, tol: float = 0.0) -> float:
        return self._point(False, tau, tol)

    def upper_cut(self, tau: float, tol: float = 0.0) -> float:
        return self._point(True, tau, tol)

    def cuts(self, upper: bool, taus: Sequence[float]) -> list[float]:
        return [self._point(upper, t, math.inf) for t in taus]


def _within(r: int, room: int) -> int:
    """Width r, or the widest odd width that fits in ``room`` cells when r does not (a
    narrower cell is always allowed; a wider one would reach past the cut)."""
    if r <= room:
        return r
    r = max(1, room)
    return r - 1 + r % 2


def _edges(c: "Cuts", h: float, j_lo: int, j_hi: int, tau: float, coarse: tuple[float, int],
           tiers: tuple[tuple[float, int], ...] = ()) -> np.ndarray:
    """Cell indices of the edges (edge i at (e_i - 1/2) h), the tier points read from the tail
    scans ``c``: single cells from j_lo to j_hi, or
    r_i cells at a time beyond the points where the tails hold p_i / 2 (``tiers`` and then
    ``coarse``, each (p, r) with odd r, r increasing and p decreasing). A cell r_i wide lies
    wholly beyond tier i's point on its side."""
    pieces = edge_pieces(c, h, j_lo, j_hi, tau, coarse, tiers)
    if len(pieces) == 1:
        return np.arange(j_lo, j_hi + 2)
    return np.concatenate([first + step * np.arange(n) for first, step, n in pieces])


class Cuts(Protocol):
    """What ``edge_pieces`` reads of a row's tails: the cut point of each tail mass (Tails,
    LatticeTails; lattice_batch._pieces works the same runs out from its rows' cut points)."""

    def cuts(self, upper: bool, taus: Sequence[float]) -> list[float]: ...


def edge_pieces(c: Cuts, h: float, j_lo: int, j_hi: int, tau: float,
                coarse: tuple[float, int], tiers: tuple[tuple[float, int], ...] = ()
                ) -> list[tuple[int, int, int]]:
    """``_edges``'s cell indices as runs (first, step, count), in order: a run of each tier's
    cells on the left, the single cells, a run of each tier's cells on the right (runs may be
    empty)."""
    use = [(p, r) for p, r in (*tiers, coarse) if r >= 3 and p / 2 > tau]
    if not use:
        return [(j_lo, 1, j_hi + 2 - j_lo)]
    # fine cells from j_a[0] to j_b[0]; tier i beyond j_a[i] and j_b[i]
    j_a: list[int] = []
    j_b: list[int] = []
    for x in c.cuts(False, [p / 2 for p, _ in use]):
        a = max(j_lo, min(j_hi, math.floor(x / h + 0.5)))
        j_a.append(min(a, j_a[-1]) if j_a else a)
    for x in c.cuts(True, [p / 2 for p, _ in use]):
        b = min(j_hi, max(j_a[0], math.ceil(x / h - 0.5)))
        j_b.append(max(b, j_b[-1]) if j_b else b)
    left, right = [], []
    e = j_a[0]
    for i, (_, r) in enumerate(use):
        stop = max(j_a[i + 1] if i + 1 < len(use) else j_lo, j_lo)
        r = _within(r, e - j_lo)
        n = -(-(e - stop) // r) if e > stop else 0
        left.append((e - r * n, r, n))  # (e - r n, ..., e - r)
        e -= n * r
        if e <= j_lo:
            break
    e = j_b[0] + 1
    for i, (_, r) in enumerate(use):
        stop = min(j_b[i + 1] + 1 if i + 1 < len(use) else j_hi + 1, j_hi + 1)
        r = _within(r, j_hi + 1 - e)
        n = -(-(stop - e) // r) if stop > e else 0
        right.append((e + r, r, n))  # (e + r, ..., e + r n)
        e += n * r
        if e >= j_hi + 1:
            break
    return [*left[::-1], (j_a[0], 1, j_b[0] + 2 - j_a[0]), *right]
