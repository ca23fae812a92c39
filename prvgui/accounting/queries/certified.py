"""The best certified bound: the smallest valid upper bound on epsilon (or delta) among the PRV
accountant's certified upper end and the comparison accountants that are bounds (RDP, basic
and advanced composition) or exact (Kairouz-Oh-Viswanath).

Every candidate is a valid upper bound on its own, so their minimum is one too; the PRV's
bracket is usually the smallest, but where float64 cannot resolve the target (delta 1e-300,
say) its upper end is infinite while RDP's is finite. Approximations (GDP/CLT unless every row
is Gaussian, where the PRV accountant answers in closed form anyway) are never candidates. An
exact value is widened by the closed form's own rounding before it competes, as the
accountant widens it (closed_form.py). Ties go to the PRV accountant: another accountant is
named only when it is lower by more than ``tie`` (the accuracy asked for epsilon), so that a
single Laplace row is not "certified by basic composition" for 1e-9.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping

from .closed_form import BINOMIAL_REL

#: the comparison accountants whose values are valid upper bounds when they apply
BOUNDS = ("rdp", "basic", "advanced")


@dataclass(frozen=True)
class CertifiedUpper:
    """The publishable upper bound and the accountant that gave it."""

    value: float
    by: str

    def as_dict(self) -> dict:
        return {"value": self.value, "by": self.by}


def best_upper(prv_upper: float, comparisons: Mapping[str, Any], want_eps: bool = True,
               tie: float = 0.0) -> CertifiedUpper:
    """The smallest valid upper bound, the PRV's unless another is lower by more than ``tie``.
    ``comparisons`` maps names to ``Comparison`` objects or their ``as_dict()`` forms
    (name -> {"kind", "value", ...})."""
    prv = CertifiedUpper(float(prv_upper), "prv")
    best = CertifiedUpper(math.inf, "prv")
    for name, comp in comparisons.items():
        info = comp if isinstance(comp, dict) else comp.as_dict()
        value = info.get("value")
        if value is None or isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value):
            continue
        if name in BOUNDS and info.get("kind") == "bound":
            candidate = float(value)
        elif name == "exact" and info.get("kind") == "exact":
            candidate = value * (1 + BINOMIAL_REL) + (1e-12 if want_eps else 1e-15)
        else:
            continue
        if not want_eps:
            candidate = min(candidate, 1.0)
        if candidate < best.value:
            best = CertifiedUpper(candidate, name)
    if best.value < prv.value - tie or (math.isinf(prv.value) and best.value < prv.value):
        return best
    return prv
