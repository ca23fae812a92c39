"""What a query will cost, worked out before any of it runs: seconds, bytes and grid size.

The accountant's work is set by its plan (pipeline.py): the mesh h that eps_error and the
total count K ask for, the rows' spans between their tail cuts, and the composition window.
Every stage then costs in proportion to a count of points: discretising a row evaluates its
cdf at each cell edge (single cells in the bulk, the plan's wider tiers and coarse cells in the
tails: ``_Row.edges``); the FFT path transforms and powers n = window / h points; the band
path (band.py) works on the rows' cells, (R + 1) Taylor terms per cell; the steps curve
adds one inverse transform per count. ``CostModel`` replays the pipeline's decisions (the
discretisation cap, the band test, ``pipeline.coarsened``'s widening when a grid is too
large) on figures it gets cheaply, and prices each stage with the constants below.

The cheap figures come from one coarse discretisation of every row (about COARSE_CELLS cells
on a shared mesh): its span, where its tails get coarse cells, the composition's Chernoff
window (window.py, whose width does not depend on the mesh) and the band limit
(band.band_limit: in loss units it does not depend on the mesh either). That costs a few
milliseconds per order of the pair and composes nothing.

The rows' PRVs are held while the query runs: their bytes (``prv_bytes``) are added once to
the query's peak (a discrete Gaussian's hold part of its lattice's tail sums). Many rows are
priced before their PRVs are made: from the PRVs of the rows pictured (pricing_many.Sampled).

It is a warning, not a certificate: the figures are for an unloaded machine; the rebuilds
that depend on the answer are predicted by rule (``needs_long_double`` for epsilon's tilted
compositions, ``CostModel.profile_reaches_far_end`` for the privacy profile's long-double redo);
what no rule predicts is left out (docs/method.md, "Escalation"); two orders
built side by side are counted one after the other (their memory as if at the same time).

Calibration, measured on the development machine (2 cores shared with other jobs: load
average 3 to 11 during the runs, so the best of 3 is taken), numpy's pocketfft, float64 unless
said; ``python benchmarks/bench_cost.py --primitives`` repeats the stage timings:

* discretising, subsampled Gaussian (sigma 1.1, q 0.0043): 168 ns per cell with every cell an
  edge (2.0M cells); with coarse tails (342k edges for 2.0M cells) 91 ns per cell, which
  splits as ~95 ns per cdf edge plus ~65 ns per cell of array work (sigma 0.8, q 0.01 at
  load 8: 280 + 76). Gaussian and Laplace cells cost about the same. Peak 65 to 73 allocated
  bytes per cell (tracemalloc), but resident memory grows by ~24 bytes per cell and ~50 per
  edge (the zeroed cell array is only touched where there is mass): two orders of 22.6M
  cells and 4.8M edges each peaked at 1.27 to 1.42 GB.
* FFT path, per grid point: the row's transform 29 to 50 ns (long double 220 to 480 ns: x7);
  the power X^k 75 to 200 ns per coefficient, i.e. per 2 points (long double x7 to x16: x10
  is taken); the inverse transform and window read 50 to 170 ns per output point. The row's
  transform holds 16 bytes per point (32 in long double), the chunked power 10 to 22 more.
* band path: 0.7 ns per cell and Taylor term for the block moments (22.6M cells, 18 terms:
  0.27 s; long double 0.72 s) and 5 ns per frequency, block and term for the sums (band 1749,
  2685 blocks: 0.46 s; long double 3.9 s, x7 to x8); the band test, 10 to 130 ns per cell.

End to end: ``python benchmarks/bench_cost.py`` prices and then runs each case in a fresh
process; the latest table is in benchmarks/README.md ("Cost estimate against the measured
cost": every case above a second within 0.44 to 2 times its time).
"""
from __future__ import annotations

import copy
import math
from dataclasses import dataclass, replace
from typing import Sequence

import numpy as np

from .band import X_MAX, _terms, band_limit, worth_it
from .compose import BAND_FRACTION, BAND_N_MAX, fft_len
from .discretize import DiscretePRV, discretize
from ..core.errors import GridTooLarge
from ..core.cost import ZERO, Cost
from .pipeline import Plan, coarsened, lets_go, make_plan
from .reuse import table_bytes
from .pricing_guess import GUESS_POINTS, GUESS_ROWS, deciding, epsilon_guess
from .pricing_many import (PACKED_BYTES, Sampled, counts_of, price as price_many, row_sum, sample_indices, spread,
                           tree_pays)
