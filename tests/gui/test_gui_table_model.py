"""The table model over the document: Qt's model tester, edits, invalid cells, undo."""
from PySide6.QtCore import Qt
from PySide6.QtGui import QUndoStack

from prvgui.document.model import Document, RowSpec
from prvgui.gui.table_model import COL_COUNT, COL_KIND, COL_LABEL, COL_PARAMS, ErrorRole, CompositionModel
from prvgui.gui.undo import Editor


def make(rows=None):
    doc = Document(rows if rows is not None else [
        RowSpec("gaussian", {"sigma": 2.0, "sensitivity": 1.0}, 10, "queries"),
        RowSpec("laplace", {"scale": 1.0, "sensitivity": 1.0}, 1, ""),
        RowSpec("subsampled_gaussian", {"sigma": 1.1, "sampling_rate": 0.01}, 1000, "training"),
    ])
    stack = QUndoStack()
    editor = Editor(doc, stack)
    model = CompositionModel(doc, edit=lambda i, row: editor.replace(i, row))
    return doc, stack, editor, model


def test_model_passes_qt_model_tester_through_every_kind_of_edit(qtmodeltester):
    doc, stack, editor, model = make()
    qtmodeltester.check(model)
    # the tester stays attached and checks each change signal against the answers
    editor.insert(1, RowSpec.default("pure_dp"))
    editor.remove(0)
    editor.move(0, 2)
    editor.move(2, 0)
    editor.replace(1, doc.row(1).with_param("scale", -1.0))
    stack.undo()
    stack.undo()
    stack.redo()
    doc.reset([RowSpec.default("gaussian")], "add_remove", doc.targets)
    doc.reset([], "add_remove", doc.targets)
    qtmodeltester.check(model)
    assert model.rowCount() == 0


def test_editing_the_count_cell_changes_the_document_and_is_undoable():
    doc, stack, _, model = make()
    assert model.setData(model.index(0, COL_COUNT), "1e3", Qt.ItemDataRole.EditRole)
    assert doc.row(0).count == 1000
    assert model.data(model.index(0, COL_COUNT)) == "1\u202f000"
    stack.undo()
    assert doc.row(0).count == 10


def test_label_and_kind_cells():
    doc, _, _, model = make()
    assert model.setData(model.index(1, COL_LABEL), "  census  ")
    assert doc.row(1).label == "census"
    assert not model.setData(model.index(1, COL_LABEL), "x" * 201)
    assert model.setData(model.index(1, COL_KIND), "subsampled_laplace")
    assert doc.row(1).kind == "subsampled_laplace"
    assert doc.row(1).params["scale"] == 1.0  # shared parameter kept
    assert not model.setData(model.index(1, COL_KIND), "no such kind")
    assert not model.flags(model.index(0, COL_PARAMS)) & Qt.ItemFlag.ItemIsEditable


def test_invalid_values_are_marked_on_their_cell_with_the_reason():
    doc, _, _, model = make()
    for typed in ("abc", "-5", "nan", "inf", "1.5", "0"):
        model.setData(model.index(0, COL_COUNT), typed)
        err = model.data(model.index(0, COL_COUNT), ErrorRole)
        assert err and err.startswith("Count must be a whole number from 1 to"), (typed, err)
        assert err in model.data(model.index(0, COL_COUNT), Qt.ItemDataRole.ToolTipRole)
        assert model.data(model.index(0, COL_COUNT), Qt.ItemDataRole.BackgroundRole) is not None
        assert model.data(model.index(0, COL_LABEL), Qt.ItemDataRole.BackgroundRole) is None
        assert "⚠" in model.headerData(0, Qt.Orientation.Vertical)
        assert doc.errors()[0][0] == 0
    model.setData(model.index(0, COL_COUNT), "7")
    assert model.data(model.index(0, COL_COUNT), ErrorRole) is None
    assert doc.errors() == []


def test_a_bad_parameter_marks_the_parameters_cell():
    doc, _, editor, model = make()
    editor.replace(2, doc.row(2).with_param("sampling_rate", 1.5))
    assert model.data(model.index(2, COL_PARAMS), Qt.ItemDataRole.BackgroundRole) is not None
    assert "Sampling rate q must be between 0 and 1; you typed 1.5" in model.data(
        model.index(2, COL_PARAMS), Qt.ItemDataRole.ToolTipRole)
    assert model.data(model.index(2, COL_COUNT), Qt.ItemDataRole.BackgroundRole) is None


def test_merged_keystrokes_undo_in_one_step():
    doc, stack, editor, _ = make()
    for text in ("1", "1.", "1.5"):
        editor.replace(0, doc.row(0).with_param("sigma", float(text)), merge_key=("sigma", 1))
    assert stack.count() == 1
    stack.undo()
    assert doc.row(0).params["sigma"] == 2.0
    stack.redo()
    assert doc.row(0).params["sigma"] == 1.5


def test_the_editor_panel_adds_moves_and_deletes_rows_with_undo(qtbot):
    from PySide6.QtWidgets import QComboBox

    from prvgui.gui.editor import CompositionEditor
    doc, stack, editor, _ = make()
    panel = CompositionEditor(doc, editor)
    qtbot.addWidget(panel)
    panel.show()
    panel.select_row(0)
    panel.add("randomized_response")
    assert doc.row(1).kind == "randomized_response" and panel.current_row() == 1
    assert panel.form.row_index == 1 and list(panel.form.params) == ["epsilon"]
    panel.move(-1)
    assert doc.row(0).kind == "randomized_response" and panel.current_row() == 0
    assert not panel.actions_["up"].isEnabled()
    panel.duplicate()
    assert len(doc) == 5 and doc.row(1) == doc.row(0)
    panel.delete()
    assert len(doc) == 4
    # the Mechanism column edits through a combo box
    index = panel.model.index(0, COL_KIND)
    panel.view.edit(index)
    combo = panel.view.findChild(QComboBox)
    combo.setCurrentIndex(combo.findData("pure_dp"))
    panel.view.itemDelegateForColumn(COL_KIND).setModelData(combo, panel.model, index)
    assert doc.row(0).kind == "pure_dp"
    while stack.canUndo():
        stack.undo()
    assert [r.kind for r in doc.rows] == ["gaussian", "laplace", "subsampled_gaussian"]
    panel.detach()
