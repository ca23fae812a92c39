"""File ▸ Import…: a DpEvent file becomes the window's composition (untitled, as File ▸ Open would
load it), a bad file shows the message naming the problem and keeps the document, and unsaved
changes are offered for saving first."""
import json

import pytest
from PySide6.QtWidgets import QDialogButtonBox

from prvgui.gui import import_dialog

EVENT = {"class_name": "ComposedDpEvent", "events": [
    {"class_name": "SelfComposedDpEvent", "count": 50,
     "event": {"class_name": "PoissonSampledDpEvent", "sampling_probability": 0.05,
               "event": {"class_name": "GaussianDpEvent", "noise_multiplier": 2.0}}},
    {"class_name": "LaplaceDpEvent", "noise_multiplier": 10.0}]}


@pytest.fixture
def answers(monkeypatch):
    """The dialog's answer (set ``answers["choice"]``) and the notes shown."""
    state = {"choice": None, "notes": []}
    monkeypatch.setattr(import_dialog, "ask_source_and_path", lambda files, parent: state["choice"])
    monkeypatch.setattr(import_dialog, "show_notes", lambda parent, notes: state["notes"].append(notes))
    return state


def test_file_import_loads_the_composition(qtbot, window, load, answers, tmp_path):
    load(window)
    path = tmp_path / "event.json"
    path.write_text(json.dumps(EVENT), encoding="utf-8")
    answers["choice"] = ("dpevent", str(path))
    with qtbot.waitSignal(window.recomputer.result_ready, timeout=60_000):
        window.import_action.trigger()
    assert [(r.kind, r.count) for r in window.doc.rows] == [("subsampled_gaussian", 50), ("laplace", 1)]
    assert window.doc.rows[0].label == "dp_accounting: PoissonSampled(Gaussian σ=2, q=0.05) × 50"
    assert window.files.path is None and "Untitled" in window.windowTitle()
    assert window.stack.count() == 0 and not window.errors


def test_a_bad_file_shows_the_problem_and_keeps_the_document(qtbot, window, load, answers, tmp_path):
    load(window)
    before = window.doc.rows
    path = tmp_path / "bad.json"
    path.write_text('{"class_name": "NonPrivateDpEvent"}', encoding="utf-8")
    answers["choice"] = ("dpevent", str(path))
    window.import_action.trigger()
    assert window.errors == ["bad.json: the event: NonPrivateDpEvent is not private (its epsilon is infinite): "
                             "there is nothing to account"]
    assert window.doc.rows == before


def test_unsaved_changes_are_offered_for_saving_first(qtbot, window, load, answers, tmp_path):
    load(window)
    window.editor.replace(0, window.doc.row(0).with_param("sigma", 9.0))
    asked = []
    window.files.ask_unsaved = lambda: asked.append(True) or "cancel"
    answers["choice"] = ("dpevent", str(tmp_path / "never_read.json"))
    window.import_action.trigger()
    assert asked and window.doc.row(0).params["sigma"] == 9.0 and not window.errors


def test_notes_are_shown_after_an_import(qtbot, window, answers, tmp_path):
    path = tmp_path / "params.json"
    path.write_text(json.dumps({"noise_multipliers": 1.0, "batch_size": 80, "num_samples": 1000, "num_updates": 100,
                                "delta": 1e-5, "sampling_method": "FIXED_BATCH_SIZE"}), encoding="utf-8")
    answers["choice"] = ("jax_privacy", str(path))
    with qtbot.waitSignal(window.recomputer.result_ready, timeout=60_000):
        window.import_action.trigger()
    assert window.doc.neighbouring == "replace_one" and window.doc.targets.delta == 1e-5
    assert any("twice the sensitivity" in n for n in answers["notes"][0])


def test_the_dialog_asks_for_the_source_and_the_file(qtbot):
    dialog = import_dialog.ImportDialog("")
    qtbot.addWidget(dialog)
    ok = dialog.buttons.button(QDialogButtonBox.StandardButton.Ok)
    assert not ok.isEnabled()  # no file yet
    dialog.source.setCurrentIndex(dialog.source.findData("opacus"))
    dialog.path.setText(" /data/history.json ")
    assert ok.isEnabled()
    assert dialog.choice() == ("opacus", "/data/history.json")
