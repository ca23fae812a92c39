"""Any (eps, delta)-DP mechanism, through its dominating pair: randomized response at eps with
an extra mass delta at +infinity (PRV paper, App. B; Kairouz, Oh, Viswanath 2015). RDP and
GDP do not describe it when delta > 0 (the comparisons add it by basic composition instead).
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from ..pairs import rdp as _rdp
from ..pairs.gdp import randomized_response_mu2
from ..pairs.prv import PRV, point_mass
from .base import EPSILON, Mechanism, Param, param
from ..core.values import Relation
from .randomized_response import randomized_response_prv


def approx_dp_prv(eps0: float, delta0: float) -> PRV:
    """Randomized response's loss with an extra mass delta0 at +infinity."""
    if delta0 == 1:
        return point_mass(math.inf)
    rr = randomized_response_prv(eps0)
    atoms = tuple((loc, m * (1.0 - delta0)) for loc, m in rr.atoms)
    return PRV(atoms, delta0, None, rr.mean * (1.0 - delta0), rr.mean_err)


def group_delta(eps: float, delta: float, k: int) -> float:
    """delta * sum_{i<k} e^{i eps} = delta (e^{k eps} - 1) / (e^eps - 1), at most 1."""
    if delta == 0:
        return 0.0
    if eps == 0:
        return min(1.0, k * delta)
    log_sum = k * eps + math.log(-math.expm1(-k * eps)) - eps - math.log(-math.expm1(-eps))
    log_d = math.log(delta) + log_sum
    return 1.0 if log_d >= 0 else math.exp(log_d)


@dataclass(frozen=True, slots=True)
class ApproxDP(Mechanism):
    """Any (epsilon, delta)-DP mechanism, via its dominating pair (PRV paper, App. B)."""

    kind = "approx_dp"
    examples = ({"epsilon": 0.3, "delta": 1e-3}, {"epsilon": 0.0, "delta": 0.2})
    since_version = 1
    title = "Approximate (ε, δ)-DP"
    summary = "Any mechanism known only to be (ε, δ)-DP, accounted for by its worst case."
    menu_order = 50

    epsilon: float = param(dataclasses.replace(EPSILON, initial=0.1))
    delta: float = param(Param("δ", "probability in [0, 1]", "privacy parameter delta (probability, in [0, 1])",
                               "δ", 1e-7, hi=1.0))

    def is_trivial(self) -> bool:
        return self.epsilon == 0 and self.delta == 0

    def is_blatant(self) -> bool:
        return self.delta == 1

    def _prv(self, order: str) -> PRV:
        return approx_dp_prv(self.epsilon, self.delta)

    def under(self, relation: Relation) -> "ApproxDP":
        """(eps, delta) is stated for the relation chosen: the same pair. A group of k records:
        (k eps, delta (e^{k eps} - 1) / (e^eps - 1))-DP (Vadhan 2017, Lemma 2.2; k delta at
        eps = 0), whose worst pair is the approximate-DP pair with those parameters."""
        k = relation.group_size
        if k == 1:
            return self
        return ApproxDP(self.epsilon * k, group_delta(self.epsilon, self.delta, k))

    def eps_delta(self) -> tuple[float, float]:
        return (self.epsilon, self.delta)

    def exact_eps_delta(self) -> tuple[float, float]:
        return (self.epsilon, self.delta)

    def rdp(self, orders: np.ndarray) -> np.ndarray | None:
        return _rdp.rr_rdp(self.epsilon, orders) if self.delta == 0 else None

    def gdp_mu2(self) -> float | None:
        return None if self.delta > 0 else randomized_response_mu2(self.epsilon)
