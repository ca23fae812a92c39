"""The calibrate dialog's job, run on its worker thread: the engine's search (accounting/
calibrate.py for a target ε, risk_calibrate.py for a target attack risk), then a sweep of ε (or
of the best attack's TPR) against the parameter around the answer for the plot, and the noise's
95% half-width at the answer (the accuracy it costs)."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..accounting import Row
from ..accounting.core.values import Relation
from ..accounting.queries.calibrate import Calibration, calibrate, calibration_sweep, rows_with
from ..accounting.queries.risk_calibrate import RiskCalibration, calibrate_risk, risk_sweep

#: points of the ε-versus-parameter sweep drawn under the answer (plus the answer itself)
SWEEP_POINTS = 19
#: share of the progress bar given to the search; the sweep takes the rest
SEARCH_SHARE = 0.75


@dataclass(frozen=True)
class CalibrationRequest:
    rows: tuple[Row, ...]
    row_index: int
    parameter: str
    target_epsilon: float
    delta: float
    eps_error: float
    #: neighbouring relation and group size (None: add/remove one record)
    relation: Relation | None = None
    #: (false-positive rate, target true-positive rate): calibrate to this attack risk instead
    #: of target_epsilon and delta
    risk: tuple[float, float] | None = None


@dataclass(frozen=True)
class CalibrationOutcome:
    calibration: Calibration | RiskCalibration
    #: the sweep: parameter values and ε bounds at delta (NaN where a value could not be computed)
    values: np.ndarray
    lower: np.ndarray
    estimate: np.ndarray
    upper: np.ndarray
    #: the calibrated row's noise at the answer: (half-width of its 95% interval, unit), or None
    noise_95: tuple[float, str] | None = None


def run_calibration(request: CalibrationRequest, progress: Callable[[float, str], None],
                    cancel: Callable[[], bool]) -> CalibrationOutcome:
    """The engine's search, then its sweep around the answer; runs on the worker thread."""
    r = request
    search = lambda f, text: progress(SEARCH_SHARE * f, text)  # noqa: E731
    if r.risk is not None:
        cal = calibrate_risk(list(r.rows), r.row_index, r.parameter, *r.risk, r.eps_error, progress=search,
                             cancel=cancel, relation=r.relation)
        sweep_fn, what = risk_sweep, "the attack's true-positive rate"
    else:
        cal = calibrate(list(r.rows), r.row_index, r.parameter, r.target_epsilon, r.delta, r.eps_error,
                        progress=search, cancel=cancel, relation=r.relation)
        sweep_fn, what = calibration_sweep, "ε"
    sweep = sweep_fn(list(r.rows), r.row_index, cal, r.eps_error, SWEEP_POINTS,
                     progress=lambda f: progress(SEARCH_SHARE + (1 - SEARCH_SHARE) * f,
                                                 f"drawing {what} against the parameter"),
                     cancel=cancel, relation=r.relation)
    answer = rows_with(list(r.rows), r.row_index, cal.parameter, cal.value)[r.row_index]
    noise = answer.mechanism.noise_halfwidth(0.95)
    return CalibrationOutcome(cal, *sweep, noise_95=noise)
