"""The shuffle model: n users each apply an eps0-DP local randomizer (eps0-LDP) to their own
data and send one report; a shuffler releases the n reports in random order.

Amplification by shuffling through the numerical dominating pair of Feldman, McMillan,
Talwar, "Hiding among the clones: a simple and nearly optimal analysis of privacy
amplification by shuffling" (FOCS 2021, arXiv 2012.12803), Theorem 3.2: for two datasets
that differ in one user's data, the shuffled output is a post-processing of

    P = (A + D, C - A + 1 - D)   against   Q = (A + 1 - D, C - A + D),

C ~ Binom(n - 1, e^-eps0), A | C ~ Binom(C, 1/2), D ~ Bernoulli(e^eps0 / (e^eps0 + 1)),
independent. Each other user's report is, with probability e^-eps0, a "clone" that looks like
either differing user's report with probability 1/2; A and C - A count the clones of each
side and D is the differing user's own report. The pair holds for every eps0-DP randomizer
(the theorem allows each user's randomizer to be chosen adaptively). Its privacy loss takes
finitely many values, log((1 + E u) / (1 + E (1 - u))) at u = a / (C + 1), E = e^eps0 - 1;
clones.py builds the PRV from the exact binomial masses (log space) with only conservative
steps (cut tails moved to the largest loss, rows grouped towards fewer clones, connect-the-dots
buckets), so the certified upper bounds hold; n up to 10^6 takes about a second.

This is the pair FMT21 evaluate numerically (their App. E; reference code in
apple/ml-shuffling-amplification). Feldman, McMillan, Talwar, "Stronger privacy amplification
by shuffling for Renyi and approximate differential privacy" (SODA 2023, arXiv 2208.04591)
give a tighter "stronger clone" pair, but their erratum restricts it (an error in the proof of
its Lemma 3.5) to a class of randomizers; this kind claims every eps0-DP randomizer and so
uses the FOCS 2021 pair. The clone pair is an upper bound, not realised by a randomizer: the
bracket's lower end bounds the pair's epsilon, and the true epsilon of a particular randomizer
(binary randomized response, say) can be lower. So the kind is not ``tight``: its proven lower
bound (``attack_pair``, ``ShuffledRR``) is n users running eps0 binary randomized response,
one of them with bit 1 against bit 0 and every other user's bit 0; the shuffler's output is
then the count K of ones: P(K = k) = r1 B(k - 1) + (1 - r1) B(k) against
Q(K = k) = r0 B(k - 1) + (1 - r0) B(k), B the Binom(n - 1, r0) pmf, r1 = e^eps0 / (1 + e^eps0),
r0 = 1 - r1. Counts whose P-mass is below 1e-300 are left out and their mass is put on the
smallest loss (-eps0), which can only lower delta: a valid lower bound. Shuffling never hurts: epsilon <= eps0.

Neighbouring relation: replace-one only (the papers' relation: n users, one user's data
replaced). Under add/remove the number of reports would reveal whether the user took part,
so no pair is given there (a clear error, as for fixed-size batches). Group privacy (several
users' data replaced) is not derived here: a clear error says so and names the valid, loose
alternative (k users' reports are k eps0-LDP together: a pure_dp row with k eps0).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from ..pairs.prv import PRV
from .base import EPSILON, Mechanism, Param, Search, param
from ..core.values import Relation

#: the largest number of users (the PRV is built in about a second there)
MAX_USERS = 10**6

ADD_REMOVE = ("the shuffle model's guarantee (Feldman, McMillan, Talwar 2021) is for replace-one "
              "neighbouring: n users, one user's data replaced. Under add/remove the number of "
              "shuffled reports reveals whether a user took part; set Neighbouring to “Replace one "
              "record” (\"replace_one\" in a file)")
GROUPS = ("group privacy is not defined for the shuffle model here (the clone reduction covers one "
          "user's data); for a group of k users use a Pure ε-DP row with ε = k × ε₀ "
          "(valid, without amplification)")


@dataclass(frozen=True, slots=True)
class ShuffleModel(Mechanism):
    """n users' eps0-LDP reports, shuffled (FMT21 clone pair; replace-one neighbouring)."""

    kind = "shuffle_model"
    examples = ({"epsilon0": 0.5, "n": 1000}, {"epsilon0": 3.0, "n": 100000})
    title = "Shuffle model (ε₀-LDP reports)"
    menu_order = 75
    tight = False

    epsilon0: float = param(dataclasses.replace(
        EPSILON, title="Local ε₀", help="each user's local randomizer is epsilon0-DP (nats); at most 100",
        symbol="ε₀", hi=100.0, search=Search(True, 1e-6, 50.0)))
    n: int = param(Param("Users n", "users", f"number of users whose reports are shuffled (each sends "
                         f"one report): a whole number from 2 to {MAX_USERS:,}", "n", 10000,
                         lo=2, hi=MAX_USERS, integer=True))

    def is_trivial(self) -> bool:
        return self.epsilon0 == 0

    def under(self, relation: Relation) -> "ClonePair":
        """Replace-one, one user: the clone pair. Otherwise a ValueError in words (module)."""
        if not relation.replace:
            raise ValueError(ADD_REMOVE)
        if relation.group_size != 1:
            raise ValueError(GROUPS)
        return ClonePair(self.epsilon0, self.n)

    def _prv(self, order: str) -> PRV:
        raise ValueError(ADD_REMOVE)

    def attack_pair(self, relation: Relation, variant: int = 0) -> "ShuffledRR":
        self.under(relation)  # the same relations as the upper bound
        return ShuffledRR(self.epsilon0, self.n)

    def poisson_counterpart(self) -> None:
        return None


