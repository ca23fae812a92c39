"""The calibrate dialog's job, run on its worker thread: the engine's search (accounting/
calibrate.py), then a sweep of ε against the parameter around the answer for the plot."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..accounting import Row
from ..accounting.kinds.base import Relation
from ..accounting.calibrate import Calibration, calibrate, calibration_sweep

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


@dataclass(frozen=True)
class CalibrationOutcome:
    calibration: Calibration
    #: the sweep: parameter values and ε bounds at delta (NaN where a value could not be computed)
    values: np.ndarray
    lower: np.ndarray
    estimate: np.ndarray
    upper: np.ndarray


def run_calibration(request: CalibrationRequest, progress: Callable[[float, str], None],
                    cancel: Callable[[], bool]) -> CalibrationOutcome:
    """The engine's search, then its sweep around the answer; runs on the worker thread."""
    r = request
    cal = calibrate(list(r.rows), r.row_index, r.parameter, r.target_epsilon, r.delta, r.eps_error,
                    progress=lambda f, text: progress(SEARCH_SHARE * f, text), cancel=cancel,
                    relation=r.relation)
    sweep = calibration_sweep(list(r.rows), r.row_index, cal, r.eps_error, SWEEP_POINTS,
                              progress=lambda f: progress(SEARCH_SHARE + (1 - SEARCH_SHARE) * f,
                                                          "drawing ε against the parameter"),
                              cancel=cancel, relation=r.relation)
    return CalibrationOutcome(cal, *sweep)
