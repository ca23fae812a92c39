"""``TaskRunner``: a small background runner for dialogs and views (calibration, budget).

A plain job function ``job(progress, cancel)`` runs on one QThread; cancel sets a
``threading.Event`` directly (a busy worker cannot run a queued slot), the newest job wins and
answers of superseded jobs are dropped; ``shutdown()`` cancels, quits and waits.
"""
from __future__ import annotations

import itertools
import threading
from collections.abc import Callable

from PySide6.QtCore import QObject, QThread, Signal, Slot

from ..accounting.core.errors import Cancelled
from ..engine.host import NICENESS as WORKER_NICENESS, lower_thread_priority


def failure_text(exc: object) -> str:
    """A message for an engine failure: memory errors suggest a coarser accuracy unless the
    message already says what to do with it."""
    message = (str(exc) or type(exc).__name__).replace("eps_error", "accuracy (ε error)")
    if isinstance(exc, MemoryError) and "accuracy" not in message:
        message += "; try a larger accuracy (ε error)"
    return message


class _Runner(QObject):
    """Lives on the worker thread; runs one job at a time."""

    progressed = Signal(int, float, str)
    done = Signal(int, object)
    failed = Signal(int, object)
    cancelled = Signal(int)

    def __init__(self, nice: bool) -> None:
        super().__init__()
        self.nice = nice

    @Slot(int, object, object)
    def run(self, rid: int, job: Callable, event: threading.Event) -> None:
        if self.nice:
            lower_thread_priority(WORKER_NICENESS)
        if event.is_set():  # superseded while it waited in the queue
            self.cancelled.emit(rid)
            return
        try:
            result = job(lambda f, text: self.progressed.emit(rid, f, text), event.is_set)
        except Cancelled:
            self.cancelled.emit(rid)
        except Exception as exc:  # noqa: BLE001 - any engine failure is shown, never fatal
            self.failed.emit(rid, exc)
        else:
            self.done.emit(rid, result)


class TaskRunner(QObject):
    """Runs ``job(progress, cancel)`` functions on one worker thread; the newest job wins.

    Signals refer to the latest job only: ``progress(fraction, text)``, then one of
    ``done(result)``, ``failed(exception)``, ``cancelled()``, then ``finished()``.
    """

    running_changed = Signal(bool)
    progress = Signal(float, str)
    done = Signal(object)
    failed = Signal(object)
    cancelled = Signal()
    finished = Signal()
    _submit = Signal(int, object, object)

    def __init__(self, name: str, parent: QObject | None = None, nice: bool = True) -> None:
        """``nice``: the worker thread runs WORKER_NICENESS nicer than the window's (Linux), as
        a thread that computes should; a thread that only waits for another process and
        passes its messages on must not (``nice=False``): woken at a lower priority while the
        computing process takes the cores, it held the GIL it needed to unpickle a message
        for up to 60 ms, and the window's thread waited for it."""
        super().__init__(parent)
        self._thread = QThread()
        self._thread.setObjectName(name)
        self._runner = _Runner(nice)
        self._runner.moveToThread(self._thread)
        self._thread.finished.connect(self._runner.deleteLater)
        self._submit.connect(self._runner.run)
        self._runner.progressed.connect(self._on_progress)
        self._runner.done.connect(self._on_done)
        self._runner.failed.connect(self._on_failed)
        self._runner.cancelled.connect(self._on_cancelled)
        self._events: dict[int, threading.Event] = {}
        self._ids = itertools.count(1)
        self._latest = 0  # id whose answer may be shown; 0: none
        self._closed = False
        self._thread.start()

    def is_running(self) -> bool:
        """True while the latest job has not answered."""
        return self._latest != 0

    @property
    def latest_id(self) -> int:
        """Id of the job whose answer may still be shown (0: none)."""
        return self._latest

    def is_thread_running(self) -> bool:
        return self._thread.isRunning()

    def start(self, job: Callable[[Callable[[float, str], None], Callable[[], bool]], object]) -> None:
        """Cancel whatever runs and queue ``job``."""
        if self._closed:
            return
        self._cancel_all()
        rid = next(self._ids)
        event = threading.Event()
        self._events[rid] = event
        was = self.is_running()
        self._latest = rid
        if not was:
            self.running_changed.emit(True)
        self._submit.emit(rid, job, event)

    @Slot()
    def cancel(self) -> None:
        """Stop the latest job; ``cancelled`` follows once the worker has stopped."""
        if self._latest in self._events:
            self._events[self._latest].set()

    def discard(self) -> None:
        """Cancel the latest job and drop its answer: no signal but ``running_changed`` follows."""
        self._cancel_all()
        if self._latest:
            self._latest = 0
            self.running_changed.emit(False)

    def shutdown(self) -> None:
        """Cancel everything, stop the thread and wait for it (idempotent)."""
        if self._closed:
            return
        self._closed = True
        self._cancel_all()
        self._thread.quit()
        self._thread.wait()
        if self._latest:
            self._latest = 0
            self.running_changed.emit(False)

    def _cancel_all(self) -> None:
        for event in self._events.values():
            event.set()

    def _finish(self, rid: int) -> bool:
        self._events.pop(rid, None)
        if rid != self._latest or self._closed:
            return False
        self._latest = 0
        self.running_changed.emit(False)
        return True

    @Slot(int, float, str)
    def _on_progress(self, rid: int, fraction: float, text: str) -> None:
        if rid == self._latest and not self._closed:
            self.progress.emit(fraction, text)

    @Slot(int, object)
    def _on_done(self, rid: int, result: object) -> None:
        if self._finish(rid):
            self.done.emit(result)
            self.finished.emit()

    @Slot(int, object)
    def _on_failed(self, rid: int, exc: object) -> None:
        if self._finish(rid):
            self.failed.emit(exc)
            self.finished.emit()

    @Slot(int)
    def _on_cancelled(self, rid: int) -> None:
        if self._finish(rid):
            self.cancelled.emit()
            self.finished.emit()
