"""The calibrate dialog's plot: certified upper ε (or, for a risk target, the best attack's
true-positive rate) and the estimate against the parameter, with the target line and the answer
marked."""
from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt

import pyqtgraph as pg  # after PySide6, so that pyqtgraph picks that binding

from .fmt import fmt
from .plot_base import BLUE, GREY, RED, pen


class CalibrationPlot(pg.PlotWidget):
    def __init__(self) -> None:
        super().__init__()
        self.setObjectName("calibrate_plot")
        self.setMinimumHeight(300)
        self.scene().contextMenu = []
        item = self.getPlotItem()
        item.showGrid(x=True, y=True, alpha=0.25)
        for axis in ("bottom", "left"):
            item.getAxis(axis).enableAutoSIPrefix(False)
        item.setLabel("left", "ε at δ")
        self.legend = item.addLegend(offset=(-10, 10), labelTextSize="9pt")
        self.legend.setBrush(pg.mkBrush(255, 255, 255, 220))
        self.legend.setPen(pg.mkPen("#bbb"))
        self.curves = {
            "upper": item.plot([], [], pen=pen(BLUE, 2.4), name="ε upper (certified)", connect="finite"),
            # thin and dark on top of the upper curve: the two are often a fraction of a line apart
            "estimate": item.plot([], [], pen=pen("#222", 1.0, Qt.PenStyle.DashLine), name="ε estimate",
                                  connect="finite"),
        }
        self.curves["estimate"].setZValue(5)
        self.answer_point = pg.ScatterPlotItem([], [], symbol="o", size=11, pen=pen(RED, 1.5),
                                               brush=pg.mkBrush(255, 255, 255, 230))
        self.answer_point.setZValue(10)
        item.addItem(self.answer_point)
        opts = {"color": RED, "fill": pg.mkBrush(255, 255, 255, 210)}
        self.target_line = pg.InfiniteLine(angle=0, movable=False, pen=pen(RED, 1.5, Qt.PenStyle.DashLine),
                                           label="target", labelOpts={**opts, "position": 0.06,
                                                                      "anchors": [(0, 1), (0, 1)]})
        self.answer_line = pg.InfiniteLine(angle=90, movable=False, pen=pen(GREY, 1.2, Qt.PenStyle.DotLine),
                                           label="answer", labelOpts={**opts, "position": 0.25})
        for line in (self.target_line, self.answer_line):
            line.setVisible(False)
            item.addItem(line)
        self.plot_item = item
        self.show_outcome(None, "Run to draw ε against the parameter")

    def show_outcome(self, outcome, title: str = "", parameter_title: str = "", value_text: str = "",
                     increasing: bool = False) -> None:
        """Draw a calibration outcome (the sweep around the answer), or, for None, an empty plot
        with ``title`` saying why."""
        if outcome is None:
            for curve in self.curves.values():
                curve.setData([], [])
            self.answer_point.setData([], [])
            self.target_line.setVisible(False)
            self.answer_line.setVisible(False)
            self.legend.setVisible(False)  # no legend over an empty plot; the title says why
            self.plot_item.setTitle(title, color="#555", size="9pt")
            return
        self.legend.setVisible(True)
        cal = outcome.calibration
        risk = hasattr(cal, "fpr")  # a RiskCalibration: the attack's TPR at cal.fpr
        name = "TPR" if risk else "ε"
        upper, target = (cal.tpr.upper, cal.target_tpr) if risk else (cal.epsilon.upper, cal.target_epsilon)
        self.curves["upper"].opts["name"] = f"{name} upper (certified)"
        self.curves["estimate"].opts["name"] = f"{name} estimate"
        for label, curve in zip(self.legend.items, self.curves.values()):
            label[1].setText(curve.opts["name"])
        for key, curve in self.curves.items():
            curve.setData(outcome.values, getattr(outcome, key), connect="finite")
        self.answer_point.setData([cal.value], [upper])
        self.plot_item.setLabel("bottom", parameter_title)
        self.plot_item.setLabel("left", f"attack TPR at FPR {fmt(cal.fpr)}" if risk
                                else f"ε at δ = {fmt(cal.delta)}")
        self.plot_item.setTitle(None)
        self.target_line.setPos(target)
        self.target_line.label.setFormat(f"target {name} = {fmt(target)}")
        self.answer_line.setPos(cal.value)
        self.answer_line.label.setFormat(f"{parameter_title} = {value_text}")
        # ε falls with σ: the top right and the bottom left of the plot are empty (rises with q:
        # top left, bottom right); the legend goes to the top, the answer's label to the bottom
        self.legend.setOffset((10, 10) if increasing else (-10, 10))
        side = (0.0, 0.5) if increasing else (1.0, 0.5)
        self.answer_line.label.anchors = [side, side]  # pyqtgraph's InfLineLabel option
        for line in (self.target_line, self.answer_line):
            line.setVisible(True)
            line.label.valueChanged()  # the label skips updates while its line is hidden
        self.plot_item.enableAutoRange()
        self.plot_item.autoRange()
        # far from the answer ε grows quickly; keep the target readable (pan or zoom for the rest)
        finite = outcome.upper[np.isfinite(outcome.upper)]
        top = min(float(finite.max()) if finite.size else target, 3 * target)
        self.plot_item.setYRange(0, max(top, 1.2 * target), padding=0.05)
