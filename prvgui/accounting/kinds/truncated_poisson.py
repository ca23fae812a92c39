"""DP-SGD with truncated Poisson batches (dp_accounting's TruncatedSubsampledGaussianDpEvent):
each of the dataset's n records joins the batch independently with probability q; if more
than B joined, a uniformly random B of them are kept; the batch's sum of clipped gradients
(clipping norm Delta) gets N(0, sigma^2) noise. A row's count is the number of steps.

Convention: n is the size of the dataset that HOLDS the protected record (as dp_accounting's
dataset_size): the add/remove pair is between D, with n records, and D minus the record.

The certified pair (both orders of add/remove, one record). Let M ~ Binomial(n - 1, q) count
the other records that joined; it has the same law under D and D minus the record, and
pi = P(M >= B).

* M < B: no truncation can touch the protected record. With it the batch is the record plus
  the M others with probability q, else the M others; without it, the M others. Given the
  others, one Poisson-subsampled Gaussian pair (rate q, shift at most Delta); mixed over the
  others with the same weights on both sides, it is dominated by that pair (joint convexity
  of the hockey-stick divergence, and the Gaussian pairs are ordered by the shift).
* M = m >= B: the record joins and survives the truncation with probability q B / (m + 1);
  then the batch is the record plus a uniform (B - 1)-subset of the n - 1 others, otherwise a
  uniform B-subset of them (the laws of both subsets do not depend on m). Without the record
  the batch is a uniform B-subset. With p = E[q B / (M + 1) | M >= B] and a uniform B-subset
  written as a uniform (B - 1)-subset S plus one more uniform other y, the pair is the mixture
  over (S, y) of (p N(S + x, .) + (1 - p) N(S + y, .), N(S + y, .)) (x the record's clipped
  gradient, S also the sum of its gradients): shifts by x - y, of norm at most 2 Delta. So each order is dominated by the Poisson-subsampled Gaussian at rate p
  with noise multiplier sigma / (2 Delta). By q / (m + 1) C(n-1, m) q^m (1-q)^(n-1-m)
  = C(n, m+1) q^(m+1) (1-q)^(n-m-1) / n, p = B P(Binomial(n, q) >= B + 1) / (n pi).
* Revealing which case happened only helps the adversary (pairs/revealed_mixture.py): each
  order is dominated by the revealed mixture with weights (1 - pi, pi), whose PRV is the
  mixture of the two components' PRVs of that order. Each domination above holds for the
  tradeoff function (each case's pair is a post-processing of its Gaussian pair, Blackwell),
  so it survives composition, adaptive or not. dp_accounting mixes the same two cases but
  takes replace-one at noise sigma / 2 for the second, a looser pair.

With B >= n, pi = 0 and the row is exactly the Poisson-subsampled Gaussian (SubsampledGaussian,
whose relations, closed forms and comparisons then apply). Otherwise no dataset need attain
the pair (``tight`` False), and prvgui derives none under replace-one or for groups (refused).
The proven lower bound (``attack_pair``): the other records' gradients 0 and the record's at
norm Delta, so that the output is N(Delta, .) exactly when the record is in the final batch:
the Poisson-subsampled Gaussian at rate p_x = q (1 - pi) + B P(Binomial(n, q) >= B + 1) / n.
RDP: of the revealed mixture, (1/(a-1)) log((1-pi) e^{(a-1) R1} + pi e^{(a-1) R2}) from the
components' RDP (an upper bound per order, as theirs are).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.stats import binom

from ..pairs.prv import PRV, TRIVIAL
from ..pairs.revealed_mixture import revealed_mixture
from .base import SAMPLING_RATE, Mechanism, Param, Relation, Search, param
from .subsampled_gaussian import SubsampledGaussian

#: the largest dataset size (scipy's binomial tails stay accurate; counts fit a float exactly)
MAX_RECORDS = 1e12


def truncation_error(relation: Relation) -> ValueError:
    """The refusal under replace-one or for groups while truncation can happen."""
    exc = ValueError(f"Truncated Poisson batches ({relation.describe()}): prvgui has no certified pair while a "
                     "batch can be truncated (a truncated batch may swap the protected record for another, and "
                     "the pair derived covers add/remove of one record only); choose add/remove neighbouring "
                     "with 1 record per person, or a max batch B of at least the dataset size n (no batch is "
                     "then truncated: Poisson sampling)")
    exc.field = "max_batch"  # type: ignore[attr-defined]
    return exc


@dataclass(frozen=True, slots=True)
class TruncatedPoisson(Mechanism):
    """Gaussian noise on a Poisson batch cut to at most B records (one DP-SGD step)."""

    kind = "truncated_poisson"

    rdp_seconds = 0.1  # (its RDP is a quadrature at each order: about 100 ms)
    title = "Truncated Poisson Gaussian (DP-SGD step)"
    summary = ("One DP-SGD step: each record joins the batch with probability q, a random B are kept "
               "when more joined, and Gaussian noise of σ times the clipping norm is added.")
    menu_order = 62
    since_version = 3
    dpsgd_step = False
    symmetric = False
    batch_scheme = "truncated_poisson"
    batch_words = "truncated Poisson batches"
    bracket_words = ("Truncated Poisson batches: the true ε lies between {lo} (proven lower bound: the other "
                     "records' gradients at zero) and {hi} (the certified upper bound: a record kept in a "
                     "truncated batch may displace another, a shift of twice the clipping norm); publish the "
                     "upper bound.")
    examples = ({"dataset_size": 60000, "sampling_rate": 0.004, "max_batch": 256, "sigma": 1.0},
                {"dataset_size": 1000, "sampling_rate": 1e-5, "max_batch": 1, "sigma": 1.0},
                {"dataset_size": 100, "sampling_rate": 0.999, "max_batch": 10, "sigma": 2.0},
                {"dataset_size": 50, "sampling_rate": 0.3, "max_batch": 50, "sigma": 0.8},
                {"dataset_size": 10**6, "sampling_rate": 0.01, "max_batch": 100, "sigma": 3.0},
                {"dataset_size": 200, "sampling_rate": 0.1, "max_batch": 15, "sigma": 0.3})

    dataset_size: int = param(Param("Dataset size n", "records",
                                    "number of records in the dataset that holds the protected record",
                                    "n", 60000, lo=1, hi=MAX_RECORDS, integer=True))
    sampling_rate: float = param(SAMPLING_RATE)
    max_batch: int = param(Param("Max batch B", "records",
                                 "largest batch: when more records join, a random B of them are kept",
                                 "B", 700, lo=1, hi=MAX_RECORDS, integer=True))
    sigma: float = param(Param("Noise multiplier σ", "× clipping norm",
                               "noise multiplier: noise standard deviation / clipping norm", "σ", 1.0,
                               search=Search(False, 0.05, 1e7)))
    sensitivity: float = param(Param("Sensitivity Δ", "L2 norm",
                                     "clipping norm in units of the noise scale (default 1)", "Δ", 1.0),
                               default=1.0)

    # ------------------------------------------------------------ the two cases
    @property
    def truncation_probability(self) -> float:
        """pi = P(M >= B), M ~ Binomial(n - 1, q): truncation can touch the record."""
        n, q, b = self.dataset_size, self.sampling_rate, self.max_batch
        if b >= n or q == 0:
            return 0.0
        return float(binom.sf(b - 1, n - 1, q))

    def _kept_joint(self) -> float:
        """q E[B / (M + 1); M >= B] = B P(Binomial(n, q) >= B + 1) / n."""
        n, q, b = self.dataset_size, self.sampling_rate, self.max_batch
        if b >= n or q == 0:
            return 0.0
        return float(np.exp(math.log(b) - math.log(n) + binom.logsf(b, n, q)))

    @property
    def truncated_rate(self) -> float:
        """p = E[q B / (M + 1) | M >= B] (0 when pi = 0), at most q."""
        pi = self.truncation_probability
        if pi == 0:
            return 0.0
        n, q, b = self.dataset_size, self.sampling_rate, self.max_batch
        lp = math.log(b) - math.log(n) + float(binom.logsf(b, n, q)) - float(binom.logsf(b - 1, n - 1, q))
        if not lp <= math.log(q):  # (p < q always; rounding or a tail lost to underflow: q, the larger)
            lp = math.log(q)
        return math.exp(lp)

    @property
    def inclusion_rate(self) -> float:
        """p_x = P(the record is in the final batch) = q E[min(1, B / (M + 1))]."""
        return min(1.0, self.sampling_rate * (1.0 - self.truncation_probability) + self._kept_joint())

    def _poisson(self) -> SubsampledGaussian:
        return SubsampledGaussian(self.sigma, self.sampling_rate, self.sensitivity)

    def _truncated(self) -> SubsampledGaussian:
        """The truncated part's pair. A rate that underflowed to 0 while pi > 0 (q B / n below
        the least float; the input-space sweep's q = 1e-300) is taken as the least positive float,
        which is above it: a larger rate dominates a smaller one."""
        p = self.truncated_rate
        if p == 0 and self.truncation_probability > 0:
            p = math.ulp(0.0)
        return SubsampledGaussian(self.sigma, p, 2.0 * self.sensitivity)

    @property
    def tight(self) -> bool:  # type: ignore[override]  # (a ClassVar of Mechanism; see SampledBatches)
        return self.truncation_probability == 0

    # ------------------------------------------------------------ facts
    def noise_halfwidth(self, level: float = 0.95) -> tuple[float, str]:
        """Per coordinate of the noisy gradient sum: sigma Phi^-1((1 + level) / 2), in clipping
        norms (1.96 sigma at 95%)."""
        return self._poisson().noise_halfwidth(level)

    def is_trivial(self) -> bool:
        return self.sampling_rate == 0 or self.sensitivity == 0

    def is_blatant(self) -> bool:
        """No noise and the record surely in the batch (as SubsampledGaussian: q = 1, and here
        no truncation); with q < 1 or truncation the loss is infinite only sometimes."""
        return self.sigma == 0 and self.sampling_rate == 1 and self.tight and not self.is_trivial()

    # ------------------------------------------------------------ pairs
    def under(self, relation: Relation) -> Mechanism:
        if relation.plain:
            return self
        if self.tight or self.is_trivial():
            return self._poisson().under(relation)
        raise truncation_error(relation)

    def attack_pair(self, relation: Relation, variant: int = 0) -> Mechanism:
        """The others' gradients 0, the record's at norm Delta: the Poisson-subsampled Gaussian
        at the record's inclusion rate p_x (see the module)."""
        if self.tight or self.is_trivial():
            return self._poisson().attack_pair(relation, variant)
        if not relation.plain:
            raise truncation_error(relation)
        return SubsampledGaussian(self.sigma, self.inclusion_rate, self.sensitivity)

    def poisson_counterpart(self) -> tuple[Mechanism, int]:
        """The same step with Poisson batches and no truncation (what Poisson accounting says)."""
        return self._poisson(), 1

    def _prv(self, order: str) -> PRV:
        if self.is_trivial():
            return TRIVIAL
        pi = self.truncation_probability
        first = self._poisson().prv(order)
        if pi == 0:
            return first
        return revealed_mixture([(1.0 - pi, first), (pi, self._truncated().prv(order))])

    def gaussian_mu(self) -> float | None:
        return self._poisson().gaussian_mu() if self.tight else None

    def tail_rho(self) -> float | None:
        """Both parts are mixtures of Gaussian pairs at shifts of at most 2 Delta (joint convexity)."""
        if self.is_trivial() or self.sigma == 0:
            return None
        return 2.0 * (self.sensitivity / self.sigma) ** 2

    def rdp(self, orders: np.ndarray) -> np.ndarray:
        pi = self.truncation_probability
        r1 = self._poisson().rdp(orders)
        if pi == 0:
            return r1
        r2 = self._truncated().rdp(orders)
        a1 = orders - 1.0
        with np.errstate(invalid="ignore", over="ignore"):
            top = np.logaddexp(math.log1p(-pi) + a1 * r1, math.log(pi) + a1 * r2) if pi < 1 else a1 * r2
            out = top / a1
        return np.where(np.isinf(r1) | np.isinf(r2) | np.isnan(out), math.inf, out)

    def gdp_mu2(self) -> float | None:
        return self._poisson().gdp_mu2() if self.tight else Mechanism.gdp_mu2(self)
