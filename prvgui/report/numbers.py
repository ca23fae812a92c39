"""Numbers for reading in reports and copied tables: ``fmt`` (significant digits, ``∞``) and
``fmt_bound`` (rounded outwards, so that a printed upper bound is still an upper bound and a
printed lower bound still a lower bound).

The window's ``gui/fmt.py`` uses these same functions; they live here so that reports and tables
are written without importing the Qt package.
"""
from __future__ import annotations

import math
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal


def fmt(x: object, digits: int = 4) -> str:
    """A number for reading: ``∞`` for inf, ``n/a`` for None, ``digits`` significant digits."""
    if x is None:
        return "n/a"
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return str(x)
    x = float(x)
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "∞" if x > 0 else "−∞"
    if x == 0:
        return "0"
    return f"{x:.{digits}g}"


def fmt_bound(x: object, digits: int = 4, up: bool = True) -> str:
    """Like ``fmt`` but rounded outwards: up for an upper bound (2.39122 shows as 2.392), down
    for a lower bound (``up=False``)."""
    if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x) or x == 0:
        return fmt(x, digits)
    x = float(x)
    nearest = float(f"{x:.{digits}g}")
    if abs(nearest - x) <= 1e-12 * abs(x):  # binary noise of a short decimal, e.g. 1e-05
        return fmt(nearest, digits)
    d = Decimal(x)
    step = Decimal(1).scaleb(d.adjusted() - digits + 1)
    q = d.quantize(step, rounding=ROUND_CEILING if up else ROUND_FLOOR)
    return fmt(float(q), digits)
