"""Any eps-DP mechanism, accounted through the worst eps-DP pair: randomized response's
(Kairouz, Oh, Viswanath 2015), so everything randomized_response.py says holds for it.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from .base import EPSILON, param
from .randomized_response import RandomizedResponse


@dataclass(frozen=True, slots=True)
class PureDP(RandomizedResponse):
    """Any epsilon-DP mechanism; its worst-case PRV is randomized response (KOV 2015)."""

    kind = "pure_dp"
    examples = ({"epsilon": 2.0}, {"epsilon": 0.01})
    title = "Pure ε-DP"
    summary = "Any mechanism known only to be ε-DP, accounted for by its worst case."
    menu_order = 40

    epsilon: float = param(dataclasses.replace(EPSILON, initial=0.1))
