"""Tuning…: how the composition was tuned (the best of several runs is released).

The dialog edits a ``Tuning`` (accounting/queries/selection.py): how the number of runs is chosen
(fixed, Poisson, truncated negative binomial), its mean and, for the truncated negative binomial,
its shape η. The values are checked as they are typed, by the same validation the file loader
uses, and a bad one is marked on its field with a message that names it; OK stays disabled until
the values are valid. Accepting sets the document's tuning through the undo ``Editor``. No
numerics here: the engine bounds the release (``Result.tuning``) and the results panel shows it.
"""
from __future__ import annotations

from PySide6.QtWidgets import (QComboBox, QDialog, QDialogButtonBox, QFormLayout, QLabel, QLineEdit,
                               QVBoxLayout, QWidget)

from ..accounting.queries.selection import Tuning
from .fmt import fmt_field, parse_number
from .widgets import ErrorLabel, mark

#: the choices of the runs menu: (key, title); None: the composition is run once
RUNS = ((None, "Run once (no tuning)"), ("fixed", "A fixed number of runs"),
        ("poisson", "Poisson number of runs"),
        ("truncated_negative_binomial", "Truncated negative binomial (η = 1: geometric)"))
TIPS = {
    "runs": "How many times the whole composition was run while tuning hyperparameters; only the best "
            "run is released. A random number of runs (Papernot & Steinke 2022) costs far less than a "
            "fixed one.",
    "mean": "The number of runs (fixed, a whole number), or its mean (at least 1).",
    "eta": "The truncated negative binomial's shape η > −1: 1 is the geometric distribution, 0 the "
           "logarithmic one. A pure ε-DP run gives a (2 + η)ε-DP release.",
}


def tuning_from_text(runs: str | None, mean: str, eta: str) -> tuple[Tuning | None, str | None, str | None]:
    """(tuning, None, None) for valid fields (tuning None: run once), else (None, the message naming
    the field, the field it is about: "mean" or "eta")."""
    if runs is None:
        return None, None, None
    eta_value = parse_number(eta) if runs == "truncated_negative_binomial" else None
    try:
        return Tuning(runs, parse_number(mean), eta_value), None, None  # type: ignore[arg-type]
    except ValueError as exc:
        text = str(exc)
        return None, text, "eta" if text.startswith("tuning.eta") else "mean"


class TuningDialog(QDialog):
    """Edits a tuning; ``tuning()`` is the value to set when accepted."""

    def __init__(self, tuning: Tuning | None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Hyperparameter tuning")
        self.setObjectName("tuning_dialog")
        lay = QVBoxLayout(self)
        intro = QLabel("When the composition was run several times to tune hyperparameters and only the "
                       "best run is released, say how the runs were chosen.")
        intro.setWordWrap(True)
        lay.addWidget(intro)
        form = QFormLayout()
        self.runs = QComboBox()
        self.runs.setObjectName("tuning_runs")
        self.runs.setToolTip(TIPS["runs"])
        for key, title in RUNS:
            self.runs.addItem(title, key)
        self.mean = QLineEdit()
        self.mean.setObjectName("tuning_mean")
        self.mean.setToolTip(TIPS["mean"])
        self.eta = QLineEdit()
        self.eta.setObjectName("tuning_eta")
        self.eta.setToolTip(TIPS["eta"])
        form.addRow("Runs", self.runs)
        form.addRow("Mean number of runs", self.mean)
        form.addRow("Shape η", self.eta)
        lay.addLayout(form)
        self.error_label = ErrorLabel()
        lay.addWidget(self.error_label)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        lay.addWidget(self.buttons)
        self.runs.setCurrentIndex(max(self.runs.findData(None if tuning is None else tuning.runs), 0))
        self.mean.setText("10" if tuning is None else fmt_field(tuning.mean))
        self.eta.setText("1" if tuning is None or tuning.eta is None else fmt_field(tuning.eta))
        self.runs.currentIndexChanged.connect(self._check)
        self.mean.textEdited.connect(self._check)
        self.eta.textEdited.connect(self._check)
        self._value: Tuning | None = tuning
        self._check()

    def _check(self, *_: object) -> None:
        runs = self.runs.currentData()
        self.mean.setEnabled(runs is not None)
        self.eta.setEnabled(runs == "truncated_negative_binomial")
        value, error, field = tuning_from_text(runs, self.mean.text(), self.eta.text())
        mark(self.mean, error if field == "mean" else None, TIPS["mean"])
        mark(self.eta, error if field == "eta" else None, TIPS["eta"])
        self.error_label.show_error(error)
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setEnabled(error is None)
        if error is None:
            self._value = value

    def error(self) -> str | None:
        """The message for the fields as typed, or None when they are valid."""
        return tuning_from_text(self.runs.currentData(), self.mean.text(), self.eta.text())[1]

    def tuning(self) -> Tuning | None:
        """The tuning the fields describe (the last valid one while they are not)."""
        return self._value
