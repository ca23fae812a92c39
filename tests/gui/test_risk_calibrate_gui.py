"""The calibrate dialog with an attack-risk target, end to end: the typed target, the engine's
search on the worker thread, the answer against the Gaussian closed form
(sigma = sqrt(k) / (Phi^-1(t) - Phi^-1(a)); Dong, Roth, Su 2019), the noise at the answer, Apply."""
import math

import pytest
from PySide6.QtGui import QUndoStack
from scipy.stats import norm

from prvgui.document.model import Document, RowSpec, Targets
from prvgui.gui.calibrate_dialog import CalibrateDialog

TIMEOUT = 60_000
ROWS = [RowSpec("gaussian", {"sigma": 1.0, "sensitivity": 1.0}, 4, "release")]


@pytest.fixture
def dialog(qtbot):
    doc = Document(list(ROWS), targets=Targets(1e-5, 1.0, 0.01))
    stack = QUndoStack()
    d = CalibrateDialog(doc, 0, doc.targets, stack)
    qtbot.addWidget(d)
    d.show()
    d.goal.setCurrentIndex(d.goal.findData("risk"))
    yield d, doc, stack
    d.shutdown()
    assert not d.runner.is_thread_running()


def test_a_risk_target_calibrates_sigma_to_the_closed_form_and_applies(qtbot, dialog):
    d, doc, stack = dialog
    assert d.fpr_edit.isVisible() and d.tpr_edit.isVisible()
    assert not d.target_edit.isVisible() and not d.delta_edit.isVisible()
    d.fpr_edit.setText("0.01")
    d.tpr_edit.setText("0.1")
    with qtbot.waitSignal(d.run_finished, timeout=TIMEOUT):
        assert d.run()
    cal = d.calibration
    exact = 2 / (norm.ppf(0.1) - norm.ppf(0.01))
    assert cal.fpr == 0.01 and cal.target_tpr == 0.1 and cal.tpr.upper <= 0.1
    assert exact <= cal.value <= 1.03 * exact
    text = d.result_label.text()
    assert "wrongly flagging at most 1% of non-members" in text and "finds at most" in text
    half = float(text.split("±")[1].split()[0])
    assert cal.value * norm.ppf(0.975) <= half <= cal.value * norm.ppf(0.975) * 1.001  # rounded up
    assert d.plot.plot_item.getAxis("left").labelText.startswith("attack TPR at FPR 0.01")
    assert d.apply()
    assert doc.row(0).params["sigma"] == cal.value
    stack.undo()
    assert doc.row(0).params["sigma"] == 1.0


@pytest.mark.parametrize("fpr,tpr,field,label", [("0.01", "0.005", "tpr_edit", "Target true-positive rate"),
                                                  ("0.01", "1", "tpr_edit", "Target true-positive rate"),
                                                  ("2", "0.5", "fpr_edit", "False-positive rate"),
                                                  ("abc", "0.5", "fpr_edit", "False-positive rate")])
def test_bad_risk_targets_are_marked_and_named(qtbot, dialog, fpr, tpr, field, label):
    d, _, _ = dialog
    d.fpr_edit.setText(fpr)
    d.tpr_edit.setText(tpr)
    message = d.error_label.text()
    assert message.startswith(label) and not d.run_button.isEnabled()
    assert getattr(d, field).styleSheet() != ""  # the field itself is marked
    assert not d.run()


def test_switching_back_to_epsilon_uses_the_epsilon_fields(qtbot, dialog):
    d, _, _ = dialog
    d.tpr_edit.setText("0.001")  # invalid for the risk target, irrelevant for epsilon
    d.goal.setCurrentIndex(d.goal.findData("epsilon"))
    assert d.target_edit.isVisible() and not d.tpr_edit.isVisible()
    assert d.error_label.text() == "" and d.run_button.isEnabled()
    with qtbot.waitSignal(d.run_finished, timeout=TIMEOUT):
        assert d.run()
    assert d.calibration.epsilon.upper <= 1.0 and math.isfinite(d.calibration.value)
