"""The plots do not mislead: one tick style per log axis, atoms of the privacy loss on their own
mass axis, an empty state with a hint, legends rounded as the headline, the band below the
certificate's resolution shaded."""
import math

import numpy as np
import pytest

from prvgui.gui.axes import power_of_ten
from prvgui.gui.fmt import fmt


# ------------------------------------------------------------------ tick style
@pytest.mark.parametrize("log10_value,text", [(-4, "10⁻⁴"), (-5, "10⁻⁵"), (0, "10⁰"), (3, "10³"),
                                              (math.log10(2e-5), "2·10⁻⁵"),
                                              (math.log10(5e-4), "5·10⁻⁴")])
def test_power_of_ten(log10_value, text):
    assert power_of_ten(log10_value) == text


def test_a_log_axis_writes_every_tick_as_a_power_of_ten(qtbot, window, load):
    load(window)
    tab = window.plots["profile"]
    window.tabs.setCurrentWidget(tab)
    axis = tab.plot_item.getAxis("left")
    assert axis.logMode
    lo, hi = tab.plot_item.vb.viewRange()[1]
    strings = []
    for spacing, values in axis.tickValues(lo, hi, 400):
        strings += axis.tickStrings(values, axis.scale, spacing)
    strings = [s for s in strings if s]  # minor labels that would overlap are left out (axes.py)
    assert len(strings) >= 3
    assert all("10" in s and "." not in s and "e" not in s for s in strings), strings
    # the exact strings of the axis range 10^-4 .. 10^-6 (pyqtgraph wrote 0.0001 beside 1e-05)
    assert axis.tickStrings([-4.0, -5.0, -6.0], 1.0, 1.0) == ["10⁻⁴", "10⁻⁵", "10⁻⁶"]


# ------------------------------------------------------------------ legends
def legend_texts(tab):
    return [label.text for _, label in tab.legend.items]


def test_the_tradeoff_legend_rounds_epsilon_as_the_headline(qtbot, window, load):
    from prvgui.gui.fmt import fmt, fmt_bound
    result = load(window)
    eps = result.epsilon.upper
    assert fmt(eps) != fmt_bound(eps)  # this composition rounds differently to nearest and outward
    texts = legend_texts(window.plots["tradeoff"])
    wanted = f"(ε = {fmt_bound(eps)}, δ = {fmt(result.request.delta)})-DP boundary"
    assert wanted in texts, texts
    assert f"ε ≤ {fmt_bound(eps)}" in window.results.headline.text()


# ------------------------------------------------------------------ empty state
def test_a_hint_stands_in_place_of_empty_axes(qtbot, window, load):
    from prvgui.document.model import Targets
    for tab in window.plots.values():  # before the first result
        assert tab.is_empty() and not tab.plot_widget.isVisible()
        assert tab.hint.text().startswith("Add a mechanism")
    assert window.plots["profile"].hint.text() == "Add a mechanism to see its privacy profile"
    load(window)
    window.tabs.setCurrentWidget(window.plots["profile"])
    assert not window.plots["profile"].is_empty()
    assert window.plots["profile"].plot_widget.isVisible()
    with qtbot.waitSignal(window.recomputer.blocked, timeout=60_000):
        window.doc.reset([], "add_remove", Targets())  # an empty composition
    for tab in window.plots.values():
        assert tab.is_empty() and tab.hint.text().startswith("Add a mechanism")
    assert not window.plots["profile"].plot_widget.isVisible()


# ------------------------------------------------------------------ atoms of the PLD
def laplace_rows():
    from prvgui.document.model import RowSpec
    return [RowSpec("laplace", {"scale": 20.0, "sensitivity": 1.0}, 40, "county counts"),
            RowSpec("laplace", {"scale": 10.0, "sensitivity": 1.0}, 12, "state counts"),
            RowSpec("laplace", {"scale": 5.0, "sensitivity": 1.0}, 1, "national total")]


