"""Running a sweep: the points in chunks, each chunk computed where the sweep says and written to
the journal as soon as it is back (journal.py), the final file assembled at the end.

Each point is exactly the query ``prvgui epsilon FILE --delta D`` makes (``api.query`` on the
composition with the axes set): the same floats, whichever way the chunks were run. Three ways
to run them, one code path for the last two:

* ``workers=1``: in this process, one chunk after the other;
* by default, on all local cores: a ``dask.distributed.LocalCluster`` of one single-threaded
  worker process per core (its nannies start each with one BLAS/OpenMP thread), made for the
  sweep and closed after it; a sweep estimated at less than START_SECONDS of work per core runs
  in this process instead (the cluster would take longer to start);
* ``scheduler="tcp://HOST:8786"``: on an existing Dask cluster (``dask.distributed.Client``);
  its workers must run the same prvgui (checked on every chunk).

The workers only compute; this process writes every file, so a remote cluster needs no shared
disk. Chunks aim at CHUNK_SECONDS of work each by the accountant's own estimate
(``Accountant.cost``, at the grid's corners) and cut a sweep in at least MIN_CHUNKS where it has
the points; a resumed sweep keeps the chunk size it was begun with. Dask is imported only here,
and only when a sweep runs on it.
"""
from __future__ import annotations

import contextlib
import math
import os
import signal
import threading
import time
from dataclasses import dataclass
from typing import Callable, Iterator

from .. import __version__
from ..accounting.core.errors import Cancelled
from .journal import EXTRA, Journal, out_format
from .plan import SweepPlan

#: the work one chunk aims at, in seconds by the cost estimate
CHUNK_SECONDS = 5.0
MAX_CHUNK = 1024
#: a sweep is cut in at least this many chunks where it has the points (for the workers and
#: for the progress line)
MIN_CHUNKS = 64
#: a query's least cost, whatever the estimate: the comparison accountants and the answer
MIN_POINT_SECONDS = 2e-3
#: about what starting a local cluster costs: a sweep estimated at less work per core is run in
#: this process unless a number of workers is asked for
START_SECONDS = 2.0

Computer = Callable[[SweepPlan, int, int], "tuple[str, list[tuple]]"]


def point_result(plan: SweepPlan, index: int) -> tuple:
    """One row of the results: (index, *values, lower, estimate, upper, proven_lower,
    certified_upper, by, failed). ``proven_lower`` is the answer's ``epsilon_at_least`` where the
    bracket is a dominating pair's (its lower end then no bound on the truth), else the bracket's
    lower end. A point whose rows are invalid together has NaNs and the reason in ``failed``."""
    from .. import api
    from ..engine.view_model import part_failure_text
    values = plan.point(index)
    try:
        a = api.query(plan.composition_at(values), True, plan.delta, plan.eps_error)
    except (ValueError, ArithmeticError, MemoryError) as exc:
        nan = math.nan
        return (index, *values, nan, nan, nan, nan, nan, "", _option_words(part_failure_text(exc)))
    proven = a.lower if a.epsilon_at_least is None else a.epsilon_at_least
    return (index, *values, a.lower, a.estimate, a.upper, proven, a.certified_upper.value, a.certified_upper.by,
            "" if a.failed is None else _option_words(a.failed))


def _option_words(text: str) -> str:
    return text.replace("accuracy (ε error)", "--eps-error")  # as `prvgui epsilon` words it


def compute_chunk(plan: SweepPlan, start: int, stop: int) -> tuple[str, list[tuple]]:
    """The points start..stop-1, and the prvgui version that computed them (run on a worker)."""
    return __version__, [point_result(plan, i) for i in range(start, stop)]


