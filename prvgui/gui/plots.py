"""The four plot tabs: privacy profile, tradeoff function, ε versus count, composed PLD
(pld_tab.py).

All curves come from the engine's ``Result``; the tabs only place them. The one drawing
helper computed here is the boundary of the (ε, δ)-DP region in the tradeoff plane, three
vertices from the certified ε and the target δ (Kairouz et al. 2015, Thm 2.1):
β = max(0, 1 − δ − e^ε α, e^−ε (1 − δ − α)).
"""
from __future__ import annotations


import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QLabel

from ..engine.view_model import published
from .fmt import fmt, fmt_bound
from .pld_tab import PldTab
from .plot_base import BLUE, GREEN, GREY, ORANGE, RED, PlotTab, pen

BAND = (31, 95, 191, 55)
DASH, DOT = Qt.PenStyle.DashLine, Qt.PenStyle.DotLine


def _prv_curves(tab: PlotTab, certified: str) -> None:
    tab.add_band("lower", "upper", BAND)
    tab.add_curve("upper", "PRV upper" + (" (certified)" if certified == "upper" else ""),
                  pen(BLUE, 2.4 if certified == "upper" else 1.2), z=5)
    tab.add_curve("estimate", "PRV estimate", pen(BLUE, 1.2, DASH), z=4)
    tab.add_curve("lower", "PRV lower" + (" (certified)" if certified == "lower" else ""),
                  pen(BLUE, 2.4 if certified == "lower" else 1.2), z=5)


def additive_error(result) -> float | None:
    """The largest additive error of the certified δ bounds (``total_abs`` of the error budget,
    one entry per order of the pair; of its plain composition when the headline's was tilted
    towards the tail, as the curves are not), None if the result has none."""
    errs = [b.get("plain_total_abs", b["total_abs"]) for b in (result.budget or [])
            if b.get("total_abs") is not None]
    return max(errs) if errs else None


def resolution_texts(err: float | None) -> tuple[str, str]:
    """(label, tooltip) of the band below the certified bounds' additive error ``err``."""
    if err is None:
        return "", ""
    return (f"below the additive error {fmt(err, 2)}: not resolved",
            f"The certified bounds on δ carry an additive error of {fmt(err, 2)} (truncation, "
            f"discretisation and round-off of the composition): the upper bound never falls below "
            f"it, so δ values in this band are not resolved.")


class ProfileTab(PlotTab):
    """δ(ε) on a log δ axis: PRV band, RDP and GDP, the target δ and the certified ε."""

    kind = "profile"
    tip = "δ(ε) of the whole composition: the certified band of this calculator beside RDP and GDP."
    x_label = "ε (nats)"
    y_label = "δ(ε)"
    log_y = True
    floor = 1e-15
    legend_offset = (10, -10)  # bottom left: δ(ε) falls from the top left
    pin_column = ("profile", "upper")
    empty_hint = "Add a mechanism to see its privacy profile"

    def build(self) -> None:
        _prv_curves(self, "upper")
        self.add_curve("rdp", "RDP (upper bound)", pen(ORANGE, 1.8), z=3)
        self.add_curve("gdp", "GDP (approximation)", pen(GREEN, 1.8, DASH), z=3)
        self.target = self.add_marker(0, RED, "target δ")
        self.eps_line = self.add_marker(90, RED, "ε")
        self.add_resolution_band()

    def show_result(self, result) -> None:
        self.result = result
        self.show_setting(result)
        c = result.profile
        self.set_curves(("lower", "estimate", "upper", "rdp", "gdp"), c.x if c else None, c.columns if c else {})
        self.set_marker(self.target, result.request.delta, f"target δ = {fmt(result.request.delta)}")
        self.set_marker(self.eps_line, published(result), f"ε ≤ {fmt_bound(published(result))}")
        err = additive_error(result) if c is not None else None
        self.set_resolution(err, *resolution_texts(err))
        self.settle()


class TradeoffTab(PlotTab):
    """β(α): PRV lower/upper, the (ε, δ)-DP boundary at the target, GDP."""

    kind = "tradeoff"
    tip = ("How well any test can tell two neighbouring datasets apart: its false negative rate β "
           "against its false positive rate α.")
    x_label = "α (false positive rate)"
    y_label = "β (false negative rate)"
    pin_column = ("tradeoff", "lower")
    empty_hint = "Add a mechanism to see its tradeoff function"

    def build(self) -> None:
        _prv_curves(self, "lower")
        self.add_curve("gdp", "GDP (approximation)", pen(GREEN, 1.8, DASH), z=3)
        self.add_curve("region", "(ε, δ)-DP boundary at target", pen(RED, 1.5, DASH), z=2)
        self.add_curve("perfect", "perfect privacy (β = 1 − α)", pen(GREY, 1.0, DOT), z=1)

    def show_result(self, result) -> None:
        self.result = result
        self.show_setting(result)
        c = result.tradeoff
        self.set_curves(("lower", "estimate", "upper", "gdp", "region"), c.x if c else None, c.columns if c else {})
        delta, eps = result.request.delta, published(result)
        if c is not None:
            self.set_curve("perfect", np.array([0.0, 1.0]), np.array([1.0, 0.0]))
        else:
            self.set_curve("perfect", None, None)
        # the certified ε rounded outwards, as the headline prints it
        self._labels["region"] = f"(ε = {fmt_bound(eps)}, δ = {fmt(delta)})-DP boundary"
        if "region" in self._in_legend:  # refresh the legend text
            self.legend.removeItem(self.curves["region"])
            self.legend.addItem(self.curves["region"], self._labels["region"])
        self.settle()


class StepsTab(PlotTab):
    """ε at the target δ versus the count of one row (the PRV paper's Figure 1)."""

    kind = "steps"
    tip = "The certified ε at the target δ as the count of one row grows, the other rows fixed."
    x_label = "count (steps)"
    y_label = "ε at target δ"
    pin_column = ("steps", "upper")
    log_x = True
    legend_offset = (10, 10)
    empty_hint = "Add a mechanism to see ε against its number of steps"

    def build(self) -> None:
        _prv_curves(self, "upper")
        self.add_curve("rdp", "RDP (upper bound)", pen(ORANGE, 1.8), z=3)
        self.add_curve("gdp", "GDP (approximation)", pen(GREEN, 1.8, DASH), z=3)
        self.count_line = self.add_marker(90, RED, "this composition")
        self.row_choice = QComboBox()
        self.row_choice.setObjectName("steps_row")
        self.row_choice.setToolTip("The row whose count varies along the x axis; the other rows stay fixed")
        # long row labels are elided rather than widening the plots (and the window)
        self.row_choice.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.row_choice.setMinimumContentsLength(7)
        self.toolbar.insertWidget(0, QLabel("Vary:"))
        self.toolbar.insertWidget(1, self.row_choice)

    def show_result(self, result) -> None:
        self.result = result
        self.show_setting(result)
        c = result.steps
        self.set_curves(("lower", "estimate", "upper", "rdp", "gdp"), c.x if c else None, c.columns if c else {})
        j = result.request.steps_row
        count = result.request.rows[j].count if c is not None and j is not None else None
        self.set_marker(self.count_line, count, "this composition")
        self.set_axis_label("bottom", f"count of row {j + 1}" if j is not None else self.x_label)
        self.set_axis_label("left", f"ε at δ = {fmt(result.request.delta)}")
        self.settle("Choose the row to vary (Vary:) to see ε against its count")


TABS = (("Privacy profile δ(ε)", ProfileTab), ("Tradeoff β(α)", TradeoffTab),
        ("ε vs steps", StepsTab), ("Privacy loss distribution", PldTab))
