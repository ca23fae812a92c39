"""Issue 15, "words people use", in the window: typing a bad value into any field gives one
message that names the field by its label and shows what was typed, once; every kind, tab,
accountant and Add item has a one-sentence tooltip; the results table shows all its columns at
1024 px; fields keep what the user typed.
"""
import pytest

from prvgui.accounting.kinds.base import Matrix

from prvgui.accounting.kinds.base import Choice, Points, Vector
from prvgui.document.list_csv import list_text
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from prvgui.accounting.mechanisms import MECHANISM_KINDS
from prvgui.document.model import RowSpec, Targets
from prvgui.gui.budget_view import BudgetView
from prvgui.gui.calibrate_dialog import CalibrateDialog
from prvgui.gui.dpsgd_helper import DpSgdDialog
from prvgui.gui.editor import KindDelegate
from prvgui.gui.table_model import COL_KIND, COL_PARAMS
from prvgui.gui.widgets import field_value
from prvgui.paths import resource_dir

from conftest import FAST_TARGETS, RESULT_TIMEOUT

FIELDS = [(kind, name, spec.title, name in cls.defaults()) for kind, cls in MECHANISM_KINDS.items()
          for name, spec in cls.param_specs().items() if not isinstance(spec, Choice)]  # choices: combo boxes
INTERNAL = ("sampling_rate", "sigma", "scale", "epsilon", "delta", "eps_error", "sensitivity", "got ",
            *MECHANISM_KINDS)


def _clean(message: str, label: str) -> None:
    rest = message.replace(label, "")
    for word in INTERNAL:
        assert word not in rest, (word, message)


def _type(qtbot, edit, text):
    edit.selectAll()
    if text:
        qtbot.keyClicks(edit, text)
    else:
        qtbot.keyClick(edit, Qt.Key.Key_Backspace)


def _bad_values(spec, optional):
    out = [("abc", '"abc"'), ("inf", "inf"), ("nan", "nan"), ("1e400", "1e400")]
    if spec.lo >= 0 and not isinstance(spec, Matrix):  # (a matrix or a band may hold any number)
        out.append(("-2", "-2"))
    if spec.hi == 1.0:
        out.append(("1.5", "1.5"))
    if not optional:
        out.append(("", None))
    return out


@pytest.mark.parametrize("kind,name,label,optional", FIELDS)
def test_typing_a_bad_parameter_names_the_label_and_the_value_once(qtbot, window, kind, name, label,
                                                                   optional):
    relation = "add_remove" if RowSpec.default(kind).error("add_remove") is None else "replace_one"
    window.doc.reset([RowSpec.default(kind)], relation, FAST_TARGETS)
    window.composition.select_row(0)
    form = window.composition.form
    edit = form.params[name].edit
    spec = MECHANISM_KINDS[kind].param_specs()[name]
    for text, shown in _bad_values(spec, optional):
        with qtbot.waitSignal(window.recomputer.blocked, timeout=RESULT_TIMEOUT) as blocker:
            _type(qtbot, edit, text)
        typed = f"you typed {shown}" if shown else "the field is empty"
        shown_in_form = form.error_label.text()
        assert shown_in_form.startswith(f"Row 1: {label} must be "), shown_in_form
        assert shown_in_form.endswith(typed), shown_in_form
        assert shown_in_form.count(label) == 1 and (shown is None or shown_in_form.count(shown) == 1)
        _clean(shown_in_form, label)
        # the status bar, the stale results banner and the field's tooltip say the same, once
        assert blocker.args[0] == f"fix row 1: {shown_in_form[len('Row 1: '):]}"
        assert window.status.text().count(label) == 1
        assert edit.styleSheet() and edit.toolTip().split("<br>")[0].count(label) == 1
        assert not any(f.edit.styleSheet() for n, f in form.params.items() if n != name)
    _type(qtbot, edit, list_text(spec.initial, isinstance(spec, Points)) if isinstance(spec, (Vector, Points))
          else str(spec.initial))
    assert not form.error_label.isVisible()


