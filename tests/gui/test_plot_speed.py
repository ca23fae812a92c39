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
