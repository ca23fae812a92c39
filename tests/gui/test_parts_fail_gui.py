"""A part that cannot be computed says why in its own place; the rest of the window stands
(issue 31)."""
import pytest

from prvgui.engine import view_model
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


def test_undo_in_a_field_with_invalid_text_undoes_that_typing_first(qtbot, window, load):
    """Issue 31: Ctrl+Z in a red field undid an unrelated earlier edit and left the bad text."""
    load(window)
    window.composition.select_row(0)
    form = window.composition.form
    sigma = form.params["sigma"].edit
    scale_before = window.doc.row(1).params["scale"]
    sigma.setFocus()
    sigma.selectAll()
    qtbot.keyClicks(sigma, "-3")  # invalid: not pushed to the document
    assert sigma.property("invalid")
    depth = window.stack.index()
    window.undo_here()
    assert sigma.text() != "-3" and window.stack.index() == depth  # the typing went, not an edit
    assert window.doc.row(1).params["scale"] == scale_before
