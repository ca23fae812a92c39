"""Background computation: edits update the results, invalid input computes nothing, Cancel,
a newer edit supersedes a running job, the event loop keeps running, plots hold the last result."""
import numpy as np
import pytest
from PySide6.QtCore import Qt, QTimer

from prvgui.document.model import RowSpec, Targets
from prvgui.gui.fmt import fmt_bound
from prvgui.gui.table_model import COL_COUNT

from conftest import HOLD_COUNT

TIMEOUT = 60_000
#: a job that runs until it is cancelled (the window's engine is conftest.holding_engine)
LONG = [RowSpec("subsampled_gaussian", {"sigma": 1.0, "sampling_rate": 0.001, "sensitivity": 1.0}, HOLD_COUNT,
                "a job that runs until cancelled")]
LONG_TARGETS = Targets(1e-5, 1.0, 0.001)


def test_editing_a_cell_updates_the_results(qtbot, window, load):
    first = load(window)
    assert window.results.result is first
    assert fmt_bound(first.epsilon.upper) in window.results.headline.text()
    model = window.composition.model
    with qtbot.waitSignal(window.recomputer.result_ready, timeout=TIMEOUT) as blocker:
        assert model.setData(model.index(0, COL_COUNT), "2000")
    second = blocker.args[0]
    assert second.request.rows[0].count == 2000
    assert second.epsilon.upper > first.epsilon.upper  # more steps, less privacy
    assert window.results.result is second
    assert fmt_bound(second.epsilon.upper) in window.results.headline.text()
    assert not window.results.banner.isVisible()


def test_changing_the_noise_in_the_form_moves_the_bounds(qtbot, window, load):
    first = load(window)
    window.composition.select_row(0)
    sigma = window.composition.form.params["sigma"].edit
    with qtbot.waitSignal(window.recomputer.result_ready, timeout=TIMEOUT) as blocker:
        sigma.selectAll()
        qtbot.keyClicks(sigma, "3.5")
    assert window.doc.row(0).params["sigma"] == 3.5
    assert blocker.args[0].epsilon.upper < first.epsilon.upper
    assert window.stack.count() == 1  # three keystrokes, one undo step
    with qtbot.waitSignal(window.recomputer.result_ready, timeout=TIMEOUT) as blocker:
        window.stack.undo()
    assert blocker.args[0].epsilon.upper == pytest.approx(first.epsilon.upper)
    assert sigma.text() == "2"


@pytest.mark.parametrize("field,typed,label", [("count", "abc", "Count"), ("count", "-3", "Count"),
                                               ("sigma", "nan", "Noise multiplier σ"),
                                               ("sigma", "inf", "Noise multiplier σ"),
                                               ("sampling_rate", "1.5", "Sampling rate q"),
                                               ("sigma", "", "Noise multiplier σ")])
def test_invalid_input_is_flagged_and_nothing_is_computed(qtbot, window, load, field, typed, label):
    load(window)
    window.composition.select_row(0)
    form = window.composition.form
    edit = form.count.edit if field == "count" else form.params[field].edit
    submitted = window.recomputer.submitted
    with qtbot.waitSignal(window.recomputer.blocked, timeout=TIMEOUT) as blocker:
        edit.selectAll()
        if typed:
            qtbot.keyClicks(edit, typed)
        else:
            qtbot.keyClick(edit, Qt.Key.Key_Backspace)
    message = blocker.args[0]
    assert message.startswith(f"fix row 1: {label} must be "), message
    assert window.recomputer.submitted == submitted  # the engine was never called
    assert "fix row 1" in window.status.text().lower()
    assert edit.styleSheet()  # the field is marked
    assert label in edit.toolTip() and field not in edit.toolTip()
    assert form.error_label.isVisible() and form.error_label.text().startswith(f"Row 1: {label} must be ")
    assert form.error_label.text().count(label) == 1
    assert window.results.banner.isVisible()
    assert window.composition.model.row_error(0) is not None


