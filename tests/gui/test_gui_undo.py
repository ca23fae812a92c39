"""One undo history (issue 15, item 6): the undo keys in a text field act on the document's stack,
and undo/redo select the row they changed."""
import pytest
from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QContextMenuEvent
from PySide6.QtWidgets import QApplication, QMenu

pytestmark = pytest.mark.gui

CTRL = Qt.KeyboardModifier.ControlModifier
CTRL_SHIFT = Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier


def type_into(qtbot, edit, text):
    edit.setFocus()
    edit.selectAll()
    qtbot.keyClicks(edit, text)


def sigma(window, i=0):
    return window.doc.row(i).params["sigma"]


def test_ctrl_z_in_a_row_field_undoes_the_document_not_the_field(qtbot, window, load):
    load(window)
    window.composition.select_row(0)
    edit = window.composition.form.params["sigma"].edit
    assert sigma(window) == 2.0
    type_into(qtbot, edit, "1.1")
    assert sigma(window) == 1.1 and window.stack.count() == 1  # the keystrokes merged into one step
    qtbot.keyClick(edit, Qt.Key.Key_Z, CTRL)
    assert sigma(window) == 2.0 and edit.text() == "2"  # field and document agree
    qtbot.keyClick(edit, Qt.Key.Key_Z, CTRL_SHIFT)
    assert sigma(window) == 1.1 and edit.text() == "1.1"
    qtbot.keyClick(edit, Qt.Key.Key_Z, CTRL)  # the issue: this went 1.5 -> 1.1 -> 1.5 in two histories
    qtbot.keyClick(edit, Qt.Key.Key_Z, CTRL)  # nothing more to undo: stays put
    assert sigma(window) == 2.0 and edit.text() == "2" and window.stack.index() == 0
    # the label and count fields too
    type_into(qtbot, window.composition.form.label, "renamed")
    type_into(qtbot, window.composition.form.count.edit, "300")
    assert (window.doc.row(0).label, window.doc.row(0).count) == ("renamed", 300)
    qtbot.keyClick(window.composition.form.count.edit, Qt.Key.Key_Z, CTRL)
    qtbot.keyClick(window.composition.form.count.edit, Qt.Key.Key_Z, CTRL)
    assert (window.doc.row(0).label, window.doc.row(0).count) == ("training", 200)
    assert window.composition.form.label.text() == "training"


def test_ctrl_z_in_a_target_field_undoes_the_document(qtbot, window, load):
    load(window)
    edit = window.targets.fields["delta"]
    type_into(qtbot, edit, "1e-6")
    assert window.doc.targets.delta == 1e-6
    qtbot.keyClick(edit, Qt.Key.Key_Z, CTRL)
    assert window.doc.targets.delta == 1e-5 and edit.text() == "1e-05"
    qtbot.keyClick(edit, Qt.Key.Key_Z, CTRL_SHIFT)
    assert window.doc.targets.delta == 1e-6 and edit.text() == "1e-06"


def test_the_edit_menus_undo_and_the_fields_context_menu_use_the_same_stack(qtbot, window, load):
    load(window)
    window.composition.select_row(0)
    edit = window.composition.form.params["sigma"].edit
    type_into(qtbot, edit, "3")
    undo = next(a for m in window.menuBar().findChildren(QMenu) for a in m.actions()
                if a.text().startswith("&Undo"))
    undo.trigger()
    assert sigma(window) == 2.0 and edit.text() == "2"
    seen = {}

    def inspect():
        menu = QApplication.activePopupWidget()
        actions = {a.objectName(): a for a in menu.actions()}
        seen["undo"] = actions["edit-undo"].isEnabled()
        seen["redo"] = actions["edit-redo"].isEnabled()
        actions["edit-redo"].trigger()
        menu.close()
    QTimer.singleShot(50, inspect)  # the menu a right click opens, as the filter builds it
    QApplication.sendEvent(edit, QContextMenuEvent(QContextMenuEvent.Reason.Mouse, edit.rect().center(),
                                                   edit.mapToGlobal(edit.rect().center())))
    assert seen == {"undo": False, "redo": True}  # the stack's state, not the field's
    assert sigma(window) == 3.0 and edit.text() == "3"


def test_undoing_a_delete_selects_the_restored_row(qtbot, window, load, small_rows):
    load(window, rows=small_rows + [small_rows[0]])
    comp = window.composition
    comp.select_row(1)
    comp.delete()
    assert len(window.doc) == 2 and comp.current_row() == 1
    comp.select_row(None)  # even with nothing selected
    window.stack.undo()
    assert len(window.doc) == 3 and comp.current_row() == 1
    assert comp.form.row_index == 1 and comp.view.selectionModel().isRowSelected(1)
    window.stack.redo()
    assert len(window.doc) == 2 and comp.current_row() == 1
    comp.select_row(2 - 1)
    comp.delete()  # the last row
    window.stack.undo()
    assert comp.current_row() == 1


def test_redoing_an_insert_selects_the_inserted_row_and_undo_of_an_edit_shows_its_row(qtbot, window, load):
    load(window)
    comp = window.composition
    comp.select_row(0)
    comp.add("laplace")  # inserted as row 2 (index 1)
    assert len(window.doc) == 3 and comp.current_row() == 1
    window.stack.undo()
    assert len(window.doc) == 2 and comp.current_row() == 0
    comp.select_row(1)
    window.stack.redo()
    assert window.doc.row(1).kind == "laplace" and comp.current_row() == 1
    comp.select_row(0)
    comp.move(1)
    comp.select_row(2)
    window.stack.undo()  # the move: the moved row is selected where it went back to
    assert comp.current_row() == 0 and window.doc.row(0).label == "training"
    type_into(qtbot, comp.form.params["sigma"].edit, "4")
    comp.select_row(2)
    window.stack.undo()
    assert comp.current_row() == 0 and sigma(window) == 2.0
