"""Closed-form answers that take precedence over the FFT path: every row a Gaussian mechanism
(mu^2 adds up; Balle, Wang 2018, Thm 8), or one homogeneous (eps, delta)-DP pair (the binomial
formula of Kairouz, Oh, Viswanath 2015). comparisons.exact_value computes them; the bracket
is widened only by the closed form's own rounding.
"""
from __future__ import annotations

import math
from typing import Sequence

from .comparisons import exact_value
from ..mechanisms import Row
from ..core.values import Bounds

#: relative rounding of the closed forms: the Gaussian curve, and the binomial sums (whose
#: log-gamma terms limit them to ~1e-9 at 10^6 compositions)
GAUSSIAN_REL, BINOMIAL_REL = 1e-9, 1e-6


def applies(rows: Sequence[Row]) -> bool:
    """Cheap pre-check of ``comparisons.exact_value``'s cases (which decides exactly)."""
    active = [r.mechanism for r in rows if r.count > 0 and not r.mechanism.is_trivial()]
    if not active:
        return False
    if all(m.gaussian_mu() is not None for m in active):
        return True
    pairs = {m.exact_eps_delta() for m in active}
    return None not in pairs and len(pairs) == 1


def closed_form(rows: Sequence[Row], x: float, want_eps: bool) -> Bounds | None:
    """Bounds on epsilon at delta = x (``want_eps``) or delta at epsilon = x from a closed form,
    or None when none applies."""
    if not applies(rows):
        return None
    try:
        v = exact_value(rows, x, want_eps)
    except (ArithmeticError, ValueError):
        return None
    if v is None or math.isnan(v):
        return None
    gauss = all(r.mechanism.gaussian_mu() is not None for r in rows
                if r.count > 0 and not r.mechanism.is_trivial())
    rel = GAUSSIAN_REL if gauss else BINOMIAL_REL
    if math.isinf(v):
        return Bounds(v, v, v)
    if want_eps:
        return Bounds(max(0.0, v * (1 - rel) - 1e-12), v, v * (1 + rel) + 1e-12)
    return Bounds(max(0.0, v * (1 - rel) - 1e-15), v, min(1.0, v * (1 + rel) + 1e-15))
