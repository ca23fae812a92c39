"""Every registered kind through the row form: one field per declared parameter, with its title
and unit, and typing a value edits the document (one undo step)."""
import pytest

from prvgui.accounting.kinds.base import Choice, Points, Vector
from prvgui.document.list_csv import list_text, parse_list
from PySide6.QtGui import QUndoStack
from PySide6.QtWidgets import QComboBox, QLabel, QLineEdit

from prvgui.accounting.mechanisms import MECHANISM_KINDS
from prvgui.document.model import Document, RowSpec
from prvgui.gui.row_form import RowForm
from prvgui.gui.undo import Editor


@pytest.mark.parametrize("kind", list(MECHANISM_KINDS))
def test_the_form_shows_and_edits_every_parameter_of_every_kind(qtbot, kind):
    doc = Document([RowSpec.default(kind)])
    stack = QUndoStack()
    form = RowForm(doc, Editor(doc, stack))
    qtbot.addWidget(form)
    form.set_row(0)
    all_specs = MECHANISM_KINDS[kind].param_specs()
    specs = {n: p for n, p in all_specs.items() if not isinstance(p, Choice)}
    choices = {n: p for n, p in all_specs.items() if isinstance(p, Choice)}
    assert list(form.params) == list(specs) and list(form.choices) == list(choices)
    assert form.kind.currentData() == kind
    labels = {lab.text() for lab in form.findChildren(QLabel)}
    for name, spec in specs.items():
        edit = form.findChild(QLineEdit, f"param_{name}")
        assert edit is not None and spec.unit in labels and spec.title in labels
        if isinstance(spec, (Vector, Points)) and spec.initial == ():  # an optional list, empty: none
            assert edit.text() == ""
            continue
        if isinstance(spec, (Vector, Points)):  # a list: one line of text, read back as the list
            points = isinstance(spec, Points)
            assert parse_list(edit.text(), points) == spec.initial
            new = spec.initial[::-1] if not points else spec.initial[:-1]
            edit.setText("")
            qtbot.keyClicks(edit, list_text(new, points))
            assert doc.row(0).params[name] == new, name
            continue
        assert float(edit.text()) == spec.initial
        # (a whole-number parameter such as an integer sensitivity takes the next whole number)
        new = spec.initial + 1 if spec.integer else spec.initial / 2 if spec.initial > 0 else 0.5
        edit.setText("")
        qtbot.keyClicks(edit, repr(new))
        assert doc.row(0).params[name] == new, name
        assert doc.row(0).error() is None
    if kind == "pmf_pair":  # p and q were swapped: still a valid pair
        assert doc.row(0).error() is None
    stack.undo()  # each field was its own undo step: the last one is undone
    last = list(specs)[-1]
    assert doc.row(0).params[last] == specs[last].initial
    for name, spec in choices.items():  # a choice is a combo box; picking another is one undo step
        box = form.findChild(QComboBox, f"param_{name}")
        assert box is not None and box.currentData() == spec.initial and spec.title in labels
        other = next(v for v, _ in spec.choices if v != spec.initial)
        box.activated.emit(box.findData(other))
        assert doc.row(0).params[name] == other
        stack.undo()
        assert doc.row(0).params[name] == spec.initial and box.currentData() == spec.initial
