"""The epsilon(delta) and delta(epsilon) queries as ordered lists of strategies, each of which
both runs its step and prices it (docs/method.md, "Escalation"), so that the cost estimate
cannot drift from the engine: a step is priced exactly when the rule that runs it says it will
run, and that rule is written once.

A strategy has four parts:

* ``wanted(run)``: at run time, from the answer so far, whether the step runs;
* ``run(run)``: the step itself (the accountant's compositions; it may finish the query);
* ``expected(pricing)``: before any work, from the plan alone, whether the step will run;
* ``price(pricing)``: what it will cost (numerics/pricing.py).

``wanted`` and ``expected`` share their predicate where the inputs decide it (a blatant row,
a closed form, float64 too coarse for sure); where only the composed answer decides it (a
bracket still too wide after the plain pass) ``expected`` is the plan's prediction of that
answer (``pricing.needs_long_double`` on the grid the plain pass lands on), and the step's
docstring says so. Never priced (docs/method.md, "Escalation"): the long-double retry (it runs
only when a tilted composition failed to narrow the bracket, which the plan cannot foresee; a
warning then says the bracket is wider than asked), delta's tilting and its refinement at a
finer level (they depend on the answer).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Sequence

import numpy as np

from ..core.cost import ZERO, Cost, parallel
from ..core.validate import number_text
from ..core.values import Bounds
from ..numerics.pricing import CostModel, needs_long_double
from .closed_form import applies as closed_form_applies, closed_form

#: the second order of the pair is first composed this much coarser (``Accountant._deciding``)
SCREEN = 10.0
#: the share of epsilon(delta)'s progress given to its first pass (the rest: a long-double retry)
FIRST_PASS_SHARE = 0.6
#: delta(epsilon) is composed again tilted (tilt.py) when the additive error of its composition
#: is more than this share of its upper end
TILT_FLOOR = 1e-3
#: the smallest grid a count of rows needs; float64's round-off on it decides the direct path
MIN_GRID = 1 << 20
INF = Bounds(math.inf, math.inf, math.inf)


def scaled(progress, lo: float, hi: float):
    """``progress`` with the fractions 0..1 mapped onto lo..hi (None stays None)."""
    return None if progress is None else (lambda f: progress(lo + (hi - lo) * f))


def max_bounds(parts) -> Bounds:
    """The bracket of the max over the orders: (side, (lower, estimate, upper)) pairs."""
    return Bounds(*(max(b[i] for _, b in parts) for i in range(3)))


# ------------------------------------------------------------------ the state of a run
@dataclass
class Run:
    """One query being answered: ``x`` is delta (epsilon query) or epsilon (delta query)."""

    #: the Accountant whose query this is (it imports this module: not named here)
    acc: Any
    x: float
    progress: Callable[[float], None] | None
    level: float = 0.0
    #: the deciding sides with their brackets (epsilon) or the sides behind the answer (delta)
    parts: list = field(default_factory=list)
    res: Bounds | None = None
    done: bool = False

    def finish(self, res: Bounds) -> None:
        self.res, self.done = res, True

    def bracket(self) -> Bounds:
        """The answer so far (after the first step that gives one)."""
        assert self.res is not None, "no step has answered yet"
        return self.res

    def too_wide(self) -> bool:
        return self.res is not None and self.res.upper - self.res.lower > 2 * self.acc.eps_error_used


@dataclass
class Pricing:
    """What the plan says about a query before any work: the cost model of the accountant's
    rows, the sides priced so far (a side built once serves every later query) and what the
    plain pass's grid will be (``n``, ``out``: its FFT length and read-out length)."""

    acc: Any
    model: CostModel
    x: float
    #: the queries are single numbers (the second order may be screened: ``_deciding``)
    single: bool
    level: float = 0.0
    n: int = 0
    out: int = 0
    built: set = field(default_factory=set)
    #: at most the rows' infinite mass, at least their loss cap (Accountant._priced_extremes:
    #: many rows are priced without their PRVs; steps these would skip are then priced)
    spent: float = 0.0
    cap: float = math.inf

    def builds(self, level: float, extended: bool = False) -> Cost:
        """The sides of a query at one level not priced yet, built side by side (``_deciding``:
        the first order in full, the others screened when ``single``)."""
        acc = self.acc
        keys = [(o, level, extended, self.single and i > 0) for i, o in enumerate(acc.orders)]
        got = [self.model.build(o, lvl, ext, SCREEN if sc else 1.0) for o, lvl, ext, sc in keys
               if (o, lvl, ext, sc) not in self.built]
        self.built.update(keys)
        self.n = max((n for _, n, _ in got), default=self.n)
        self.out = max((out for _, _, out in got), default=self.out)
        return parallel([e for e, _, _ in got])

    def tilted(self) -> Cost:
        """Each order that may decide composed tilted towards delta = x once, one after the other
        (``Accountant._epsilon_tilted``). A later order is left at its screen when that lies
        below the first's lower end: foreseen by a guess of each order's epsilon from the cost
        model's picture (``CostModel.deciding``; every order when no guess can be made). A second
        pass follows when the first leaves the bracket wider than asked, which the plan cannot
        foresee (as ``LongDouble``). (1000 distinct DP-SGD steps at delta 1e-10: one order tilted,
        once; 300 distinct rows of 100 steps: both, once each.)"""
        return sum((self.model.tilted(o, self.level, self.x) for o in self.model.deciding(self.acc.orders, self.x)),
                   ZERO)

    def float64_too_coarse(self, n: int, out: int) -> bool:
        acc = self.acc
        return needs_long_double(self.x, acc.eps_error, acc.total_count, n, out)


