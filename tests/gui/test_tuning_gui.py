"""Hyperparameter tuning in the window: the Tuning… dialog checks its fields (messages name them),
setting a tuning goes through the undo stack, and the results panel shows the engine's line."""
from PySide6.QtWidgets import QDialog, QDialogButtonBox

from prvgui.document.model import Tuning
from prvgui.gui.tuning_dialog import TuningDialog, tuning_from_text

from conftest import RESULT_TIMEOUT


def test_fields_are_checked_and_named(qtbot):
    assert tuning_from_text(None, "x", "y") == (None, None, None)
    assert tuning_from_text("poisson", "4", "")[0] == Tuning("poisson", 4.0)
    value, message, field = tuning_from_text("truncated_negative_binomial", "10", "-3")
    assert value is None and field == "eta" and message.startswith("tuning.eta must be > -1")
    dialog = TuningDialog(None)
    qtbot.addWidget(dialog)
    ok = dialog.buttons.button(QDialogButtonBox.StandardButton.Ok)
    assert dialog.tuning() is None and ok.isEnabled() and not dialog.mean.isEnabled()
    dialog.runs.setCurrentIndex(dialog.runs.findData("fixed"))
    qtbot.keyClicks(dialog.mean, ".5")  # "10.5" runs
    assert not ok.isEnabled() and "tuning.mean" in dialog.error_label.text()
    assert dialog.mean.property("invalid") and not dialog.eta.isEnabled()
    dialog.mean.setText("")
    qtbot.keyClicks(dialog.mean, "3")
    assert ok.isEnabled() and dialog.tuning() == Tuning("fixed", 3)


def test_setting_tuning_shows_the_line_and_undoes(qtbot, window, load, monkeypatch):
    load(window)
    assert window.results.tuning.isHidden()

    def accept(dialog):  # the user picks a geometric number of runs, mean 20, and presses OK
        dialog.runs.setCurrentIndex(dialog.runs.findData("truncated_negative_binomial"))
        dialog.mean.setText("20")
        dialog.eta.setText("1")
        dialog._check()
        return QDialog.DialogCode.Accepted
    monkeypatch.setattr(TuningDialog, "exec", accept)
    with qtbot.waitSignal(window.recomputer.result_ready, timeout=RESULT_TIMEOUT) as blocker:
        assert window.targets.edit_tuning()
    result = blocker.args[0]
    assert window.doc.tuning == Tuning("truncated_negative_binomial", 20, 1.0)
    assert result.tuning is not None and result.tuning["method"] in ("rdp", "pure")
    assert "η = 1" in window.targets.tuning_summary.text()
    line = window.results.tuning
    assert not line.isHidden() and line.text().startswith("Hyperparameter tuning (best of truncated")
    assert "ε ≤" in line.text() and "Hyperparameter tuning" in window.results.as_text()
    with qtbot.waitSignal(window.recomputer.result_ready, timeout=RESULT_TIMEOUT):
        window.stack.undo()
    assert window.doc.tuning is None and window.results.tuning.isHidden()
    assert window.targets.tuning_summary.text() == "run once"
