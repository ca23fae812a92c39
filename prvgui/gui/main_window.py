"""The main window: composition editor and targets on the left, results and plots on the right.

Every document event makes the shown result stale and restarts the debounced background
computation (``Recomputer``); the request is a snapshot of a document that validated, so
invalid input never reaches the engine.
"""
from __future__ import annotations

from dataclasses import replace

from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QCloseEvent, QKeySequence, QUndoStack
from PySide6.QtWidgets import (QApplication, QLineEdit, QMainWindow, QMessageBox, QSplitter, QTabWidget,
                               QVBoxLayout, QWidget)

from ..engine.view_model import Request
from ..document.model import Document, RowSpec
from .budget_view import BUDGET_TAB_TIP, BudgetView, scrolling
from .calibrate_dialog import CalibrateDialog
from .compare import Compare
from .shown import Shown
from .pin import Pin
from .compute_view import ComputeView
from .dpsgd_helper import HELPER_KINDS, DpSgdDialog, apply_helper, initial_for_row
from .editor import CompositionEditor
from .files import FileController, settings
from .import_dialog import import_composition
from .workload_panel import SharesView, below, import_workload
from .plots import TABS, StepsTab
from .report_export import ReportExport
from .results_panel import ResultsPanel
from .risk_panel import RiskPanel
from .audit_panel import AuditPanel
from .steps_choice import StepsChoice
from .targets import TargetsWidget
from .undo import Editor
from .worker import InputError

PROFILE_POINTS, TRADEOFF_POINTS, STEPS_POINTS = 100, 101, 40
EXPORT_FILTERS = {"png": "PNG image (*.png)", "svg": "SVG drawing (*.svg)", "csv": "CSV table (*.csv)"}
GUIDE = """<p><b>Build a composition</b> in the table: <i>Add</i> a mechanism, then edit its
parameters in the form below the table (hover over a field for what it means; a list opens one entry
per line with <i>⋯</i> or fills from a CSV file). <i>Count</i> is how many times it runs. For DP-SGD
use the <i>DP-SGD helper</i>: it asks how batches are formed (Poisson, fixed size, shuffled) and
shows what each certifies. <i>Targets</i> set δ, the accuracy, the neighbouring relation and the
records per person (user-level privacy).</p>
<p><b>Read the result</b>: ε ≤ the headline is certified at the target δ (by the PRV accountant, or
by another accountant when it is tighter, which the headline names); the bracket's lower end and
estimate show how tight it is. Where a row's pair is an upper bound only (shuffled or fixed-size
batches, zCDP, the exponential mechanism) a proven lower bound says where the truth lies. RDP is a
looser upper bound; GDP is an approximation that may under-report.</p>
<p><b>The tabs</b>: the privacy profile δ(ε), the tradeoff curve, ε against the steps of the row you
pick (<i>Vary:</i>), the privacy loss distribution, the attack risk and noise, and a privacy
budget. <i>Pin as A</i> keeps a result to compare with the next; <i>Compute ▸ Calibrate selected
row</i> solves a parameter for a target ε or attack risk.</p>
<p>Every edit recomputes in the background; invalid values are marked red (Ctrl+Z in such a field
undoes its typing) and nothing is computed until they are fixed; a part that cannot be computed says
why in its place. Plots export as PNG, SVG and CSV; <i>File ▸ Export report</i> writes HTML or PDF.</p>"""


