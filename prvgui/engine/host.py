"""The engine in a process of its own, for the window.

In one process the engine's Python code and the window's thread share the GIL: on a 2-core
machine the event loop stalled for 40-110 ms at a time while a steps curve was swept. Here the
window's worker thread hands each request to a child process (``RemoteEngine``) and waits on a
pipe, holding no GIL while it waits: the child sends progress, each partial Result and the
answer (or the error) back, and a shared event cancels it. The child imports no Qt (it is
started with "spawn": forking a process with Qt's threads is unsafe), runs 5 nicer than the
window (Linux) and keeps the engine's caches (reuse.py) warm between requests.

``RemoteEngine.compute`` and ``.estimate`` have view_model's signatures. ``default_engine()``
is the process-wide one, or None when the environment says ``PRVGUI_ENGINE=thread`` (the
window then computes in its worker thread, as before) or no child can be started.
"""
from __future__ import annotations

import atexit
import multiprocessing as mp
import os
import pickle
import sys
import threading
import time
import traceback
from typing import TYPE_CHECKING, Any, Callable, cast

from ..accounting.core.errors import Cancelled

if TYPE_CHECKING:
    from multiprocessing.connection import Connection
    from multiprocessing.process import BaseProcess

#: the child sends progress at most this often (seconds; the worker throttles it further)
PROGRESS_EVERY = 0.02
#: how often the waiting side looks at its cancel token (seconds) when nobody ``poke``s it: a
#: relay thread that woke every 5 ms took the GIL from the window's thread 200 times a second,
#: which made the window's repaints 2-3 times as long in wall time as in CPU time
POLL = 0.05
#: how much nicer than the window the child, and a worker thread that computes, run (Linux)
NICENESS = 5
#: after this many children in a row die before a word, requests run in the caller's process
SILENT_DEATHS = 2


_niced = threading.local()


def lower_thread_priority(niceness: int = NICENESS) -> None:
    """Make the calling (worker) thread ``niceness`` nicer than it is, once per thread: on two
    cores a computing thread otherwise takes the CPU from the window's thread for tens of ms at
    a time. Threads it starts inherit it; it cannot be undone (raising a priority needs
    privileges). Linux only: there a thread id is a valid target of setpriority; elsewhere the
    call could name a process. Never the main thread (a script's own)."""
    if sys.platform != "linux" or getattr(_niced, "done", False) \
            or threading.current_thread() is threading.main_thread():
        return
    _niced.done = True
    try:
        tid = threading.get_native_id()
        os.setpriority(os.PRIO_PROCESS, tid, os.getpriority(os.PRIO_PROCESS, tid) + niceness)
    except (OSError, AttributeError):
        pass  # not allowed or not supported: the window is only less smooth


def _lower_process_priority(niceness: int = NICENESS) -> None:
    """Make every thread of this process ``niceness`` nicer (Linux). A priority there belongs to
    a thread and ``os.nice`` changes only the caller's: the BLAS threads NumPy and SciPy start
    when imported (before the child's code runs) kept the window's priority, and on two cores
    they took 1.7 s of CPU in five edits of the mixed example, beside the window's thread."""
    if sys.platform != "linux":
        return
    try:
        tids = [int(t) for t in os.listdir("/proc/self/task")]
    except OSError:
        tids = [threading.get_native_id()]
    for tid in tids:
        try:
            os.setpriority(os.PRIO_PROCESS, tid, os.getpriority(os.PRIO_PROCESS, tid) + niceness)
        except OSError:
            pass  # not allowed, or the thread has ended


