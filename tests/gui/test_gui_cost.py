"""Cost before work in the window: a setting the engine estimates as costly is not started
silently; the results area asks ("Compute anyway" / "Don't compute") and nothing is computed
until the user confirms. The engine's estimate is the real one; its compute is a recording fake."""
from dataclasses import replace

import pytest
from PySide6.QtCore import Qt

from prvgui.engine.view_model import compute
from prvgui.document.model import RowSpec, Targets

from conftest import FAST_TARGETS, RESULT_TIMEOUT

DPSGD = [RowSpec("subsampled_gaussian", {"sigma": 1.1, "sampling_rate": 0.0042667, "sensitivity": 1.0}, 14063,
                 "DP-SGD")]
#: accuracy 1e-6 on DP-SGD: estimated at minutes and gigabytes (the issue's silent 120 s)
COSTLY = Targets(1e-5, 1.0, 1e-6)


@pytest.fixture
def calls():
    return []


@pytest.fixture
def cost_window(qtbot, calls):
    """A window with the engine's estimate and a compute that records its requests and then
    computes them at a coarse accuracy (so that a confirmed costly request answers quickly)."""
    from prvgui.gui.main_window import MainWindow

    def recording(request, progress=None, cancel=None):
        calls.append(request)
        cheap = replace(request, eps_error=max(request.eps_error, 0.05), steps_row=None)
        return compute(cheap, progress=progress, cancel=cancel)

    w = MainWindow(persist=False, compute_fn=recording)
    w.files.ask_unsaved = lambda: "discard"
    qtbot.addWidget(w)
    w.resize(1280, 800)
    w.show()
    yield w
    w.close()
    assert not w.recomputer.is_thread_running()


def ask(qtbot, w, targets=COSTLY):
    with qtbot.waitSignal(w.recomputer.confirm_needed, timeout=RESULT_TIMEOUT) as blocker:
        w.doc.reset(DPSGD, "add_remove", targets)
    return blocker.args[0]


def test_a_costly_setting_waits_for_compute_anyway(qtbot, cost_window, calls):
    w = cost_window
    estimate = ask(qtbot, w)
    prompt = w.results.prompt
    assert estimate.seconds > 5 or estimate.bytes > 1e9
    assert prompt.isVisible() and w.recomputer.state == "waiting"
    assert estimate.describe() in prompt.title.text()
    assert "Accuracy 1e-06 needs a grid of" in prompt.detail.text()
    assert "Compute anyway" in w.status.text() and not w.progress.isVisible()
    assert calls == []
    qtbot.wait(300)  # the event loop runs on: still nothing is computed
    assert calls == [] and w.recomputer.state == "waiting"
    with qtbot.waitSignal(w.recomputer.result_ready, timeout=RESULT_TIMEOUT):
        qtbot.mouseClick(prompt.compute_button, Qt.MouseButton.LeftButton)
    assert [r.eps_error for r in calls] == [1e-6]
    assert not prompt.isVisible()
    assert w.results.result is not None and w.recomputer.state == "idle"


def test_dont_compute_keeps_the_last_result_out_of_date(qtbot, cost_window, calls):
    w = cost_window
    with qtbot.waitSignal(w.recomputer.result_ready, timeout=RESULT_TIMEOUT):
        w.doc.reset(DPSGD, "add_remove", FAST_TARGETS)
    shown = w.results.result
    assert len(calls) == 1
    ask(qtbot, w)
    assert w.results.banner.isVisible() and "Compute anyway" in w.results.banner.text()
    with qtbot.waitSignal(w.recomputer.cancelled, timeout=RESULT_TIMEOUT):
        qtbot.mouseClick(w.results.prompt.cancel_button, Qt.MouseButton.LeftButton)
    assert len(calls) == 1  # the costly request never reached the engine
    assert not w.results.prompt.isVisible() and w.recomputer.state == "idle"
    assert w.results.result is shown and w.results.banner.isVisible()
    assert "Cancelled" in w.status.text()


def test_an_edit_replaces_the_prompt(qtbot, cost_window, calls):
    w = cost_window
    ask(qtbot, w)
    with qtbot.waitSignal(w.recomputer.result_ready, timeout=RESULT_TIMEOUT) as blocker:
        err = w.targets.fields["eps_error"]
        err.selectAll()
        qtbot.keyClicks(err, "0.05")
    assert not w.results.prompt.isVisible()
    assert [r.eps_error for r in calls] == [0.05]
    assert blocker.args[0].request.eps_error == 0.05


