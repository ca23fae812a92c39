"""Issue 11 in the window: who is protected (neighbouring relation, records per person) in the
Targets panel, rows invalid under the relation, and what the plots and exports say it is for."""
import math

import pytest
from PySide6.QtCore import Qt

from prvgui.accounting.core.values import MAX_GROUP
from prvgui.document.model import RowSpec, Targets
from prvgui.gui.table_model import ErrorRole

pytestmark = pytest.mark.gui

TIMEOUT = 60_000
FAST = Targets(1e-5, 1.0, 0.05)
#: rows whose pairs under replace-one and groups need no mixture (Gaussian, Laplace)
PLAIN_ROWS = [RowSpec("gaussian", {"sigma": 4.0, "sensitivity": 1.0}, 10, "queries"),
              RowSpec("laplace", {"scale": 20.0, "sensitivity": 1.0}, 3, "counts")]
FIXED = RowSpec("subsampled_gaussian", {"sigma": 1.0, "sampling_rate": 0.01, "sensitivity": 1.0,
                                        "sampling": "fixed_size"}, 100, "fixed batches")


def type_group(qtbot, window, text):
    edit = window.targets.group
    edit.setFocus()
    edit.selectAll()
    if text:
        qtbot.keyClicks(edit, text)
    else:
        qtbot.keyClick(edit, Qt.Key.Key_Delete)


def paste_group(qtbot, window, text):
    """Replace the field's text at once, as a paste does (typing "2.5" sets 2 on the way)."""
    from PySide6.QtWidgets import QApplication
    edit = window.targets.group
    edit.setFocus()
    edit.selectAll()
    if text:
        QApplication.clipboard().setText(text)
        qtbot.keyClick(edit, Qt.Key.Key_V, Qt.KeyboardModifier.ControlModifier)
    else:
        qtbot.keyClick(edit, Qt.Key.Key_Delete)
    assert edit.text() == text


def test_the_neighbouring_choice_offers_both_relations_with_what_they_mean(window):
    box = window.targets.neighbouring
    items = {box.itemData(i): (box.itemText(i), box.itemData(i, Qt.ItemDataRole.ToolTipRole))
             for i in range(box.count())}
    assert set(items) == {"add_remove", "replace_one"}
    assert items["replace_one"][0] == "Replace one record"
    tip = items["replace_one"][1]
    assert "size stays the same" in tip and "twice the clipping norm" in tip
    assert "group" in window.targets.group.toolTip().lower()
    assert window.targets.group.text() == "1"


def test_choosing_replace_one_edits_the_document_in_one_undo_step_and_recomputes(qtbot, window, load):
    first = load(window, rows=PLAIN_ROWS, targets=FAST)
    assert first.request.neighbouring == "add_remove"
    box = window.targets.neighbouring
    box.setFocus()
    with qtbot.waitSignal(window.recomputer.result_ready, timeout=TIMEOUT) as blocker:
        qtbot.keyClick(box, Qt.Key.Key_Down)  # as a user picks the next item
    second = blocker.args[0]
    assert window.doc.neighbouring == "replace_one" and box.currentData() == "replace_one"
    assert window.stack.count() == 1
    assert second.request.neighbouring == "replace_one"
    # the outputs can now move by twice the sensitivity: strictly less private
    assert second.epsilon.lower > first.epsilon.upper
    with qtbot.waitSignal(window.recomputer.result_ready, timeout=TIMEOUT) as blocker:
        window.stack.undo()
    assert window.doc.neighbouring == "add_remove" and box.currentData() == "add_remove"
    assert blocker.args[0].request.neighbouring == "add_remove"
    assert blocker.args[0].epsilon.upper == pytest.approx(first.epsilon.upper)


def test_typing_a_group_size_is_one_undo_step_and_recomputes(qtbot, window, load):
    first = load(window, rows=PLAIN_ROWS, targets=FAST)
    with qtbot.waitSignal(window.recomputer.result_ready, timeout=TIMEOUT) as blocker:
        type_group(qtbot, window, "12")
    assert window.doc.group_size == 12
    assert window.stack.count() == 1  # "1", "12": one step
    assert blocker.args[0].request.group_size == 12
    assert blocker.args[0].epsilon.lower > first.epsilon.upper
    window.stack.undo()
    assert window.doc.group_size == 1 and window.targets.group.text() == "1"
    window.stack.redo()
    assert window.doc.group_size == 12 and window.targets.group.text() == "12"


