"""Exponential tilting: the far tail of a composition below float64's absolute floor.

A composition computed by FFT carries an absolute round-off of about 1e-14 spread over the whole
window (compose.py), so delta~(eps) cannot be resolved below that: at delta = 1e-15 the
certified bracket is unbounded above. Tilting moves the tail that matters to the middle.

For a discrete row with masses p_j at values y_j and lambda > 0 let
q_j = p_j e^{lambda y_j} / M with M = sum_j p_j e^{lambda y_j}. Convolution commutes with
tilting: if r is the composition of the p's (row i taken k_i times) and r^lambda that of the q's,

    r(y) = e^{L - lambda y} r^lambda(y),    L = sum_i k_i log M_i,

for every value y of the composed sum. With lambda chosen so that the tilted composition's mean
is the epsilon of interest, r^lambda holds the tail near that epsilon at full float64 precision.

Error in the untilted tail sums. Let dr be the error of the computed r^lambda (round-off,
window, aliasing): compose.py bounds every tail sum |sum_{j >= i} dr_j| and every sum weighted
by 1 - e^{eps - y_j} by E_lambda (its ``err_abs``). delta~(x) = sum_{y_j > x} w_j r^lambda_j with
w_j = e^{L - lambda y_j} (1 - e^{x - y_j}): on y_j > x, w rises from 0 to at most e^{L - lambda x}
and falls again, so summing by parts its error is at most

    E(x) = 2 e^{L - lambda x} E_lambda,

an additive error that shrinks as x grows (profile.CertifiedProfile takes it as
``tilt_log_a`` = log(2 E_lambda) + L and ``tilt_lam``). Mass the window cuts above its top
counts the same way (e^{L - lambda y} <= e^{L - lambda x} there).

Where e^{L - lambda y} is huge (far below the tilted mean) the composition is dropped; delta~(x)
is then exact only for x at or above the first value kept (``valid_from``): below it the
computed delta~ is too small, which the lower bound may use (it only gets lower) but the upper
bound may not (profile.py answers 1 there).

Relative errors, each a factor on every composed mass: the tilted masses' rounding (a few ulps
times the exponent's size per draw, composed over the K draws as in discretize.mass_factors),
the final exponential, and the aggregation: a block of d cells read at its centre holds values
within ``agg`` of it, whose factors e^{-lambda y} differ from the centre's by e^{+-lambda agg}.
"""
from __future__ import annotations

import math
from dataclasses import replace
from typing import Sequence

import numpy as np
from scipy.optimize import brentq

from .compose import N_MAX, Composed, row_blocks
from .discretize import DiscretePRV
from .packed import LazyRow, PackedRow, Row, dense, let_go_summaries
from .sums import dot
from .fits_many import row_summary as _summary
from .tree import check_grids, compose_many, many
from .tilt_batch import tilt_many
from .window import PreparedRow, blocks_many

_U = 2.0 ** -53
#: the untilted composition is kept where e^{L - lambda y} <= e^LOG_CUT (its error is vacuous below)
LOG_CUT = 200.0
#: the tilting parameters tried (the tilted mean rises with lambda; any lambda is valid)
LAMBDA_MIN, LAMBDA_MAX = 1e-6, 1e4
#: the tilted composition is aggregated (compose.py) only as far as e^{lambda agg} <= 1 + AGG_REL
AGG_REL = 1e-3
#: the most tilted mass the composition window may leave out (tilted_window_mass)
WINDOW_MAX = 1e-9


def tilted_mean(blocks: Sequence[tuple[tuple, int]], lam: float) -> float:
    """The mean of the composition tilted by ``lam``, from the rows' block summaries
    (window.cgf_blocks: block masses and means; an approximation, which only steers lambda)."""
    total = 0.0
    for (logp, centres, _), k in blocks:
        e = logp + lam * centres
        w = np.exp(e - e.max())
        total += k * (dot(w, centres) / float(w.sum()))
    return total


#: the blocks a row is summarised by when choosing Chernoff's lambda (it only steers), and the
#: the root finder's tolerance in log lambda (a factor 1 + 2e-8)
STEER_BLOCKS, STEER_XTOL = 256, 2e-8
#: the smallest lambda choose_lambda_for_delta returns
_LAM_LO = 1e-4


