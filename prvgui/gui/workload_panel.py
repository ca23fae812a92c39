"""Workloads in the window: File ▸ Import workload (CSV)… and the Budget tab's table of each row's
share of the privacy cost, with the dominant rows marked.

Importing works as File ▸ Open does: unsaved changes are offered for saving first, a file that
cannot be read leaves the document untouched and shows the message naming the line and the
column, and the workload becomes an untitled composition (document/workload.py). The shares are
the engine's (engine/workload_view.py), computed on a worker thread (the last-resort currency,
each row's epsilon alone, composes every row); an edit marks them out of date. The question for
the file is a module attribute (``ask_path``) so that tests can answer it.
"""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtGui import QColor, QFont
from PySide6.QtWidgets import (QAbstractItemView, QFileDialog, QGroupBox, QHBoxLayout, QLabel, QPushButton,
                               QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget)

from ..document.composition import MAX_ROWS
from ..document.model import KIND_TITLES, Document
from ..document.workload import read_workload
from ..engine.workload_view import dominant_text, shares_view
from .files import FileController
from .fmt import fmt
from .tasks import TaskRunner, failure_text
from .widgets import ERROR_COLOR

FILTER = "CSV files (*.csv);;All files (*)"
COLUMNS = ("Row", "Label", "Kind", "Value", "Share", "")
#: the most rows the table lists (the largest shares, when there are more)
MAX_SHOWN = 500
DOMINANT_BACKGROUND = "#fff1c7"
TIP = ("Each row's share of the composition's privacy cost, in an additive currency (ρ-zCDP, else RDP at "
       "one order); the dominant rows (marked) make up at least 80% of it.")


