"""The one certified pipeline: mesh, tail cuts, discretisation, composition, certificate.

Single queries and curves (accountant.py), the steps sweep (sweep.py) and, through them,
calibration build every certified number with these functions, so that a change to the
certificate reaches all of them.

Method (Gopi, Lee, Wutschitz 2021, Thm 5.5, made explicit): for K draws in all and coupling
distance t = 0.88 * eps_error the mesh is

    h = 0.96 t * sqrt(2 / (K log(1/E_h)))

so that, by Hoeffding's inequality on the K independent discretisation errors (each in an
interval of width h, mean zero up to the computed ``bias``), the discretised sum differs from
the true sum by more than t with probability at most E_h. The other 4% of t pays for coarse
cells in the rows' far tails (discretize.py). Row tails are cut at tau_i = E_tr (1 - delta_i) /
(2K) per side (a union bound over all K draws) and the composition window is chosen by
Chernoff's bound with mass E_w; E_h = E_tr = E_w = err / 4 at error level ``err``. Up to 6%
of eps_error goes to reading the result on a coarser mesh (compose.py, aggregation); the
remaining 6% is the slack for the additive error (at 10^5 DP-SGD steps the float64 round-off
of the powers takes about 3%: with less slack the query would be redone in long double). ``certify`` turns the composition into
bounds that hold for the true curve (profile.py) and lists every term in its error budget.

Wider cells (discretize.py, ``tiers``): cells 3^i h wide where each tail of a draw holds at
most p_i / 2, with p_i sized so that they raise the per-draw variance of the discretisation
error by at most TIER_VARIANCE; Bernstein's inequality then needs a mesh smaller by the
factor ``_bernstein_h`` finds. ``make_plan`` takes the most tiers whose mesh stays within
TIER_MESH of Hoeffding's (a long composition's tails are then cut with a fraction of the cdf
evaluations; a short one, where Bernstein's M term is large, keeps single cells).

Many distinct rows (``class_plan``, from TIERED_ROWS rows on): the mesh and tiers 3^i h wide
planned for discretize.class_failure, which charges a wide cell in proportion to its mass; the
far tails of a thousand DP-SGD steps then take a fifth of the cdf evaluations.

When a composition's loss range needs more grid points than allowed, ``coarsened`` widens
the accuracy (t, h and the aggregation together) until it fits, by one rule for every caller.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache, partial
from typing import Callable, Sequence, TypeVar

import numpy as np
from scipy.optimize import minimize_scalar

from .compose import BAND_N_MAX, MAX_COARSENING, Composed
from ..core.errors import Cancelled, GridTooLarge, grid_exhausted
from .discretize import COARSE_SHARE, DiscretePRV, bennett_g, coarse_plan, coupling_failure, mass_factors
from .profile import CertifiedProfile
from .heap import give_back
from ..pairs.prv import PRV
from .packed import LazyRow, PackedRow, Row, Store, discretize_packed, from_cells, lazy, stub
from .lattice_batch import BATCH_ROWS, discretize_cells_many
from .tails_batch import discretize_many as family_cells, tails_many
from . import reuse
from .reuse import discretized, table_bytes
from .tree import TREE_ALWAYS, TREE_MIN, band_counts
from .window import LAMBDAS, _cgf_bounds, cgf_blocks

#: distinct rows from which make_plan may take class_plan's tiers; their share of a draw's
#: inner term at the planned theta, and how many (widths 3, 9, ..., 3^CLASS_TIERS)
TIERED_ROWS, CLASS_SHARE, CLASS_TIERS = 16, 0.1, 8
#: fractions of eps_error spent on the coupling distance t and on aggregation
T_FRACTION = 0.88
AGG_FRACTION = 0.06
#: the wider cells' share of the variance, and the least mesh (against Hoeffding's) they may cost
TIER_VARIANCE, TIER_MESH = 0.1, 0.88

T = TypeVar("T")


def error_level(delta: float) -> float:
    """The additive error a query at ``delta`` plans for: 1e-6 delta, rounded down to a power
    of ten (so that queries at nearby deltas share their compositions)."""
    return 10.0 ** math.floor(math.log10(max(delta * 1e-6, 1e-300)))


@dataclass(frozen=True)
class Plan:
    """Mesh and error split for ``k_total`` draws at error level ``err`` and accuracy
    ``scale`` * eps_error."""

    t: float
    h: float
    k_total: int
    err: float
    agg_max: float
    coarse: tuple[float, int]
    eps_error: float
    #: (p_i, r_i): cells r_i h wide where each tail of a draw holds at most p_i / 2
    tiers: tuple[tuple[float, int], ...] = ()

    @property
    def e_w(self) -> float:
        """The window's share of the error level (Chernoff mass outside the window)."""
        return self.err / 4

    def tau(self, prv: PRV) -> float:
        """Mass cut from each tail of one draw of ``prv``."""
        return self.err / 4 * prv.finite_mass / (2.0 * self.k_total)


