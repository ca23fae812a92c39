"""Calibrate dialog: the best value of one parameter of the selected row for a target ε, or for a
target attack risk ("the best membership-inference attack's true-positive rate at false-positive
rate a is at most t").

The search is the engine's ``calibrate`` (accounting/queries/calibrate.py: the answer's certified
upper ε is <= the target, and the next value 1% towards "less private" is not) or
``calibrate_risk`` (risk_calibrate.py: the same guarantees for the certified upper TPR; its
fields are risk_target.py). The answer also gives the calibrated row's noise (95% half-width),
so that privacy and accuracy are seen together. It runs on a worker thread together with a
sweep of ε (or the TPR) against the parameter around the answer, drawn with
the target line and the answer marked. Apply writes the value into the row as one undoable
``ReplaceRow`` edit (undo.py) and closes the dialog.

The work (calibration_job.py) runs on ``tasks.TaskRunner``; the plot is calibration_plot.py.
"""
from __future__ import annotations

import html
from dataclasses import replace
from collections.abc import Callable

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtGui import QUndoStack
from PySide6.QtWidgets import (QComboBox, QDialog, QFormLayout, QHBoxLayout, QLabel, QLineEdit,
                               QProgressBar, QPushButton, QSizePolicy, QVBoxLayout, QWidget)

from ..accounting.queries.calibrate import (Calibration, Infeasible, calibration_cost, parameters_for, search_spec)
from ..accounting.mechanisms import kind_class
from ..accounting.queries.risk_calibrate import RiskCalibration
from ..accounting.core.validate import check_number
from ..document.model import KIND_TITLES, Document, RowSpec, Targets
from .fmt import field_text, fmt, fmt_bound, fmt_count, fmt_field, parse_number
from .calibration_job import CalibrationOutcome, CalibrationRequest, run_calibration
from .cost_prompt import CostPrompt
from .worker import PROMPT_BYTES, PROMPT_SECONDS
from .calibration_plot import CalibrationPlot
from .risk_target import RiskTargetFields, goal_choice, risk_answer
from .row_form import COUNT_TIP
from .tasks import TaskRunner, failure_text
from .targets import TIPS as TARGET_TIPS
from .targets import check_field
from .undo import Editor
from .widgets import ErrorLabel, field_value, fill, mark

#: how the hint names a parameter
SHORT_NAMES = {"sigma": "σ", "scale": "b", "sampling_rate": "q", "epsilon": "mechanism ε", "count": "count"}
#: the dialog's labels of its two fields (messages name the fields by them)
TARGET_LABEL, DELTA_LABEL = "Target ε", "δ"
TARGET_TIP = "The largest ε (nats) the composition may have at δ; a number > 0, e.g. 2 or 1e-1."


def price_calibration(request: CalibrationRequest):
    """A search's price (accounting/calibrate.calibration_cost; milliseconds); an attack-risk
    target is priced at δ = 1e-5 (its compositions read the tradeoff curve near there)."""
    delta = request.delta if request.risk is None else 1e-5
    return calibration_cost(list(request.rows), request.row_index, delta, request.eps_error,
                                request.relation)


def check_positive(text: object, label: str) -> tuple[float | None, str | None]:
    """(value, None) for text (or a field's value) that reads as a finite number > 0, else
    (None, a message naming the field by its ``label``)."""
    try:
        return check_number(label, parse_number(text), 0.0, lo_open=True), None
    except ValueError as exc:
        return None, str(exc)


# ------------------------------------------------------------------ the dialog
def parameter_title(kind: str, name: str) -> tuple[str, str, str]:
    """(title, unit, tooltip) of a parameter as the row form shows it."""
    if name == "count":
        return "Count", "runs (e.g. steps)", COUNT_TIP
    title, unit = field_text(kind, name)
    description = kind_class(kind).param_specs()[name].help
    return title, unit, f"{description[0].upper()}{description[1:]}."