def test_a_laplace_composition_draws_its_atoms_as_masses(qtbot, window, load):
    result = load(window, laplace_rows())
    tab = window.plots["pld"]
    atoms = result.pld_atoms
    assert atoms is not None and atoms.x.size > 20
    # the atomic part of the composition is the product of the draws' atomic masses:
    # a Laplace draw with eps0 = 1 / b has atoms 1/2 and e^-eps0 / 2
    expected = math.prod((0.5 + 0.5 * math.exp(-1 / b)) ** k for b, k in ((20, 40), (10, 12), (5, 1)))
    assert atoms.columns["mass"].sum() == pytest.approx(expected, rel=0.1)
    # drawn on their own axis, labelled as masses; the density stays a density
    x, mass = tab.atoms
    np.testing.assert_array_equal(x, atoms.x)
    np.testing.assert_array_equal(mass, atoms.columns["mass"])
    assert tab.mass_axis.isVisible() and "mass" in tab.mass_axis.labelText
    assert any("point masses" in t for t in legend_texts(tab))
    _, dens = tab.data("density")
    assert dens.max() < 1.0  # the comb of spikes reached 4 and more
    # density and masses together hold the whole distribution
    step = result.pld.x[1] - result.pld.x[0]
    assert dens.sum() * step + mass.sum() == pytest.approx(1.0, abs=1e-3)
    # the CSV carries the same: one row per atom with its mass, density rows with mass 0
    from prvgui.document.export import curve_table
    header, cols, _ = curve_table(result, "pld")
    assert header == ["loss", "density", "atom_mass"]
    assert cols[2].sum() == pytest.approx(mass.sum())
    assert np.all(np.isnan(cols[1][cols[2] > 0]))
    assert np.all(np.diff(cols[0]) >= 0)


def test_an_atom_only_composition_has_no_density(qtbot, window, load):
    from prvgui.document.model import RowSpec
    result = load(window, [RowSpec("randomized_response", {"epsilon": 0.5}, 20, "bits")])
    tab = window.plots["pld"]
    assert result.pld.columns["density"] is None and tab.data("density") is None
    assert result.pld_atoms.columns["mass"].sum() == pytest.approx(1.0, abs=1e-6)
    assert result.pld_atoms.x.size == 21  # (20 - 2j) * 0.5 for j = 0..20
    assert not tab.is_empty() and tab.mass_axis.isVisible()


def test_a_composition_with_a_continuous_draw_has_no_atoms(qtbot, window, load, small_rows):
    result = load(window, small_rows)  # a subsampled Gaussian row: continuous
    assert result.pld_atoms is None
    tab = window.plots["pld"]
    assert tab.atoms is None and not tab.mass_axis.isVisible()


# ------------------------------------------------------------------ float64 resolution
def test_the_profile_shades_what_the_certificate_cannot_resolve(qtbot, window, load):
    result = load(window)
    tab = window.plots["profile"]
    window.tabs.setCurrentWidget(tab)
    err = max(b["total_abs"] for b in result.budget)
    assert err > 0
    band = tab.resolution_band
    assert band is not None and band.isVisible()
    lo, hi = band.getRegion()
    assert hi == pytest.approx(math.log10(err), abs=1e-12)
    assert lo < tab.plot_item.vb.viewRange()[1][0]  # from the bottom of the plot
    assert tab.resolution_top() == pytest.approx(math.log10(err), abs=1e-12)
    assert band.label.format == f"below the additive error {fmt(err, 2)}: not resolved"
    assert "float64" not in band.label.format
    assert f"additive error of {fmt(err, 2)}" in band.toolTip() and "not resolved" in band.toolTip()
    # a linear δ axis: a band of ~1e-13 would be invisibly thin
    tab.log_y_box.setChecked(False)
    assert not band.isVisible()
    tab.log_y_box.setChecked(True)
    assert band.isVisible()
    # no result: no band
    window.doc.reset([], "add_remove", window.doc.targets)
    qtbot.waitUntil(lambda: tab.is_empty(), timeout=10_000)
    assert not band.isVisible()