def _serve(conn, cancel) -> None:
    """The child's loop: (kind, job id, request) in; progress, partial answers and the answer
    (or error) out, each tagged with the job id."""
    from ..tuning import keep_freed_memory
    _lower_process_priority()
    keep_freed_memory()  # the engine's process is ours: its temporary arrays reuse freed memory
    from . import view_model
    lock = threading.Lock()

    def send(message) -> None:
        # (one message at a time: progress also comes from helper threads, and a cancelled
        # job's abandoned helper may still report while its end is sent; two sends at once
        # interleave their bytes on the pipe, which the window then cannot read)
        with lock:
            conn.send(message)
    while True:
        try:
            kind, jid, request = conn.recv()
        except (EOFError, OSError):
            return
        if kind == "stop":
            return
        try:
            out: view_model.Cost | view_model.Result
            if kind == "cost":
                out = view_model.cost(request)
            else:
                last = [-1.0]

                def progress(f: float, text: str, jid=jid, last=last) -> None:
                    now = time.perf_counter()
                    if now - last[0] >= PROGRESS_EVERY or f >= 1.0:
                        last[0] = now
                        send(("progress", jid, (f, text)))
                # (a one-argument callback: mypy cannot type a lambda with a defaulted parameter)
                out = view_model.compute(request, progress=progress, cancel=cancel.is_set,
                                         partial=cast("Callable[[view_model.Result], None]",
                                                      lambda res, jid=jid: send(("partial", jid, res))))
            send(("done", jid, out))
        except Cancelled:
            send(("cancelled", jid, None))
        except Exception as exc:  # noqa: BLE001 - every failure goes back to the window
            send(("error", jid, _portable(exc)))


def _portable(exc: Exception) -> Exception:
    """``exc`` if it survives pickling, else one that does with its message (a MemoryError or a
    ValueError stays one: the window's words depend on it); the child's traceback goes to its
    stderr."""
    try:
        pickle.loads(pickle.dumps(exc))
        return exc
    except Exception:  # noqa: BLE001 - e.g. an __init__ that takes other arguments
        traceback.print_exception(exc, file=sys.stderr)
        kind = next((k for k in (MemoryError, ValueError) if isinstance(exc, k)), RuntimeError)
        return kind(str(exc) or type(exc).__name__)


#: seconds a cancelled job's child may stay silent before it is stopped (``_drain``)
DRAIN_LIMIT = 30.0


class EngineStopped(RuntimeError):
    """The engine's process ended while it worked (it is started again for the next request)."""


