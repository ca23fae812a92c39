"""The attack-risk panel, the noise read-out and the pinned result "A", in the real window.

References: a composition of Gaussians is mu-GDP with mu = sqrt(sum k_i / sigma_i^2) (Dong, Roth,
Su 2019, Cor. 3.3); the best attack's TPR at FPR a is Phi(Phi^-1(a) + mu), its advantage
2 Phi(mu / 2) - 1; the noise's 95% half-width of N(0, sigma^2) is sigma Phi^-1(0.975)."""
import math
import re

import numpy as np
import pytest
from scipy.stats import norm

from prvgui.document.model import RowSpec, Targets

from conftest import RESULT_TIMEOUT

TARGETS = Targets(1e-5, 1.0, 0.05)
GAUSS = [RowSpec("gaussian", {"sigma": 4.0, "sensitivity": 1.0}, 9, "queries"),
         RowSpec("gaussian", {"sigma": 2.0, "sensitivity": 1.0}, 1, "total")]
MU = math.sqrt(9 / 16 + 1 / 4)


def percents(text: str) -> list[float]:
    return [float(x) / 100 for x in re.findall(r"([0-9.]+)%", text)]


def edit(qtbot, w, i, **params):
    spec = w.doc.row(i)
    for name, value in params.items():
        spec = spec.with_param(name, value)
    with qtbot.waitSignal(w.recomputer.result_ready, timeout=RESULT_TIMEOUT) as blocker:
        w.editor.replace(i, spec, "edit")
    return blocker.args[0]


def test_the_risk_panel_shows_the_engines_certified_numbers_and_the_closed_form_lies_inside(
        qtbot, window, load):
    result = load(window, GAUSS, TARGETS)
    panel = window.risk
    assert panel.result is result and result.risk is not None
    table = panel.table
    rates = [table.item(r, 0).text() for r in range(table.rowCount())]
    assert rates[:3] == [f"True-positive rate at FPR {a}" for a in ("0.1%", "1%", "10%")]
    assert rates[3].startswith("Advantage")
    bayes = rates.index("Bayes risk at prior 50%")
    lo, up = percents(table.item(bayes, 1).text())
    assert lo <= norm.cdf(-MU / 2) <= up  # mu-GDP's Bayes risk at prior 1/2
    recon = rates.index("Reconstruction, baseline 1%")
    lo, up = percents(table.item(recon, 1).text())
    assert lo <= norm.cdf(norm.ppf(0.01) + MU) <= up
    from prvgui.gui.fmt import fmt_bound
    assert f"μ-GDP with μ = {fmt_bound(MU, 4)} (exactly)" in panel.words.text()  # every row Gaussian
    for r, a in enumerate((0.001, 0.01, 0.1)):
        lo, up = percents(table.item(r, 1).text())
        exact = norm.cdf(norm.ppf(a) + MU)
        assert lo <= exact <= up  # printed ends rounded outwards still hold the truth
        assert up - lo < 3 * TARGETS.eps_error * exact + 2e-4  # a bracket of about the accuracy
        t = result.risk.tpr[r]
        assert lo <= t.lower and up >= t.upper  # the printed interval contains the engine's
    lo, up = percents(table.item(3, 1).text())
    assert lo <= 2 * norm.cdf(MU / 2) - 1 <= up
    words = panel.words.text()
    assert "at most 1% of the people who are not in the data" in words
    assert table.item(1, 1).text().split("– ")[1] in words  # the sentence quotes the upper end at 1%
    noise = panel.noise.text().splitlines()
    assert len(noise) == 2 and noise[0].startswith("row 1 (queries): ±")
    half = float(re.search(r"±([0-9.]+)", noise[0]).group(1))
    assert 4 * norm.ppf(0.975) <= half <= 4 * norm.ppf(0.975) * 1.001


def test_the_risk_panel_is_stale_while_recomputing_and_current_after(qtbot, window, load):
    load(window, GAUSS, TARGETS)
    window.tabs.setCurrentWidget(window.risk_tab)
    assert window.risk.body.isEnabled() and not window.risk.banner.isVisible()
    spec = window.doc.row(0).with_param("sigma", 3.0)
    with qtbot.waitSignal(window.recomputer.result_ready, timeout=RESULT_TIMEOUT) as blocker:
        window.editor.replace(0, spec, "edit")
        assert not window.risk.body.isEnabled()  # greyed at once, with the results panel
        assert window.risk.banner.isVisible() and window.risk.banner.text() == window.results.banner.text()
    assert window.risk.body.isEnabled() and window.risk.result is blocker.args[0]
    mu = math.sqrt(9 / 9 + 1 / 4)
    lo, up = percents(window.risk.table.item(1, 1).text())
    assert lo <= norm.cdf(norm.ppf(0.01) + mu) <= up
    bad = window.doc.row(0).with_param("sigma", -1.0)
    window.editor.replace(0, bad, "edit")
    qtbot.waitUntil(lambda: window.results.banner.text().startswith("Out of date"), timeout=RESULT_TIMEOUT)
    assert not window.risk.body.isEnabled() and window.risk.banner.text() == window.results.banner.text()


