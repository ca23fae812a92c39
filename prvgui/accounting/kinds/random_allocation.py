"""DP-SGD with random allocation: each epoch places every record in exactly k of its t steps,
a uniformly random k-subset chosen independently for each record (k = 1 is "balls-in-bins":
Chua, Ghazi, Harrison, Leeman, Kamath, Kumar, Manurangsi, Sinha, Zhang, "Balls-and-bins sampling
for DP-SGD", AISTATS 2025; Feldman, Shenfeld, "Privacy amplification by random allocation",
2025). Each step's sum of clipped gradients (clipping norm Delta) gets N(0, sigma^2) noise. A
row's count is the number of epochs.

prvgui reports a bracket around the truth (docs/method.md, "Random allocation"):

* certified UPPER bound, without amplification: given the allocation (which does not depend on
  the data) the record moves k of the t noisy sums by at most Delta each and the others not at
  all, so one epoch is k adaptively composed Gaussian mechanisms, i.e. one Gaussian with
  mu = sqrt(k) Delta / sigma; the mixture over allocations of pairs each dominated by that
  Gaussian pair is dominated by it (joint convexity of the hockey-stick divergence). Groups and
  replace-one scale Delta (``group_factor``), by the triangle inequality step by step.
  This bound is valid and loose: random allocation amplifies about as much as Poisson sampling
  at rate k / t (the papers above), which a tight numerical pair would show. Until prvgui has a
  certified numerical pair for it, the window says how far apart the two sides are.
* proven LOWER bound (``attack_pair``): the other records' gradients 0 and the protected
  record's at +Delta. For k = 1 the t noisy sums are then N(0, sigma^2 I) against the same with
  one uniformly random coordinate shifted by Delta; the maximum over the steps is a
  post-processing of that pair (shuffle.py's max-statistic pair with base 0, realised here by
  the allocation itself). For k > 1 the sum of the t outputs is post-processing too:
  N(k Delta, t sigma^2) against N(0, t sigma^2), a Gaussian with mu = k Delta / (sigma sqrt t).
  Epochs draw independent allocations, so the lower bounds compose. For k = t every step holds
  the record: the Gaussian with mu = sqrt(t) Delta / sigma is exact (``tight``).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..core.values import Relation
from ..pairs.prv import PRV
from .base import Mechanism, Param, Search, group_factor, param, ratio
from .gaussian import Gaussian, gaussian_blatant, gaussian_prv

MAX_STEPS = 10**6


@dataclass(frozen=True, slots=True)
class RandomAllocation(Mechanism):
    """Gaussian noise on t steps per epoch, each record in exactly k of them (balls-in-bins for k = 1)."""

    kind = "random_allocation"
    title = "Random allocation Gaussian (DP-SGD epoch)"
    examples = ({"sigma": 0.8, "steps_per_epoch": 1000}, {"sigma": 2.0, "steps_per_epoch": 100, "selected": 10},
                {"sigma": 1.0, "steps_per_epoch": 4, "selected": 4})
    menu_order = 66
    since_version = 3
    batch_scheme = "random_allocation"
    batch_words = "random allocation (balls-in-bins)"
    bracket_words = ("Random allocation (balls-in-bins): the true ε lies between {lo} (proven lower bound: "
                     "two datasets and a test on the noisy steps) and {hi} (the certified upper bound: each "
                     "epoch counted as its k Gaussian steps, no amplification). prvgui has no certified "
                     "pair with amplification for random allocation yet; publish the upper bound.")

    sigma: float = param(Param("Noise multiplier σ", "× clipping norm",
                               "noise multiplier: noise standard deviation / clipping norm", "σ", 1.0,
                               search=Search(False, 0.05, 1e7)))
    steps_per_epoch: int = param(Param("Steps per epoch t", "steps",
                                       "number of noisy steps in each epoch", "t", 100,
                                       lo=1, hi=MAX_STEPS, integer=True))
    selected: int = param(Param("Steps per record k", "steps",
                                "how many of an epoch's t steps each record is placed in (a uniformly random "
                                "k of them; 1 is balls-in-bins)", "k", 1, lo=1, hi=MAX_STEPS, integer=True),
                          default=1)
    sensitivity: float = param(Param("Sensitivity Δ", "L2 norm",
                                     "clipping norm in units of the noise scale (default 1)", "Δ", 1.0),
                               default=1.0)

    def __post_init__(self) -> None:
        Mechanism.__post_init__(self)
        if self.selected > self.steps_per_epoch:
            exc = ValueError(f"Steps per record k must be at most the steps per epoch t "
                             f"({self.steps_per_epoch}); you typed {self.selected}")
            exc.field = "selected"  # type: ignore[attr-defined]
            raise exc

    @property
    def tight(self) -> bool:  # type: ignore[misc, override]
        return self.selected == self.steps_per_epoch or self.is_trivial()

    @property
    def mu(self) -> float:
        """mu of one epoch's non-amplified Gaussian (the certified upper pair)."""
        return ratio(self.sensitivity * math.sqrt(self.selected), self.sigma)

    def noise_halfwidth(self, level: float = 0.95) -> tuple[float, str]:
        """Per coordinate of a step's noisy sum: sigma Phi^-1((1 + level) / 2), in clipping norms."""
        from scipy.special import ndtri
        return self.sigma * float(ndtri(0.5 + level / 2)), "clipping norms (per coordinate of the sum)"

    def is_trivial(self) -> bool:
        return self.mu == 0

    def is_blatant(self) -> bool:
        return gaussian_blatant(self.mu)

    def _prv(self, order: str) -> PRV:
        return gaussian_prv(self.mu)

    def under(self, relation: Relation) -> "RandomAllocation":
        if relation.plain:
            return self
        return RandomAllocation(self.sigma, self.steps_per_epoch, self.selected,
                                self.sensitivity * group_factor(relation))

    def rdp(self, orders: np.ndarray) -> np.ndarray:
        return 0.5 * orders * self.mu * self.mu

    def gdp_mu2(self) -> float:
        return self.mu * self.mu

    def attack_pair(self, relation: Relation, variant: int = 0) -> Mechanism:
        """The realised pair of the module docstring (one record of a group, at +Delta against a
        null gradient: valid under both relations)."""
        if self.tight:
            return self.under(relation)
        if self.selected == 1:
            from .shuffled_gaussian import ShuffleAttack
            noise = self.sigma / self.sensitivity if self.sensitivity > 0 else math.inf
            return ShuffleAttack(noise, self.steps_per_epoch, 1.0, 0.0)
        return Gaussian(self.sigma * math.sqrt(self.steps_per_epoch), self.selected * self.sensitivity)

    def poisson_counterpart(self) -> tuple[Mechanism, int]:
        """The Poisson-sampled step at the same expected rate (q = k / t) and its count per epoch."""
        from .subsampled_gaussian import SubsampledGaussian
        return (SubsampledGaussian(self.sigma, self.selected / self.steps_per_epoch, self.sensitivity),
                self.steps_per_epoch)
