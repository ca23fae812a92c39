"""DP-SGD helper: a training run's row from dataset size, batch size, epochs and noise, asking how
batches are formed and who is protected, with the consequence shown side by side.

The rows themselves (Poisson, fixed-size or shuffled batches) are dpsgd_rows.py. Fixed-size
batches are defined under replace-one neighbouring only: applying such a row sets the
document's neighbouring to replace-one, and the dialog says so first. Who is protected sets the
document's group size (records per person). Before the row is added the dialog shows, for
each scheme, the certified ε at the document's δ of this training run alone (Shuffled: the
proven lower bound and the certified upper bound), each computed by the engine's ``compute``
on its own worker thread (``tasks.TaskRunner``); an edit cancels the running jobs and, after a
short pause, starts new ones. Each is priced first (``view_model.cost``, milliseconds): one
above the window's prompt limits (worker.PROMPT_SECONDS, PROMPT_BYTES) is not started; its cell
says what it would take, and a click on the cell starts it. Applying is one undo step
(``apply_helper``).
"""
from __future__ import annotations

import html
from collections.abc import Callable

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QCloseEvent, QColor, QShowEvent, QUndoStack
from PySide6.QtWidgets import (QAbstractItemView, QButtonGroup, QDialog, QDialogButtonBox, QFormLayout,
                               QGroupBox, QHBoxLayout, QHeaderView, QLabel, QLineEdit, QRadioButton,
                               QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget)

from ..accounting.core.values import MAX_GROUP
from ..engine.view_model import compute, cost
from ..document.model import Document, RowSpec
from .dpsgd_rows import (HELPER_KINDS, LABELS, MAX_DATASET, SCHEME_TEXT, SCHEME_TIPS, SCHEME_TITLES, SCHEMES,
                         SHUFFLED_KIND, dpsgd_row, dpsgd_schedule, initial_for_row, merged_row,
                         outcome_text, scheme_relation, scheme_request, settings_for_row,
                         settings_for_shuffled, shuffled_schedule, unavailable_text)
from .fmt import fmt, fmt_count
from .targets import NEIGHBOURING, check_group_text
from .tasks import TaskRunner
from .undo import Editor
from .widgets import WARN_COLOR, ErrorLabel, field_value, fill, mark
from .worker import PROMPT_BYTES, PROMPT_SECONDS

__all__ = ["DpSgdDialog", "apply_helper", "HELPER_KINDS", "MAX_DATASET", "SCHEMES", "SHUFFLED_KIND",
           "dpsgd_row", "dpsgd_schedule", "initial_for_row", "settings_for_row", "settings_for_shuffled",
           "shuffled_schedule"]

#: after an edit, the comparison starts once typing has paused this long
DEBOUNCE_MS = 400
GREY_TEXT = "#666"
FIELD_NAMES = (("dataset", "dataset size"), ("batch", "batch size"), ("epochs", "epochs"),
               ("sigma", "sigma"))


def apply_helper(doc: Document, stack: QUndoStack, at: int | None, new: RowSpec,
                 relation: tuple[str, int] | None, insert: Callable[[RowSpec], None]) -> bool:
    """Put the helper's row into row ``at`` (a helper row; None: a new row through ``insert``)
    and set the document's relation: one undo step. False if nothing changed."""
    editor = Editor(doc, stack)
    rel_changes = relation is not None and tuple(relation) != (doc.neighbouring, doc.group_size)
    old = doc.row(at) if at is not None else None
    row = merged_row(old, new) if old is not None else new
    row_changes = old is None or row != old
    if not rel_changes and not row_changes:
        return False
    macro = rel_changes and row_changes
    if macro:
        stack.beginMacro("DP-SGD helper")
    try:
        if rel_changes:
            editor.set_relation(*relation)  # type: ignore[misc]
        if row_changes:
            if at is not None:
                editor.replace(at, row, "DP-SGD helper on row")
            else:
                insert(row)
    finally:
        if macro:
            stack.endMacro()
    return True


