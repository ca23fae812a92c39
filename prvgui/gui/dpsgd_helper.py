"""DP-SGD helper: sampling rate and step count from dataset size, batch size and epochs.

DP-SGD with Poisson sampling picks each record independently with probability
q = batch size / dataset size at every step (so "batch size" is the expected batch size);
``epochs`` passes over the data take epochs / q steps, rounded up. The rounding tolerates
floating-point noise so that 1 epoch at q = 0.1 gives 10 steps, not 11.
"""
from __future__ import annotations

import math
from fractions import Fraction

from PySide6.QtWidgets import (QDialog, QDialogButtonBox, QFormLayout, QHBoxLayout, QLabel, QLineEdit,
                               QVBoxLayout, QWidget)

from ..accounting.mechanisms import DPSGD_KIND, MAX_COUNT
from ..accounting.validate import NumberError, check_number, number_text
from ..document.model import RowSpec
from .fmt import POISSON_NOTE, fmt, fmt_bound, fmt_count, fmt_value
from .widgets import ErrorLabel, field_value, fill, mark

MAX_DATASET = 10**12


#: the dialog's fields: key, label (messages name a field by it), unit, tooltip
FIELDS = (("dataset", "Dataset size N", "records", "Number of records in the training set"),
          ("batch", "Batch size B", "records per step, on average",
           "Expected batch size: with Poisson sampling each batch has B records on average"),
          ("epochs", "Epochs", "passes over the data", "Number of passes over the training set"),
          ("sigma", "Noise multiplier σ", "× clipping norm",
           "Standard deviation of the Gaussian noise divided by the clipping norm"))
LABELS = {key: label for key, label, _, _ in FIELDS}


def _whole(key: str, value: object, lo: int, hi: int, why: str = "") -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or value != int(value) or not lo <= value <= hi:
        raise NumberError(LABELS[key], f"a whole number from {lo:,} to {hi:,}{why}", value, key)
    return int(value)


def dpsgd_schedule(dataset_size: object, batch_size: object, epochs: object) -> tuple[float, int]:
    """(sampling rate q, number of steps) for DP-SGD with Poisson sampling.

    Raises a NumberError naming the bad field by its label (its ``field`` is the key).
    """
    n = _whole("dataset", dataset_size, 1, MAX_DATASET)
    b = _whole("batch", batch_size, 1, n, " (the dataset size)" if n < MAX_DATASET else "")
    epochs = check_number(LABELS["epochs"], epochs, 0.0, lo_open=True, field="epochs")
    q = b / n
    exact = epochs / q
    steps = max(1, math.ceil(exact - 1e-9 * max(1.0, exact)))
    if steps > MAX_COUNT:
        most = number_text(float(fmt_bound(MAX_COUNT * q, 6, up=False)))
        raise NumberError(LABELS["epochs"], f"at most {most} with this batch and dataset "
                          f"size (a row counts at most {MAX_COUNT:,} steps)", epochs, "epochs")
    return q, steps


def _gives(values: dict, q: float, count: int) -> bool:
    try:
        return dpsgd_schedule(values.get("dataset"), values.get("batch"), values.get("epochs")) == (q, count)
    except (ValueError, TypeError):
        return False


def settings_for_row(q: object, count: object, remembered: dict) -> dict | None:
    """Dataset size, batch size and epochs that give exactly the row's sampling rate ``q`` and
    ``count``: the remembered ones if they do, else the remembered dataset size with the batch size
    that gives q, else q as a fraction B / N; each with the roundest epochs that give ``count``.
    None if no such values exist (e.g. q or count is invalid)."""
    if isinstance(q, bool) or not isinstance(q, (int, float)) or not 0 < q <= 1 \
            or isinstance(count, bool) or not isinstance(count, int) or count < 1:
        return None
    q = float(q)
    if _gives(remembered, q, count):
        return {k: remembered[k] for k in ("dataset", "batch", "epochs")}
    pairs = []
    n = remembered.get("dataset")
    if isinstance(n, (int, float)) and math.isfinite(n) and 1 <= n <= MAX_DATASET and n == int(n):
        pairs.append((int(n), round(n * q)))
    frac = Fraction(q).limit_denominator(MAX_DATASET)
    pairs.append((frac.denominator, frac.numerator))
    for n, b in pairs:
        if b < 1 or b > n or b / n != q:
            continue
        exact = count * b / n
        for digits in range(16):  # the roundest epochs that still give count steps
            values = {"dataset": n, "batch": b, "epochs": round(exact, digits)}
            if _gives(values, q, count):
                return values
    return None