def _bernstein_h(u: float, k_total: int, log_e: float, r_max: int) -> float:
    """The mesh h with exp(-u^2 / (2 (V + M u / 3))) = e^-log_e for V = K h^2 (1 + TIER_VARIANCE)
    / 4 and M = h (r_max / 2 + 0.6) (discretize.coupling_failure: the widest cell's half, the
    shift's, and a margin for the bias and the coarse draws)."""
    a = log_e * k_total * (1 + TIER_VARIANCE) / 2
    b = 2 * log_e * (0.5 * r_max + 0.6) * u / 3
    return 2 * u * u / (b + math.sqrt(b * b + 4 * a * u * u))


def tier_plan(u: float, k_total: int, log_e: float, r_coarse: int) -> tuple[tuple, float]:
    """(tiers, mesh): the most tiers (widths 3, 9, ..., below the coarse cells' r_coarse)
    whose Bernstein mesh is at least TIER_MESH times Hoeffding's, and that mesh."""
    h0 = u * math.sqrt(2.0 / (k_total * log_e))
    best: tuple[tuple, float] = ((), h0)
    for n in range(1, 9):
        if r_coarse >= 3 and 3 ** n >= r_coarse:
            break
        h = _bernstein_h(u, k_total, log_e, 3 ** n)
        if h < TIER_MESH * h0:
            break
        # tier i (width r_i) holds at most p_i: sum_i p_i (r_i^2 - r_(i-1)^2) <= TIER_VARIANCE
        best = (tuple((TIER_VARIANCE / (n * (9 ** i - 9 ** (i - 1))), 3 ** i) for i in range(1, n + 1)), h)
    return best


def _class_step(rho: float, k_total: int, share: float) -> tuple[float, float]:
    """(min over x of -x rho + K log1p((1 + share) x^2 g(x / 2) / 4), the x there): the
    exponent of discretize.class_failure with u / h = rho and x = theta h, every draw's cells h
    wide but for wider tail cells that add ``share`` to its inner term."""
    def f(log_x: float) -> float:
        x = math.exp(log_x)
        g = float(bennett_g(np.array([0.5 * x]))[0])
        return -x * rho + k_total * math.log1p((1 + share) * x * x * g / 4)
    res = minimize_scalar(f, bounds=(math.log(1e-6), math.log(1e3)), method="bounded",
                          options={"xatol": 1e-6})
    return float(res.fun), math.exp(float(res.x))


@lru_cache(maxsize=256)  # (15 ms a plan; builds, estimates and coarsening ask again)
def class_plan(t: float, k_total: int, log_e: float) -> tuple[tuple, float]:
    """(tiers, mesh) for discretize.class_failure: the mesh whose all-fine exponent, raised
    by CLASS_SHARE, is -log_e, and cells 3^i h wide where each tail of a draw holds at most
    p_i / 2, p_i sized so that each tier adds an equal part of CLASS_SHARE at the planned theta
    (tiers whose p_i / 2 is below the draws' tail cut are left out of the split)."""
    lo, hi = math.log(1e-3 / t), math.log(1e9 / t)  # bisection on log(u / h)
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if _class_step(math.exp(mid), k_total, CLASS_SHARE)[0] <= -log_e:
            hi = mid
        else:
            lo = mid
    rho = math.exp(hi)
    x = _class_step(rho, k_total, CLASS_SHARE)[1]
    g_f = float(bennett_g(np.array([0.5 * x]))[0])
    tau = math.exp(-log_e) / (2.0 * k_total)  # (a draw's tail cut: Plan.tau at finite mass 1)
    widths = [3 ** i for i in range(1, CLASS_TIERS + 1)]
    # a tier's cells add p (g_c r^2 - g_f) h^2 / 4 to the inner term: p g_f ((r^2 - 1) h^2 / 4)
    # to V and p (g_c - g_f) (r h / 2)^2 to the sum over the classes
    gains = [float(bennett_g(np.array([0.5 * x * r]))[0]) * r * r - g_f for r in widths]
    n = len(widths)
    for _ in range(2):  # (the split over the tiers that are used)
        ps = [CLASS_SHARE * g_f / (n * gain) if math.isfinite(gain) else 0.0 for gain in gains]
        n = max(1, sum(p / 2 > tau for p in ps))
    return tuple((p, r) for p, r in zip(ps, widths) if p / 2 > tau), t / rho