class Strategy:
    """One step of a query (see the module docstring)."""

    #: what the step does, in words (its share of a cost estimate says so when it dominates)
    why = ""

    def wanted(self, run: Run) -> bool:
        return True

    def run(self, run: Run) -> None:
        raise NotImplementedError

    def expected(self, p: Pricing) -> bool:
        return True

    def price(self, p: Pricing) -> Cost:
        return ZERO

    #: the query ends when this step is expected (pricing stops there as running does)
    final = False


# ------------------------------------------------------------------ shared steps
class Blatant(Strategy):
    """A row whose loss is +infinity with positive probability beyond any delta (no noise to
    speak of): epsilon is infinite, delta is 1."""

    final = True

    def __init__(self, answer: Bounds) -> None:
        self.answer = answer

    def wanted(self, run: Run) -> bool:
        return run.acc.has_blatant()

    def run(self, run: Run) -> None:
        run.finish(self.answer)

    def expected(self, p: Pricing) -> bool:
        return p.acc.has_blatant()


class ClosedForm(Strategy):
    """Every row Gaussian, or one homogeneous (eps, delta) pair: the exact value (closed_form.py)."""

    final = True

    def __init__(self, want_eps: bool) -> None:
        self.want_eps = want_eps

    def wanted(self, run: Run) -> bool:
        return run.acc.closed_forms and closed_form_applies(run.acc.rows)

    def run(self, run: Run) -> None:
        exact = closed_form(run.acc.rows, run.x, self.want_eps)
        if exact is not None:
            run.finish(exact)

    def expected(self, p: Pricing) -> bool:
        # (the value itself, milliseconds: a closed form that applies may still find none, and
        # the query then goes on down the list, priced)
        acc = p.acc
        return acc.closed_forms and closed_form_applies(acc.rows) \
            and closed_form(acc.rows, p.x, self.want_eps) is not None


# ------------------------------------------------------------------ epsilon(delta)
#: the words of SpentDelta's note (a reader that knows the pairs dominate drops it: bracket.crossed)
SPENT_WORDS = "is infinite: the rows spend"


class SpentDelta(Strategy):
    """delta below what the rows spend whatever epsilon is (P(loss = +inf)): no finite epsilon,
    exactly; known before any composition."""

    final = True

    def wanted(self, run: Run) -> bool:
        return run.x < run.acc.infinite_mass()[0]

    def run(self, run: Run) -> None:
        acc = run.acc
        spent, shares = acc.infinite_mass()
        rows = ", ".join(f"row {i} ({acc.rows[i - 1].mechanism.title}): {p:.3g}" for i, p in shares)
        acc._note(f"ε at δ = {number_text(run.x)} {SPENT_WORDS} δ = {spent:.3g} whatever ε "
                  f"is ({rows}); a target δ above {spent:.3g} has a finite ε")
        run.finish(INF)

    def expected(self, p: Pricing) -> bool:
        return p.x < p.spent


def too_coarse_for_sure(acc: Any, delta: float) -> bool:
    """Float64's round-off on the least grid such a count needs (MIN_GRID points) is not small
    against delta x accuracy: no plain pass can resolve epsilon(delta)."""
    return needs_long_double(delta, acc.eps_error, acc.total_count, MIN_GRID, 0)


class DirectTilt(Strategy):
    """Float64 is too coarse for sure (``too_coarse_for_sure``): no plain pass for the first
    order, only the other orders screened (``Accountant._unresolved_parts``); the tilted step
    composes the first."""

    def wanted(self, run: Run) -> bool:
        return too_coarse_for_sure(run.acc, run.x)

    def run(self, run: Run) -> None:
        run.parts = run.acc._unresolved_parts(run.x, run.level, scaled(run.progress, 0.0, 0.2))
        run.res = max_bounds(run.parts)

    def expected(self, p: Pricing) -> bool:
        return too_coarse_for_sure(p.acc, p.x)

    def price(self, p: Pricing) -> Cost:
        return sum((p.model.build(o, p.level, False, SCREEN)[0] for o in p.acc.orders[1:]), ZERO)


class Plain(Strategy):
    """The plain composition of each order at delta's error level (the second order screened:
    ``Accountant._deciding``)."""

    def wanted(self, run: Run) -> bool:
        return not run.parts

    def run(self, run: Run) -> None:
        run.parts = run.acc._epsilon_parts(run.x, run.level, scaled(run.progress, 0.0, FIRST_PASS_SHARE))
        run.res = max_bounds(run.parts)

    def expected(self, p: Pricing) -> bool:
        return not too_coarse_for_sure(p.acc, p.x)

    def price(self, p: Pricing) -> Cost:
        return p.builds(p.level)


