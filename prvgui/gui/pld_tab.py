"""The composed privacy loss distribution: the density of its continuous part on the left axis,
its atoms (point masses) as stems on a "mass" axis on the right.

A point mass has no density: drawn as a density it became a comb of spikes as tall as the
binning made them. The view model separates the two (accounting/queries/curves.py ``atom_cells``);
this tab only draws what it is given.
"""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QLabel

from ..engine.view_model import published
from .axes import PowerAxis
from .fmt import fmt, fmt_bound
from .plot_base import PURPLE, RED, PlotTab, pen

STEM = "#b0306a"


class PldTab(PlotTab):
    """Density of the composed privacy loss, its atoms as masses, the certified ε marked."""

    kind = "pld"
    tip = "The distribution of the composition's privacy loss, with its point masses drawn as spikes."
    x_label = "privacy loss L (nats)"
    y_label = "density (continuous part)"
    can_log_x = False
    legend_offset = (10, 10)
    empty_hint = "Add a mechanism to see its privacy loss distribution"
    pin_column = ("pld", "density")

    def build(self) -> None:
        self.add_curve("density", "density of the continuous part (left axis)", pen(PURPLE, 1.8), z=3,
                       fillLevel=0, brush=(123, 63, 160, 40))
        # the atoms: a second view box sharing the x axis, with its own linear "mass" axis
        self.mass_box = pg.ViewBox()
        self.mass_box.setMouseEnabled(x=False, y=False)
        self.plot_item.setAxisItems({"right": PowerAxis("right")})
        self.plot_item.showAxis("right")
        self.mass_axis = self.plot_item.getAxis("right")
        self.mass_axis.setLabel("probability mass (point masses)", color=STEM)
        self.mass_axis.linkToView(self.mass_box)
        self.plot_item.scene().addItem(self.mass_box)
        self.mass_box.setXLink(self.plot_item.vb)
        self.plot_item.vb.sigResized.connect(self._sync_boxes)
        self.stems = pg.PlotDataItem([], [], pen=pen(STEM, 2.0), connect="pairs")
        self.heads = pg.ScatterPlotItem([], [], size=7, brush=pg.mkBrush(STEM), pen=pg.mkPen(STEM))
        for item in (self.stems, self.heads):
            self.mass_box.addItem(item)
        # the atoms' extent in the main view, so that "Reset view" shows them (invisible)
        self.atom_extent = pg.PlotDataItem([], [], pen=pg.mkPen(0, 0, 0, 0))
        self.plot_item.addItem(self.atom_extent)
        self.atoms: tuple[np.ndarray, np.ndarray] | None = None
        self.eps_line = self.add_marker(90, RED, "ε")
        self.inf_label = QLabel("")
        self.inf_label.setToolTip("Probability that the privacy loss is infinite (a δ no ε can remove)")
        self.toolbar.insertWidget(4, self.inf_label)

    def _sync_boxes(self) -> None:
        self.mass_box.setGeometry(self.plot_item.vb.sceneBoundingRect())
        self.mass_box.linkedViewChanged(self.plot_item.vb, self.mass_box.XAxis)

    def _log_toggled(self) -> None:
        self.curves["density"].setFillLevel(None if self.log_y_box.isChecked() else 0)
        self.atom_extent.setVisible(not self.log_y_box.isChecked())  # its y = 0 has no log
        super()._log_toggled()

    def reset_view(self) -> None:
        """Fit the curves; on a linear axis both axes start at 0 on the same line."""
        super().reset_view()
        if not hasattr(self, "atoms") or self.log_y_box.isChecked():
            return
        tops = [float(np.nanmax(raw[1])) for raw in (self.data("density"), self.data("pinned"))
                if raw is not None and raw[1].size]
        top = max(tops, default=0.0)
        if top > 0:
            self.plot_item.setYRange(0.0, top * 1.08, padding=0)
        elif self.atoms is not None:
            self.plot_item.setYRange(0.0, 1.0, padding=0)

    def set_atoms(self, x, mass) -> None:
        """Draw point masses as stems from 0 to their mass on the right axis (None: none)."""
        if x is None or mass is None or np.size(x) == 0:
            self.atoms = None
            for item in (self.stems, self.atom_extent):
                item.setData([], [])
            self.heads.setData([], [])
            self.mass_box.setVisible(False)
            return
        x, mass = np.asarray(x, dtype=float), np.asarray(mass, dtype=float)
        self.atoms = (x, mass)
        self.stems.setData(np.repeat(x, 2), np.column_stack([np.zeros_like(mass), mass]).ravel(),
                           connect="pairs")
        self.heads.setData(x, mass)
        self.atom_extent.setData(x, np.zeros_like(x))
        self.mass_box.setVisible(True)
        self.mass_box.setYRange(0.0, float(mass.max()) * 1.08, padding=0)

    def show_result(self, result) -> None:
        self.result = result
        self.show_setting(result)
        c = result.pld
        atoms = getattr(result, "pld_atoms", None)
        self.set_curve("density", c.x if c else None, c.columns.get("density") if c else None)
        self.set_atoms(atoms.x if atoms else None, atoms.columns["mass"] if atoms else None)
        if atoms is not None and "atoms" not in self._in_legend:
            self.legend.addItem(self.stems, "point masses (right axis)")
            self._in_legend.add("atoms")
        elif atoms is None and "atoms" in self._in_legend:
            self.legend.removeItem(self.stems)
            self._in_legend.discard("atoms")
        self.legend.setVisible(bool(self._in_legend))
        self.mass_axis.setVisible(atoms is not None)
        self.set_marker(self.eps_line, published(result), f"ε ≤ {fmt_bound(published(result))}")
        self.inf_label.setText(f"P(L = ∞) = {fmt(result.pld_inf_mass)}" if c is not None else "")
        self.draw_pinned()
        self.reset_view()
        self._sync_boxes()
        has = bool(self._raw) or atoms is not None
        reason = self.failure()
        if reason is not None:
            self.show_hint(f"This plot could not be computed: {reason}")
        else:
            self.show_hint(None if has else "The composition has no finite privacy loss to draw")
        self.settle_view()

    def clear(self, hint: str | None = None) -> None:
        super().clear(hint)
        if hasattr(self, "inf_label"):
            self.inf_label.setText("")
            self.set_atoms(None, None)
            if "atoms" in self._in_legend:
                self.legend.removeItem(self.stems)
                self._in_legend.discard("atoms")
            self.mass_axis.setVisible(False)