class DpSgdDialog(QDialog):
    """Asks for N, batch size, epochs and noise; ``row()`` is the resulting RowSpec."""

    FIELDS = FIELDS

    def __init__(self, parent: QWidget | None = None, initial: dict | None = None,
                 target: str = "a new row") -> None:
        super().__init__(parent)
        self.setWindowTitle("DP-SGD helper")
        self.setMinimumWidth(520)
        init = {"dataset": 60000, "batch": 256, "epochs": 60, "sigma": 1.1, **(initial or {})}
        lay = QVBoxLayout(self)
        intro = QLabel("Fill the sampling rate q and the number of steps of a DP-SGD row.\n"
                       f"Sampling assumed: {POISSON_NOTE}; q = B / N.")
        intro.setWordWrap(True)
        lay.addWidget(intro)
        form = QFormLayout()
        lay.addLayout(form)
        self.fields: dict[str, QLineEdit] = {}
        self._tips: dict[str, str] = {}
        for key, title, unit, tip in self.FIELDS:
            edit = QLineEdit()
            fill(edit, init[key])
            edit.setObjectName(f"dpsgd_{key}")
            edit.setToolTip(tip)
            edit.textChanged.connect(self._update)
            self.fields[key] = edit
            self._tips[key] = tip
            row = QHBoxLayout()
            row.addWidget(edit, 1)
            unit_label = QLabel(unit)
            unit_label.setStyleSheet("color: #555;")
            row.addWidget(unit_label, 1)
            form.addRow(title, row)
        self.summary = QLabel()
        self.summary.setWordWrap(True)
        lay.addWidget(self.summary)
        self.error_label = ErrorLabel()
        lay.addWidget(self.error_label)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok
                                        | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setText(f"Apply to {target}")
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        lay.addWidget(self.buttons)
        self._row: RowSpec | None = None
        self._update()

    def values(self) -> dict[str, object]:
        return {k: field_value(e) for k, e in self.fields.items()}

    def row(self) -> RowSpec | None:
        """The subsampled Gaussian row for the typed values (None while they are invalid)."""
        return self._row

    def _update(self) -> None:
        v = self.values()
        self._row = None
        err = field = None
        try:
            q, steps = dpsgd_schedule(v["dataset"], v["batch"], v["epochs"])
            row = RowSpec(DPSGD_KIND, {"sigma": v["sigma"], "sampling_rate": q,
                                                  "sensitivity": 1.0}, steps,
                          f"DP-SGD: N={fmt_value(v['dataset'])}, batch {fmt_value(v['batch'])}, "
                          f"{fmt(v['epochs'], 6)} epochs")
            err = row.error()
            field = "sigma" if err else None
        except ValueError as exc:
            err = str(exc)
            field = getattr(exc, "field", None)
        for key, edit in self.fields.items():
            mark(edit, err if key == field else None, self._tips[key])
        self.error_label.show_error(err)
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setEnabled(err is None)
        if err is None:
            self._row = row
            self.summary.setText(f"Sampling rate q = B / N = {fmt(q, 6)}\n"
                                 f"Steps = ⌈epochs / q⌉ = {fmt_count(steps)} "
                                 f"(used as the row's count)")
        else:
            self.summary.setText("Sampling rate q = B / N = …\nSteps = ⌈epochs / q⌉ = …")
