"""Budget view: how much of a total budget (ε_g, δ_g) the composition uses, and for one row how
many more runs fit, by the PRV accountant and by the advanced-composition privacy filter.

The numbers are ``budget_status`` (accounting/queries/budget.py), run on a worker thread
(``TaskRunner``). The PRV answer is certified for a composition whose mechanisms are fixed in
advance; the privacy filter (Rogers, Roth, Ullman, Vadhan 2016) stays valid when each
mechanism is chosen adaptively, after seeing the earlier results, and is shown beside it for
comparison. A result belongs to the rows it was computed for: an edit marks it out of date.
"""
from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtWidgets import (QComboBox, QFormLayout, QFrame, QGridLayout, QGroupBox, QHBoxLayout,
                               QLabel, QLineEdit, QProgressBar, QPushButton, QScrollArea, QVBoxLayout,
                               QWidget)

from ..accounting.queries.budget import BudgetStatus, budget_status
from ..document.model import KIND_TITLES, Document, RowSpec
from .calibrate_dialog import check_positive
from .tasks import TaskRunner, failure_text
from .fmt import fmt, fmt_bound, fmt_count
from .targets import check_field
from .widgets import ERROR_COLOR, ErrorLabel, field_value, fill, mark

#: the labels of the two budget fields (messages name the fields by them)
EPS_LABEL, DELTA_LABEL = "ε budget (ε_g)", "δ budget (δ_g)"
EPS_TIP = "The total ε (nats) you allow for the whole analysis; a number > 0, e.g. 3."
DELTA_TIP = "The total δ you allow; a number in (0, 1), e.g. 1e-5. The used ε is reported at this δ."
ROW_TIP = "The row whose further runs are counted: how many more times can it run within the budget?"
ADAPTIVE_NOTE = ("The PRV accountant's answer assumes every mechanism and its parameters are fixed in "
                 "advance. The privacy filter (advanced composition, Rogers et al. 2016) remains valid "
                 "when each mechanism is chosen adaptively, after seeing earlier results; it is "
                 "usually far more conservative.")
GREEN_TEXT, AMBER = "#1b5e20", "#e07b00"
#: gauge fill: light enough for the percentage drawn over it
GAUGE_COLORS = ("#8bc98e", "#ffc470", "#ef8f8f")
DECISION_STYLE = {"CONTINUE": f"color: {GREEN_TEXT}; font-weight: bold; font-size: 15pt;",
                  "HALT": f"color: {ERROR_COLOR}; font-weight: bold; font-size: 15pt;",
                  None: "color: #777; font-weight: bold; font-size: 15pt;"}


def row_title(i: int, spec: RowSpec) -> str:
    return f"{i + 1}: {spec.label or KIND_TITLES.get(spec.kind, spec.kind)} (×{fmt_count(spec.count)})"


class _Answer(QGroupBox):
    """One accountant's answer: a decision in large letters and how many more runs fit."""

    def __init__(self, title: str, tip: str, name: str) -> None:
        super().__init__(title)
        self.setToolTip(tip)
        lay = QVBoxLayout(self)
        self.decision = QLabel("—")
        self.decision.setObjectName(f"{name}_decision")
        self.decision.setStyleSheet(DECISION_STYLE[None])
        self.more = QLabel(" ")
        self.more.setObjectName(f"{name}_more")
        self.more.setWordWrap(True)
        lay.addWidget(self.decision)
        lay.addWidget(self.more)
        lay.addStretch(1)

    def set_answer(self, decision: str | None, more: str, empty: str = "n/a") -> None:
        self.decision.setText(decision or empty)
        self.decision.setStyleSheet(DECISION_STYLE.get(decision, DECISION_STYLE[None]))
        self.more.setText(more)