class Tilted(Strategy):
    """The bracket is wider than asked (float64's absolute floor, ~1e-14, hides delta near a
    small delta or far out): the deciding orders composed tilted towards the answer (tilt.py).
    Expected on the direct path and where ``needs_long_double`` says the plain pass's grid is too
    coarse; priced as one tilted pass of each order (``Pricing.tilted``)."""

    why = "float64 round-off matters, so it is composed tilted towards the tail"

    def wanted(self, run: Run) -> bool:
        return run.too_wide()

    def run(self, run: Run) -> None:
        run.res = run.acc._epsilon_tilted(run.x, run.level, run.parts, run.bracket(),
                                          scaled(run.progress, FIRST_PASS_SHARE, 1.0))

    def expected(self, p: Pricing) -> bool:
        return too_coarse_for_sure(p.acc, p.x) or p.float64_too_coarse(p.n, p.out)

    def price(self, p: Pricing) -> Cost:
        cost = p.tilted()
        return replace(cost, why=f"at delta {p.x:g} {self.why}")


class LongDouble(Strategy):
    """Still wider than asked and not a finite tilted bracket (which is as narrow as float64's
    error terms allow): again with a smaller additive error and the rows' transforms in long
    double (the power X^k multiplies their round-off by k). Never priced: it follows a tilted
    composition that failed to narrow the bracket, which the plan cannot foresee."""

    def wanted(self, run: Run) -> bool:
        acc = run.acc
        return run.too_wide() and not (run.x in acc._tilt_used and math.isfinite(run.bracket().upper))

    def run(self, run: Run) -> None:
        acc = run.acc
        finer = acc._epsilon_at(run.x, run.level * 1e-3, scaled(run.progress, FIRST_PASS_SHARE, 1.0),
                                extended=True)
        res = run.bracket()
        if finer.upper - finer.lower < res.upper - res.lower:
            run.res = _intersect(res, finer)
            acc._used[run.x] = run.level * 1e-3
            acc._tilt_used.pop(run.x, None)

    def expected(self, p: Pricing) -> bool:
        return False


def _intersect(a: Bounds, b: Bounds) -> Bounds:
    """Two valid brackets of the same number: their intersection, the estimate inside it."""
    lo, up = max(a.lower, b.lower), min(a.upper, b.upper)
    est = b.estimate if math.isfinite(b.estimate) else a.estimate
    return Bounds(lo, min(max(est, lo), up), up)


#: epsilon(delta), in order
EPSILON: Sequence[Strategy] = (Blatant(INF), SpentDelta(), ClosedForm(True), DirectTilt(), Plain(), Tilted(),
                               LongDouble())


# ------------------------------------------------------------------ delta(epsilon)
class BeyondLoss(Strategy):
    """epsilon at or above the largest loss the composition takes: delta is 0, exactly."""

    final = True

    def wanted(self, run: Run) -> bool:
        return run.x >= run.acc.loss_cap()

    def run(self, run: Run) -> None:
        run.finish(Bounds(0.0, 0.0, 0.0))

    def expected(self, p: Pricing) -> bool:
        return p.x >= p.cap


class PlainDelta(Strategy):
    """delta(epsilon) read from the orders' plain compositions (``Accountant._delta_curve``: a
    level already composed serves; a finer one where the answer is small)."""

    def run(self, run: Run) -> None:
        eps = np.array([run.x])
        (low, est, up), sides, run.level = run.acc._delta_curve(eps, None, run.progress)
        run.res, run.parts = Bounds(float(low[0]), float(est[0]), float(up[0])), sides

    def price(self, p: Pricing) -> Cost:
        return p.builds(1e-12)


class TiltedDelta(Strategy):
    """The additive error is not small against the answer (float64's absolute floor): the
    deciding orders composed tilted towards epsilon. Not priced: whether it is needed depends on
    the answer, which the plan does not predict for delta queries."""

    def wanted(self, run: Run) -> bool:
        floor = max((s.profile.err_abs for s in run.parts if s.profile is not None), default=0.0)
        return floor > TILT_FLOOR * run.bracket().upper

    def run(self, run: Run) -> None:
        run.res, run.parts, run.level = run.acc._delta_tilted(run.x, run.level, run.parts, run.bracket())

    def expected(self, p: Pricing) -> bool:
        return False


#: delta(epsilon), in order
DELTA: Sequence[Strategy] = (ClosedForm(False), Blatant(Bounds(1.0, 1.0, 1.0)), BeyondLoss(), PlainDelta(),
                             TiltedDelta())


# ------------------------------------------------------------------ running and pricing a list
def answer(strategies: Sequence[Strategy], run: Run) -> Run:
    """Run each wanted strategy in order until one finishes the query."""
    for s in strategies:
        if run.done:
            break
        if s.wanted(run):
            s.run(run)
    return run


def price(strategies: Sequence[Strategy], p: Pricing) -> list[Cost]:
    """The cost of each strategy expected to run, in order, up to the first final one."""
    out = []
    for s in strategies:
        if s.expected(p):
            out.append(s.price(p))
            if s.final:
                break
    return out
