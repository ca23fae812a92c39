"""Calibrate dialog and budget view: background runs with progress and Cancel, answers equal to
the engine's (calibrate, budget_status), Apply as one undoable edit, invalid input flagged."""
import numpy as np
import pytest
from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QUndoStack
from PySide6.QtWidgets import QDialog

from prvgui.accounting.queries.budget import budget_status
from prvgui.accounting.queries.calibrate import calibrate
from prvgui.document.model import Document, RowSpec, Targets
from prvgui.gui.budget_view import BudgetView
from prvgui.accounting.queries.calibrate import rows_with, sweep_values
from prvgui.gui.calibrate_dialog import CalibrateDialog
from prvgui.gui.calibration_job import run_calibration
from prvgui.gui.fmt import fmt_bound, fmt_value

from conftest import HOLD_COUNT, until_cancelled

TIMEOUT = 60_000
TARGETS = Targets(1e-5, 2.0, 0.01)
#: calibrates in a few seconds (reference: calibrate() on the same rows)
SMALL = [RowSpec("subsampled_gaussian", {"sigma": 1.0, "sampling_rate": 0.01, "sensitivity": 1.0}, 200,
                 "training")]
#: a search that runs until it is cancelled (the dialogs' work is ``holding``)
LONG = [RowSpec("subsampled_gaussian", {"sigma": 1.0, "sampling_rate": 0.01, "sensitivity": 1.0}, HOLD_COUNT,
                "long training")]


def holding(work):
    """``work`` (the dialog's or the budget view's), except that rows with a HOLD_COUNT row run
    until cancelled."""
    def run(first, *args, **kwargs):
        rows = first.rows if hasattr(first, "rows") else first
        if any(r.count == HOLD_COUNT for r in rows):
            return until_cancelled(lambda f, text="": None, kwargs.get("cancel") or args[-1])
        return work(first, *args, **kwargs)
    return run
def holding_price(request):
    """The dialog's price, except that a search over a HOLD_COUNT row costs nothing (it starts)."""
    from prvgui.accounting.core.cost import ZERO
    from prvgui.gui.calibrate_dialog import price_calibration
    return ZERO if any(r.count == HOLD_COUNT for r in request.rows) else price_calibration(request)


#: row 1 alone (a Gaussian with σ = 1, ε ≈ 4.4 at δ = 1e-5) exceeds a target of 0.5
INFEASIBLE = [RowSpec("gaussian", {"sigma": 1.0, "sensitivity": 1.0}, 1, "release"), SMALL[0]]
#: rows with an (ε, δ) description, so that the privacy filter answers too
PURE = [RowSpec("laplace", {"scale": 10.0, "sensitivity": 1.0}, 3, "counts"),
        RowSpec("pure_dp", {"epsilon": 0.1}, 5, "queries")]


@pytest.fixture
def open_dialog(qtbot):
    """``open_dialog(rows, row=0, targets=TARGETS)`` -> (dialog, doc, stack); stopped at the end."""
    made = []

    def make(rows, row=0, targets=TARGETS):
        doc = Document(list(rows), targets=targets)
        stack = QUndoStack()
        dialog = CalibrateDialog(doc, row, targets, stack, work=holding(run_calibration),
                                 price=holding_price)
        qtbot.addWidget(dialog)
        dialog.show()
        made.append((dialog, stack))
        return dialog, doc, stack

    yield make
    for dialog, _ in made:
        dialog.shutdown()
        assert not dialog.runner.is_thread_running()


@pytest.fixture
def open_budget(qtbot):
    made = []

    def make(rows, targets=TARGETS):
        doc = Document(list(rows), targets=targets)
        view = BudgetView(doc, work=holding(budget_status))
        qtbot.addWidget(view)
        view.show()
        made.append(view)
        return view, doc

    yield make
    for view in made:
        view.shutdown()
        assert not view.runner.is_thread_running()


def _type(qtbot, edit, text):
    edit.selectAll()
    qtbot.keyClicks(edit, text)


def _choose(combo, data):
    combo.setCurrentIndex(combo.findData(data))


