"""The background accountant: ``compute`` on a worker thread, started at once, newest request wins.

``Recomputer`` lives on the GUI thread. An edit calls ``invalidate()``: the running job is
cancelled (cooperatively: the engine checks ``cancel`` between and inside its stages) and its
answer dropped (``tasks.TaskRunner``), the shown result becomes stale, and a zero-delay
single-shot timer restarts (so that the several document events of one edit start one job,
not one each). When the timer fires, ``factory()`` snapshots the document into a request (or
raises ``InputError``, in which case nothing is computed) and the request is run on the
worker; only the newest request's answers are ever shown. ``shutdown()`` cancels, quits and
waits for the thread.

Progressive answers: when the compute function takes ``partial`` (the engine's does), each
partial Result (the headline first, then one more per curve; ``Result.pending`` names the
curves still to come) is emitted as ``partial_ready`` before the complete one arrives as
``result_ready``; partial answers of a superseded request are dropped like its final one.

Cost before work: the worker first asks the engine what the request will cost
(``view_model.cost``, milliseconds, nothing composed). When its first answer is estimated
above PROMPT_SECONDS, the whole above PROMPT_WHOLE_SECONDS or its memory above PROMPT_BYTES,
nothing is computed: ``confirm_needed(cost)`` is emitted and the state is
"waiting" until ``confirm()`` runs that request (or an edit, ``cancel()`` or ``run_now()``
replaces it).
"""
from __future__ import annotations

import inspect
import math
import sys
import threading
import time
from dataclasses import replace
from typing import Callable

from PySide6.QtCore import QElapsedTimer, QMetaObject, QObject, Qt, QTimer, Signal, Slot

from ..engine import view_model
from ..engine.view_model import Cost, Request
from ..engine.host import default_engine
from .tasks import TaskRunner, failure_text

#: the delay between an edit and the start of its computation: none (the next keystroke cancels)
DEBOUNCE_MS = 0
#: the interpreter's thread switch interval while a Recomputer exists (seconds). Python's default,
#: 5 ms, lets the worker keep the GIL that long each time the GUI thread gives it up (PySide
#: releases it around Qt calls), so that a repaint of a few hundred calls waited for seconds'
#: worth of the worker's slices; 0.5 ms keeps the window responsive while the engine computes.
SWITCH_INTERVAL = 0.0005
#: progress reports closer together than this (seconds) are not passed on: each one costs the
#: GUI thread a repaint of the progress bar and the status line (about 1 ms offscreen, measured in
#: benchmarks/gui_latency.py: 50 reports per edit of the mixed example took 65 ms of the GUI
#: thread at one per 1% or 50 ms)
PROGRESS_EVERY = 0.1
#: a request estimated to take longer or more memory than this waits for confirm(); the time is
#: that of its first answer (the headline: the other parts follow as they come, and an edit
#: cancels them), up to PROMPT_WHOLE_SECONDS for the whole (1000 distinct DP-SGD steps: the
#: headline in about 2 s, the whole in about 25; asking after every edit would stop the window
#: from recomputing as one types)
PROMPT_SECONDS, PROMPT_BYTES = 5.0, 1e9
PROMPT_WHOLE_SECONDS = 60.0


class _Ask:
    """The worker's answer for a request too costly to start unasked."""

    def __init__(self, cost: Cost) -> None:
        self.cost = cost


class InputError(ValueError):
    """The inputs are not ready to compute; the message says what to fix."""