@pytest.mark.parametrize("text,shown", [("abc", '"abc"'), ("0", "0"), ("2.5", "2.5"), ("1e400", "1e400"),
                                        ("", None)])
def test_typing_a_bad_count(qtbot, window, text, shown):
    window.doc.reset([RowSpec.default("gaussian")], "add_remove", FAST_TARGETS)
    window.composition.select_row(0)
    form = window.composition.form
    with qtbot.waitSignal(window.recomputer.blocked, timeout=RESULT_TIMEOUT):
        _type(qtbot, form.count.edit, text)
    message = form.error_label.text()
    assert message == ("Row 1: Count must be a whole number from 1 to 1,000,000,000; "
                       + (f"you typed {shown}" if shown else "the field is empty"))
    assert form.count.edit.styleSheet() and not form.params["sigma"].edit.styleSheet()


@pytest.mark.parametrize("field,label,text,expected", [
    ("delta", "Target δ", "2", "must be greater than 0 and less than 1; you typed 2"),
    ("delta", "Target δ", "1e400", "must be greater than 0 and less than 1; you typed 1e400"),
    ("delta", "Target δ", "abc", 'must be a number (greater than 0 and less than 1); you typed "abc"'),
    ("epsilon", "Report δ at ε", "-1", "must be at least 0; you typed -1"),
    ("epsilon", "Report δ at ε", "1e400", "must be at most 1.8e308; you typed 1e400"),
    ("eps_error", "Accuracy (ε error)", "100", "must be between 1e-6 and 10; you typed 100"),
    ("eps_error", "Accuracy (ε error)", "", "must be a number (between 1e-6 and 10); the field is empty"),
])
def test_typing_a_bad_target(qtbot, window, field, label, text, expected):
    window.doc.reset([RowSpec.default("gaussian")], "add_remove", FAST_TARGETS)
    edit = window.targets.fields[field]
    with qtbot.waitSignal(window.recomputer.blocked, timeout=RESULT_TIMEOUT) as blocker:
        _type(qtbot, edit, text)
    assert window.targets.error() == f"{label} {expected}"
    assert window.targets.error_label.text() == f"{label} {expected}"
    assert blocker.args[0] == f"fix the targets: {label} {expected}"
    assert edit.toolTip().split("<br>")[0].count(label) == 1


def test_dialog_messages_name_their_labels(qtbot):
    dialog = DpSgdDialog(None, {"dataset": 60000, "batch": 256, "epochs": 60, "sigma": 1.1}, "row 1")
    qtbot.addWidget(dialog)
    for key, text, expected in [
            ("batch", "70000", "Batch size B must be a whole number from 1 to 60,000 (the dataset size); "
                               "you typed 70000"),
            ("dataset", "1e400", "Dataset size N must be a whole number from 1 to 1,000,000,000,000; "
                                 "you typed 1e400"),
            ("epochs", "0", "Epochs must be greater than 0; you typed 0"),
            ("sigma", "x", 'Noise multiplier σ must be a number (at least 0); you typed "x"')]:
        before = dialog.fields[key].text()
        dialog.fields[key].setText(text)
        assert dialog.error_label.text() == expected
        assert dialog.fields[key].styleSheet()
        assert not any(e.styleSheet() for k, e in dialog.fields.items() if k != key)
        dialog.fields[key].setText(before)
        assert dialog.row() is not None


# ------------------------------------------------------------------ tooltips
def _sentence(text: str) -> bool:
    return bool(text) and len(text.split()) >= 5 and text.rstrip().endswith(".")


