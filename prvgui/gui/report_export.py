"""File ▸ Export report…: the report (prvgui/report) of the window's current result, as HTML or
PDF by the file type chosen, written atomically.

The shown result is reused when it is current; while one is being computed the export waits for
it (the status bar says so), and an out-of-date result is never exported. The attack-risk
read-out the report adds is computed on a worker thread (TaskRunner); the PDF is laid out on
the GUI thread (a few tenths of a second). Errors are shown in a message box naming the path.

A pinned result, when the window has one, goes beside the headline and on every plot:
``pinned()`` returns it as (label, Result), or None (the default: no pin).
"""
from __future__ import annotations

import datetime as dt
import os
from pathlib import Path
from collections.abc import Callable

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QFileDialog, QWidget

from ..document.fileio import atomic_write, check_target
from ..report.model import gather
from ..report.output import FORMATS, report_bytes, report_format
from .files import FileController
from .results_panel import ResultsPanel
from .shown import Shown
from .tasks import TaskRunner, failure_text
from .worker import Recomputer


HTML_FILTER, PDF_FILTER = "HTML page (*.html *.htm)", "PDF document (*.pdf)"
REPORT_FILTERS = f"{HTML_FILTER};;{PDF_FILTER}"


def with_extension(path: str, chosen_filter: str) -> str:
    """``path``, with the chosen file type's extension added when it has none of the report's."""
    if os.path.splitext(path)[1].lower() in FORMATS:
        return path
    return path + (".pdf" if chosen_filter == PDF_FILTER else ".html")


class ReportExport(QObject):
    """Exports reports of what is on show (``shown``): waits for the ``recomputer``'s answer while
    one is coming, refuses while ``results`` is out of date, asks ``files`` for folders and shows
    failures through it, and reports progress with ``set_status``."""

    #: the path of a report written
    written = Signal(str)
    #: the title and text of a failure (also shown through the files controller's show_error)
    failed = Signal(str, str)

    def __init__(self, parent: QWidget, recomputer: Recomputer, shown: Shown, results: ResultsPanel,
                 files: FileController, set_status: Callable[..., None]) -> None:
        super().__init__(parent)
        self._parent, self.recomputer, self.shown, self.results = parent, recomputer, shown, results
        self.files, self.set_status = files, set_status
        self.runner = TaskRunner("report", self)
        self.runner.done.connect(self._gathered)
        self.runner.failed.connect(lambda exc: self._fail(self._path, failure_text(exc)))
        self.runner.cancelled.connect(lambda: self.set_status("Report not written: cancelled."))
        self._path: str | None = None
        self._waiting: str | None = None
        self.ask_path = self._ask_path
        self.pinned: Callable[[], object] = lambda: None
        self.recomputer.result_ready.connect(self._on_result)
        self.recomputer.failed.connect(self._on_not_computed)
        self.recomputer.cancelled.connect(lambda: self._on_not_computed("the computation was cancelled"))
        self.recomputer.blocked.connect(self._on_not_computed)

    def _ask_path(self) -> str | None:
        start = str(Path(self.files.last_folder()) / "report.html")
        path, chosen = QFileDialog.getSaveFileName(self._parent, "Export report", start, REPORT_FILTERS)
        return with_extension(path, chosen) if path else None

    # ------------------------------------------------------------ the command
    def start(self, path: str | None = None) -> bool:
        """Ask for a file (unless ``path``) and export the current result there, at once or when
        the running computation answers. False if nothing was started."""
        if path is None:
            path = self.ask_path()
            if path is None:
                return False
        try:
            report_format(path)
            check_target(path)
        except (OSError, ValueError) as exc:
            return self._fail(path, str(exc))
        state = self.recomputer.state
        if state in ("pending", "running"):
            self._waiting = path
            self.set_status(f"The report waits for the computation: {Path(path).name}")
            return True
        if self.shown.result is None or not self.results.body.isEnabled() or state == "waiting":
            return self._fail(path, "there is no current result to report: fix the inputs or compute "
                                    "(F5) first")
        self._export(path, self.shown.result, self.shown.doc)
        return True

    def _on_result(self, result, snapshot) -> None:
        if self._waiting is not None:
            path, self._waiting = self._waiting, None
            self._export(path, result, snapshot)

    def _on_not_computed(self, why: str) -> None:
        if self._waiting is not None:
            path, self._waiting = self._waiting, None
            self._fail(path, f"the result could not be computed ({why})")

    def _export(self, path: str, result, snapshot) -> None:
        self._path = path
        pinned = self.pinned()
        created = dt.datetime.now(dt.timezone.utc)
        self.set_status(f"Writing the report {Path(path).name}…")
        self.runner.start(lambda progress, cancel: gather(snapshot, result, pinned=pinned, created=created,
                                                          cancel=cancel))

    def _gathered(self, report) -> None:
        path = self._path
        try:
            atomic_write(path, report_bytes(report, report_format(path)))
        except (OSError, ValueError) as exc:
            self._fail(path, getattr(exc, "strerror", None) or str(exc))
            return
        self.files.remember_folder(path)
        self.set_status(f"Report written: {path}")
        self.written.emit(path)

    def _fail(self, path: str | None, message: str) -> bool:
        text = f"{path}: {message}"
        self.set_status(f"Report not written. {text}", error=True)
        self.failed.emit("Cannot export the report", text)
        self.files.show_error("Cannot export the report", text)
        return False

    def shutdown(self) -> None:
        self.runner.shutdown()
