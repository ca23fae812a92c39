"""File ▸ Import workload (CSV)…: the census workload becomes the window's composition (untitled, as
File ▸ Open would load it), its shares fill the Budget tab's table with the dominant rows marked, a bad
file shows the message naming the line and the column and keeps the document, and an edit marks the
shares out of date."""
import pytest

from prvgui.gui import workload_panel
from prvgui.paths import resource_dir

from conftest import RESULT_TIMEOUT

CENSUS = str(resource_dir() / "examples" / "census_workload.csv")


@pytest.fixture
def answer(monkeypatch):
    """The file the dialog answers with (set ``answer["path"]``)."""
    state = {"path": None}
    monkeypatch.setattr(workload_panel, "ask_path", lambda files, parent: state["path"])
    return state


def test_importing_the_census_workload_shows_its_shares(qtbot, window, load, answer):
    load(window)
    answer["path"] = CENSUS
    with qtbot.waitSignal(window.shares.shown, timeout=RESULT_TIMEOUT) as blocker:
        window.import_workload_action.trigger()
    shares = blocker.args[0]
    assert len(window.doc) == len(shares["rows"]) >= 24 and not window.errors
    assert {r.kind for r in window.doc.rows} == {"discrete_gaussian"}
    assert window.files.path is None and "Untitled" in window.windowTitle() and window.stack.count() == 0
    assert window.tabs.currentWidget() is window.budget_tab and window.shares.isVisible()
    table = window.shares.table
    assert table.rowCount() == len(window.doc)
    marked = [int(table.item(k, 0).text()) for k in range(table.rowCount()) if table.item(k, 5).text() == "dominant"]
    assert sorted(marked) == sorted(shares["dominant"]) and marked
    from prvgui.engine.workload_view import dominant_text
    assert len(shares["rows"]) <= workload_panel.MAX_SHOWN
    assert f"dominant: {dominant_text(shares['dominant'], len(shares['rows']))}." in window.shares.status.text()
    assert table.horizontalHeaderItem(3).text() == "ρ (zCDP)"
    assert "not a sum of the rows' shares" in window.shares.notes.text()
    window.editor.replace(0, window.doc.row(0).with_param("sigma", 99.0))
    assert "Out of date" in window.shares.status.text()


def test_a_bad_workload_shows_the_line_and_column_and_keeps_the_document(qtbot, window, load, answer, tmp_path):
    load(window)
    before = window.doc.rows
    path = tmp_path / "bad.csv"
    path.write_text("label,kind,count,sigma\na,discrete_gaussian,1,abc\n", encoding="utf-8")
    answer["path"] = str(path)
    window.import_workload_action.trigger()
    assert window.errors == ['bad.csv: line 2, column sigma: Noise σ must be a number (greater than 0 and at '
                             'most 100000); the file has "abc"']
    assert window.doc.rows == before


def test_more_rows_than_a_composition_file_holds_are_refused(qtbot, window, load, answer, tmp_path):
    load(window)
    path = tmp_path / "big.csv"
    path.write_text("kind,sigma\n" + "gaussian,1\n" * 10_001, encoding="utf-8")
    answer["path"] = str(path)
    window.import_workload_action.trigger()
    assert window.errors == ["big.csv: 10,001 rows; the window holds a composition file's 10,000 at most (prvgui "
                             "workload on the command line reads up to 100,000)"]


def test_no_file_chosen_changes_nothing(qtbot, window, load, answer):
    load(window)
    before = window.doc.rows
    assert not workload_panel.import_workload(window.files, window.shares, window)
    assert window.doc.rows == before and not window.errors


def test_shares_compute_on_demand_for_the_documents_rows(qtbot, window, load):
    load(window)  # a subsampled Gaussian and a Laplace row: no exact rho, RDP at one order
    with qtbot.waitSignal(window.shares.shown, timeout=RESULT_TIMEOUT) as blocker:
        window.shares.compute_button.click()
    assert blocker.args[0]["currency"] == "rdp"
    assert window.shares.table.horizontalHeaderItem(3).text().startswith("RDP at order α = ")