def make_plan(eps_error: float, scale: float, k_total: int, err: float, rows: int = 1) -> Plan:
    """The plan for ``k_total`` draws of ``rows`` distinct rows: from TIERED_ROWS rows on,
    with the tiers of ``class_plan`` when its mesh is at least TIER_MESH of the other one's
    (discretising many distinct rows is then most of the work, and their far tails take a
    fraction of the cdf evaluations)."""
    t = scale * T_FRACTION * eps_error
    u, log_e = (1 - COARSE_SHARE) * t, math.log(4.0 / err)
    h = u * math.sqrt(2.0 / (k_total * log_e))
    coarse = coarse_plan(t, h, k_total, err)
    tiers, h_t = tier_plan(u, k_total, log_e, coarse[1])
    if tiers:
        h = h_t
        coarse = coarse_plan(t, h, k_total, err)
        tiers = tuple((p, r) for p, r in tiers if coarse[1] < 3 or (r < coarse[1] and p > coarse[0]))
    if rows >= TIERED_ROWS:
        by_class, h_c = class_plan(t, k_total, log_e)
        if h_c >= TIER_MESH * h:
            h, coarse, tiers = h_c, (0.0, 1), by_class
    return Plan(t, h, k_total, err, scale * AGG_FRACTION * eps_error, coarse, scale * eps_error, tiers)


def unclassed(plan: Plan, fail: float, eps_error: float, scale: float, rows: int) -> Plan | None:
    """The plan to discretise again on when ``plan`` is make_plan's class plan (TIERED_ROWS rows
    on) and the rows' coupling bound on it, ``fail`` (row_terms), is more than the error level:
    the plan of one row, a finer mesh whose Hoeffding and Bernstein bounds need no classes. None
    when the bound holds, or the plan has no classes.

    The class plan's mesh is sized for discretize.class_failure with each draw's error within
    half a cell of its mean. A row whose cells' means sit off their centres (atoms, a lattice
    coarser than the mesh: Laplace, a discrete Gaussian at sigma 1, a PMF pair) shifts its values
    by up to another half cell to keep its mean, class_failure must allow for it, and the bound
    fails: 20 Laplace rows (epsilon 1 each) drawn once came out at [18.94, 20.00] at delta 1e-6
    where one row drawn 20 times gives [19.660, 19.677], 20 discrete Gaussians at sigma 1 at
    [27.9, inf] (coupling failure 1.5e-5 against an error level of 1e-12)."""
    if rows < TIERED_ROWS or fail <= plan.err:
        return None
    plain = make_plan(eps_error, scale, plan.k_total, plan.err, 1)
    return plain if plain.h < plan.h else None


def discretize_rows(prvs: Sequence[tuple[PRV, int]], plan: Plan, n_max: int,
                    cancel: Callable[[], bool] | None = None,
                    progress: Callable[[float], None] | None = None) -> list[tuple[DiscretePRV, int]]:
    """Each row's PRV on the plan's mesh (counts kept); ``progress`` hears the fraction of
    rows done (within a row, of its cdf evaluations). A row discretised on the same mesh
    before is reused (reuse.py)."""
    return _discretized(prvs, plan, n_max, cancel, progress, discretized)  # type: ignore[return-value]


