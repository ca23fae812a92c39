"""Smaller parts: number parsing/formatting, the DP-SGD helper, the worker with a stand-in
engine (stale answers dropped, queued requests skipped), the steps-row selector."""
import math
import threading

import pytest
from hypothesis import given
from hypothesis import strategies as st
from PySide6.QtWidgets import QComboBox, QDialogButtonBox

from prvgui.engine.view_model import Cancelled, Request
from prvgui.document.model import Document, RowSpec
from prvgui.gui.dpsgd_helper import DpSgdDialog, dpsgd_schedule
from prvgui.gui.fmt import fmt, fmt_bound, fmt_value, parse_count, parse_number
from prvgui.gui.steps_choice import StepsChoice
from prvgui.gui.worker import InputError, Recomputer


# ------------------------------------------------------------------ parsing and formatting
@pytest.mark.parametrize("text,value", [("1e-5", 1e-5), (" 0.5 ", 0.5), ("3", 3.0), ("abc", "abc"), ("", "")])
def test_parse_number(text, value):
    assert parse_number(text) == value


def test_parse_number_keeps_what_is_not_a_finite_number_as_text_for_validation_to_reject():
    assert parse_number("nan") == "nan" and parse_number("-inf") == "-inf"
    assert parse_number(" 1e400") == " 1e400"
    assert parse_number("1e-5") == 1e-5 and parse_number("abc") == "abc"


@pytest.mark.parametrize("text,value", [("1e6", 1_000_000), ("14063", 14063), ("1.5", 1.5), ("x", "x")])
def test_parse_count(text, value):
    assert parse_count(text) == value and type(parse_count(text)) is type(value)


@given(st.floats(min_value=1e-300, max_value=1e300))
def test_printed_bounds_are_still_bounds(x):
    assert float(fmt_bound(x)) >= x or math.isclose(float(fmt_bound(x)), x, rel_tol=1e-12)
    assert float(fmt_bound(x, up=False)) <= x or math.isclose(float(fmt_bound(x, up=False)), x, rel_tol=1e-12)


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_values_round_trip_through_their_text(x):
    assert parse_number(fmt_value(x)) == x


def test_fmt_special_values():
    assert (fmt(math.inf), fmt(None), fmt(-0.0), fmt(2.3912205)) == ("∞", "n/a", "0", "2.391")
    assert fmt_bound(2.3912205) == "2.392" and fmt_bound(2.3912205, up=False) == "2.391"


# ------------------------------------------------------------------ DP-SGD helper
@pytest.mark.parametrize("n,b,e,q,steps", [
    (60000, 256, 60, 256 / 60000, 14063),   # 14062.5 steps, rounded up
    (100, 10, 1, 0.1, 10),                  # 1 / 0.1 = 10.000000000000002 in floats: still 10
    (50000, 500, 3, 0.01, 300),
    (7, 7, 2.5, 1.0, 3),
])
def test_dpsgd_schedule(n, b, e, q, steps):
    got_q, got_steps = dpsgd_schedule(n, b, e)
    assert got_q == pytest.approx(q, rel=1e-15) and got_steps == steps


@pytest.mark.parametrize("n,b,e,message", [
    (0, 1, 1, "Dataset size N must be a whole number from 1 to 1,000,000,000,000; you typed 0"),
    (100, 101, 1, "Batch size B must be a whole number from 1 to 100 (the dataset size); you typed 101"),
    (100, 0, 1, "Batch size B must be a whole number from 1 to 100 (the dataset size); you typed 0"),
    (100, 10, 0, "Epochs must be greater than 0; you typed 0"),
    (100, 10, math.nan, "Epochs must be a number (greater than 0); you typed nan"),
    (100, 10, 1e9, "Epochs must be at most 1e8 with this batch and dataset size (a row counts at most "
                   "1,000,000,000 steps); you typed 1e9"),
    (10.5, 1, 1, "Dataset size N must be a whole number from 1 to 1,000,000,000,000; you typed 10.5"),
    ("abc", 1, 1, 'Dataset size N must be a whole number from 1 to 1,000,000,000,000; you typed "abc"')])
def test_dpsgd_schedule_rejects_bad_input(n, b, e, message):
    with pytest.raises(ValueError) as err:
        dpsgd_schedule(n, b, e)
    assert str(err.value) == message