def row_summaries(rows: Sequence[tuple[Row, int]]) -> list:
    """Each row's block summary (None: drawn 0 times, or no finite mass), in order."""
    got = _packed_summaries([r if k > 0 else None for r, k in rows])
    return [None if k <= 0 else got.get(i) or _summary(r, STEER_BLOCKS) for i, (r, k) in enumerate(rows)]


def stacked_blocks(rows: Sequence[tuple[Row, int]], summaries: list | None = None):
    """Every row's block summary in one array (log masses, values, count per block) and the
    first block of each row, so that one pass evaluates the whole composition. ``summaries``:
    row_summaries(rows), when the caller has them."""
    summaries = row_summaries(rows) if summaries is None else summaries
    parts = [(b, k) for b, (_, k) in zip(summaries, rows) if b is not None]
    if not parts:
        return None
    logp = np.concatenate([b[0] for b, _ in parts])
    y = np.concatenate([b[1] for b, _ in parts])
    sizes = np.array([b[0].size for b, _ in parts])
    k = np.array([float(k) for _, k in parts])
    return logp, y, np.concatenate([[0], np.cumsum(sizes)[:-1]]), k


#: packed rows summarised together (window.blocks_many) by stacked_blocks: their cells side by side
SUMMARY_ROWS = 64


def _packed_summaries(rows: Sequence[Row | None]) -> dict[int, tuple]:
    """_summary of each packed row with cells, by place, SUMMARY_ROWS rows at a time: the same
    summaries as one by one (window.blocks_many), without a few NumPy calls a row."""
    at = [i for i, r in enumerate(rows) if isinstance(r, PackedRow) and r.idx.size]
    out: dict[int, tuple] = {}
    for j in range(0, len(at), SUMMARY_ROWS):
        part = at[j:j + SUMMARY_ROWS]
        packed = [rows[i] for i in part]
        got = blocks_many([p.stub for p in packed], [p.cells for p in packed], [STEER_BLOCKS] * len(part),  # type: ignore[union-attr]
                          np.concatenate([p.idx for p in packed]), np.concatenate([p.vals for p in packed]),  # type: ignore[union-attr]
                          np.array([p.idx.size for p in packed]))  # type: ignore[union-attr]
        out.update(zip(part, got))
    return out


#: cgf_and_mean works through this many blocks at a time (its temporaries, five arrays of them,
#: stay a few MB: 10^5 streamed rows' 6.4 x 10^6 blocks at once raised the peak by 0.34 GB)
CGF_CHUNK = 1 << 18


def cgf_and_mean(stacked, lam: float) -> tuple[float, float]:
    """(log E[e^{lam S}], the mean of S tilted by lam) from the stacked block summaries. Each
    row's terms are worked out a chunk of rows at a time (the same values as all at once: the
    reductions run within a row) and summed over the rows at the end."""
    logp, y, first, k = stacked
    ends = np.append(first[1:], logp.size)
    log_mgf, mean = np.empty(first.size), np.empty(first.size)
    lo = 0
    while lo < first.size:
        hi = max(lo + 1, int(np.searchsorted(ends, int(first[lo]) + CGF_CHUNK, side="right")))
        a, b = int(first[lo]), int(ends[hi - 1])
        at = first[lo:hi] - a
        e = logp[a:b] + lam * y[a:b]
        top = np.maximum.reduceat(e, at)
        w = np.exp(e - np.repeat(top, np.diff(np.append(at, e.size))))
        s = np.add.reduceat(w, at)
        log_mgf[lo:hi] = top + np.log(s)
        mean[lo:hi] = np.add.reduceat(w * y[a:b], at) / s
        lo = hi
    return float(np.dot(k, log_mgf)), float(np.dot(k, mean))


