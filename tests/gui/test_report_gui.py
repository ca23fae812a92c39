"""File ▸ Export report… and Copy as Markdown / LaTeX in the window: the report is of the shown
result (or of the one being computed), written where asked in the chosen format; failures name
the path in a message; the copied tables are the pure tables of the shown result."""
from __future__ import annotations

import re

import pytest
from PySide6.QtWidgets import QApplication

from prvgui.gui.report_export import HTML_FILTER, PDF_FILTER, with_extension
from prvgui.report.numbers import fmt_bound
from prvgui.report.tables import latex_table, markdown_table

pytestmark = pytest.mark.gui
TIMEOUT = 60_000


def _menu_texts(window, title: str) -> list[str]:
    menu = next(a.menu() for a in window.menuBar().actions() if a.text() == title)
    return [a.text() for a in menu.actions()]


def test_menus_have_the_entries(window):
    assert "Export &report (HTML or PDF)…" in _menu_texts(window, "&File")
    edit = _menu_texts(window, "&Edit")
    assert "Copy as &Markdown" in edit and "Copy as La&TeX" in edit


@pytest.mark.parametrize("name", ["report.html", "report.pdf"])
def test_export_writes_the_shown_result(qtbot, window, load, tmp_path, name):
    result = load(window)
    path = tmp_path / name
    window.report_export.ask_path = lambda: str(path)
    with qtbot.waitSignal(window.report_export.written, timeout=TIMEOUT) as blocker:
        assert window.report_export.start()
    assert blocker.args == [str(path)] and window.errors == []
    data = path.read_bytes()
    if name.endswith(".pdf"):
        assert data.startswith(b"%PDF-")
    else:
        page = data.decode("utf-8")
        assert page.count("<svg") == 4 and "<td>training</td>" in page
        assert f"ε ≤ {fmt_bound(result.certified_upper.value)}" in page
    assert "Report written" in window.status.text()


def test_export_while_computing_waits_for_the_result(qtbot, window, load, tmp_path, small_rows):
    load(window)
    path = tmp_path / "r.html"
    window.report_export.ask_path = lambda: str(path)
    window.doc.replace(0, small_rows[0].with_param("sigma", 3.0))  # now pending
    assert window.recomputer.state in ("pending", "running")
    with qtbot.waitSignal(window.report_export.written, timeout=TIMEOUT):
        assert window.report_export.start()
    page = path.read_text(encoding="utf-8")
    assert "Noise multiplier σ = 3" in page
    assert f"ε ≤ {fmt_bound(window.last_result.certified_upper.value)}" in page


def test_a_pinned_result_goes_into_the_report(qtbot, window, load, tmp_path, small_rows):
    first = load(window)
    assert window.compare.pin()  # Pin as A, then an edit: A stays pinned
    with qtbot.waitSignal(window.recomputer.result_ready, timeout=TIMEOUT):
        window.editor.replace(0, small_rows[0].with_param("sigma", 3.0), "edit")
    assert window.pinned.result is first
    path = tmp_path / "pinned.html"
    with qtbot.waitSignal(window.report_export.written, timeout=TIMEOUT):
        window.report_export.start(str(path))
    page = path.read_text(encoding="utf-8")
    assert f"A ({window.pinned.label}): ε ≤ {fmt_bound(first.certified_upper.value)}" in page
    assert len(re.findall(r">A \(.*?\): PRV (upper|lower)<", page)) == 3


@pytest.mark.parametrize("name, words", [("report.txt", "must end in .html, .pdf, .md or .json"),
                                         ("missing/report.html", "does not exist")])
def test_export_errors_name_the_path(window, load, tmp_path, name, words):
    load(window)
    path = str(tmp_path / name)
    assert not window.report_export.start(path)
    assert len(window.errors) == 1 and window.errors[0].startswith(path) and words in window.errors[0]


def test_export_without_a_result_says_so(window, tmp_path):
    assert not window.report_export.start(str(tmp_path / "r.html"))
    assert "no current result" in window.errors[0]
    assert not (tmp_path / "r.html").exists()


def test_the_chosen_filter_gives_the_extension():
    assert with_extension("/x/report", PDF_FILTER) == "/x/report.pdf"
    assert with_extension("/x/report", HTML_FILTER) == "/x/report.html"
    assert with_extension("/x/report.pdf", HTML_FILTER) == "/x/report.pdf"


def test_copy_as_markdown_and_latex(qtbot, window, load):
    result = load(window)
    assert window.results.copy_button.isEnabled()
    window.results.copy_as("markdown")
    assert QApplication.clipboard().text() == markdown_table(result)
    assert "Markdown" in window.status.text()
    window.results.copy_actions["latex"].trigger()  # the button's menu and the table's context menu
    assert QApplication.clipboard().text() == latex_table(result)
    assert window.results.copy_actions["latex"] in window.results.table.actions()


def test_copy_without_a_result_does_nothing(window):
    QApplication.clipboard().setText("before")
    assert not window.results.copy_as("markdown")
    assert QApplication.clipboard().text() == "before" and not window.results.copy_button.isEnabled()
