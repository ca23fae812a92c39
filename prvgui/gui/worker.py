"""The background accountant: ``compute`` on a worker QThread, debounced, newest request wins.

``Recomputer`` lives on the GUI thread. An edit calls ``invalidate()``: the running job's
cancel flag (a ``threading.Event``, set directly because a busy worker cannot run a queued
slot) is set, the shown result becomes stale, and a single-shot timer restarts. When the
timer fires, ``factory()`` snapshots the document into a request (or raises ``InputError``,
in which case nothing is computed) and the request is queued to the worker with a new id.
Signals from the worker carry that id; anything but the latest id is dropped, so a stale
result is never shown. ``shutdown()`` cancels, quits and waits for the thread.
"""
from __future__ import annotations

import threading
from dataclasses import replace
from typing import Callable

from PySide6.QtCore import QElapsedTimer, QObject, QThread, QTimer, Signal, Slot

from ..accounting.engine import Cancelled, Request, compute

DEBOUNCE_MS = 300


class InputError(ValueError):
    """The inputs are not ready to compute; the message says what to fix."""


class _Job(QObject):
    """Runs on the worker thread; one ``run`` at a time."""

    progressed = Signal(int, float, str)
    done = Signal(int, object)
    failed = Signal(int, str)
    cancelled = Signal(int)

    def __init__(self, compute_fn: Callable) -> None:
        super().__init__()
        self._compute = compute_fn

    @Slot(int, object, object)
    def run(self, rid: int, request: Request, cancel: threading.Event) -> None:
        if cancel.is_set():  # superseded while it waited in the queue
            self.cancelled.emit(rid)
            return
        try:
            result = self._compute(request, progress=lambda f, text: self.progressed.emit(rid, f, text),
                                   cancel=cancel)
        except Cancelled:
            self.cancelled.emit(rid)
        except MemoryError as exc:
            message = str(exc) or "out of memory"
            if "eps_error" not in message:
                message += "; try a larger accuracy (ε error)"
            self.failed.emit(rid, message)
        except Exception as exc:  # noqa: BLE001 - any engine failure is reported, never fatal
            self.failed.emit(rid, str(exc) or type(exc).__name__)
        else:
            self.done.emit(rid, result)


class Recomputer(QObject):
    """Debounced, cancellable recomputation. States: idle, pending, running, cancelling."""

    state_changed = Signal(str)
    progress = Signal(float, str)
    #: (Result, context object the factory returned with the request)
    result_ready = Signal(object, object)
    failed = Signal(str)
    #: the inputs cannot be computed (message says what to fix)
    blocked = Signal(str)
    cancelled = Signal()
    #: after result_ready, failed, blocked or cancelled of the latest request
    finished = Signal()
    _submit = Signal(int, object, object)

    def __init__(self, factory: Callable[[], tuple[Request, object]], compute_fn: Callable = compute,
                 debounce_ms: int = DEBOUNCE_MS, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._factory = factory
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(debounce_ms)
        self._timer.timeout.connect(self.run_now)
        self._thread = QThread()
        self._thread.setObjectName("prvgui-accountant")
        self._job = _Job(compute_fn)
        self._job.moveToThread(self._thread)
        self._thread.finished.connect(self._job.deleteLater)
        self._submit.connect(self._job.run)
        self._job.progressed.connect(self._on_progress)
        self._job.done.connect(self._on_done)
        self._job.failed.connect(self._on_failed)
        self._job.cancelled.connect(self._on_cancelled)
        self._events: dict[int, threading.Event] = {}
        self._contexts: dict[int, object] = {}
        self._next_id = 0
        self._latest = 0  # id whose answer may be shown; 0: none
        self._state = "idle"
        self._clock = QElapsedTimer()
        self._closed = False
        self._thread.start()

    # ------------------------------------------------------------ queries
    @property
    def state(self) -> str:
        return self._state

    @property
    def latest_id(self) -> int:
        """Id of the request whose answer may still be shown (0: none)."""
        return self._latest

    @property
    def submitted(self) -> int:
        """How many requests have been sent to the worker so far."""
        return self._next_id

    def elapsed(self) -> float:
        """Seconds since the latest request was submitted."""
        return self._clock.elapsed() / 1000.0 if self._clock.isValid() else 0.0

    def is_thread_running(self) -> bool:
        return self._thread.isRunning()

    def _set_state(self, state: str) -> None:
        if state != self._state:
            self._state = state
            self.state_changed.emit(state)

    # ------------------------------------------------------------ commands
    def invalidate(self) -> None:
        """The inputs changed: drop the running job and recompute after the debounce delay."""
        if self._closed:
            return
        self._cancel_all()
        self._latest = 0
        self._timer.start()
        self._set_state("pending")

    @Slot()
    def run_now(self) -> None:
        """Snapshot the inputs and submit them now (skipping the debounce)."""
        if self._closed:
            return
        self._timer.stop()
        self._cancel_all()
        self._latest = 0
        try:
            request, context = self._factory()
        except InputError as exc:
            self._set_state("idle")
            self.blocked.emit(str(exc))
            self.finished.emit()
            return
        self._next_id += 1
        rid = self._next_id
        request = replace(request, request_id=rid)
        event = threading.Event()
        self._events[rid] = event
        self._contexts[rid] = context
        self._latest = rid
        self._clock.start()
        self._set_state("running")
        self._submit.emit(rid, request, event)

    @Slot()
    def cancel(self) -> None:
        """Stop the latest job (the Cancel button)."""
        self._timer.stop()
        if self._latest in self._events:
            self._events[self._latest].set()
            self._set_state("cancelling")
        elif self._state == "pending":
            self._set_state("idle")
            self.cancelled.emit()
            self.finished.emit()

    def shutdown(self) -> None:
        """Cancel everything, stop the thread and wait for it (call before closing)."""
        if self._closed:
            return
        self._closed = True
        self._timer.stop()
        self._cancel_all()
        self._latest = 0
        self._thread.quit()
        self._thread.wait()
        self._set_state("idle")

    def _cancel_all(self) -> None:
        for ev in self._events.values():
            ev.set()

    # ------------------------------------------------------------ worker signals
    def _finish(self, rid: int) -> bool:
        """Forget job ``rid``; True if it is the latest one (its answer may be shown)."""
        self._events.pop(rid, None)
        if rid != self._latest or self._closed:
            return False
        self._latest = 0
        self._set_state("idle")
        return True

    @Slot(int, float, str)
    def _on_progress(self, rid: int, fraction: float, text: str) -> None:
        if rid == self._latest and not self._closed:
            self.progress.emit(fraction, text)

    @Slot(int, object)
    def _on_done(self, rid: int, result: object) -> None:
        context = self._contexts.pop(rid, None)
        if self._finish(rid):
            self.result_ready.emit(result, context)
            self.finished.emit()

    @Slot(int, str)
    def _on_failed(self, rid: int, message: str) -> None:
        self._contexts.pop(rid, None)
        if self._finish(rid):
            self.failed.emit(message)
            self.finished.emit()

    @Slot(int)
    def _on_cancelled(self, rid: int) -> None:
        self._contexts.pop(rid, None)
        if self._finish(rid):
            self.cancelled.emit()
            self.finished.emit()
