"""DP-FTRL / DP-MF: the matrix (factorisation) mechanism over n training steps.

The steps' gradient sums x (one per step, each record's clipped contribution of norm at most
Delta = 1 clipping norm) are released as C x + z, z ~ N(0, sigma^2 I) per row of the strategy
matrix C (the decoder B = A C^-1 is post-processing). Strategies (``strategy``):

* ``tree``: binary-tree aggregation over n steps (Kairouz, McMahan, Song, Thakkar, Thakurta,
  Xu, "Practical and private (deep) learning without sampling or shuffling", ICML 2021): one row
  per node of the dyadic tree, each step in ceil(log2 n) + 1 nodes; one participation's
  sensitivity is sqrt(ceil(log2 n) + 1) (pairs/matrix_sensitivity.py states the convention);
* ``banded_toeplitz``: C[i, j] = c[i - j] for 0 <= i - j < len(c) (banded matrix factorisation,
  Choquette-Choo, McMahan, Rush, Thakurta, NeurIPS 2023);
* ``matrix``: C given as a list of rows (at most 2000 x 2000; a CSV in the window).

A record takes part in at most k = ``participations`` steps, any two at least b =
``min_separation`` apart. Its influence on C x is sum_i C[:, i] g_i with ||g_i|| <= Delta, so the
release is the Gaussian mechanism with L2 sensitivity sens = the largest such norm over the
allowed participation patterns (matrix_sensitivity.py: exact for k = 1 and where C^T C is
non-negative on the patterns, else a certified upper bound; ``facts`` says which), and its pair
is one Gaussian with mu = sens / sigma (rho-zCDP with rho = mu^2 / 2, as production reports it).
Groups and replace-one scale Delta (triangle inequality). A row's count is how many times the
whole mechanism runs.

Amplified banded MF (``amplification`` = {"dataset_size": m, "batch_size": B}; Choquette-Choo et
al. 2023, Thm 1): with a b-banded C (b = the band: len(c) for banded_toeplitz, the smallest band
holding a lower-triangular ``matrix``), the data split into b equal parts, step i drawing a
Poisson batch of expected size B from part i mod b, the release is dominated by ceil(n / b)
Poisson-subsampled Gaussian steps at q = b B / m with noise sigma / (largest column norm of C)
(when b does not divide m, the parts differ by one record: q = B / floor(m / b), the larger rate).
The row then stands for ceil(n / b) such steps per run (``runs_per_count``); participations and
separation follow from the sampling and are not asked.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from ..core.values import Relation
from ..pairs.prv import PRV
from ..pairs import matrix_sensitivity as ms
from .base import (MAX_MATRIX, Choice, Matrix, Mechanism, Param, Search, Vector, VectorError, group_factor,
                   param, ratio)
from .gaussian import gaussian_blatant, gaussian_prv

MAX_STEPS = 10**6
STRATEGY = Choice("Strategy", "", "the strategy matrix C: 'tree' (binary-tree aggregation), 'banded_toeplitz' "
                  "(coefficients c0..c(b-1) on the band) or 'matrix' (C given row by row)", "", "banded_toeplitz",
                  choices=(("tree", "Binary tree (DP-FTRL)"), ("banded_toeplitz", "Banded Toeplitz (BandMF)"),
                           ("matrix", "Matrix C, row by row")))


@dataclass(frozen=True)
class Amplification(Vector):
    """Amplified banded MF's sampling: {"dataset_size": m, "batch_size": B}, or nothing (None,
    {} or an empty list). Typed as "m, B". ``check`` returns (m, B) as ints, or ()."""

    #: not a column of numbers to fill from a CSV file
    csv: bool = False
    #: what a file holds, in words (the kinds table)
    file_form = '`{"dataset_size": m, "batch_size": B}`, or empty for none'

    def to_file(self, value: object) -> object:
        """As the file format spells it: {"dataset_size": m, "batch_size": B}, or [] for none."""
        if isinstance(value, (list, tuple)) and len(value) == 2:
            return {"dataset_size": value[0], "batch_size": value[1]}
        return list(value) if isinstance(value, tuple) else value

    def table_text(self, name: str, value: object) -> str | None:
        if isinstance(value, (list, tuple)):
            return "amplified: m, B = " + ", ".join(str(v) for v in value) if value else "not amplified"
        return None

    def check(self, name: str, value: object) -> tuple[int, ...]:
        if value is None or (isinstance(value, (dict, list, tuple, str)) and len(value) == 0):
            return ()  # (an empty field in the window: no amplification)
        what = ('a list [m, B] of the dataset size m and the expected batch size B ({"dataset_size": m, '
                '"batch_size": B} in a file), or empty for none')
        if isinstance(value, dict):
            extra = sorted(set(value) - {"dataset_size", "batch_size"})
            if extra or len(value) != 2:
                raise VectorError(self.title, what, value, field=name,
                                  plain=f"it has {extra[0]!r}" if extra else "it needs both keys")
            value = (value["dataset_size"], value["batch_size"])
        if not isinstance(value, (list, tuple)):
            raise VectorError(self.title, what, value, field=name)
        out: list[int] = []
        for i, v in enumerate(value[:2]):
            label, hi = (("dataset size m", 1e12) if i == 0 else ("batch size B", out[0]))
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v != int(v) \
                    or not 1 <= v <= hi:
                raise VectorError(self.title, f"{what}: the {label} a whole number from 1"
                                  + (" to the dataset size" if i else ""), v, field=name, entry=i + 1)
            out.append(int(v))
        if len(value) != 2:
            raise VectorError(self.title, what, value, field=name,
                              plain=f"it has {len(value)} entr{'y' if len(value) == 1 else 'ies'}")
        return tuple(out)


# (no slots: the sensitivity of a large matrix is computed once per instance, cached_property)
@dataclass(frozen=True)
class MatrixMechanism(Mechanism):
    """The matrix mechanism of DP-FTRL and DP-MF: correlated Gaussian noise over n steps."""

    kind = "matrix_mechanism"
    title = "Matrix mechanism (DP-FTRL / DP-MF)"
    menu_order = 68
    since_version = 3
    examples = ({"strategy": "tree", "steps": 1000, "sigma": 4.0},
                {"strategy": "banded_toeplitz", "coefficients": (1.0, 0.5, 0.25), "steps": 100, "sigma": 2.0,
                 "participations": 3, "min_separation": 30},
                {"strategy": "matrix", "matrix": ((1, 0, 0, 0), (2, 1, 0, 0), (0, 1, 1, 0), (0, 0, 3, -6)),
                 "sigma": 10.0},
                {"strategy": "banded_toeplitz", "coefficients": (1.0, 0.3), "steps": 1000, "sigma": 0.8,
                 "amplification": {"dataset_size": 60000, "batch_size": 256}})

    strategy: str = param(STRATEGY)
    sigma: float = param(Param("Noise multiplier σ", "× clipping norm",
                               "noise standard deviation / clipping norm, per entry of C x", "σ", 1.0,
                               search=Search(False, 0.05, 1e7)))
    steps: int = param(Param("Steps n", "steps", "number of training steps (columns of C); 0 with a "
                             "matrix: its number of columns", "n", 100, lo=0, hi=MAX_STEPS, integer=True),
                       default=0)
    coefficients: tuple = param(Vector("Band coefficients c", "c₀ … c_(b-1)",
                                       "banded Toeplitz strategy: C[i, j] = c[i - j] for the b = len(c) "
                                       "diagonals from the main one down", "c", (1.0,), lo=-math.inf,
                                       max_len=MAX_MATRIX), default=(1.0,))
    matrix: tuple = param(Matrix("Strategy matrix C", "rows", "the strategy matrix, one row per released "
                                 "noisy sum, one column per step", "C", ((1.0, 0.0), (0.0, 1.0))),
                          default=((1.0, 0.0), (0.0, 1.0)))
    participations: int = param(Param("Participations k", "steps", "the most steps a record takes part in",
                                      "k", 1, lo=1, hi=MAX_STEPS, integer=True), default=1)
    min_separation: int = param(Param("Min. separation b", "steps", "the fewest steps between two "
                                      "participations of a record", "b", 1, lo=1, hi=MAX_STEPS, integer=True),
                                default=1)
    amplification: tuple = param(Amplification("Amplification (m, B)", "records",
                                               "amplified banded MF: dataset size m and expected batch size B "
                                               "(empty: no amplification)", "m, B", ()), default=())

    def __post_init__(self) -> None:
        Mechanism.__post_init__(self)
        n = self.n
        if self.strategy != "matrix" and self.steps < 1:
            _fail("steps", f"Steps n must be at least 1 with the {self.strategy} strategy; you typed {self.steps}")
        if self.strategy == "matrix" and self.steps not in (0, n):
            _fail("steps", f"Steps n must be 0 or the matrix's number of columns ({n}); you typed {self.steps}")
        if self.strategy == "banded_toeplitz" and len(self.coefficients) > n:
            _fail("coefficients", f"Band coefficients c must be at most n = {n} long; you typed "
                  f"{len(self.coefficients)}")
        if self.amplification:
            m, batch = self.amplification
            if self.band is None:
                _fail("amplification", "Amplification (m, B) needs a banded strategy (banded Toeplitz, or a "
                      "lower-triangular banded matrix); the tree is not banded")
            if batch > m // self.band:
                _fail("amplification", f"Amplification (m, B): each of the b = {self.band} parts of the data "
                      f"must hold at least B records (B <= floor(m / b)); you typed m = {m}, B = {batch}")
        elif self.participations > ms.max_patterns(n, self.min_separation):
            _fail("participations", f"Participations k: {self.participations} participations at least "
                  f"{self.min_separation} steps apart do not fit in {n} steps (at most "
                  f"{ms.max_patterns(n, self.min_separation)})")

    # ------------------------------------------------------------ structure
    @property
    def n(self) -> int:
        return len(self.matrix[0]) if self.strategy == "matrix" else self.steps

    @cached_property
    def band(self) -> int | None:
        """The band b of a banded strategy (None for the tree or a matrix that is not lower-triangular)."""
        if self.strategy == "banded_toeplitz":
            return len(self.coefficients)
        if self.strategy == "tree":
            return None
        c = np.array(self.matrix)
        if c.shape[0] != c.shape[1] or np.any(np.triu(c, 1)):
            return None
        i, j = np.nonzero(c)
        return int((i - j).max()) + 1 if i.size else 1

    @cached_property
    def l2_sensitivity(self) -> ms.Sensitivity:
        """One record's L2 sensitivity (clipping norm 1) under the participation patterns."""
        k, b = self.participations, self.min_separation
        if self.amplification:
            k = 1  # amplified: each round is one step of the Poisson-subsampled pair
        if self.strategy == "tree":
            return ms.tree_sensitivity(self.n, k, b)
        if self.strategy == "banded_toeplitz":
            return ms.toeplitz_sensitivity(self.coefficients, self.n, k, b)
        return ms.matrix_sensitivity(np.array(self.matrix), k, b)

    @property
    def mu(self) -> float:
        return ratio(self.l2_sensitivity.value, self.sigma)

    def runs_per_count(self) -> int:
        """Amplified: the ceil(n / b) subsampled steps one run stands for; else 1."""
        return -(-self.n // self.band) if self.amplification and self.band else 1

    @property
    def amplified_rate(self) -> float:
        """q = B / floor(m / b): each of the b parts holds at least floor(m / b) records (b B / m when b
        divides m; the smaller part's rate otherwise, the larger one)."""
        m, batch = self.amplification
        assert self.band is not None
        return min(1.0, batch / (m // self.band))

    def _amplified(self) -> Mechanism:
        from .subsampled_gaussian import SubsampledGaussian
        return SubsampledGaussian(self.sigma, self.amplified_rate, self.l2_sensitivity.value)

    @property
    def tight(self) -> bool:  # type: ignore[misc, override]
        """The pair is realised: an exact sensitivity, not amplified (the amplified pair takes the
        largest column norm for every round)."""
        return self.l2_sensitivity.exact and not self.amplification

    def _column_norm(self, columns: np.ndarray | None = None) -> float:
        """The smallest norm of the given columns of C (None: the largest of all), rounded down."""
        if self.strategy == "tree":
            norms = np.full(self.n, math.sqrt(math.ceil(math.log2(self.n)) + 1))  # (tree_matrix's levels)
        elif self.strategy == "banded_toeplitz":
            c2 = np.cumsum(np.square(self.coefficients))
            last = np.minimum(len(self.coefficients), self.n - np.arange(self.n)) - 1
            norms = np.sqrt(c2[last])
        else:
            norms = np.sqrt(np.square(np.array(self.matrix)).sum(axis=0))
        pick = norms.max() if columns is None else norms[columns].min()
        return float(pick) * (1 - 1e-12)

    def attack_pair(self, relation: Relation, variant: int = 0) -> Mechanism:
        """A realised pair (a proven lower bound): one participation in the step with the largest
        column (a group's records together, a replaced record's gradient reversed); amplified,
        the record in the part of steps 0, b, 2b, ..., each round at its smallest column norm,
        against a null record."""
        if self.tight:
            return self.under(relation)
        if self.amplification:
            from .subsampled_gaussian import SubsampledGaussian
            assert self.band is not None
            return SubsampledGaussian(self.sigma, self.amplified_rate,
                                      self._column_norm(np.arange(0, self.n, self.band)))
        from .gaussian import Gaussian
        return Gaussian(self.sigma, self._column_norm() * group_factor(relation))

    def facts(self) -> dict[str, Any]:
        """What reports print beside epsilon: the sensitivity, whether it is exact and how it was
        found; rho of one run (not amplified)."""
        s = self.l2_sensitivity
        out: dict[str, Any] = {"sensitivity": s.value, "sensitivity_exact": s.exact,
                               "sensitivity_method": s.method}
        if not self.amplification:
            out["rho"] = 0.5 * self.mu * self.mu
        return out

    # ------------------------------------------------------------ pairs
    def is_trivial(self) -> bool:
        return self.l2_sensitivity.value == 0 or math.isinf(self.sigma)

    def is_blatant(self) -> bool:
        return self._amplified().is_blatant() if self.amplification else gaussian_blatant(self.mu)

    def _prv(self, order: str) -> PRV:
        return self._amplified().prv(order) if self.amplification else gaussian_prv(self.mu)

    def orders(self, relation=None) -> tuple[str, ...]:
        if self.amplification:
            return self._amplified().orders(relation)
        return Mechanism.orders(self, relation)

    def under(self, relation: Relation) -> Mechanism:
        if self.amplification:
            return self._amplified().under(relation)
        if relation.plain:
            return self
        from .gaussian import Gaussian
        return Gaussian(self.sigma, self.l2_sensitivity.value * group_factor(relation))

    def gaussian_mu(self) -> float | None:
        return None if self.amplification else self.mu

    def rdp(self, orders: np.ndarray) -> np.ndarray | None:
        if self.amplification:
            return self._amplified().rdp(orders)
        return 0.5 * orders * self.mu * self.mu

    def gdp_mu2(self) -> float | None:
        return self._amplified().gdp_mu2() if self.amplification else self.mu * self.mu

    def noise_halfwidth(self, level: float = 0.95) -> tuple[float, str]:
        from scipy.special import ndtri
        return self.sigma * float(ndtri(0.5 + level / 2)), "clipping norms (per entry of C x)"


def _fail(field: str, message: str) -> None:
    exc = ValueError(message)
    exc.field = field  # type: ignore[attr-defined]
    raise exc