def test_invalid_targets_are_flagged_and_nothing_is_computed(qtbot, window, load):
    load(window)
    submitted = window.recomputer.submitted
    delta = window.targets.fields["delta"]
    for typed in ("2", "0", "abc", "nan", "-1e-5"):
        with qtbot.waitSignal(window.recomputer.blocked, timeout=TIMEOUT) as blocker:
            delta.selectAll()
            qtbot.keyClicks(delta, typed)
        assert blocker.args[0].startswith("fix the targets: Target δ must be "), blocker.args[0]
        assert blocker.args[0].count("Target δ") == 1
        assert delta.styleSheet()
    assert window.recomputer.submitted == submitted
    assert window.doc.targets.delta == 1e-5  # the document never saw the bad value
    err = window.targets.fields["eps_error"]
    with qtbot.waitSignal(window.recomputer.result_ready, timeout=TIMEOUT) as blocker:
        delta.selectAll()
        qtbot.keyClicks(delta, "1e-6")
    assert blocker.args[0].request.delta == 1e-6
    with qtbot.waitSignal(window.recomputer.blocked, timeout=TIMEOUT) as blocker:
        err.selectAll()
        qtbot.keyClicks(err, "1e-9")
    assert blocker.args[0] == ("fix the targets: Accuracy (ε error) must be between 1e-6 and 10; "
                               "you typed 1e-9")
    assert window.doc.targets.eps_error != 1e-9
    assert window.targets.error() is not None
    # and a composition cannot be saved while a target is invalid
    assert not window.files.save_as(window.files.last_folder() + "/never.json")
    assert window.errors[-1] == ("Fix the targets before saving: Accuracy (ε error) must be between "
                                 "1e-6 and 10; you typed 1e-9")


def test_cancel_stops_a_long_job_and_the_window_stays_responsive(qtbot, window):
    ticks = []
    ticker = QTimer()
    ticker.setInterval(10)
    ticker.timeout.connect(lambda: ticks.append(1))
    with qtbot.waitSignal(window.recomputer.progress, timeout=TIMEOUT):
        window.doc.reset(LONG, "add_remove", LONG_TARGETS)
    results = []
    window.recomputer.result_ready.connect(lambda r, c: results.append(r))
    ticker.start()
    qtbot.waitUntil(lambda: len(ticks) >= 30, timeout=TIMEOUT)  # the event loop runs beside the job
    ticker.stop()
    assert window.recomputer.state == "running"
    assert window.cancel_button.isVisible() and window.progress.isVisible()
    with qtbot.waitSignal(window.recomputer.cancelled, timeout=10_000):
        qtbot.mouseClick(window.cancel_button, Qt.MouseButton.LeftButton)
    assert results == []
    assert window.recomputer.state == "idle"
    assert "Cancelled" in window.status.text()
    assert not window.cancel_button.isVisible()


def test_a_newer_edit_supersedes_the_running_job(qtbot, window, small_rows):
    results = []
    window.recomputer.result_ready.connect(lambda r, c: results.append(r))
    with qtbot.waitSignal(window.recomputer.progress, timeout=TIMEOUT):
        window.doc.reset(LONG, "add_remove", LONG_TARGETS)
    long_id = window.recomputer.latest_id
    with qtbot.waitSignal(window.recomputer.result_ready, timeout=TIMEOUT):
        window.editor.replace(0, small_rows[0])
    # the long job was cancelled and its answer, had it come, was dropped
    qtbot.waitUntil(lambda: window.recomputer.state == "idle", timeout=TIMEOUT)
    assert [r.request.rows[0].count for r in results] == [200]
    assert results[0].request.request_id > long_id
    assert window.results.result.request.rows[0].count == 200