class DpSgdDialog(QDialog):
    """Asks for N, B, epochs, noise, how batches are formed and who is protected; shows the
    certified ε of each scheme side by side. ``row()`` is the resulting RowSpec, ``relation()``
    the (neighbouring, group size) the document gets."""

    #: a scheme's cell changed (its answer, a failure or a reason it cannot be computed)
    comparison_updated = Signal(str)
    #: every scheme has answered for the current inputs
    comparison_finished = Signal()
    #: the user asked for the training-configuration translator instead (training_dialog.py)
    framework_requested = Signal()

    FIELDS = (("dataset", "Dataset size N", "records", "Number of records in the training set"),
              ("batch", "Batch size B", "records per step",
               "Records per step: exactly B with fixed-size batches and (except maybe the last) with "
               "shuffled batches, B on average with Poisson sampling"),
              ("epochs", "Epochs", "passes over the data",
               "Number of passes over the training set (whole epochs with shuffled batches)"),
              ("sigma", "Noise multiplier σ", "× clipping norm",
               "Standard deviation of the Gaussian noise divided by the clipping norm"),
              ("max_batch", "Max batch", "records (truncated Poisson)",
               "Truncated Poisson only: the most records a step keeps (a larger Poisson batch is cut to "
               "a random subset of this size)"))

    def __init__(self, parent: QWidget | None = None, initial: dict | None = None,
                 target: str = "a new row", doc: Document | None = None,
                 compute_fn: Callable | None = None, cost_fn: Callable | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("DP-SGD helper")
        self.setMinimumWidth(640)
        self._doc = doc if doc is not None else Document()
        #: the engine's compute (tests inject a fake)
        self._compute = compute_fn or compute
        #: the engine's cost estimate of a request (tests inject a fake)
        self._cost = cost_fn or cost
        init = {"dataset": 60000, "batch": 256, "epochs": 60, "sigma": 1.1, **(initial or {})}
        init.setdefault("max_batch", 2 * init["batch"] if isinstance(init.get("batch"), int) else 512)
        self._sensitivity = init.get("sensitivity", 1.0)
        self._closed = False
        lay = QVBoxLayout(self)
        self._build_intro(lay, initial or {})
        self._build_fields(lay, init)
        self._build_schemes(lay, init)
        self._build_who(lay, init)
        self._build_notes(lay)
        self._build_comparison(lay)
        self._build_buttons(lay, target)
        self._build_runners()
        self._rows: dict[str, RowSpec | None] = {}
        self._errors: dict[str, str | None] = {}
        self._pending: set[str] = set()
        #: schemes priced above the prompt limits, not started: scheme -> their request
        self._held: dict[str, object] = {}
        self._answers: dict[str, str] = {}
        self._group_error: str | None = None
        self._update()

    # ------------------------------------------------------------ building the dialog
    def _build_intro(self, lay: QVBoxLayout, initial: dict) -> None:
        """The introduction, and what the helper asks for instead of guessing (``ask``)."""
        intro = QLabel("Describe the training run: the helper fills in the row and shows what each way "
                       "of forming batches certifies, before anything changes.")
        intro.setWordWrap(True)
        lay.addWidget(intro)
        #: what the helper could not derive from the row (it asks instead of guessing)
        self.ask = QLabel("")
        self.ask.setObjectName("dpsgd_ask")
        self.ask.setWordWrap(True)
        self.ask.setStyleSheet(f"color: {WARN_COLOR};")
        if "dataset" in initial and initial.get("dataset") is None:
            self.ask.setText("The row gives the sampling rate q and the number of steps, not the dataset: "
                             "enter the dataset size N and the batch size B (B / N = q).")
        self.ask.setVisible(bool(self.ask.text()))
        lay.addWidget(self.ask)

    def _build_fields(self, lay: QVBoxLayout, init: dict) -> None:
        """The training run's numbers: dataset size, batch size, epochs, noise (``fields``)."""
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

    def _build_schemes(self, lay: QVBoxLayout, init: dict) -> None:
        """"How are batches formed?": one radio button per scheme (``scheme_buttons``)."""
        batches = QGroupBox("How are batches formed?")
        blay = QVBoxLayout(batches)
        self.scheme_group = QButtonGroup(self)
        self.scheme_buttons: dict[str, QRadioButton] = {}
        for i, scheme in enumerate(SCHEMES):
            b = QRadioButton(SCHEME_TEXT[scheme])
            b.setObjectName(f"dpsgd_scheme_{scheme}")
            b.setToolTip(SCHEME_TIPS[scheme])
            self.scheme_group.addButton(b, i)
            self.scheme_buttons[scheme] = b
            blay.addWidget(b)
        start = init.get("scheme", "poisson")
        self.scheme_buttons[start if start in SCHEMES else "poisson"].setChecked(True)
        self.scheme_group.idToggled.connect(lambda _id, on: on and self._update())
        lay.addWidget(batches)

    def _build_who(self, lay: QVBoxLayout, init: dict) -> None:
        """"Who is protected?": one record, or a user with up to k records (``group``)."""
        who = QGroupBox("Who is protected?")
        wlay = QHBoxLayout(who)
        self.one_record = QRadioButton("One record")
        self.one_record.setObjectName("dpsgd_one_record")
        self.one_record.setToolTip("The guarantee covers any single record (records per person = 1).")
        self.user = QRadioButton("A user with up to")
        self.user.setObjectName("dpsgd_user")
        self.user.setToolTip("User-level (group) privacy: the guarantee covers everyone who contributes up "
                             "to k records, all of them changed at once. Sets the Targets' records per "
                             "person.")
        self.group = QLineEdit(str(init.get("group_size", 10)))
        self.group.setObjectName("dpsgd_group_size")
        self.group.setMaximumWidth(80)
        self._group_tip = f"k: records one person may contribute, a whole number from 1 to {MAX_GROUP}"
        self.group.setToolTip(self._group_tip)
        who_group = QButtonGroup(self)
        who_group.addButton(self.one_record)
        who_group.addButton(self.user)
        (self.user if init.get("group_size", 1) > 1 else self.one_record).setChecked(True)
        self.user.toggled.connect(self._update)
        self.group.textChanged.connect(self._update)
        wlay.addWidget(self.one_record)
        wlay.addSpacing(16)
        wlay.addWidget(self.user)
        wlay.addWidget(self.group)
        wlay.addWidget(QLabel("records"))
        wlay.addStretch(1)
        lay.addWidget(who)

    def _build_notes(self, lay: QVBoxLayout) -> None:
        """The note on the neighbouring relation and the summary of the resulting row."""
        self.relation_note = QLabel()
        self.relation_note.setObjectName("dpsgd_relation_note")
        self.relation_note.setWordWrap(True)
        lay.addWidget(self.relation_note)
        self.summary = QLabel()
        self.summary.setObjectName("dpsgd_summary")
        self.summary.setWordWrap(True)
        lay.addWidget(self.summary)

    def _build_comparison(self, lay: QVBoxLayout) -> None:
        """The comparison: each scheme's certified ε side by side (``table``), with its notes."""
        self.compare_title = QLabel()
        self.compare_title.setWordWrap(True)
        lay.addWidget(self.compare_title)
        self.table = QTableWidget(len(SCHEMES), 3)
        self.table.setObjectName("dpsgd_comparison")
        self.table.setHorizontalHeaderLabels(["Batches", "ε at δ", "Guarantee for"])
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.table.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.table.setWordWrap(True)
        hh = self.table.horizontalHeader()
        hh.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        hh.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        hh.setSectionResizeMode(2, QHeaderView.ResizeMode.ResizeToContents)
        self.table.cellClicked.connect(self._cell_clicked)
        for r, scheme in enumerate(SCHEMES):
            item = QTableWidgetItem(SCHEME_TITLES[scheme])
            item.setToolTip(SCHEME_TEXT[scheme])
            self.table.setItem(r, 0, item)
            self.table.setItem(r, 1, QTableWidgetItem("…"))
            self.table.setItem(r, 2, QTableWidgetItem(""))
        lay.addWidget(self.table)
        self.compare_note = QLabel("Shuffled batches have no tight accountant: the true ε lies between a "
                                   "proven lower bound (an attack, Chua et al. 2024) and the certified "
                                   "upper bound. Each number holds only for its own way of forming "
                                   "batches.")
        self.compare_note.setWordWrap(True)
        self.compare_note.setStyleSheet("color: #555;")
        lay.addWidget(self.compare_note)

    def _build_buttons(self, lay: QVBoxLayout, target: str) -> None:
        """The error line, then "Apply to <target>" and Cancel (``buttons``)."""
        self.error_label = ErrorLabel()
        lay.addWidget(self.error_label)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok
                                        | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setText(f"Apply to {target}")
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        # a framework's own settings (Opacus, jax_privacy, ...): the translator's dialog instead
        framework = self.buttons.addButton("From a framework's settings…", QDialogButtonBox.ButtonRole.ResetRole)
        framework.setToolTip("Type the settings as your framework has them (accumulation, microbatches, "
                             "adaptive clipping, sampler) and see every conversion and pitfall")
        framework.clicked.connect(self._from_framework)
        lay.addWidget(self.buttons)

    def _build_runners(self) -> None:
        """One worker per scheme (``runners``) and the pause timer that starts them."""
        # the comparison: one worker per scheme, so that each answer shows as soon as it is ready
        self.runners: dict[str, TaskRunner] = {}
        for scheme in SCHEMES:
            runner = TaskRunner(f"prvgui-dpsgd-{scheme}", self)
            runner.done.connect(lambda result, s=scheme: self._answered(s, outcome_text(s, result), None))
            runner.failed.connect(lambda exc, s=scheme: self._answered(s, *unavailable_text(exc),
                                                                      failed=True))
            self.runners[scheme] = runner
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(DEBOUNCE_MS)
        self._timer.timeout.connect(self.compare_now)

    # ------------------------------------------------------------ what the dialog gives
    def values(self) -> dict[str, object]:
        return {k: field_value(e) for k, e in self.fields.items()}

    def scheme(self) -> str:
        return SCHEMES[max(self.scheme_group.checkedId(), 0)]

    def set_scheme(self, scheme: str) -> None:
        self.scheme_buttons[scheme].setChecked(True)

    def group_size(self) -> int | None:
        """Records per person the dialog asks for (None while the typed k is invalid)."""
        if not self.user.isChecked():
            return 1
        value, _ = check_group_text(self.group.text())
        return value

    def relation(self) -> tuple[str, int] | None:
        """(neighbouring, group size) the document gets on Apply (None while invalid)."""
        k = self.group_size()
        if k is None:
            return None
        rel = scheme_relation(self.scheme(), self._doc.neighbouring, k)
        return rel.neighbouring.value, rel.group_size

    def _from_framework(self) -> None:
        self.framework_requested.emit()
        self.reject()

    def row(self) -> RowSpec | None:
        """The row for the typed values and the chosen scheme (None while they are invalid)."""
        if self._group_error is not None:
            return None
        return self._rows.get(self.scheme())

    def answers(self) -> dict[str, str]:
        """Each scheme's cell text in the comparison (for the current inputs)."""
        return {s: self.table.item(r, 1).text() for r, s in enumerate(SCHEMES)}

    def is_comparing(self) -> bool:
        """True while a scheme's answer is awaited (never after ``shutdown``)."""
        return not self._closed and (bool(self._pending) or self._timer.isActive())

    # ------------------------------------------------------------ inputs
    def _update(self) -> None:
        v = self.values()
        self._rows, self._errors = {}, {}
        for scheme in SCHEMES:
            try:
                self._rows[scheme] = dpsgd_row(scheme, v, self._sensitivity)
                self._errors[scheme] = None
            except ValueError as exc:
                self._rows[scheme] = None
                self._errors[scheme] = str(exc)
        self.group.setEnabled(self.user.isChecked())
        _, self._group_error = check_group_text(self.group.text()) if self.user.isChecked() else (None, None)
        mark(self.group, self._group_error, self._group_tip)
        chosen = self.scheme()
        err = self._group_error or self._errors[chosen]
        field = _field_of(self._errors[chosen]) if self._errors[chosen] and not self._group_error else None
        for key, edit in self.fields.items():
            mark(edit, err if key == field else None, self._tips[key])
        self.error_label.show_error(err)
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setEnabled(err is None)
        self._show_summary(chosen, v)
        self._show_relation(chosen)
        self._mark_chosen(chosen)
        self._start_comparison()

    def _show_summary(self, scheme: str, v: dict) -> None:
        row = self._rows.get(scheme)
        if row is None:
            self.summary.setText("The row: …")
        elif scheme == "shuffled":
            self.summary.setText(f"The row: Shuffled Gaussian, T = ⌈N / B⌉ = "
                                 f"{fmt_count(row.params['batches_per_epoch'])} batches per epoch, "
                                 f"count = {fmt_count(row.count)} epoch{'' if row.count == 1 else 's'}")
        elif scheme == "truncated":
            self.summary.setText(f"The row: Truncated Poisson Gaussian, q = B / N = {fmt(row.params['sampling_rate'], 6)}, "
                                 f"at most {fmt_count(row.params['max_batch'])} records per step, "
                                 f"count = ⌈epochs / q⌉ = {fmt_count(row.count)} steps")
        elif scheme == "balls_in_bins":
            self.summary.setText(f"The row: Random allocation Gaussian, T = ⌈N / B⌉ = "
                                 f"{fmt_count(row.params['steps_per_epoch'])} steps per epoch, one per record, "
                                 f"count = {fmt_count(row.count)} epoch{'' if row.count == 1 else 's'}")
        else:
            how = "fixed-size" if scheme == "fixed_size" else "Poisson"
            self.summary.setText(f"The row: Subsampled Gaussian ({how} batches), "
                                 f"q = B / N = {fmt(row.params['sampling_rate'], 6)}, "
                                 f"count = ⌈epochs / q⌉ = {fmt_count(row.count)} steps")

    def _show_relation(self, scheme: str) -> None:
        k = self.group_size()
        now = NEIGHBOURING.get(self._doc.neighbouring, self._doc.neighbouring).lower()
        if scheme == "fixed_size" and self._doc.neighbouring != "replace_one":
            text = ("<b>Fixed-size batches are defined only under replace-one neighbouring</b> (a record "
                    "is swapped for another, the dataset size stays the same): applying sets the "
                    "composition's neighbouring from “" + html.escape(now)
                    + "” to “replace one record”, for every row.")
            style = f"color: {WARN_COLOR};"
        else:
            text = f"Neighbouring: {html.escape(now)} (as in the Targets)."
            style = "color: #555;"
        if k is not None and k != self._doc.group_size:
            text += f" Applying sets the records per person from {self._doc.group_size} to {k}."
        self.relation_note.setText(text)
        self.relation_note.setStyleSheet(style)

    def _mark_chosen(self, chosen: str) -> None:
        for r, scheme in enumerate(SCHEMES):
            for c in range(3):
                item = self.table.item(r, c)
                font = item.font()
                font.setBold(scheme == chosen)
                item.setFont(font)
            mark_ = "  ◀ chosen" if scheme == chosen else ""
            self.table.item(r, 0).setText(SCHEME_TITLES[scheme] + mark_)

    # ------------------------------------------------------------ the comparison
    def _start_comparison(self) -> None:
        """The inputs changed: drop the running jobs and start new ones after a pause."""
        if self._closed:
            return
        for runner in self.runners.values():
            runner.discard()
        self._pending = set()
        self._held = {}
        self._answers = {}
        t = self._doc.targets
        k = self.group_size()
        self.compare_title.setText(f"ε at δ = {fmt(t.delta)} of this training run alone (other rows not "
                                   f"included), certified by prvgui:")
        self.table.setHorizontalHeaderLabels(["Batches", f"ε at δ = {fmt(t.delta)}", "Guarantee for"])
        for r, scheme in enumerate(SCHEMES):
            rel = None if k is None else scheme_relation(scheme, self._doc.neighbouring, k)
            self.table.item(r, 2).setText(rel.describe() if rel is not None else "")
            reason = self._group_error or self._errors[scheme]
            cell = self.table.item(r, 1)
            cell.setText(f"— {_short(reason)}" if reason else "computing…")
            cell.setToolTip(reason or "")
            cell.setForeground(QColor(GREY_TEXT if reason else "#000"))
            if reason is None:
                self._pending.add(scheme)
        self._fit_table()
        if self._pending:
            self._timer.start()
        else:
            self._timer.stop()
            self.comparison_finished.emit()

    def _fit_table(self) -> None:
        """Rows as tall as their text; the table as tall as its rows (no scroll bar for three)."""
        self.table.resizeRowsToContents()
        height = self.table.horizontalHeader().height() + 2 * self.table.frameWidth()
        height += sum(self.table.rowHeight(r) for r in range(self.table.rowCount()))
        self.table.setFixedHeight(height)
        self._fit_height()

    def _fit_height(self) -> None:
        """Grow to the height the wrapped texts need (Qt does not for height-for-width layouts)."""
        want = self.layout().totalHeightForWidth(self.width()) if self.layout().hasHeightForWidth() \
            else self.sizeHint().height()
        if self.isVisible() and self.height() < want:
            self.resize(self.width(), want)

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self._fit_height()

    def compare_now(self) -> None:
        """Start the pending schemes' computations now (skipping the pause)."""
        self._timer.stop()
        if self._closed:
            return
        k = self.group_size()
        for scheme in SCHEMES:
            row = self._rows.get(scheme)
            if scheme not in self._pending or row is None or k is None:
                continue
            relation = scheme_relation(scheme, self._doc.neighbouring, k)
            request = scheme_request(row, relation, self._doc.targets)
            try:
                cost = self._cost(request)
            except Exception:  # noqa: BLE001 - the computation itself will say what is wrong
                cost = None
            if cost is not None and cost.exceeds(PROMPT_SECONDS, PROMPT_BYTES):
                self._hold(scheme, request, cost)
            else:
                self._run(scheme, request)
        if self._held and not self._pending:
            self.comparison_finished.emit()

    def _run(self, scheme: str, request) -> None:
        fn = self._compute
        self.runners[scheme].start(lambda progress, cancel, r=request: fn(r, progress=progress, cancel=cancel))

    def _hold(self, scheme: str, request, cost) -> None:
        """A costly scheme is not started: its cell says what it would take; a click starts it."""
        self._held[scheme] = request
        self._pending.discard(scheme)  # (not awaited: it waits for the user)
        cell = self.table.item(SCHEMES.index(scheme), 1)
        cell.setText(f"not computed: would take {cost.describe()} (click to compute)")
        cell.setToolTip(f"{cost.why}. Click to compute it anyway; a larger accuracy value (ε error) "
                        "in the Targets is quicker." if cost.why else "Click to compute it anyway.")
        cell.setForeground(QColor(WARN_COLOR))
        self._fit_table()

    def _cell_clicked(self, r: int, _column: int) -> None:
        scheme = SCHEMES[r] if 0 <= r < len(SCHEMES) else None
        request = self._held.pop(scheme, None)
        if request is None or self._closed:
            return
        cell = self.table.item(r, 1)
        cell.setText("computing…")
        cell.setToolTip("")
        cell.setForeground(QColor("#000"))
        self._pending.add(scheme)
        self._run(scheme, request)

    def held(self) -> tuple[str, ...]:
        """The schemes priced above the prompt limits and waiting for a click."""
        return tuple(self._held)

    def _answered(self, scheme: str, text: str, tip: str | None = None, failed: bool = False) -> None:
        if scheme not in self._pending:
            return
        self._pending.discard(scheme)
        r = SCHEMES.index(scheme)
        cell = self.table.item(r, 1)
        cell.setText(text)
        cell.setToolTip(tip or text)
        cell.setForeground(QColor(GREY_TEXT if failed else "#000"))
        self._answers[scheme] = text
        self._fit_table()
        self.comparison_updated.emit(scheme)
        if not self._pending:
            self.comparison_finished.emit()

    # ------------------------------------------------------------ closing
    def shutdown(self) -> None:
        """Stop the comparison's worker threads and wait for them (idempotent)."""
        if self._closed:
            return
        self._closed = True
        self._timer.stop()
        for runner in self.runners.values():
            runner.shutdown()

    def done(self, result: int) -> None:  # noqa: D401 - Qt override
        self.shutdown()
        super().done(result)

    def closeEvent(self, event: QCloseEvent) -> None:  # closing a dialog never shown skips done()
        self.shutdown()
        super().closeEvent(event)


def _short(message: str) -> str:
    """A reason cut to its first clause for a table cell (the tooltip has it all)."""
    for cut in (" (", ", got "):
        if cut in message:
            message = message[:message.index(cut)]
    return message


def _field_of(message: str) -> str:
    """The field a schedule message is about: the one whose label starts it (default: epochs)."""
    return next((k for k, label in LABELS.items() if message.startswith(label)), "epochs")