class BudgetView(QWidget):
    """Budget use of the document's composition; ``compute()`` runs in the background."""

    #: the BudgetStatus of a finished computation
    result_ready = Signal(object)
    failed = Signal(str)
    cancelled = Signal()
    #: after result_ready, failed or cancelled
    run_finished = Signal()

    def __init__(self, doc: Document, parent: QWidget | None = None,
                 work: Callable[..., BudgetStatus] | None = None) -> None:
        super().__init__(parent)
        #: what a run executes on the worker thread (tests inject their own)
        self._work = work or budget_status
        self.doc: Document | None = None
        self._status: BudgetStatus | None = None
        self._snapshot: tuple | None = None
        self._running_snapshot: tuple | None = None
        self._closed = False
        lay = QVBoxLayout(self)
        self._build_inputs(lay)
        self._build_compute_bar(lay)
        self._build_used(lay)
        self._build_answers(lay)
        self._build_notes(lay)
        self._build_runner()
        self._connect_inputs()
        self.set_document(doc)

    # ------------------------------------------------------------ building the view
    def _build_inputs(self, lay: QVBoxLayout) -> None:
        """"Total budget": ε_g, δ_g and the row whose further runs are counted."""
        inputs = QGroupBox("Total budget")
        form = QFormLayout(inputs)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        self.eps_edit = QLineEdit()
        self.eps_edit.setObjectName("budget_epsilon")
        self.eps_edit.setToolTip(EPS_TIP)
        self.delta_edit = QLineEdit()
        self.delta_edit.setObjectName("budget_delta")
        self.delta_edit.setToolTip(DELTA_TIP)
        self.row_choice = QComboBox()
        self.row_choice.setObjectName("budget_row")
        self.row_choice.setToolTip(ROW_TIP)
        self.row_choice.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.row_choice.setMinimumContentsLength(16)
        form.addRow(EPS_LABEL, _with_unit(self.eps_edit, "nats"))
        form.addRow(DELTA_LABEL, _with_unit(self.delta_edit, "in (0, 1)"))
        form.addRow("More runs of", self.row_choice)
        self.error_label = ErrorLabel()
        form.addRow(self.error_label)
        lay.addWidget(inputs)

    def _build_compute_bar(self, lay: QVBoxLayout) -> None:
        """Compute and Cancel beside a thin progress bar."""
        bar = QHBoxLayout()
        self.compute_button = QPushButton("Compute")
        self.compute_button.setObjectName("budget_compute")
        self.compute_button.setToolTip("Compute the budget use in the background "
                                       "(with the accuracy set in the Targets)")
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setObjectName("budget_cancel")
        self.cancel_button.setToolTip("Stop the running computation")
        self.progress = QProgressBar()
        self.progress.setRange(0, 1)
        self.progress.setValue(0)
        self.progress.setTextVisible(False)
        self.progress.setMaximumHeight(12)
        bar.addWidget(self.compute_button)
        bar.addWidget(self.cancel_button)
        bar.addWidget(self.progress, 1)
        lay.addLayout(bar)

    def _build_used(self, lay: QVBoxLayout) -> None:
        """"Budget used by the composition": the gauge and the used ε in words."""
        used = QGroupBox("Budget used by the composition")
        ulay = QVBoxLayout(used)
        self.gauge = QProgressBar()
        self.gauge.setObjectName("budget_gauge")
        self.gauge.setRange(0, 1000)
        self.gauge.setValue(0)
        self.gauge.setFormat("")
        self.gauge.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.gauge.setToolTip("Certified upper ε at δ_g as a share of ε_g")
        self.used_label = QLabel("Press Compute.")
        self.used_label.setObjectName("budget_used")
        self.used_label.setWordWrap(True)
        self.used_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        ulay.addWidget(self.gauge)
        ulay.addWidget(self.used_label)
        lay.addWidget(used)

    def _build_answers(self, lay: QVBoxLayout) -> None:
        """The two accountants' answers, one above the other (``prv``, ``filter``)."""
        answers = QGridLayout()
        self.prv = _Answer("PRV accountant (fixed in advance)",
                           "Certified by the PRV accountant for a composition chosen before it runs", "prv")
        self.filter = _Answer("Privacy filter (adaptive allowed)",
                              "Advanced-composition privacy filter of Rogers, Roth, Ullman and Vadhan "
                              "(2016): valid even when each mechanism is chosen after seeing earlier "
                              "results", "filter")
        # one above the other: side by side, their titles alone made the view ~580 px wide
        # (and, when it was a dock, the window grew past the screen's width)
        answers.addWidget(self.prv, 0, 0)
        answers.addWidget(self.filter, 1, 0)
        lay.addLayout(answers)

    def _build_notes(self, lay: QVBoxLayout) -> None:
        """The warning note (hidden until needed) and the note on adaptive composition."""
        self.note_label = QLabel("")
        self.note_label.setObjectName("budget_note")
        self.note_label.setWordWrap(True)
        self.note_label.setStyleSheet(f"color: {AMBER};")
        self.note_label.hide()
        lay.addWidget(self.note_label)
        self.adaptive_label = QLabel(ADAPTIVE_NOTE)
        self.adaptive_label.setWordWrap(True)
        self.adaptive_label.setStyleSheet("color: #555;")
        lay.addWidget(self.adaptive_label)
        lay.addStretch(1)

    def _build_runner(self) -> None:
        """The worker thread of the computation (``runner``), reporting to the view."""
        self.runner = TaskRunner("prvgui-budget", self)
        self.runner.running_changed.connect(self._running_changed)
        self.runner.done.connect(self._on_done)
        self.runner.failed.connect(self._on_failed)
        self.runner.cancelled.connect(self._on_cancelled)

    def _connect_inputs(self) -> None:
        """The buttons and the fields to what they do."""
        self.compute_button.clicked.connect(self.compute)
        self.cancel_button.clicked.connect(self.runner.cancel)
        self.eps_edit.textChanged.connect(self._inputs_changed)
        self.delta_edit.textChanged.connect(self._inputs_changed)
        self.row_choice.currentIndexChanged.connect(self._inputs_changed)

    # ------------------------------------------------------------ document
    def set_document(self, doc: Document) -> None:
        """Show the budget of ``doc`` (the shown result is dropped; a running job is cancelled)."""
        if self.doc is not None:
            self.doc.unsubscribe(self._on_document)
        self.doc = doc
        doc.subscribe(self._on_document)
        self.runner.discard()  # an answer for the previous document must not show up
        self._fill_budget_fields()
        self._fill_rows()
        self._clear("Press Compute.")
        self._inputs_changed()

    def _inputs(self) -> tuple:
        """What a shown answer depends on: the rows and who is protected (the relation)."""
        return self.doc.rows, self.doc.neighbouring, self.doc.group_size

    def _on_document(self, what: str, arg: object) -> None:
        if what == "reset":  # another composition (e.g. a file was opened): start from its targets
            self._fill_budget_fields()
        if what != "targets":
            self._fill_rows()
        if self._status is not None and self._snapshot != self._inputs():
            self.used_label.setText(self._used_text(self._status)
                                    + "\nOut of date: the composition changed; Compute again.")
        self._inputs_changed()

    def _fill_budget_fields(self) -> None:
        """Start from the document's targets: ε_g = the ε at which δ is reported (or 1), δ_g = δ."""
        t = self.doc.targets
        fill(self.eps_edit, t.epsilon if t.epsilon else 1.0)
        fill(self.delta_edit, t.delta)

    def _fill_rows(self) -> None:
        keep = self.row_choice.currentData()
        self.row_choice.blockSignals(True)
        self.row_choice.clear()
        self.row_choice.addItem("(no row)", None)
        for i, spec in enumerate(self.doc.rows):
            self.row_choice.addItem(row_title(i, spec), i)  # elided by the combo box when long
            self.row_choice.setItemData(i + 1, row_title(i, spec), Qt.ItemDataRole.ToolTipRole)
        k = self.row_choice.findData(keep) if keep is not None else -1
        self.row_choice.setCurrentIndex(k if k >= 0 else (1 if len(self.doc) else 0))
        self.row_choice.blockSignals(False)

    # ------------------------------------------------------------ inputs
    @property
    def row_index(self) -> int | None:
        return self.row_choice.currentData()

    def set_row(self, i: int | None) -> None:
        """Choose the row whose further runs are counted (None: no row)."""
        k = self.row_choice.findData(i) if i is not None else 0
        self.row_choice.setCurrentIndex(max(k, 0))

    def input_error(self) -> str | None:
        """The first reason nothing can be computed (also marks the fields), or None."""
        _, eps_err = check_positive(field_value(self.eps_edit), EPS_LABEL)
        _, delta_err = check_field("delta", field_value(self.delta_edit), DELTA_LABEL)
        mark(self.eps_edit, eps_err, EPS_TIP)
        mark(self.delta_edit, delta_err, DELTA_TIP)
        if eps_err or delta_err:
            return eps_err or delta_err
        if not len(self.doc):
            return "the composition is empty: add a mechanism first"
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
        self.compute_button.setEnabled(not running and not self.error_label.text())
        self.cancel_button.setEnabled(running)

    # ------------------------------------------------------------ computing
    @property
    def status(self) -> BudgetStatus | None:
        """The shown result (None before one arrives)."""
        return self._status

    def compute(self) -> bool:
        """Start the computation; False (and nothing runs) if the inputs are invalid."""
        err = self.input_error()
        self.error_label.show_error(err)
        if err is not None or self._closed:
            self._update_buttons()
            return False
        try:
            rows = self.doc.engine_rows()
        except ValueError as exc:
            self.error_label.show_error(f"fix {exc}")
            self._update_buttons()
            return False
        eps, _ = check_positive(field_value(self.eps_edit), EPS_LABEL)
        delta, _ = check_field("delta", field_value(self.delta_edit), DELTA_LABEL)
        row, eps_error = self.row_index, self.doc.targets.eps_error
        self._running_snapshot = self._inputs()
        self.used_label.setText("Computing…")
        work = self._work
        relation = self.doc.relation
        self.runner.start(lambda progress, cancel: work(rows, eps, delta, row, eps_error, cancel=cancel,
                                                        relation=relation))
        return True

    def cancel(self) -> None:
        self.runner.cancel()

    def _running_changed(self, running: bool) -> None:
        self.progress.setRange(0, 0 if running else 1)  # 0..0: busy indicator
        self.progress.setValue(0)
        self._update_buttons()

    def _clear(self, text: str) -> None:
        self._status = None
        self.gauge.setValue(0)
        self.gauge.setFormat("")
        self.used_label.setText(text)
        self.used_label.setStyleSheet("")
        self.prv.set_answer(None, " ", "—")
        self.filter.set_answer(None, " ", "—")
        self.note_label.hide()

    def _used_text(self, s: BudgetStatus) -> str:
        return (f"Uses {fmt_bound(100 * s.used_fraction, 3)}% of the ε budget "
                f"(ε ≤ {fmt_bound(s.epsilon.upper)} at δ_g = {fmt(s.delta_budget)}; "
                f"estimate {fmt(s.epsilon.estimate)}, ε_g = {fmt(s.eps_budget)})")

    def _more_text(self, s: BudgetStatus, more: int | None, bounded: bool, why: str) -> str:
        if s.row_index is None:
            return "Choose a row to count how many more of its runs fit."
        if more is None:
            return why
        at_least = "at least " if bounded else ""
        runs = "run" if more == 1 else "runs"
        return f"{at_least}{fmt_count(more)} more {runs} of row {s.row_index + 1} fit"

    @Slot(object)
    def _on_done(self, s: BudgetStatus) -> None:
        self._status = s
        self._snapshot = self._running_snapshot
        pct = 100 * s.used_fraction
        self.gauge.setValue(round(1000 * min(max(s.used_fraction, 0.0), 1.0)))
        self.gauge.setFormat(f"{fmt_bound(pct, 3)}%" + (" — over budget" if s.used_fraction > 1 else ""))
        color = GAUGE_COLORS[0 if s.used_fraction <= 0.8 else 1 if s.used_fraction <= 1 else 2]
        self.gauge.setStyleSheet(f"QProgressBar::chunk {{ background: {color}; }}")
        self.used_label.setText(self._used_text(s))
        bounded = "stopped at its bound" in s.note
        self.prv.set_answer(s.decision, self._more_text(s, s.more, bounded, "n/a"))
        filter_why = ("The filter cannot answer for this composition (see the note below)."
                      if s.filter_decision is None
                      else f"n/a: row {s.row_index + 1 if s.row_index is not None else ''} has no (ε, δ) "
                           "description")
        self.filter.set_answer(s.filter_decision, self._more_text(s, s.filter_more, False, filter_why))
        self.note_label.setText(f"Note: {s.note}." if s.note else "")
        self.note_label.setVisible(bool(s.note))
        if self._snapshot != self._inputs():
            self._on_document("change", None)
        self.result_ready.emit(s)
        self.run_finished.emit()

    @Slot(object)
    def _on_failed(self, exc: object) -> None:
        message = failure_text(exc)
        self._clear(f"The computation failed: {message}")
        self.used_label.setStyleSheet(f"color: {ERROR_COLOR};")
        self.failed.emit(message)
        self.run_finished.emit()

    @Slot()
    def _on_cancelled(self) -> None:
        if self._status is None:
            self.used_label.setText("Cancelled. Press Compute to start again.")
        else:  # the previous result stays
            self.used_label.setText(self._used_text(self._status))
            self._on_document("change", None)
        self.cancelled.emit()
        self.run_finished.emit()

    # ------------------------------------------------------------ closing
    def shutdown(self) -> None:
        """Cancel, stop the worker thread and wait for it; detach from the document (idempotent)."""
        if self._closed:
            return
        self._closed = True
        if self.doc is not None:
            self.doc.unsubscribe(self._on_document)
        self.runner.shutdown()


BUDGET_TAB_TIP = "How much of a total (ε, δ) budget the composition uses, and how many more runs fit."


def scrolling(view: QWidget) -> QScrollArea:
    """``view`` in a frameless scroll area, so that its height never squeezes its neighbours."""
    area = QScrollArea()
    area.setWidgetResizable(True)
    area.setFrameShape(QFrame.Shape.NoFrame)
    area.setWidget(view)
    return area


def _with_unit(field: QWidget, unit: str) -> QWidget:
    box = QWidget()
    lay = QHBoxLayout(box)
    lay.setContentsMargins(0, 0, 0, 0)
    lay.addWidget(field, 3)
    label = QLabel(unit)
    label.setStyleSheet("color: #555;")
    lay.addWidget(label, 2)
    return box