class Recomputer(QObject):
    """Debounced, cancellable recomputation. States: idle, pending, running, cancelling, and
    waiting (for ``confirm()`` of a costly request)."""

    state_changed = Signal(str)
    progress = Signal(float, str)
    #: (Result, context object the factory returned with the request)
    result_ready = Signal(object, object)
    #: (partial Result, context): the latest request's answer so far (``Result.pending`` is not empty)
    partial_ready = Signal(object, object)
    _partial = Signal(int, object, object)  # from the worker thread: (request id, Result, context)
    failed = Signal(str)
    #: the inputs cannot be computed (message says what to fix)
    blocked = Signal(str)
    cancelled = Signal()
    #: the latest request is estimated to cost more than the limits (the Cost); nothing
    #: runs until confirm()
    confirm_needed = Signal(object)
    #: the estimate of the request that is about to run (the Cost)
    estimated = Signal(object)
    _estimated = Signal(int, object)  # from the worker thread: (request id, Cost)
    #: after result_ready, failed, blocked, cancelled or confirm_needed of the latest request
    finished = Signal()

    def __init__(self, factory: Callable[[], tuple[Request, object]], compute_fn: Callable | None = None,
                 debounce_ms: int = DEBOUNCE_MS, parent: QObject | None = None,
                 cost_fn: Callable[[Request], Cost] | None = None,
                 limits: tuple[float | None, float | None] = (PROMPT_SECONDS, PROMPT_BYTES)) -> None:
        """``compute_fn`` and ``cost_fn`` replace the engine's (tests); ``limits`` are the
        seconds and bytes above which a request waits for ``confirm()`` (None: no limit)."""
        super().__init__(parent)
        if sys.getswitchinterval() > SWITCH_INTERVAL:
            sys.setswitchinterval(SWITCH_INTERVAL)
        self._factory = factory
        # the engine runs in a process of its own (engine/host.py) unless a test brings its own
        engine = default_engine() if compute_fn is None or cost_fn is None else None
        self._compute = compute_fn or (engine.compute if engine is not None else view_model.compute)
        #: the engine's process when it computes (``poke``d at once when a job is cancelled)
        self._engine = engine if compute_fn is None else None
        self._cost = cost_fn or (engine.cost if engine is not None else view_model.cost)
        self.limits = limits
        self._waiting: tuple[Request, object] | None = None
        self._estimated.connect(self._on_estimated)
        self._partial.connect(self._on_partial)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(debounce_ms)
        self._timer.timeout.connect(self.run_now)
        # a worker that relays to the engine's process runs at the window's priority; one that
        # computes here (a test's function, or no process) nicer (tasks.py)
        self._runner = TaskRunner("prvgui-accountant", self, nice=self._engine is None)
        self._runner.progress.connect(self.progress)
        self._runner.done.connect(self._on_done)
        self._runner.failed.connect(self._on_failed)
        self._runner.cancelled.connect(self._on_cancelled)
        self._submitted = 0
        self._state = "idle"
        self._clock = QElapsedTimer()
        self._closed = False
        self._queued = False  # a run_now call is posted (``invalidate`` without debounce)

    # ------------------------------------------------------------ queries
    @property
    def state(self) -> str:
        return self._state

    @property
    def latest_id(self) -> int:
        """Id of the job whose answer may still be shown (0: none)."""
        return self._runner.latest_id

    @property
    def submitted(self) -> int:
        """How many requests have been sent to the worker so far."""
        return self._submitted

    def elapsed(self) -> float:
        """Seconds since the latest request was submitted."""
        return self._clock.elapsed() / 1000.0 if self._clock.isValid() else 0.0

    def is_thread_running(self) -> bool:
        return self._runner.is_thread_running()

    def _set_state(self, state: str) -> None:
        if state != self._state:
            self._state = state
            self.state_changed.emit(state)

    # ------------------------------------------------------------ commands
    def invalidate(self) -> None:
        """The inputs changed: drop the running job and recompute after the debounce delay (at
        once without one)."""
        if self._closed:
            return
        self._runner.discard()
        self._poke()
        self._waiting = None
        if self._timer.interval() == 0:
            # no debounce: submit as the next queued call, before the window repaints what the
            # edit made stale (a zero timer fires after those repaints, ~20 ms later); edits of
            # one pass of the event loop (a paste, a reset) still make one request
            if not self._queued:
                self._queued = True
                QMetaObject.invokeMethod(self, "_run_queued", Qt.ConnectionType.QueuedConnection)
        else:
            self._timer.start()
        self._set_state("pending")

    @Slot()
    def _run_queued(self) -> None:
        """``invalidate``'s queued start, unless cancel() or a start came first."""
        if self._queued:
            self.run_now()

    @Slot()
    def run_now(self) -> None:
        """Snapshot the inputs and submit them now (skipping the debounce)."""
        self._queued = False
        if self._closed:
            return
        self._timer.stop()
        self._runner.discard()
        self._poke()
        self._waiting = None
        try:
            request, context = self._factory()
        except InputError as exc:
            self._set_state("idle")
            self.blocked.emit(str(exc))
            self.finished.emit()
            return
        self._submit(request, context, ask=True)

    @Slot()
    def confirm(self) -> None:
        """Run the request that waits for confirmation (``confirm_needed``), whatever it costs."""
        if self._closed or self._waiting is None:
            return
        request, context = self._waiting
        self._waiting = None
        self._submit(request, context, ask=False)

    def _submit(self, request: Request, context: object, ask: bool) -> None:
        self._submitted += 1
        request = replace(request, request_id=self._submitted)
        compute_fn, cost_fn, limits = self._compute, self._cost, self.limits
        estimated, rid, partial = self._estimated, self._submitted, self._partial
        extra = {"partial": lambda res: partial.emit(rid, res, context)} if _takes_partial(compute_fn) else {}

        def job(progress, cancel):
            try:
                cost = cost_fn(request)
            except Exception:  # noqa: BLE001 - an estimate that fails never blocks the work
                cost = None
            whole = None if limits[0] is None else max(limits[0], PROMPT_WHOLE_SECONDS)
            if cost is not None and ask and cost.asks(limits[0], limits[1], whole):
                return _Ask(cost), (request, context)
            if cost is not None:
                estimated.emit(rid, cost)
            return compute_fn(request, progress=_throttled(progress), cancel=cancel, **extra), context

        self._clock.start()
        self._set_state("running")
        self._runner.start(job)

    @Slot()
    def cancel(self) -> None:
        """Stop the latest job (the Cancel button)."""
        self._timer.stop()
        self._queued = False
        if self._runner.is_running():
            self._runner.cancel()
            self._poke()
            self._set_state("cancelling")
        elif self._state in ("pending", "waiting"):
            self._waiting = None
            self._set_state("idle")
            self.cancelled.emit()
            self.finished.emit()

    def _poke(self) -> None:
        """The engine's process hears of a cancel now, not at the relay's next look."""
        if self._engine is not None:
            self._engine.poke()

    def shutdown(self) -> None:
        """Cancel everything, stop the thread and wait for it (call before closing)."""
        if self._closed:
            return
        self._closed = True
        self._waiting = None
        self._queued = False
        self._timer.stop()
        self._runner.cancel()
        self._poke()  # (a running job ends now, not at the relay's next look)
        self._runner.shutdown()
        self._set_state("idle")

    # ------------------------------------------------------------ worker answers
    @Slot(int, object)
    def _on_estimated(self, rid: int, cost: object) -> None:
        if rid == self._submitted and self._state == "running":
            self.estimated.emit(cost)

    @Slot(int, object, object)
    def _on_partial(self, rid: int, result: object, context: object) -> None:
        if rid == self._submitted and self._state == "running" and not self._closed:
            self.partial_ready.emit(result, context)

    @Slot(object)
    def _on_done(self, answer: object) -> None:
        result, context = answer
        if isinstance(result, _Ask):
            self._waiting = context
            self._set_state("waiting")
            self.confirm_needed.emit(result.cost)
            self.finished.emit()
            return
        self._set_state("idle")
        self.result_ready.emit(result, context)
        self.finished.emit()

    @Slot(object)
    def _on_failed(self, exc: object) -> None:
        self._set_state("idle")
        self.failed.emit(failure_text(exc))
        self.finished.emit()

    @Slot()
    def _on_cancelled(self) -> None:
        self._set_state("idle")
        self.cancelled.emit()
        self.finished.emit()


def _throttled(progress: Callable[[float, str], None]) -> Callable[[float, str], None]:
    """``progress``: the first report, then at most one per PROGRESS_EVERY seconds, and always the
    end (fraction 1)."""
    last = [-math.inf]
    lock = threading.Lock()

    def report(fraction: float, text: str = "") -> None:
        now = time.perf_counter()
        with lock:  # the two orders of a pair report from two threads
            if now - last[0] < PROGRESS_EVERY and fraction < 1.0:
                return
            last[0] = now
        progress(fraction, text)
    return report


def _takes_partial(fn: Callable) -> bool:
    """True if ``fn`` accepts a ``partial`` keyword (the engine's compute; test fakes may not)."""
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False
    return "partial" in params or any(p.kind is p.VAR_KEYWORD for p in params.values())