def test_dpsgd_dialog_shows_the_steps_and_builds_a_row(qtbot):
    dialog = DpSgdDialog(None, {"dataset": 60000, "batch": 256, "epochs": 60, "sigma": 1.1}, "row 1")
    qtbot.addWidget(dialog)
    row = dialog.row()
    assert row.kind == "subsampled_gaussian" and row.count == 14063
    assert row.params["sampling_rate"] == 256 / 60000 and row.params["sigma"] == 1.1
    assert "14\u202f063" in dialog.summary.text()
    # the sampling scheme is asked for, Poisson unless the row says otherwise
    assert dialog.scheme() == "poisson" and dialog.scheme_buttons["poisson"].isChecked()
    assert "probability B / N" in dialog.scheme_buttons["poisson"].text()
    ok = dialog.buttons.button(QDialogButtonBox.StandardButton.Ok)
    assert ok.isEnabled() and ok.text() == "Apply to row 1"
    dialog.fields["batch"].setText("70000")
    assert dialog.row() is None and dialog.error_label.text().startswith("Batch size B must be")
    assert dialog.fields["batch"].styleSheet() and not dialog.fields["dataset"].styleSheet()
    assert not ok.isEnabled()
    dialog.fields["batch"].setText("512")
    dialog.fields["sigma"].setText("-1")
    assert dialog.row() is None
    assert dialog.error_label.text() == "Noise multiplier σ must be at least 0; you typed -1"
    assert dialog.fields["sigma"].styleSheet()


def test_dpsgd_helper_fills_the_selected_row_in_one_undo_step(qtbot, window, load):
    load(window)
    window.composition.select_row(0)
    dialog = DpSgdDialog(window, {"dataset": 1000, "batch": 50, "epochs": 2, "sigma": 1.3})
    qtbot.addWidget(dialog)
    before = window.doc.row(0)
    with qtbot.waitSignal(window.recomputer.result_ready, timeout=60_000) as blocker:
        window.apply_dpsgd(dialog.row(), dialog.values())
    row = window.doc.row(0)
    assert (row.count, row.params["sampling_rate"], row.params["sigma"]) == (40, 0.05, 1.3)
    assert row.label == "training"  # the user's label is kept
    assert blocker.args[0].request.rows[0].count == 40
    assert window.stack.count() == 1
    window.stack.undo()
    assert window.doc.row(0) == before
    # on a row of another kind the helper adds a new row after it
    window.composition.select_row(1)
    window.apply_dpsgd(dialog.row(), dialog.values())
    assert len(window.doc) == 3 and window.doc.row(2).kind == "subsampled_gaussian"
    assert window.doc.row(2).label.startswith("DP-SGD: N=1000")


# ------------------------------------------------------------------ worker with a stand-in engine
class FakeEngine:
    """compute(request, progress, cancel): waits until released (or cancelled)."""

    def __init__(self):
        self.calls = []
        self.release = threading.Event()

    def __call__(self, request, progress=None, cancel=None):
        self.calls.append(request.request_id)
        progress(0.5, "working")
        # (the token is a callable, or an object with is_set(), as view_model.compute takes it)
        cancelled = cancel.is_set if hasattr(cancel, "is_set") else cancel
        while not self.release.wait(0.005):
            if cancelled():
                raise Cancelled("cancelled")
        if request.delta == 0.5:
            raise ValueError("the engine refused")
        return ("result", request.request_id)


@pytest.fixture
def fake(qtbot):
    engine = FakeEngine()
    requests = []

    def factory():
        if not requests:
            raise InputError("fix row 1: sigma must be a number, got 'x'")
        return requests[-1], f"context {len(requests)}"

    rec = Recomputer(factory, compute_fn=engine, debounce_ms=20)
    yield rec, engine, requests
    engine.release.set()
    rec.shutdown()


def test_blocked_inputs_never_reach_the_engine(qtbot, fake):
    rec, engine, _ = fake
    with qtbot.waitSignal(rec.blocked) as blocker:
        rec.invalidate()
    assert blocker.args == ["fix row 1: sigma must be a number, got 'x'"]
    assert engine.calls == [] and rec.submitted == 0 and rec.state == "idle"


def test_only_the_latest_answer_is_shown(qtbot, fake):
    rec, engine, requests = fake
    shown = []
    rec.result_ready.connect(lambda r, c: shown.append((r, c)))
    requests.append(Request((), delta=1e-5))
    with qtbot.waitSignal(rec.progress):
        rec.run_now()
    first = rec.latest_id
    requests.append(Request((), delta=1e-6))
    with qtbot.waitSignal(rec.progress):
        rec.invalidate()  # cancels the first job; the debounce then submits the second
    assert rec.latest_id == first + 1
    with qtbot.waitSignal(rec.result_ready):
        engine.release.set()
    assert shown == [(("result", first + 1), "context 2")]
    assert engine.calls == [first, first + 1]


