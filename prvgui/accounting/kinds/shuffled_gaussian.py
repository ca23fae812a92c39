"""DP-SGD with shuffled batches: each epoch a fresh random permutation of the data is split into
T batches, so each record is in exactly one batch per epoch; each batch's sum of clipped
gradients (clipping norm Delta) gets N(0, sigma^2) noise. A row's count is the number of epochs.

No tight accountant is known for shuffled batches (Chua, Ghazi, Kamath, Kumar, Manurangsi,
Sinha, Zhang, "How Private are DP-SGD Implementations?", ICML 2024), so prvgui reports a bracket
around the truth from two sides:

* certified UPPER bound: each epoch is one Gaussian mechanism with mu = Delta / sigma, with no
  amplification. Given the permutation (which does not depend on the data) the record moves
  one batch's sum by at most Delta and the other batches not at all: one Gaussian; the mixture
  over permutations of pairs each dominated by that Gaussian pair is dominated by it (joint
  convexity of the hockey-stick divergence). Add/remove is taken as zero-out: the record's
  contribution is replaced by nothing, the batches are otherwise the same (as in Chua et al.).
  Replace-one: 2 Delta; a group of k records: k Delta (2 k Delta), by the triangle inequality.
* proven LOWER bound (``attack_pair``): two datasets where the differing record's batch sits
  at ``base`` under one and at ``base + shift`` under the other (all other batches alike),
  seen through the statistic max_t X_t of Chua et al. (shuffle.py, which proves the pair
  realisable and the bound). Post-processing cannot increase privacy loss, and the epochs'
  permutations are independent, so composing that pair over the epochs gives a delta(eps)
  below the truth. Add/remove: (base, shift) = (1, 1) (the other records' gradients at -Delta,
  the record at +Delta: Chua et al.'s datasets) or (0, 1); replace-one also allows (0, 2)
  (the record at +Delta replaced by one at -Delta). Each is a lower bound; the largest is
  reported. For a group, one record of the group is such a pair too (valid, not tight in k).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..pairs.prv import PRV, TRIVIAL, point_mass
from .base import Mechanism, Param, Search, group_factor, param, ratio
from ..core.values import Relation
from .gaussian import gaussian_blatant, gaussian_prv

MAX_BATCHES = 10**6


@dataclass(frozen=True, slots=True)
class ShuffledGaussian(Mechanism):
    """Gaussian noise on each of T shuffled batches per epoch (DP-SGD with shuffling)."""

    kind = "shuffled_gaussian"
    examples = ({"sigma": 0.8, "batches_per_epoch": 1000}, {"sigma": 2.0, "batches_per_epoch": 10})
    title = "Shuffled Gaussian (DP-SGD epoch)"
    menu_order = 65
    tight = False
    attack_variants = 2
    batch_scheme = "shuffled"

    sigma: float = param(Param("Noise multiplier σ", "× clipping norm",
                               "noise multiplier: noise standard deviation / clipping norm", "σ", 1.0,
                               search=Search(False, 0.05, 1e7)))
    batches_per_epoch: int = param(Param("Batches per epoch T", "batches",
                                         "number of batches each epoch's shuffled data is split into "
                                         "(each record is in exactly one of them)", "T", 100,
                                         lo=1, hi=MAX_BATCHES, integer=True))
    sensitivity: float = param(Param("Sensitivity Δ", "L2 norm",
                                     "clipping norm in units of the noise scale (default 1)", "Δ", 1.0),
                               default=1.0)

    @property
    def mu(self) -> float:
        """mu of one epoch's non-amplified Gaussian."""
        return ratio(self.sensitivity, self.sigma)

    def noise_halfwidth(self, level: float = 0.95) -> tuple[float, str]:
        """Per coordinate of the noisy gradient sum: sigma Phi^-1((1 + level) / 2), in clipping
        norms (1.96 sigma at 95%)."""
        from scipy.special import ndtri
        return self.sigma * float(ndtri(0.5 + level / 2)), "clipping norms (per coordinate of the sum)"

    def is_trivial(self) -> bool:
        return self.mu == 0

    def is_blatant(self) -> bool:
        return gaussian_blatant(self.mu)

    def _prv(self, order: str) -> PRV:
        return gaussian_prv(self.mu)

    def under(self, relation: Relation) -> "ShuffledGaussian":
        if relation.plain:
            return self
        return ShuffledGaussian(self.sigma, self.batches_per_epoch,
                                self.sensitivity * group_factor(relation))

    # no gaussian_mu: the closed form is exact for the upper pair, not for shuffled batches, and
    # no accountant may call itself exact here

    def rdp(self, orders: np.ndarray) -> np.ndarray:
        return 0.5 * orders * self.mu * self.mu

    def tail_rho(self) -> float | None:
        return 0.5 * self.mu * self.mu

    def gdp_mu2(self) -> float:
        return self.mu * self.mu

    def attack_pair(self, relation: Relation, variant: int = 0) -> Mechanism:
        """variant 0: Chua et al.'s datasets (base 1, shift 1); 1: base 0 with the largest shift
        the relation allows (1 under add/remove, 2 under replace-one)."""
        base, shift = (1.0, 1.0) if variant == 0 else (0.0, 2.0 if relation.replace else 1.0)
        return ShuffleAttack(self.sigma / self.sensitivity if self.sensitivity > 0 else math.inf,
                             self.batches_per_epoch, shift, base)

    def poisson_counterpart(self) -> tuple[Mechanism, int]:
        """The Poisson-sampled DP-SGD step with the same expected batch (q = 1/T) and its count
        per epoch: what Poisson accounting would (wrongly) certify for this row."""
        from .subsampled_gaussian import SubsampledGaussian
        return SubsampledGaussian(self.sigma, 1.0 / self.batches_per_epoch, self.sensitivity), \
            self.batches_per_epoch


@dataclass(frozen=True, slots=True)
class ShuffleAttack(Mechanism):
    """The max-statistic pair of Chua et al. for one epoch (not a kind: a lower-bound pair)."""

    title = "Shuffled Gaussian (attack lower bound)"
    symmetric = False

    noise: float = 1.0  # sigma / sensitivity
    batches: int = 1
    shift: float = 1.0
    base: float = 0.0

    def __post_init__(self) -> None:  # built from a checked ShuffledGaussian
        pass

    def is_trivial(self) -> bool:
        return math.isinf(self.noise)

    def is_blatant(self) -> bool:
        return self.noise == 0 or gaussian_blatant(self.shift / self.noise)

    def _prv(self, order: str) -> PRV:
        if self.is_trivial():
            return TRIVIAL
        if self.is_blatant():
            return point_mass(math.inf)
        if self.batches == 1:
            return gaussian_prv(self.shift / self.noise)
        from ..pairs.shuffle import max_statistic_prv
        return max_statistic_prv(self.noise, self.batches, order, self.shift, self.base)