def discretize_many(prvs: Sequence[tuple[PRV, int]], plan: Plan, n_max: int,
                    cancel: Callable[[], bool] | None = None,
                    progress: Callable[[float], None] | None = None,
                    stream_bytes: int | None = None) -> list[tuple[Row, int]]:
    """``discretize_rows``, each row made as its nonzero cells (packed.discretize_packed)
    when there are as many rows as tree.py always groups (tree.compose_many,
    tilt.compose_tilted and ``certify`` take them so).

    Streaming: once such rows' cells hold more than ``stream_bytes`` (STREAM_BYTES), and they
    will be composed in groups (not tree.band_counts), every row is kept as a packed.LazyRow:
    its certificate fields and a block summary, its cells made again when its group takes it.
    Memory then grows by a few kB a row (its PRV, its fields), not by its cells; the price is
    a second discretisation of every row."""
    many = len(prvs) >= TREE_ALWAYS
    # (so many distinct rows are not kept for reuse: they would only push each other out; and
    # when their PRVs' tables are more than RELEASE_BYTES, each lets its tables go once
    # discretised, made again if asked for)
    let_go = lets_go(prvs)
    if stream_bytes is None:
        stream_bytes = STREAM_BYTES
    stream = many and not band_counts(prvs)
    return _discretized(prvs, plan, n_max, cancel, progress, discretize_packed if many else discretized,
                        let_go, stream_bytes if stream else None)


#: many rows whose cells hold more than this are streamed (discretize_many): 2 x 10^4 discrete
#: Gaussians hold about 0.26 GB of cells at delta 1e-10, 1000 distinct DP-SGD steps 0.2 GB
STREAM_BYTES = 320 * 2 ** 20
#: rows discretised before their cells may project the whole's (rows in the order given: sorted
#: by width, the projection is low and the budget itself decides)
STREAM_SAMPLE = 64
#: the blocks a streamed row's summary has (tilt.py steers its lambda with them: 1 kB a row)
LAZY_BLOCKS = 64


def streamed(rows: Sequence[tuple[Row, int]]) -> bool:
    """Whether discretize_many streamed these rows (then every one is a LazyRow, holding its PRV)."""
    return bool(rows) and isinstance(rows[0][0], LazyRow)


def row_bytes(d: Row) -> int:
    """The bytes a row's cells take (its arrays; none for a streamed row)."""
    if isinstance(d, LazyRow):
        return 0
    arrays = (d.pmf, d.sparse) if isinstance(d, DiscretePRV) else (d.idx, d.vals, d.stub.sparse)
    return sum(a.nbytes for a in arrays if a is not None)


@dataclass(frozen=True, slots=True)
class _Remake:
    """A streamed row's discretisation, made again (LazyRow.remake): the row's PRV and tail mass,
    and what every row of one discretize_many shares, (h, n_max, coarse, tiers, let_go). An
    object of three fields, not a closure over seven cells (tracemalloc: 56 bytes a row, not 280)."""

    prv: PRV
    tau: float
    how: tuple

    def __call__(self) -> DiscretePRV | PackedRow:
        h, n_max, coarse, tiers, let_go = self.how
        got = discretize_packed(self.prv, h, self.tau, n_max, coarse, None, tiers)
        release = getattr(getattr(self.prv, "lattice", None), "release", None) if let_go else None
        if release is not None:
            release()
        return got


def _lazy(prv: PRV, d: Row, plan: Plan, how: tuple, stores: tuple[Store, Store]) -> LazyRow:
    """``d``, the row of ``prv`` on the plan's mesh, as a LazyRow that makes it again (``how``:
    _Remake's shared fields); its width classes are kept in ``stores[0]``, its block summary in
    ``stores[1]`` (let go once a tilt is chosen)."""
    if isinstance(d, LazyRow):
        return d
    logp, centres, w = cgf_blocks(d, LAZY_BLOCKS)
    return lazy(d, stores[1].summary(logp, centres, w) if logp.size else None,
                _Remake(prv, plan.tau(prv), how), stores[0])


#: many rows' PRVs holding more than this in tables (Lattice.held: a discrete Gaussian's tail
#: sums, 12.6 kB at sigma 125) let them go as each is discretised: 2 x 10^4 discrete Gaussians
#: hold 0.25 GB of them, which the composition would otherwise carry to its end. Below it they
#: are kept for the next query (10^4 discrete Gaussians: 0.13 GB, a second for the tables)
RELEASE_BYTES = 128 * 2 ** 20


def lets_go(prvs: Sequence[tuple[PRV, int]], tables: float | None = None) -> bool:
    """Whether discretize_many lets these rows' tables go as it goes (RELEASE_BYTES); ``tables``:
    their bytes when known (the cost model's estimate of many rows: pricing_many.row_sum)."""
    if len(prvs) < TREE_ALWAYS:
        return False
    return (sum(table_bytes(prv) for prv, _ in prvs) if tables is None else tables) > RELEASE_BYTES