def test_cheap_settings_start_without_asking(qtbot, cost_window, calls):
    w = cost_window
    asked = []
    w.recomputer.confirm_needed.connect(asked.append)
    with qtbot.waitSignal(w.recomputer.result_ready, timeout=RESULT_TIMEOUT):
        w.doc.reset(DPSGD, "add_remove", FAST_TARGETS)
    assert asked == [] and len(calls) == 1 and not w.results.prompt.isVisible()


def test_the_progress_bar_moves_during_a_composition(qtbot, window, monkeypatch):
    from prvgui.gui import compute_view as compute_view_mod
    from prvgui.gui import worker as worker_mod
    from prvgui.accounting.numerics import compose as compose_mod
    from prvgui.accounting.numerics import discretize as disc_mod
    monkeypatch.setattr(compose_mod, "POWER_CHUNK", 1 << 12)
    monkeypatch.setattr(disc_mod, "EDGE_CHUNK", 1 << 12)
    monkeypatch.setattr(worker_mod, "PROGRESS_EVERY", 0.0)  # every report the engine makes
    monkeypatch.setattr(compute_view_mod, "PROGRESS_SHOWN_S", 0.0)  # ... and the bar shows each
    values = []
    window.progress.valueChanged.connect(values.append)
    rows = [RowSpec("laplace", {"scale": 10.0, "sensitivity": 1.0}, 50, "counts"),
            RowSpec("subsampled_gaussian", {"sigma": 1.0, "sampling_rate": 0.01, "sensitivity": 1.0}, 300,
                    "sgd")]
    with qtbot.waitSignal(window.recomputer.result_ready, timeout=RESULT_TIMEOUT):
        window.doc.reset(rows, "add_remove", Targets(1e-6, 1.0, 1e-2))
    composing = [v for v in values if 20 < v < 420]  # the bar's 2% to 42%: epsilon at delta
    assert len(set(composing)) > 10
    assert composing == sorted(composing)


def test_progress_reaches_the_window_at_most_once_per_interval_and_at_the_end():
    """The worker passes the engine's progress on at once, then at most once per PROGRESS_EVERY
    seconds (each report repaints the bar), and the end always."""
    from prvgui.gui import worker as worker_mod
    got = []
    report = worker_mod._throttled(lambda f, t: got.append((f, t)))
    for i in range(1000):
        report(i / 1000, "composing")
    report(1.0, "done")
    assert got[0] == (0.0, "composing") and got[-1] == (1.0, "done")
    assert len(got) <= 3  # 1000 reports in far less than a second: the first, the end, maybe one


def test_the_progress_bar_moves_at_most_every_tenth_of_a_second_and_at_the_end(window):
    from prvgui.gui import compute_view as compute_view_mod
    values = []
    window.progress.valueChanged.connect(values.append)
    view = window.computing
    for i in range(200):  # a burst of reports within a few ms
        view._on_progress(i / 200, "composing")
    assert 1 <= len(values) <= 2
    view._on_progress(1.0, "done")
    assert values[-1] == 1000
    assert compute_view_mod.PROGRESS_SHOWN_S == 0.1


@pytest.mark.parametrize("first,whole,asked", [(1.0, 30.0, False), (1.0, 100.0, True), (8.0, 30.0, True),
                                               (None, 30.0, True), (None, 3.0, False)])
def test_the_prompt_looks_at_the_first_answer_and_bounds_the_whole(qtbot, first, whole, asked):
    """Parts that come as they are ready do not hold the window back: a request whose headline
    is due within PROMPT_SECONDS starts at once unless the whole would pass
    PROMPT_WHOLE_SECONDS (a cost without a first answer is judged on the whole, as before)."""
    from prvgui.engine.view_model import Cost, Request
    from prvgui.gui.worker import Recomputer
    done = []

    def engine(request, progress=None, cancel=None):
        done.append(request)
        return "answer"
    rec = Recomputer(lambda: (Request((), delta=1e-5), "context"), compute_fn=engine, debounce_ms=0,
                     cost_fn=lambda r: Cost(whole, 1e6, first=first))
    try:
        signal = rec.confirm_needed if asked else rec.result_ready
        with qtbot.waitSignal(signal, timeout=5000):
            rec.run_now()
        assert (done == []) == asked and rec.state == ("waiting" if asked else "idle")
    finally:
        rec.shutdown()