# ------------------------------------------------------------------ calibrate dialog
def test_calibrate_shows_the_value_applies_it_and_undo_restores_it(qtbot, open_dialog):
    dialog, doc, stack = open_dialog(SMALL)
    assert [dialog.parameter.itemData(i) for i in range(dialog.parameter.count())] == \
        ["sigma", "sampling_rate", "count"]
    _choose(dialog.parameter, "sigma")
    _type(qtbot, dialog.target_edit, "2.0")
    _type(qtbot, dialog.delta_edit, "1e-5")
    assert not dialog.apply_button.isEnabled()
    progress = []
    dialog.runner.progress.connect(lambda f, text: progress.append(f))
    with qtbot.waitSignal(dialog.calibration_ready, timeout=TIMEOUT) as blocker:
        qtbot.mouseClick(dialog.run_button, Qt.MouseButton.LeftButton)
        assert dialog.cancel_button.isEnabled() and not dialog.run_button.isEnabled()
    cal = blocker.args[0]
    assert progress and all(0 <= f <= 1 for f in progress)
    # the dialog shows the engine's own answer
    assert cal == calibrate(doc.engine_rows(), 0, "sigma", 2.0, 1e-5, 0.01)
    assert cal.epsilon.upper <= 2.0
    text = dialog.result_label.text()
    assert fmt_bound(cal.epsilon.upper) in text and "certified" in text and "1e-05" in text
    assert f"σ = {fmt_bound(cal.value, 6)}" in text
    # the plot: ε upper and estimate against σ around the answer, the answer on the curve
    xs, upper = dialog.plot.curves["upper"].getData()
    _, estimate = dialog.plot.curves["estimate"].getData()
    assert xs.min() == pytest.approx(cal.value / 2) and xs.max() == pytest.approx(cal.value * 2)
    k = int(np.flatnonzero(xs == cal.value)[0])
    assert upper[k] == cal.epsilon.upper and estimate[k] == cal.epsilon.estimate
    assert np.all(np.diff(upper[np.isfinite(upper)]) < 0)  # more noise, less ε
    assert np.all(estimate <= upper)
    assert dialog.plot.target_line.isVisible() and dialog.plot.target_line.value() == 2.0
    assert dialog.plot.answer_point.getData()[0][0] == cal.value
    assert dialog.run_button.isEnabled() and not dialog.cancel_button.isEnabled()

    assert dialog.apply_button.isEnabled()
    qtbot.mouseClick(dialog.apply_button, Qt.MouseButton.LeftButton)
    assert dialog.result() == QDialog.DialogCode.Accepted and not dialog.isVisible()
    assert not dialog.runner.is_thread_running()  # closing stops the worker
    assert doc.row(0).params["sigma"] == cal.value
    assert f"σ = {fmt_value(cal.value)} " in text  # the row gets the number the dialog showed
    assert doc.row(0).count == 200 and doc.row(0).params["sampling_rate"] == 0.01
    assert stack.count() == 1  # one undoable edit
    stack.undo()
    assert doc.row(0) == SMALL[0]
    stack.redo()
    assert doc.row(0).params["sigma"] == cal.value


def test_calibrating_a_count_writes_an_integer(qtbot, open_dialog):
    dialog, doc, stack = open_dialog(SMALL)
    _choose(dialog.parameter, "count")
    with qtbot.waitSignal(dialog.calibration_ready, timeout=TIMEOUT) as blocker:
        assert dialog.run()
    cal = blocker.args[0]
    assert cal == calibrate(doc.engine_rows(), 0, "count", 2.0, 1e-5, 0.01)
    xs, _ = dialog.plot.curves["upper"].getData()
    assert xs[0] == 1 and np.all(xs == np.round(xs)) and cal.value in xs
    assert dialog.apply()
    assert doc.row(0).count == cal.value and isinstance(doc.row(0).count, int)
    stack.undo()
    assert doc.row(0).count == 200


def test_cancel_stops_a_long_calibration_and_the_dialog_stays_responsive(qtbot, open_dialog):
    dialog, doc, _ = open_dialog(LONG)
    ticks = []
    ticker = QTimer()
    ticker.setInterval(10)
    ticker.timeout.connect(lambda: ticks.append(1))
    with qtbot.waitSignal(dialog.runner.running_changed, timeout=TIMEOUT):
        qtbot.mouseClick(dialog.run_button, Qt.MouseButton.LeftButton)
    ticker.start()
    qtbot.waitUntil(lambda: len(ticks) >= 30, timeout=TIMEOUT)  # the event loop runs beside the search
    ticker.stop()
    assert dialog.runner.is_running()
    with qtbot.waitSignal(dialog.calibration_cancelled, timeout=TIMEOUT):
        qtbot.mouseClick(dialog.cancel_button, Qt.MouseButton.LeftButton)
    assert "Cancelled" in dialog.result_label.text()
    assert dialog.calibration is None and not dialog.apply_button.isEnabled()
    assert dialog.run_button.isEnabled() and not dialog.cancel_button.isEnabled()
    assert doc.row(0) == LONG[0]