def choose_lambda_for_delta(rows: Sequence[tuple[Row, int]], delta: float,
                            stacked=None) -> float | None:
    """Chernoff's lambda for ``delta``: the one minimising g(lam) = (log E[e^{lam S}] + log(1 /
    delta)) / lam, whose tilted mean is Chernoff's bound on epsilon(delta), a little above the
    truth. With f = log E[e^{lam S}] (convex, f(0) = 0), g' has the sign of lam f' - f -
    log(1 / delta), which rises with lam (its derivative is lam f''): Brent's method in log lam
    on it, over the rows' block summaries stacked into one array (one pass per step, for
    any number of rows; ``stacked``: stacked_blocks(rows) when the caller has it)."""
    stacked = stacked_blocks(rows) if stacked is None else stacked
    if stacked is None or not 0 < delta < 1:
        return None
    c = -math.log(delta)

    def slope(u: float) -> float:  # (the sign of g' at lam = e^u; NaN taken as not rising)
        lam = math.exp(u)
        f, mean = cgf_and_mean(stacked, lam)
        v = lam * mean - f - c
        return min(max(v, -1e300), 1e300) if v == v else -1.0

    lo, hi = math.log(_LAM_LO), math.log(LAMBDA_MAX)
    if slope(lo) > 0:
        return _LAM_LO
    if not slope(hi) > 0:
        return LAMBDA_MAX
    # (Brent's root finder on the rising slope: about 15 passes where bisection took 30, to the
    # same tolerance in log lambda)
    return math.exp(brentq(slope, lo, hi, xtol=STEER_XTOL, maxiter=200))


def _cells(d: DiscretePRV) -> tuple[np.ndarray, np.ndarray, float]:
    """A row's nonzero cells as (log masses, values, 0): the exact "blocks" of tilted_mean."""
    nz = np.flatnonzero(d.pmf)
    return np.log(d.pmf[nz]), (d.start + nz) * d.h + d.shift, 0.0


def _tilted_moments(cells: Sequence[tuple[tuple, int]], lam: float) -> tuple[float, float]:
    """(mean, variance) of the composition tilted by ``lam``, over the rows' exact cells; the
    variance is the mean's derivative in lambda."""
    mean = var = 0.0
    for (logp, y, _), k in cells:
        e = logp + lam * y
        w = np.exp(e - e.max())
        w /= w.sum()
        m = dot(w, y)
        mean += k * m
        var += k * dot(w, np.square(y - m))
    return mean, var


def choose_lambda(rows: Sequence[tuple[Row, int]], target: float) -> float | None:
    """The lambda whose tilted composition has its mean near ``target`` (None: the target is
    not above the untilted mean, where there is no tail to tilt towards), on the exact tilted
    mean over the rows' cells (block means cannot follow a large lambda, which tilts within a
    block too). Newton's steps on the mean, whose derivative is the tilted variance, kept
    inside a bracket that bisection in log lambda narrows when a step would leave it: 3 to 5
    passes over the cells (two at the bracket's ends) where bisection took 32 (each pass over millions of cells at a tiny
    delta). Any lambda is valid; this one only makes the bracket tight."""
    # (streamed rows stand in by their block summaries: holding every row's cells at once is
    # what streaming avoids; the block means steer lambda less closely, which only widens)
    cells = [(c, k) for c, k in ((r.blocks if isinstance(r, LazyRow) else _cells(dense(r)), k)
                                 for r, k in rows if k > 0) if c is not None and c[0].size]
    if not cells or not math.isfinite(target):
        return None
    mean, var = _tilted_moments(cells, LAMBDA_MIN)
    if mean >= target:
        return None
    if _tilted_moments(cells, LAMBDA_MAX)[0] <= target:
        return LAMBDA_MAX
    lo, hi = math.log(LAMBDA_MIN), math.log(LAMBDA_MAX)  # mean(e^lo) < target < mean(e^hi)
    # the first step from the rows' block summaries (2048 blocks a row): their tilted mean
    # follows the exact one closely enough to start Newton's steps near the answer
    blocks = [(b, k) for b, k in ((_summary(r, 2048), k) for r, k in rows if k > 0) if b is not None]
    a, b = lo, hi
    for _ in range(40):
        mid = 0.5 * (a + b)
        a, b = (mid, b) if tilted_mean(blocks, math.exp(mid)) < target else (a, mid)
    u = 0.5 * (a + b)
    mean, var = _tilted_moments(cells, math.exp(u))
    lo, hi = (u, hi) if mean < target else (lo, u)
    for _ in range(60):
        slope = math.exp(u) * var  # d mean / d log lambda
        nxt = u + (target - mean) / slope if slope > 0 else math.inf
        if abs(nxt - u) <= 1e-9:  # (bisection's 30 halvings left a factor 1 + 2e-8)
            return math.exp(nxt)
        if not lo < nxt < hi:
            nxt = 0.5 * (lo + hi)
        u = nxt
        mean, var = _tilted_moments(cells, math.exp(u))
        if mean < target:
            lo = u
        else:
            hi = u
        if hi - lo < 1e-9:
            break
    return math.exp(u)


