"""The Laplace mechanism: a query of L1 sensitivity Delta released with Laplace(b) noise.

Dominating pair Lap(Delta, b) against Lap(0, b), the same under both orders. With
eps0 = Delta / b the privacy loss lies in [-eps0, eps0]: an atom 1/2 at eps0, an atom
e^-eps0 / 2 at -eps0 and a continuous part between them with F(t) = e^{(t - eps0)/2} / 2
(PRV paper, App. B). It is eps0-DP. RDP: Mironov 2017, Table II.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..pairs import rdp as _rdp
from ..pairs.prv import PRV, TRIVIAL, Continuous, point_mass
from .base import BLATANT_LOSS, L1_SENSITIVITY, LAPLACE_SCALE, Mechanism, Relation, group_factor, param, ratio


def laplace_prv(eps0: float) -> PRV:
    """The Laplace pair's privacy loss for eps0 = sensitivity / scale."""
    if eps0 == 0:
        return TRIVIAL
    if math.isinf(eps0):
        return point_mass(math.inf)
    e = eps0
    lo_mass = 0.5 * math.exp(-e)
    mass = 0.5 * -math.expm1(-e)

    def cdf(t: np.ndarray) -> np.ndarray:  # (e^{(t-e)/2} - e^{-e}) / 2 without cancellation
        t = np.clip(np.asarray(t, dtype=float), -e, e)
        u = (t + e) / 2
        return np.where(u < 1.0, lo_mass * np.expm1(np.minimum(u, 1.0)), 0.5 * np.exp((t - e) / 2) - lo_mass)

    def sf(t: np.ndarray) -> np.ndarray:
        t = np.clip(np.asarray(t, dtype=float), -e, e)
        return -0.5 * np.expm1((t - e) / 2)

    # the continuous part's median (its mass sits within a few nats below e: a search for its
    # tails started at 0 would take the whole span (-e, e) for e = 1e9)
    median = min(max(e + 2.0 * (math.log1p(math.exp(-e)) - math.log(2.0)), -e), e)
    cont = Continuous(-e, e, mass, cdf, sf, median)
    mean = _e_plus_expm1(e)
    atoms = ((e, 0.5), (-e, lo_mass)) if lo_mass > 0 else ((e, 0.5),)
    return PRV(atoms, 0.0, cont, mean, 1e-14 * mean)


def _e_plus_expm1(e: float) -> float:
    """e + e^{-e} - 1 >= 0 (the loss's mean) to a few ulps: the series e^2/2 - e^3/6 + ...
    where the closed form would cancel."""
    if e >= 0.5:
        return e + math.expm1(-e)  # cancels at most ~3 bits
    term, total = e * e / 2, 0.0
    for j in range(3, 40):  # e < 1/2: terms fall by at least 1/6 each
        total += term
        term *= -e / j
        if abs(term) <= 1e-18 * total:
            break
    return total


@dataclass(frozen=True, slots=True)
class Laplace(Mechanism):
    """Laplace noise added to a query of bounded L1 sensitivity."""

    kind = "laplace"
    examples = ({"scale": 0.2}, {"scale": 5.0, "sensitivity": 2.0})
    since_version = 1
    title = "Laplace"
    summary = "Adds Laplace noise of scale b to a query whose L1 sensitivity is Δ."
    menu_order = 20

    scale: float = param(LAPLACE_SCALE)
    sensitivity: float = param(L1_SENSITIVITY, default=1.0)

    @property
    def eps0(self) -> float:
        return ratio(self.sensitivity, self.scale)

    def is_trivial(self) -> bool:
        return self.eps0 == 0

    def is_blatant(self) -> bool:
        """No noise, or a largest loss eps0 above BLATANT_LOSS (taken as +inf)."""
        return self.eps0 > BLATANT_LOSS

    def _prv(self, order: str) -> PRV:
        return point_mass(math.inf) if self.is_blatant() else laplace_prv(self.eps0)

    def under(self, relation: Relation) -> "Laplace":
        """Replace-one: outputs differ by up to 2 Delta; k records: k Delta (add/remove) or
        2 k Delta (replace-one), by the triangle inequality in L1."""
        if relation.plain:
            return self
        return Laplace(self.scale, self.sensitivity * group_factor(relation))

    def noise_halfwidth(self, level: float = 0.95) -> tuple[float, str]:
        """P(|X| > t) = e^{-t/b}: t = b log(1 / (1 - level)), 3.0 b at 95%."""
        return self.scale * math.log(1.0 / (1.0 - level)), "query units"

    def eps_delta(self) -> tuple[float, float]:
        return (self.eps0, 0.0)

    def rdp(self, orders: np.ndarray) -> np.ndarray:
        return _rdp.laplace_rdp(self.eps0, orders)
