"""Calibration to an attack-risk target: "the best membership-inference attack's true-positive
rate at false-positive rate a is at most t" (Kulynych et al., "Attack-aware noise calibration
for DP", NeurIPS 2024), beside calibration to a target epsilon (calibrate.py).

The guarantees are calibrate.py's: the value returned has been certified, its *upper* TPR at a
(risk.py ``tpr_bounds``: one minus the certified lower tradeoff bound, the most revealing order
of the pair) computed and found <= t; and it is tight: the next value towards "less private"
(1% further for a real parameter, one more run for a count) was certified infeasible, or the
answer is at the search bound. The search is calibrate.py's for real parameters (coarse
bisection on the estimate, then certified steps); counts are bisected on certified values.

A true-positive rate never exceeds 1, and guessing already reaches a, so a target needs
a < t < 1. For the Gaussian mechanism (mu-GDP, TPR(a) = Phi(Phi^-1(a) + mu)) the answer is
mu = Phi^-1(t) - Phi^-1(a), sigma = sensitivity sqrt(k) / mu (the tests check it).

Two targets read the same way (risk.py): reconstruction success at most s at baseline kappa is
the TPR target at FPR kappa; a Bayes risk of at least r at prior pi is an attack accuracy of at
most 1 - r, certified from delta at |log((1 - pi) / pi)| (``calibrate_bayes``).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, cast

import numpy as np

from .accountant import Accountant
from .calibrate import COUNT_SEARCH, Infeasible, _Ctx, rows_with, search_spec, sweep_values
from ..core.values import Relation, as_relation
from ..mechanisms import Row
from ..core.values import Bounds
from .risk import tpr_bounds
from ..core.validate import NumberError, check_eps_error, check_number, number_text

__all__ = ["RiskCalibration", "calibrate_risk", "calibrate_bayes", "check_bayes_target", "check_fpr", "check_risk_target", "risk_sweep",
           "FPR_LABEL", "TPR_LABEL"]

#: how messages name the two numbers of a risk target
FPR_LABEL, TPR_LABEL = "False-positive rate", "Target true-positive rate"


@dataclass(frozen=True)
class RiskCalibration:
    parameter: str
    value: float
    #: certified bounds on the best attack's TPR at ``fpr`` at the answer
    tpr: Bounds
    fpr: float
    target_tpr: float
    #: True if the answer sits at the search bound (a better value may exist beyond it)
    at_bound: bool = False
    #: "tpr_at_fpr", or "bayes_risk" (then ``fpr`` is the prior, ``tpr`` the best attack's
    #: accuracy and ``target_tpr`` one minus the Bayes risk asked for)
    target: str = "tpr_at_fpr"

    def as_dict(self) -> dict:
        if self.target == "bayes_risk":
            return {"parameter": self.parameter, "value": self.value, "prior": self.fpr,
                    "target_bayes_risk": 1.0 - self.target_tpr,
                    "bayes_risk": {"lower": 1.0 - self.tpr.upper, "estimate": 1.0 - self.tpr.estimate,
                                   "upper": 1.0 - self.tpr.lower},
                    "at_bound": self.at_bound}
        return {"parameter": self.parameter, "value": self.value, "tpr": self.tpr.as_dict(),
                "fpr": self.fpr, "target_tpr": self.target_tpr, "at_bound": self.at_bound}


def check_fpr(fpr: object, label: str = FPR_LABEL) -> float:
    """A false-positive rate in (0, 1) as a float, or a ValueError naming ``label``."""
    return check_number(label, fpr, 0.0, 1.0, lo_open=True, hi_open=True, field="fpr")


def check_risk_target(fpr: object, target_tpr: object, fpr_label: str = FPR_LABEL,
                      tpr_label: str = TPR_LABEL) -> tuple[float, float]:
    """(fpr, target_tpr) as floats, or a ValueError naming the field: the rate a in (0, 1), the
    target t in (a, 1) (guessing already reaches t = a)."""
    a = check_fpr(fpr, fpr_label)
    t = check_number(tpr_label, target_tpr, 0.0, 1.0, lo_open=True, hi_open=True, field="target_tpr")
    if t <= a:
        raise NumberError(tpr_label, f"above the false-positive rate {number_text(a)} (guessing alone "
                          "finds that share of the members)", target_tpr, "target_tpr")
    return a, t


def calibrate_risk(rows: list[Row], row_index: int, parameter: str, fpr: float, target_tpr: float,
                   eps_error: float = 0.01, progress: Callable[[float, str], None] | None = None,
                   cancel: Callable[[], bool] | None = None,
                   relation: Relation | None = None) -> RiskCalibration:
    """Best value of ``parameter`` of row ``row_index`` whose certified upper TPR at false-positive
    rate ``fpr`` is <= ``target_tpr`` (under ``relation``; default add/remove one record)."""
    a, t = check_risk_target(fpr, target_tpr)
    return _run(_RiskCtx, rows, row_index, parameter, t, a, eps_error, progress, cancel, relation)


def _run(ctx_type, rows, row_index: int, parameter: str, target: float, rate: float, eps_error: float,
         progress, cancel, relation) -> RiskCalibration:
    """The search of a risk context (``_RiskCtx`` or ``_BayesCtx``) after the common checks."""
    rows = list(rows)
    if not 0 <= row_index < len(rows):
        raise ValueError(f"the row index must be from 0 to {len(rows) - 1}; got {row_index}")
    search_spec(rows[row_index].mechanism.kind, parameter)  # raises for a parameter it cannot solve
    eps_error = check_eps_error(eps_error)
    ctx = ctx_type(rows, row_index, parameter, target, math.nan, eps_error, progress, cancel,
                   as_relation(relation), fpr=rate)
    # (run_real's answer comes from _answer, which the context makes a RiskCalibration)
    return ctx.run_count() if parameter == "count" else cast(RiskCalibration, ctx.run_real())


def check_bayes_target(prior: object, risk: object, prior_label: str = "Prior",
                       risk_label: str = "Target Bayes risk") -> tuple[float, float]:
    """(prior, target risk): the prior in (0, 1), the risk in (0, min(prior, 1 - prior)) (the
    error of guessing from the prior alone, which no release makes larger)."""
    p = check_number(prior_label, prior, 0.0, 1.0, lo_open=True, hi_open=True, field="prior")
    r = check_number(risk_label, risk, 0.0, 1.0, lo_open=True, hi_open=True, field="bayes_risk")
    if r >= min(p, 1 - p):
        raise NumberError(risk_label, f"below {number_text(min(p, 1 - p))}, the error of guessing from "
                          "the prior alone", risk, "bayes_risk")
    return p, r


def calibrate_bayes(rows: list[Row], row_index: int, parameter: str, prior: float, target_risk: float,
                    eps_error: float = 0.01, progress: Callable[[float, str], None] | None = None,
                    cancel: Callable[[], bool] | None = None,
                    relation: Relation | None = None) -> RiskCalibration:
    """Best value of ``parameter`` of row ``row_index`` whose certified Bayes risk at ``prior``
    is at least ``target_risk`` (its attack accuracy at most 1 - target_risk)."""
    p, r = check_bayes_target(prior, target_risk)
    return _run(_BayesCtx, rows, row_index, parameter, 1.0 - r, p, eps_error, progress, cancel, relation)


@dataclass
class _RiskCtx(_Ctx):
    fpr: float = 0.01

    def _tpr(self, rows: list[Row], eps_error: float) -> Bounds:
        acc = Accountant(rows, eps_error, self.relation,
                         cancel=self.cancel, screen=False)
        lo, est, up = tpr_bounds(acc, np.array([self.fpr]))
        return Bounds(float(lo[0]), float(est[0]), float(up[0]))

    def _eps(self, value: float, eps_error: float) -> Bounds:
        self.evals += 1
        return self._tpr(rows_with(self.rows, self.j, self.parameter, value), eps_error)

    def _rest(self) -> Bounds:
        return self._tpr(self.rows[:self.j] + self.rows[self.j + 1:], self.eps_error)

    def _aim(self) -> float:
        # the TPR bracket is about eps_error wide relative to the rate (TPR <= e^eps a)
        return self.target * math.exp(-0.95 * self.eps_error)

    def _goal(self) -> str:
        return (f"a true-positive rate of at most {number_text(self.target)} at false-positive rate "
                f"{number_text(self.fpr)}")

    def _gives(self, upper: float) -> str:
        return f"a true-positive rate up to {upper:.4g}"

    def _answer(self, value: float, bounds: Bounds, at_bound: bool = False) -> RiskCalibration:
        return RiskCalibration(self.parameter, value, bounds, self.fpr, self.target, at_bound)

    # ------------------------------------------------------------ counts
    # (replaces _Ctx.run_count, whose answer is a Calibration: the answers are different types)
    def run_count(self) -> RiskCalibration:  # type: ignore[override]
        """The largest count with certified upper TPR <= target: the row's count doubled (or
        halved) until the target is crossed, then bisected; every comparison is certified."""
        one = self._eps(1, self.eps_error)
        if one.upper > self.target:
            rest = self._rest()
            why = (f"the other rows alone give {self._gives(rest.upper)}" if rest.upper > self.target
                   else f"one run of the row already gives {self._gives(one.upper)}")
            raise Infeasible(f"no count reaches {self._goal()}: {why}")
        limit = int(COUNT_SEARCH.hi)
        good, good_b, bad = 1, one, None

        def feasible(c: int, text: str) -> bool:
            nonlocal good, good_b, bad
            self._tick(0.1 + 0.85 * min(self.evals, 40) / 40, text)
            b = self._eps(c, self.eps_error)
            if b.upper <= self.target:
                good, good_b = c, b
                return True
            bad = c
            return False

        c = min(max(2, self.rows[self.j].count), limit)
        if feasible(c, "bracketing the count"):  # double until infeasible or the limit
            while bad is None and good < limit:
                feasible(min(2 * good, limit), "bracketing the count")
            if bad is None:
                return self._answer(good, good_b, at_bound=True)
        else:  # halve until feasible (1 is)
            assert bad is not None  # (feasible(c) failed: it set bad)
            while good == 1 and bad // 2 > 1:
                feasible(bad // 2, "bracketing the count")
        while bad - good > 1:
            feasible((good + bad) // 2, "certifying the count")
        return self._answer(good, good_b)


@dataclass
class _BayesCtx(_RiskCtx):
    """The attack's accuracy at prior ``fpr``: 1 - min(p, 1 - p) (1 - delta(|logit p|))."""

    def _tpr(self, rows: list[Row], eps_error: float) -> Bounds:
        p = self.fpr
        acc = Accountant(rows, eps_error, self.relation, cancel=self.cancel, screen=False)
        d = acc.delta(abs(math.log((1.0 - p) / p)))
        m = min(p, 1.0 - p)
        return Bounds(1.0 - m * (1.0 - d.lower), 1.0 - m * (1.0 - d.estimate), 1.0 - m * (1.0 - d.upper))

    def _aim(self) -> float:
        return 1.0 - (1.0 - self.target) * math.exp(0.95 * self.eps_error)

    def _goal(self) -> str:
        return (f"a Bayes risk of at least {number_text(1.0 - self.target)} at prior "
                f"{number_text(self.fpr)}")

    def _gives(self, upper: float) -> str:
        return f"a Bayes risk down to {1.0 - upper:.4g}"

    def _answer(self, value: float, bounds: Bounds, at_bound: bool = False) -> RiskCalibration:
        return RiskCalibration(self.parameter, value, bounds, self.fpr, self.target, at_bound, "bayes_risk")


def risk_sweep(rows: list[Row], row_index: int, cal: RiskCalibration, eps_error: float, points: int = 19,
               progress: Callable[[float], None] | None = None, cancel: Callable[[], bool] | None = None,
               relation: Relation | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The best attack's TPR bounds at cal.fpr around a risk calibration's answer: (values, lower,
    estimate, upper), NaN where a value cannot be computed (calibrate.sweep_values' points)."""
    values = sweep_values(rows[row_index].mechanism.kind, cal.parameter, cal.value, points)
    ctx = _RiskCtx(list(rows), row_index, cal.parameter, cal.target_tpr, math.nan, eps_error, None, cancel,
                   as_relation(relation), fpr=cal.fpr)
    out = np.full((3, len(values)), np.nan)
    for k, v in enumerate(values):
        if progress is not None:
            progress(k / len(values))
        try:
            b = cal.tpr if v == cal.value else ctx._eps(v, eps_error)
        except (ValueError, ArithmeticError, MemoryError):
            continue
        out[:, k] = (b.lower, b.estimate, b.upper)
    return np.array(values, dtype=float), out[0], out[1], out[2]