@dataclass(frozen=True, slots=True)
class ShuffledRR(Mechanism):
    """n users' eps0 binary randomized response, shuffled: a realised pair (module docstring)."""

    title = "Shuffle model (shuffled randomized response)"
    symmetric = False

    epsilon0: float = 1.0
    n: int = 2

    def __post_init__(self) -> None:  # built from a checked ShuffleModel
        pass

    def is_trivial(self) -> bool:
        return self.epsilon0 == 0

    def _prv(self, order: str) -> PRV:
        from scipy.stats import binom
        e, n = float(self.epsilon0), int(self.n)
        r0 = 1.0 / (1.0 + np.exp(e))
        r1 = 1.0 - r0
        k = np.arange(n + 1)
        lb = binom.logpmf(k, n - 1, r0)          # log B(k), -inf at k = n
        lb1 = binom.logpmf(k - 1, n - 1, r0)     # log B(k - 1), -inf at k = 0
        with np.errstate(divide="ignore"):
            lp = np.logaddexp(np.log(r1) + lb1, np.log(r0) + lb)   # 1 - r1 = r0
            lq = np.logaddexp(np.log(r0) + lb1, np.log(r1) + lb)
        if order == "add":
            lp, lq = lq, lp
        keep = lp > np.log(1e-300)
        loss = np.clip(lp[keep] - lq[keep], -e, e)
        mass = np.exp(lp[keep])
        low = int(np.argmin(loss))
        mass[low] += max(0.0, 1.0 - float(mass.sum()))  # the left-out mass on the smallest loss
        mean = float(np.dot(mass, loss))
        return PRV(tuple(zip(loss.tolist(), mass.tolist())), 0.0, None, mean, 1e-12 * (abs(mean) + e))


@dataclass(frozen=True, slots=True)
class ClonePair(Mechanism):
    """The clone pair of ``ShuffleModel`` under replace-one, as a plain pair (not a kind)."""

    title = "Shuffle model (clone pair, replace-one)"

    epsilon0: float = 1.0
    n: int = 2

    def __post_init__(self) -> None:  # built from a checked ShuffleModel
        pass

    def is_trivial(self) -> bool:
        return self.epsilon0 == 0

    def _prv(self, order: str) -> PRV:
        from ..pairs.clones import clone_prv
        return clone_prv(float(self.epsilon0), int(self.n))

    def eps_delta(self) -> tuple[float, float]:
        """Shuffling is post-processing of the reports, one of which changes: eps0-DP."""
        return (self.epsilon0, 0.0)

    def rdp(self, orders: np.ndarray) -> np.ndarray:
        """Renyi DP of the clone pair from its PRV (an upper bound; FMT21 also bound the shuffle
        model's RDP through this pair)."""
        from ..pairs.clones import clone_rdp
        return clone_rdp(float(self.epsilon0), int(self.n), np.asarray(orders, dtype=float))