def point_seconds(plan: SweepPlan) -> float:
    """A point's cost by the accountant's estimate, the largest at the grid's two corners."""
    from .. import api
    seconds = MIN_POINT_SECONDS
    for values in {plan.point(0), plan.point(plan.total - 1)}:
        try:
            acc = api.accountant(plan.composition_at(values), plan.eps_error)
            seconds = max(seconds, acc.cost(delta=plan.delta).seconds)
        except (ValueError, ArithmeticError, MemoryError):  # the point will say why itself
            pass
    return seconds


def choose_chunk_size(plan: SweepPlan, seconds: float | None = None) -> int:
    """Points per chunk: about CHUNK_SECONDS of estimated work (``seconds`` a point), at most
    MAX_CHUNK, and small enough for MIN_CHUNKS chunks."""
    by_cost = int(CHUNK_SECONDS / (point_seconds(plan) if seconds is None else seconds))
    return max(1, min(MAX_CHUNK, by_cost, -(-plan.total // MIN_CHUNKS)))


def local_workers() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # (not Linux)
        return os.cpu_count() or 1


@dataclass(frozen=True)
class Summary:
    points: int
    computed: int  # points computed by this run (the others were finished before)
    failed: int  # points whose PRV bracket failed (their certified upper may still hold)
    seconds: float
    chunk_size: int
    where: str


#: glibc's malloc settings (mallopt numbers) and the values its dynamic thresholds settle at on a
#: 64-bit machine (32 MiB, twice that): Dask's nannies set MALLOC_TRIM_THRESHOLD_, which switches
#: the dynamic thresholds off, and every array above 128 KiB is then mapped and unmapped anew
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
_MALLOC = ((_M_MMAP_THRESHOLD, 32 << 20), (_M_TRIM_THRESHOLD, 64 << 20))
_tuned = [False]


def _tune_worker() -> None:
    """A Dask worker tuned as the ``prvgui`` command tunes its process (tuning.py): freed memory
    kept for reuse, the objects alive after the imports out of the collector's way. Once per
    process, and only in a worker process of its own (a nanny's child), not in a caller's process
    that hosts threaded workers. Measured, this makes a worker's point as fast as a single query's."""
    import gc
    import multiprocessing
    from ..tuning import keep_freed_memory
    if _tuned[0] or multiprocessing.parent_process() is None:
        return
    _tuned[0] = True
    if keep_freed_memory():  # (glibc, and not switched off by PRVGUI_HEAP_PAD=0)
        import ctypes
        libc = ctypes.CDLL("libc.so.6")
        for option, value in _MALLOC:
            libc.mallopt(option, value)
    gc.freeze()


def _on_worker(compute: Computer, plan: SweepPlan, start: int, stop: int) -> tuple[str, list[tuple]]:
    _tune_worker()
    return compute(plan, start, stop)


@contextlib.contextmanager
def _workers_ignore_ctrl_c() -> Iterator[None]:
    """Worker processes started in the block ignore SIGINT (an ignored signal stays ignored through
    exec, and Python then keeps it so): Ctrl-C on a terminal reaches the whole process group, and
    this process alone is to stop the sweep, closing the cluster, instead of every worker printing
    its own KeyboardInterrupt. (Only from the main thread, where signal handlers can be set.)"""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old)


def _dask():
    try:
        import dask.distributed as dd
    except ImportError:
        raise ValueError(f"running a sweep on Dask needs the sweep extra ({EXTRA}); or run it in this "
                         "process with --workers 1") from None
    return dd


def run_sweep(plan: SweepPlan, out: str, *, workers: int | None = None, scheduler: str | None = None,
              client=None, chunk_size: int | None = None, restart: bool = False,
              progress: Callable[[int, int], None] | None = None, cancel=None,
              compute: Computer = compute_chunk) -> Summary:
    """Compute every point of ``plan`` not finished yet and write ``out`` (.csv or .parquet).

    ``workers`` local processes (default: every core; 1: this process), or ``scheduler`` (the
    address of a Dask scheduler), or ``client`` (a ``dask.distributed.Client`` of the caller's,
    left open). ``progress(done, total)`` after each chunk; ``cancel`` (an Event or a callable)
    is checked between chunks and raises ``Cancelled``. Finished chunks stay on disk whatever
    stops the sweep; run it again to go on."""
    t0 = time.monotonic()
    out_format(out)
    if workers is not None and workers < 1:
        raise ValueError(f"--workers must be at least 1; you typed {workers}")
    seconds = point_seconds(plan)
    journal = Journal(out, plan, chunk_size or choose_chunk_size(plan, seconds))
    done = journal.open(restart)
    todo = [k for k in range(journal.chunks) if k not in done]
    finished = plan.total - sum(len(journal.span(k)) for k in todo)
    left = plan.total - finished
    stop = (cancel.is_set if hasattr(cancel, "is_set") else cancel) or (lambda: False)
    state = {"done": finished, "failed": 0}

    def keep(k: int, version: str, rows: list[tuple]) -> None:
        if version != __version__:
            raise ValueError(f"the workers run prvgui {version}, this is prvgui {__version__}: install the "
                             "same version on the cluster")
        journal.write(k, rows)
        state["done"] += len(rows)
        state["failed"] += sum(1 for r in rows if r[-1])
        if progress is not None:
            progress(state["done"], plan.total)

    if progress is not None:
        progress(finished, plan.total)
    n = local_workers() if workers is None else workers
    if workers is None and left * seconds < n * START_SECONDS:  # sooner done here than a cluster started
        n = 1
    where = (f"Dask at {scheduler}" if scheduler else "a Dask client" if client is not None
             else "this process" if n == 1 or not todo else f"{n} local worker processes (Dask)")
    if client is None and scheduler is None and (n == 1 or not todo):
        for k in todo:
            if stop():
                raise Cancelled("sweep cancelled")
            span = journal.span(k)
            keep(k, *compute(plan, span.start, span.stop))
    elif todo:
        _on_dask(journal, todo, keep, stop, compute, client, scheduler, n)
    journal.assemble()
    return Summary(plan.total, plan.total - finished, state["failed"], time.monotonic() - t0,
                   journal.chunk_size, where)


def _on_dask(journal: Journal, todo: list[int], keep, stop, compute, client, scheduler, n: int) -> None:
    dd = _dask()
    cluster = own = None
    try:
        if client is None:
            if scheduler is not None:
                try:
                    own = client = dd.Client(scheduler, timeout="30s")
                except (OSError, ValueError, TypeError) as exc:  # (a refused, unknown or malformed address)
                    raise ValueError(f"--scheduler {scheduler!r}: {exc}") from None
            else:
                import logging
                with _workers_ignore_ctrl_c():
                    cluster = dd.LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                                              dashboard_address="127.0.0.1:0", silence_logs=logging.CRITICAL)
                own = client = dd.Client(cluster)
        tag = journal.plan.digest()[:12]
        plan = client.scatter(journal.plan, broadcast=True, hash=False)  # (sent once, not per chunk)
        futures = {client.submit(_on_worker, compute, plan, journal.span(k).start, journal.span(k).stop,
                                 key=f"prvgui-sweep-{tag}-{k}", pure=False): k for k in todo}
        pending = set(futures)
        try:
            while pending:
                if stop():
                    raise Cancelled("sweep cancelled")
                try:
                    ready, pending = dd.wait(pending, timeout=0.5, return_when="FIRST_COMPLETED")
                except TimeoutError:
                    continue
                for f in ready:
                    try:
                        answer = f.result()
                    except ImportError as exc:  # (a worker without prvgui cannot unpickle the task)
                        raise ValueError(f"the Dask workers cannot import prvgui ({exc}): install prvgui "
                                         f"{__version__} on the cluster") from None
                    keep(futures[f], *answer)
        finally:
            for f in pending:
                f.cancel()
    finally:
        if own is not None:
            own.close()
        if cluster is not None:
            cluster.close()