def tilt_row(row: Row, lam: float) -> tuple[DiscretePRV, float, float, float]:
    """(the row tilted by ``lam``, log M, a bound on each tilted mass's relative rounding, a
    bound on the tilted mass lost to underflow): tilt_batch.tilt_many of the row alone, without
    its summary. A packed row is tilted from its nonzero cells, which are those of its array of
    cells, in the same order: the same numbers."""
    t = tilt_many([row], lam, None)[0]
    return t.row, t.log_m, t.rel, t.lost


class Tilting:
    """Tilts rows by ``lam`` one at a time (``row``) or a group at a time (``rows``) and sums
    what untilt needs over them: L, the per-draw relative roundings composed over the draws (as
    a log factor), the lost mass, the sum of k |log M| (``info``)."""

    def __init__(self, lam: float) -> None:
        self.lam = lam
        self.log_m = self.log_rel = self.lost = self.mag = 0.0

    def row(self, row: tuple[Row, int]) -> tuple[DiscretePRV, int]:
        t, k, _ = self.rows([row])[0]
        return t, k

    def rows(self, rows: Sequence[tuple[Row, int]]) -> list[tuple[DiscretePRV, int, PreparedRow | None]]:
        """``row`` of each row, tilted together (tilt_batch.py), each with its PreparedRow for
        its group's window (its summary made in the same pass; None: it has none)."""
        got = tilt_many([d for d, _ in rows], self.lam, [row_blocks(k) for _, k in rows])
        out: list[tuple[DiscretePRV, int, PreparedRow | None]] = []
        for t, (_, k) in zip(got, rows):
            self.log_m += k * t.log_m
            self.mag += k * abs(t.log_m)
            # ((1 - rel)^-k >= each factor's k-th power; a rounding as large as the masses
            # themselves, losses near 1e11 at a large lambda, bounds nothing: an infinite factor)
            self.log_rel += k * math.log1p(t.rel / (1 - t.rel)) if t.rel < 1 else math.inf
            self.lost += k * t.lost
            prep = None if t.summary is None else PreparedRow(t.row, row_blocks(k), t.summary)
            out.append((t.row, k, prep))
        return out

    def info(self) -> dict:
        return {"lam": self.lam, "L": self.log_m, "log_rel": self.log_rel, "lost": self.lost, "mag": self.mag}


def tilt_rows(rows: Sequence[tuple[DiscretePRV, int]], lam: float
              ) -> tuple[list[tuple[DiscretePRV, int]], dict]:
    """The rows tilted by ``lam`` and what untilt needs (Tilting)."""
    tilting = Tilting(lam)
    out = [tilting.row(r) for r in rows]
    return out, tilting.info()


