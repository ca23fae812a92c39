"""One plot tab: a pyqtgraph plot built once, a legend, a crosshair readout, log toggles, exports.

Curves are persistent ``PlotDataItem``s; a new result calls ``setData`` on them. The raw
arrays from the result are kept (``data(name)``) and what is drawn is a masked copy: points
that cannot be drawn on the current axes (non-finite, or <= 0 on a log axis, or below the
tab's floor) become NaN gaps. Marker lines (``InfiniteLine``) are placed in data units and
moved when an axis switches between linear and log.

The plot's title line is a caption saying what the shown guarantee is for (the neighbouring
relation, the group size, the sampling schemes: ``export.setting_text``), so that PNG and SVG
exports carry it; a note ("out of date") goes above it.
"""
from __future__ import annotations

import html
import math

import numpy as np
from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QPoint, QRect, QRectF, Qt, Signal
from PySide6.QtGui import QImage, QPainter
from PySide6.QtSvg import QSvgGenerator
from PySide6.QtWidgets import (QCheckBox, QHBoxLayout, QLabel, QPushButton, QStackedWidget,
                               QVBoxLayout, QWidget)

import pyqtgraph as pg  # noqa: E402  (after PySide6, so pyqtgraph picks that binding)

from ..engine.view_model import failure
from ..document.export import curve_csv_text, setting_text
from ..document.fileio import atomic_write
from .axes import PowerAxis
from .view_box import StickyViewBox
from .fmt import fmt

pg.setConfigOptions(antialias=True, background="w", foreground="#222")

BLUE, ORANGE, GREEN, RED, GREY, PURPLE = "#1f5fbf", "#e07b00", "#2e8b3e", "#c62828", "#888888", "#7b3fa0"
#: the shaded band below the certified bounds' additive error (where they cannot resolve δ):
#: its colour, the bottom of it on a log axis (below the smallest float64), and on a linear axis
#: the smallest share of the curves' height worth drawing
RESOLUTION_GREY = (120, 120, 120, 60)
RESOLUTION_BOTTOM = -400.0
RESOLUTION_VISIBLE = 0.005
#: the pinned result "A" (compare.py): one dashed dark curve per plot
PIN_COLOR = "#222222"
#: PNG exports are drawn at this multiple of the on-screen size
PNG_SCALE = 2.0


def pen(color: str, width: float = 2.0, style: Qt.PenStyle = Qt.PenStyle.SolidLine):
    return pg.mkPen(color=color, width=width, style=style)


def png_of(image: QImage) -> bytes:
    """``image`` encoded as PNG (for atomic_write: exports never write in place)."""
    arr = QByteArray()
    buf = QBuffer(arr)
    buf.open(QIODevice.OpenModeFlag.WriteOnly)
    if not image.save(buf, "PNG"):
        raise OSError("could not encode the plot as PNG")
    buf.close()
    return bytes(arr.data())


