"""The PRV accountant: certified epsilon(delta) and delta(epsilon) for any composition
(docs/method.md, "From a pair to a certified bracket"; the steps of each query and their
order: escalation.py and docs/method.md, "Escalation").

Each order of the neighbouring pair is composed by the certified pipeline (pipeline.py: mesh,
tail cuts, discretisation, composition, certificate) at an error level chosen from the query
(``pipeline.error_level``); nothing here is tuned on examples, and the reported
``error_budget`` lists every term.

Closed forms take precedence where they exist (every row a Gaussian mechanism: mu composes
exactly; one homogeneous pure/approximate-DP pair: the binomial formula of Kairouz, Oh and
Viswanath); the FFT path covers everything else.

Both orders of an add/remove pair are composed when a row is asymmetric (Poisson
subsampling); delta is the maximum over the two (docs/method.md, "Terms"). A single query composes the
second order coarsely first and skips its fine build when that coarse bracket lies below the
first order's (``_deciding``).

The additive error E (pipeline.error_level: delta * 1e-6 rounded down to a power of ten)
keeps the epsilon bracket within 2 * eps_error; where it does not, the deciding orders are
composed tilted towards the answer, and failing that again in long double at E * 1e-3
(escalation.py). Where float64 cannot reach the required E (delta below ~1e-11 on large grids) the bound
widens honestly, up to +inf, never down, with a warning that names the cause.
"""
from __future__ import annotations

import math
import threading
from dataclasses import replace
from typing import Callable, Sequence

import numpy as np

from ..core.cost import ZERO, Cost, summarise
from ..core.errors import Cancelled
from ..core.validate import check_delta, check_eps_error, check_epsilon, number_text
from ..core.values import MAX_COUNT, ORDERS, Bounds, Relation, as_relation
from ..mechanisms import Neighbouring, Row
from ..numerics.compose import INTERRUPTIBLE_SIZE, N_MAX, interruptible, long_double_gain
from ..numerics.tree import compose_many
from ..numerics.pipeline import (certify, check_fits, coarsened, discretize_many, error_level, make_plan,
                                 row_terms, streamed, unclassed)
from ..numerics.pricing import CostModel
from ..numerics.pricing_many import Sampled, counts_of, sample_indices
from ..numerics.profile import CertifiedProfile
from ..numerics.reuse import prv_of, prvs_of
from ..numerics.sweep import check_counts, count_groups, sweep
from ..numerics.tilt import compose_tilted
from . import escalation
from .escalation import MIN_GRID, SCREEN, TILT_FLOOR, Pricing, Run, _intersect, max_bounds, scaled

#: the neighbouring relations the accountant certifies (the kinds' pairs exist for these)
NEIGHBOURING = (Neighbouring.ADD_REMOVE, Neighbouring.REPLACE_ONE)
DEFAULT_EPS_ERROR = 0.01
#: the share of a composition's progress given to discretising its rows (the rest: composing)
DISCRETIZE_SHARE = 0.4
#: an epsilon query composes an order tilted at most this many times (tilt.py: Chernoff's lambda
#: first, then the tilted estimate)
TILT_PASSES = 3


class _Side:
    """One order of the pair, composed at one error level."""

    __slots__ = ("profile", "budget")

    def __init__(self, profile: CertifiedProfile | None, budget: dict | None = None) -> None:
        self.profile = profile  # None: the composition is trivially (0, 0)
        self.budget = {} if budget is None else budget

    def certified(self) -> CertifiedProfile:
        """The profile of a side that was composed (a tilted side always is)."""
        assert self.profile is not None, "a trivial side has no profile"
        return self.profile


class _Joint:
    """Progress of parts built side by side: the whole is the mean of the parts' fractions."""

    def __init__(self, progress, n: int) -> None:
        self.progress, self.done, self.lock = progress, [0.0] * n, threading.Lock()

    def part(self, i: int):
        if self.progress is None:
            return None

        def report(f: float) -> None:
            with self.lock:  # reported in the order computed: the total never goes back
                self.done[i] = max(self.done[i], f)
                self.progress(sum(self.done) / len(self.done))
        return report


def _merged(rows: Sequence[Row]) -> tuple[list[Row], list[int]]:
    """The rows composed: those drawn (count > 0) of a mechanism that is not trivial, the rows of
    one mechanism as one row drawn as often as they are together, in order of first appearance;
    and each row's place among them (-1: not composed). A composition is of independent draws in
    any order, so k1 draws of M and k2 draws of M are k1 + k2 draws of M: one PRV to make, one
    row to discretise and raise to its count. (256 rows of one truncated Poisson step drawn 1 to
    3 times took 202 s as rows and take 3.6 s as one; 20 rows of one Laplace drawn once were
    priced and planned as 20 distinct rows.) A mechanism that cannot be hashed stands alone, and a
    merged row holds at most MAX_COUNT draws (two rows of 10^9 draws each stay two rows)."""
    out: list[Row] = []
    place: list[int] = []
    seen: dict = {}
    for r in rows:
        if r.count <= 0 or r.mechanism.is_trivial():
            place.append(-1)
            continue
        try:
            j = seen.get(r.mechanism)
        except TypeError:  # (unhashable fields: no key)
            j, key = None, None
        else:
            key = r.mechanism
        if j is None or out[j].count + r.count > MAX_COUNT:  # (a row holds at most MAX_COUNT draws)
            j = len(out)
            out.append(r)
            if key is not None:
                seen[key] = j
        else:
            out[j] = Row(out[j].mechanism, out[j].count + r.count)
        place.append(j)
    return out, place


def _rows_prvs(rows: Sequence[Row], order: str):
    """The (PRV, count) of each row composed (``_merged``)."""
    live = _merged(rows)[0]
    return list(zip(prvs_of([r.mechanism for r in live], order), [r.count for r in live]))


def _loss_cap(orders: Sequence[Sequence[tuple]]) -> float:
    """Accountant.loss_cap of the orders' (PRV, count) lists."""
    return _cap_of([[(k, prv.max_loss) for prv, k in prvs] for prvs in orders])


