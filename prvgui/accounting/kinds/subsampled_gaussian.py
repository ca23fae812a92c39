"""The Poisson-subsampled Gaussian mechanism: one step of DP-SGD.

Each record joins the batch independently with probability q; the sum of clipped gradients
(clipping norm C) gets N(0, (sigma C)^2) noise. In units of C the base pair is
P0 = N(1, s^2), Q0 = N(0, s^2) with s = sigma / sensitivity; the two orders of the add/remove
pair differ (subsampling.py). Closed form only at q = 1 (the Gaussian). RDP at integer
orders: the binomial expansion (remove) and log-space quadrature (add), the larger of the two
(Mironov, Talwar, Zhang 2019). GDP/CLT: mu^2 = q^2 (e^{1/s^2} - 1) (Bu, Dong, Long, Su 2019).

``sampling``: 'poisson' (the above) or 'fixed_size' (each step a uniformly random batch of
exactly q n records, without replacement), which is defined under replace-one for one record
only. Poisson under replace-one and for groups of k records: a mixture of shifted Gaussians
(``under``; kinds/_mixtures.py, mixture.py); at q = 1 the Gaussian with sensitivity k Delta
(add/remove) or 2 k Delta (replace-one). Fixed-size batches: the symmetrised pair of the
Poisson add/remove pair at sensitivity 2 Delta (without_replacement.py), an upper bound that
no pair of datasets attains over several steps (``tight`` False); the realised lower bound
(``attack_pair``) is that add/remove pair itself, both orders (datasets in the module
without_replacement.py names).
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Callable

import numpy as np
from scipy.special import ndtr

from ..pairs import rdp as _rdp
from ..pairs.mixture import S_MAX
from ..pairs.prv import PRV, TRIVIAL, Continuous
from ..pairs.subsampling import (REFINED_PANELS, blind_subsample, kl_integrand, kl_pair, l0_of_t,
                                 log_mix, refined_breaks)
from .base import (NOISELESS, fixed_size_error, SampledBatches, SAMPLING, SAMPLING_RATE, Mechanism, Param,
                   Relation, Search, param, ratio)
from .gaussian import gaussian_prv

Array = np.ndarray
_LOG_SQRT2PI = 0.5 * math.log(2 * math.pi)


#: the KL integrand's rounding, relative to the mean (tests/accounting/kinds/test_sg_mean.py)
MEAN_ROUNDING = 3e-11


def subsampled_gaussian_prv(s: float, q: float, order: str) -> PRV:
    """Poisson-subsampled Gaussian (noise multiplier s, rate q), one order of the pair.

    Base pair P0 = N(1, s^2), Q0 = N(0, s^2); l0(x) = (2x - 1) / (2 s^2).
    remove: F_Y(t) = q Phi((x_t - 1)/s) + (1-q) Phi(x_t/s), x_t = s^2 l0(t) + 1/2.
    add:    Y = -l(X), X ~ Q0, so F_Y(t) = Phi(-x_{-t}/s) for t < -log(1-q).
    """
    if q == 0:
        return TRIVIAL
    if math.isinf(s) or s < NOISELESS:  # (as mixture.py: the noisy pair is a post-processing of
        return blind_subsample(q, order)  # the noiseless one, so this only adds privacy loss)
    if q == 1:
        return gaussian_prv(1.0 / s)
    s = min(s, S_MAX)  # (s^2 must stay finite; the pair at s is a post-processing of this one)
    s2 = s * s
    cut = math.log1p(-q)

    def x_of(t: Array) -> Array:
        return s2 * l0_of_t(q, t) + 0.5

    def integrand(which: str) -> Callable[[Array], Array]:
        def f(z: Array) -> Array:  # psi or phi of L at x = s z, times the N(0, 1) density
            lb = log_mix(q, (2 * s * z - 1.0) / (2 * s2))
            return kl_integrand(which, lb, -0.5 * z * z - _LOG_SQRT2PI)
        return f

    zlo, zhi = -40.0, 40.0 + 1.0 / s
    # where q e^{l0} crosses 1 - q: the loss bends there on a z-scale of s
    zkink = (1.0 + 2.0 * s2 * (math.log1p(-q) - math.log(q))) / (2.0 * s)
    if order == "remove":
        def cdf(t: Array) -> Array:
            t = np.asarray(t, dtype=float)
            with np.errstate(invalid="ignore"):
                x = x_of(t)
                v = q * ndtr((x - 1.0) / s) + (1.0 - q) * ndtr(x / s)
            return np.where(t <= cut, 0.0, v)

        def sf(t: Array) -> Array:
            t = np.asarray(t, dtype=float)
            with np.errstate(invalid="ignore"):
                x = x_of(t)
                v = q * ndtr((1.0 - x) / s) + (1.0 - q) * ndtr(-x / s)
            return np.where(t <= cut, 1.0, v)

        mean, err = kl_pair(integrand("psi"), refined_breaks(zlo, zhi, [0.0, 1.0 / s, zkink], s),
                            REFINED_PANELS)
        # (the searches' start, near the bulk of the mass: the loss at x = 0, the record not
        # drawn, when that holds most of it, else at x = 1; at a tiny q and a small s the loss
        # at x = 1 lies beyond all but q of the mass, q 1e-30 and s 0.01: at 4930 nats, and
        # every cell between it and the bulk was kept)
        centre = float(log_mix(q, np.array([(0.5 if q >= 0.5 else -0.5) / s2]))[0])
        cont = Continuous(cut, math.inf, 1.0, cdf, sf, centre, family=(_remove_family, (q, s, s2, math.log(q), cut)))
    else:
        def cdf(t: Array) -> Array:
            t = np.asarray(t, dtype=float)
            with np.errstate(invalid="ignore"):
                v = ndtr(-x_of(-t) / s)
            return np.where(t >= -cut, 1.0, v)

        def sf(t: Array) -> Array:
            t = np.asarray(t, dtype=float)
            with np.errstate(invalid="ignore"):
                v = ndtr(x_of(-t) / s)
            return np.where(t >= -cut, 0.0, v)

        mean, err = kl_pair(integrand("phi"), refined_breaks(zlo, zhi, [0.0, 1.0 / s, zkink], s),
                            REFINED_PANELS)
        centre = -float(log_mix(q, np.array([-0.5 / s2]))[0])
        cont = Continuous(-math.inf, -cut, 1.0, cdf, sf, centre, family=(_add_family, (q, s, s2, math.log(q), cut)))
    # (the integrand's own rounding: log_mix near L = 1 keeps an absolute, not a relative,
    # accuracy, so psi(L) ~ log(L)^2 / 2 there is off by a few 1e-12 of itself; measured up to
    # 7e-12 of the mean against mpmath, which the quadrature's estimate does not see)
    return PRV((), 0.0, cont, mean, err + MEAN_ROUNDING * abs(mean))


def _x_of(t: Array, q: Array, s2: Array, log_q: Array) -> Array:
    """subsampled_gaussian_prv's x_of(t), each point with its own row's q, s^2 and log q
    (math.log's): pairs.subsampling.l0_of_t's operations, element by element."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        small = np.log1p(np.expm1(t) / q)
        big = t + np.log1p(-(1.0 - q) * np.exp(-np.maximum(t, 1.0))) - log_q
    return s2 * np.where(t > 1.0, big, small) + 0.5


def _remove_family(which: str, t: Array, p: tuple[Array, ...]) -> Array:
    """The remove order's cdf or sf at each t with its own row's (q, s, s^2, log q, cut) in
    ``p`` (Continuous.family: the same values as each row's own functions)."""
    q, s, s2, log_q, cut = p
    with np.errstate(invalid="ignore"):
        x = _x_of(t, q, s2, log_q)
        if which == "cdf":
            return np.where(t <= cut, 0.0, q * ndtr((x - 1.0) / s) + (1.0 - q) * ndtr(x / s))
        return np.where(t <= cut, 1.0, q * ndtr((1.0 - x) / s) + (1.0 - q) * ndtr(-x / s))


def _add_family(which: str, t: Array, p: tuple[Array, ...]) -> Array:
    """The add order's cdf or sf, as ``_remove_family``."""
    q, s, s2, log_q, cut = p
    with np.errstate(invalid="ignore"):
        x = _x_of(-t, q, s2, log_q)
        if which == "cdf":
            return np.where(t >= -cut, 1.0, ndtr(-x / s))
        return np.where(t >= -cut, 0.0, ndtr(x / s))


@dataclass(frozen=True, slots=True)
class SubsampledGaussian(SampledBatches, Mechanism):  # type: ignore[misc, override]  # see SampledBatches
    """Gaussian mechanism on a Poisson subsample (one DP-SGD step)."""

    kind = "subsampled_gaussian"

    rdp_seconds = 0.005  # (its RDP is a quadrature at each order: about 5 ms a row)
    examples = ({"sigma": 0.8, "sampling_rate": 0.01}, {"sigma": 0.3, "sampling_rate": 0.5},
                {"sigma": 5.0, "sampling_rate": 1e-4}, {"sigma": 1.0, "sampling_rate": 0.999},
                {"sigma": 1.0, "sampling_rate": 0.05, "sampling": "fixed_size"})
    since_version = 1
    title = "Subsampled Gaussian (DP-SGD step)"
    summary = ("One DP-SGD step: each record joins the batch with probability q, and Gaussian noise "
               "of σ times the clipping norm is added.")
    menu_order = 60
    dpsgd_step = True
    symmetric = False

    sigma: float = param(Param("Noise multiplier σ", "× clipping norm",
                               "noise multiplier: noise standard deviation / clipping norm", "σ", 1.0,
                               search=Search(False, 0.05, 1e7)))
    sampling_rate: float = param(SAMPLING_RATE)
    sensitivity: float = param(Param("Sensitivity Δ", "L2 norm",
                                     "clipping norm in units of the noise scale (default 1)", "Δ", 1.0),
                               default=1.0)

    @property
    def noise(self) -> float:
        """s = sigma / sensitivity as subsampled_gaussian_prv reads it: inf for no noise (sigma 0:
        the noiseless pair), and inf without sensitivity too (a trivial row is never composed;
        read as noiseless it would only overstate the loss). Never 1 / mu: see gaussian_mu."""
        return math.inf if self.sigma == 0 or self.sensitivity == 0 else self.sigma / self.sensitivity

    def _scale(self) -> float:
        """sigma / sensitivity as a number: 0 without noise, inf without sensitivity."""
        return math.inf if self.sensitivity == 0 else self.sigma / self.sensitivity

    sampling: str = param(SAMPLING, default="poisson")

    def noise_halfwidth(self, level: float = 0.95) -> tuple[float, str]:
        """Per coordinate of the noisy gradient sum: sigma Phi^-1((1 + level) / 2), in clipping
        norms (1.96 sigma at 95%)."""
        from scipy.special import ndtri
        return self.sigma * float(ndtri(0.5 + level / 2)), "clipping norms (per coordinate of the sum)"

    def is_trivial(self) -> bool:
        return self.sampling_rate == 0 or self.sensitivity == 0

    def is_blatant(self) -> bool:
        return self.sigma == 0 and self.sampling_rate == 1 and not self.is_trivial()

    def under(self, relation: Relation) -> Mechanism:
        from ._mixtures import FixedSizePair, GaussianMixturePair, subsampled_under
        from .gaussian import Gaussian
        return subsampled_under(self, relation, lambda d: Gaussian(self.sigma, d),
                                lambda q, k, replace: GaussianMixturePair(q, k, replace, self.noise),
                                lambda q: FixedSizePair(q, self.noise, subsampled_gaussian_prv))

    def attack_pair(self, relation: Relation, variant: int = 0) -> Mechanism:
        """Fixed-size batches under replace-one: the Poisson add/remove pair at twice the
        sensitivity, realised by the datasets of without_replacement.py (either direction)."""
        from ._mixtures import fixed_size_attack
        return fixed_size_attack(self, relation, lambda: SubsampledGaussian(
            self.sigma, self.sampling_rate, 2.0 * self.sensitivity))

    def poisson_counterpart(self) -> tuple[Mechanism, int] | None:
        """Fixed-size batches: the same step with Poisson sampling at the same rate."""
        return None if self.sampling == "poisson" else (dataclasses.replace(self, sampling="poisson"), 1)

    def _prv(self, order: str) -> PRV:
        if self.sampling != "poisson":
            raise fixed_size_error()
        return subsampled_gaussian_prv(self.noise, self.sampling_rate, order)

    def loss_bounds(self, order: str = "remove") -> tuple[float, float]:
        """With noise, no mass at +infinity and no largest loss in the remove order (the loss
        log(1 - q + q e^(...)) of a Gaussian is unbounded): (0, inf), exact there and an upper
        end in the add order (whose loss stays below -log(1 - q)). Making the PRV takes about
        0.3 ms (its tail cuts)."""
        if self.sampling == "poisson" and 0 < self.noise < math.inf and not self.is_trivial():
            return 0.0, math.inf
        return Mechanism.loss_bounds(self, order)

    def gaussian_mu(self) -> float | None:
        """mu = sensitivity / sigma at rate 1: inf without noise, 0 without sensitivity (not
        1 / noise, whose inf means "no noise": mu 0 there said rho = 0 of a noiseless release)."""
        return ratio(self.sensitivity, self.sigma) if self.sampling_rate == 1 else None

    def tail_rho(self) -> float | None:
        """Each order's Renyi divergence is at most the unsampled Gaussian's (joint convexity)."""
        if self.sampling != "poisson" or self.is_trivial() or self.sigma == 0:
            return None
        return 0.5 / (self.noise * self.noise)

    def rdp(self, orders: np.ndarray) -> np.ndarray:
        q, s = self.sampling_rate, self._scale()
        c = 0.5 / (s * s) if s * s > 0 else math.inf
        if q == 1:
            return orders * c
        if c == math.inf:
            return np.full(orders.shape, math.inf)

        out = np.full(orders.shape, math.inf)
        whole = np.flatnonzero(orders == np.round(orders))
        if whole.size:  # (both orders of the pair at every integer order, each in one pass)
            out[whole] = np.maximum(_rdp.subsampled_remove_orders(orders[whole], q, lambda j: (j * j - j) * c),
                                    _rdp.subsampled_gaussian_add_orders(orders[whole], s, q))
        return out

    def gdp_mu2(self) -> float:
        q, s = self.sampling_rate, self._scale()
        u = 1 / (s * s) if s * s > 0 else math.inf
        if math.isinf(u):  # no noise: not GDP at any mu (q^2 (e^inf - 1) would be 0 * inf)
            return math.inf
        with np.errstate(over="ignore"):
            return u if q == 1 else q * q * float(np.expm1(u))