def test_pin_overlays_a_on_every_plot_survives_recomputation_and_unpin_removes_it(qtbot, window, load):
    first = load(window, GAUSS, TARGETS)
    assert window.pinned is None
    assert window.compare.pin()
    label, pinned = window.pinned
    assert pinned is first and "σ=4" in label and "×9" in label
    second = edit(qtbot, window, 0, sigma=3.0)
    assert window.pinned.result is first  # kept across the recomputation
    columns = {"profile": ("profile", "upper"), "tradeoff": ("tradeoff", "lower"),
               "steps": ("steps", "upper"), "pld": ("pld", "density")}
    for kind, tab in window.plots.items():
        attr, col = columns[kind]
        data = tab.data("pinned")
        assert data is not None, kind
        curve = getattr(first, attr)
        np.testing.assert_array_equal(data[0], curve.x)
        np.testing.assert_array_equal(data[1], curve.columns[col])
        assert not np.array_equal(data[1], getattr(second, attr).columns[col])  # A is not the current
        texts = [lab.text for _, lab in tab.legend.items]
        assert f"A: {label}" in texts, (kind, texts)
    pinned_line = window.results.pin_bar.label
    assert pinned_line.isVisible()
    assert f"ε ≤ {_bound(first)}" in pinned_line.text()
    head = window.risk.table.horizontalHeaderItem(2)
    assert window.risk.table.columnCount() == 3 and head.text() == "A (pinned)" and label in head.toolTip()
    lo, up = percents(window.risk.table.item(1, 2).text())  # A's own numbers, not the current ones
    assert lo <= first.risk.tpr[1].lower and first.risk.tpr[1].upper <= up
    assert up < percents(window.risk.table.item(1, 1).text())[0]  # σ 4 -> 3: the current risk is higher
    window.compare.unpin()
    assert window.pinned is None and not pinned_line.isVisible()
    for tab in window.plots.values():
        assert tab.data("pinned") is None
        assert not any(lab.text.startswith("A: ") for _, lab in tab.legend.items)
    assert window.risk.table.columnCount() == 2


def test_the_menu_pins_and_file_new_drops_the_pin(qtbot, window, load):
    load(window, GAUSS, TARGETS)
    assert window.pin_action.isEnabled() and not window.unpin_action.isEnabled()
    window.pin_action.trigger()
    assert window.pinned is not None and window.unpin_action.isEnabled()
    window.files.new()
    assert window.pinned is None
    assert all(tab.data("pinned") is None for tab in window.plots.values())
    assert not window.pin_action.isEnabled()  # nothing current to pin
    assert not window.compare.pin()


def _bound(result):
    from prvgui.gui.fmt import fmt_bound
    best = result.certified_upper.value if result.certified_upper is not None else result.epsilon.upper
    return fmt_bound(best)


@pytest.mark.parametrize("width", [1024])
def test_the_risk_tab_and_the_pin_fit_a_narrow_window(qtbot, window, load, width):
    load(window, GAUSS, TARGETS)
    window.compare.pin()
    edit(qtbot, window, 0, sigma=3.0)
    window.resize(width, 700)
    window.tabs.setCurrentWidget(window.risk_tab)
    qtbot.wait(50)
    table = window.risk.table
    assert table.horizontalScrollBar().maximum() == 0 or not table.horizontalScrollBar().isVisible()
    assert window.results.pin_bar.unpin_button.isVisible()
    button = window.results.pin_bar.unpin_button
    right = button.mapTo(window, button.rect().topRight())
    assert right.x() <= window.width()


def test_the_words_say_so_when_there_is_no_protection():
    from prvgui.accounting import Gaussian, Row
    from prvgui.accounting.queries.risk import risk
    from prvgui.gui.risk_panel import risk_words
    assert risk_words(risk([Row(Gaussian(0.0), 1)])).startswith("No protection")
    words = risk_words(risk([Row(Gaussian(1.0), 1)]))
    exact = norm.cdf(norm.ppf(0.01) + 1.0)
    assert "can find more than" in words and percents(words.split("can find more than")[1])[0] >= exact
