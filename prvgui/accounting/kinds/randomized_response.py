"""Binary randomized response: report the true bit with probability e^eps / (1 + e^eps).

Its pair is the worst pair of every eps-DP mechanism (Kairouz, Oh, Viswanath 2015): the
privacy loss is +-eps with probabilities 1/(1 + e^-eps) and 1/(1 + e^eps), the same under
both orders; k runs compose exactly by the binomial formula. RDP: Mironov 2017, Table II.
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from ..pairs import rdp as _rdp
from ..pairs.gdp import randomized_response_mu2
from ..pairs.prv import PRV, TRIVIAL
from .base import EPSILON, Mechanism, param
from ..core.values import Relation


def randomized_response_prv(eps0: float) -> PRV:
    """Y = +-eps0: the privacy loss of the eps0-DP pair."""
    if eps0 == 0:
        return TRIVIAL
    p = 1.0 / (1.0 + math.exp(-eps0))
    return PRV(((eps0, p), (-eps0, 1.0 - p)), 0.0, None, eps0 * math.tanh(eps0 / 2),
               1e-15 * eps0 * math.tanh(eps0 / 2))


@dataclass(frozen=True, slots=True)
class RandomizedResponse(Mechanism):
    """Binary randomized response reporting the true bit with probability e^eps/(1+e^eps)."""

    kind = "randomized_response"
    examples = ({"epsilon": 0.01}, {"epsilon": 3.0})
    since_version = 1
    title = "Randomized response"
    summary = "Reports one private bit truthfully with probability e^ε / (1 + e^ε), else flipped."
    menu_order = 30

    epsilon: float = param(EPSILON)

    def is_trivial(self) -> bool:
        return self.epsilon == 0

    def _prv(self, order: str) -> PRV:
        return randomized_response_prv(self.epsilon)

    def under(self, relation: Relation) -> "RandomizedResponse":
        """epsilon is stated for the relation chosen (add/remove or replace-one): the same pair.
        A group of k records: k eps-DP (group privacy), whose worst pair is k eps randomized
        response (Kairouz, Oh, Viswanath 2015)."""
        if relation.group_size == 1:
            return self
        return dataclasses.replace(self, epsilon=self.epsilon * relation.group_size)

    def eps_delta(self) -> tuple[float, float]:
        return (self.epsilon, 0.0)

    def exact_eps_delta(self) -> tuple[float, float]:
        return (self.epsilon, 0.0)

    def rdp(self, orders: np.ndarray) -> np.ndarray:
        return _rdp.rr_rdp(self.epsilon, orders)

    def gdp_mu2(self) -> float:
        return randomized_response_mu2(self.epsilon)
