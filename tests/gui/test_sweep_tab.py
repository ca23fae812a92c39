"""The Sweep tab (gui/sweep_tab.py): specs from its fields, the sweep on the runner's thread, lines for
one parameter and a heatmap for two holding the engine's numbers, the exports, the messages."""
import os

import numpy as np
import pytest

from prvgui import api
from prvgui.document.composition import Composition
from prvgui.document.model import Document, RowSpec, Targets
from prvgui.gui import sweep_tab
from prvgui.gui.sweep_tab import SweepTab
from prvgui.sweep.journal import read_results

pytestmark = pytest.mark.gui


@pytest.fixture
def tab(qtbot):
    doc = Document([RowSpec("gaussian", {"sigma": 2.0, "sensitivity": 1.0}, 10, "queries")],
                   targets=Targets(1e-5, 1.0, 0.05))
    t = SweepTab(doc)
    t.workers = 1
    qtbot.addWidget(t)
    yield t
    t.shutdown()


def set_axis(axis, row_text, param, start, stop, num, log=False):
    axis.row.setCurrentIndex(axis.row.findText(row_text))
    axis.param.setCurrentIndex(axis.param.findText(param))
    axis.start.setText(start)
    axis.stop.setText(stop)
    axis.num.setValue(num)
    axis.log.setChecked(log)


def run(qtbot, tab):
    with qtbot.waitSignal(tab.runner.finished, timeout=60_000):
        tab.run_button.click()


def test_fields_offer_the_rows_numeric_parameters_and_a_range_around_the_value(tab):
    a = tab.axes[0]
    assert a.row.currentText() == "1: queries"
    assert [a.param.itemText(i) for i in range(a.param.count())] == ["sigma", "sensitivity", "count"]
    assert (a.start.text(), a.stop.text()) == ("1", "4")
    assert a.spec() == "1.sigma=1:4:20" and tab.axes[1].spec() is None
    a.param.setCurrentIndex(a.param.findText("count"))
    assert a.spec() == "1.count=5:20:20"


def test_one_parameter_draws_the_certified_epsilon_of_each_point(qtbot, tab, tmp_path):
    set_axis(tab.axes[0], "1: queries", "sigma", "1", "3", 5)
    assert not tab.legend.isVisible()  # (no legend over the empty plot)
    run(qtbot, tab)
    assert tab.legend.isVisible()
    x, y = tab.upper.getData()
    assert tab.plots.currentWidget() is tab.lines
    assert list(x) == [1.0, 1.5, 2.0, 2.5, 3.0]
    comp = Composition.of(tab.doc)
    for sigma, eps in zip(x, y):
        single = api.query(Composition(tuple([comp.rows[0].with_param("sigma", float(sigma))]),
                                       targets=comp.targets), True, 1e-5, 0.05)
        assert eps == single.certified_upper.value
    assert "5 points at δ = 1e-05" in tab.status.text() and tab.csv_button.isEnabled()
    tab.export_csv(str(tmp_path / "s.csv"))
    assert read_results(str(tmp_path / "s.csv"))["certified_upper"] == list(y)
    tab.export_png(str(tmp_path / "s.png"))
    assert (tmp_path / "s.png").read_bytes().startswith(b"\x89PNG") and os.path.getsize(tmp_path / "s.png") > 1000
    assert tab.lines.getPlotItem().getAxis("bottom").labelText == "queries: Noise σ"
    # (written atomically: no temporary file is left; a folder that is not there is named)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.csv", "s.png"]
    with pytest.raises(OSError, match="does not exist"):
        tab.export_csv(str(tmp_path / "no" / "s.csv"))


def test_two_parameters_draw_a_heatmap(qtbot, tab):
    set_axis(tab.axes[0], "1: queries", "sigma", "1", "4", 4)
    set_axis(tab.axes[1], "1: queries", "count", "1", "100", 3, log=True)
    run(qtbot, tab)
    img = tab.image.image
    assert img.shape == (4, 3) and tab.plots.currentWidget() is tab.heat
    cols = read_results(tab.results_path)
    assert np.array_equal(img.ravel(), np.asarray(cols["certified_upper"]))
    assert img[0, 2] > img[3, 0]  # little noise, many runs: the largest epsilon
    item = tab.heat.getPlotItem()
    assert (item.getAxis("bottom").labelText, item.getAxis("left").labelText) == ("queries: Noise σ", "queries: count (log10)")


def test_a_bad_field_says_why_without_computing(qtbot, tab):
    set_axis(tab.axes[0], "1: queries", "sigma", "abc", "3", 5)
    with qtbot.waitSignal(tab.runner.finished, timeout=10_000):
        tab.run_button.click()
    assert tab.status.text() == "START must be a number; got 'abc'"
    assert tab.results_path is None and not tab.png_button.isEnabled()


def test_without_dask_the_sweep_runs_on_one_core_and_names_the_extra(qtbot, tab, monkeypatch):
    monkeypatch.setattr(sweep_tab, "have_dask", lambda: False)
    tab.workers = None
    set_axis(tab.axes[0], "1: queries", "sigma", "1", "3", 3)
    texts = []
    tab.runner.progress.connect(lambda f, text: texts.append(text))
    run(qtbot, tab)
    assert any('pip install "prvgui[sweep]"' in t for t in texts)
    assert tab.upper.getData()[0].size == 3


def test_the_fields_follow_the_document(tab):
    tab.doc.insert(1, RowSpec("laplace", {"scale": 10.0, "sensitivity": 1.0}, 3, ""))
    a = tab.axes[1]
    assert [a.row.itemText(i) for i in range(a.row.count())] == ["—", "1: queries", "2: Laplace"]
    a.row.setCurrentIndex(2)
    assert a.param.itemText(0) == "scale" and a.spec() == "2.scale=5:20:20"
