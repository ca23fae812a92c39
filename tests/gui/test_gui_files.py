"""Files: save/load round trip (including a file written by hand), bad files, the unsaved-changes
prompt, recent files, examples, and every export (PNG loads, SVG parses, CSV has its columns)."""
import csv
import io
import json
import xml.etree.ElementTree as ET

import pytest
from PySide6.QtGui import QImage

from prvgui.document import fileio
from prvgui.document.model import RowSpec, Targets
from prvgui.paths import examples

HAND_WRITTEN = """{
  "format": "prvgui.composition", "version": 1,
  "targets": {"delta": 1e-6, "epsilon": 0.5, "eps_error": 0.05},
  "mechanisms": [
    {"kind": "gaussian", "sigma": 4, "count": 3, "label": "written by hand"},
    {"kind": "randomized_response", "epsilon": 0.25}
  ]
}
"""
CSV_COLUMNS = {
    "profile": ["epsilon", "delta_lower", "delta_estimate", "delta_upper", "delta_rdp", "delta_gdp"],
    "tradeoff": ["alpha", "beta_lower", "beta_estimate", "beta_upper", "beta_gdp"],
    "steps": ["count", "epsilon_lower", "epsilon_estimate", "epsilon_upper", "epsilon_rdp", "epsilon_gdp"],
    "pld": ["loss", "density", "atom_mass"],
}


def test_save_and_load_round_trip(qtbot, window, load, tmp_path):
    load(window)
    path = tmp_path / "saved.json"
    assert window.files.save_as(path)
    assert window.stack.isClean() and not window.isWindowModified()
    assert "saved.json" in window.windowTitle()
    again = fileio.load(path)
    assert again.rows == window.doc.rows
    assert again.targets == window.doc.targets
    # edit, then open the saved file again: the edit is gone
    window.editor.replace(0, window.doc.row(0).with_param("sigma", 9.0))
    assert window.isWindowModified()
    with qtbot.waitSignal(window.recomputer.result_ready, timeout=60_000):
        assert window.files.open(path)
    assert window.doc.rows == again.rows
    assert window.stack.count() == 0


def test_open_a_file_written_by_hand(qtbot, window, tmp_path):
    path = tmp_path / "hand.json"
    path.write_text(HAND_WRITTEN, encoding="utf-8")
    with qtbot.waitSignal(window.recomputer.result_ready, timeout=60_000) as blocker:
        assert window.files.open(path)
    assert window.doc.rows == (RowSpec("gaussian", {"sigma": 4}, 3, "written by hand"),
                               RowSpec("randomized_response", {"epsilon": 0.25}, 1, ""))
    assert window.doc.targets == Targets(1e-6, 0.5, 0.05)
    assert window.targets.fields["delta"].text() == "1e-06"
    assert window.targets.fields["eps_error"].text() == "0.05"
    assert blocker.args[0].request.delta == 1e-6
    assert window.composition.model.rowCount() == 2
    assert window.composition.form.row_index == 0


@pytest.mark.parametrize("text,expected", [
    ("not json", "not valid JSON"),
    ('{"format": "prvgui.composition", "version": 5, "mechanisms": []}', "version"),
    ('{"format": "prvgui.composition", "version": 1, "mechanisms": [{"kind": "gaussian", "sigma": -1}]}',
     "row 1 (Gaussian), sigma: Noise σ must be at least 0; the file has -1"),
    ('{"format": "prvgui.composition", "version": 1, "mechanisms": [{"kind": "gaussian", "sigma": NaN}]}',
     "NaN"),
])
def test_a_bad_file_shows_the_reason_and_keeps_the_document(qtbot, window, load, tmp_path, text, expected):
    load(window)
    before = window.doc.rows
    path = tmp_path / "bad.json"
    path.write_text(text, encoding="utf-8")
    assert not window.files.open(path)
    assert expected in window.errors[-1]
    assert window.doc.rows == before
    assert window.files.path is None


