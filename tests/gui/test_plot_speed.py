"""What keeps the window responsive during an edit (issue 13): the plots keep their range through
small changes, their grid is drawn opaque beneath the curves, and the engine's worker thread
yields the CPU to the window's thread. (No timings here: benchmarks/gui_latency.py measures.)"""
import os
import sys
import threading

import numpy as np
import pyqtgraph as pg
import pytest
from PySide6.QtGui import QImage, QPainter
from PySide6.QtWidgets import QGraphicsItem

from prvgui.gui.axes import PowerAxis
from prvgui.gui.tasks import WORKER_NICENESS, TaskRunner
from prvgui.gui.view_box import StickyViewBox


def _fitted(qtbot, y):
    widget = pg.PlotWidget(viewBox=StickyViewBox())
    qtbot.addWidget(widget)
    widget.resize(400, 300)
    curve = widget.getPlotItem().plot(np.arange(10.0), y)
    widget.getPlotItem().vb.updateAutoRange()
    return widget, curve


def test_a_small_change_keeps_the_range_and_a_large_one_refits(qtbot):
    widget, curve = _fitted(qtbot, np.linspace(0.0, 10.0, 10))
    vb = widget.getPlotItem().vb
    before = vb.viewRange()[1]
    curve.setData(np.arange(10.0), np.linspace(0.2, 9.5, 10))  # inside, 93% of the span
    vb.updateAutoRange()
    assert vb.viewRange()[1] == before
    curve.setData(np.arange(10.0), np.linspace(0.0, 12.0, 10))  # leaves the range
    vb.updateAutoRange()
    assert vb.viewRange()[1][1] >= 12.0
    curve.setData(np.arange(10.0), np.linspace(0.0, 3.0, 10))  # shrinks well inside it
    vb.updateAutoRange()
    assert vb.viewRange()[1][1] < 6.0


def test_grid_pens_are_opaque_and_the_axis_lies_beneath_the_curves(qtbot):
    axis = PowerAxis("left")
    widget = pg.PlotWidget(axisItems={"left": axis}, viewBox=StickyViewBox())
    qtbot.addWidget(widget)
    widget.resize(400, 300)
    item = widget.getPlotItem()
    item.showGrid(x=True, y=True, alpha=0.25)
    item.plot(np.arange(10.0), np.arange(10.0))
    widget.show()
    qtbot.waitExposed(widget)
    image = QImage(400, 300, QImage.Format.Format_ARGB32)
    painter = QPainter(image)
    specs = axis.generateDrawSpecs(painter)
    painter.end()
    assert specs is not None and specs[1]
    assert all(pen.color().alpha() == 255 for pen, _, _ in specs[1])
    # the colour is the translucent pen's over white: light, not black
    assert all(pen.color().lightness() > 150 for pen, p1, p2 in specs[1] if (p2 - p1).length() > 100)
    # negative z with pyqtgraph's "negative z stacks behind the parent": drawn before the plot
    # item and so before its view box, whatever the view box's own z
    assert axis.zValue() < 0
    assert axis.flags() & QGraphicsItem.GraphicsItemFlag.ItemNegativeZStacksBehindParent


@pytest.mark.skipif(sys.platform != "linux", reason="per-thread niceness is Linux only")
def test_the_worker_thread_runs_nicer_than_the_window(qtbot):
    runner = TaskRunner("test-worker")
    seen = {}

    def job(progress, cancel):
        tid = threading.get_native_id()
        seen["worker"] = os.getpriority(os.PRIO_PROCESS, tid)
        return 1

    with qtbot.waitSignal(runner.done, timeout=10_000):
        runner.start(job)
    runner.shutdown()
    main = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    assert seen["worker"] == min(19, main + WORKER_NICENESS)