def test_requests_superseded_while_queued_are_skipped(qtbot, fake):
    rec, engine, requests = fake
    requests.append(Request((), delta=1e-5))
    for _ in range(5):
        rec.run_now()  # each cancels the one before, most never start
    last = rec.latest_id
    with qtbot.waitSignal(rec.result_ready) as blocker:
        engine.release.set()
    assert blocker.args[0] == ("result", last)
    qtbot.waitUntil(lambda: rec.state == "idle")
    assert len(engine.calls) <= 2 and engine.calls[-1] == last


def test_engine_errors_are_reported_not_raised(qtbot, fake):
    rec, engine, requests = fake
    requests.append(Request((), delta=0.5))
    engine.release.set()
    with qtbot.waitSignal(rec.failed) as blocker:
        rec.run_now()
    assert blocker.args == ["the engine refused"]
    assert rec.state == "idle"


def test_cancel_while_pending_stops_the_debounce(qtbot, fake):
    rec, engine, requests = fake
    requests.append(Request((), delta=1e-5))
    rec.invalidate()
    with qtbot.waitSignal(rec.cancelled):
        rec.cancel()
    with qtbot.assertNotEmitted(rec.state_changed, wait=100):  # longer than the 20 ms debounce
        pass
    assert engine.calls == [] and rec.state == "idle"


def test_without_debounce_an_edit_starts_on_the_next_pass_and_cancel_still_stops_it(qtbot):
    engine = FakeEngine()
    engine.release.set()
    requests = [Request((), delta=1e-5)]
    rec = Recomputer(lambda: (requests[-1], "context"), compute_fn=engine, debounce_ms=0)
    try:
        rec.invalidate()
        rec.invalidate()  # two edits in one pass of the event loop: one request
        assert rec.state == "pending" and engine.calls == []
        qtbot.waitUntil(lambda: rec.state == "idle" and len(engine.calls) == 1)
        rec.invalidate()
        with qtbot.waitSignal(rec.cancelled):
            rec.cancel()  # before the queued start ran: it must not run
        with qtbot.assertNotEmitted(rec.state_changed, wait=100):
            pass
        assert len(engine.calls) == 1 and rec.state == "idle"
    finally:
        rec.shutdown()


# ------------------------------------------------------------------ steps row selector
def test_steps_choice_follows_rows(qtbot):
    doc = Document([RowSpec("gaussian", {"sigma": 1.0}, 5, "a"), RowSpec("laplace", {"scale": 1.0}, 50, "b"),
                    RowSpec("laplace", {"scale": 2.0}, 7, "c")])
    combo = QComboBox()
    qtbot.addWidget(combo)
    choice = StepsChoice(doc, combo)
    assert choice.row() == 1 and combo.itemText(0) == "largest count (row 2)"
    choice.set_choice(2)
    doc.insert(0, RowSpec.default("pure_dp"))
    assert choice.row() == 3
    doc.move(3, 0)
    assert choice.row() == 0
    doc.remove(0)
    assert choice.choice is None and choice.row() == 2  # back to the largest count ("b")
    doc.replace(1, RowSpec("gaussian", {"sigma": 1.0}, "abc", "a"))  # invalid counts are skipped
    assert choice.row() == 2
    texts = [combo.itemText(i) for i in range(combo.count())]
    assert texts[1:] == ["row 1: Pure ε-DP", "row 2: a", "row 3: b"]


# ------------------------------------------------------------------ numbers people read
def test_a_count_never_wraps_at_its_thousands_separator():
    from prvgui.gui.fmt import fmt_count
    text = fmt_count(14063)
    assert text == "14\u202f063"
    assert not any(c.isspace() and c not in "\u202f\u00a0\u2007" for c in text)


def test_fields_show_six_significant_digits_of_a_value_from_a_file(qtbot, window):
    from prvgui.paths import resource_dir
    with qtbot.waitSignal(window.recomputer.result_ready, timeout=60_000):
        assert window.files.open_example(resource_dir() / "examples" / "dpsgd_mnist.json", ask=False)
    form = window.composition.form
    form.set_row(0)
    edit = form.params["sampling_rate"].edit
    assert edit.text() == "0.00426667"
    assert window.doc.row(0).params["sampling_rate"] == 0.004266666666666667  # showing is not editing
    assert window.stack.count() == 0
    # refreshing the form (another field edited) keeps the full value in the document
    form.params["sigma"].edit.end(False)
    qtbot.keyClicks(form.params["sigma"].edit, "5")
    assert window.doc.row(0).params["sigma"] == 1.15
    assert edit.text() == "0.00426667"
    assert window.doc.row(0).params["sampling_rate"] == 0.004266666666666667
    # what the user types stays as typed, digit for digit
    edit.clear()
    qtbot.keyClicks(edit, "0.0042666666")
    assert edit.text() == "0.0042666666"
    assert window.doc.row(0).params["sampling_rate"] == 0.0042666666
