"""Shuffled batches in the results: the words around the certified bound (between a proven lower
bound and the certified upper bound, no tight accountant, the Poisson number for contrast and
not a guarantee), and the relation and sampling scheme on plots and exports (issue 11)."""
import numpy as np
import pytest

from prvgui.accounting.queries.certified import CertifiedUpper
from prvgui.accounting.mechanisms import Row, mechanism_from_params
from prvgui.accounting.core.values import Bounds
from prvgui.engine.view_model import Curve, Request, Result, untight_note
from prvgui.document.export import curve_csv_text, setting_text
from prvgui.document.model import Document, RowSpec, Targets
from prvgui.gui.plots import ProfileTab
from prvgui.gui.results_panel import ResultsPanel

pytestmark = pytest.mark.gui

SHUFFLED = Row(mechanism_from_params("shuffled_gaussian", {"sigma": 0.8, "batches_per_epoch": 1000}), 1)
FIXED = Row(mechanism_from_params("subsampled_gaussian", {"sigma": 1.0, "sampling_rate": 0.01,
                                                          "sampling": "fixed_size"}), 100)
POISSON = Row(mechanism_from_params("subsampled_gaussian", {"sigma": 1.0, "sampling_rate": 0.01}), 100)
LAPLACE = Row(mechanism_from_params("laplace", {"scale": 2.0}), 1)


def fake_result(request, at_least=None, poisson=None, upper=9.5, best=None):
    """A Result as the engine would give it (the shuffled note in its warnings when bracketed)."""
    eps = Bounds(upper - 0.02, upper - 0.01, upper)
    x = np.linspace(0.0, 10.0, 5)
    profile = Curve("epsilon", x, {"lower": np.exp(-x) * 0.9, "estimate": np.exp(-x) * 0.95,
                                   "upper": np.exp(-x), "rdp": None, "gdp": None})
    notes = (untight_note(request.rows, at_least, upper, poisson),) if at_least is not None else ()
    return Result(request, eps, None, {}, {}, profile, None, None, None, 0.0, [], 0.25,
                  CertifiedUpper(best or upper, "prv"), None, notes, None, at_least, poisson)


def test_the_panel_says_where_the_true_epsilon_lies_for_shuffled_batches(qtbot):
    panel = ResultsPanel()
    qtbot.addWidget(panel)
    panel.show()
    request = Request((SHUFFLED,), 1e-6, None, 0.01)
    panel.show_result(fake_result(request, at_least=6.04, poisson=Bounds(0.46, 0.465, 0.47)))
    words = panel.bracket.text()
    assert panel.bracket.isVisible()
    assert "the true ε lies between 6.04" in words and "and 9.5" in words
    assert "proven lower bound" in words and "certified upper bound" in words
    assert "No tight accountant for shuffled batches exists" in words
    assert "Poisson accounting would say ε ≤ 0.47" in words
    assert "not a guarantee for shuffled batches" in words
    # the publishable number is still the certified upper bound
    assert "ε ≤ 9.5" in panel.headline.text() and "6.04" not in panel.headline.text()
    # the engine's own note is not repeated under it
    assert not panel.warnings.isVisible()
    text = panel.as_text()
    assert "between 6.04" in text and "0.47" in text and "not a guarantee" in text
    assert text.count("no tight accountant") + text.count("No tight accountant") == 1


def test_without_a_lower_bound_there_are_no_bracket_words(qtbot):
    panel = ResultsPanel()
    qtbot.addWidget(panel)
    panel.show()
    panel.show_result(fake_result(Request((POISSON,), 1e-5), upper=1.2))
    assert not panel.bracket.isVisible() and panel.bracket.text() == ""
    # and after a shuffled result, an ordinary one hides them again
    panel.show_result(fake_result(Request((SHUFFLED,), 1e-6), at_least=6.04))
    assert panel.bracket.isVisible() and "Poisson" not in panel.bracket.text()  # no contrast given
    panel.show_result(fake_result(Request((LAPLACE,), 1e-5), upper=0.5))
    assert not panel.bracket.isVisible()
    panel.clear()
    assert not panel.bracket.isVisible()


def test_the_upper_end_of_the_words_is_the_publishable_bound(qtbot):
    panel = ResultsPanel()
    qtbot.addWidget(panel)
    result = fake_result(Request((SHUFFLED,), 1e-6), at_least=6.04, upper=9.5, best=8.25)
    panel.show_result(result)
    assert "and 8.25" in panel.bracket.text() and "ε ≤ 8.25" in panel.headline.text()


def test_the_window_shows_the_bracket_for_a_shuffled_row(qtbot):
    """The engine cannot bound shuffled rows from below until shuffle.py lands: a fake engine
    answers for it, the window places the answer."""
    from prvgui.gui.main_window import MainWindow

    def engine(request, progress=None, cancel=None):
        return fake_result(request, at_least=6.04, poisson=Bounds(0.46, 0.465, 0.47))
    w = MainWindow(persist=False, compute_fn=engine)
    qtbot.addWidget(w)
    w.show()
    with qtbot.waitSignal(w.recomputer.result_ready, timeout=30_000):
        w.doc.reset([RowSpec("shuffled_gaussian", {"sigma": 0.8, "batches_per_epoch": 1000}, 1, "epoch")],
                    "add_remove", Targets(1e-6, 1.0, 0.01))
    words = w.results.bracket.text()
    assert w.results.bracket.isVisible() and "between 6.04 (" in words and ") and 9.5 (" in words
    assert w.plots["profile"].caption == "Guarantee for: add/remove one record; shuffled batches"
    w.close()


@pytest.mark.parametrize("rows, neighbouring, k, words", [
    ((FIXED,), "replace_one", 1, "replace one record; fixed-size batches"),
    ((POISSON, LAPLACE), "add_remove", 1, "add/remove one record; Poisson-sampled batches"),
    ((LAPLACE,), "add_remove", 1, "add/remove one record"),
    ((SHUFFLED, POISSON), "replace_one", 1, "replace one record; shuffled batches, Poisson-sampled batches"),
])
def test_exports_and_captions_carry_the_relation_line(qtbot, rows, neighbouring, k, words):
    request = Request(rows, 1e-5, None, 0.01, neighbouring, k)
    assert setting_text(request) == words
    result = fake_result(request, upper=2.0)
    doc = Document([RowSpec("laplace", {"scale": 2.0}, 1)], neighbouring, Targets(), k)
    text = curve_csv_text(result, "profile", doc)
    assert f"# guarantee for: {words}\n" in text
    tab = ProfileTab()
    qtbot.addWidget(tab)
    tab.resize(700, 450)
    tab.show()
    tab.show_result(result)
    assert tab.caption == f"Guarantee for: {words}"
    assert words in tab.plot_item.titleLabel.text
    # the PNG is the plot item's scene rect, which holds the title line
    title = tab.plot_item.titleLabel.sceneBoundingRect()
    assert tab.plot_item.titleLabel.isVisible() and title.height() > 0
    assert tab.plot_item.sceneBoundingRect().contains(title.center())
    tab.clear()
    assert tab.caption is None
