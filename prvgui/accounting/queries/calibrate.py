"""Calibration: the best value of one parameter of one row for a target epsilon.

The answer never overshoots: it is only returned after the *certified upper*
epsilon at that value has been computed and found <= the target (Opacus #346
and autodp #2 returned noise that gave more epsilon than asked). It is tight:
the search continues until the next value towards "less private" (1% away for
real parameters, +1 for a count) is certified infeasible, or the search bound
is reached.

Two stages keep it fast. A coarse stage (eps_error >= 0.1, grids ten times smaller)
bisects on the estimate, which is accurate far below its bracket; the fine
stage then evaluates the certified upper bound near that point and steps until
the answer is both feasible and tight. Counts are searched with the shared-mesh
epsilon-vs-count machinery, many counts per FFT.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal
from typing import Callable

import numpy as np

from .accountant import Accountant
from ..core.cost import Cost
from ..core.values import Relation, as_relation
from ..core.validate import check_delta, check_eps_error, check_number, number_text
from ..core.errors import Cancelled
from ..kinds.base import Search
from ..mechanisms import MAX_COUNT, Row, kind_class
from ..core.values import Bounds

#: how a count is searched (every kind has one)
COUNT_SEARCH = Search(True, 1, MAX_COUNT)


def search_spec(kind: str, parameter: str) -> Search:
    """How ``parameter`` of a ``kind`` row is searched (its kind's ``param`` declaration)."""
    if parameter == "count":
        return COUNT_SEARCH
    spec = kind_class(kind).param_specs().get(parameter)
    if spec is None or spec.search is None:
        raise ValueError(f"a {kind_class(kind).title} row can be calibrated for "
                         f"{', '.join(parameters_for(kind))}; not for {parameter!r}")
    return spec.search


def _words(kind: str, parameter: str) -> tuple[str, str]:
    """(title, symbol) of a parameter as messages name it: ``("Noise σ", "σ")``."""
    if parameter == "count":
        return "count", "count"
    spec = kind_class(kind).param_specs()[parameter]
    return spec.title, spec.symbol


def parameters_for(kind: str) -> list[str]:
    """The parameters of a kind that calibration can solve for, then ``count``."""
    specs = kind_class(kind).param_specs()
    return [name for name, p in specs.items() if p.search is not None] + ["count"]


@dataclass(frozen=True)
class Calibration:
    parameter: str
    value: float
    epsilon: Bounds
    target_epsilon: float
    delta: float
    #: True if the answer sits at the search bound (a better value may exist beyond it)
    at_bound: bool = False

    def as_dict(self) -> dict:
        return {"parameter": self.parameter, "value": self.value, "epsilon": self.epsilon.as_dict(),
                "target_epsilon": self.target_epsilon, "delta": self.delta, "at_bound": self.at_bound}


class Infeasible(ValueError):
    """No value in the search range meets the target; the message says why."""


#: significant digits of a calibrated real parameter (what the dialog shows and writes)
DIGITS = 6


def round_private(value: float, increasing: bool, digits: int = DIGITS) -> float:
    """``value`` to ``digits`` significant digits, rounded towards the private side: down when
    epsilon increases with the parameter (a sampling rate), up when it falls (a noise scale)."""
    if value == 0 or not math.isfinite(value):
        return value
    d = Decimal(repr(value))
    step = Decimal(1).scaleb(d.adjusted() - digits + 1)
    return float(d.quantize(step, rounding=ROUND_FLOOR if increasing else ROUND_CEILING))


def rows_with(rows: list[Row], row_index: int, parameter: str, value: float) -> list[Row]:
    """``rows`` with ``parameter`` of row ``row_index`` set to ``value`` (the count included)."""
    row = rows[row_index]
    if parameter == "count":  # (the row's count; its engine row counts runs_per_count of it each)
        new = Row(row.mechanism, int(value) * row.mechanism.runs_per_count())
    else:
        new = Row(replace(row.mechanism, **{parameter: value}), row.count)
    return list(rows[:row_index]) + [new] + list(rows[row_index + 1:])


def sweep_values(kind: str, parameter: str, value: float, points: int = 19) -> list[float]:
    """Values around an answer: value/2 .. 2 value (log-spaced, inside the search range) or,
    for a count, whole numbers from 1 to 2 value; the answer itself included."""
    search = search_spec(kind, parameter)
    lo, hi = search.lo, search.hi
    if parameter == "count":
        top = int(min(max(2 * value, 2), hi))
        grid = np.unique(np.rint(np.linspace(1, top, points)).astype(np.int64)).tolist()
        return sorted(set(grid) | {int(value)})
    a, b = max(value / 2, lo), min(value * 2, hi)
    grid = np.geomspace(a, b, points).tolist() if b > a else []
    return sorted([v for v in grid if abs(v - value) > 1e-9 * value] + [float(value)])


def calibration_sweep(rows: list[Row], row_index: int, cal: Calibration, eps_error: float,
                      points: int = 19, progress: Callable[[float], None] | None = None,
                      cancel: Callable[[], bool] | None = None, relation: Relation | None = None
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Epsilon bounds at cal.delta around a calibration's answer: (values, lower, estimate,
    upper), NaN where a value cannot be computed (e.g. it would need too fine a grid)."""
    values = sweep_values(rows[row_index].mechanism.kind, cal.parameter, cal.value, points)
    out = np.full((3, len(values)), np.nan)
    for k, v in enumerate(values):
        if progress is not None:
            progress(k / len(values))
        if v == cal.value:
            b = cal.epsilon
        else:
            try:
                b = Accountant(rows_with(rows, row_index, cal.parameter, v), eps_error,
                               as_relation(relation),
                               cancel=cancel).epsilon(cal.delta)
            except (ValueError, ArithmeticError, MemoryError):
                continue
        out[:, k] = (b.lower, b.estimate, b.upper)
    return np.array(values, dtype=float), out[0], out[1], out[2]


#: what a calibration composes, for its price (``calibration_cost``): the coarse stage's
#: bisection in log space (at most ~14 halvings of the widest search range to 2e-3), the fine
#: stage's certified steps and the dialog's sweep around the answer (19 points)
COARSE_EVALS, FINE_EVALS, SWEEP_EVALS = 14, 8, 19


def calibration_cost(rows: list[Row], row_index: int, delta: float, eps_error: float,
                         relation: Relation | None = None) -> Cost:
    """What a calibration of row ``row_index`` (and the dialog's sweep) will cost, priced at the
    row's present value: COARSE_EVALS compositions at the coarse accuracy and FINE_EVALS +
    SWEEP_EVALS at ``eps_error``. The answer's value is not known before the search, so this is
    a guide (within the factor that separates the present value's cost from the answer's)."""
    rel = as_relation(relation)
    fine = Accountant(rows, eps_error, rel).cost(delta=delta)
    coarse = Accountant(rows, max(eps_error, 0.1),
                        rel).cost(delta=delta)
    n = FINE_EVALS + SWEEP_EVALS
    return Cost(n * fine.seconds + COARSE_EVALS * coarse.seconds, max(fine.bytes, coarse.bytes),
                    max(fine.grid, coarse.grid),
                    f"a calibration composes about {n + COARSE_EVALS} times"
                    + (f"; each: {fine.why}" if fine.why else ""), fine.fits and coarse.fits)


def calibrate(rows: list[Row], row_index: int, parameter: str, target_epsilon: float,
              delta: float, eps_error: float = 0.01,
              progress: Callable[[float, str], None] | None = None,
              cancel: Callable[[], bool] | None = None, relation: Relation | None = None) -> Calibration:
    """Best value of ``parameter`` of row ``row_index`` with certified upper epsilon <= target
    (under ``relation``: neighbouring relation and group size; default add/remove one record)."""
    rows = list(rows)
    if not 0 <= row_index < len(rows):
        raise ValueError(f"the row index must be from 0 to {len(rows) - 1}; got {row_index}")
    search_spec(rows[row_index].mechanism.kind, parameter)  # raises for a parameter it cannot solve
    target_epsilon = check_number("Target ε", target_epsilon, 0.0, lo_open=True, field="target_epsilon")
    delta = check_delta(delta, "δ")
    eps_error = check_eps_error(eps_error)
    ctx = _Ctx(rows, row_index, parameter, float(target_epsilon), delta, eps_error, progress, cancel,
               as_relation(relation))
    return ctx.run_count() if parameter == "count" else ctx.run_real()


@dataclass
class _Ctx:
    rows: list[Row]
    j: int
    parameter: str
    target: float
    delta: float
    eps_error: float
    progress: Callable | None
    cancel: Callable | None
    relation: Relation
    evals: int = 0

    def _tick(self, frac: float, text: str) -> None:
        if self.cancel is not None and self.cancel():
            raise Cancelled("calibration cancelled")
        if self.progress is not None:
            self.progress(min(frac, 0.99), text)

    def _eps(self, value: float, eps_error: float) -> Bounds:
        self.evals += 1
        return Accountant(rows_with(self.rows, self.j, self.parameter, value), eps_error,
                          self.relation,
                          cancel=self.cancel).epsilon(self.delta)

    def _rest(self) -> Bounds:
        rest = self.rows[:self.j] + self.rows[self.j + 1:]
        return Accountant(rest, self.eps_error, self.relation,
                          cancel=self.cancel).epsilon(self.delta)

    # what is measured (risk_calibrate.py measures a true-positive rate instead)
    def _aim(self) -> float:
        """What the coarse stage aims the estimate at: half a bracket below the target."""
        return self.target - 0.95 * self.eps_error

    def _goal(self) -> str:
        return f"ε = {number_text(self.target)} at δ = {number_text(self.delta)}"

    def _gives(self, upper: float) -> str:
        return f"ε up to {upper:.4g}"

    def _answer(self, value: float, bounds: Bounds, at_bound: bool = False):
        return Calibration(self.parameter, value, bounds, self.target, self.delta, at_bound=at_bound)

    # ------------------------------------------------------------ real parameters
    def run_real(self) -> Calibration:
        search = search_spec(self.rows[self.j].mechanism.kind, self.parameter)
        increasing, lo, hi = search.increasing, search.lo, search.hi
        # "private end" p_end: the most private value; "public end" the least private
        p_end, q_end = (lo, hi) if increasing else (hi, lo)
        self._tick(0.02, "checking the search range")
        at_p = self._eps(p_end, self.eps_error)
        if at_p.upper > self.target:
            rest = self._rest()
            title, sym = _words(self.rows[self.j].mechanism.kind, self.parameter)
            why = (f"the other rows alone give {self._gives(rest.upper)}" if rest.upper > self.target
                   else f"even {sym} = {number_text(p_end)} gives {self._gives(at_p.upper)}")
            name = title[0].lower() + title[1:]  # "noise multiplier σ" mid-sentence
            raise Infeasible(f"no {name} from {number_text(lo)} to {number_text(hi)} reaches "
                             f"{self._goal()}: {why}")
        # coarse stage: bisect in log space on the estimate, aiming half a bracket below
        coarse = max(self.eps_error, 0.1)
        aim = self._aim()
        a, b = math.log(p_end), math.log(q_end)  # a: feasible side, b: infeasible side
        for i in range(60):
            self._tick(0.05 + 0.45 * i / 60, "coarse search")
            mid = 0.5 * (a + b)
            if self._eps(math.exp(mid), coarse).estimate <= aim:
                a = mid
            else:
                b = mid
            if abs(b - a) < 2e-3:
                break
        if b == math.log(q_end):  # never infeasible: the least private end itself may fit
            at_q = self._eps(q_end, self.eps_error)
            if at_q.upper <= self.target:
                return self._answer(q_end, at_q, at_bound=True)
        return self._fine(math.exp(a), increasing, p_end, q_end, at_p)

    def _fine(self, start: float, increasing: bool, p_end: float, q_end: float,
              at_p: Bounds) -> Calibration:
        """From the coarse ``start``, certify: feasible ``good``, infeasible ``bad`` <= 1% apart."""
        step = 1.01 if increasing else 1 / 1.01  # multiply by step: 1% less private
        good, good_b, bad = p_end, at_p, q_end
        lo_v, hi_v = min(p_end, q_end), max(p_end, q_end)

        def feasible(v: float) -> bool:
            nonlocal good, good_b, bad
            self._tick(0.5 + 0.5 * min(self.evals, 40) / 40, "certifying")
            b = self._eps(v, self.eps_error)
            if b.upper <= self.target:
                good, good_b = v, b
                return True
            bad = v
            return False

        v = min(max(start, lo_v), hi_v)
        if feasible(v):  # walk towards the public end with growing steps until infeasible
            k = step
            while not _within(good, bad, 1.01):
                if not feasible(_between(good * k, good, bad)):
                    break
                k *= k
        else:  # walk towards the private end until feasible
            k = 1 / step
            while not _within(good, bad, 1.01):
                if feasible(_between(bad * k, good, bad)):
                    break
                k *= k
        while not _within(good, bad, 1.01):  # bisect in log space
            feasible(math.sqrt(good * bad))
        # the answer people read and write: DIGITS significant digits, rounded towards the private
        # side (epsilon falls that way) and certified again at that value
        shown = min(max(round_private(good, increasing), lo_v), hi_v)
        if shown != good:
            b = self._eps(shown, self.eps_error)
            if b.upper <= self.target:
                good, good_b = shown, b
        return self._answer(good, good_b, at_bound=good == p_end)

    # ------------------------------------------------------------ counts
    def run_count(self) -> Calibration:
        acc = Accountant(self.rows, self.eps_error, self.relation,
                         cancel=self.cancel)
        one = self._count_bounds(acc, [1])[0]
        if one.upper > self.target:
            rest = self._rest()
            why = (f"the other rows alone give ε up to {rest.upper:.4g}" if rest.upper > self.target
                   else f"one run of the row already gives ε up to {one.upper:.4g}")
            raise Infeasible(f"no count reaches ε = {number_text(self.target)} at δ = "
                             f"{number_text(self.delta)}: {why}")
        good, bad = 1, None
        limit = COUNT_SEARCH.hi
        # coarse stage (eps_error >= 0.1): bracket the count on the estimate, cheaply
        coarse = Accountant(self.rows, max(self.eps_error, 0.1),
                            self.relation,
                            cancel=self.cancel)
        aim = self.target - 0.95 * self.eps_error
        lo_c, hi_c, c = 1, None, max(2, self.rows[self.j].count)
        while hi_c is None:
            self._tick(0.1, "bracketing the count")
            cs = np.unique(np.minimum(np.geomspace(lo_c + 1, min(4 * c, limit), 12).astype(np.int64),
                                      limit))
            lo_c, hi_c = _scan(cs, self._count_bounds(coarse, cs), lambda b: b.estimate <= aim, lo_c, hi_c)
            if hi_c is None:
                if lo_c >= limit:
                    hi_c = limit
                    break
                c = 4 * c
        while hi_c - lo_c > max(1, lo_c // 200):
            self._tick(0.3, "bracketing the count")
            cs = np.unique(np.linspace(lo_c, hi_c, 24).astype(np.int64))
            lo_c, hi_c = _scan(cs, self._count_bounds(coarse, cs), lambda b: b.estimate <= aim, lo_c, hi_c)
        # fine stage: certify around the coarse answer, widening until the bracket holds
        width = max(2, lo_c // 100)
        while True:
            self._tick(0.5, "certifying the count")
            cs = np.unique(np.clip(np.linspace(lo_c - width, lo_c + width, 16).astype(np.int64), 1, limit))
            bounds = self._count_bounds(acc, cs)
            feasible = [int(cc) for cc, b in zip(cs, bounds) if b.upper <= self.target]
            infeasible = [int(cc) for cc, b in zip(cs, bounds) if b.upper > self.target]
            if feasible:
                good = max(good, max(feasible))
            if infeasible and min(infeasible) > good:
                bad = min(i for i in infeasible if i > good)
            if good >= limit:
                b = self._count_bounds(acc, [good])[0]
                return Calibration("count", good, b, self.target, self.delta, at_bound=True)
            if bad is None or not feasible:
                width *= 4
                if not feasible:
                    lo_c = max(1, lo_c - width)
                elif bad is None:
                    lo_c = lo_c + width
            if bad is not None and feasible:
                break
        while bad - good > 1:  # refine with up to 40 counts per shared FFT
            self._tick(0.5, "refining the count")
            cs = np.unique(np.linspace(good + 1, bad - 1, min(40, bad - good - 1)).astype(np.int64))
            good, bad = _scan(cs, self._count_bounds(acc, cs), lambda b: b.upper <= self.target, good, bad)
        b = self._count_bounds(acc, [good])[0]
        return Calibration("count", good, b, self.target, self.delta)

    def _count_bounds(self, acc: Accountant, counts) -> list[Bounds]:
        self.evals += 1
        cs, bounds = acc.epsilon_vs_count(self.j, counts, self.delta)
        lookup = dict(zip(cs.tolist(), bounds))
        return [lookup[int(c)] for c in counts]


def _scan(cs, bounds, ok, good, bad):
    """Walk increasing counts: the last one that is ``ok`` before the first that is not."""
    for cc, b in zip(cs, bounds):
        if not ok(b):
            return good, int(cc)
        good = int(cc)
    return good, bad


def _between(v: float, a: float, b: float) -> float:
    """v moved strictly inside the open interval between a and b (geometric midpoint if not)."""
    lo, hi = min(a, b), max(a, b)
    return v if lo < v < hi else math.sqrt(lo * hi)


def _within(a: float, b: float, ratio: float) -> bool:
    return max(a, b) / min(a, b) <= ratio