@pytest.mark.parametrize("typed", ["0", "2.5", "1e9", "abc", "-3", "nan", str(MAX_GROUP + 1), ""])
def test_a_bad_group_size_names_the_field_and_keeps_the_last_good_value(qtbot, window, load, typed):
    load(window, rows=PLAIN_ROWS, targets=FAST)
    with qtbot.waitSignal(window.recomputer.result_ready, timeout=TIMEOUT):
        type_group(qtbot, window, "4")
    steps = window.stack.count()
    submitted = window.recomputer.submitted
    with qtbot.waitSignal(window.recomputer.blocked, timeout=TIMEOUT) as blocker:
        paste_group(qtbot, window, typed)
    message = window.targets.error()
    assert message is not None and message.startswith("Records per person must be")
    assert ("the field is empty" in message) if typed.strip() == "" else (typed.strip() in message)
    assert "Records per person" in blocker.args[0]
    assert window.targets.error_label.isVisible() and message in window.targets.error_label.text()
    assert "Invalid" in window.targets.group.toolTip()
    assert window.doc.group_size == 4  # the last good value
    assert window.stack.count() == steps
    assert window.recomputer.submitted == submitted  # nothing was computed
    assert window.targets.group.text() == typed  # what was typed stays to be fixed
    # fixing it clears the message and computes again
    with qtbot.waitSignal(window.recomputer.result_ready, timeout=TIMEOUT) as blocker:
        type_group(qtbot, window, "2")
    assert window.targets.error() is None and window.doc.group_size == 2
    assert blocker.args[0].request.group_size == 2


def test_typing_past_a_good_value_keeps_that_value(qtbot, window, load):
    load(window, rows=PLAIN_ROWS, targets=FAST)
    with qtbot.waitSignal(window.recomputer.blocked, timeout=TIMEOUT):
        type_group(qtbot, window, "2.5")  # "2" is good, "2." and "2.5" are not
    assert window.doc.group_size == 2 and window.targets.group.text() == "2.5"
    assert window.targets.error().endswith("you typed 2.5")
    assert window.stack.count() == 1


def test_undo_over_an_invalid_group_size_shows_the_document_again(qtbot, window, load):
    load(window, rows=PLAIN_ROWS, targets=FAST)
    with qtbot.waitSignal(window.recomputer.result_ready, timeout=TIMEOUT):
        type_group(qtbot, window, "4")
    type_group(qtbot, window, "0")
    assert window.targets.error() is not None
    with qtbot.waitSignal(window.recomputer.result_ready, timeout=TIMEOUT):
        window.stack.undo()
    assert window.doc.group_size == 1 and window.targets.group.text() == "1"
    assert window.targets.error() is None


def test_fixed_size_rows_are_marked_under_add_remove_and_clear_under_replace_one(qtbot, window, load):
    load(window, rows=PLAIN_ROWS, targets=FAST)
    with qtbot.waitSignal(window.recomputer.blocked, timeout=TIMEOUT) as blocker:
        window.composition.insert_row(FIXED)
    i = window.composition.current_row()
    assert window.doc.row(i) == FIXED
    model = window.composition.model
    err = model.index(i, 2).data(ErrorRole)
    assert err is not None and err.startswith("Fixed-size batches") and "replace-one" in err
    assert model.headerData(i, Qt.Orientation.Vertical).endswith("⚠")
    assert f"row {i + 1}" in blocker.args[0] and "Fixed-size batches" in blocker.args[0]
    window.composition.select_row(i)
    form = window.composition.form
    assert form.choices["sampling"].toolTip().startswith("<b>Invalid:</b> Fixed-size batches")
    assert form.error_label.isVisible() and "replace-one" in form.error_label.text()
    # replace-one: the same row is valid; the table and the form say so at once
    box = window.targets.neighbouring
    box.setFocus()
    qtbot.keyClick(box, Qt.Key.Key_Down)
    assert window.doc.neighbouring == "replace_one"
    assert model.index(i, 2).data(ErrorRole) is None
    assert not model.headerData(i, Qt.Orientation.Vertical).endswith("⚠")
    assert "Invalid" not in form.choices["sampling"].toolTip()
    assert not form.error_label.isVisible()
    # and back: marked again
    window.stack.undo()
    assert model.index(i, 2).data(ErrorRole) == err


