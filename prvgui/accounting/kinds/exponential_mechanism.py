"""Any eps-bounded-range selection: the exponential mechanism, report-noisy-max with Gumbel noise.

eps-bounded range (Durfee, Rogers, "Practical differentially private top-k selection with
pay-what-you-get composition", NeurIPS 2019): on every pair of neighbouring datasets the
privacy loss log(P(y) / Q(y)) lies in an interval [-t, eps - t] of width eps (t may depend on
the pair, and t lies in [0, eps] since the loss must take both signs). The exponential mechanism
sampling y with probability proportional to exp(eps u(y) / (2 Delta_u)) is eps-BR (ibid.; seed
002, "A better privacy analysis of the exponential mechanism", Lemma 3), and so is report-noisy-
max with Gumbel(2 Delta_u / eps) noise, which is the same mechanism (the Gumbel-max trick). The
parameter here is the width eps of the interval; eps-BR implies eps-DP.

The t-pairs (Dong, Durfee, Rogers, "Optimal differential privacy composition for exponential
mechanisms", ICML 2020, Sec. 4, "generalized randomized response"). Two outcomes with losses
eps - t and -t; for P and Q to be distributions, P(loss = eps - t) = p with
p e^{-(eps - t)} + (1 - p) e^t = 1, i.e. p = (1 - e^{-t}) / (1 - e^{-eps}). Every eps-BR pair with
loss in [-t, eps - t] is a post-processing of the t-pair: delta(e') = E_Q[(L - e^{e'})_+] with
L = dP/dQ in [e^-t, e^{eps - t}] and E_Q L = 1, and a convex function of L with that mean is
largest when L sits at the two ends. Swapping the pair's order gives the (eps - t)-pair.

One run, the worst t in closed form: for e' in [0, eps] only the loss eps - t counts, so
delta_t(e') = p (1 - e^{e' - eps + t}) for t <= eps - e', and
(1 - e^{-t})(1 - e^{t - (eps - e')}) is largest at t* = (eps - e') / 2:

    delta(e') = max_t delta_t(e') = (1 - e^{-(eps - e')/2})^2 / (1 - e^{-eps}),   0 <= e' <= eps.

This is a privacy profile (convex in e^{e'}), and it is the profile of one pair: the privacy loss
with density e^{(y - eps)/2} / (2 (1 - e^{-eps})) on (-eps, eps) (its delta is the formula above;
the same density under the swapped order, so one PRV serves both; it is the Laplace loss's
continuous part, renormalised). Its tradeoff function is the largest one below every t-pair's,
so it is the least pair that dominates every eps-BR pair at once. What we compose is that pair.

What that claims (and what it does not):

* Adaptive composition, with any other rows: each run, given everything before it, has an
  eps-BR pair, which is a post-processing of this one; so the composition of these pairs is an
  upper bound on the truth (Dong, Roth, Su 2019, Sec. 3, composition). One run (count 1): exactly the
  worst case over all eps-BR mechanisms, at every e' (each t-pair is the two-candidate
  exponential mechanism).
* Never below a concrete BR pair's composition (it dominates every t-pair) and never above
  eps randomized response's (every eps-BR pair is eps-DP, so the RR pair dominates this one;
  strictly below it: delta(0) = tanh(eps/4) against tanh(eps/2)). The certified upper end adds
  the certificate's width, so for one run at small delta (where the pair's epsilon is within
  ~2 sqrt(delta) of eps) it can pass RR's exact value; basic composition's k eps, a comparison
  the certified number also takes, then caps it.
* Not the optimum for k > 1 runs. DDR20 characterise the optimal delta(e') for NON-adaptive
  composition of k eps-BR mechanisms through the compositions of k t-pairs (a maximum over t),
  and show that ADAPTIVELY chosen BR mechanisms can do strictly worse (the "cost of
  adaptivity"). This pair's composition bounds the adaptive case, hence lies above the best
  composed t-pair. We do not implement the non-adaptive maximum: it needs a max over t of the
  whole composition (not a pair per row), and it would not hold for adaptive choices.
* RDP: eps-BR is eps^2/8-zCDP (Cesar, Rogers 2021; seed 002, Thm 5), so D_a <= a eps^2 / 8, and it
  is eps-DP (randomized response's RDP): ``rdp`` reports the smaller. That bound holds for
  adaptive composition too, and the certified number is the smaller of the two.

Measured, epsilon at delta = 1e-6 (certified upper ends; the best t-pair is a lower bound):

    eps0  runs   randomized response   this pair   RDP (eps^2/8)   best t-pair
    0.1    10          0.999             0.696         0.700          0.628
    0.1   100          4.775             2.621         2.421          2.245
    1.0    10         10.000             8.125         8.855          7.712
    1.0   100         83.531            41.507        37.429         34.749

Neighbouring relations: eps is stated for the relation chosen (the same pair). A group of k
records: the k losses along a chain of neighbours each lie in an interval of width eps, so their
sum lies in one of width k eps: k eps-BR. The pair is an upper bound only (``tight`` False);
``attack_pair`` is the t = eps/2 pair, randomized response at eps/2, a two-candidate exponential
mechanism whose composition is a proven lower bound.
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ..pairs import rdp as _rdp
from ..pairs.prv import PRV, TRIVIAL, Continuous, point_mass
from .base import EPSILON, Mechanism, param
from ..core.values import Relation
from .randomized_response import RandomizedResponse

# the loss's mean, eps coth(eps/2) - 2 = sum_n 2 B_2n eps^2n / (2n)! (Bernoulli numbers): the
# series where the closed form would cancel
_BERNOULLI = (Fraction(1, 6), Fraction(-1, 30), Fraction(1, 42), Fraction(-1, 30), Fraction(5, 66),
              Fraction(-691, 2730), Fraction(7, 6), Fraction(-3617, 510), Fraction(43867, 798))
_MEAN_SERIES = tuple(float(2 * b / math.factorial(2 * n)) for n, b in enumerate(_BERNOULLI, start=1))


def bounded_range_mean(eps: float) -> float:
    """E[Y] = eps coth(eps/2) - 2 of the pair below (its KL divergence), to a few ulps."""
    if eps >= 0.5:
        return eps / math.tanh(eps / 2) - 2.0  # eps / tanh(eps / 2) >= 2.16: a few bits lost
    e2, total, power = eps * eps, 0.0, 1.0
    for c in _MEAN_SERIES:  # terms fall by (eps / 2 pi)^2 < 1/150 each
        power *= e2
        total += c * power
    return total


def bounded_range_prv(eps: float) -> PRV:
    """The privacy loss of the least pair dominating every eps-BR pair (module docstring):
    density e^{(y - eps)/2} / (2 (1 - e^{-eps})) on (-eps, eps)."""
    if eps == 0:
        return TRIVIAL
    if math.isinf(eps):
        return point_mass(math.inf)
    e = eps
    norm = -math.expm1(-e)  # 1 - e^-eps
    low = math.exp(-e)

    def cdf(t: np.ndarray) -> np.ndarray:  # (e^{(t - eps)/2} - e^{-eps}) / norm without cancellation
        t = np.clip(np.asarray(t, dtype=float), -e, e)
        u = (t + e) / 2
        return np.where(u < 1.0, low * np.expm1(np.minimum(u, 1.0)), np.exp((t - e) / 2) - low) / norm

    def sf(t: np.ndarray) -> np.ndarray:
        t = np.clip(np.asarray(t, dtype=float), -e, e)
        return -np.expm1((t - e) / 2) / norm

    median = e + 2.0 * math.log1p(0.5 * math.expm1(-e))  # e + 2 log((1 + e^-eps) / 2)
    mean = bounded_range_mean(e)
    return PRV((), 0.0, Continuous(-e, e, 1.0, cdf, sf, median), mean, 1e-14 * mean)


@dataclass(frozen=True, slots=True)
class ExponentialMechanism(Mechanism):
    """Any epsilon-bounded-range selection (exponential mechanism, Gumbel report-noisy-max)."""

    kind = "exponential_mechanism"
    examples = ({"epsilon": 0.1}, {"epsilon": 4.0})
    title = "Exponential mechanism (ε-BR)"
    menu_order = 80
    tight = False

    epsilon: float = param(dataclasses.replace(
        EPSILON, help="bounded-range epsilon (nats): the exponential mechanism sampling with probability "
                      "∝ exp(ε u / (2 Δu)), or report-noisy-max with Gumbel(2 Δu / ε) noise"))

    def is_trivial(self) -> bool:
        return self.epsilon == 0

    def _prv(self, order: str) -> PRV:
        return bounded_range_prv(self.epsilon)

    def under(self, relation: Relation) -> "ExponentialMechanism":
        """eps is stated for the relation chosen: the same pair. A group of k records: k eps-BR
        (the chain of k neighbours' losses, each in an interval of width eps)."""
        if relation.group_size == 1:
            return self
        return dataclasses.replace(self, epsilon=self.epsilon * relation.group_size)

    def attack_pair(self, relation: Relation, variant: int = 0) -> RandomizedResponse:
        """The t = eps/2 pair: losses +-eps/2, i.e. randomized response at eps/2 (a two-candidate
        exponential mechanism realises it)."""
        return RandomizedResponse(self.under(relation).epsilon / 2)

    def eps_delta(self) -> tuple[float, float]:
        return (self.epsilon, 0.0)

    def rdp(self, orders: np.ndarray) -> np.ndarray:
        """min(a eps^2 / 8 (eps^2/8-zCDP, Cesar, Rogers 2021), randomized response's (eps-DP))."""
        e = self.epsilon
        return np.minimum(orders * (e * e / 8) * (1 + 4 * 2.0 ** -52), _rdp.rr_rdp(e, orders))