def _discretized(prvs, plan: Plan, n_max: int, cancel, progress, make: Callable[..., Row],
                 let_go: bool = False, stream_bytes: int | None = None) -> list[tuple[Row, int]]:
    """Each row made by ``make``; with ``stream_bytes``, once the rows' cells hold more than
    that, or the rows so far (STREAM_SAMPLE of them at least) say all of them will, every row so
    far and from then on as a LazyRow (discretize_many)."""
    out: list[tuple[Row, int]] = []
    held, streaming = 0, False
    how, stores = (plan.h, n_max, plan.coarse, plan.tiers, let_go), (Store(), Store())
    batched = make is discretize_packed  # (lattice rows BATCH_ROWS at a time: lattice_batch.py)
    ahead: dict = {}
    scanned: dict = {}
    for i, (prv, k) in enumerate(prvs):
        if cancel is not None and cancel():
            raise Cancelled("computation cancelled")
        part = None if progress is None else (lambda f, i=i: progress((i + f) / len(prvs)))
        if batched and i % BATCH_ROWS == 0:
            chunk = [p for p, _ in prvs[i:i + BATCH_ROWS]]
            got = discretize_cells_many(chunk, plan.h, [plan.tau(p) for p in chunk], n_max, plan.coarse,
                                        plan.tiers, let_go)
            ahead = {i + j: g for j, g in enumerate(got) if g is not None}
            left = [j for j in range(len(chunk)) if i + j not in ahead]  # (their tails scanned together)
            scans = tails_many([chunk[j].cont for j in left], plan.h,
                               [plan.tau(chunk[j]) for j in left])
            cells = family_cells([chunk[j] for j in left], plan.h, [plan.tau(chunk[j]) for j in left], n_max,
                                 plan.coarse, plan.tiers, scans)
            ahead.update((i + j, g) for j, g in zip(left, cells) if g is not None)
            scanned = {i + j: t for j, t in zip(left, scans) if t is not None and i + j not in ahead}
        made = ahead.pop(i, None)
        d: Row
        if made is not None:  # (the same cells and fields as discretize_packed's)
            d = from_cells(*made)
            if part is not None:
                part(1.0)
        elif batched:
            d = make(prv, plan.h, plan.tau(prv), n_max, plan.coarse, part, plan.tiers, scanned.pop(i, None))
        else:
            d = make(prv, plan.h, plan.tau(prv), n_max, plan.coarse, part, plan.tiers)
        release = getattr(getattr(prv, "lattice", None), "release", None) if let_go else None
        if release is not None:
            release()
        if stream_bytes is not None:
            if not streaming:
                held += row_bytes(d)
                # (past the budget, or projected past it from STREAM_SAMPLE rows on: then the
                # cells held until the switch stay small, and so does the heap they leave)
                streaming = held > stream_bytes or (
                    i + 1 >= STREAM_SAMPLE and held * (len(prvs) / (i + 1)) > stream_bytes)
                if streaming:  # (from here on every row is streamed, and those before too)
                    out = [(_lazy(p, r, plan, how, stores), c) for (p, _), (r, c) in zip(prvs, out)]
            if streaming:
                d = _lazy(prv, d, plan, how, stores)
                give_back()  # (heap.py: each row's cells are let go as it is summarised)
        out.append((d, k))
    return out


@dataclass(frozen=True)
class RowTerms:
    """What the certificate reads from the rows' fields, worked out before they are composed:
    the discretisation's failure probability and its named terms (``coupling_failure``), the
    factors of the masses' rounding (``mass_factors``), the draws and the masses' summed
    relative rounding. A composition of many rows lets each row go once composed; with these
    in hand nothing holds every row's fields to the end (10^5 rows: about 1 kB each)."""

    fail: float
    terms: dict
    factors: tuple[float, float]
    draws: int
    mass_rel: float


def row_terms(rows: Sequence[tuple[Row, int]], plan: Plan) -> RowTerms:
    """The certificate's terms of ``rows`` on the plan's mesh (RowTerms)."""
    parts = [(stub(d), k) for d, k in rows]
    fail, terms = coupling_failure(parts, plan.t, plan.h)
    return RowTerms(fail, terms, mass_factors(parts), sum(k for _, k in parts),
                    sum(k * d.mass_rel for d, k in parts))