def untilt(c: Composed, info: dict) -> Composed:
    """The untilted composition above ``valid_from``, with the tilted errors turned into the
    profile's lambda-dependent additive term and its relative factors (module docstring)."""
    lam, big_l = info["lam"], info["L"]
    y = c.values
    g = big_l - lam * y
    keep = np.flatnonzero(g <= LOG_CUT)
    if keep.size == 0:  # nothing resolvable: no mass, exact nowhere (the bounds are vacuous)
        parts = {**c.parts, "tilt_lambda": lam, "tilt_log_scale": big_l, "tilt_fp_abs": math.inf}
        return replace(c, pmf=np.zeros(1), n_start=c.n_start + y.size - 1, err_abs=0.0, parts=parts,
                       tilt_lam=lam, tilt_log_a=1e300, valid_from=math.inf)  # (an infinite error)
    i0 = int(keep[0])
    pmf = c.pmf[i0:] * np.exp(g[i0:])
    arg = float(np.max(np.abs(g[i0:])))
    # L's rounding (each k log M to an ulp or two), lam * y's, the exponential's
    rel_exp = _U * (4.0 * info["mag"] + 4.0 * abs(lam) * float(np.max(np.abs(y))) + 2.0 * arg + 4.0)
    # (a rounding of 100% or more, e.g. 10^9 draws of losses near 1e7 nats: no relative bound)
    log_factor = info["log_rel"] + lam * c.agg + (math.log1p(rel_exp / (1 - rel_exp)) if rel_exp < 1
                                                  else math.inf)
    # (1 - fp) <= computed / exact <= 1 / (1 - fp) for the profile's factors
    fp = 1.0 - (1.0 - c.err_rel) * math.exp(-log_factor) if c.err_rel < 1 else 1.0
    e_lam = c.err_abs + info["lost"]
    log_a = math.log(2.0 * e_lam) + big_l if e_lam > 0 else -math.inf
    parts = {**c.parts, "tilt_lambda": lam, "tilt_log_scale": big_l, "tilt_fp_abs": e_lam}
    return replace(c, pmf=pmf, n_start=c.n_start + i0, err_abs=0.0, err_rel=fp, parts=parts,
                   tilt_lam=lam, tilt_log_a=log_a, valid_from=float(y[i0]))


def compose_tilted(rows: Sequence[tuple[Row, int]], target: tuple[str, float], window_mass: float,
                   consume: bool = False, **kwargs) -> Composed | None:
    """The composition of ``rows`` tilted towards ``target`` and read back (compose.compose's
    keyword arguments pass through); None when there is no tail to tilt towards. ``target`` is
    ("eps", x): the tilted mean at x, or ("delta", d): Chernoff's lambda for d. The rows are
    tilted as they are composed (tree.compose_many: a group at a time when there are many;
    ``consume`` as there: a list the caller gives up once a tilt is chosen)."""
    kind, value = target
    summaries = row_summaries(rows)
    stacked = stacked_blocks(rows, summaries)
    lam = choose_lambda_for_delta(rows, value, stacked) if kind == "delta" else choose_lambda(rows, value)
    if lam is None or stacked is None:
        return None
    tilting = Tilting(lam)
    # aggregation costs a factor e^{lam agg} (module docstring): keep it below 1 + AGG_REL
    kwargs["agg_max"] = min(kwargs.get("agg_max", 0.0), AGG_REL / lam)
    mass = tilted_window_mass(*cgf_and_mean(stacked, lam), lam, window_mass)
    given = rows if consume and isinstance(rows, list) else list(rows)
    del stacked
    # (grids too long for many rows: found now, from their summaries tilted by lambda, not once
    # every row is tilted, nor once the tree is under way: tree.check_grids)
    checked = many(given)
    if checked:
        check_grids(given, mass, kwargs.get("n_max", N_MAX), kwargs["agg_max"], lam, summaries)
    del summaries
    if consume:  # (the streamed rows' block summaries steered lambda and the window: done)
        let_go_summaries(given)
    return untilt(compose_many(given, mass, leaf=tilting.rows, consume=consume, checked=checked, **kwargs),
                  tilting.info())


def tilted_window_mass(big_l: float, m: float, lam: float, mass: float) -> float:
    """The window mass for the tilted composition that costs the untilted one ``mass`` near the
    tilted mean m: a tilted mass w outside the window becomes an untilted error of at most
    2 e^{L - lambda x} w at x (module docstring), so w = mass e^{-(L - lambda m)} / 2 (and no more
    than WINDOW_MAX, no less than ``mass``). Far below the tilted mean the error then grows as
    e^{lambda (m - x)}, which the certified bounds carry. L and m come from the rows' block
    summaries (an approximation: the window's mass is a choice, and untilt charges the error
    with the exact L)."""
    log_w = math.log(mass / 2) - (big_l - lam * m)
    return max(mass, min(WINDOW_MAX, math.exp(min(log_w, 0.0))))