def test_every_kind_tab_add_item_and_accountant_has_a_one_sentence_tooltip(qtbot, window, load):
    result = load(window)
    editor = window.composition
    actions = editor.add_menu.actions()
    assert len(actions) == len(MECHANISM_KINDS)
    for a in actions:
        assert _sentence(a.toolTip()) and a.toolTip() != a.text(), a.text()
    assert editor.add_menu.toolTipsVisible()
    for name in ("duplicate", "delete", "up", "down", "dpsgd"):
        assert _sentence(editor.actions_[name].toolTip()), name
    editor.select_row(0)
    combo = editor.form.kind
    assert combo.count() == len(MECHANISM_KINDS)
    for i in range(combo.count()):
        assert _sentence(combo.itemData(i, Qt.ItemDataRole.ToolTipRole)), combo.itemText(i)
    box = KindDelegate().createEditor(editor.view, None, None)
    for i in range(box.count()):
        assert _sentence(box.itemData(i, Qt.ItemDataRole.ToolTipRole)), box.itemText(i)
    box.deleteLater()
    model = editor.model
    for r in range(model.rowCount()):
        assert _sentence(model.data(model.index(r, COL_KIND), Qt.ItemDataRole.ToolTipRole))
        params = model.data(model.index(r, COL_PARAMS), Qt.ItemDataRole.ToolTipRole)
        assert params.startswith(model.data(model.index(r, COL_PARAMS)))  # the whole text, not elided
    tabs = window.tabs
    assert tabs.count() == 8  # four plots, Risk & noise, Audit, Budget, Sweep
    for i in range(tabs.count()):
        assert _sentence(tabs.tabToolTip(i)), tabs.tabText(i)
    table = window.results.table
    assert table.rowCount() == 1 + len(result.comparisons)
    for r in range(table.rowCount()):
        for c in range(table.columnCount() - 1):
            assert _sentence(table.item(r, c).toolTip()), (table.item(r, 0).text(), c)
    tips = {table.item(r, 0).toolTip() for r in range(table.rowCount())}
    assert len(tips) == table.rowCount()  # one sentence per accountant, not one for all


# ------------------------------------------------------------------ layout
def _settle(window, width, height):
    window.resize(width, height)
    for _ in range(5):
        QApplication.processEvents()


def _all_columns_visible(table):
    header = table.horizontalHeader()
    last = table.columnCount() - 1
    right = header.sectionViewportPosition(last) + header.sectionSize(last)
    return not table.horizontalScrollBar().isVisible() and right <= table.viewport().width()


@pytest.mark.parametrize("example", ["mixed.json", "dpsgd_mnist.json", "census_laplace.json"])
def test_the_results_table_shows_every_column_at_1024_and_1280(qtbot, window, example):
    with qtbot.waitSignal(window.recomputer.result_ready, timeout=RESULT_TIMEOUT):
        assert window.files.open_example(resource_dir() / "examples" / example, ask=False)
    table = window.results.table
    for width, height in ((1024, 700), (1280, 800)):
        _settle(window, width, height)
        assert window.width() == width
        widths = [table.columnWidth(c) for c in range(table.columnCount())]
        assert _all_columns_visible(table), (width, widths)
        # text wraps at words, never inside one: each text column is at least as wide as its longest word
        for c in (0, 1, 4):
            fm = table.fontMetrics()
            for r in range(table.rowCount()):
                words = table.item(r, c).text().split()
                if words and r > 0:  # row 0 is bold
                    assert table.columnWidth(c) >= max(fm.horizontalAdvance(w) for w in words), (c, r)
        # the composition's parameters stay readable beside the label and the mechanism
        view = window.composition.view
        assert view.columnWidth(COL_PARAMS) >= 90, view.columnWidth(COL_PARAMS)


# ------------------------------------------------------------------ what the user typed
def test_a_field_shows_what_the_user_typed_when_the_row_is_shown_again(qtbot, window):
    window.doc.reset([RowSpec.default("gaussian"), RowSpec.default("gaussian")], "add_remove", FAST_TARGETS)
    editor = window.composition
    editor.select_row(0)
    edit = editor.form.params["sigma"].edit
    _type(qtbot, edit, "1.23456789")
    assert window.doc.row(0).params["sigma"] == 1.23456789
    editor.select_row(1)
    assert edit.text() == "1"
    editor.select_row(0)
    assert edit.text() == "1.23456789"  # not 1.23457


