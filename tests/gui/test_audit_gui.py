"""The Audit tab: typed counts give the audit's bound; hostile text names the field and the value;
with a result, the certified epsilon, the warning when the audit exceeds it, and the plan."""
import pytest
from PySide6.QtCore import Qt

from prvgui.accounting.queries.audit import audit
from prvgui.engine.audit_view import evaluate
from prvgui.gui.audit_panel import AuditPanel
from prvgui.gui.fmt import fmt_bound


def type_into(qtbot, panel, key, text):
    edit = panel.fields[key]
    edit.selectAll()
    if text:
        qtbot.keyClicks(edit, text)  # textEdited, as a user's typing
    else:
        qtbot.keyClick(edit, Qt.Key.Key_Delete)


@pytest.fixture
def panel(qtbot):
    p = AuditPanel()
    qtbot.addWidget(p)
    p.show()
    return p


def test_typed_counts_show_the_bound(qtbot, panel):
    for key, text in (("canaries", "1000"), ("guesses", "300"), ("correct", "280"), ("delta", "0")):
        type_into(qtbot, panel, key, text)
    want = audit(1000, 300, 280, 0.0)
    qtbot.waitUntil(lambda: panel.view.audit == want, timeout=5000)
    assert f"ε ≥ {fmt_bound(want.epsilon_lower, up=False)}" in panel.bound.text()
    assert "n/a at δ = 0" in panel.bound.text() and not panel.error.isVisible()
    assert "no result yet" in panel.certified.text() and not panel.warning.isVisible()


@pytest.mark.parametrize("key,text,words", [
    ("correct", "abc", 'Correct guesses must be an integer between 0 and Guesses (100); you typed "abc"'),
    ("correct", "150", "Correct guesses must be an integer between 0 and Guesses (100); you typed 150"),
    ("canaries", "2.5", "Canaries must be an integer between 1 and"),
    ("delta", "1e400", "Audit δ must be"),
    ("confidence", "", "Confidence must be"),
])
def test_hostile_text_names_the_field_and_the_app_keeps_running(qtbot, panel, key, text, words):
    type_into(qtbot, panel, key, text)
    qtbot.waitUntil(lambda: panel.view.error is not None, timeout=5000)
    assert words in panel.error.text() and panel.error.isVisible()
    assert panel.fields[key].property("invalid") is True
    assert panel.bound.text() == "" and not panel.warning.isVisible()
    type_into(qtbot, panel, key, {"correct": "90", "canaries": "1000", "delta": "1e-5",
                                  "confidence": "0.95"}[key])
    qtbot.waitUntil(lambda: panel.view.error is None, timeout=5000)
    assert not panel.error.isVisible() and panel.fields[key].property("invalid") is False
    assert panel.bound.text().startswith("<b>ε ≥")


def test_the_tab_compares_with_the_result_and_warns(qtbot, window, load):
    result = load(window)
    tab = window.audit
    window.tabs.setCurrentWidget(window.audit_tab)
    assert window.tabs.tabText(window.tabs.indexOf(window.audit_tab)) == "Audit"
    assert tab.fields["delta"].text() == "1e-05"  # the composition's target delta
    for key, text in (("canaries", "1000"), ("guesses", "1000"), ("correct", "1000")):
        type_into(qtbot, tab, key, text)
    qtbot.waitUntil(lambda: tab.view.audit is not None and tab.view.audit.guesses == 1000, timeout=5000)
    view = evaluate(1000, 1000, 1000, 1e-5, 0.95, result)
    assert view.certified_upper is not None and view.certified_upper < view.audit.one_run
    assert tab.view.exceeds and tab.warning.isVisible()
    assert "do not match the accounting" in tab.warning.text()
    assert "Certified ε ≤" in tab.certified.text()
    assert "could show at most" in tab.plan.text() or "shows nothing" in tab.plan.text()
    type_into(qtbot, tab, "correct", "500")  # half right: no evidence of anything
    qtbot.waitUntil(lambda: tab.view.audit.correct == 500, timeout=5000)
    assert not tab.view.exceeds and not tab.warning.isVisible()