class RemoteEngine:
    """One child process, one request at a time (callers from several threads wait their turn)."""

    def __init__(self) -> None:
        self._ctx = mp.get_context("spawn")
        self._lock = threading.Lock()
        self._proc: BaseProcess | None = None
        self._conn: Connection | None = None
        self._cancel = self._ctx.Event()
        self._job = 0
        #: the running job's cancel token, and the lock under which a job starts and ends (so
        #: that ``poke`` never cancels the next job for the last one's token)
        self._switch = threading.Lock()
        self._current_cancel: Callable[[], bool] | None = None
        self._heard = False  # the current job has had a message from the child
        self._silent = 0  # children in a row that died before saying anything

    def start(self) -> None:
        """Start the child now (its imports take a moment; the first request would wait)."""
        with self._lock:
            self._ensure()

    def _ensure(self) -> None:
        if self._proc is not None and self._proc.is_alive():
            return
        ours, theirs = self._ctx.Pipe()
        proc = self._ctx.Process(target=_serve, args=(theirs, self._cancel), daemon=True,
                                 name="prvgui-engine")
        proc.start()
        theirs.close()
        self._proc, self._conn = proc, ours

    def stop(self) -> None:
        with self._lock:
            if self._proc is None:
                return
            assert self._conn is not None  # (set and cleared together with _proc)
            try:
                self._conn.send(("stop", 0, None))
            except (OSError, ValueError):
                pass
            self._proc.join(2.0)
            if self._proc.is_alive():
                self._proc.terminate()
            self._proc = self._conn = None

    def poke(self) -> None:
        """Pass a cancel on to the child now: if the running job's cancel token says so, set the
        child's event (the waiting thread would see it only at its next look, POLL later). For
        the thread that cancels (the window's, after an edit); cheap and never blocking long."""
        with self._switch:
            token = self._current_cancel
            if token is not None and token():
                self._cancel.set()

    def cost(self, request):
        return self._call("cost", request)

    def compute(self, request, progress: Callable[[float, str], None] | None = None,
                cancel: Callable[[], bool] | None = None, partial: Callable | None = None):
        return self._call("compute", request, progress, cancel, partial)

    def _call(self, kind: str, request, progress=None, cancel=None, partial=None):
        if self._silent >= SILENT_DEATHS:  # a child that cannot work here: compute in this process
            from . import view_model
            lower_thread_priority()  # (the caller's worker thread computes now, beside the window)
            if kind == "cost":
                return view_model.cost(request)
            return view_model.compute(request, progress=progress, cancel=cancel, partial=partial)
        with self._lock:
            self._ensure()
            assert self._conn is not None  # (_ensure has started the child)
            with self._switch:
                self._job += 1
                jid = self._job
                self._cancel.clear()
                self._current_cancel = cancel
            try:
                self._conn.send((kind, jid, request))
                tag, payload = self._wait(jid, progress, cancel, partial)
            except (EOFError, OSError):
                code = self._proc.exitcode if self._proc is not None else None
                self._proc = self._conn = None
                self._silent = self._silent + 1 if not self._heard else 0
                raise EngineStopped(f"the engine's process stopped (exit code {code}); "
                                    "it starts again with the next change") from None
            except BaseException:
                # a callback failed: stop the child's job and wait for its end before the next
                self._cancel.set()
                self._drain(jid)
                raise
            finally:
                with self._switch:
                    self._current_cancel = None
        self._silent = 0
        if tag == "done":
            return payload
        if tag == "cancelled":
            raise Cancelled("computation cancelled")
        raise payload

    def _wait(self, jid: int, progress, cancel, partial) -> tuple[str, Any]:
        """Pass on progress and partial answers until job ``jid`` ends: (its tag, its payload)."""
        assert self._conn is not None and self._proc is not None  # (started by _ensure, under _lock)
        self._heard = False
        while True:
            if cancel is not None and not self._cancel.is_set() and cancel():
                self._cancel.set()  # the child raises Cancelled at its next check
            if not self._conn.poll(POLL):
                if not self._proc.is_alive():
                    raise EOFError
                continue
            tag, got, payload = self._conn.recv()
            self._heard = True
            if got != jid:
                continue  # (a message of an abandoned job)
            if tag == "progress":
                if progress is not None:
                    progress(*payload)
            elif tag == "partial":
                if partial is not None:
                    partial(payload)
            else:
                return tag, payload

    def _drain(self, jid: int) -> None:
        """Read until job ``jid`` has ended (or the child has); a child that says nothing for
        DRAIN_LIMIT seconds after the cancel is stopped (the next request starts a new one)."""
        assert self._conn is not None and self._proc is not None  # (called by _call, under _lock)
        quiet_since = time.monotonic()
        try:
            while True:
                if not self._conn.poll(POLL):
                    if not self._proc.is_alive():
                        raise EOFError
                    if time.monotonic() - quiet_since > DRAIN_LIMIT:
                        self._proc.terminate()
                        raise EOFError
                    continue
                quiet_since = time.monotonic()
                tag, got, _ = self._conn.recv()
                if got == jid and tag in ("done", "cancelled", "error"):
                    return
        except (EOFError, OSError):
            self._proc = self._conn = None


_default: RemoteEngine | None = None
_default_lock = threading.Lock()


def default_engine() -> RemoteEngine | None:
    """The process-wide engine (started at the first call), or None when ``PRVGUI_ENGINE`` is
    "thread" or a child cannot be started."""
    global _default
    if os.environ.get("PRVGUI_ENGINE", "process") == "thread":
        return None
    with _default_lock:
        if _default is None:
            engine = RemoteEngine()
            try:
                engine.start()
            except Exception as exc:  # noqa: BLE001 - the window then computes in its thread
                print(f"prvgui: no engine process ({exc}); computing in the window's process",
                      file=sys.stderr)
                return None
            _default = engine
            atexit.register(engine.stop)
        return _default
