"""Derived pairs of the subsampled kinds under replace-one and group privacy (not kinds of
their own: ``Mechanism.under`` returns them, and every accountant works on them unchanged).

In units of the sensitivity, with noise s (Gaussian) or eps0 = sensitivity / scale (Laplace),
sampling rate q and a group of k records, w_j = Binom(j; k, q) (docs/kinds.md, "Pairs and sources"; the PRVs and their proofs are in
mixture.py):

* add/remove, k records: P = sum_j w_j B(j) against Q = B(0), both orders (the j sampled
  records of the group shift the sum by j clipping norms at worst; Ganesh 2024,
  arXiv:2401.10294; dp-accounting's MixtureOfGaussiansDpEvent);
* replace-one, k records: P = sum_j w_j B(j) against Q = sum_j w_j B(-j), a symmetric pair
  (reflection swaps P and Q): the j sampled records each move by up to twice the clipping
  norm, which the pair realises as +j against -j (Zhu, Dong, Wang 2022; Lebeda et al. 2024).
* fixed-size batches (sampling without replacement, q = b/n), replace-one, one record: NOT
  the pair above (the replaced record displaces another from the batch) but the symmetrised
  pair of (q B(2) + (1-q) B(0), B(0)), the base's replace-one shift 2 (without_replacement.py,
  ``FixedSizePair``). Groups of several records with fixed-size batches have no pair here
  (the number of the group's records in a batch is hypergeometric in n, which rows do not
  hold): refused.

Without noise P and Q are disjoint whenever a record of the group is sampled: the loss is 0
(replace-one) or log w_0 (add/remove) when none is, +inf otherwise, which is
``blind_subsample`` at rate 1 - (1 - q)^k for add/remove.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from ..pairs.prv import PRV, TRIVIAL
from ..pairs.subsampling import blind_subsample
from .base import NOISELESS, Mechanism, fixed_size_error, fixed_size_group_error


# (``mech`` below: a subsampled kind, whose fields ``sampling``, ``sampling_rate`` and
# ``sensitivity`` are read generically; the kinds import this module, not it them)
def subsampled_under(mech: Any, relation, plain: Callable[[float], Mechanism],
                     pair: Callable[[float, int, bool], Mechanism],
                     fixed: Callable[[float], Mechanism]) -> Mechanism:
    """The pair of a subsampled kind under ``relation``, the one rule both subsampled kinds
    follow: fixed-size sampling only under replace-one and for one record; add/remove one
    record with Poisson sampling is the kind's own pair; at q = 1 (or without leakage) the
    plain mechanism (``plain(sensitivity)``) under the relation; else the mixture
    ``pair(q, k, replace)`` (Poisson) or the without-replacement pair ``fixed(q)``."""
    fixed_size = mech.sampling != "poisson"
    if fixed_size and not relation.replace:
        raise fixed_size_error()
    if fixed_size and relation.group_size > 1:
        raise fixed_size_group_error(relation.group_size)
    if relation.plain:
        return mech
    q = mech.sampling_rate
    if q == 1 or mech.is_trivial():
        return plain(0.0 if q == 0 else mech.sensitivity).under(relation)
    return fixed(q) if fixed_size else pair(q, relation.group_size, relation.replace)


def fixed_size_attack(mech: Any, relation, doubled: Callable[[], Mechanism]) -> Mechanism:
    """A subsampled kind's realised pair (``attack_pair``): its own pair with Poisson batches;
    with fixed-size batches the Poisson add/remove pair at twice the sensitivity (``doubled()``,
    attained by the datasets of without_replacement.py and their swap), after the same refusals
    as the upper pair."""
    pair = mech.under(relation)
    if mech.sampling == "poisson" or mech.sampling_rate == 1 or mech.is_trivial():
        return pair
    return doubled()


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

    def tail_rho(self) -> float | None:
        """Joint convexity: at most the Gaussian pair whose means differ by the largest shift
        (k records, twice that under replace-one), in noise units."""
        if math.isinf(self.noise) or self.noise <= 0:
            return None
        shift = self.group_size * (2.0 if self.replace else 1.0)
        return 0.5 * (shift / self.noise) ** 2

    def _prv(self, order: str) -> PRV:
        if self.is_trivial():
            return TRIVIAL
        s, q, k = self.noise, self.sampling_rate, self.group_size
        if math.isinf(s):
            return _blind(q, k, self.replace, order)
        from ..pairs import mixture as _mix
        if self.replace:
            return _mix.replace_gaussian_prv(s, q, k)
        return _mix.group_gaussian_prv(s, q, k, order)

    def rdp(self, orders: np.ndarray) -> np.ndarray:
        """RDP of the pair (mixture_rdp.py: an upper bound, inf where it is not certified), the
        larger of the two orders under add/remove."""
        if math.isinf(self.noise) or self.noise < NOISELESS:  # no noise to speak of
            return np.full(orders.shape, math.inf)
        from ..pairs.mixture_rdp import mixture_rdp
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
        return self._noiseless() and self.sampling_rate == 1

    def _noiseless(self) -> bool:
        """No noise, or so little that the pair reads it as none (eps0 above 1 / base.NOISELESS,
        as mixture_laplace.py does)."""
        return not self.eps0 <= 1 / NOISELESS

    def _prv(self, order: str) -> PRV:
        if self.is_trivial():
            return TRIVIAL
        e, q, k = self.eps0, self.sampling_rate, self.group_size
        if self._noiseless():
            return _blind(q, k, self.replace, order)
        from ..pairs import mixture_laplace as _mix
        if self.replace:
            return _mix.replace_laplace_prv(e, q, k)
        return _mix.group_laplace_prv(e, q, k, order)

    def eps_delta(self) -> tuple[float, float]:
        """Pure DP: the largest finite loss over both orders (the loss is bounded)."""
        if self.is_trivial():
            return (0.0, 0.0)
        if self._noiseless():  # (the pair read as noiseless: a group member is revealed, or nothing)
            hit = -math.expm1(self.group_size * math.log1p(-self.sampling_rate)) \
                if self.sampling_rate < 1 else 1.0
            return (0.0, hit)
        # (eps: the largest finite |loss| over both orders; delta: the mass at +inf, none for a
        # noisy pair; either way delta(eps) is at most that mass)
        top, spent = 0.0, 0.0
        for o in self.orders():
            prv = self._prv(o)
            locs = [loc for loc, _ in prv.atoms] + ([prv.cont.lo, prv.cont.hi] if prv.cont is not None else [])
            top = max([top] + [abs(v) for v in locs if math.isfinite(v)])
            spent = max(spent, prv.inf_mass)
        return (top, spent)

    def rdp(self, orders: np.ndarray) -> np.ndarray:
        """RDP of the pair (mixture_rdp.py, capped by eps'-randomized response's, eps' the
        largest loss), the larger of the two orders under add/remove."""
        if math.isinf(self.eps0):
            return np.full(orders.shape, math.inf)
        from ..pairs.mixture_rdp import mixture_rdp
        pairs = ("replace",) if self.replace else ("remove", "add")
        return np.maximum.reduce([mixture_rdp(p, self.eps0, self.sampling_rate, self.group_size, orders,
                                              laplace=True) for p in pairs])


@dataclass(frozen=True, slots=True)
class FixedSizePair(Mechanism):
    """A subsampled kind with fixed-size batches under replace-one (one record): the symmetrised
    pair of the Poisson add/remove pair at the base's replace-one shift (without_replacement.py).
    One PRV (the pair is symmetric); not realised over several steps (``tight`` is False on the
    row's kind, whose ``attack_pair`` is the realised one)."""

    sampling_rate: float
    #: Gaussian: noise s = sigma / sensitivity; Laplace: eps0 = sensitivity / scale
    noise: float
    #: the kind's Poisson pair (noise, q, order) -> PRV, given by the kind (so that this module
    #: does not import the kinds built on it)
    poisson_prv: Callable[[float, float, str], PRV]
    laplace: bool = False

    def __post_init__(self) -> None:  # built by ``under`` from checked parameters
        pass

    @property
    def title(self) -> str:  # type: ignore[override]
        return f"Subsampled {'Laplace' if self.laplace else 'Gaussian'} with fixed-size batches"

    def orders(self, relation=None) -> tuple[str, ...]:
        return ("remove",)

    def is_trivial(self) -> bool:
        return self.sampling_rate == 0 or (self.laplace and self.noise == 0)

    def is_blatant(self) -> bool:
        return self.sampling_rate == 1 and self._noiseless()

    def _noiseless(self) -> bool:
        """No noise, or so little that it is taken as none (base.NOISELESS)."""
        if self.laplace:
            return math.isinf(self.noise) or self.noise > 1 / NOISELESS
        return math.isinf(self.noise) or self.noise < NOISELESS

    def tail_rho(self) -> float | None:
        """Gaussian: the Poisson pair at twice the sensitivity, at most the Gaussian pair at shift
        2 (joint convexity); Laplace's losses are bounded."""
        if self.laplace or self._noiseless():
            return None
        return 2.0 / (self.noise * self.noise)

    def _prv(self, order: str) -> PRV:
        if self.is_trivial():
            return TRIVIAL
        q = self.sampling_rate
        if self._noiseless():
            return _blind(q, 1, True, order)
        from ..pairs import without_replacement as wr
        # the Poisson pair at twice the sensitivity: Laplace eps0 doubles, Gaussian noise halves
        noise = 2.0 * self.noise if self.laplace else 0.5 * self.noise
        mean, err = (wr.laplace_mean if self.laplace else wr.gaussian_mean)(noise, q)
        parts = [self.poisson_prv(noise, q, o) for o in ("remove", "add")]
        return wr.symmetrised(parts[0], parts[1], mean, err + max(parts[0].mean_err, parts[1].mean_err))

    def eps_delta(self) -> tuple[float, float] | None:
        """Laplace: pure DP at the largest |loss|, log(1 + q (e^{2 eps0} - 1)); Gaussian: none."""
        if not self.laplace:
            return None
        q = self.sampling_rate
        if self._noiseless():
            return (0.0, q)
        return (float(np.logaddexp(math.log(q) + 2.0 * self.noise, math.log1p(-q))), 0.0)

    def rdp(self, orders: np.ndarray) -> np.ndarray:
        """Wang, Balle, Kasiviswanathan 2019, Thm 9 (without_replacement.wbk_rdp) from the base's
        replace-one RDP: Gaussian 2 a / s^2, Laplace at eps0' = 2 eps0 (capped by 2 eps0-DP's)."""
        from ..pairs import rdp as _rdp
        from ..pairs.without_replacement import wbk_rdp
        if self._noiseless():
            return np.full(orders.shape, math.inf)
        q, p = self.sampling_rate, self.noise
        if self.laplace:
            e = 2.0 * p
            out = _rdp.at_integer_orders(orders, lambda a: wbk_rdp(
                a, q, lambda j: float(_rdp.laplace_rdp(e, np.array([float(j)]))[0]), e))
            eps1 = self.eps_delta()[0]  # type: ignore[index]
            return np.minimum(out, _rdp.rr_rdp(eps1, orders))
        return _rdp.at_integer_orders(orders, lambda a: wbk_rdp(a, q, lambda j: 2.0 * j / (p * p), math.inf))