def test_dialogs_show_what_the_user_typed_and_keep_the_full_value_of_what_they_computed(qtbot, window):
    from PySide6.QtGui import QUndoStack
    typed, computed = 1.23456789e-5, 2.0 / 3.0
    doc = window.doc
    doc.reset([RowSpec.default("gaussian")], "add_remove", Targets(typed, computed, 0.05))
    dialog = CalibrateDialog(doc, 0, None, QUndoStack())
    qtbot.addWidget(dialog)
    assert dialog.delta_edit.text() == "1.23456789e-05"
    assert dialog.target_edit.text() == "0.666667"
    assert field_value(dialog.target_edit) == computed and field_value(dialog.delta_edit) == typed
    dialog.target_edit.setText("0.5")
    assert field_value(dialog.target_edit) == 0.5
    dialog.shutdown()
    view = BudgetView(doc)
    qtbot.addWidget(view)
    assert view.eps_edit.text() == "0.666667" and field_value(view.eps_edit) == computed
    assert view.delta_edit.text() == "1.23456789e-05" and field_value(view.delta_edit) == typed
    view.shutdown()
    helper = DpSgdDialog(None, {"dataset": 60000, "batch": 256, "epochs": 60, "sigma": computed}, "row 1")
    qtbot.addWidget(helper)
    assert helper.fields["sigma"].text() == "0.666667"
    assert helper.row().params["sigma"] == computed


def test_minor_labels_of_a_log_axis_never_overlap(qtbot):
    import math

    import pyqtgraph as pg
    from PySide6.QtGui import QFontMetricsF

    from prvgui.gui.axes import PowerAxis
    axis = PowerAxis("bottom")
    plot = pg.PlotWidget(axisItems={"bottom": axis})
    qtbot.addWidget(plot)
    plot.setLogMode(x=True)
    plot.resize(520, 300)
    plot.show()
    plot.setXRange(0.0, math.log10(40), padding=0)
    QApplication.processEvents()
    minors = [math.log10(m * 10 ** e) for e in (0, 1) for m in range(2, 10) if m * 10 ** e <= 40]
    texts = axis.logTickStrings(minors, 1, 1)
    fm = QFontMetricsF(axis.font())
    px = axis.width() / (axis.range[1] - axis.range[0])
    kept = [(x * px, fm.horizontalAdvance(t)) for x, t in zip(minors, texts) if t]
    kept += [(e * px, fm.horizontalAdvance("10⁰")) for e in (0, 1)]  # the powers of ten, labelled too
    kept.sort()
    assert len(kept) >= 5  # 2·10⁰, 3·10⁰ and 2·10¹ ... are still labelled
    for (x1, w1), (x2, w2) in zip(kept, kept[1:]):
        assert x2 - x1 >= (w1 + w2) / 2, (kept, texts)
    plot.resize(2000, 300)  # wide: every label fits
    QApplication.processEvents()
    assert all(axis.logTickStrings(minors, 1, 1))


@pytest.mark.parametrize("needed,advice", [(0.05, "an accuracy (ε error) of about 0.05 would fit"),
                                           (1e3, "no accuracy setting is coarse enough")])
def test_a_grid_too_large_gives_one_piece_of_advice_that_is_true(needed, advice):
    from prvgui.accounting.core.errors import GridTooLarge, grid_exhausted
    from prvgui.gui.tasks import failure_text
    message = failure_text(grid_exhausted(5e7, needed, 25_165_824))
    assert message.count(advice) == 1 and message.count(";") == 1  # one piece of advice
    assert "try a larger" not in message and "eps_error" not in message
    # a bare grid error gets the advice once
    message = failure_text(GridTooLarge(10**9, 25_165_824, 3.0))
    assert message.endswith("; try a larger accuracy (ε error)") and message.count("accuracy") == 1
