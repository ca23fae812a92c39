"""A part that cannot be computed says why in its own place; the rest of the window stands
(issue 31)."""
import pytest

from prvgui.accounting import view_model
from prvgui.document.model import RowSpec, Targets

pytestmark = pytest.mark.gui


def test_a_failed_plot_says_why_in_its_tab_and_the_headline_stands(qtbot, window, load, monkeypatch):
    def broken(*a, **k):
        raise ArithmeticError("the plot's numbers broke")
    monkeypatch.setattr(view_model, "pld_for_plot", broken)
    res = load(window)
    tab = window.plots["pld"]
    assert tab.is_empty() and "could not be computed: the plot's numbers broke" in tab.hint.text()
    assert "ε ≤" in window.results.headline.text()
    assert not window.plots["profile"].is_empty()
    assert "Not computed: the privacy loss distribution" in window.results.warnings.text()
    assert res.certified_upper is not None


def test_a_composition_no_grid_holds_is_answered_by_the_other_accountants(qtbot, window, load):
    res = load(window, [RowSpec("subsampled_gaussian", {"sigma": 1e-4, "sampling_rate": 0.01}, 1000,
                                "almost no noise")], Targets(1e-5, 1.0, 0.01))
    assert res.certified_upper.by != "prv"
    assert "certified by" in window.results.headline.text()
    assert "could not be composed" in window.results.detail.text()
    assert "could not be computed" in window.plots["profile"].hint.text()
    assert "could not be computed" in window.risk.words.text()


def test_a_kind_that_needs_replace_one_offers_the_switch_in_one_click(qtbot, window, load):
    """Issue 31: a shuffle-model row under the default add/remove was a dead end."""
    load(window)
    window.composition.add("shuffle_model")
    button = window.results.fix_button
    qtbot.waitUntil(lambda: not button.isHidden(), timeout=10_000)
    assert "replace one record" in button.text()
    with qtbot.waitSignal(window.recomputer.result_ready, timeout=60_000):
        button.click()
    assert window.doc.neighbouring == "replace_one" and button.isHidden()
    window.stack.undo()  # one undo step back to add/remove
    assert window.doc.neighbouring == "add_remove"