class MainWindow(QMainWindow):
    def __init__(self, persist: bool = True, compute_fn: Callable | None = None,
                 cost_fn: Callable | None = None) -> None:
        """``compute_fn`` and ``cost_fn`` replace the engine's ``compute`` and ``estimate``
        (tests drive the window with fakes)."""
        super().__init__()
        self.persist = persist
        self.compute_fn = compute_fn
        self.doc = Document()
        self.stack = QUndoStack(self)
        self.editor = Editor(self.doc, self.stack)
        #: the answer on show and the document snapshot it answers (ComputeView sets it)
        self.shown = Shown(self)
        self.composition = CompositionEditor(self.doc, self.editor)
        self.targets = TargetsWidget(self.doc, self.editor)
        self.results = ResultsPanel()
        self.tabs = QTabWidget()
        self.tabs.setObjectName("plots")
        # the titles would otherwise set the plots' minimum width (about 610 px) and push
        # the window wider than a laptop screen (the Budget view, once a dock, made it worse)
        self.tabs.setUsesScrollButtons(True)
        # whole titles (no "Bu…" at 1024 px): what does not fit scrolls
        self.tabs.tabBar().setElideMode(Qt.TextElideMode.ElideNone)
        self.plots = {}
        for title, cls in TABS:
            tab = cls()
            tab.export_requested.connect(lambda f, t=tab: self.export_plot(t, f))
            self.plots[tab.kind] = tab
            self.tabs.setTabToolTip(self.tabs.addTab(tab, title), tab.tip)
        steps_tab: StepsTab = self.plots["steps"]  # type: ignore[assignment]
        self.steps = StepsChoice(self.doc, steps_tab.row_choice)
        self.files = FileController(self, self.doc, self.stack, persist)
        self.files.check_inputs = self.targets.error
        self.budget = BudgetView(self.doc)
        self.shares = SharesView(self.doc)  # (the Budget tab, under the budget)
        self.risk = RiskPanel()
        self.audit = AuditPanel()
        self._build_layout()
        self.computing = ComputeView(self, self._make_request, self.statusBar(), self.results, self.plots,
                                     self.shown, self.doc, self.editor.set_relation, compute_fn, cost_fn)
        self.recomputer = self.computing.recomputer
        # the status bar's widgets, for the commands below and the tests
        self.status, self.progress = self.computing.status, self.computing.progress
        self.cancel_button = self.computing.cancel_button
        #: the pinned result "A" (compare.py; ``pinned``)
        self.compare = Compare(self, self.results, self.plots, self.risk, self.doc, self.shown)
        self.report_export = ReportExport(self, self.recomputer, self.shown, self.results, self.files,
                                          self.computing.set_status)
        self.report_export.pinned = self.compare.for_report  # the report shows A too
        self._build_menus()
        self._connect()
        self._update_title()
        self._restore()
        self.results.clear("The composition is empty: add a mechanism with “Add”, "
                           "or open an example from File ▸ Examples.")
        self._set_status("Add a mechanism to start, or open an example from File ▸ Examples.")

    # ------------------------------------------------------------ construction
    def _build_layout(self) -> None:
        left = QWidget()
        lay = QVBoxLayout(left)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addWidget(self.composition, 1)
        lay.addWidget(self.targets)
        self.right = QSplitter(Qt.Orientation.Vertical)
        self.right.addWidget(self.results)
        self.right.addWidget(self.tabs)
        self.right.setStretchFactor(1, 1)
        self.right.setSizes([300, 500])
        self.split = QSplitter(Qt.Orientation.Horizontal)
        self.split.addWidget(left)
        self.split.addWidget(self.right)
        # both sides give up width on a narrow screen (2 : 3), so that at 1024 px the results
        # table keeps room for its columns; the left side stops at its minimum
        self.split.setStretchFactor(0, 2)
        self.split.setStretchFactor(1, 3)
        self.split.setSizes([490, 790])
        self.setCentralWidget(self.split)
        # a tab beside the plots, not a dock: a dock took its width from the results table,
        # whose δ column and notes then hid behind a scrollbar at 1280 px
        self.risk_tab = scrolling(self.risk)
        self.tabs.setTabToolTip(self.tabs.addTab(self.risk_tab, "Risk && noise"), self.risk.tip)
        self.audit_tab = scrolling(self.audit)
        self.tabs.setTabToolTip(self.tabs.addTab(self.audit_tab, "Audit"), self.audit.tip)
        self.budget_tab = scrolling(below(self.budget, self.shares))
        self.tabs.setTabToolTip(self.tabs.addTab(self.budget_tab, "Budget"), BUDGET_TAB_TIP)
        from .sweep_tab import SweepTab  # (Dask, if installed, is imported only when a sweep runs)
        self.sweep = SweepTab(self.doc)
        self.tabs.setTabToolTip(self.tabs.addTab(self.sweep, "Sweep"), self.sweep.tip)
        self.resize(1280, 800)

    def _build_menus(self) -> None:
        mb = self.menuBar()
        f = mb.addMenu("&File")
        f.addAction("&New", QKeySequence.StandardKey.New, self.files.new)
        f.addAction("&Open…", QKeySequence.StandardKey.Open, lambda: self.files.open())
        self.files.fill_recent_menu(f.addMenu("Open &Recent"))
        self.files.fill_examples_menu(f.addMenu("&Examples"))
        self.import_action = f.addAction("&Import…", lambda: import_composition(self.files, self))
        self.import_workload_action = f.addAction("Import &workload (CSV)…", lambda: import_workload(
            self.files, self.shares, self, show=self.show_budget))
        f.addSeparator()
        f.addAction("&Save", QKeySequence.StandardKey.Save, self.files.save)
        f.addAction("Save &As…", QKeySequence.StandardKey.SaveAs, lambda: self.files.save_as())
        f.addSeparator()
        export = f.addMenu("&Export current plot")
        for fmt_name in ("png", "svg", "csv"):
            export.addAction(f"{fmt_name.upper()}…",
                             lambda x=fmt_name: self.export_plot(self.current_plot(), x))
        f.addAction("Export &report (HTML or PDF)…", lambda: self.report_export.start())
        f.addSeparator()
        f.addAction("&Quit", QKeySequence.StandardKey.Quit, self.close)
        e = mb.addMenu("&Edit")
        undo = self.stack.createUndoAction(self, "&Undo")
        undo.setShortcut(QKeySequence.StandardKey.Undo)
        undo.triggered.disconnect()  # field first: see undo_here
        undo.triggered.connect(self.undo_here)
        redo = self.stack.createRedoAction(self, "&Redo")
        redo.setShortcut(QKeySequence.StandardKey.Redo)
        e.addAction(undo)
        e.addAction(redo)
        e.addSeparator()
        e.addMenu(self.composition.add_menu)
        for name in ("duplicate", "delete", "up", "down", "dpsgd"):
            e.addAction(self.composition.actions_[name])
        e.addSeparator()
        e.addAction("&Copy results", QKeySequence("Ctrl+Shift+C"), self.copy_results)
        e.addAction("Copy as &Markdown", lambda: self.results.copy_as("markdown"))
        e.addAction("Copy as La&TeX", lambda: self.results.copy_as("latex"))
        e.addSeparator()
        self.pin_action = e.addAction("&Pin result as A", QKeySequence("Ctrl+P"), self.compare.pin)
        self.unpin_action = e.addAction("U&npin A", self.compare.unpin)
        self.compare.actions_changed.connect(self._pin_actions)
        self._pin_actions(self.compare.can_pin(), self.compare.pinned is not None)
        c = mb.addMenu("&Compute")
        c.addAction("&Recompute now", QKeySequence("F5"), self.recomputer.run_now)
        c.addAction("&Cancel", self.recomputer.cancel)
        c.addSeparator()
        c.addAction("Ca&librate selected row…", QKeySequence("Ctrl+L"), self.open_calibrate)
        c.addAction("&Budget view", self.show_budget)
        c.addAction("From a &training configuration…", self.open_training_dialog)
        self.help_menu = mb.addMenu("&Help")
        self.help_menu.addAction("Quick &guide", QKeySequence.StandardKey.HelpContents, self.show_guide)
        self.help_menu.addSeparator()
        about = self.help_menu.addAction("&About prvgui", self.show_about)
        about.setMenuRole(QAction.MenuRole.AboutRole)

    def _connect(self) -> None:
        self.doc.subscribe(self._on_document)
        self.targets.validity_changed.connect(self._inputs_changed)
        self.steps.changed.connect(self._inputs_changed)
        self.composition.actions_["dpsgd"].triggered.connect(self.open_dpsgd_helper)
        self.stack.cleanChanged.connect(self._update_title)
        self.files.path_changed.connect(self._update_title)
        self.results.result_shown.connect(self._show_risk)
        self.results.stale_changed.connect(self.risk.set_stale)
        self.results.cleared.connect(self.risk.clear)
        self.results.result_shown.connect(self.audit.show_result)
        self.results.cleared.connect(self.audit.clear)
        self.results.copied.connect(lambda name: self._set_status(f"Results copied to the clipboard as {name}."))

    # ------------------------------------------------------------ computing
    def _make_request(self) -> tuple[Request, Document]:
        if (err := self.targets.error()) is not None:
            raise InputError(f"fix the targets: {err}")
        errors = self.doc.errors()
        if errors:
            i, msg = errors[0]
            raise InputError(f"fix row {i + 1}: {msg}")
        if not len(self.doc):
            raise InputError("the composition is empty: add a mechanism with “Add”")
        try:
            rows = tuple(self.doc.engine_rows())
        except ValueError as exc:
            raise InputError(f"fix {exc}") from None
        t = self.doc.targets
        snapshot = Document(list(self.doc.rows), self.doc.neighbouring, t, self.doc.group_size, self.doc.tuning)
        request = Request(rows, t.delta, t.epsilon, t.eps_error, self.doc.neighbouring, self.doc.group_size,
                          profile_points=PROFILE_POINTS, tradeoff_points=TRADEOFF_POINTS,
                          steps_row=self.steps.row(), steps_points=STEPS_POINTS, want_pld=True,
                          tuning=self.doc.tuning)
        return request, snapshot

    def _on_document(self, what: str, arg: object) -> None:
        self._inputs_changed()

    def _inputs_changed(self) -> None:
        self.computing.inputs_changed()

    def _set_status(self, text: str, error: bool = False) -> None:
        self.computing.set_status(text, error)

    def _show_risk(self, result) -> None:
        doc = self.last_doc
        names = None if doc is None else [
            f"row {i + 1} ({spec.label or spec.title})" for i, spec in enumerate(doc.rows)]
        self.risk.set_row_names(names)
        self.risk.show_result(result)

    def _pin_actions(self, can_pin: bool, pinned: bool) -> None:
        self.pin_action.setEnabled(can_pin)
        self.unpin_action.setEnabled(pinned)

    @property
    def last_result(self):
        """The engine Result on show (None: nothing computed yet)."""
        return self.shown.result

    @property
    def last_doc(self) -> Document | None:
        """The document snapshot ``last_result`` answers."""
        return self.shown.doc

    @property
    def pinned(self) -> Pin | None:
        """The pinned result as ``(label, Result)`` (a ``Pin``), or None."""
        return self.compare.pinned

    # ------------------------------------------------------------ commands
    def current_plot(self):
        """The plot tab on show (None when the Budget tab is)."""
        tab = self.tabs.currentWidget()
        return tab if tab in self.plots.values() else None

    def show_budget(self) -> None:
        self.tabs.setCurrentWidget(self.budget_tab)

    def export_plot(self, tab, fmt_name: str) -> bool:
        if tab is None or tab.result is None:
            why = "There is no result to export yet." if tab is not None else \
                "Choose a plot tab first: the Budget tab has no plot."
            self.files.show_error("Nothing to export", why)
            return False
        path = self.files.ask_save_path(f"Export {self.tabs.tabText(self.tabs.indexOf(tab))}",
                                        f"{tab.kind}.{fmt_name}", EXPORT_FILTERS[fmt_name])
        if path is None:
            return False
        try:
            if fmt_name == "csv":
                tab.export_csv(path, self.last_doc)
            else:
                getattr(tab, f"export_{fmt_name}")(path)
        except (OSError, ValueError) as exc:
            self.files.show_error("Export failed", f"{path}: {getattr(exc, 'strerror', None) or exc}")
            return False
        self.files.remember_folder(path)
        self._set_status(f"Exported {path}")
        return True

    def copy_results(self) -> None:
        """The results as text, then the structured privacy statement (report/statement.py)."""
        text = self.results.as_text()
        if text and self.results.result is not None:
            from ..report.statement import statement
            text += "\n" + statement(self.results.result, self.doc).as_text() + "\n"
        if text:
            QApplication.clipboard().setText(text)
            self._set_status("Results copied to the clipboard.")

    def open_training_dialog(self) -> None:
        """A framework's training settings to rows (training_dialog.py); Add rows appends them
        and sets the neighbouring relation and delta, one undo step."""
        from .training_dialog import TrainingDialog
        dialog = TrainingDialog(self)
        dialog.finished.connect(dialog.deleteLater)
        dialog.accepted.connect(lambda: self.apply_training(dialog.translation))
        dialog.open()

    def apply_training(self, translation) -> None:
        comp = getattr(translation, "composition", None)
        if comp is None:
            return
        editor = self.editor
        self.stack.beginMacro("Rows from a training configuration")
        try:
            editor.set_relation(comp.neighbouring, self.doc.group_size)
            editor.set_targets(replace(self.doc.targets, delta=comp.targets.delta))
            for row in comp.rows:
                editor.insert(len(self.doc.rows), row, "Add row")
        finally:
            self.stack.endMacro()
        self._set_status(f"Added {len(comp.rows)} row(s) from the training configuration.")

    def open_calibrate(self) -> CalibrateDialog | None:
        i = self.composition.current_row()
        if i is None:
            self._set_status("Select the row to calibrate first.", error=True)
            return None
        dialog = CalibrateDialog(self.doc, i, self.doc.targets, self.stack, self)
        dialog.finished.connect(dialog.deleteLater)  # done() has already stopped its worker
        dialog.open()  # window-modal, returns at once
        return dialog

    def open_dpsgd_helper(self) -> None:
        """On a DP-SGD row (subsampled or shuffled Gaussian): its schedule and σ; how batches are
        formed and who is protected, with each scheme's ε side by side."""
        i = self.composition.current_row()
        row = self.doc.row(i) if i is not None else None
        on_row = row is not None and row.kind in HELPER_KINDS
        initial = initial_for_row(row if on_row else None, self._dpsgd_settings(), self.doc.group_size)
        dialog = DpSgdDialog(self, initial, f"row {i + 1}" if on_row else "a new row", self.doc,
                             self.compute_fn)
        wants_framework = []
        dialog.framework_requested.connect(lambda: wants_framework.append(True))
        accepted = dialog.exec()
        dialog.shutdown()  # its comparison's workers (done() has stopped them unless exec was bypassed)
        if accepted and dialog.row() is not None:
            self.apply_dpsgd(dialog.row(), dialog.values(), dialog.relation())
        elif wants_framework:
            self.open_training_dialog()

    def apply_dpsgd(self, new: RowSpec, values: dict, relation: tuple[str, int] | None = None) -> None:
        """Put a DP-SGD row from the helper into the selected DP-SGD row (or a new row) and set the
        document's relation: one undo step."""
        i = self.composition.current_row()
        row = self.doc.row(i) if i is not None else None
        at = i if row is not None and row.kind in HELPER_KINDS else None
        apply_helper(self.doc, self.stack, at, new, relation, self.composition.insert_row)
        if self.persist:
            s = settings()
            for key in ("dataset", "batch", "epochs"):
                s.setValue(f"dpsgd/{key}", values.get(key))

    def undo_here(self) -> None:
        """Edit ▸ Undo: in a field holding text the document did not take (invalid, marked red),
        the field's own typing is undone first; otherwise the document's last edit."""
        field = QApplication.focusWidget()
        if isinstance(field, QLineEdit) and field.property("invalid") and field.isUndoAvailable():
            field.undo()
            return
        self.stack.undo()

    def _dpsgd_settings(self) -> dict:
        if not self.persist:
            return {}
        s = settings()
        out = {}
        for key in ("dataset", "batch", "epochs"):
            v = s.value(f"dpsgd/{key}")
            try:
                out[key] = float(v) if v is not None else None
            except (TypeError, ValueError):
                out[key] = None
        return out

    def show_guide(self) -> None:
        QMessageBox.information(self, "prvgui quick guide", GUIDE)

    def show_about(self) -> None:
        from .about import show_about
        show_about(self)

    # ------------------------------------------------------------ window state
    def _update_title(self) -> None:
        self.setWindowTitle(f"{self.files.display_name()}[*] — prvgui")
        self.setWindowModified(not self.stack.isClean())

    def _restore(self) -> None:
        if not self.persist:
            return
        s = settings()
        for key, fn in (("window/geometry", self.restoreGeometry), ("window/state", self.restoreState),
                        ("window/split", self.split.restoreState), ("window/right", self.right.restoreState)):
            value = s.value(key)
            if value is not None:
                fn(value)
        tab = s.value("window/tab")
        if tab is not None and str(tab).isdigit():
            self.tabs.setCurrentIndex(int(tab))

    def _save_state(self) -> None:
        if not self.persist:
            return
        s = settings()
        s.setValue("window/geometry", self.saveGeometry())
        s.setValue("window/state", self.saveState())
        s.setValue("window/split", self.split.saveState())
        s.setValue("window/right", self.right.saveState())
        s.setValue("window/tab", self.tabs.currentIndex())

    def shutdown(self) -> None:
        """Stop the worker threads and detach from the document (idempotent)."""
        for dialog in self.findChildren(CalibrateDialog) + self.findChildren(DpSgdDialog):
            dialog.shutdown()
        self.budget.shutdown()
        self.shares.shutdown()
        self.report_export.shutdown()
        self.sweep.shutdown()
        self.computing.stop()

    def closeEvent(self, event: QCloseEvent) -> None:
        if not self.files.maybe_save():
            event.ignore()
            return
        self._save_state()
        self.shutdown()
        event.accept()