def certify(composed: Composed, rows: Sequence[tuple[Row, int]] | RowTerms, plan: Plan
            ) -> tuple[CertifiedProfile, dict]:
    """The certified profile of a composition of ``rows`` on the plan's mesh (or of the rows
    whose ``row_terms`` these are), and its error budget (every term, named)."""
    rt = rows if isinstance(rows, RowTerms) else row_terms(rows, plan)
    prof = CertifiedProfile(composed, plan.t, rt.fail, factors=rt.factors)
    budget = {"t": plan.t, "h": plan.h, "K": rt.draws, "eps_error_used": plan.eps_error,
              "n_fft": composed.parts.get("n", 1), "decimation": composed.parts.get("decimation", 1),
              **rt.terms, "coarse_cells": plan.coarse[1],
              "tiers": [r for _, r in plan.tiers], "window": composed.parts.get("window", 0.0),
              "alias": composed.parts.get("alias", 0.0), "fp_abs": composed.parts.get("fp_abs", 0.0),
              "groups": composed.parts.get("groups", 0), "group_err": composed.parts.get("group_err", 0.0),
              "fp_rel": composed.err_rel, "mass_rel": rt.mass_rel,
              "total_rel": prof.err_rel, "total_abs": prof.err_abs,
              **{k: v for k, v in composed.parts.items() if k.startswith("tilt_")}}
    return prof, budget


def least_width(prvs: Sequence[tuple[PRV, int]], plan: Plan) -> float:
    """A lower bound, found before discretising, on the width of the window compose.compose
    chooses for fewer than TREE_MIN distinct rows on the plan's mesh (window.choose_window at
    mass ``plan.e_w``: tree.compose_many composes so few rows at once); 0 when nothing is known.

    The window's upper end is min(Chernoff's, the support's): the least over window.LAMBDAS of
    (sum k cgf(lambda) + log(2 / e_w)) / lambda, with cgf an upper bound on each discretised
    row's, clipped at the sum of the rows' last cells. Both are bounded below from each row's
    continuous part between a' and b', where cdf(a') and sf(b') exceed twice the row's tail cut
    tau (so the discretised row keeps that mass, and has cells with mass beyond a' and b'). Its
    mass in SPAN_CELLS cells, each placed at its left end, is a lower bound on E[exp(lambda Y)]
    of the row for lambda > 0, once every value is moved down by the most the discretisation
    moves a value (the widest cell and the shift: d = (2 w + 2) h); its last cell lies above
    b' - d. The lower end likewise, mirrored. Fewer cells only weaken the bound
    (docs/method.md, "When a bracket widens")."""
    if not 0 < len(prvs) < TREE_MIN:
        return 0.0
    try:
        with np.errstate(all="ignore"):
            got = _least_width(prvs, plan)
    except ArithmeticError:  # (a kind whose tails overflow far out: no claim, the query goes on)
        return 0.0
    return got if math.isfinite(got) else 0.0


def _least_width(prvs: Sequence[tuple[PRV, int]], plan: Plan) -> float:
    d = (2 * max(1, plan.coarse[1], *(r for _, r in plan.tiers)) + 2) * plan.h
    lams = LAMBDAS
    up, down = np.zeros(lams.size), np.zeros(lams.size)
    hi_s = lo_s = 0.0
    for prv, k in prvs:
        c = prv.cont
        if k <= 0:
            continue
        if c is None or c.mass <= 0:
            return 0.0
        tau = plan.tau(prv)
        a, b = c.lower_cut(tau, math.inf), c.upper_cut(tau, math.inf)  # (cdf(a), sf(b) <= tau)
        # a' and b' at 2 tau, so that the discretised row's cells beyond them hold at least tau;
        # within a 4096th of [a, b], then again within a 4096th of [a', b'] while that is under
        # 64 of them (a start far from the bulk leaves [a, b] far wider than the mass), to the mesh
        tol = (b - a) / 4096
        while True:
            a_in = _crossing(c.cdf, a, b, 2 * tau, tol)
            b_in = _crossing(partial(_mirrored, c.sf), -b, -a, 2 * tau, tol)
            if a_in is None or b_in is None or not a_in < -b_in:
                return 0.0
            if -b_in - a_in >= 64 * tol or tol <= plan.h:
                break
            tol = max(plan.h, (-b_in - a_in) / 4096)
        x = np.linspace(a_in, -b_in, SPAN_CELLS + 1)
        log_m = np.log(np.maximum(np.diff(np.asarray(c.cdf(x), dtype=float)), 0.0) * (1 - 1e-9))
        if not np.isfinite(log_m).any():
            return 0.0
        # (window's own sums of exp: blocks of no width, at the cells' left and right ends)
        up += k * _cgf_bounds((log_m, x[:-1], 0.0), lams)
        down += k * _cgf_bounds((log_m, x[1:], 0.0), -lams)
        hi_s += k * (-b_in - d)
        lo_s += k * (a_in + d)
    k_all = sum(k for _, k in prvs if k > 0)
    log_t = math.log(2.0 / plan.e_w)
    hi = min(float(np.min((up + log_t) / lams)) - k_all * d, hi_s)
    lo = max(-float(np.min((down + log_t) / lams)) + k_all * d, lo_s)
    return hi - lo if hi > lo else 0.0  # (nan: 0)