class PlotTab(QWidget):
    """Base class; subclasses build their items in ``build`` and fill them in ``show_result``."""

    kind = ""
    #: one sentence for the tab's tooltip: what the plot shows
    tip = ""
    x_label = ""
    y_label = ""
    log_x = False
    log_y = False
    can_log_x = True
    legend_offset = (-10, 10)
    #: on a log y axis, values below ``floor`` are not drawn
    floor = 0.0
    #: shown instead of empty axes when there is nothing to draw
    empty_hint = "Add a mechanism to see its plots"
    #: (Result attribute, column) of the curve drawn for a pinned result "A" (None: none)
    pin_column: tuple[str, str] | None = None
    export_requested = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.result = None
        #: True while the curves on show are for earlier inputs (``set_stale``)
        self.stale = False
        self.curves: dict[str, pg.PlotDataItem] = {}
        self._labels: dict[str, str] = {}
        self._raw: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        self._in_legend: set[str] = set()
        self._bands: list[tuple[str, str, pg.PlotDataItem, pg.PlotDataItem, pg.FillBetweenItem]] = []
        self._markers: list[tuple[pg.InfiniteLine, float | None]] = []
        self.resolution_band: pg.LinearRegionItem | None = None
        self._resolution: float | None = None
        self._note: tuple[str, bool] | None = None
        self._caption: str | None = None
        self._pinned: tuple[str, object] | None = None
        #: while ``set_curves`` runs: the bands whose curves changed, drawn once at its end
        self._held_bands: list | None = None
        self._title_html: str | None = ""
        self._axis_labels: dict[str, str] = {}
        lay = QVBoxLayout(self)
        lay.setContentsMargins(2, 2, 2, 2)
        self._build_toolbar(lay)
        self._build_plot()
        self._build_stack(lay)
        self._build_readout(lay)
        self._build_crosshair()
        self.build()
        self.add_curve("pinned", "A", pen(PIN_COLOR, 2.0, Qt.PenStyle.DashLine), z=6)
        self.clear()

    # ------------------------------------------------------------ building the tab
    def _build_toolbar(self, lay: QVBoxLayout) -> None:
        """The bar above the plot: log toggles, Reset view and the exports (``toolbar``)."""
        bar = QHBoxLayout()
        lay.addLayout(bar)
        self.toolbar = bar
        self.log_x_box = QCheckBox("log x")
        self.log_y_box = QCheckBox("log y")
        self.log_x_box.setChecked(self.log_x)
        self.log_y_box.setChecked(self.log_y)
        self.log_x_box.setEnabled(self.can_log_x)
        for box in (self.log_x_box, self.log_y_box):
            box.toggled.connect(self._log_toggled)
            bar.addWidget(box)
        reset = QPushButton("Reset view")
        reset.setToolTip("Zoom to fit all curves (drag to pan, wheel to zoom, right-drag to stretch)")
        reset.clicked.connect(self.reset_view)
        _compact(reset)
        bar.addWidget(reset)
        bar.addStretch(1)
        for fmt_name in ("PNG", "SVG", "CSV"):
            b = QPushButton(f"{fmt_name}…")
            b.setObjectName(f"export_{fmt_name.lower()}")
            b.setToolTip(f"Export this plot as {fmt_name}" if fmt_name != "CSV"
                         else "Export this plot's curves as CSV (the composition and targets as comments)")
            b.clicked.connect(lambda _=False, f=fmt_name.lower(): self.export_requested.emit(f))
            _compact(b)
            bar.addWidget(b)

    def _build_plot(self) -> None:
        """The plot itself (``plot_widget``, ``plot_item``): axes, grid, legend, stale label."""
        self.plot_widget = pg.PlotWidget(axisItems={"left": PowerAxis("left"), "bottom": PowerAxis("bottom")},
                                         viewBox=StickyViewBox())
        self.plot_widget.scene().contextMenu = []  # our buttons export; pyqtgraph's SVG export is broken
        self.plot_item = self.plot_widget.getPlotItem()
        #: the words of ``set_stale`` while new curves are being computed: over the plot's top
        #: left corner, in no layout (a change costs no layout pass and never widens the window)
        self.stale_label = QLabel("", self.plot_widget)
        self.stale_label.setObjectName("stale")
        self.stale_label.setStyleSheet("color: #333; font-style: italic; background: rgba(255, 255, 255, 200);"
                                       " padding: 1px 4px;")
        self.stale_label.move(64, 26)  # below the title line, inside the axes
        self.stale_label.hide()
        self.plot_item.showGrid(x=True, y=True, alpha=0.25)
        self.set_axis_label("bottom", self.x_label)
        self.set_axis_label("left", self.y_label)
        self.legend = self.plot_item.addLegend(offset=self.legend_offset, labelTextSize="9pt")
        self.legend.setBrush(pg.mkBrush(255, 255, 255, 220))
        self.legend.setPen(pg.mkPen("#bbb"))
        self.plot_item.setLogMode(self.log_x, self.log_y)

    def _build_stack(self, lay: QVBoxLayout) -> None:
        """The plot, or in its place the empty hint when there is nothing to draw (``stack``)."""
        # nothing to draw: a centred hint in place of meaningless axes
        self.hint = QLabel(self.empty_hint)
        self.hint.setObjectName("empty_hint")
        self.hint.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.hint.setWordWrap(True)
        self.hint.setStyleSheet("color: #666; font-size: 12pt;")
        self.stack = QStackedWidget()
        self.stack.addWidget(self.hint)
        self.stack.addWidget(self.plot_widget)
        lay.addWidget(self.stack, 1)

    def _build_readout(self, lay: QVBoxLayout) -> None:
        """The crosshair's readout line under the plot (``readout``)."""
        self.readout = QLabel(" ")
        self.readout.setObjectName("readout")
        self.readout.setStyleSheet("color: #333; font-family: monospace;")
        self.readout.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        lay.addWidget(self.readout)

    def _build_crosshair(self) -> None:
        """The dotted crosshair lines that follow the mouse over the plot."""
        dotted = pg.mkPen("#999", style=Qt.PenStyle.DotLine)
        self._vline = pg.InfiniteLine(angle=90, movable=False, pen=dotted)
        self._hline = pg.InfiniteLine(angle=0, movable=False, pen=dotted)
        for line in (self._vline, self._hline):
            line.setVisible(False)
            self.plot_item.addItem(line, ignoreBounds=True)
        self.plot_widget.scene().sigMouseMoved.connect(self._mouse_moved)

    # ------------------------------------------------------------ for subclasses
    def build(self) -> None:
        raise NotImplementedError

    def show_result(self, result) -> None:
        raise NotImplementedError

    def add_curve(self, name: str, label: str, line_pen, z: int = 0, **kw) -> pg.PlotDataItem:
        item = pg.PlotDataItem([], [], pen=line_pen, connect="finite", **kw)
        item.setZValue(z)
        self.plot_item.addItem(item)
        self.curves[name] = item
        self._labels[name] = label
        return item

    def add_band(self, lower: str, upper: str, color: object) -> None:
        """Shade between two curves (where both can be drawn)."""
        # invisible edges (a None pen would leave their paths, and so the fill, empty)
        lo, hi = (pg.PlotDataItem([], [], pen=pg.mkPen(0, 0, 0, 0)) for _ in range(2))
        for item in (lo, hi):
            self.plot_item.addItem(item)
        fill = pg.FillBetweenItem(lo, hi, brush=pg.mkBrush(color))
        self.plot_item.addItem(fill)
        self._bands.append((lower, upper, lo, hi, fill))

    def add_marker(self, angle: int, color: str, label: str = "", at_end: bool = True) -> pg.InfiniteLine:
        """A dashed line at a value (``set_marker``); its label sits near the top (vertical lines)
        or near the right end (horizontal lines; ``at_end=False``: the left end)."""
        position = 0.96 if at_end else 0.04
        if angle == 90:
            anchors = [(1, 0), (1, 0)]
        else:
            anchors = [(1, 1), (1, 1)] if at_end else [(0, 1), (0, 1)]
        line = pg.InfiniteLine(angle=angle, movable=False, pen=pen(color, 1.5, Qt.PenStyle.DashLine),
                               label=label or None,
                               labelOpts={"position": position, "color": color,
                                          "fill": pg.mkBrush(255, 255, 255, 210), "anchors": anchors})
        line.setVisible(False)
        self.plot_item.addItem(line, ignoreBounds=True)
        self._markers.append((line, None))
        return line

    def add_resolution_band(self) -> pg.LinearRegionItem:
        """A grey band from the bottom of the plot up to a y value (``set_resolution``): the
        values there are below the certified bounds' additive error, which they cannot resolve."""
        band = pg.LinearRegionItem(values=(RESOLUTION_BOTTOM, RESOLUTION_BOTTOM), orientation="horizontal",
                                   brush=pg.mkBrush(*RESOLUTION_GREY), pen=pg.mkPen(0, 0, 0, 0),
                                   movable=False)
        band.lines[1].setPen(pen(GREY, 1.0, Qt.PenStyle.DotLine))
        band.label = pg.InfLineLabel(band.lines[1], text="", position=0.98, anchors=[(1, 0), (1, 0)],
                                     color="#555", fill=pg.mkBrush(255, 255, 255, 200))
        band.setZValue(-20)
        band.setVisible(False)
        self.plot_item.addItem(band, ignoreBounds=True)
        self.resolution_band = band
        return band

    def set_resolution(self, value: float | None, label: str = "", tip: str = "") -> None:
        """Shade y below ``value`` (None hides the band); ``label`` sits on its edge, ``tip`` is
        the band's tooltip."""
        self._resolution = value
        if self.resolution_band is not None:
            self.resolution_band.label.setFormat(label)
            self.resolution_band.setToolTip(tip)
            self.resolution_band.label.setToolTip(tip)
            self._place_resolution()

    def _place_resolution(self) -> None:
        band, value = self.resolution_band, self._resolution
        if band is None:
            return
        log = self.log_y_box.isChecked()
        if value is None or not math.isfinite(value) or value <= 0:
            band.setVisible(False)
            return
        if not log:
            # on a linear axis the band is visible only if it is a noticeable part of the curves
            tops = [np.nanmax(np.where(np.isfinite(y), np.abs(y), np.nan)) for _, y in self._raw.values()
                    if np.isfinite(y).any()]
            if not tops or value < RESOLUTION_VISIBLE * max(tops):
                band.setVisible(False)
                return
        top = math.log10(value) if log else value
        band.setRegion((RESOLUTION_BOTTOM if log else -1.0, top))  # δ ≥ 0
        band.setVisible(True)
        band.label.valueChanged()  # the label skips updates while its line is hidden

    def resolution_top(self) -> float | None:
        """The top of the shaded band in view units (log10 on a log axis), None if hidden."""
        band = self.resolution_band
        return band.getRegion()[1] if band is not None and band.isVisible() else None

    def set_marker(self, line: pg.InfiniteLine, value: float | None, label: str | None = None) -> None:
        old = next(v for m, v in self._markers if m is line)
        same_label = label is None or line.label is None or line.label.format == label
        if same_label and (old == value or (old is None and value is None)) and line.isVisible() == (
                value is not None and math.isfinite(value)
                and (value > 0 or not self._log_for(line))):
            return  # nothing moves: no new label layout, no repaint
        self._markers = [(m, value if m is line else v) for m, v in self._markers]
        if label is not None and line.label is not None:
            line.label.setFormat(label)
        self._place_marker(line, value)

    def set_axis_label(self, axis: str, text: str) -> None:
        """The label of axis ``axis`` ("bottom", "left"), set only when it changes (a new label
        costs the plot a layout pass)."""
        if self._axis_labels.get(axis) != text:
            self._axis_labels[axis] = text
            self.plot_item.setLabel(axis, text)

    def set_curves(self, names, x, columns) -> None:
        """``set_curve(name, x, columns.get(name))`` for each name (x None: hide them all); a
        band between two of them is drawn once, not once per edge."""
        self._held_bands = []
        try:
            for name in names:
                self.set_curve(name, x, columns.get(name) if x is not None else None)
        finally:
            held, self._held_bands = self._held_bands, None
        for band in self._bands:
            if any(b is band for b in held):
                self._draw_band(*band)

    def set_curve(self, name: str, x, y) -> None:
        """Give curve ``name`` new data (None for y hides it and removes it from the legend)."""
        item = self.curves[name]
        if y is None or x is None or np.size(x) == 0:
            self._raw.pop(name, None)
            item.setData([], [])
            item.setVisible(False)
            if name in self._in_legend:
                self.legend.removeItem(item)
                self._in_legend.discard(name)
            self.legend.setVisible(bool(self._in_legend))
            self._bands_of(name)  # a band along it goes with it
            return
        self._raw[name] = (np.asarray(x, dtype=float), np.asarray(y, dtype=float))
        item.setVisible(True)
        if name not in self._in_legend and self._labels[name]:
            self.legend.addItem(item, self._labels[name])
            self._in_legend.add(name)
        self.legend.setVisible(True)
        self._draw(name)

    def set_pinned(self, pin) -> None:
        """Overlay a pinned result ``(label, Result)`` (None: remove it); drawn while the tab
        shows a result, again after each new one (``draw_pinned``)."""
        self._pinned = tuple(pin) if pin is not None else None
        self.draw_pinned()

    def draw_pinned(self) -> None:
        """(Re)draw the pinned result's curve, dashed and labelled "A: <description>"."""
        curve = None
        if self._pinned is not None and self.result is not None and self.pin_column is not None:
            attr, column = self.pin_column
            c = getattr(self._pinned[1], attr, None)
            if c is not None and c.columns.get(column) is not None:
                curve = (c.x, c.columns[column])
        if curve is None:
            self.set_curve("pinned", None, None)
            return
        label = f"A: {self._pinned[0]}"
        if self._labels["pinned"] != label and "pinned" in self._in_legend:
            self.legend.removeItem(self.curves["pinned"])
            self._in_legend.discard("pinned")
        self._labels["pinned"] = label
        self.set_curve("pinned", *curve)

    def set_note(self, text: str | None, error: bool = False) -> None:
        """A line above the plot (e.g. "out of date"); None removes it."""
        self._note = (text, error) if text else None
        self._show_title()

    def set_stale(self, text: str | None, error: bool = False) -> None:
        """Mark the curves on show as out of date: dimmed, with ``text`` beside the buttons
        above them (an error: above the plot, in red); None: they are current again. Nothing
        happens when that is already so. (The words stay out of the plot's title while the
        answer is only being updated: a new title costs the plot a layout pass and a repaint.)"""
        note = (text, error) if text and error else None
        if self.stale == (text is not None) and self._note == note \
                and self.stale_label.text() == ("" if text is None or error else text):
            return
        self.stale = text is not None
        self.plot_item.setOpacity(0.35 if text is not None else 1.0)
        self.stale_label.setText("" if text is None or error else text)
        self.stale_label.adjustSize()
        self.stale_label.setVisible(bool(self.stale_label.text()))
        if self._note != note:
            self.set_note(*(note or (None,)))

    def set_caption(self, text: str | None) -> None:
        """The line saying what the plotted guarantee is for (None: none)."""
        self._caption = text or None
        self._show_title()

    def show_setting(self, result) -> None:
        """Caption the plot with what ``result``'s guarantee is for (relation, group, batches)."""
        self.set_caption(f"Guarantee for: {setting_text(result.request)}")

    @property
    def caption(self) -> str | None:
        return self._caption

    def _show_title(self) -> None:
        parts = []
        if self._note is not None:
            text, error = self._note
            parts.append(f"<span style='color: {'#b71c1c' if error else '#555'}'>{html.escape(text)}</span>")
        if self._caption:
            parts.append(f"<span style='color: #333'>{html.escape(self._caption)}</span>")
        title = "<br>".join(parts) if parts else None
        if title == self._title_html:
            return  # (a new title costs the plot a layout pass)
        self._title_html = title
        if title is not None:
            self.plot_item.setTitle(title, size="9pt")
        else:
            self.plot_item.setTitle(None)

    def data(self, name: str) -> tuple[np.ndarray, np.ndarray] | None:
        """The raw (x, y) arrays last given to curve ``name`` (None if it is hidden)."""
        return self._raw.get(name)

    # ------------------------------------------------------------ drawing
    def _masked(self, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        ok = np.isfinite(x)
        if self.log_x_box.isChecked():
            ok &= x > 0
        x, y = x[ok], y[ok]
        good = np.isfinite(y)
        if self.log_y_box.isChecked():
            good &= y > max(self.floor, 0.0)
        return x, np.where(good, y, np.nan)

    def _draw(self, name: str) -> None:
        x, y = self._masked(*self._raw[name])
        self.curves[name].setData(x, y, connect="finite")
        self._bands_of(name)

    def _bands_of(self, name: str) -> None:
        """Redraw the bands along curve ``name`` (at the end of ``set_curves`` if it runs)."""
        for band in self._bands:
            if name in band[:2]:
                if self._held_bands is None:
                    self._draw_band(*band)
                elif not any(b is band for b in self._held_bands):
                    self._held_bands.append(band)

    def _draw_band(self, lower: str, upper: str, lo: pg.PlotDataItem, hi: pg.PlotDataItem,
                   fill: pg.FillBetweenItem) -> None:
        ok = None
        if lower in self._raw and upper in self._raw:
            x1, y1 = self._masked(*self._raw[lower])
            x2, y2 = self._masked(*self._raw[upper])
            if x1.size == x2.size:
                ok = np.isfinite(y1) & np.isfinite(y2)
        # the fill rebuilds its path when an edge changes: once, after the second edge
        lo.blockSignals(True)
        try:
            if ok is None or ok.sum() < 2:
                lo.setData([], [])
            else:
                lo.setData(x1[ok], y1[ok])
        finally:
            lo.blockSignals(False)
        if ok is None or ok.sum() < 2:
            hi.setData([], [])
            fill.setVisible(False)
            return
        hi.setData(x2[ok], y2[ok])
        fill.setVisible(True)

    def _log_for(self, line: pg.InfiniteLine) -> bool:
        return self.log_x_box.isChecked() if line.angle == 90 else self.log_y_box.isChecked()

    def _place_marker(self, line: pg.InfiniteLine, value: float | None) -> None:
        log = self._log_for(line)
        if value is None or not math.isfinite(value) or (log and value <= 0):
            line.setVisible(False)
            return
        line.setPos(math.log10(value) if log else value)
        line.setVisible(True)
        if line.label is not None:
            line.label.valueChanged()  # the label skips updates while its line is hidden

    def _log_toggled(self) -> None:
        self.plot_item.setLogMode(self.log_x_box.isChecked(), self.log_y_box.isChecked())
        for name in list(self._raw):
            self._draw(name)
        for band in self._bands:
            self._draw_band(*band)
        for line, value in self._markers:
            self._place_marker(line, value)
        self._place_resolution()
        self.reset_view()

    def reset_view(self) -> None:
        self.plot_item.enableAutoRange()
        self.plot_item.autoRange()

    def clear(self, hint: str | None = None) -> None:
        """No result: empty every curve, hide the markers and show ``hint`` (default: the
        tab's ``empty_hint``) in place of the axes."""
        self.result = None
        self._caption = None
        self.set_stale(None)
        for name in self.curves:
            self.set_curve(name, None, None)
        for line, _ in self._markers:
            self.set_marker(line, None)
        self.set_resolution(None)
        self.show_hint(hint or self.empty_hint)

    def show_hint(self, text: str | None) -> None:
        """Show ``text`` in place of the plot, or the plot again (None)."""
        if text:
            self.hint.setText(text)
            self.stack.setCurrentWidget(self.hint)
        else:
            self.stack.setCurrentWidget(self.plot_widget)

    def is_empty(self) -> bool:
        """True while the hint stands in place of the plot."""
        return self.stack.currentWidget() is self.hint

    def settle(self, hint: str | None = None) -> None:
        """After a result: the plot if any curve has data, else ``hint`` (or ``empty_hint``), or
        why this plot could not be computed when the engine says so (the rest of the answer
        stands)."""
        self.draw_pinned()
        reason = self.failure()
        if reason is not None:
            hint = f"This plot could not be computed: {reason}"
        self.show_hint(None if self._raw and reason is None else (hint or self.empty_hint))
        self.settle_view()

    def failure(self) -> str | None:
        """Why the current result has no curve for this tab, when the engine could not compute it."""
        return failure(self.result, self.kind)

    def settle_view(self) -> None:
        """Fit the range to the new curves and place the items now: pyqtgraph does it at the
        start of the next paint, and the items it moves there ask for a second paint (4-6 ms
        more in the same pass of the event loop)."""
        self.plot_item.vb.prepareForPaint()

    # ------------------------------------------------------------ crosshair
    def _mouse_moved(self, pos) -> None:
        vb = self.plot_item.vb
        if not vb.sceneBoundingRect().contains(pos):
            self._vline.setVisible(False)
            self._hline.setVisible(False)
            return
        p = vb.mapSceneToView(pos)
        self._vline.setPos(p.x())
        self._hline.setPos(p.y())
        self._vline.setVisible(True)
        self._hline.setVisible(True)
        x = 10 ** p.x() if self.log_x_box.isChecked() else p.x()
        y = 10 ** p.y() if self.log_y_box.isChecked() else p.y()
        self.readout.setText(self.readout_text(x, y))

    def readout_text(self, x: float, y: float) -> str:
        """``x = …, y = …`` and each visible curve's value at the sample nearest to x."""
        parts = [f"{self.x_label.split(' (')[0]} = {fmt(x)}", f"{self.y_label.split(' (')[0]} = {fmt(y)}"]
        values = []
        for name in self.curves:
            if name not in self._in_legend or name not in self._raw:
                continue
            xs, ys = self._raw[name]
            if xs.size == 0:
                continue
            k = int(np.clip(np.searchsorted(xs, x), 0, xs.size - 1))
            if k > 0 and abs(xs[k - 1] - x) < abs(xs[k] - x):
                k -= 1
            values.append(f"{self._labels[name].split(' (')[0]} {fmt(ys[k])}")
        return "  ".join(parts) + ("   │ " + " · ".join(values) if values else "")

    # ------------------------------------------------------------ exports
    def png_bytes(self, scale: float = PNG_SCALE) -> bytes:
        """The plot as PNG at ``scale`` times its size on screen (the whole scene scaled alike).

        pyqtgraph's ImageExporter enlarges the axis text but not the legend when asked for a
        larger width, so the scene is rendered into a high-density image instead.
        """
        rect = self.plot_item.sceneBoundingRect()
        image = QImage(max(1, round(rect.width() * scale)), max(1, round(rect.height() * scale)),
                       QImage.Format.Format_ARGB32)
        # a device pixel ratio, not a painter scale: the legend ignores transformations and
        # would stay small under a scaled painter
        image.setDevicePixelRatio(scale)
        image.fill(Qt.GlobalColor.white)
        painter = QPainter(image)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setRenderHint(QPainter.RenderHint.TextAntialiasing)
        scene = self.plot_widget.scene()
        with PowerAxis.uncached(scene.items()):
            scene.render(painter, QRectF(0, 0, rect.width(), rect.height()), rect)
        painter.end()
        return png_of(image)

    def svg_bytes(self) -> bytes:
        """The plot as SVG, drawn by Qt's own SVG generator.

        pyqtgraph's SVGExporter post-processes the path data Qt writes; with Qt 6.12 that
        either raises (pyqtgraph issues #3485, #3495) or silently misplaces the axes, so the
        scene is rendered straight into a QSvgGenerator instead (vector output, same look).
        """
        rect = self.plot_item.sceneBoundingRect()
        size = rect.size().toSize()
        arr = QByteArray()
        buf = QBuffer(arr)
        buf.open(QIODevice.OpenModeFlag.WriteOnly)
        gen = QSvgGenerator()
        gen.setOutputDevice(buf)
        gen.setSize(size)
        gen.setViewBox(QRect(QPoint(0, 0), size))
        gen.setTitle(f"prvgui {self.kind} plot")
        gen.setResolution(int(self.logicalDpiX()))  # as the screen, so pixel-sized items line up
        painter = QPainter(gen)
        painter.fillRect(QRect(QPoint(0, 0), size), Qt.GlobalColor.white)
        scene = self.plot_widget.scene()
        with PowerAxis.uncached(scene.items()):
            scene.render(painter, QRectF(0, 0, rect.width(), rect.height()), rect)
        painter.end()
        buf.close()
        return bytes(arr.data())

    def export_png(self, path: str) -> None:
        atomic_write(path, self.png_bytes())

    def export_svg(self, path: str) -> None:
        atomic_write(path, self.svg_bytes())

    def export_csv(self, path: str, doc) -> None:
        if self.result is None:
            raise ValueError("there is no result to export yet")
        atomic_write(path, curve_csv_text(self.result, self.kind, doc))


def _compact(button: QPushButton) -> None:
    """As wide as its text needs (the style's 80 px minimum made the plots, and with the budget
    dock open the window, wider than a laptop screen)."""
    button.setMinimumWidth(button.fontMetrics().horizontalAdvance(button.text()) + 20)