def test_closing_the_dialog_cancels_and_waits_for_the_worker(qtbot, open_dialog):
    dialog, doc, stack = open_dialog(LONG)
    with qtbot.waitSignal(dialog.runner.running_changed, timeout=TIMEOUT):
        dialog.run()
    dialog.reject()
    assert not dialog.runner.is_thread_running()
    assert stack.count() == 0 and doc.row(0) == LONG[0]


def test_an_infeasible_target_shows_the_reason_and_apply_stays_disabled(qtbot, open_dialog):
    dialog, _, stack = open_dialog(INFEASIBLE, row=1)
    _type(qtbot, dialog.target_edit, "0.5")
    with qtbot.waitSignal(dialog.calibration_failed, timeout=TIMEOUT) as blocker:
        qtbot.mouseClick(dialog.run_button, Qt.MouseButton.LeftButton)
    message = blocker.args[0]
    assert "other rows alone" in message and "0.5" in message
    assert "other rows alone" in dialog.result_label.text()
    assert "color" in dialog.result_label.styleSheet()  # shown in red
    assert not dialog.apply_button.isEnabled() and not dialog.apply()
    assert dialog.calibration is None
    assert stack.count() == 0


@pytest.mark.parametrize("field,typed,reason", [("target", "abc", "Target ε"), ("target", "0", "Target ε"),
                                                ("target", "-1", "Target ε"), ("target", "inf", "Target ε"),
                                                ("delta", "2", "δ"), ("delta", "1e-5x", "δ"),
                                                ("delta", "0", "δ")])
def test_invalid_input_is_flagged_and_run_disabled(qtbot, open_dialog, field, typed, reason):
    dialog, _, _ = open_dialog(SMALL)
    assert dialog.run_button.isEnabled()
    edit = dialog.target_edit if field == "target" else dialog.delta_edit
    _type(qtbot, edit, typed)
    assert not dialog.run_button.isEnabled()
    assert dialog.error_label.isVisible() and dialog.error_label.text().startswith(reason + " must be ")
    assert dialog.error_label.text().endswith(f"; you typed {typed}".replace("abc", '"abc"').replace(
        "1e-5x", '"1e-5x"'))  # the message carries the bad value
    assert edit.styleSheet() and reason in edit.toolTip()
    assert not dialog.run() and not dialog.runner.is_running()
    _type(qtbot, edit, "1e-1")  # the 1e-5 form is accepted
    assert dialog.run_button.isEnabled() and not dialog.error_label.isVisible() and not edit.styleSheet()


def test_an_edit_of_the_composition_makes_the_answer_stale(qtbot, open_dialog):
    dialog, doc, stack = open_dialog(SMALL)
    _choose(dialog.parameter, "sampling_rate")
    with qtbot.waitSignal(dialog.calibration_ready, timeout=TIMEOUT):
        dialog.run()
    assert dialog.apply_button.isEnabled()
    doc.replace(0, SMALL[0].with_param("sigma", 1.5))
    assert not dialog.apply_button.isEnabled() and not dialog.apply()
    assert "Out of date" in dialog.result_label.text()
    assert stack.count() == 0


def test_the_sweep_helpers():
    rows = Document(SMALL).engine_rows()
    assert rows_with(rows, 0, "sigma", 2.5)[0].mechanism.sigma == 2.5
    assert rows_with(rows, 0, "count", 7)[0].count == 7
    assert rows == Document(SMALL).engine_rows()  # the input is not changed
    values = sweep_values("gaussian", "sigma", 1.0)
    assert values[0] == pytest.approx(0.5) and values[-1] == pytest.approx(2.0) and values.count(1.0) == 1
    assert max(sweep_values("subsampled_gaussian", "sampling_rate", 0.8)) == 1.0  # clipped to the parameter's range
    counts = sweep_values("gaussian", "count", 50)
    assert counts[0] == 1 and counts[-1] == 100 and 50 in counts and all(isinstance(c, int) for c in counts)


# ------------------------------------------------------------------ budget view
@pytest.mark.parametrize("eps_budget,decision", [(3.0, "CONTINUE"), (0.5, "HALT")])
def test_budget_view_shows_budget_status(qtbot, open_budget, eps_budget, decision):
    view, doc = open_budget(PURE)
    _type(qtbot, view.eps_edit, f"{eps_budget}")
    _type(qtbot, view.delta_edit, "1e-5")
    view.set_row(1)
    with qtbot.waitSignal(view.result_ready, timeout=TIMEOUT) as blocker:
        qtbot.mouseClick(view.compute_button, Qt.MouseButton.LeftButton)
    status = blocker.args[0]
    expected = budget_status(doc.engine_rows(), eps_budget, 1e-5, 1, 0.01)
    assert status == expected and view.status == expected
    assert status.decision == decision and status.filter_decision is not None
    assert view.prv.decision.text() == status.decision
    assert view.filter.decision.text() == status.filter_decision
    assert f"{status.more} more" in view.prv.more.text() and "row 2" in view.prv.more.text()
    assert f"{status.filter_more} more" in view.filter.more.text()
    used = view.used_label.text()
    assert f"{fmt_bound(100 * status.used_fraction, 3)}%" in used
    assert f"ε ≤ {fmt_bound(status.epsilon.upper)}" in used and "1e-05" in used
    assert view.gauge.value() == round(1000 * min(status.used_fraction, 1.0))
    if decision == "HALT":
        assert status.more == 0 and "over budget" in view.gauge.text()
    else:
        assert status.more > status.filter_more > 0  # the adaptive filter is more conservative
    assert not view.runner.is_running() and view.compute_button.isEnabled()


