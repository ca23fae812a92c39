"""List parameters in the window: one line of text per list, Fill from CSV… (one undo step; a bad
file is named by line and leaves the row as it was), the table's short summary."""
from prvgui.document.model import RowSpec
from prvgui.gui.table_model import COL_PARAMS

from conftest import FAST_TARGETS


def _window_with(window, *rows):
    window.doc.reset([RowSpec.default(k) for k in rows], "add_remove", FAST_TARGETS)
    window.composition.select_row(0)
    return window.composition.form


def test_fill_from_csv_is_one_undo_step(window, tmp_path, qtbot):
    form = _window_with(window, "pmf_pair")
    f = tmp_path / "pair.csv"
    f.write_text("# outcome probabilities\np,q\n0.5,0.25\n0.25,0.25\n0.25,0.5\n")
    assert form.fill_from_csv(str(f))
    row = window.doc.row(0)
    assert row.params["p"] == (0.5, 0.25, 0.25) and row.params["q"] == (0.25, 0.25, 0.5)
    assert row.error() is None and form.params["p"].edit.text() == "0.5, 0.25, 0.25"
    model = window.composition.view.model()
    assert model.data(model.index(0, COL_PARAMS)) == "p: 3 outcomes, q: 3 outcomes"
    window.stack.undo()
    assert window.doc.row(0).params["p"] == (0.75, 0.25)


def test_a_bad_csv_file_is_named_by_line_and_changes_nothing(window, tmp_path):
    form = _window_with(window, "privacy_profile")
    before = window.doc.row(0)
    f = tmp_path / "profile.csv"
    f.write_text("epsilon,delta\n0.5,1e-3\n1.0,oops\n")
    assert not form.fill_from_csv(str(f))
    assert window.doc.row(0) == before
    assert form.error_label.text() == ('Row 1: cannot fill from profile.csv: line 3, delta: δ must be a '
                                       'number (between 0 and 1); the file has "oops"')
    f.write_text("eps delta\n")  # then a good file: the message goes
    f.write_text("epsilon,delta\n0.5,1e-3\n2,1e-9\n")
    assert form.fill_from_csv(str(f)) and not form.error_label.isVisible()
    assert window.doc.row(0).params["points"] == ((0.5, 1e-3), (2.0, 1e-9))


def test_typed_lists_are_checked_like_other_fields(window, qtbot):
    form = _window_with(window, "pmf_pair", "privacy_profile")
    edit = form.params["p"].edit
    edit.selectAll()
    qtbot.keyClicks(edit, "0.5, 0.6")
    assert form.error_label.text() == "Row 1: Probabilities p must sum to 1 (within 1e-9); they sum to 1.1"
    assert edit.styleSheet() and not form.params["q"].edit.styleSheet()
    edit.selectAll()
    qtbot.keyClicks(edit, "0.25 0.75")
    assert not form.error_label.isVisible() and window.doc.row(0).params["p"] == (0.25, 0.75)
    window.composition.select_row(1)
    edit = form.params["points"].edit
    edit.selectAll()
    qtbot.keyClicks(edit, "1 1e-5; 2, -1")
    assert form.error_label.text() == ("Row 2: Profile points must be a list of [ε, δ] pairs with δ between "
                                       "0 and 1; entry 2: you typed -1")
    edit.selectAll()
    qtbot.keyClicks(edit, "1 1e-5; 2 1e-9")
    assert window.doc.row(1).params["points"] == ((1.0, 1e-5), (2.0, 1e-9))


class _Answer:
    """A ListDialog stand-in that answers with lines typed into it."""

    def __init__(self, lines):
        self.lines = lines

    def __call__(self, title, text, points, parent):
        from prvgui.gui.list_editor import ListDialog
        self.dialog = ListDialog(title, text, points, parent)
        self.shown = self.dialog.editor.toPlainText()
        self.dialog.editor.setPlainText(self.lines)
        self.dialog.exec = lambda: True
        return self.dialog


def test_a_long_list_is_edited_one_entry_per_line_as_one_undo_step(window, qtbot):
    """Issue 31: long pmf / profile lists had only a one-line field."""
    form = _window_with(window, "pmf_pair", "privacy_profile")
    answer = _Answer("0.4\n0.3\n0.2\n0.1\n")
    assert form.edit_list("p", "P", answer)
    assert answer.shown == "0.75\n0.25"  # the field's list, one entry per line
    assert window.doc.row(0).params["p"] == (0.4, 0.3, 0.2, 0.1)
    assert form.params["p"].edit.text() == "0.4, 0.3, 0.2, 0.1"
    window.stack.undo()
    assert window.doc.row(0).params["p"] == (0.75, 0.25)
    window.composition.select_row(1)
    form = window.composition.form
    assert form.edit_list("points", "Points", _Answer("0.5 1e-3\n1 1e-5\n2 1e-8"))
    assert window.doc.row(1).params["points"] == ((0.5, 1e-3), (1.0, 1e-5), (2.0, 1e-8))