def _mirrored(f: Callable[[np.ndarray], np.ndarray], x: np.ndarray) -> np.ndarray:
    return f(-x)


#: the cells least_width spreads each row's continuous part over
SPAN_CELLS = 64


def _crossing(f: Callable[[np.ndarray], np.ndarray], lo: float, hi: float, t: float, tol: float
              ) -> float | None:
    """A point x with f(x) > t (as evaluated) within about ``tol`` above where the rising f
    crosses t, from [lo, hi] with f(lo) <= t < f(hi); None when those ends do not hold."""
    f_lo, f_hi = (float(v) for v in f(np.array([lo, hi])))
    if not (f_lo <= t < f_hi):
        return None
    while hi - lo > tol:
        pts = np.linspace(lo, hi, 66)[1:-1]
        above = np.flatnonzero(np.asarray(f(pts)) > t)
        new = (float(pts[above[0] - 1]) if above.size and above[0] > 0 else lo if above.size else float(pts[-1]),
               float(pts[above[0]]) if above.size else hi)
        if new == (lo, hi):
            break  # (float resolution)
        lo, hi = new
    return hi


def check_fits(prvs: Sequence[tuple[PRV, int]], plan: Plan, n_max: int) -> None:
    """Raises GridTooLarge, as the composition would after discretising every row, when
    ``least_width`` says the window needs more than ``n_max`` points on the plan's mesh and
    compose.choose_band cannot take it either (past BAND_N_MAX points, or more than n_max once
    decimated as far as the plan's aggregation allows). A shuffled Gaussian whose loss sits near
    5e11 nats took 15 s a side to discretise 2.3 x 10^7 cells only to be refused so. Rows
    discretised on this mesh before (reuse.py) are not checked: there is nothing to save, and
    an edit in the window would pay a few ms a row for it."""
    if len(prvs) >= TREE_MIN or all(reuse.is_kept(prv, plan.h, plan.tau(prv), n_max, plan.coarse, plan.tiers)
                                    for prv, k in prvs if k > 0):
        return  # (least_width claims nothing for so many rows)
    width = least_width(prvs, plan)
    n = math.ceil(width / plan.h)
    d_max = max(1, int(2 * plan.agg_max / plan.h) + 1)
    if n > n_max and (n > BAND_N_MAX or n // min(d_max, n) > n_max):
        raise GridTooLarge(n, n_max, width)


def coarsened(build: Callable[[float], T], eps_error: float, k_total: int, err: float, n_max: int,
              scale: float = 1.0, rows: int = 1) -> tuple[T, float]:
    """``build(scale)`` from ``scale`` on, coarsening when the grid would exceed ``n_max``
    points: the next scale makes the loss range that did not fit take 90% of them. Returns the
    result and the scale it was built at; gives up past MAX_COARSENING."""
    while True:
        try:
            return build(scale), scale
        except GridTooLarge as exc:
            needed = exc.width / (0.9 * n_max)
            new_scale = scale * max(needed / make_plan(eps_error, scale, k_total, err, rows).h, 1.05)
            if new_scale > MAX_COARSENING:
                raise grid_exhausted(exc.width, new_scale * eps_error, n_max) from None
            scale = new_scale