def test_budget_view_says_when_the_filter_cannot_answer(qtbot, open_budget):
    view, doc = open_budget(SMALL)
    with qtbot.waitSignal(view.result_ready, timeout=TIMEOUT) as blocker:
        assert view.compute()
    status = blocker.args[0]
    assert status == budget_status(doc.engine_rows(), 2.0, 1e-5, 0, 0.01)
    assert status.filter_decision is None and view.filter.decision.text() == "n/a"
    assert view.note_label.isVisible() and "(ε, δ) guarantee per run" in view.note_label.text()
    assert "fixed in advance" in view.adaptive_label.text() and "adaptive" in view.adaptive_label.text()


def test_budget_view_inputs_documents_and_cancel(qtbot, open_budget):
    view, doc = open_budget(PURE)
    _type(qtbot, view.eps_edit, "x")
    assert not view.compute_button.isEnabled()
    assert view.error_label.text() == 'ε budget (ε_g) must be a number (greater than 0); you typed "x"'
    assert view.eps_edit.styleSheet() and not view.compute()
    _type(qtbot, view.eps_edit, "3")
    _type(qtbot, view.delta_edit, "1.5")
    assert not view.compute_button.isEnabled()
    assert view.error_label.text() == "δ budget (δ_g) must be greater than 0 and less than 1; you typed 1.5"
    _type(qtbot, view.delta_edit, "1e-5")
    assert view.compute_button.isEnabled()
    assert [view.row_choice.itemData(i) for i in range(view.row_choice.count())] == [None, 0, 1]
    with qtbot.waitSignal(view.result_ready, timeout=TIMEOUT):
        view.compute()
    doc.insert(2, RowSpec.default("gaussian"))  # the row chooser follows, the result is stale
    assert view.row_choice.count() == 4 and "Out of date" in view.used_label.text()
    with qtbot.waitSignal(view.runner.running_changed, timeout=TIMEOUT):
        view.compute()
    answers = []
    view.result_ready.connect(answers.append)
    other = Document(LONG, targets=TARGETS)
    view.set_document(other)  # the running job's answer is for the old document: dropped
    assert view.status is None and view.row_choice.count() == len(LONG) + 1 and not view.runner.is_running()
    with qtbot.waitSignal(view.cancelled, timeout=TIMEOUT):
        assert view.compute()
        qtbot.mouseClick(view.cancel_button, Qt.MouseButton.LeftButton)
    assert view.status is None and view.compute_button.isEnabled() and answers == []


def test_main_window_opens_calibrate_and_budget(window, qtbot):
    from prvgui.document.model import RowSpec
    window.doc.insert(0, RowSpec("subsampled_gaussian", {"sigma": 1.0, "sampling_rate": 0.01}, 100, ""))
    window.composition.select_row(0)
    dialog = window.open_calibrate()
    assert isinstance(dialog, CalibrateDialog) and dialog.row_index == 0
    dialog.reject()
    window.show_budget()
    assert window.budget.isVisible() and window.tabs.currentWidget() is window.budget_tab


def test_a_costly_search_is_priced_before_it_starts(qtbot, open_dialog):
    """Issue 31: a calibration ran 37 s with no estimate shown."""
    costly = [RowSpec("subsampled_gaussian", {"sigma": 0.8, "sampling_rate": 0.01, "sensitivity": 1.0},
                      3000, "training")]
    dialog, doc, _ = open_dialog(costly, targets=Targets(1e-5, 2.0, 0.001))
    assert not dialog.run()  # priced, not started
    assert not dialog.prompt.isHidden() and "calibration composes about" in dialog.prompt.detail.text()
    assert not dialog.runner.is_running()
    with qtbot.waitSignal(dialog.runner.running_changed, timeout=TIMEOUT):
        dialog.prompt.compute_button.click()  # "Compute anyway" starts it
    assert dialog.prompt.isHidden()
    dialog.cancel()