from .tree import TREE_ALWAYS
from ..pairs.lattice import KEEP_BYTES
from ..pairs.prv import PRV
from .tilt import AGG_REL, cgf_and_mean, stacked_blocks, choose_lambda_for_delta, tilt_row, tilted_window_mass
from .window import PreparedRow, choose_window

#: seconds per cell edge whose cdf is evaluated (with the array work on its nonzero cell), and
#: per cell of array work on the empty cells that wide cells leave (discretize; measured after
#: the tiers, issue 13: ~155 ns per edge when every cell is one, 4 to 7 ns per empty cell)
DISC_EDGE_S, DISC_CELL_S = 155e-9, 6e-9
#: seconds per byte of a lattice's tables made again when its row is discretised (a discrete
#: Gaussian's tail sums: 0.134 ms for 12.6 kB at sigma 125; 2 x 10^4 of them at delta 1e-10 spent
#: 2.6 s of their 7 s discretisation so)
REMAKE_BYTE_S = 10.6e-9
#: seconds per cell for the window's blocks and the band test (band_limit)
CHECK_CELL_S = 8e-9
#: seconds per grid point of a row's transform, per coefficient kept by a power (above
#: e^-700), per output point of the inverse transform; a scan of the spectrum (the power's
#: log-modulus, the decimation's tail sums), per coefficient
RFFT_S, POWER_S, IRFFT_S, SCAN_S = 50e-9, 150e-9, 100e-9, 15e-9
#: band path (band.low_dft): seconds per cell and Taylor term (the block moments), and per
#: frequency, block and term (the phases and sums)
BAND_CELL_S, BAND_PHASE_S = 0.7e-9, 5e-9
#: long double against float64: transforms, powers, the band path's moments and phases
LONG_RFFT, LONG_POWER, LONG_MOMENTS, LONG_PHASES = 7.0, 10.0, 3.0, 7.0
#: fixed cost of one composition (PRVs, tail searches, the band test's loops, certificate) and
#: of a view's extras (the comparison accountants, curves read from the profiles); re-measured
#: after the tiered cells and the row cache (issue 13): a one-step DP-SGD epsilon query takes
#: 12 ms warm (0.08 s here had made the GUI's cost estimates 3.5 to 6 times the measured time)
BUILD_S, VIEW_S = 0.012, 0.1
#: peak resident bytes per discretised cell and per cell edge; per grid point on the FFT path
#: (float64, long double); per output point of the inverse transform; per cell on the band path
DISC_CELL_BYTES, DISC_EDGE_BYTES = 24, 50
FFT_BYTES, LONG_FFT_BYTES, FINISH_BYTES, BAND_BYTES = 24, 40, 32, 32
#: a steps curve on the FFT path keeps the varying row's log-modulus and phase, the other
#: rows' product and each count's power: about 64 bytes per grid point (1.2 GB observed at
#: 15M points)
SWEEP_FFT_BYTES = 64
#: tilting a composition towards its tail (tilt.py), per nonzero cell of its rows: the search
#: for lambda (a few passes over the cells), the tilting and the reading back (measured 110 to
#: 220 ns on DP-SGD rows of 0.2M to 3.2M nonzero cells)
TILT_CELL_S = 200e-9
#: the same for many rows in groups (pricing_many.py), whose lambda is steered by the rows' block
#: summaries, not their cells: each row's tilting alone, its per-row work included (measured
#: 2026-11-29: 50 ns a nonzero cell at 10^4 discrete Gaussians of about 1000, 25 ns at 1000
#: DP-SGD steps of about 2700)
TILT_MANY_CELL_S = 50e-9
#: the coarse discretisation behind the estimate: cells of the widest row; the band test's
#: grid over the window (a finer one when that finds no band)
COARSE_CELLS, BAND_GRIDS = 4096, (1 << 13, 1 << 15)


@dataclass
class _Tally:
    seconds: float = 0.0
    peak: float = 0.0
    grid: int = 0
    #: points of the last grid's (decimated) inverse transform
    out: int = 0
    #: the mesh scale the last attempt was priced at (pipeline.coarsened's widening)
    scale: float = 1.0

    def add(self, seconds: float, memory: float) -> None:
        self.seconds += seconds
        self.peak = max(self.peak, memory)