def test_opening_a_file_shows_its_relation(qtbot, window, tmp_path):
    from prvgui.document.fileio import save
    from prvgui.document.model import Document
    path = tmp_path / "grouped.json"
    save(Document(PLAIN_ROWS, "replace_one", FAST, 7), path)
    with qtbot.waitSignal(window.recomputer.result_ready, timeout=TIMEOUT) as blocker:
        window.files.open(str(path))
    assert window.targets.neighbouring.currentData() == "replace_one"
    assert window.targets.group.text() == "7"
    assert (blocker.args[0].request.neighbouring, blocker.args[0].request.group_size) == ("replace_one", 7)


def test_plots_and_the_csv_export_say_what_the_guarantee_is_for(qtbot, window, load, tmp_path):
    load(window, rows=PLAIN_ROWS, targets=FAST)
    assert window.plots["profile"].caption == "Guarantee for: add/remove one record"
    window.editor.set_relation("replace_one", 4)
    assert window.stack.count() == 1
    with qtbot.waitSignal(window.recomputer.result_ready, timeout=TIMEOUT):
        window.recomputer.run_now()
    for tab in window.plots.values():
        assert tab.caption == "Guarantee for: replace one record, groups of 4 records"
        assert "groups of 4 records" in tab.plot_item.titleLabel.text
        assert tab.plot_item.titleLabel.isVisible()
    tab = window.plots["profile"]
    assert window.export_plot(tab, "csv")
    text = (tmp_path / "profile.csv").read_text()
    assert "# guarantee for: replace one record, groups of 4 records\n" in text
    # a stale plot keeps its caption under the note
    tab.set_note("Out of date", error=True)
    assert "Out of date" in tab.plot_item.titleLabel.text and "groups of 4" in tab.plot_item.titleLabel.text


def test_editor_set_relation_refuses_bad_values_before_pushing(qtbot, window):
    for bad in (0, 2.5, 10**9, "4", math.nan, True):
        with pytest.raises(ValueError, match="Records per person"):
            window.editor.set_relation(group_size=bad)
    with pytest.raises(ValueError, match="neighbouring"):
        window.editor.set_relation(neighbouring="swap")
    assert window.stack.count() == 0 and window.doc.relation.plain
    assert not window.editor.set_relation("add_remove", 1)  # no change, no step
    assert window.stack.count() == 0


def test_calibration_and_budget_answers_go_stale_when_the_relation_changes(qtbot):
    """An answer computed for add/remove must not be applied (or read) as one for replace-one."""
    from PySide6.QtGui import QUndoStack

    from prvgui.document.model import Document
    from prvgui.gui.budget_view import BudgetView
    from prvgui.gui.calibrate_dialog import CalibrateDialog
    doc = Document(list(PLAIN_ROWS), targets=Targets(1e-5, 2.0, 0.05))
    stack = QUndoStack()
    dialog = CalibrateDialog(doc, 0, doc.targets, stack)
    view = BudgetView(doc)
    for w in (dialog, view):
        qtbot.addWidget(w)
        w.show()
    try:
        with qtbot.waitSignal(dialog.calibration_ready, timeout=TIMEOUT):
            dialog.run()
        with qtbot.waitSignal(view.result_ready, timeout=TIMEOUT):
            assert view.compute()
        assert dialog.apply_button.isEnabled() and "Out of date" not in view.used_label.text()
        doc.set_relation("replace_one", 1)
        assert not dialog.apply_button.isEnabled() and not dialog.apply()
        assert "Out of date" in dialog.result_label.text() and "Out of date" in view.used_label.text()
        assert stack.count() == 0
        doc.set_relation("add_remove", 1)  # back to what the answers are for
        assert dialog.apply_button.isEnabled()
    finally:
        dialog.shutdown()
        view.shutdown()


def test_the_parameters_column_names_a_fixed_size_batch_in_words():
    from prvgui.gui.fmt import param_summary
    assert param_summary("subsampled_gaussian", {"sigma": 1.0, "sampling_rate": 0.01,
                                                 "sampling": "fixed_size"}) == "σ=1, q=0.01, fixed size"
    assert param_summary("subsampled_gaussian", {"sigma": 1.0, "sampling_rate": 0.01, "sampling": "poisson"}) \
        == "σ=1, q=0.01"
