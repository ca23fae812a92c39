"""The plots' view box: auto-range that keeps its range through small changes.

pyqtgraph re-fits the range to the data whenever a curve changes, however little; the axes
then redraw every label (~30 ms a plot offscreen), which after each edit in the window came
on top of the new curves and stalled the event loop. ``StickyViewBox`` keeps an axis's range
when the new auto-range lies inside it and spans at least ``STICKY`` of it (a 5% change of a
noise parameter moves the curves a little): nothing then moves but the curves. A curve that
leaves the range, or shrinks well inside it, re-fits as before; "Reset view" always fits.
"""
from __future__ import annotations

import pyqtgraph as pg

#: an auto-range update keeps the current range when the new one spans at least this share of it
STICKY = 0.8


class StickyViewBox(pg.ViewBox):
    """A ViewBox whose automatic range updates ignore small changes (module docstring)."""

    def setRange(self, rect=None, xRange=None, yRange=None, padding=None, update=True,  # noqa: N802
                 disableAutoRange=True):  # noqa: N803 (pyqtgraph's names)
        if rect is None and not disableAutoRange:  # an auto-range update (ViewBox.updateAutoRange)
            current = self.viewRange()
            xRange = None if xRange is None or _keeps(current[0], xRange) else xRange
            yRange = None if yRange is None or _keeps(current[1], yRange) else yRange
            if xRange is None and yRange is None:
                return
        super().setRange(rect, xRange, yRange, padding, update, disableAutoRange)


def _keeps(current, new) -> bool:
    """Whether range ``new`` is close enough to ``current`` to leave it as it is."""
    lo, hi = current
    a, b = new
    span = hi - lo
    return span > 0 and lo <= a and b <= hi and (b - a) >= STICKY * span
