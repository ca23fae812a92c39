"""The Gaussian mechanism: a query of L2 sensitivity Delta released with N(0, sigma^2) noise.

Dominating pair N(Delta, sigma^2) against N(0, sigma^2), the same under both orders. With
mu = Delta / sigma the privacy loss is Y ~ N(mu^2 / 2, mu^2) (PRV paper, App. B); the
mechanism is exactly mu-GDP, so compositions of Gaussians have a closed form (mu^2 adds up;
Balle, Wang 2018, Thm 8). RDP: a mu^2 / 2 (Mironov 2017, Table II).

Delta bounds one record's contribution (the clipping norm of a sum of clipped vectors). Under
replace-one the two outputs can differ by 2 Delta; with a group of k records by k Delta
(add/remove) or 2 k Delta (replace-one) by the triangle inequality: the same pair with that
sensitivity (``under``), exactly GDP again.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.special import ndtr, ndtri

from ..pairs.prv import PRV, TRIVIAL, Continuous, point_mass
from .base import BLATANT_LOSS, Mechanism, Param, Search, group_factor, param, ratio
from ..core.values import Relation


def gaussian_blatant(mu: float) -> bool:
    """No noise to speak of: the mean loss mu^2 / 2 beyond BLATANT_LOSS (or mu infinite)."""
    return not mu <= math.sqrt(2.0 * BLATANT_LOSS)  # (no mu * mu: it overflows at mu = 1e300)


def gaussian_prv(mu: float) -> PRV:
    """Y ~ N(mu^2/2, mu^2), the privacy loss of the mu-GDP Gaussian pair."""
    if mu == 0:
        return TRIVIAL
    if gaussian_blatant(mu):
        return point_mass(math.inf)
    m, s = 0.5 * mu * mu, mu
    cont = Continuous(-math.inf, math.inf, 1.0,
                      lambda t: ndtr((np.asarray(t) - m) / s),
                      lambda t: ndtr((m - np.asarray(t)) / s), m)
    return PRV((), 0.0, cont, m, 1e-15 * m)


@dataclass(frozen=True, slots=True)
class Gaussian(Mechanism):
    """Gaussian noise added to a query of bounded L2 sensitivity."""

    kind = "gaussian"
    examples = ({"sigma": 0.3}, {"sigma": 4.0, "sensitivity": 2.0})
    since_version = 1
    title = "Gaussian"
    summary = "Adds Gaussian noise of standard deviation σ to a query whose L2 sensitivity is Δ."
    menu_order = 10

    sigma: float = param(Param("Noise σ", "std. dev., same units as Δ",
                               "standard deviation of the added noise (same units as the sensitivity)",
                               "σ", 1.0, search=Search(False, 0.05, 1e7)))
    sensitivity: float = param(Param("Sensitivity Δ", "L2 norm", "L2 sensitivity of the query (default 1)",
                                     "Δ", 1.0), default=1.0)

    @property
    def mu(self) -> float:
        """GDP parameter sensitivity / sigma (inf for sigma = 0)."""
        return ratio(self.sensitivity, self.sigma)

    def is_trivial(self) -> bool:
        return self.mu == 0

    def is_blatant(self) -> bool:
        """No noise, or so little that the mean loss mu^2 / 2 exceeds BLATANT_LOSS (taken as +inf)."""
        return gaussian_blatant(self.mu)

    def _prv(self, order: str) -> PRV:
        return point_mass(math.inf) if self.is_blatant() else gaussian_prv(self.mu)

    def under(self, relation: Relation) -> "Gaussian":
        if relation.plain:
            return self
        return Gaussian(self.sigma, self.sensitivity * group_factor(relation))

    def noise_halfwidth(self, level: float = 0.95) -> tuple[float, str]:
        """sigma Phi^-1((1 + level) / 2): 1.96 sigma at 95%."""
        return self.sigma * float(ndtri(0.5 + level / 2)), "query units (per coordinate)"

    def gaussian_mu(self) -> float:
        return self.mu

    def rdp(self, orders: np.ndarray) -> np.ndarray:
        return 0.5 * orders * self.mu * self.mu

    def gdp_mu2(self) -> float:
        return self.mu * self.mu