def test_unsaved_changes_prompt(qtbot, window, load, tmp_path):
    load(window)
    window.editor.replace(0, window.doc.row(0).with_param("sigma", 3.0))
    rows = window.doc.rows
    window.files.ask_unsaved = lambda: "cancel"
    assert not window.files.new()
    assert window.doc.rows == rows
    window.files.ask_unsaved = lambda: "save"
    assert window.files.new()  # saved through ask_save_path (tmp_path/composition.json), then cleared
    assert fileio.load(tmp_path / "composition.json").rows == rows
    assert len(window.doc) == 0
    window.editor.insert(0, RowSpec.default("laplace"))
    window.files.ask_unsaved = lambda: "cancel"
    window.close()
    assert window.isVisible()  # closing was cancelled
    window.files.ask_unsaved = lambda: "discard"


def test_an_invalid_row_cannot_be_saved(window, tmp_path):
    window.editor.insert(0, RowSpec("gaussian", {"sigma": "abc"}, 1, ""))
    assert not window.files.save_as(tmp_path / "x.json")
    assert "row 1" in window.errors[-1]
    assert 'Noise σ must be a number (at least 0); you typed "abc"' in window.errors[-1]
    assert not (tmp_path / "x.json").exists()


def test_recent_files_and_last_folder_persist(qtbot, window, load, tmp_path):
    load(window)
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    window.files.save_as(a)
    window.files.save_as(b)
    assert window.files.recent_files()[:2] == [str(b.resolve()), str(a.resolve())]
    assert window.files.last_folder() == str(tmp_path.resolve())
    titles = [act.text() for act in window.files.recent_menu.actions()]
    assert any("b.json" in t for t in titles)


def test_examples_open_as_untitled_copies(qtbot, window):
    assert {p.stem for p in examples()} >= {"dpsgd_mnist", "census_laplace", "mixed"}
    action = window.findChild(type(window.help_menu.menuAction()), "example_census_laplace")
    with qtbot.waitSignal(window.recomputer.result_ready, timeout=60_000):
        action.trigger()
    assert len(window.doc) == 3 and window.files.path is None
    assert "census_laplace (example)" in window.windowTitle()


def test_window_layout_persists(qtbot, window, isolated_settings):
    from prvgui.gui.main_window import MainWindow
    window.tabs.setCurrentIndex(2)
    window.close()
    other = MainWindow(persist=True)
    qtbot.addWidget(other)
    assert other.tabs.currentIndex() == 2
    other.close()


@pytest.mark.parametrize("kind", ["profile", "tradeoff", "steps", "pld"])
def test_each_export_writes_a_valid_file(qtbot, window, load, tmp_path, kind):
    result = load(window)
    tab = window.plots[kind]
    window.tabs.setCurrentWidget(tab)
    for fmt_name in ("png", "svg", "csv"):
        assert window.export_plot(tab, fmt_name), window.errors
    png = QImage(str(tmp_path / f"{kind}.png"))
    assert not png.isNull() and png.width() >= 1000 and png.height() > 200
    root = ET.parse(tmp_path / f"{kind}.svg").getroot()
    assert root.tag.endswith("svg")
    text = (tmp_path / f"{kind}.csv").read_text(encoding="utf-8")
    comments = [line for line in text.splitlines() if line.startswith("#")]
    assert any("composition:" in line for line in comments)
    composition = json.loads(next(line for line in comments if "composition:" in line).split(": ", 1)[1])
    assert len(composition["mechanisms"]) == 2
    assert any("delta" in line for line in comments)
    rows = list(csv.reader(io.StringIO("\n".join(line for line in text.splitlines()
                                                 if not line.startswith("#")))))
    assert rows[0] == CSV_COLUMNS[kind]
    curve = getattr(result, kind)
    assert len(rows) - 1 == curve.x.size
    assert [float(r[0]) for r in rows[1:]] == pytest.approx(list(curve.x))


def test_export_before_any_result_says_so(window):
    assert not window.export_plot(window.plots["profile"], "csv")
    assert "no result" in window.errors[-1]
