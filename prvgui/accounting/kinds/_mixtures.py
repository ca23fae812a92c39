"""Derived pairs of the subsampled kinds under replace-one and group privacy (not kinds of
their own: ``Mechanism.under`` returns them, and every accountant works on them unchanged).

In units of the sensitivity, with noise s (Gaussian) or eps0 = sensitivity / scale (Laplace),
sampling rate q and a group of k records, w_j = Binom(j; k, q) (ACCOUNTING.md, "Beyond Poisson
and add/remove"; the PRVs and their proofs are in mixture.py):

* add/remove, k records: P = sum_j w_j B(j) against Q = B(0), both orders (the j sampled
  records of the group shift the sum by j clipping norms at worst; Ganesh 2024,
  arXiv:2401.10294; dp-accounting's MixtureOfGaussiansDpEvent);
* replace-one, k records: P = sum_j w_j B(j) against Q = sum_j w_j B(-j), a symmetric pair
  (reflection swaps P and Q): the j sampled records each move by up to twice the clipping
  norm, which the pair realises as +j against -j (Zhu, Dong, Wang 2022; Lebeda et al. 2024).
  Fixed-size sampling without replacement (q = b/n) has the same pair: the replaced record is
  in the batch with probability q and the batch is otherwise the same.

Without noise P and Q are disjoint whenever a record of the group is sampled: the loss is 0
(replace-one) or log w_0 (add/remove) when none is, +inf otherwise, which is
``blind_subsample`` at rate 1 - (1 - q)^k for add/remove.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..prv import PRV, TRIVIAL
from ..subsampling import blind_subsample
from .base import Mechanism, fixed_size_error


def subsampled_under(mech: Mechanism, relation, plain: Callable[[float], Mechanism],
                     pair: Callable[[float, int, bool], Mechanism]) -> Mechanism:
    """The pair of a subsampled kind under ``relation``, the one rule both subsampled kinds
    follow: fixed-size sampling only under replace-one; add/remove one record with Poisson
    sampling is the kind's own pair; at q = 1 (or without leakage) the plain mechanism
    (``plain(sensitivity)``) under the relation; else the mixture ``pair(q, k, replace)``."""
    if not relation.replace and mech.sampling != "poisson":
        raise fixed_size_error()
    if relation.plain:
        return mech
    q = mech.sampling_rate
    if q == 1 or mech.is_trivial():
        return plain(0.0 if q == 0 else mech.sensitivity).under(relation)
    return pair(q, relation.group_size, relation.replace)


def _blind(q: float, k: int, replace: bool, order: str) -> PRV:
    hit = -math.expm1(k * math.log1p(-q)) if q < 1 else 1.0  # P(some record of the group sampled)
    if not replace:
        return blind_subsample(hit, order)
    if hit == 1.0:
        return PRV((), 1.0, None, 0.0, 0.0)
    return PRV(((0.0, 1.0 - hit),), hit, None, 0.0, 0.0)


@dataclass(frozen=True, slots=True)
class _MixturePair(Mechanism):
    """Base of the derived mixture pairs: rate q, group k, relation replace-one or not."""

    sampling_rate: float
    group_size: int
    replace: bool

    def __post_init__(self) -> None:  # built by ``under`` from checked parameters
        pass

    def orders(self, relation=None) -> tuple[str, ...]:
        return ("remove",) if self.replace else ("remove", "add")


@dataclass(frozen=True, slots=True)
class GaussianMixturePair(_MixturePair):
    """Subsampled Gaussian under replace-one and/or a group of k records."""

    title = "Subsampled Gaussian"

    noise: float = 1.0  # sigma / sensitivity (inf: no noise)

    def is_trivial(self) -> bool:
        return self.sampling_rate == 0

    def is_blatant(self) -> bool:
        return math.isinf(self.noise) and self.sampling_rate == 1

    def _prv(self, order: str) -> PRV:
        if self.is_trivial():
            return TRIVIAL
        s, q, k = self.noise, self.sampling_rate, self.group_size
        if math.isinf(s):
            return _blind(q, k, self.replace, order)
        from .. import mixture as _mix
        if self.replace:
            return _mix.replace_gaussian_prv(s, q, k)
        return _mix.group_gaussian_prv(s, q, k, order)

    def rdp(self, orders: np.ndarray) -> np.ndarray:
        """RDP of the pair (mixture_rdp.py: an upper bound, inf where it is not certified), the
        larger of the two orders under add/remove."""
        if math.isinf(self.noise):
            return np.full(orders.shape, math.inf)
        from ..mixture_rdp import mixture_rdp
        pairs = ("replace",) if self.replace else ("remove", "add")
        return np.maximum.reduce([mixture_rdp(p, self.noise, self.sampling_rate, self.group_size, orders)
                                  for p in pairs])


@dataclass(frozen=True, slots=True)
class LaplaceMixturePair(_MixturePair):
    """Subsampled Laplace under replace-one and/or a group of k records."""

    title = "Subsampled Laplace"

    eps0: float = 1.0  # sensitivity / scale (inf: no noise)

    def is_trivial(self) -> bool:
        return self.sampling_rate == 0 or self.eps0 == 0

    def is_blatant(self) -> bool:
        return math.isinf(self.eps0) and self.sampling_rate == 1

    def _prv(self, order: str) -> PRV:
        if self.is_trivial():
            return TRIVIAL
        e, q, k = self.eps0, self.sampling_rate, self.group_size
        if math.isinf(e):
            return _blind(q, k, self.replace, order)
        from .. import mixture_laplace as _mix
        if self.replace:
            return _mix.replace_laplace_prv(e, q, k)
        return _mix.group_laplace_prv(e, q, k, order)

    def eps_delta(self) -> tuple[float, float]:
        """Pure DP: the largest finite loss over both orders (the loss is bounded)."""
        if self.is_trivial():
            return (0.0, 0.0)
        if math.isinf(self.eps0):
            hit = -math.expm1(self.group_size * math.log1p(-self.sampling_rate)) \
                if self.sampling_rate < 1 else 1.0
            return (0.0, hit)
        top = 0.0
        for o in self.orders():
            prv = self._prv(o)
            locs = [loc for loc, _ in prv.atoms] + ([prv.cont.hi] if prv.cont is not None else [])
            top = max(top, max(abs(v) for v in locs))
        return (top, 0.0)

    def rdp(self, orders: np.ndarray) -> np.ndarray:
        """RDP of the pair (mixture_rdp.py, capped by eps'-randomized response's, eps' the
        largest loss), the larger of the two orders under add/remove."""
        if math.isinf(self.eps0):
            return np.full(orders.shape, math.inf)
        from ..mixture_rdp import mixture_rdp
        pairs = ("replace",) if self.replace else ("remove", "add")
        return np.maximum.reduce([mixture_rdp(p, self.eps0, self.sampling_rate, self.group_size, orders,
                                              laplace=True) for p in pairs])