@pytest.mark.skipif(sys.platform != "linux", reason="per-thread niceness is Linux only")
def test_a_worker_that_relays_to_the_engines_process_keeps_the_windows_priority(qtbot):
    """A nicer relay thread, woken while the engine's process took both cores, held the GIL it
    needed to unpickle an answer for up to 60 ms while the window's thread waited for it."""
    runner = TaskRunner("test-relay", nice=False)
    seen = {}

    def job(progress, cancel):
        seen["worker"] = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
        return 1

    with qtbot.waitSignal(runner.done, timeout=10_000):
        runner.start(job)
    runner.shutdown()
    assert seen["worker"] == os.getpriority(os.PRIO_PROCESS, threading.get_native_id())


def test_the_window_relays_to_the_engine_at_its_own_priority_and_a_local_compute_nicer(qtbot, monkeypatch):
    from prvgui.gui import worker

    class Remote:
        def compute(self, request, progress=None, cancel=None, partial=None):
            raise AssertionError("not called")

        def cost(self, request):
            raise AssertionError("not called")

        def poke(self):
            pass

    monkeypatch.setattr(worker, "default_engine", lambda: Remote())
    relay = worker.Recomputer(lambda: None)
    local = worker.Recomputer(lambda: None, compute_fn=lambda r, **kw: r)
    monkeypatch.setattr(worker, "default_engine", lambda: None)
    fallback = worker.Recomputer(lambda: None)
    try:
        assert relay._runner._runner.nice is False
        assert local._runner._runner.nice is True and fallback._runner._runner.nice is True
    finally:
        for r in (relay, local, fallback):
            r.shutdown()


def test_the_main_thread_is_never_made_nicer():
    from prvgui.engine.host import lower_thread_priority
    tid = threading.get_native_id()
    before = os.getpriority(os.PRIO_PROCESS, tid) if hasattr(os, "getpriority") else None
    lower_thread_priority()
    if before is not None:
        assert os.getpriority(os.PRIO_PROCESS, tid) == before


def test_a_band_is_drawn_once_per_set_of_curves_and_follows_both_edges(qtbot, monkeypatch):
    from prvgui.gui.plots import ProfileTab
    tab = ProfileTab()
    qtbot.addWidget(tab)
    fill = tab._bands[0][4]
    calls = []
    original = type(fill).updatePath
    monkeypatch.setattr(type(fill), "updatePath", lambda self: (calls.append(self), original(self))[1])
    x = np.linspace(0.0, 4.0, 30)
    lower, upper = np.exp(-2 * x), 2 * np.exp(-x)
    tab.set_curves(("lower", "estimate", "upper"), x, {"lower": lower, "estimate": lower, "upper": upper})
    assert [c for c in calls if c is fill] == [fill]
    # the fill's outline runs along both edges (log10 on the log y axis)
    path = fill.path()
    ys = sorted({round(path.elementAt(i).y, 9) for i in range(path.elementCount())})
    expect = sorted({round(v, 9) for v in np.concatenate([np.log10(lower), np.log10(upper)])})
    assert set(expect) <= set(ys)
    # one edge alone still redraws the band
    calls.clear()
    tab.set_curve("upper", x, 3 * np.exp(-x))
    assert calls and fill.isVisible()
    tab.set_curves(("lower", "estimate", "upper"), None, {})
    assert not fill.isVisible()


def test_a_plot_fits_its_range_when_it_gets_its_curves_not_in_its_next_paint(qtbot):
    # pyqtgraph fits the range at the start of the next paint, and the items it moves there
    # asked for a second paint in the same pass of the event loop
    from prvgui.gui.plots import ProfileTab
    tab = ProfileTab()
    qtbot.addWidget(tab)
    tab.resize(600, 400)
    vb = tab.plot_item.vb
    for top in (4.0, 40.0):
        x = np.linspace(0.0, top, 30)
        tab.set_curves(("lower", "estimate", "upper"), x,
                       {"lower": np.exp(-2 * x), "estimate": np.exp(-1.5 * x), "upper": 2 * np.exp(-x)})
        tab.settle()
        (x0, x1), _ = vb.viewRange()  # read before any event is processed
        assert x0 <= 0.0 and top <= x1 < 1.5 * top