class CalibrateDialog(QDialog):
    """Calibrate one parameter of row ``row_index`` of ``doc`` for a target ε at δ.

    Apply pushes one ``ReplaceRow`` command on ``stack`` (undoable) and accepts the dialog.
    """

    calibration_ready = Signal(object)
    calibration_failed = Signal(str)
    calibration_cancelled = Signal()
    #: after calibration_ready, calibration_failed or calibration_cancelled
    run_finished = Signal()

    def __init__(self, doc: Document, row_index: int, targets: Targets | None, stack: QUndoStack,
                 parent: QWidget | None = None,
                 work: Callable[..., CalibrationOutcome] | None = None,
                 price: Callable[[CalibrationRequest], object] | None = None) -> None:
        super().__init__(parent)
        #: what a run executes on the worker thread, and its price (tests inject their own)
        self._work = work or run_calibration
        self._price = price or price_calibration
        self.doc = doc
        self.row_index = row_index
        self._editor = Editor(doc, stack)
        t = targets or doc.targets
        self.eps_error = t.eps_error
        self._outcome: CalibrationOutcome | None = None
        self._snapshot: tuple | None = None  # the inputs the shown answer is for (_inputs)
        self._running_snapshot: tuple | None = None
        self._closed = False
        spec = doc.row(row_index)
        self.kind = spec.kind
        self.setWindowTitle(f"Calibrate row {row_index + 1}")
        self.setMinimumWidth(640)
        self.resize(700, 720)
        lay = QVBoxLayout(self)
        self._build_header(lay, spec)
        self._build_fields(lay, spec, t)
        self._build_messages(lay)
        self._build_run_bar(lay)
        self._build_answer(lay)
        self._build_buttons(lay)
        self._build_runner()
        self._connect_inputs(doc)
        self._goal_changed()

    # ------------------------------------------------------------ building the dialog
    def _build_header(self, lay: QVBoxLayout, spec: RowSpec) -> None:
        """The row being calibrated: its number, label, mechanism and count (``header``)."""
        kind_title = KIND_TITLES.get(spec.kind, spec.kind)
        self.header = QLabel(f"<b>Row {self.row_index + 1}</b>: {html.escape(spec.label or kind_title)}"
                             f" — {kind_title}, count {fmt_count(spec.count)}")
        self.header.setWordWrap(True)
        lay.addWidget(self.header)

    def _build_fields(self, lay: QVBoxLayout, spec: RowSpec, t: Targets) -> None:
        """The form: parameter, kind of target, ε and δ or the attack risk, accuracy (``form``)."""
        form = QFormLayout()
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        lay.addLayout(form)
        self.parameter = QComboBox()
        self.parameter.setObjectName("calibrate_parameter")
        for name in parameters_for(spec.kind):
            title, _, tip = parameter_title(spec.kind, name)
            self.parameter.addItem(title, name)
            self.parameter.setItemData(self.parameter.count() - 1, tip, Qt.ItemDataRole.ToolTipRole)
        self.parameter_unit = QLabel()
        self.parameter_unit.setStyleSheet("color: #555;")
        form.addRow("Parameter", _with_unit(self.parameter, self.parameter_unit))
        self.goal = goal_choice()
        form.addRow("Target", self.goal)
        self.form = form
        self.target_edit = QLineEdit()
        fill(self.target_edit, t.epsilon if t.epsilon else 1.0)
        self.target_edit.setObjectName("calibrate_target")
        self.target_edit.setToolTip(TARGET_TIP)
        form.addRow(TARGET_LABEL, _with_unit(self.target_edit, _unit("nats")))
        self.delta_edit = QLineEdit()
        fill(self.delta_edit, t.delta)
        self.delta_edit.setObjectName("calibrate_delta")
        self.delta_edit.setToolTip(TARGET_TIPS["delta"])
        form.addRow(DELTA_LABEL, _with_unit(self.delta_edit, _unit("probability in (0, 1)")))
        #: the attack-risk target's two fields (shown instead of ε and δ for that target)
        self.risk_target = RiskTargetFields(form, lambda field, unit: _with_unit(field, _unit(unit)))
        self.fpr_edit, self.tpr_edit = self.risk_target.fpr_edit, self.risk_target.tpr_edit
        accuracy = QLabel(f"{fmt(self.eps_error)} (from the Targets)")
        accuracy.setToolTip(TARGET_TIPS["eps_error"])
        form.addRow("Accuracy (ε error)", accuracy)

    def _build_messages(self, lay: QVBoxLayout) -> None:
        """The hint on what the answer is, the error line and the cost prompt (``prompt``)."""
        self.hint = QLabel()
        self.hint.setWordWrap(True)
        self.hint.setStyleSheet("color: #555;")
        lay.addWidget(self.hint)
        self.error_label = ErrorLabel()
        self.error_label.setObjectName("calibrate_error")
        lay.addWidget(self.error_label)
        #: what a costly search would take, before it starts (as the window prices a computation)
        self.prompt = CostPrompt()
        self.prompt.compute_requested.connect(lambda: self.run(confirmed=True))
        self.prompt.cancel_requested.connect(self.prompt.dismiss)
        lay.addWidget(self.prompt)

    def _build_run_bar(self, lay: QVBoxLayout) -> None:
        """Run and Cancel beside the search's progress bar and its words."""
        bar = QHBoxLayout()
        self.run_button = QPushButton("Run")
        self.run_button.setObjectName("calibrate_run")
        self.run_button.setDefault(True)
        self.run_button.setToolTip("Search for the value in the background")
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setObjectName("calibrate_cancel")
        self.cancel_button.setToolTip("Stop the running search")
        self.progress = QProgressBar()
        self.progress.setRange(0, 1000)
        self.progress.setFormat("%p%")
        self.progress_text = QLabel("")
        self.progress_text.setStyleSheet("color: #555;")
        self.progress_text.setMinimumWidth(200)
        for w in (self.run_button, self.cancel_button):
            bar.addWidget(w)
        bar.addWidget(self.progress, 1)
        bar.addWidget(self.progress_text)
        lay.addLayout(bar)

    def _build_answer(self, lay: QVBoxLayout) -> None:
        """The answer in words (``result_label``) and its plot (``plot``)."""
        self.result_label = QLabel("Choose the parameter and the target, then Run.")
        self.result_label.setObjectName("calibrate_result")
        self.result_label.setWordWrap(True)
        self.result_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.result_label.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Minimum)
        lay.addWidget(self.result_label)
        self.plot = CalibrationPlot()
        lay.addWidget(self.plot, 1)

    def _build_buttons(self, lay: QVBoxLayout) -> None:
        """"Apply to row" and Close, at the right."""
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        self.apply_button = QPushButton("Apply to row")
        self.apply_button.setObjectName("calibrate_apply")
        self.apply_button.setToolTip("Write the value into the row (one undoable edit) and close")
        self.close_button = QPushButton("Close")
        buttons.addWidget(self.apply_button)
        buttons.addWidget(self.close_button)
        lay.addLayout(buttons)

    def _build_runner(self) -> None:
        """The worker thread of the search (``runner``), reporting to the dialog."""
        self.runner = TaskRunner("prvgui-calibrate", self)
        self.runner.progress.connect(self._on_progress)
        self.runner.done.connect(self._on_done)
        self.runner.failed.connect(self._on_failed)
        self.runner.cancelled.connect(self._on_cancelled)
        self.runner.running_changed.connect(lambda _: self._update_buttons())

    def _connect_inputs(self, doc: Document) -> None:
        """The fields, the buttons and the document's edits to what they do."""
        self.parameter.currentIndexChanged.connect(self._parameter_changed)
        self.target_edit.textChanged.connect(self._inputs_changed)
        self.delta_edit.textChanged.connect(self._inputs_changed)
        self.risk_target.connect(self._inputs_changed)
        self.goal.currentIndexChanged.connect(self._goal_changed)
        self.run_button.clicked.connect(self.run)
        self.cancel_button.clicked.connect(self.runner.cancel)
        self.apply_button.clicked.connect(self.apply)
        self.close_button.clicked.connect(self.reject)
        doc.subscribe(self._on_document)

    # ------------------------------------------------------------ inputs
    @property
    def parameter_name(self) -> str:
        return self.parameter.currentData()

    @property
    def risk_goal(self) -> bool:
        """True when the target is an attack risk (TPR at FPR), not ε at δ."""
        return self.goal.currentData() == "risk"

    def _goal_changed(self) -> None:
        risk = self.risk_goal
        for edit in (self.target_edit, self.delta_edit):
            self.form.setRowVisible(edit.parentWidget(), not risk)
        self.risk_target.set_visible(risk)
        self._parameter_changed()

    def _parameter_changed(self) -> None:
        name = self.parameter_name
        title, unit, tip = parameter_title(self.kind, name)
        if self._outcome is None:
            self.plot.plot_item.setLabel("bottom", title)
        self.parameter_unit.setText(unit)
        self.parameter.setToolTip(tip)
        spec = self._row_spec()
        current = (spec.count if name == "count" else spec.params.get(name)) if spec is not None else None
        increasing = search_spec(self.kind, name).increasing
        sym = SHORT_NAMES.get(name, name)
        step = "one more run" if name == "count" else f"{sym} 1% {'larger' if increasing else 'smaller'}"
        now = "n/a" if current is None else fmt_count(current) if name == "count" else fmt_field(current)
        what = ("certified upper attack TPR at the false-positive rate" if self.risk_goal
                else "certified ε at δ")
        self.hint.setText(f"The answer is the {'largest' if increasing else 'smallest'} {sym} whose "
                          f"{what} is at most the target; {step} would exceed it. "
                          f"The row has {now} now.")
        self._inputs_changed()

    def _row_spec(self) -> RowSpec | None:
        return self.doc.row(self.row_index) if 0 <= self.row_index < len(self.doc) else None

    def input_error(self) -> str | None:
        """The first reason the search cannot run (also marks the fields), or None."""
        if self.risk_goal:
            if (err := self.risk_target.error()) is not None:
                return err
        else:
            _, target_err = check_positive(field_value(self.target_edit), TARGET_LABEL)
            _, delta_err = check_field("delta", field_value(self.delta_edit), DELTA_LABEL)
            mark(self.target_edit, target_err, TARGET_TIP)
            mark(self.delta_edit, delta_err, TARGET_TIPS["delta"])
            if target_err or delta_err:
                return target_err or delta_err
        spec = self._row_spec()
        if spec is None or spec.kind != self.kind:
            return f"row {self.row_index + 1} is no longer a {KIND_TITLES.get(self.kind, self.kind)} row"
        errors = self.doc.errors()
        if errors:
            i, msg = errors[0]
            return f"fix row {i + 1}: {msg}"
        return None

    def _inputs_changed(self) -> None:
        self.error_label.show_error(self.input_error())
        self._update_buttons()

    def _update_buttons(self) -> None:
        running = self.runner.is_running()
        self.run_button.setEnabled(not running and self.error_label.text() == "")
        self.cancel_button.setEnabled(running)
        self.apply_button.setEnabled(not running and self.can_apply())

    def can_apply(self) -> bool:
        """True if the shown answer is for the document as it is now."""
        return self._outcome is not None and self._snapshot == self._inputs()

    def _inputs(self) -> tuple:
        """What a shown answer depends on: the rows and who is protected (the relation)."""
        return self.doc.rows, self.doc.neighbouring, self.doc.group_size

    def _on_document(self, what: str, arg: object) -> None:
        if self._outcome is not None and self._snapshot != self._inputs():
            self._show_result_text(self.result_text(self._outcome.calibration, self._outcome.noise_95)
                                   + "\nOut of date: the composition changed; Run again.")
        self._inputs_changed()

    # ------------------------------------------------------------ running
    @property
    def calibration(self) -> Calibration | None:
        """The answer shown (None before a successful run)."""
        return self._outcome.calibration if self._outcome is not None else None

    @property
    def outcome(self) -> CalibrationOutcome | None:
        return self._outcome

    def run(self, confirmed: bool = False) -> bool:
        """Start the search with the typed inputs; False (and nothing runs) if they are invalid,
        or if it would cost more than the window computes unasked and is not ``confirmed`` (the
        cost prompt shows what it would take; "Compute anyway" runs it)."""
        self.prompt.dismiss()
        err = self.input_error()
        self.error_label.show_error(err)
        if err is not None or self._closed:
            self._update_buttons()
            return False
        try:
            rows = tuple(self.doc.engine_rows())
        except ValueError as exc:
            self.error_label.show_error(f"fix {exc}")
            self._update_buttons()
            return False
        if self.risk_goal:
            risk = self.risk_target.value()
            request = CalibrationRequest(rows, self.row_index, self.parameter_name, 0.0, 0.0,
                                         self.eps_error, self.doc.relation, risk=risk)
        else:
            target, _ = check_positive(field_value(self.target_edit), TARGET_LABEL)
            delta, _ = check_field("delta", field_value(self.delta_edit), DELTA_LABEL)
            request = CalibrationRequest(rows, self.row_index, self.parameter_name, target, delta,
                                         self.eps_error, self.doc.relation)
        if not confirmed:
            try:
                cost = self._cost(request)
            except (ValueError, ArithmeticError, MemoryError):
                cost = None  # the search says what is wrong with it
            if cost is not None and cost.exceeds(PROMPT_SECONDS, PROMPT_BYTES):
                self.prompt.ask(cost)
                self._show_result_text("Not started: see what it would take above.")
                self._update_buttons()
                return False
        self._outcome = None
        self._running_snapshot = self._inputs()
        self._show_result_text("Searching…")
        self.plot.show_outcome(None, "Searching…")
        self.progress.setValue(0)
        self.progress_text.setText("starting")
        work = self._work
        self.runner.start(lambda progress, cancel: work(request, progress, cancel))
        self._update_buttons()
        return True

    def _cost(self, request: CalibrationRequest):
        return self._price(request)

    def cancel(self) -> None:
        self.runner.cancel()

    def _show_result_text(self, text: str, error: bool = False) -> None:
        self.result_label.setText(text)
        self.result_label.setStyleSheet("color: #b71c1c;" if error else "")

    def _value_text(self, cal: Calibration) -> str:
        if cal.parameter == "count":
            return fmt_count(int(cal.value))
        # rounded towards the private side, so the printed number is a safe choice too
        return fmt_bound(cal.value, 6, up=not search_spec(self.kind, cal.parameter).increasing)

    def result_text(self, cal: Calibration | RiskCalibration, noise: tuple[float, str] | None = None) -> str:
        title, _, _ = parameter_title(self.kind, cal.parameter)
        if isinstance(cal, RiskCalibration):
            text = risk_answer(title, self._value_text(cal), cal)
        else:
            text = (f"{title} = {self._value_text(cal)} gives ε ≤ {fmt_bound(cal.epsilon.upper)} "
                    f"(certified; estimate {fmt(cal.epsilon.estimate)}) at δ = {fmt(cal.delta)}")
        if noise is not None:
            text += f"\nNoise at this value: 95% of it lies within ±{fmt_bound(noise[0])} {noise[1]}."
        if cal.at_bound:
            text += f"\nThe search stopped at the end of its range; a better {title} may lie beyond it."
        return text

    @Slot(float, str)
    def _on_progress(self, fraction: float, text: str) -> None:
        self.progress.setValue(int(1000 * max(0.0, min(1.0, fraction))))
        self.progress_text.setText(text)

    @Slot(object)
    def _on_done(self, outcome: CalibrationOutcome) -> None:
        self._outcome = outcome
        self._snapshot = self._running_snapshot
        self.progress.setValue(1000)
        self.progress_text.setText("done")
        self._show_result_text(self.result_text(outcome.calibration, outcome.noise_95))
        cal = outcome.calibration
        self.plot.show_outcome(outcome, parameter_title=parameter_title(self.kind, cal.parameter)[0],
                               value_text=self._value_text(cal),
                               increasing=search_spec(self.kind, cal.parameter).increasing)
        if not self.can_apply():
            self._on_document("change", None)
        self._update_buttons()
        self.calibration_ready.emit(outcome.calibration)
        self.run_finished.emit()

    @Slot(object)
    def _on_failed(self, exc: object) -> None:
        message = failure_text(exc)
        self.progress.setValue(0)
        self.progress_text.setText("no answer" if isinstance(exc, Infeasible) else "failed")
        text = message[0].upper() + message[1:]
        self._show_result_text(text if isinstance(exc, Infeasible) else f"The search failed: {text}",
                               error=True)
        self.plot.show_outcome(None, "No answer to draw")
        self._update_buttons()
        self.calibration_failed.emit(message)
        self.run_finished.emit()

    @Slot()
    def _on_cancelled(self) -> None:
        self.progress.setValue(0)
        self.progress_text.setText("cancelled")
        self._show_result_text("Cancelled. Run to search again.")
        self.plot.show_outcome(None, "Cancelled")
        self._update_buttons()
        self.calibration_cancelled.emit()
        self.run_finished.emit()

    # ------------------------------------------------------------ apply / close
    def new_row(self) -> RowSpec | None:
        """The row with the answer written into it (None if there is no current answer)."""
        cal = self.calibration
        spec = self._row_spec()
        if cal is None or spec is None or not self.can_apply():
            return None
        if cal.parameter == "count":
            return replace(spec, count=int(cal.value))
        return spec.with_param(cal.parameter, float(cal.value))

    def apply(self) -> bool:
        """Write the answer into the row as one undoable edit and close; False if there is none."""
        new = self.new_row()
        if new is None or self.runner.is_running():
            return False
        cal = self.calibration
        title = parameter_title(self.kind, cal.parameter)[0]
        self._editor.replace(self.row_index, new, f"Calibrate {title} of row")
        self.accept()
        return True

    def shutdown(self) -> None:
        """Cancel the search, stop the worker thread and wait for it (idempotent)."""
        if self._closed:
            return
        self._closed = True
        self.doc.unsubscribe(self._on_document)
        self.runner.shutdown()

    def done(self, result: int) -> None:  # accept, reject, Escape and the close box end here
        self.shutdown()
        super().done(result)


def _unit(text: str) -> QLabel:
    label = QLabel(text)
    label.setStyleSheet("color: #555;")
    return label


def _with_unit(field: QWidget, unit: QLabel) -> QWidget:
    box = QWidget()
    lay = QHBoxLayout(box)
    lay.setContentsMargins(0, 0, 0, 0)
    lay.addWidget(field, 3)
    lay.addWidget(unit, 2)
    return box
