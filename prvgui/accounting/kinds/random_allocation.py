"""DP-SGD with random allocation: each epoch places every record in exactly k of its t steps,
a uniformly random k-subset chosen independently for each record (k = 1 is "balls-in-bins":
Chua, Ghazi, Harrison, Leeman, Kamath, Kumar, Manurangsi, Sinha, Zhang, "Balls-and-bins sampling
for DP-SGD", AISTATS 2025; Feldman, Shenfeld, "Privacy amplification by random allocation",
2025). Each step's sum of clipped gradients (clipping norm Delta) gets N(0, sigma^2) noise. A
row's count is the number of epochs; the engine counts k rounds per epoch (``runs_per_count``).

prvgui reports a bracket around the truth (docs/method.md, "Random allocation"):

* certified UPPER bound: an epoch is dominated by k rounds of 1-of-m allocation, m = floor(t/k)
  (pairs/allocation.py: a uniformly random permutation of the outputs turns the k rounds into the
  k-of-t allocation); each round's PRV is computed numerically with every value rounded against
  the user (``AllocationRound``, side "up"). Where that computation would be too large (noise
  below about 0.65 clipping norms at a thousand steps), a round is counted as one Gaussian with
  mu = Delta / sigma, without amplification (given the allocation, one step moves by Delta).
  Groups and replace-one use that Gaussian with Delta scaled (``group_factor``), by the triangle
  inequality.
* proven LOWER bound (``attack_pair``): the other records' gradients 0 and the protected
  record's at +Delta. For k = 1 this is the round's pair itself, computed with every value rounded
  in the user's favour (side "low"; under replace-one the record replaced by a null gradient, for
  a group one of its records). For k > 1 the sum of the t outputs is post-processing:
  N(k Delta, t sigma^2) against N(0, t sigma^2) per epoch, a Gaussian with mu = k Delta /
  (sigma sqrt t), written per round as noise sigma sqrt(t / k).
  For k = t every step holds the record: the Gaussian with mu = sqrt(t) Delta / sigma is exact
  (``tight``).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..core.values import ORDERS, Relation, as_relation
from ..pairs.prv import PRV, TRIVIAL, point_mass
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
                     "two datasets realise it) and {hi} (the certified upper bound: each epoch's rounds of "
                     "one participation computed numerically, rounded against you); publish the upper bound.")

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
    def round_steps(self) -> int:
        """m = floor(t / k): the steps of one round."""
        return self.steps_per_epoch // self.selected

    @property
    def mu(self) -> float:
        """mu of one round's Gaussian without amplification (Delta / sigma)."""
        return ratio(self.sensitivity, self.sigma)

    def runs_per_count(self) -> int:
        """The k rounds of one epoch."""
        return self.selected

    def noise_halfwidth(self, level: float = 0.95) -> tuple[float, str]:
        """Per coordinate of a step's noisy sum: sigma Phi^-1((1 + level) / 2), in clipping norms."""
        from scipy.special import ndtri
        return self.sigma * float(ndtri(0.5 + level / 2)), "clipping norms (per coordinate of the sum)"

    def is_trivial(self) -> bool:
        return self.mu == 0

    def is_blatant(self) -> bool:
        return gaussian_blatant(self.mu)

    def orders(self, relation=None) -> tuple[str, ...]:
        rel = as_relation(relation)
        if not rel.plain or self.round_steps == 1:
            return ("remove",)
        return ORDERS

    def _prv(self, order: str) -> PRV:
        if self.round_steps == 1:
            return gaussian_prv(self.mu)
        return AllocationRound(self.mu, self.round_steps, "up").prv(order)

    def under(self, relation: Relation) -> Mechanism:
        if relation.plain:
            return self
        return Gaussian(self.sigma, self.sensitivity * group_factor(relation))

    def rdp(self, orders: np.ndarray) -> np.ndarray:
        return 0.5 * orders * self.mu * self.mu

    def tail_rho(self) -> float | None:
        """A round's pair is a mixture of Gaussian pairs at shift mu (joint convexity)."""
        return 0.5 * self.mu * self.mu

    def gdp_mu2(self) -> float:
        """The CLT's mu^2 of one round: Var(S/m) = (e^(mu^2) - 1) / m under Q (as Poisson sampling
        at q = 1/m over m steps); a round of one step is the Gaussian."""
        m = self.round_steps
        return self.mu * self.mu if m == 1 else math.expm1(min(self.mu * self.mu, 700.0)) / m

    def attack_pair(self, relation: Relation, variant: int = 0) -> Mechanism:
        """The realised pair of the module docstring, per round."""
        if self.tight:
            return self.under(relation)
        if self.selected == 1:
            return AllocationRound(self.mu, self.round_steps, "low")
        return Gaussian(self.sigma * math.sqrt(self.steps_per_epoch / self.selected), self.sensitivity)

    def shuffled_counterpart(self) -> tuple[Mechanism, int] | None:
        """Balls-in-bins (k = 1): the same epochs with shuffled batches, T = t, and how many of
        this row's counted rounds make one of its epochs (1); None for k > 1."""
        if self.selected != 1:
            return None
        from .shuffled_gaussian import ShuffledGaussian
        return ShuffledGaussian(self.sigma, self.steps_per_epoch, self.sensitivity), 1

    def poisson_counterpart(self) -> tuple[Mechanism, int]:
        """The Poisson-sampled step at the same expected rate (q = k / t) and its count per round
        (t / k steps, rounded)."""
        from .subsampled_gaussian import SubsampledGaussian
        return (SubsampledGaussian(self.sigma, self.selected / self.steps_per_epoch, self.sensitivity),
                max(1, round(self.steps_per_epoch / self.selected)))


@dataclass(frozen=True, slots=True)
class AllocationRound(Mechanism):
    """One round of 1-of-m random allocation at mu (not a kind): its numerical PRVs, rounded
    against the user (``side`` "up") or in the user's favour ("low", a proven lower bound)."""

    title = "Random allocation round"
    symmetric = False

    mu: float = 1.0
    m: int = 2
    side: str = "up"

    def __post_init__(self) -> None:  # built from a checked RandomAllocation
        pass

    def is_trivial(self) -> bool:
        return self.mu == 0

    def is_blatant(self) -> bool:
        return gaussian_blatant(self.mu)

    def _prv(self, order: str) -> PRV:
        from ..pairs.allocation import round_prvs
        if self.is_trivial():
            return TRIVIAL
        if self.is_blatant():
            return point_mass(math.inf)
        prvs = round_prvs(self.mu, self.m)
        if prvs is None:  # too large to compute: no amplification (up), the max statistic (low)
            if self.side == "up":
                return gaussian_prv(self.mu)
            from ..pairs.shuffle import max_statistic_prv
            return max_statistic_prv(1.0 / self.mu, self.m, order, 1.0, 0.0)
        return getattr(prvs, f"{order}_{self.side}")

    def rdp(self, orders: np.ndarray) -> np.ndarray:
        return 0.5 * orders * self.mu * self.mu

    def tail_rho(self) -> float | None:
        """A round's pair is a mixture of Gaussian pairs at shift mu (joint convexity)."""
        return 0.5 * self.mu * self.mu

    def gdp_mu2(self) -> float:
        return self.mu * self.mu
