"""Axis items for the plot tabs: one tick style per axis.

pyqtgraph labels a log axis with ``"%0.1g"``, which writes 10^-4 as ``0.0001`` but 10^-5 as
``10⁻⁵``, so one axis mixed two styles. ``PowerAxis`` writes every tick of a log axis as a
power of ten (``10⁻⁴``, ``10⁻⁵``; ``2·10⁻⁵`` for minor ticks), and leaves out the minor labels
that would overlap their neighbours (they crowd towards the end of each decade: at 1024 px
``4·10⁰5·10⁰6·10⁰`` ran together); a linear axis keeps pyqtgraph's plain decimals.
"""
from __future__ import annotations

import math
from contextlib import contextmanager

import pyqtgraph as pg
from PySide6.QtGui import QColor, QFontMetricsF, QPen
from PySide6.QtWidgets import QGraphicsItem

_SUPERSCRIPT = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")


def power_of_ten(log10_value: float) -> str:
    """The tick text for 10**log10_value: ``10⁻⁵``, ``10⁰``, ``10³``, or ``m·10ⁿ`` between powers."""
    exponent = math.floor(log10_value + 1e-9)
    mantissa = 10.0 ** (log10_value - exponent)
    m = round(mantissa)
    if m >= 10:  # rounding carried into the next power
        exponent, m = exponent + 1, 1
    power = "10" + str(exponent).translate(_SUPERSCRIPT)
    if abs(mantissa - m) > 1e-6 * mantissa:  # not a whole multiple: keep one decimal
        return f"{mantissa:.1f}·{power}"
    return power if m == 1 else f"{m}·{power}"


def _opaque(pen: QPen) -> QPen:
    """``pen`` with its colour blended over white (alpha 255): the same look on a white background."""
    c = pen.color()
    a = c.alphaF()
    if a >= 1.0:
        return pen
    out = QPen(pen)
    out.setColor(QColor.fromRgbF(1 - a * (1 - c.redF()), 1 - a * (1 - c.greenF()), 1 - a * (1 - c.blueF()), 1.0))
    return out


class PowerAxis(pg.AxisItem):
    """An axis whose log-mode ticks are all written as powers of ten."""

    def __init__(self, orientation: str, **kw) -> None:
        super().__init__(orientation, **kw)
        self.enableAutoSIPrefix(False)  # no "(x0.001)" rescaling
        # a repaint that leaves the axis as it was (a curve arrives, the "Updating" dimming)
        # copies a cached pixmap instead of drawing every label again (~15 ms per paint
        # offscreen); exports draw without it (``uncached``)
        self.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)

    def setZValue(self, z: float) -> None:  # noqa: N802 (Qt's name)
        """Beneath the view box (pyqtgraph's PlotItem puts axes at 0.5, above it), so that the
        grid, drawn opaque (``generateDrawSpecs``), lies under the curves and bands."""
        super().setZValue(min(z, -1.0))

    def generateDrawSpecs(self, p):  # noqa: N802 (pyqtgraph's name)
        """pyqtgraph's specs with each translucent tick and grid pen made opaque: its colour
        blended over the plots' white background beforehand. Qt draws a translucent line about
        20 times slower than an opaque one, and the grid's ~80 lines per axis took ~30 ms of
        every repaint after a change. (The axis lies beneath the view box, so the grid is
        covered by the curves instead of crossing them.)"""
        specs = super().generateDrawSpecs(p)
        if specs is None:
            return None
        axis, ticks, texts = specs
        return axis, [(_opaque(pen), p1, p2) for pen, p1, p2 in ticks], texts

    @staticmethod
    @contextmanager
    def uncached(items):
        """Draw ``items`` (axes among other items) without their pixmap cache meanwhile: an
        export renders vector text, not a copy of the screen's pixels."""
        axes = [i for i in items if isinstance(i, PowerAxis)]
        for a in axes:
            a.setCacheMode(QGraphicsItem.CacheMode.NoCache)
        try:
            yield
        finally:
            for a in axes:
                a.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)

    #: room kept between two labels, in pixels
    GAP = 8

    def logTickStrings(self, values, scale, spacing):  # noqa: N802 (pyqtgraph's name)
        out = []
        for v in values:
            x = float(v) + math.log10(scale) if scale not in (0, 1) else float(v)
            out.append(power_of_ten(x) if math.isfinite(x) else "")
        return self._thin([float(v) for v in values], out)

    def _thin(self, values: list[float], texts: list[str]) -> list[str]:
        """Blank the minor labels (between powers of ten) that would touch a kept label or the
        powers of ten around them, which pyqtgraph labels on their own level."""
        lo, hi = (float(r) for r in self.range)
        horizontal = self.orientation in ("bottom", "top")
        length = self.width() if horizontal else self.height()
        if not hi > lo or length <= 0:
            return texts
        px = length / (hi - lo)
        fm = QFontMetricsF(self.style.get("tickFont") or self.font())

        def extent(text: str) -> float:
            return fm.horizontalAdvance(text) if horizontal else fm.height()

        major = extent("10⁰")
        out, last, last_half = list(texts), -math.inf, 0.0
        for i in sorted(range(len(values)), key=lambda k: values[k]):
            x, text = values[i], texts[i]
            if not text or not math.isfinite(x):
                continue
            half = extent(text) / 2
            room = min(x - math.floor(x + 1e-9), math.ceil(x - 1e-9) - x) * px
            if abs(x - round(x)) < 1e-9:  # a power of ten: never blanked here
                last, last_half = x, half
                continue
            if room < half + major / 2 + self.GAP or (x - last) * px < half + last_half + self.GAP:
                out[i] = ""
            else:
                last, last_half = x, half
        return out