class _Row:
    """One row's shape from its coarse discretisation: span, tails, the coarse row itself."""

    def __init__(self, prv: PRV, count: int, tau: float, h_c: float) -> None:
        self.prv, self.count, self.tau = prv, count, tau
        self.disc = discretize(prv, h_c, tau, 1 << 40)
        self.h_c = h_c
        self.span = self.disc.pmf.size * h_c
        cum = self.disc.pmf.cumsum()
        self._cum = cum / cum[-1]
        self.prepared = PreparedRow(self.disc)

    def fine_span(self, p: float) -> float:
        """Width of the part whose tails hold more than p / 2 (cells there are single-width)."""
        if self.prv.cont is None:
            return 0.0  # atoms only: no cdf to evaluate
        lo = int(np.searchsorted(self._cum, p / 2))
        hi = int(np.searchsorted(self._cum, 1 - p / 2))
        return min(self.span, (hi - lo + 1) * self.h_c)

    def cells(self, h: float) -> int:
        return math.ceil(self.span / h) + 2

    def nonzero(self, plan: Plan) -> float:
        """About how many of its cells hold mass on the plan's mesh: in each stretch of cells of
        one width, one per cell edge and no more than a lattice has points there (a discrete
        Gaussian at sigma 100 fills one cell in four where the mesh is finer than its step, and
        every one of its tiers' wide cells); at least one. (10^4 discrete Gaussians at delta
        1e-10: the whole span's points against the whole span's edges priced 2300 a row, 1000
        measured; so 2 x 10^4 of them were priced as streamed, which they are not.)"""
        lattice = getattr(self.prv, "lattice", None)
        if lattice is None:
            return max(1.0, self.edges(plan))
        total = sum(min(length / (width * plan.h), length / lattice.step) for length, width in self._stretches(plan))
        return max(1.0, total + len(self.prv.atoms) + 1)

    def edges(self, plan: Plan) -> float:
        """Cell edges whose cdf discretize evaluates on the plan's mesh."""
        return sum(length / (width * plan.h) for length, width in self._stretches(plan))

    @property
    def edge_cost(self) -> float:
        """What evaluating its cdf at an edge costs, in DISC_EDGE_S's unit (Continuous.cost)."""
        return self.prv.cont.cost if self.prv.cont is not None else 1.0

    def _stretches(self, plan: Plan) -> list[tuple[float, int]]:
        """(length, width of its cells in meshes) of each stretch of the row's span: the fine
        cells, then between the tiers the span of the inner tier, at its width."""
        if self.prv.cont is None:
            return []
        use = [(p, r) for p, r in (*plan.tiers, plan.coarse) if r >= 3]
        out, inner, width = [], 0.0, 1
        for p, r in use:
            span = self.fine_span(p)
            out.append((max(0.0, span - inner), width))
            inner, width = max(inner, span), r
        out.append((max(0.0, self.span - inner), width))
        return out