def test_plots_hold_the_data_of_the_last_result(qtbot, window, load):
    load(window)
    model = window.composition.model
    with qtbot.waitSignal(window.recomputer.result_ready, timeout=TIMEOUT) as blocker:
        model.setData(model.index(0, COL_COUNT), "500")
    result = blocker.args[0]
    checks = {"profile": (result.profile, ("lower", "estimate", "upper", "rdp", "gdp")),
              "tradeoff": (result.tradeoff, ("lower", "estimate", "upper", "gdp")),
              "steps": (result.steps, ("lower", "estimate", "upper", "rdp", "gdp")),
              "pld": (result.pld, ("density",))}
    for kind, (curve, names) in checks.items():
        tab = window.plots[kind]
        assert tab.result is result
        for name in names:
            x, y = tab.data(name)
            np.testing.assert_array_equal(x, curve.x)
            np.testing.assert_array_equal(y, curve.columns[name])
            # what is drawn is the same data (log axes only blank out what they cannot show)
            dx, dy = tab.curves[name].getData()  # in axis units: log10 on a log axis
            if tab.log_x_box.isChecked():
                dx = 10 ** dx
            if tab.log_y_box.isChecked():
                dy = 10 ** dy
            ok = np.isfinite(dy)
            assert ok.sum() > 0.5 * dy.size
            np.testing.assert_allclose(dy[ok], np.interp(dx[ok], curve.x, curve.columns[name]),
                                       rtol=1e-9)
    assert result.steps.x[-1] == 500
    region_x, region_y = window.plots["tradeoff"].data("region")
    assert region_y[0] == pytest.approx(1 - result.request.delta)


def test_copy_results_as_text(qtbot, window, load):
    from PySide6.QtWidgets import QApplication
    result = load(window)
    window.copy_results()
    text = QApplication.clipboard().text()
    assert f"ε ≤ {fmt_bound(result.epsilon.upper, 6)}" in text
    assert "RDP" in text and "GDP" in text and "approximation, may under-report" in text


def test_a_first_computation_says_so_where_the_empty_message_was(qtbot, window):
    """A fresh window says the composition is empty; once rows come (a workload imported, a file
    opened) and their first computation runs, the results say it is computing, not "empty"."""
    assert "composition is empty" in window.results.detail.text()
    with qtbot.waitSignal(window.recomputer.progress, timeout=TIMEOUT):
        window.doc.reset(LONG, "add_remove", LONG_TARGETS)
    assert window.recomputer.state == "running"
    assert "empty" not in window.results.detail.text()
    assert window.results.detail.text().startswith("Computing…")
    with qtbot.waitSignal(window.recomputer.cancelled, timeout=10_000):
        qtbot.mouseClick(window.cancel_button, Qt.MouseButton.LeftButton)


def test_an_empty_composition_computes_nothing(qtbot, window, load):
    load(window)
    with qtbot.waitSignal(window.recomputer.blocked, timeout=TIMEOUT):
        window.doc.reset([], "add_remove", Targets())
    assert window.results.result is None
    assert all(tab.result is None for tab in window.plots.values())
    assert "empty" in window.status.text()


def test_crosshair_readout_and_log_toggles(qtbot, window, load):
    result = load(window)
    tab = window.plots["profile"]
    window.tabs.setCurrentWidget(tab)
    qtbot.waitExposed(tab.plot_widget)
    vb = tab.plot_item.vb
    centre = vb.sceneBoundingRect().center()
    tab.plot_widget.scene().sigMouseMoved.emit(centre)
    text = tab.readout.text()
    assert text.startswith("ε = ") and "δ(ε) = " in text
    assert "PRV upper" in text and "RDP" in text and "GDP" in text
    # the value shown for "PRV upper" is the curve's value at the sample nearest the mouse
    x = vb.mapSceneToView(centre).x()
    k = int(abs(result.profile.x - x).argmin())
    from prvgui.gui.fmt import fmt
    assert f"PRV upper {fmt(result.profile.columns['upper'][k])}" in text
    # switching the axes keeps the data, only its drawing changes
    tab.log_y_box.setChecked(False)
    tab.log_x_box.setChecked(True)
    x_drawn, y_drawn = tab.curves["upper"].getData()
    assert tab.plot_item.getAxis("bottom").logMode and not tab.plot_item.getAxis("left").logMode
    np.testing.assert_allclose(10 ** x_drawn, result.profile.x[result.profile.x > 0])
    np.testing.assert_array_equal(tab.data("upper")[1], result.profile.columns["upper"])
    tab.plot_widget.scene().sigMouseMoved.emit(centre + type(centre)(10_000, 0))  # outside: crosshair hides
    assert "PRV upper" in tab.readout.text()
