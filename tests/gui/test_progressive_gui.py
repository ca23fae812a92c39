"""Progressive results in the window: the headline before the plots, plots still computing are
marked as out of date (dimmed, "Updating…"), never shown as current, and a new edit drops every
later answer of the request it replaces."""
import threading

import pytest

from prvgui.accounting.core.errors import Cancelled
from prvgui.engine.view_model import CURVES, PARTS, compute
from prvgui.document.model import RowSpec
from prvgui.gui.compute_view import UPDATING

from conftest import FAST_TARGETS, RESULT_TIMEOUT, holding_cost

ROWS = [RowSpec("subsampled_gaussian", {"sigma": 1.0, "sampling_rate": 0.01, "sensitivity": 1.0}, 300, "sgd"),
        RowSpec("laplace", {"scale": 10.0, "sensitivity": 1.0}, 3, "counts")]


class Gate:
    """The engine, held after its headline until ``open`` is set (or the job is cancelled)."""

    def __init__(self) -> None:
        self.open = threading.Event()
        self.held = threading.Event()
        self.cancelled = []

    def __call__(self, request, progress=None, cancel=None, partial=None):
        def hold(result):
            partial(result)
            if result.pending and result.pending[0] == "delta":  # the headline: wait here
                self.held.set()
                while True:
                    if cancel():
                        self.cancelled.append(request.request_id)
                        raise Cancelled("computation cancelled")
                    if self.open.wait(0.01) and not cancel():
                        break
        return compute(request, progress=progress, cancel=cancel, partial=hold)


@pytest.fixture
def gated(qtbot):
    from prvgui.gui.main_window import MainWindow
    gate = Gate()
    w = MainWindow(persist=False, compute_fn=gate, cost_fn=holding_cost)
    w.files.ask_unsaved = lambda: "discard"
    qtbot.addWidget(w)
    w.show()
    yield w, gate
    gate.open.set()
    w.close()


def record_shows(w):
    """[(what, request id)] in the order the window showed them."""
    log = []
    shown = w.results.show_result
    w.results.show_result = lambda r: (log.append(("headline", r.request.request_id)), shown(r))[1]
    for kind, tab in w.plots.items():
        def show(r, tab=tab, kind=kind, orig=tab.show_result):
            log.append((kind, r.request.request_id))
            return orig(r)
        tab.show_result = show
    return log


def test_the_headline_is_shown_before_the_plots_and_then_each_plot(qtbot, window):
    log = record_shows(window)
    partials = []
    window.recomputer.partial_ready.connect(lambda r, c: partials.append(r.pending))
    with qtbot.waitSignal(window.recomputer.result_ready, timeout=RESULT_TIMEOUT) as blocker:
        window.doc.reset(ROWS, "add_remove", FAST_TARGETS)
    final = blocker.args[0]
    assert partials[0] == PARTS
    assert list(partials) == sorted(partials, key=len, reverse=True)
    order = [what for what, rid in log if rid == final.request.request_id]
    assert order[0] == "headline"
    plots = [w for w in order if w != "headline"]
    # each plot once, in the engine's order, except that parts arriving together show the
    # visible plot first (compute_view._show_parts): it may come earlier, never later
    first = plots[:len(CURVES)]
    assert sorted(first) == sorted(CURVES)
    visible = [k for k, tab in window.plots.items() if tab.isVisible()]
    assert [p for p in first if p not in visible] == [c for c in CURVES if c not in visible]
    assert all(first.index(k) <= CURVES.index(k) for k in visible)
    assert plots[len(CURVES):] in ([], ["profile"])  # then the refined profile, if it changed
    assert window.plots["profile"].data("upper")[1].tolist() == final.profile.columns["upper"].tolist()
    for tab in window.plots.values():
        assert tab.result.request.request_id == final.request.request_id and not tab.stale


def test_plots_still_computing_are_marked_never_current(qtbot, gated):
    w, gate = gated
    gate.open.set()
    with qtbot.waitSignal(w.recomputer.result_ready, timeout=RESULT_TIMEOUT):
        w.doc.reset(ROWS, "add_remove", FAST_TARGETS)
    old = {kind: tab.result for kind, tab in w.plots.items()}
    gate.open.clear()
    with qtbot.waitSignal(w.recomputer.partial_ready, timeout=RESULT_TIMEOUT) as blocker:
        w.editor.replace(0, w.doc.row(0).with_param("sigma", 1.3))
    headline = blocker.args[0]
    qtbot.waitUntil(lambda: w.results.result is headline)
    assert headline.request.rows[0].mechanism.sigma == 1.3
    assert not w.results.banner.isVisible()  # the headline is current
    for kind, tab in w.plots.items():  # the plots are not: dimmed and saying so
        assert tab.result is old[kind] and tab.stale
        assert tab.stale_label.text() == UPDATING and tab.plot_item.opacity() < 1
    with qtbot.waitSignal(w.recomputer.result_ready, timeout=RESULT_TIMEOUT):
        gate.open.set()
    for tab in w.plots.values():
        assert not tab.stale and tab.plot_item.opacity() == 1
        assert tab.stale_label.text() == "" and UPDATING not in tab.plot_item.titleLabel.text
        assert tab.result.request.rows[0].mechanism.sigma == 1.3