class _Order:
    """The coarse picture of one order of the pair: its rows, and windows and bands by count."""

    def __init__(self, prvs: "Sequence[tuple[PRV, int]] | Sampled", k_total: int, err: float) -> None:
        # many rows: a sample of them, each standing for ``weight`` rows (pricing_many.py)
        self.idx = sample_indices(counts_of(prvs))
        self.many = len(self.idx) < len(prvs)
        self.weight = len(prvs) / max(1, len(self.idx))
        picked = [prvs[i] for i in self.idx]
        crude = [_crude_span(prv, err / 4 * prv.finite_mass / (2 * k_total)) for prv, _ in picked]
        h_c = max(max(crude) / COARSE_CELLS, 1e-12)
        self.rows = [_Row(prv, k, err / 4 * prv.finite_mass / (2 * k_total), h_c) for prv, k in picked]
        #: the tables each discretisation makes again: all the rows' once they let them go
        #: (pipeline.lets_go: the next query finds every one let go; the first, all but those a
        #: kind keeps, KEEP_BYTES, priced as well: the safe side)
        tables = row_sum(prvs, table_bytes)
        self.remade = tables if lets_go(prvs, tables) else 0.0
        self.h_c, self.err = h_c, err
        self._windows: dict = {}
        self._bands: dict = {}
        self._kept: dict = {}
        #: mesh -> {pictured row: it discretised on that mesh} (the band test's, the guess's)
        self._band_rows: dict = {}
        #: the tilt of the rows pictured (``tilted``), None for the rows themselves
        self.lam: float | None = None

    def tilted(self, lam: float) -> "_Order":
        """The same picture with each coarse row tilted by ``lam`` (tilt.tilt_row): the windows
        of a tilted composition (its rows' shapes, spans and cells are the untilted ones)."""
        out = copy.copy(self)
        out.rows = [copy.copy(r) for r in self.rows]
        for r in out.rows:
            r.disc = tilt_row(r.disc, lam)[0]
            r.prepared = PreparedRow(r.disc)
        out._windows, out._bands, out._kept, out._band_rows = {}, {}, {}, {}
        out.lam = lam
        return out

    def pictured(self, counts: Sequence[int]) -> list[float]:
        """The pictured rows' counts: each sampled row's count times the rows it stands for."""
        return [counts[i] * self.weight for i in self.idx] if self.many else list(counts)

    def window(self, counts: tuple[int, ...], mass: float) -> tuple[float, float]:
        """The composition's Chernoff window with ``mass`` outside (window.py; with many rows,
        the sample's cumulants times their weight: an estimate)."""
        key = (counts, mass)
        if key not in self._windows:
            rows = [(r.prepared, k) for r, k in zip(self.rows, self.pictured(counts)) if k > 0]
            self._windows[key] = choose_window(rows, mass)[:2] if rows else (0.0, 0.0)
        return self._windows[key]

    def width(self, counts: tuple[int, ...], mass: float) -> float:
        lo, hi = self.window(counts, mass)
        return hi - lo

    def band(self, counts: tuple[int, ...], width: float) -> float | None:
        """The band limit in frequencies of a circle ``width`` long (None: no band found)."""
        if counts not in self._bands:
            self._bands[counts] = None
            w = self.width(counts, self.err / 4)  # the widest window asked for
            for grid in BAND_GRIDS:
                h_b = max(self.h_c, w / grid)
                rows = [(d, k) for d, k in zip(self._discs(h_b), counts) if k > 0]
                n_b = fft_len(math.ceil(w / h_b) + 4, h_b, 0.0)
                m = band_limit(rows, n_b) if rows else None
                if m is not None:
                    self._bands[counts] = (m, n_b * h_b)
                    break
                if h_b == self.h_c:
                    break
        got = self._bands[counts]
        return None if got is None else got[0] * width / got[1]

    def kept(self, counts: tuple[int, ...], width: float) -> float | None:
        """About how many low frequencies of the composed transform stay above e^-700 (the
        coefficients compose.power works on), on a circle ``width`` long: where the rows'
        coarse transforms, raised to their counts, fall below it, or, when they have not by the
        coarse grid's last frequency M, at M 700 / |log| there (a linear decay of the log, slower
        than the usual quadratic: more kept, more cost). An estimate (band() is the proved
        bound); None when the coarse grid shows no decay to go by."""
        if counts not in self._kept:
            w = self.width(counts, self.err / 4)
            h_b = max(self.h_c, w / BAND_GRIDS[-1])
            n_b = fft_len(math.ceil(w / h_b) + 4, h_b, 0.0)
            logs = np.zeros(n_b // 2 + 1)
            for d, k in zip(self._discs(h_b), counts):
                if k > 0 and d.pmf.size <= n_b:
                    with np.errstate(divide="ignore"):
                        logs += k * np.log(np.abs(np.fft.rfft(d.pmf, n_b)))
            above = np.flatnonzero(logs > -700.0)
            m = float(above[-1] + 1) if above.size else 1.0
            if m >= logs.size - 1:
                m = logs.size * 700.0 / -logs[-1] if logs[-1] < -1.0 else math.inf
            self._kept[counts] = None if math.isinf(m) else (float(m), n_b * h_b)
        got = self._kept[counts]
        return None if got is None else got[0] * width / got[1]

    def guess(self, counts: tuple[int, ...], delta: float) -> float | None:
        """epsilon(delta) of the pictured rows composed on the order's window (pricing_guess.py:
        an estimate; None where the guess's grid cannot read delta)."""
        lo, hi = self.window(counts, delta * 1e-3)
        h = max(self.h_c, (hi - lo) / GUESS_POINTS)
        # (at most GUESS_ROWS of the pictured rows, spread evenly, each for its share of them)
        pictured = self.pictured(counts)
        idx = spread(len(self.rows), GUESS_ROWS)
        share = len(self.rows) / len(idx)
        rows = [(self._disc(i, h), max(1, round(pictured[i] * share))) for i in idx if pictured[i] > 0]
        return epsilon_guess(rows, lo, hi, delta)

    def _disc(self, i: int, h: float) -> DiscretePRV:
        """Pictured row i on mesh ``h`` (>= the coarse mesh; tilted by ``lam``), kept by mesh."""
        if h <= self.h_c * 1.01:
            return self.rows[i].disc
        got = self._band_rows.setdefault(h, {})
        if i not in got:
            r = self.rows[i]
            d = discretize(r.prv, h, r.tau, 1 << 40)
            got[i] = d if self.lam is None else tilt_row(d, self.lam)[0]
        return got[i]

    def _discs(self, h_b: float) -> list[DiscretePRV]:
        return [self._disc(i, h_b) for i in range(len(self.rows))]


#: bytes of a PRV beside its arrays (the object, its functions and their closures), and of a
#: lattice's more (its functions' object and arrays' headers) (measured: 1.5 kB per DP-SGD PRV;
#: per discrete Gaussian PRV at sigma 50 to 200, 14.8 kB with its tables and 1.05 kB once they
#: are let go)
PRV_BYTES, LATTICE_BYTES = 1500, 200


def prv_bytes(prv: PRV) -> float:
    """About the bytes one PRV holds: the object and its functions, its atoms, and the arrays a
    lattice's functions hold (a discrete Gaussian's tail sums, ~14 kB at sigma 100)."""
    lattice = getattr(prv, "lattice", None)
    return PRV_BYTES + 48.0 * len(prv.atoms) + (LATTICE_BYTES + lattice.held if lattice is not None else 0)


def _crude_span(prv: PRV, tau: float) -> float:
    """The row's span between tail cuts found by doubling only (at most about twice too wide)."""
    ends = [loc for loc, _ in prv.atoms]
    c = prv.cont
    if c is not None and c.mass > 0:
        ends += [c.lower_cut(tau, math.inf), c.upper_cut(tau, math.inf)]
    return max(ends) - min(ends) if len(ends) > 1 else 1.0


class CostModel:
    """Prices the compositions a query needs (``build``) and steps sweeps (``sweep``).

    ``orders`` maps each order of the pair to its rows' PRVs with their counts (as the
    accountant composes them), or to a ``Sampled`` order (many rows: the PRVs of the rows
    pictured only); the coarse picture of an order is made once, on first use.
    """

    def __init__(self, orders: "dict[str, list[tuple[PRV, int]] | Sampled]", eps_error: float, n_max: int,
                 err_min: float = 1e-12) -> None:
        self.orders = orders
        self.eps_error = eps_error
        self.n_max = n_max
        self.err_min = err_min
        self._pictures: dict[str, _Order] = {}
        #: (order, delta) -> Chernoff's lambda on the coarse rows and their stacked block summaries
        self._lambdas: dict[tuple[str, float], tuple] = {}

    def held(self) -> float:
        """Bytes the rows' PRVs hold while the query runs (every order's, made before it):
        ``prv_bytes`` of each, their tables at most KEEP_BYTES an order (the kind lets those past
        it go: lattice.KEEP_BYTES). Many rows that let their tables go once discretised
        (pipeline.lets_go) do not give those back: the heap keeps their pages (2 x 10^4 discrete
        Gaussians: 0.16 GB above the interpreter once their PRVs are made, as much after the
        discretisation besides the rows' cells); letting go keeps the tables made again for the
        discretisation from piling up on them. (A Sampled order's, from its pictured rows.)"""
        total = 0.0
        for prvs in self.orders.values():
            tables = row_sum(prvs, table_bytes)
            total += row_sum(prvs, prv_bytes) - tables + min(tables, KEEP_BYTES)
        return total

    def picture(self, order: str) -> _Order:
        if order not in self._pictures:
            prvs = self.orders[order]
            self._pictures[order] = _Order(prvs, sum(counts_of(prvs)), self.err_min)
        return self._pictures[order]

    def build(self, order: str, err: float, extended: bool = False, scale: float = 1.0,
              counts: tuple[int, ...] | None = None, sweep: int = 0,
              agg_cap: float = math.inf) -> tuple[Cost, int, int]:
        """The cost of one composition of ``order`` at error level ``err``, the grid it ends on
        and the length of its (decimated) inverse transform. ``counts`` overrides the rows'
        counts; ``sweep`` > 0 adds that many counts read from it (the steps curve);
        ``agg_cap`` caps the aggregation of the read-out (a tilted composition's)."""
        return self._build(order, err, extended, scale, counts, sweep, agg_cap)[:3]

    def _build(self, order: str, err: float, extended: bool = False, scale: float = 1.0,
               counts: tuple[int, ...] | None = None, sweep: int = 0,
               agg_cap: float = math.inf, tilt: tuple | None = None) -> tuple[Cost, int, int, float]:
        """``build``, plus the mesh scale the composition lands on. ``tilt`` = (the tilted
        picture, L, m, lambda) prices a tilted composition (its windows and their mass:
        tilt.tilted_window_mass)."""
        prvs = self.orders[order]
        if not prvs:
            return ZERO, 0, 0, scale
        pic = self.picture(order)
        counts = counts_of(prvs) if counts is None else counts
        k_total = sum(counts)
        if k_total == 0:
            return ZERO, 0, 0, scale
        tally = _Tally(scale=scale)
        rows = sum(1 for k in counts if k > 0) + (1 if sweep else 0)
        plan0 = make_plan(self.eps_error, 1.0, k_total, err, rows)
        tally.grid = max(int(pic.width(counts, plan0.e_w) / plan0.h), *(r.cells(plan0.h) for r in pic.rows))

        def attempt(s: float) -> int:
            plan = make_plan(self.eps_error, s, k_total, err, rows)
            if agg_cap < plan.agg_max:
                plan = replace(plan, agg_max=agg_cap)
            tally.scale = s
            if tilt is None:
                return self._attempt(pic, counts, plan, extended, sweep, tally, plan.e_w)
            return self._attempt(tilt[0], counts, plan, extended, sweep, tally,
                                 tilted_window_mass(tilt[1], tilt[2], tilt[3], plan.e_w))
        try:
            n = coarsened(attempt, self.eps_error, k_total, err, self.n_max, scale, rows)[0]
        except MemoryError:  # no grid fits: the accountant will say so
            return Cost(tally.seconds, tally.peak, tally.grid, "", fits=False), 0, 0, tally.scale
        return Cost(tally.seconds, tally.peak, tally.grid, ""), n, tally.out, tally.scale

    def tilted(self, order: str, err: float, delta: float, passes: int = 1) -> Cost:
        """``passes`` compositions of ``order`` tilted towards its tail at ``delta`` (tilt.py),
        one after the other: each the composition of the rows tilted by lambda (Chernoff's for
        delta on the coarse rows), on the windows of the coarse rows so tilted and with the
        tilted window's mass (tilt.tilted_window_mass: a DP-SGD schedule's tilted window is
        five to six times the plain one), read out with no more aggregation than the tilt allows
        (AGG_REL / lambda); plus the tilting of the rows' cells, whose tilted copies it holds."""
        prvs = self.orders[order]
        if not prvs:
            return ZERO
        pic = self.picture(order)
        lam, stacked = self._chernoff(order, delta)
        # (on the tilted rows' windows: a tilted composition's are wider, its far tail heavier)
        tilt = None if lam is None or stacked is None else (pic.tilted(lam), *cgf_and_mean(stacked, lam), lam)
        est, _, _, scale = self._build(order, err, agg_cap=AGG_REL / lam if lam else math.inf, tilt=tilt)
        # (on the mesh the composition lands on: coarsened when the base grid is too large)
        plan = make_plan(self.eps_error, scale, sum(counts_of(prvs)), err, len(prvs))
        # the tilted copies: none held for many rows in groups (tilted a group at a time, their
        # copies are the groups' memory), packed for many rows on one window (tree.compose_many),
        # else dense
        if pic.many:
            copies = 0.0
        elif len(prvs) >= TREE_ALWAYS:
            copies = sum(min(PACKED_BYTES * r.nonzero(plan), 8.0 * r.cells(plan.h)) for r in pic.rows)
        else:
            copies = 8.0 * sum(r.cells(plan.h) for r in pic.rows)
        work = (TILT_MANY_CELL_S if pic.many else TILT_CELL_S) * pic.weight * sum(r.nonzero(plan) for r in pic.rows)
        return replace(est, seconds=passes * (est.seconds + work), bytes=est.bytes + copies)

    def deciding(self, orders: Sequence[str], delta: float) -> list[str]:
        """The orders an epsilon query at ``delta`` composes tilted (pricing_guess.deciding: those
        whose guessed epsilon is near the largest; all when a guess is unknown)."""
        live = [o for o in orders if self.orders[o]]
        if len(live) < 2:
            return list(orders)
        return deciding({o: self.picture(o).guess(counts_of(self.orders[o]), delta) for o in live})

    def _chernoff(self, order: str, delta: float) -> tuple[float | None, tuple | None]:
        """Chernoff's lambda for ``delta`` on the order's coarse rows and their stacked block
        summaries (tilt.py; the sample's weights as counts: the cumulants add up)."""
        key = (order, delta)
        if key not in self._lambdas:
            pic = self.picture(order)
            weighted = pic.pictured(counts_of(self.orders[order]))
            coarse = [(r.disc, k) for r, k in zip(pic.rows, weighted)]
            stacked = stacked_blocks(coarse)  # type: ignore[arg-type]
            self._lambdas[key] = (choose_lambda_for_delta(coarse, delta, stacked), stacked)  # type: ignore[arg-type]
        return self._lambdas[key]  # type: ignore[return-value]

    def profile_reaches_far_end(self, order: str, delta: float, err: float) -> bool:
        """Whether the privacy profile (epsilon up to 1.5 times epsilon(delta)) ends inside the
        composition's window, where its smallest delta is positive: then compute() redoes the
        profile in long double (accountant._delta_curve). epsilon(delta) is at most the
        Chernoff bound on the delta-quantile of the loss (delta(eps) <= P(L > eps))."""
        prvs = self.orders[order]
        if not prvs:
            return False
        pic = self.picture(order)
        counts = counts_of(prvs)
        return 1.5 * max(pic.window(counts, 2 * delta)[1], 1.0) < pic.window(counts, err / 4)[1]

    def _attempt(self, pic: _Order, counts: tuple[int, ...], plan: Plan, extended: bool, sweep: int,
                 tally: _Tally, mass: float) -> int:
        """One attempt at the plan's mesh; ``mass``: the composition window's (plan.e_w, or a
        tilted composition's)."""
        if pic.many or (not sweep and tree_pays(pic.rows, counts, mass, pic.width(counts, mass))):
            # (tree.py's groups: pricing_many.py)
            n_live = sum(1 for k in counts if k > 0)
            try:
                seconds, memory, n, out = price_many(
                    pic.rows, [counts[i] for i in pic.idx], pic.weight, n_live, pic.width(counts, mass),
                    plan, extended, self.n_max, IRFFT_S, DISC_EDGE_S, DISC_CELL_S,
                    LONG_FFT_BYTES if extended else FFT_BYTES, mass)
            except GridTooLarge as exc:  # (with what the engine spends before it finds out)
                spent, held = getattr(exc, "spent", (0.0, 0.0))
                tally.add(BUILD_S + spent, held)
                raise
            seconds += BUILD_S + (1 + sweep) * IRFFT_S * out + sweep * POWER_S * out / 2 + REMAKE_BYTE_S * pic.remade
            tally.add(seconds, memory + (SWEEP_FFT_BYTES * n if sweep else 0.0))
            tally.out = out
            return n
        h = plan.h
        cells = [r.cells(h) for r, k in zip(pic.rows, counts)]
        for r, c in zip(pic.rows, cells):
            if c > self.n_max:
                raise GridTooLarge(c, self.n_max, r.span)  # before discretising: free
        seconds = BUILD_S + sum(DISC_EDGE_S * r.edge_cost * r.edges(plan) + (DISC_CELL_S + CHECK_CELL_S) * c
                                for r, c in zip(pic.rows, cells))
        # the rows as they are held: from TREE_ALWAYS rows on, their nonzero cells (packed.py:
        # about one per edge), else every cell
        packed = len(counts) >= TREE_ALWAYS
        kept = sum(min(PACKED_BYTES * r.nonzero(plan), 8.0 * c) if packed else 8.0 * c
                   for r, c in zip(pic.rows, cells))
        memory = kept + max(DISC_CELL_BYTES * c + DISC_EDGE_BYTES * r.edges(plan)
                            for r, c in zip(pic.rows, cells))
        # (a floor for degenerate coarse rows whose mass sits in a cell or two)
        width = max(pic.width(counts, mass), max(r.span for r, k in zip(pic.rows, counts) if k > 0))
        n = fft_len(math.ceil(width / h) + 3, h, plan.agg_max)
        band = pic.band(counts, n * h)
        d_max = max(1, int(2 * plan.agg_max / h) + 1)
        d = 1 << (d_max.bit_length() - 1)
        banded = (n <= BAND_N_MAX and band is not None and band <= n // BAND_FRACTION
                  and any(worth_it(n, max(1, int(band)), c) for c in cells)
                  and n // min(d_max, n) <= self.n_max)
        if banded and band is not None:  # (compose.band_dft: low_dft where it pays, else a full transform)
            seconds += sum(_band_seconds(n, band, c, extended, r.edges(plan))
                           if worth_it(n, max(1, int(band)), c)
                           else RFFT_S * n * (LONG_RFFT if extended else 1.0)
                           for r, c in zip(pic.rows, cells))
            memory = max(memory, kept + BAND_BYTES * max(cells))
            out = n // d
        elif n > self.n_max:
            tally.add(seconds, memory)  # discretised, then found too large
            raise GridTooLarge(n, self.n_max, width)
        else:
            rows = sum(1 for k in counts if k > 0)
            spread = band or pic.kept(counts, n * h)  # the frequencies the powers keep
            live = min(n / 2, spread or n / 2)
            seconds += rows * (RFFT_S * n * (LONG_RFFT if extended else 1.0) + SCAN_S * n / 2
                               + POWER_S * live * (LONG_POWER if extended else 1.0)) + SCAN_S * n / 2
            memory = max(memory, kept + (SWEEP_FFT_BYTES if sweep else LONG_FFT_BYTES if extended
                                         else FFT_BYTES) * n)
            # decimation: the largest power of two d <= d_max whose cut n / (4 d) lies beyond
            # the kept frequencies (compose._decimation's alias test)
            out = n // (min(d, 1 << max(0, int(math.log2(n / (4 * spread))))) if spread else 1)
        # each further count: one power over the frequencies kept (sweep.py cuts each count's
        # band where its power falls below e^-700) and one inverse transform
        live_sweep = min(n / 2, band or pic.kept(counts, n * h) or n / 2)
        seconds += (1 + sweep) * (IRFFT_S * out) + sweep * POWER_S * live_sweep
        memory = max(memory, kept + FINISH_BYTES * out)
        tally.add(seconds, memory)
        tally.out = out
        return n


def _band_seconds(n: int, band: float, cells: int, extended: bool, edges: float | None = None) -> float:
    """band.low_dft of one row: block moments over the cells (over about one per edge when the
    row has wide cells: the others are empty and skipped), then phases and sums over the band
    and the blocks, (R + 1) Taylor terms each."""
    b_size = max(1, min(cells, int(X_MAX * n / (math.pi * band))))
    terms = _terms(math.pi * band * b_size / n)[0] + 1
    moments = BAND_CELL_S * min(cells, cells if edges is None else edges) * (LONG_MOMENTS if extended else 1.0)
    phases = BAND_PHASE_S * band * -(-cells // b_size) * (LONG_PHASES if extended else 1.0)
    return terms * (moments + phases)


def needs_long_double(delta: float, eps_error: float, k_total: int, n: int, out: int) -> bool:
    """Whether float64 is too coarse for epsilon(delta) (escalation.py: the direct tilted path on
    the least grid, or the tilted step after the plain pass): when its round-off is not small
    against delta * eps_error. The round-off is that of the
    K-fold powers (observed: 4 to 35 K u log2 n in delta on DP-SGD grids; 32 is taken) plus
    the inverse transform's noise floor over its ``out`` points (observed: 0.01 to 0.9 u out
    for Laplace rows; 0.5 is taken). On DP-SGD with K = 14063 this says yes from delta 1e-7
    down (observed: no at 1e-6, yes at 1e-8)."""
    u = 2.0 ** -53
    floor = 32 * k_total * u * math.log2(max(n, 2)) + 0.5 * u * out + 1e-14
    return floor > 0.5 * delta * eps_error
