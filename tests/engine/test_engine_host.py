"""The window's engine process (engine/host.py): the same answers as in-process, progress and
partial answers on the way, cancel, errors and a dead child."""
from __future__ import annotations

import os
import threading

import pytest

from prvgui.engine import view_model as vm
from prvgui.accounting.core.errors import Cancelled
from prvgui.accounting.mechanisms import Laplace, Row, SubsampledGaussian
from prvgui.engine.host import EngineStopped, RemoteEngine, default_engine


@pytest.fixture(scope="module")
def engine():
    eng = RemoteEngine()
    eng.start()
    yield eng
    eng.stop()


def request(sigma: float = 1.0, eps_error: float = 0.05, **kw) -> vm.Request:
    rows = (Row(SubsampledGaussian(sigma, 0.01), 2000), Row(Laplace(5.0), 3))
    return vm.Request(rows, 1e-5, 1.0, eps_error, **kw)


def test_the_same_answer_as_in_process_with_progress_and_partial_answers(engine):
    req = request(profile_points=20, tradeoff_points=11, steps_row=0, steps_points=8)
    seen, parts = [], []
    got = engine.compute(req, progress=lambda f, t: seen.append(f), cancel=lambda: False,
                         partial=parts.append)
    here = vm.compute(req)
    assert got.epsilon == here.epsilon and got.delta == here.delta
    assert list(got.steps.columns["upper"]) == list(here.steps.columns["upper"])
    assert parts and parts[0].pending and not got.pending and seen and max(seen) == 1.0
    assert engine.cost(req) == vm.cost(req)


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="thread priorities are read from Linux's /proc")
def test_every_thread_of_the_child_is_nicer_than_the_window(engine):
    # os.nice alone changed the child's main thread only: the BLAS threads NumPy started at
    # import kept the window's priority
    engine.cost(request())  # the child has run its start-up
    pid = engine._proc.pid

    def nice(task: str) -> int:
        with open(f"{task}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[16])
    here = nice(f"/proc/self/task/{threading.get_native_id()}")
    tasks = [f"/proc/{pid}/task/{t}" for t in os.listdir(f"/proc/{pid}/task")]
    assert tasks and all(nice(t) >= here + 5 or nice(t) == 19 for t in tasks)


def test_errors_come_back_with_their_message(engine):
    with pytest.raises(ValueError, match="Target δ must be greater than 0 and less than 1; you typed 2"):
        engine.compute(vm.Request(request().rows, 2.0, None, 0.05))
    assert engine.compute(request()).epsilon.upper > 0  # and the engine goes on


def test_cancel_stops_the_child_and_the_next_request_runs(engine):
    slow = request(sigma=0.6, eps_error=0.002, profile_points=100, tradeoff_points=101, steps_row=0,
                   steps_points=40)
    stop = threading.Event()
    threading.Timer(0.2, stop.set).start()
    with pytest.raises(Cancelled):  # (no clock: cancelled rather than finished is the answer)
        engine.compute(slow, cancel=stop.is_set)
    assert engine.compute(request()).epsilon == vm.compute(request()).epsilon


def test_a_failing_callback_stops_the_job(engine):
    def boom(res):
        raise KeyError("window gone")
    with pytest.raises(KeyError):
        engine.compute(request(profile_points=10), partial=boom)
    assert engine.compute(request()).epsilon == vm.compute(request()).epsilon


def test_a_child_that_dies_at_work_is_reported_and_replaced(engine):
    slow = request(sigma=0.6, eps_error=0.002, profile_points=100, tradeoff_points=101, steps_row=0,
                   steps_points=40)
    proc = engine._proc
    threading.Timer(0.3, proc.kill).start()
    with pytest.raises(EngineStopped, match="stopped"):
        engine.compute(slow)
    assert engine.compute(request()).epsilon == vm.compute(request()).epsilon
    assert engine._proc is not proc


def test_thread_mode_has_no_engine(monkeypatch):
    monkeypatch.setenv("PRVGUI_ENGINE", "thread")
    assert default_engine() is None
    monkeypatch.setenv("PRVGUI_ENGINE", "process")
    assert os.environ["PRVGUI_ENGINE"] == "process" and default_engine() is not None


def test_a_child_that_cannot_work_leaves_the_work_to_this_process(monkeypatch):
    eng = RemoteEngine()
    monkeypatch.setattr("prvgui.engine.host._serve", _die)
    for _ in range(2):
        with pytest.raises(EngineStopped):
            eng.compute(request())
    assert eng.compute(request()).epsilon == vm.compute(request()).epsilon  # in this process
    eng.stop()


def _die(conn, cancel) -> None:
    raise SystemExit(3)


def test_poke_passes_the_running_jobs_cancel_on_and_never_the_next_ones(engine):
    """The window pokes the engine after an edit: the child's event is set only if the running
    job's own token says so; a poke between jobs, or with an old token, cancels nothing."""
    slow = request(sigma=0.6, eps_error=0.002, profile_points=100, tradeoff_points=101, steps_row=0,
                   steps_points=40)
    running, stop, seen = threading.Event(), threading.Event(), {}
    main = threading.main_thread()

    def token() -> bool:  # true for this (the poking) thread only: the relay never sees it
        return stop.is_set() and threading.current_thread() is main

    def run():
        try:
            seen["answer"] = engine.compute(slow, progress=lambda f, t: running.set(), cancel=token)
        except Cancelled:
            seen["cancelled"] = True

    th = threading.Thread(target=run)
    th.start()
    assert running.wait(60)
    engine.poke()  # the token says go on
    assert not engine._cancel.is_set()
    stop.set()
    engine.poke()
    assert engine._cancel.is_set()  # set by the poke: the relay's own looks see False
    th.join(60)
    assert seen == {"cancelled": True}
    engine.poke()  # no job: nothing to cancel; the old token is forgotten
    assert engine._current_cancel is None
    assert engine.compute(request(), cancel=lambda: False).epsilon == vm.compute(request()).epsilon


def test_the_childs_messages_from_many_threads_arrive_whole(monkeypatch):
    """The child's loop sends one message at a time: partial answers (large, so each send is a
    header and a body) from several threads at once, as a cancelled job's abandoned helper and
    the job's end can, all arrive and unpickle (without the lock: 'invalid load key')."""
    import multiprocessing
    from prvgui.engine import host
    monkeypatch.setattr(host, "_lower_process_priority", lambda: None)
    monkeypatch.setattr("prvgui.tuning.keep_freed_memory", lambda: None)
    big = "x" * 100_000

    def compute(request, progress=None, cancel=None, partial=None):
        threads = [threading.Thread(target=lambda i=i: [partial((i, j, big)) for j in range(30)]) for i in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        return "answer"
    monkeypatch.setattr(vm, "compute", compute)
    here, there = multiprocessing.Pipe()
    server = threading.Thread(target=host._serve, args=(there, threading.Event()))
    server.start()
    here.send(("compute", 1, None))
    got = []
    while True:
        assert here.poll(60), "the child's loop fell silent"
        tag, jid, payload = here.recv()
        got.append(payload)
        if tag == "done":
            break
    here.send(("stop", 0, None))
    server.join(10)
    assert payload == "answer" and len(got) == 6 * 30 + 1
    assert sorted(p[:2] for p in got[:-1]) == [(i, j) for i in range(6) for j in range(30)]
    assert all(p[2] == big for p in got[:-1])