class SharesView(QGroupBox):
    """The shares of the document's rows; ``compute()`` runs in the background."""

    #: the shares dict (engine/workload_view.py) of a finished computation
    shown = Signal(object)
    failed = Signal(str)
    #: after shown, failed or a cancellation
    run_finished = Signal()

    def __init__(self, doc: Document, parent: QWidget | None = None) -> None:
        super().__init__("Shares of the privacy cost (workload)", parent)
        self.setObjectName("shares")
        self.setToolTip(TIP)
        self.doc = doc
        self.shares: dict | None = None
        self._snapshot: tuple | None = None
        self._closed = False
        lay = QVBoxLayout(self)
        bar = QHBoxLayout()
        self.compute_button = QPushButton("Compute shares")
        self.compute_button.setObjectName("shares_compute")
        self.compute_button.setToolTip("Each row's share of the privacy cost at the target δ")
        self.status = QLabel("Press Compute shares (File ▸ Import workload computes them).")
        self.status.setObjectName("shares_status")
        self.status.setWordWrap(True)
        bar.addWidget(self.compute_button)
        bar.addWidget(self.status, 1)
        lay.addLayout(bar)
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setObjectName("shares_table")
        self.table.setHorizontalHeaderLabels(list(COLUMNS))
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.setMinimumHeight(160)
        lay.addWidget(self.table)
        self.notes = QLabel("")
        self.notes.setObjectName("shares_notes")
        self.notes.setWordWrap(True)
        self.notes.setStyleSheet("color: #555;")
        lay.addWidget(self.notes)
        self.runner = TaskRunner("prvgui-shares", self)
        self.runner.done.connect(self._on_done)
        self.runner.failed.connect(self._on_failed)
        self.runner.cancelled.connect(self.run_finished.emit)
        self.compute_button.clicked.connect(self.compute)
        doc.subscribe(self._on_document)

    def _inputs(self) -> tuple:
        t = self.doc.targets
        return self.doc.rows, self.doc.neighbouring, self.doc.group_size, t.delta, t.eps_error

    def _on_document(self, what: str, arg: object) -> None:
        if self.shares is not None and self._snapshot != self._inputs():
            self.status.setText("Out of date: the composition changed; Compute shares again.")
        if what == "reset":
            self.runner.discard()
            self.shares = None
            self.table.setRowCount(0)
            self.notes.setText("")
            self.status.setText("Press Compute shares.")

    def compute(self) -> bool:
        """Start computing the shares; False (with the reason shown) when the rows are not valid."""
        if self._closed:
            return False
        if not len(self.doc):
            self.status.setText("The composition is empty.")
            return False
        try:
            rows = self.doc.engine_rows()
        except ValueError as exc:
            self.status.setText(f"Fix {exc}")
            return False
        labels = [r.label for r in self.doc.rows]
        relation, t = self.doc.relation, self.doc.targets
        self._snapshot = self._inputs()
        self.status.setText("Computing…")
        self.runner.start(lambda progress, cancel: shares_view(rows, labels, relation, t.delta, t.eps_error,
                                                               cancel=cancel))
        return True

    @Slot(object)
    def _on_done(self, shares: dict) -> None:
        self.shares = shares
        self.status.setStyleSheet("")
        # (the table shows at most MAX_SHOWN rows, the largest shares: it marks the dominant ones
        # it shows)
        where = "marked" if len(shares["rows"]) <= MAX_SHOWN else f"marked among the {MAX_SHOWN} shown"
        self.status.setText(f"Shares of {shares['rows'][0]['currency'] if shares['rows'] else 'nothing'}; "
                            f"dominant: {dominant_text(shares['dominant'], len(shares['rows']), where)}.")
        self._fill(shares)
        if self._snapshot != self._inputs():
            self._on_document("change", None)
        self.shown.emit(shares)
        self.run_finished.emit()

    @Slot(object)
    def _on_failed(self, exc: object) -> None:
        message = failure_text(exc)
        self.status.setText(f"The shares could not be computed: {message}")
        self.status.setStyleSheet(f"color: {ERROR_COLOR};")
        self.failed.emit(message)
        self.run_finished.emit()

    def _fill(self, shares: dict) -> None:
        rows = shares["rows"]
        dominant = set(shares["dominant"])
        if len(rows) > MAX_SHOWN:
            keep = set(sorted(range(len(rows)), key=lambda i: -rows[i]["share"])[:MAX_SHOWN])
            rows = [r for i, r in enumerate(rows) if i in keep]
        self.table.setRowCount(len(rows))
        bold = QFont()
        bold.setBold(True)
        for k, r in enumerate(rows):
            mark = r["row"] in dominant
            cells = (str(r["row"]), r["label"], KIND_TITLES.get(r["kind"], r["kind"]), fmt(r["value"]), f"{100 * r['share']:.2f}%",
                     "dominant" if mark else "")
            for j, text in enumerate(cells):
                item = QTableWidgetItem(text)
                if j in (0, 3, 4):
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                if mark:
                    item.setFont(bold)
                    item.setBackground(QColor(DOMINANT_BACKGROUND))
                self.table.setItem(k, j, item)
        self.table.setHorizontalHeaderItem(3, QTableWidgetItem(rows[0]["currency"] if rows else "Value"))
        self.table.resizeColumnsToContents()
        more = (f"Showing the {MAX_SHOWN} largest shares of {len(shares['rows']):,} rows. "
                if len(shares["rows"]) > MAX_SHOWN else "")
        self.notes.setText(more + " ".join(shares["notes"]))

    def shutdown(self) -> None:
        """Cancel, stop the worker thread and wait for it; detach from the document (idempotent)."""
        if self._closed:
            return
        self._closed = True
        self.doc.unsubscribe(self._on_document)
        self.runner.shutdown()


def below(top: QWidget, bottom: QWidget) -> QWidget:
    """``top`` with ``bottom`` under it, in one widget (the Budget tab: the budget, then the shares)."""
    box = QWidget()
    lay = QVBoxLayout(box)
    lay.setContentsMargins(0, 0, 0, 0)
    lay.addWidget(top)
    lay.addWidget(bottom)
    return box


def _ask(files: FileController, parent: QWidget) -> str | None:
    path, _ = QFileDialog.getOpenFileName(parent, "Import workload (CSV)", files.last_folder(), FILTER)
    return path or None


#: (files, parent) -> a path or None; replaceable by tests
ask_path = _ask


def import_workload(files: FileController, shares: SharesView, parent: QWidget, path: str | None = None,
                    ask: bool = True, show=None) -> bool:
    """Read a workload CSV into the window as an untitled composition (asking for the file when
    ``path`` is None), then compute its shares and ``show()`` them; True if imported."""
    if ask and not files.maybe_save():
        return False
    if path is None:
        path = ask_path(files, parent)
        if path is None:
            return False
    try:
        comp = read_workload(Path(path))
        if len(comp.rows) > MAX_ROWS:  # (it could be saved, but never opened again)
            raise ValueError(f"{len(comp.rows):,} rows; the window holds a composition file's {MAX_ROWS:,} at "
                             "most (prvgui workload on the command line reads up to 100,000)")
    except ValueError as exc:
        files.show_error("Cannot import workload", f"{Path(path).name}: {exc}")
        return False
    files.install_untitled(comp.document())
    files.remember_folder(path)
    shares.compute()
    if show is not None:
        show()
    return True