def test_plots_not_drawn_yet_say_they_are_computing(qtbot, gated):
    """The first answer after opening: while the headline is shown and the plots' parts are
    still coming, every plot says "Computing…", not its empty-composition hint (a schedule of
    many rows spends seconds there)."""
    w, gate = gated
    with qtbot.waitSignal(w.recomputer.partial_ready, timeout=RESULT_TIMEOUT) as blocker:
        w.doc.reset(ROWS, "add_remove", FAST_TARGETS)
    headline = blocker.args[0]
    qtbot.waitUntil(lambda: w.results.result is headline)
    qtbot.waitUntil(lambda: all(tab.hint.text() == "Computing…" for tab in w.plots.values()))
    for tab in w.plots.values():
        assert tab.result is None and tab.stack.currentWidget() is tab.hint
    with qtbot.waitSignal(w.recomputer.result_ready, timeout=RESULT_TIMEOUT):
        gate.open.set()
    assert all(tab.stack.currentWidget() is tab.plot_widget for tab in w.plots.values())


def test_an_edit_drops_the_later_answers_of_the_request_it_replaces(qtbot, gated):
    w, gate = gated
    log = record_shows(w)
    with qtbot.waitSignal(w.recomputer.partial_ready, timeout=RESULT_TIMEOUT):
        w.doc.reset(ROWS, "add_remove", FAST_TARGETS)
    first = w.recomputer.submitted
    assert gate.held.wait(10)
    with qtbot.waitSignal(w.recomputer.result_ready, timeout=RESULT_TIMEOUT) as blocker:
        w.editor.replace(0, w.doc.row(0).with_param("sigma", 1.4))
        gate.open.set()
    final = blocker.args[0]
    assert final.request.request_id > first and final.request.rows[0].mechanism.sigma == 1.4
    assert gate.cancelled == [first]  # the held job stopped at its next cancel check
    assert [what for what, rid in log if rid == first] == ["headline"]  # nothing after the edit
    for tab in w.plots.values():
        assert tab.result.request.request_id == final.request.request_id and not tab.stale


def test_the_headline_alone_says_what_is_still_coming(qtbot):
    """The first answer holds the certified bracket only: the panel shows it, marks the other
    accountants and delta at epsilon as still computing (never as "n/a") and copies nothing yet."""
    from prvgui.engine.view_model import Request
    from prvgui.gui.results_panel import ResultsPanel
    rows = [RowSpec("laplace", {"scale": 10.0}, 3).to_row(),
            RowSpec("subsampled_gaussian", {"sigma": 1.0, "sampling_rate": 0.01}, 100).to_row()]
    seen = []
    final = compute(Request(tuple(rows), 1e-6, 1.0, 0.05, profile_points=0, tradeoff_points=0,
                            want_pld=False, risk_fprs=()), partial=seen.append)
    panel = ResultsPanel()
    qtbot.addWidget(panel)
    panel.show_result(seen[0])
    cells = [[panel.table.item(r, c).text() for c in range(5)] for r in range(panel.table.rowCount())]
    assert cells[0][3] == "…" and cells[1][0] == "Other accountants" and "computing" in cells[1][4]
    assert panel.footer.text().startswith("Headline in") and not panel.copy_button.isEnabled()
    panel.show_result(final)
    cells = [[panel.table.item(r, c).text() for c in range(5)] for r in range(panel.table.rowCount())]
    assert cells[0][3] != "…" and all(row[0] != "Other accountants" for row in cells)
    assert panel.footer.text().startswith("Computed in") and panel.copy_button.isEnabled()


def test_answers_arriving_together_show_one_part_per_pass_of_the_event_loop(qtbot, window):
    """Partial answers queued in one pass (the engine's process sends them as they come) each
    used to show a part at once: 40-70 ms without a repaint or a keystroke between. Now one part
    shows, the rest follow one per timer turn, and the last answer's parts all show."""
    from prvgui.engine.view_model import Request
    rows = tuple(r.to_row() for r in ROWS)
    seen = []
    compute(Request(rows, 1e-5, 1.0, 0.05, request_id=window.recomputer.submitted, profile_points=40,
                    tradeoff_points=40, steps_row=0, want_pld=True, risk_fprs=()), partial=seen.append)
    assert len(seen) >= 3 and seen[-1].pending != seen[0].pending
    log = record_shows(window)
    view = window.computing
    snapshot = window.doc
    for result in seen:  # all in one pass: no event loop between them
        view._on_partial(result, snapshot)
    assert [what for what, _ in log] == ["headline"]
    qtbot.waitUntil(lambda: all(window.plots[k].result is not None for k in CURVES), timeout=5000)
    shown = [what for what, _ in log]
    assert shown[0] == "headline" and sorted(set(shown[1:]) - {"headline"}) == sorted(CURVES)
    # each plot shows the latest answer's curve
    last = seen[-1]
    for kind in CURVES:
        curve = getattr(last, kind)
        assert window.plots[kind].result.request.request_id == last.request.request_id
        if kind == "profile":
            assert window.plots[kind].data("upper")[1].tolist() == curve.columns["upper"].tolist()


def test_the_same_table_again_is_not_rebuilt_and_a_changed_one_is(qtbot):
    from prvgui.engine.view_model import Request
    from prvgui.gui.results_panel import ResultsPanel
    rows = tuple(r.to_row() for r in ROWS)
    seen = []
    final = compute(Request(rows, 1e-6, 1.0, 0.05, profile_points=0, tradeoff_points=0,
                            want_pld=False, risk_fprs=()), partial=seen.append)
    panel = ResultsPanel()
    qtbot.addWidget(panel)
    panel.show_result(final)
    item = panel.table.item(0, 2)
    text = item.text()
    panel.show_result(final)
    assert panel.table.item(0, 2) is item  # the same table: kept
    panel.show_result(seen[0])  # the headline alone: other accountants still computing
    assert panel.table.item(1, 2).text() == "…"
    panel.show_result(final)
    assert panel.table.item(0, 2).text() == text and panel.table.rowCount() > 2
    panel.clear()
    panel.show_result(final)
    assert panel.table.rowCount() > 2 and panel.table.item(0, 2).text() == text
