"""The results panel tells the truth (issue 15): the engine's warnings beside the headline, the
best certified bound named by its source, no estimate for an unbounded bracket."""
from prvgui.document.model import RowSpec, Targets
from prvgui.gui.fmt import fmt_bound

#: at delta 1e-305 (below the smallest error level, 1e-300) the PRV bracket is unbounded above; RDP's bound is finite
ROWS = [RowSpec("laplace", {"scale": 10.0, "sensitivity": 1.0}, 3, "counts"),
        RowSpec("gaussian", {"sigma": 5.0, "sensitivity": 1.0}, 2, "queries")]


def test_unresolvable_delta_shows_the_warning_and_rdps_bound(qtbot, window, load):
    res = load(window, ROWS, Targets(1e-305, 1.0, 0.05))
    panel = window.results
    assert res.warnings and res.certified_upper.by == "rdp"
    assert panel.warnings.isVisible() and res.warnings[0] in panel.warnings.text()
    head = panel.headline.text()
    assert f"ε ≤ {fmt_bound(res.certified_upper.value)}" in head and "RDP" in head and "∞" not in head
    assert "no estimate" in panel.detail.text()
    assert res.warnings[0] in panel.as_text() and "by RDP" in panel.as_text()


def test_ordinary_results_show_the_prv_bound_and_no_warning(qtbot, window, load):
    res = load(window)
    assert res.certified_upper.by == "prv" and not res.warnings
    assert not window.results.warnings.isVisible()
    assert f"ε ≤ {fmt_bound(res.epsilon.upper)}" in window.results.headline.text()
    assert "estimate" in window.results.detail.text()