def _cap_of(orders: Sequence[Sequence[tuple[int, float]]]) -> float:
    """The largest composed loss of the orders' (count, largest loss) rows, a little above."""
    top = max((math.fsum(k * top for k, top in rows if k > 0) for rows in orders), default=0.0)
    return top + 1e-9 * max(1.0, abs(top)) if math.isfinite(top) else math.inf


def _spent(orders: Sequence[Sequence[tuple[int, int, float]]]) -> tuple[float, dict[int, float]]:
    """P(the composed loss is +infinity), the larger over the orders, of their (row number,
    count, P(one run's loss is +infinity)) rows, and each row's share (Accountant.infinite_mass)."""
    total, shares = 0.0, dict[int, float]()
    for rows in orders:
        log_keep = 0.0
        for i, count, p in rows:
            if p <= 0:
                continue
            row_keep = count * math.log1p(-p) if p < 1 else -math.inf
            log_keep += row_keep
            shares[i] = max(shares.get(i, 0.0), -math.expm1(row_keep))
        total = max(total, -math.expm1(log_keep))
    return total, shares


def _capped(res: Bounds, cap: float) -> Bounds:
    """``res`` with no end above ``cap``, an upper bound on epsilon."""
    if res.upper <= cap:
        return res
    return Bounds(min(res.lower, cap), min(res.estimate, cap), cap)


def rows_under(rows: Sequence[Row], relation: Relation) -> list[Row]:
    """Each row with the mechanism whose add/remove pair dominates it under ``relation``
    (``Mechanism.under``); a ValueError names the first row that has none."""
    out = []
    for i, r in enumerate(rows):
        try:
            out.append(Row(r.mechanism.under(relation), r.count))
        except ValueError as exc:
            raise ValueError(f"row {i + 1} ({r.mechanism.title}): {exc}") from None
    return out


#: from this many distinct rows on, the two orders are built one after the other (_parallel).
#: Measured (warm, 2 cores): 1000 distinct DP-SGD steps at delta 1e-5, 2.34 s side by side
#: against 1.81 s one after the other; 256 rows 0.51 s against 0.40 s; 128 rows equal; one
#: row of 10^4 steps (long FFTs, which release the GIL) 1.63 s side by side against 2.50 s.
SERIAL_ROWS = 128
#: the curve's long-double pass runs only when it cuts the modelled round-off this much
LONG_DOUBLE_GAIN = 0.25


def _round_off_bound(eps: np.ndarray, out, sides: Sequence[_Side]) -> bool:
    """Whether a single delta's bracket is held back by round-off: its sides' float round-off
    (``fp_abs``, which a finer error level does not lower) is above TILT_FLOOR of the estimate,
    so that escalation.TiltedDelta will compose it tilted whatever plain level comes first."""
    est = float(np.min(out[1])) if out[1].size else 0.0
    fp = max((s.budget.get("fp_abs", 0.0) for s in sides), default=0.0)
    return eps.size == 1 and est > 0 and fp > TILT_FLOOR * est


