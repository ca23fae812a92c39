"""Issue 15 item 7: the main window holds at 1024-1280 px whatever the row labels are."""
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from prvgui.document.model import RowSpec
from prvgui.gui.table_model import COL_LABEL

LONG = ("Per-example clipped gradients of the second fine-tuning stage on the hospital records "
        "with the larger batch size, run 2")[:120].ljust(120, "x")


def _long_rows():
    return [RowSpec("subsampled_gaussian", {"sigma": 2.0, "sampling_rate": 0.05, "sensitivity": 1.0}, 200,
                    LONG),
            RowSpec("laplace", {"scale": 10.0, "sensitivity": 1.0}, 3, "counts")]


def _settle(window, width, height):
    window.resize(width, height)
    for _ in range(5):
        QApplication.processEvents()


def test_a_120_character_label_does_not_widen_the_window(window, qtbot, load):
    assert len(LONG) == 120
    load(window, _long_rows())
    window.composition.select_row(0)
    _settle(window, 1280, 800)
    assert window.width() == 1280
    _settle(window, 1024, 700)
    assert window.width() == 1024
    # the row form's title is elided, the whole label is its tooltip
    form = window.composition.form
    assert LONG not in form.title() and form.title().startswith("Row 1: ")
    assert LONG in form.toolTip()
    # the table's label cell, the ε-vs-steps and the budget row choosers carry it in a tooltip
    model = window.composition.model
    assert LONG in model.data(model.index(0, COL_LABEL), Qt.ItemDataRole.ToolTipRole)
    steps = window.plots["steps"].row_choice
    assert LONG in steps.itemData(steps.findData(0), Qt.ItemDataRole.ToolTipRole)
    budget = window.budget.row_choice
    assert LONG in budget.itemData(budget.findData(0), Qt.ItemDataRole.ToolTipRole)


def test_a_short_label_is_shown_whole_without_a_tooltip(window, qtbot, load):
    load(window)
    window.composition.select_row(0)
    _settle(window, 1280, 800)
    assert window.composition.form.title() == "Row 1: training"
    assert window.composition.form.toolTip() == ""


def _all_columns_visible(table):
    header = table.horizontalHeader()
    last = table.columnCount() - 1
    right = header.sectionViewportPosition(last) + header.sectionSize(last)
    return not table.horizontalScrollBar().isVisible() and right <= table.viewport().width()


def test_the_budget_view_keeps_1280_px_and_every_results_column_visible(window, qtbot, load):
    # the minimum widths of the plots' toolbars, the tab titles and the budget's answer boxes
    # once pushed the window to 1632 px; as a dock it then squeezed the results table so
    # that its δ column and notes hid behind a scrollbar
    load(window, _long_rows())
    window.composition.select_row(0)
    _settle(window, 1280, 800)
    window.show_budget()
    qtbot.waitUntil(lambda: window.budget.isVisible())
    _settle(window, 1280, 800)
    assert window.width() == 1280
    assert window.tabs.currentWidget() is window.budget_tab
    assert window.results.table.isVisible() and _all_columns_visible(window.results.table)
    assert window.current_plot() is None and not window.export_plot(None, "png")
    assert window.errors == ["Choose a plot tab first: the Budget tab has no plot."]
    _settle(window, 1024, 700)
    assert window.width() == 1024