class Accountant:
    """Certified accountant for one composition.

    Parameters
    ----------
    rows : sequence of Row
        The composition: each row's mechanism composed ``count`` times.
    eps_error : float
        Target half-width of the epsilon bracket (the bracket is at most
        2 * eps_error wide wherever float64 allows).
    closed_forms : bool
        Answer epsilon/delta queries in closed form where one exists (default);
        False forces the FFT path (used by the tests that check it against them).
    screen : bool
        Let single queries skip the fine build of an order that a coarse build shows to be
        dominated (``_deciding``; default). Callers that will want whole curves anyway (which
        need both orders) pass False and save the coarse build.
    neighbouring, group_size : the relation the guarantee is for (``kinds.base.Relation``;
        ``neighbouring`` may be a Relation). Each row is replaced by the mechanism whose
        add/remove pair dominates it under that relation (``rows``); ``given_rows`` keeps
        the rows as given.
    """

    def __init__(self, rows: Sequence[Row], eps_error: float = DEFAULT_EPS_ERROR,
                 neighbouring: Relation | Neighbouring | str = Neighbouring.ADD_REMOVE,
                 cancel: Callable[[], bool] | None = None,
                 n_max: int = N_MAX, closed_forms: bool = True, screen: bool = True,
                 group_size: int = 1) -> None:
        self.given_rows = [r if isinstance(r, Row) else Row(*r) for r in rows]
        self.eps_error = check_eps_error(eps_error)
        self.relation = neighbouring if isinstance(neighbouring, Relation) else \
            Relation(as_relation(neighbouring).neighbouring, group_size)
        self.neighbouring = self.relation.neighbouring
        self.rows = rows_under(self.given_rows, self.relation)
        self.cancel = cancel
        self.n_max = n_max
        self.closed_forms = closed_forms
        self.screen = screen
        needed = {o for r in self.rows if r.count > 0 for o in r.mechanism.orders()}
        self.orders = [o for o in ORDERS if o in needed] or ["remove"]
        #: (order, error level, long double, screen) -> side
        self._cache: dict[tuple[str, float, bool, bool], _Side] = {}
        #: the largest eps_error actually achieved (above eps_error when the grid was capped)
        self.eps_error_used = self.eps_error
        self._notes: list[str] = []
        self._lock = threading.Lock()
        #: delta -> error level behind the answer given for it
        self._used: dict[float, float] = {}
        #: (order, error level, target) -> side composed tilted towards target (tilt.py)
        self._tilted: dict[tuple[str, float, tuple[str, float]], _Side] = {}
        #: delta -> {order: tilted side} behind the answer given for it
        self._tilt_used: dict[float, dict[str, _Side]] = {}
        self._prvs: dict[str, list] = {}
        self._cap: float | None = None  # loss_cap, worked out once
        self._merge: tuple[list[Row], list[int]] | None = None  # _merged, worked out once
        self._inf: tuple[float, np.ndarray, np.ndarray] | None = None  # infinite_mass, once

    # ------------------------------------------------------------ building
    def has_blatant(self) -> bool:
        """Whether a row's loss is +infinity beyond any delta (``Mechanism.is_blatant``)."""
        return any(r.count > 0 and r.mechanism.is_blatant() for r in self.rows)

    @property
    def total_count(self) -> int:
        return sum(r.count for r in self.rows if r.count > 0 and not r.mechanism.is_trivial())

    def _side(self, order: str, err: float, progress=None, extended: bool = False,
              screen: bool = False) -> _Side:
        key = (order, err, extended, screen)
        if key not in self._cache:
            self._cache[key] = self._build(order, err, progress, extended, screen)
        return self._cache[key]

    def _sides(self, err: float, progress=None, extended: bool = False) -> list[_Side]:
        """Both orders of the pair in full at one error level; missing ones are built side by
        side for few rows (numpy's FFTs and array loops release the GIL, so a second core
        shortens the wait; compose.py keeps big grids one at a time), one after the other from
        SERIAL_ROWS distinct rows on (``_parallel``)."""
        self._parallel([(o, False) for o in self.orders], err, progress, extended)
        return [self._cache[(o, err, extended, False)] for o in self.orders]

    def _parallel(self, jobs: list[tuple[str, bool]], err: float, progress, extended: bool) -> None:
        """Build the missing (order, screen) sides of ``jobs``, the first in this thread; one
        after the other from SERIAL_ROWS distinct rows on (their time is then per-row Python
        work that holds the GIL: two threads only contend for it)."""
        missing = [j for j in jobs if (j[0], err, extended, j[1]) not in self._cache]
        if len(missing) <= 1 or sum(r.count > 0 for r in self.rows) >= SERIAL_ROWS:
            for order, screen in missing:
                self._side(order, err, progress, extended, screen)
            return
        joint = _Joint(progress, len(missing))
        errors: list[BaseException] = []

        def build(i: int, order: str, screen: bool) -> None:
            try:
                self._side(order, err, joint.part(i), extended, screen)
            except BaseException as exc:  # noqa: BLE001 - re-raised below
                errors.append(exc)

        threads = [threading.Thread(target=build, args=(i, o, sc), daemon=True, name=f"prvgui-{o}")
                   for i, (o, sc) in enumerate(missing[1:], 1)]
        for th in threads:
            th.start()
        build(0, *missing[0])
        for th in threads:
            th.join()
        if errors:
            raise next((e for e in errors if not isinstance(e, Cancelled)), errors[0])

    def _deciding(self, err: float, progress, extended: bool, query,
                  single: bool = True) -> list[tuple[_Side, tuple]]:
        """The sides that decide ``query`` at one error level, each with its answer; ``query``
        maps a profile (None: the side is trivially private) to (lower, estimate, upper),
        floats or arrays; ``single``: the query is one number (a curve needs both orders:
        at epsilon 0 both give the total variation distance).

        Screening: the first order is composed in full while the second is composed at
        SCREEN x eps_error beside it. The true value is the max over the orders; when the
        second order's coarse upper bound lies at or below the first's lower bound wherever the
        query looks, the second order's true value does too, so the first order's bracket alone
        holds the max: the fine build of the second is skipped. Otherwise it is built too. For
        DP-SGD at k = 10^4 the add order's coarse bracket is [8.29, 8.48] against the remove
        order's [10.044, 10.063]."""
        if not (self.screen and single) or len(self.orders) == 1 \
                or all((o, err, extended, False) in self._cache for o in self.orders):
            sides = self._sides(err, progress, extended)
            return [(s, query(s.profile)) for s in sides]
        built = [o for o in self.orders if (o, err, extended, False) in self._cache]
        first = built[0] if built else self.orders[0]
        second = next(o for o in self.orders if o != first)
        self._parallel([(first, False), (second, True)], err, progress, extended)
        one = self._cache[(first, err, extended, False)]
        coarse = self._cache[(second, err, extended, True)]
        got = query(one.profile)
        if np.all(np.asarray(query(coarse.profile)[2]) <= np.asarray(got[0])):
            return [(one, got)]
        other = self._side(second, err, progress, extended)
        return [(one, got), (other, query(other.profile))]

    def _order_prvs(self, order: str) -> list:
        """The rows' PRVs in one order, with their counts (made once: the estimate and every
        build of this accountant share them; made again after ``_let_prvs_go``)."""
        with self._lock:
            got = self._prvs.get(order)
        if got is None:
            got = _rows_prvs(self.rows, order)
            with self._lock:
                got = self._prvs.setdefault(order, got)
        return got

    def _let_prvs_go(self, order: str) -> None:
        """Forget ``order``'s PRVs: a streamed composition's rows hold their own PRVs, to be
        discretised again, and each goes once its row is composed (10^5 discrete Gaussians:
        about 1.3 kB a PRV, 0.13 GB, which the top of the tree no longer holds). When the orders
        are built one after the other (SERIAL_ROWS), the other order's are forgotten too (made
        for the loss cap and the infinite mass, they would sit beside this composition; side by
        side, the other build may be about to take them). A later build or estimate makes them
        again (about 25 s at 10^5 rows, against minutes of composing); a build under way holds
        its own until discretised."""
        self.loss_cap()  # (both read every row's PRV: worked out first, and kept)
        self.infinite_mass()
        with self._lock:
            if self._live_rows() >= SERIAL_ROWS:
                self._prvs.clear()
            else:
                self._prvs.pop(order, None)

    def _live_indexed(self) -> list[tuple[int, Row]]:
        """(index, row) of each row composed (drawn, not trivial), in order, before ``_merged``."""
        return [(i, r) for i, r in enumerate(self.rows) if r.count > 0 and not r.mechanism.is_trivial()]

    def _merged(self) -> tuple[list[Row], list[int]]:
        """``_merged`` of the rows, worked out once: the rows ``_rows_prvs`` composes, and each
        row's place among them."""
        if self._merge is None:
            self._merge = _merged(self.rows)
        return self._merge

    def _live_rows(self) -> int:
        """How many rows ``_rows_prvs`` composes (without making their PRVs)."""
        return len(self._merged()[0])

    def _build(self, order: str, err: float, progress=None, extended: bool = False,
               screen: bool = False) -> _Side:
        if not self._live_rows():
            return _Side(None, {"trivial": True})
        k_total = sum(k for _, k in self._order_prvs(order))

        def build(scale: float) -> _Side:
            # in a helper thread when cancellable, so that a cancel returns at once even in the
            # middle of a long numpy call (discretising millions of cells)
            return interruptible(self._build_at, order, err, scale, progress, extended,
                                 cancel=self.cancel, size=INTERRUPTIBLE_SIZE)
        side, scale = coarsened(build, self.eps_error, k_total, err, self.n_max,
                                SCREEN if screen else 1.0, self._live_rows())
        if screen:
            side.budget["screen"] = True
        else:
            self._widened_to(scale * self.eps_error)
        return side

    def _widened_to(self, eps_error: float) -> None:
        with self._lock:  # the two orders may be built in parallel threads
            self.eps_error_used = max(self.eps_error_used, eps_error)

    def _build_at(self, order: str, err: float, scale: float, progress,
                  extended: bool = False, target: tuple[str, float] | None = None) -> _Side:
        # (the PRVs are asked for here, not passed in: no caller's frame holds their list, so
        # that streamed rows' PRVs go as their rows are composed: ``_let_prvs_go``)
        prvs = self._order_prvs(order)
        plan = make_plan(self.eps_error, scale, sum(k for _, k in prvs), err, len(prvs))
        if target is None:  # (a tilted composition's window is another distribution's)
            check_fits(prvs, plan, self.n_max)
        discs = discretize_many(prvs, plan, self.n_max, self.cancel,
                                scaled(progress, 0.0, DISCRETIZE_SHARE))
        # (what the certificate reads from the rows, worked out now: the rows themselves, their
        # fields with them, go as they are composed: consume)
        terms = row_terms(discs, plan)
        plain = unclassed(plan, terms.fail, self.eps_error, scale, len(prvs))
        if plain is not None:  # (the class plan's bound failed for these rows: pipeline.unclassed)
            plan = plain
            del discs
            discs = discretize_many(prvs, plan, self.n_max, self.cancel)
            terms = row_terms(discs, plan)
        if streamed(discs):
            self._let_prvs_go(order)
        del prvs
        options = dict(cancel=self.cancel, progress=scaled(progress, DISCRETIZE_SHARE, 1.0),
                       n_max=self.n_max, agg_max=plan.agg_max, extended=extended)
        composed = None if target is None else compose_tilted(discs, target, plan.e_w, consume=True, **options)
        if composed is None:
            composed = compose_many(discs, plan.e_w, consume=True, **options)
        prof, budget = certify(composed, terms, plan)
        return _Side(prof, {"order": order, **budget, "long_double": extended})

    def _tilted_side(self, order: str, err: float, target: tuple[str, float], progress=None) -> _Side:
        """One order composed tilted towards ``target`` (tilt.py), at error level ``err``."""
        key = (order, err, target)
        if key not in self._tilted:
            k_total = sum(k for _, k in self._order_prvs(order))

            def build(scale: float) -> _Side:
                return interruptible(self._build_at, order, err, scale, progress, False, target,
                                     cancel=self.cancel, size=INTERRUPTIBLE_SIZE)
            side, scale = coarsened(build, self.eps_error, k_total, err, self.n_max,
                                    rows=self._live_rows())
            self._widened_to(scale * self.eps_error)
            self._tilted[key] = side
        return self._tilted[key]

    @property
    def warnings(self) -> list[str]:
        """Human-readable notes about the answers given so far."""
        out = list(self._notes)
        if self.eps_error_used > self.eps_error * (1 + 1e-9):
            out.insert(0, f"the grid is limited to {self.n_max:,} points, so some answers are coarser than "
                          f"requested (down to accuracy ±{self.eps_error_used:.3g} instead of "
                          f"±{number_text(self.eps_error)}); each bracket shows the width it has")
        return out

    # ------------------------------------------------------------ cost
    def cost(self, delta: float | None = None, epsilon: float | None = None, curves: bool = False,
                 steps: tuple[int, Sequence[int]] | None = None) -> Cost:
        """The predicted time and peak memory of ``epsilon(delta)`` and ``delta(epsilon)`` (either
        may be None), plus, with ``curves``, both orders in full at delta's error level (the
        profiles behind the curves), and with ``steps`` = (row index, counts), of
        ``epsilon_vs_count``. Each query's strategies price their own steps (escalation.py,
        numerics/pricing.py) in milliseconds; nothing is composed. A warning, not a promise:
        docs/method.md, "Escalation", lists what is left out."""
        delta = None if delta is None else check_delta(delta)
        epsilon = None if epsilon is None else check_epsilon(epsilon)
        if self.has_blatant():
            return ZERO
        try:
            return self._cost(delta, epsilon, curves, steps)
        except MemoryError as exc:  # (a row no grid holds even to be pictured, e.g. pure DP at
            # epsilon 1e30 under replace-one: the query fails at once, saying so, as a ``fits``
            # False estimate foretells; the estimate is not an error of its own)
            return Cost(0.0, 0.0, int(getattr(exc, "n", 0)), str(exc), fits=False)

    def _cost(self, delta: float | None, epsilon: float | None, curves: bool,
              steps: tuple[int, Sequence[int]] | None) -> Cost:
        """``cost`` of checked targets."""
        levels = ([error_level(delta) * 1e-3] if delta is not None else []) + [1e-12]
        model = CostModel({o: self._priced_rows(o) for o in self.orders},
                          self.eps_error, self.n_max, min(levels))
        spent, cap = self._priced_extremes()
        p = Pricing(self, model, 0.0, single=self.screen and not curves and len(self.orders) > 1,
                    spent=spent, cap=cap)
        parts: list[Cost] = []
        if delta is not None:
            p.x, p.level = delta, error_level(delta)
            parts += escalation.price(escalation.EPSILON, p)  # what epsilon(delta) runs, step by step
            if curves:  # the profiles behind the curves: both orders in full at delta's level
                parts.append(p.builds(p.level))
                if model.profile_reaches_far_end(self.orders[0], delta, p.level) \
                        and self._long_double_pays(MIN_GRID):
                    parts.append(replace(p.builds(p.level, True), why=(
                        "the privacy profile's far end is redone in long double")))
        if epsilon is not None:
            p.x = epsilon
            parts += escalation.price(escalation.DELTA, p)
        if steps is not None:
            parts.append(self._cost_steps(steps[0], steps[1], error_level(delta or 1e-5), model))
        total = summarise(parts, self.eps_error, self.n_max)
        # (the rows' PRVs are held throughout, beside each step's peak)
        return replace(total, bytes=total.bytes + model.held()) if total.bytes > 0 else total

    def _cost_steps(self, row_index: int, counts: Sequence[int], level: float,
                        model: CostModel | None = None) -> Cost:
        """``epsilon_vs_count``'s compositions: per order, one per group of counts (sweep.py).
        ``model``: the query's cost model, whose pictures of the rows (the costly part of an
        estimate) serve the sweep too when the varying row is one of its rows."""
        self._check_row_index(row_index)
        cs = check_counts(counts)
        mech = self.rows[row_index].mechanism
        others = [r for i, r in enumerate(self.rows) if i != row_index]
        if mech.is_blatant() or any(r.count > 0 and r.mechanism.is_blatant() for r in others):
            return ZERO
        parts = []
        place = self._merged()[1]
        if model is not None and place[row_index] >= 0 and place.count(place[row_index]) == 1:
            pos = place[row_index]  # the varying row's place among the model's rows (its own)
            for o in self.orders:
                base = list(counts_of(model.orders[o]))
                for idx in count_groups(cs, fixed=sum(base) - base[pos]):
                    counts_g = tuple(base[:pos] + [int(cs[idx].max())] + base[pos + 1:])
                    parts.append(model.build(o, level, counts=counts_g, sweep=idx.size)[0])
            return replace(summarise(parts, self.eps_error, self.n_max),
                           why=f"the epsilon-versus-count curve composes {cs.size} counts")
        for o in self.orders:
            prvs = _rows_prvs(others, o)
            fixed = tuple(k for _, k in prvs)
            if not mech.is_trivial():
                prvs = prvs + [(mech.prv(o), int(cs.max()))]
            model = CostModel({o: prvs}, self.eps_error, self.n_max, level)
            for idx in count_groups(cs, fixed=sum(fixed)):
                counts_g = fixed + (() if mech.is_trivial() else (int(cs[idx].max()),))
                parts.append(model.build(o, level, counts=counts_g, sweep=idx.size)[0])
        return replace(summarise(parts, self.eps_error, self.n_max),
                       why=f"the epsilon-versus-count curve composes {cs.size} counts")

    # ------------------------------------------------------------ queries
    def infinite_mass(self) -> tuple[float, list[tuple[int, float]]]:
        """P(the composed loss is +infinity), the larger over the orders, and each row's share
        (row number from 1, 1 - (1 - p)^count): the delta the rows spend whatever epsilon is
        (an approximate-DP row's delta, a pmf pair's outcomes that Q never gives). Worked out
        once: every query asks, and many rows' PRVs may have gone (``_let_prvs_go``)."""
        if self._inf is None:  # (kept as arrays: 10^5 rows' shares as tuples would be 10 MB)
            total, shares = self._infinite_mass()
            self._inf = (total, np.array([i for i, _ in shares], dtype=np.int64),
                         np.array([p for _, p in shares], dtype=float))
        total, idx, share = self._inf
        return total, list(zip(idx.tolist(), share.tolist()))

    def _infinite_mass(self) -> tuple[float, list[tuple[int, float]]]:
        # (the PRVs the builds use, made once: past reuse.MAX_PRVS rows a second prvs_of would
        # make every one of them again, 25 s for 10^5 discrete Gaussians)
        live, place = self._live_indexed(), self._merged()[1]
        total, shares = _spent([[(i + 1, r.count, prvs[place[i]][0].inf_mass)
                                 for (i, r) in live if o in r.mechanism.orders()]
                                for o, prvs in ((o, self._order_prvs(o)) for o in self.orders)])
        return total, sorted(shares.items())

    def _priced_rows(self, order: str):
        """The rows of ``order`` as the cost model takes them: their PRVs when made or few, else
        (many rows, pricing_many.sample_indices pictures some) a Sampled order, whose pictured
        rows' PRVs alone are made (reuse.prvs_of: kept for the query that follows)."""
        with self._lock:
            got = self._prvs.get(order)
        if got is not None:
            return got
        live = self._merged()[0]
        counts = [r.count for r in live]
        idx = sample_indices(counts)
        if len(idx) == len(live):
            return self._order_prvs(order)
        return Sampled(counts, dict(zip(idx, prvs_of([live[i].mechanism for i in idx], order))))

    def _priced_extremes(self) -> tuple[float, float]:
        """(at most infinite_mass()[0], at least loss_cap()) for an estimate: the two when known
        or when the rows' PRVs are made, else from each row's Mechanism.loss_bounds (many rows,
        whose PRVs the estimate does not make: ``_priced_rows``)."""
        if self._inf is not None and self._cap is not None:
            return self._inf[0], self._cap
        with self._lock:
            made = all(o in self._prvs for o in self.orders)
        if made:  # (few rows: _priced_rows made them)
            return self.infinite_mass()[0], self.loss_cap()
        live = self._live_indexed()
        bounds = {o: [r.mechanism.loss_bounds(o) for _, r in live] for o in self.orders}
        spent = _spent([[(i + 1, r.count, b[0]) for (i, r), b in zip(live, bounds[o]) if o in r.mechanism.orders()]
                        for o in self.orders])[0]
        return spent, _cap_of([[(r.count, b[1]) for (_, r), b in zip(live, bounds[o])] for o in self.orders])

    def epsilon(self, delta: float, progress=None) -> Bounds:
        """Certified bounds on epsilon(delta): the strategies of ``escalation.EPSILON`` in order
        (a blatant row, delta below what the rows spend, a closed form, the plain or the direct
        path, tilting, long double), then capped by the largest loss the rows take."""
        delta = check_delta(delta)
        run = escalation.answer(escalation.EPSILON, Run(self, delta, progress, error_level(delta)))
        if run.done:
            return run.bracket()
        level, res = run.level, run.bracket()
        res = _capped(res, self.loss_cap())
        if math.isfinite(res.estimate) and res.upper - res.lower > 2 * self.eps_error_used * 1.001:
            level = self._used.get(delta, level)
            ext = delta in self._used
            sides = list(self._tilt_used.get(delta, {}).values()) or \
                [self._cache[k] for o in self.orders for k in ((o, level, ext, False),) if k in self._cache]
            self._note(f"ε at δ = {number_text(delta)}: the bracket is wider than 2 × the accuracy "
                       "(ε error)" + (" and its upper bound is infinite" if math.isinf(res.upper) else "")
                       + f": {self._why_wide(sides, delta)}")
        return res

    def loss_cap(self) -> float:
        """The largest value the composed privacy loss takes in either order (the rows' largest
        losses times their counts; inf when one is unbounded), a little above it for the float
        round-off of that sum. delta(eps) = 0 from there on, so epsilon(delta) <= it at every
        delta > 0: pure-DP rows keep a finite upper end where float64's error terms cannot
        resolve delta (Laplace x 50 at delta 1e-200 had [4.99, inf] for a loss of at most 5)."""
        if self._cap is None:
            self._cap = _loss_cap([self._order_prvs(o) for o in self.orders])
        return self._cap

    def _epsilon_parts(self, delta: float, level: float, progress=None,
                       extended: bool = False) -> list[tuple[_Side, tuple[float, float, float]]]:
        """The sides that decide epsilon(delta) at one level, each with its bracket."""
        def query(p: CertifiedProfile | None) -> tuple[float, float, float]:
            if p is None:
                return 0.0, 0.0, 0.0
            b = p.epsilon(delta)
            return b.lower, b.estimate, b.upper
        return self._deciding(level, progress, extended, query)

    def _unresolved_parts(self, delta: float, level: float, progress=None) -> list[tuple[_Side, tuple]]:
        """``_epsilon_parts`` without composing the first order: its bracket is (0, inf), so
        that ``_epsilon_tilted`` composes it first; each other order composed coarsely
        (``_deciding``'s screen), as it would have been beside it."""
        first = self.orders[0]
        # (its estimate unknown, taken as inf: _epsilon_tilted tilts the highest estimate first)
        out = [(_Side(None, {"order": first}), (0.0, math.inf, math.inf)) if self._live_rows()
               else (_Side(None, {"trivial": True}), (0.0, 0.0, 0.0))]
        for o in self.orders[1:]:
            side = self._side(o, level, progress, False, screen=True)
            b = None if side.profile is None else side.profile.epsilon(delta)
            out.append((side, (0.0, 0.0, 0.0) if b is None else (b.lower, b.estimate, b.upper)))
        return out

    def _epsilon_at(self, delta: float, level: float, progress=None, extended: bool = False) -> Bounds:
        return max_bounds(self._epsilon_parts(delta, level, progress, extended))

    def _epsilon_tilted(self, delta: float, level: float, parts, res: Bounds, progress=None) -> Bounds:
        """``res`` narrowed by tilted compositions of the sides in ``parts`` that may decide it;
        each order's bracket is intersected with its tilted ones (all hold), then the max over
        the orders taken. The order with the largest estimate goes first, tilted at Chernoff's
        lambda for delta, then (up to twice) at its tilted estimate. Each later order is tilted
        first at the lower end found so far: when its upper end then lies below it, it cannot
        raise the max (as in ``_deciding``) and is left there."""
        out, used = [], {}
        lower = res.lower
        for side, b in sorted(parts, key=lambda p: (-p[1][2], -p[1][1])):
            order = side.budget.get("order")
            if order is None or b[2] <= lower:
                out.append((side, b))  # trivial, or cannot raise the max's upper end
                continue
            got = Bounds(*b)
            target = ("eps", lower) if out and lower > 0 else ("delta", delta)
            for _ in range(TILT_PASSES):
                tside = self._tilted_side(order, level, target, progress)
                tb = tside.certified().epsilon(delta)
                got = _intersect(got, tb)
                used[order] = tside
                if got.upper <= lower or got.upper - got.lower <= 2 * self.eps_error_used \
                        or not math.isfinite(tb.estimate) \
                        or target[0] == "eps" and abs(tb.estimate - target[1]) < 0.25 * self.eps_error:
                    break
                target = ("eps", tb.estimate)
            out.append((side, (got.lower, got.estimate, got.upper)))
            lower = max(lower, got.lower)
        if used:
            self._tilt_used[delta] = used
        return _intersect(res, max_bounds(out))

    def delta(self, epsilon: float, progress=None) -> Bounds:
        """Certified bounds on delta(epsilon): the strategies of ``escalation.DELTA`` in order (a
        closed form, a blatant row, epsilon beyond every loss, the plain compositions, tilting)."""
        epsilon = check_epsilon(epsilon)
        run = escalation.answer(escalation.DELTA, Run(self, epsilon, progress))
        if run.done:
            return run.bracket()
        eps, res, sides, level = np.array([epsilon]), run.bracket(), run.parts, run.level
        # the bracket eps_error asks for: the estimate eps_error to either side
        profs = [s.profile for s in sides if s.profile is not None]
        if profs:
            shifted = [p.delta(eps + np.array([[1.0], [-1.0]]) * self.eps_error_used)[1] for p in profs]
            asked_lo, asked_hi = (max(float(v[i, 0]) for v in shifted) for i in (0, 1))
            # beyond it by more than 1% of its width or than the additive error the level plans for
            outside = max(asked_lo - res.lower, res.upper - asked_hi)
            if outside > 0.01 * (asked_hi - asked_lo) + 10 * level:
                self._note(f"δ at ε = {number_text(epsilon)}: the bracket [{res.lower:.3g}, "
                           f"{res.upper:.3g}] is wider than the accuracy ±{self.eps_error_used:.3g} "
                           f"in ε asks for "
                           f"([{asked_lo:.3g}, {asked_hi:.3g}]): {self._why_wide(sides, res.estimate)}")
        return res

    def _delta_tilted(self, epsilon: float, level: float, sides: list[_Side], res: Bounds
                      ) -> tuple[Bounds, list[_Side], float]:
        """``res`` narrowed by tilted compositions of the deciding ``sides`` (each order's bracket
        intersected with its tilted one, then the max taken); the error level follows the tilted
        estimate down (the coupling and window terms are additive in delta too), at most three
        times. Returns the bracket, the sides behind it and the level they were composed at."""
        eps = np.array([epsilon])
        composed_at = level
        for _ in range(4):
            out, used, composed_at = [], [], level
            for side in sides:
                order = side.budget.get("order")
                if side.profile is None or order is None:
                    used.append(side)
                    continue
                plain = Bounds(*(float(v[0]) for v in side.profile.delta(eps)))
                tside = self._tilted_side(order, level, ("eps", epsilon))
                got = _intersect(plain, Bounds(*(float(v[0]) for v in tside.certified().delta(eps))))
                out.append((got.lower, got.estimate, got.upper))
                used.append(tside)
            if not out:
                return res, sides, composed_at
            res, sides = _intersect(res, Bounds(*(max(b[i] for b in out) for i in range(3)))), used
            # the next level from the estimate, else from Chernoff's bound e^{L - lambda epsilon}
            # >= delta of the tilted rows (a guess: delta is usually well below it), else (the
            # rows' tails were cut before epsilon) 24 decades further down
            logs = [min(0.0, s.budget["tilt_log_scale"] - s.budget["tilt_lambda"] * epsilon)
                    for s in used if "tilt_lambda" in s.budget]
            if res.estimate > 0:
                guess = res.estimate
            else:  # (in logs: e^(L - lambda epsilon) underflows far out)
                guess = math.exp(max(max(logs) + math.log(1e-4), -690.0)) if logs else 0.0
            finer = max(error_level(guess) if guess > 0 else level * 1e-24, 1e-300)
            if finer >= level:  # the level already suits the answer
                break
            level = finer
        return res, sides, composed_at

    def delta_curve(self, eps: np.ndarray, level: float | None = None, progress=None, refine: bool = True):
        """(lower, estimate, upper) arrays of delta at each eps (the privacy profile).
        ``refine=False`` skips the long-double recomposition of the curve's small end (the
        bounds hold either way; the GUI shows the quick curve first, then the refined one)."""
        eps = np.asarray(eps, dtype=float)
        if any(r.count > 0 and r.mechanism.is_blatant() for r in self.rows):
            one = np.ones(eps.shape)
            return one, one, one
        curve = self._delta_curve(eps, level, progress, refine)[0]
        beyond = eps >= self.loss_cap()  # the loss never exceeds these
        return tuple(np.where(beyond, 0.0, c) for c in curve) if beyond.any() else curve

    def _delta_curve(self, eps: np.ndarray, level: float | None, progress, refine: bool = True):
        """(the curve's (lower, estimate, upper), the sides that decided it, their level)."""
        lvl = 1e-12 if level is None else level
        known = self._composed_level() if level is None else None
        out = None
        if known is not None:
            # a level composed already (the headline's) serves when its additive error is
            # small against the answer, as that of a query at this delta would be planned
            out, sides = self._delta_curve_at(eps, known, progress)
            est_min = float(np.min(out[1])) if out[1].size else 1.0
            if est_min > 0 and known <= error_level(est_min):
                lvl, level = known, known
            elif not _round_off_bound(eps, out, sides):
                out = None
        if out is None:
            out, sides = self._delta_curve_at(eps, lvl, progress)
        est_min = float(np.min(out[1])) if out[1].size else 1.0
        # the smallest delta the level must resolve: the estimate where it stands above the
        # sides' additive error; below it the estimate may be any number down to the mass at
        # +inf (1e-304 for a discrete Gaussian: a level of 1e-300 would cut every row's tails
        # there; 400 mixed rows, delta(4.5) ~ 4e-17 took 56 s on 2.4e7 points), and the
        # certified upper end stands in (the tilted step then refines from its own estimate)
        floor = max((s.profile.err_abs for s in sides if s.profile is not None), default=0.0)
        basis = est_min if est_min > floor or not out[2].size else float(np.min(out[2]))
        if level is None and 0 < basis < 1e-6 and error_level(basis) < lvl:
            # refine where the additive error is not small against the answer; a single delta
            # held back by round-off gains nothing from a finer plain level (_round_off_bound):
            # its tilted step (escalation.TiltedDelta) starts at that level instead (1000
            # distinct DP-SGD steps, delta(5) ~ 1e-14: five plain builds, 10 s, skipped)
            lvl = error_level(basis)
            if not _round_off_bound(eps, out, sides):
                out, sides = self._delta_curve_at(eps, lvl, progress)
        # where round-off dominates at the curve's small end: the rows' transforms in long
        # double (as the epsilon query's retry does)
        fp = max(s.budget.get("fp_abs", 0.0) for s in sides)
        n_fft = max((int(s.budget.get("n_fft", 1)) for s in sides), default=1)
        if refine and 0 < est_min and fp > 0.01 * est_min and self._long_double_pays(n_fft):
            out, sides = self._delta_curve_at(eps, lvl, progress, extended=True)
        return out, sides, lvl

    def _long_double_pays(self, n: int) -> bool:
        """Whether composing again in long double on about n points cuts the modelled round-off
        at least LONG_DOUBLE_GAIN-fold (compose.long_double_gain): it does for rows drawn many
        times, not for many rows drawn once (1000 distinct DP-SGD steps: the window's curve
        took 73 s more for no narrower bracket)."""
        counts = [r.count for r in self.rows if r.count > 0 and not r.mechanism.is_trivial()]
        return long_double_gain(counts, n) <= LONG_DOUBLE_GAIN

    def _composed_level(self) -> float | None:
        """The finest error level at which every order has been composed in float64 (in full or
        screened), None if none."""
        levels = [lvl for (o, lvl, ext, _) in list(self._cache) if not ext and o == self.orders[0]]
        full = [lvl for lvl in levels
                if all(any((o, lvl, False, sc) in self._cache for sc in (False, True)) for o in self.orders)]
        return min(full, default=None)

    def _delta_curve_at(self, eps, level, progress, extended: bool = False):
        """((lower, estimate, upper), the sides that decided them)."""
        def query(p: CertifiedProfile | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
            if p is None:
                z = np.zeros(eps.shape)
                return z, z, z
            return p.delta(eps)
        parts = self._deciding(level, progress, extended, query, single=eps.size == 1)
        out = tuple(np.maximum.reduce([got[i] for _, got in parts]) for i in range(3))
        return out, [s for s, _ in parts]

    def _check_row_index(self, row_index: object) -> None:
        if isinstance(row_index, bool) or not isinstance(row_index, (int, np.integer)) \
                or not 0 <= row_index < len(self.rows):
            raise ValueError(f"row index must be in [0, {len(self.rows) - 1}], got {row_index!r}")

    def _note(self, note: str) -> None:
        with self._lock:
            if note not in self._notes:
                self._notes.append(note)

    @staticmethod
    def _why_wide(sides: Sequence[_Side], delta: float | None = None) -> str:
        """Which error term widened a bracket beyond eps_error, in words."""
        if delta is not None and error_level(delta) > delta * 1e-4:
            return (f"δ is too small for float64: the certificate's error terms cannot go below "
                    f"{error_level(0.0):g}, which is not small against δ")
        profs = [(s, s.profile) for s in sides if s.profile is not None]
        if not profs:
            return "float64 round-off"
        worst, prof = max(profs, key=lambda sp: sp[1].err_rel)
        if prof.err_rel > 0.01:
            return (f"the rounding of the rows' probabilities over {worst.budget.get('K', 0)} draws allows "
                    f"a relative error of {prof.err_rel:.2g} in δ")
        err = max(s.budget.get("total_abs", 0.0) for s, _ in profs)
        return (f"its additive error {err:.1g} (float64 round-off of the composition) is not small "
                "against δ")

    def epsilon_vs_count(self, row_index: int, counts: Sequence[int], delta: float,
                         progress=None) -> tuple[np.ndarray, list[Bounds]]:
        """Certified epsilon(delta) for each count of row ``row_index``, the other rows fixed
        (sweep.py); returns the counts (sorted, unique) and their bounds."""
        delta = check_delta(delta)
        self._check_row_index(row_index)
        cs = check_counts(counts)
        others = [r for i, r in enumerate(self.rows) if i != row_index]
        mech = self.rows[row_index].mechanism
        inf = Bounds(math.inf, math.inf, math.inf)
        if any(r.count > 0 and r.mechanism.is_blatant() for r in others):
            return cs, [inf] * cs.size
        if mech.is_blatant():  # any run reveals the record; without it, the others' epsilon
            active = [r for r in others if r.count > 0 and not r.mechanism.is_trivial()]
            base = Accountant(active, self.eps_error, cancel=self.cancel,
                              n_max=self.n_max).epsilon(delta) if active else Bounds(0.0, 0.0, 0.0)
            return cs, [inf if c > 0 else base for c in cs]
        # when one order clearly decides the headline, it usually decides the other counts too:
        # the other is then screened (sweep.py)
        order_names, apart = self._highest_first(delta)
        orders = [(_rows_prvs(others, o), None if mech.is_trivial() else prv_of(mech, o)) for o in order_names]
        bounds, used = sweep(orders, cs, delta, error_level(delta), self.eps_error, self.n_max,
                             self.cancel, progress, screen=SCREEN if apart else 0.0)
        bounds = [_capped(b, _loss_cap([o + ([(j, int(c))] if j is not None else []) for o, j in orders]))
                  for b, c in zip(bounds, cs)]
        self._widened_to(used)
        return cs, bounds

    def _highest_first(self, delta: float) -> tuple[list[str], bool]:
        """The orders, the one with the highest upper end at ``delta`` among the sides composed
        so far first (as given when none is), and whether the sides composed so far show the
        first order's lower end above every other's upper end."""
        level = error_level(delta)

        def bracket(order: str) -> Bounds | None:
            for screened in (False, True):
                side = self._cache.get((order, level, False, screened))
                if side is not None:
                    return Bounds(0.0, 0.0, 0.0) if side.profile is None else side.profile.epsilon(delta)
            return None
        known = {o: bracket(o) for o in self.orders}
        upper = {o: -math.inf if b is None else b.upper for o, b in known.items()}
        orders = sorted(self.orders, key=lambda o: upper[o], reverse=True)
        first = known[orders[0]]
        apart = first is not None and all(known[o] is not None and upper[o] < first.lower for o in orders[1:])
        return orders, apart

    def error_budget(self, delta: float) -> list[dict]:
        """The error terms behind epsilon(delta), one dict per order of the pair."""
        delta = check_delta(delta)
        level = self._used.get(delta, error_level(delta))
        ext = delta in self._used
        tilted = self._tilt_used.get(delta, {})
        out = []
        for o in self.orders:
            if o in tilted:
                # (the plain composition's additive error too: the curves are drawn from it)
                plain = self._cache.get((o, level, False, False)) or self._cache.get((o, level, False, True))
                extra = {} if plain is None else {"plain_total_abs": plain.budget.get("total_abs", 0.0)}
                out.append({**tilted[o].budget, **extra})
            elif (o, level, ext, False) not in self._cache and (o, level, ext, True) in self._cache:
                # screened out: its coarse bracket lay below the other order's (``_deciding``)
                out.append(self._cache[(o, level, ext, True)].budget)
            else:
                out.append(self._side(o, level, extended=ext).budget)
        return out

    def profiles_behind(self, delta: float) -> list[CertifiedProfile]:
        """Each order's certified profile at the error level and precision that epsilon(delta)
        used (composed in full; the answer is the max over them)."""
        delta = check_delta(delta)
        level, ext = self._used.get(delta, error_level(delta)), delta in self._used
        return [s.profile for s in self._sides(level, extended=ext) if s.profile is not None]

    def profiles(self, level: float) -> list[CertifiedProfile]:
        """Both orders' certified profiles at ``level``, composed in full."""
        return [s.profile for s in self._sides(level) if s.profile is not None]
