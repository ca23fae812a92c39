"""The Poisson-subsampled Laplace mechanism.

Each record joins the sample independently with probability q; the query (L1 sensitivity
Delta) gets Laplace(b) noise. In units of Delta the base pair is P0 = Lap(1, 1/eps0),
Q0 = Lap(0, 1/eps0), eps0 = Delta / b; the loss l0(x) = eps0 (|x| - |x - 1|) is constant
outside [0, 1], which gives each order two atoms. The two orders differ (subsampling.py).
It is eps'-DP with eps' = log(1 + q (e^eps0 - 1)) (amplification by subsampling). RDP at
integer orders: binomial expansion (remove) and quadrature (add), capped by eps'-DP's.

``sampling`` and the pairs under replace-one and for groups: as for the subsampled Gaussian
(``under``; kinds/_mixtures.py, mixture.py, without_replacement.py), with Laplace components.
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from ..pairs import rdp as _rdp
from ..pairs.prv import PRV, TRIVIAL, Continuous, point_mass
from ..pairs.subsampling import blind_subsample, kl_integrand, kl_pair, l0_of_t, log_mix, refined_breaks
from .base import (BLATANT_LOSS, fixed_size_error, SampledBatches, L1_SENSITIVITY, LAPLACE_SCALE, SAMPLING, SAMPLING_RATE,
                   Mechanism, Relation, param, ratio)
from .laplace import laplace_prv

Array = np.ndarray


def subsampled_laplace_prv(eps0: float, q: float, order: str) -> PRV:
    """Poisson-subsampled Laplace (eps0 = sensitivity/scale, rate q), one order of the pair.

    In units of the sensitivity: P0 = Lap(1, 1/eps0), Q0 = Lap(0, 1/eps0),
    l0(x) = eps0 (|x| - |x - 1|) in [-eps0, eps0]; atoms where l0 is constant.
    """
    if q == 0 or eps0 == 0:
        return TRIVIAL
    if q == 1:  # (the Laplace mechanism itself, read as its kind reads it: laplace.py)
        return laplace_prv(eps0) if eps0 <= BLATANT_LOSS else point_mass(math.inf)
    if not eps0 <= BLATANT_LOSS:  # (losses past base.BLATANT_LOSS read as +inf, as the Laplace kind's:
        return blind_subsample(q, order)  # the noiseless pair, of which the noisy one is a post-processing)
    e = eps0
    t_minus = math.log1p(q * math.expm1(-e))
    t_plus = float(np.logaddexp(math.log(q) + e, math.log1p(-q)))  # no overflow for huge e
    em = math.exp(-e)

    def x_of(t: Array) -> Array:  # in (0, 1) for t in (t_minus, t_plus); 0 below, 1 above
        x = (l0_of_t(q, t) / e + 1.0) / 2.0
        return np.clip(np.nan_to_num(x, nan=0.0), 0.0, 1.0)

    # KL integrals over X ~ Q0: constant pieces plus the middle segment
    def middle(which: str) -> tuple[float, float]:
        def g(x: Array) -> Array:
            lb = log_mix(q, e * (2 * x - 1))
            return kl_integrand(which, lb, math.log(0.5 * e) - e * x)
        return kl_pair(g, refined_breaks(0.0, 1.0, [0.0, 0.5, 1.0], 1.0 / e))

    if order == "remove":
        m_lo = 0.5 * q * em + 0.5 * (1.0 - q)
        m_hi = 0.5 * q + 0.5 * (1.0 - q) * em

        def cdf(t: Array) -> Array:
            x = x_of(t)
            ex = e * x  # q/2 (e^{e (x-1)} - e^{-e}) without cancellation or overflow
            head_p0 = np.where(ex < 1.0, em * np.expm1(np.minimum(ex, 1.0)), np.exp(e * (x - 1.0)) - em)
            return 0.5 * q * head_p0 + 0.5 * (1.0 - q) * -np.expm1(-ex)

        def sf(t: Array) -> Array:
            x = x_of(t)
            u = e * (1.0 - x)  # (1-q)/2 (e^{-e x} - e^{-e}) without overflow or cancellation
            tail_q0 = np.where(u < 1.0, em * np.expm1(np.minimum(u, 1.0)), np.exp(-e * x) - em)
            return -0.5 * q * np.expm1(e * (x - 1.0)) + 0.5 * (1.0 - q) * tail_q0

        mid, err = middle("psi")
        consts = _constant_pieces("psi", t_minus, t_plus, e)
        atoms = ((t_minus, m_lo), (t_plus, m_hi))
        cont = Continuous(t_minus, t_plus, 0.5 * -math.expm1(-e), cdf, sf,
                          0.5 * (t_minus + t_plus))
    else:
        def cdf(t: Array) -> Array:  # (e^{-e x} - e^{-e}) / 2 without cancellation
            x = x_of(-np.asarray(t, dtype=float))
            return -0.5 * np.exp(-e * x) * np.expm1(-e * (1.0 - x))

        def sf(t: Array) -> Array:
            x = x_of(-np.asarray(t, dtype=float))
            return -0.5 * np.expm1(-e * x)

        mid, err = middle("phi")
        consts = _constant_pieces("phi", t_minus, t_plus, e)
        atoms = ((-t_plus, 0.5 * em), (-t_minus, 0.5))
        cont = Continuous(-t_plus, -t_minus, 0.5 * -math.expm1(-e), cdf, sf,
                          -0.5 * (t_minus + t_plus))
    return PRV(atoms, 0.0, cont, float(consts) + mid, err + 1e-15 * abs(consts))


def _constant_pieces(which: str, t_minus: float, t_plus: float, e: float) -> float:
    """KL contributions of the two half-lines where the subsampled Laplace loss is constant:
    Q0(x <= 0) = 1/2 with log L = t_minus, Q0(x >= 1) = e^-e / 2 with log L = t_plus."""
    half = math.log(0.5)
    return float(kl_integrand(which, np.array([t_minus]), np.array([half]))[0]
                 + kl_integrand(which, np.array([t_plus]), np.array([half - e]))[0])


@dataclass(frozen=True, slots=True)
class SubsampledLaplace(SampledBatches, Mechanism):  # type: ignore[misc, override]  # see SampledBatches
    """Laplace mechanism on a Poisson subsample."""

    kind = "subsampled_laplace"

    rdp_seconds = 0.025  # (its RDP is a quadrature at each order: about 25 ms)
    examples = ({"scale": 0.3, "sampling_rate": 0.03}, {"scale": 2.0, "sampling_rate": 0.5},
                {"scale": 1.0, "sampling_rate": 0.05, "sampling": "fixed_size"})
    since_version = 1
    title = "Subsampled Laplace"
    summary = "Laplace noise of scale b on a Poisson subsample: each record is used with probability q."
    menu_order = 70
    symmetric = False

    scale: float = param(LAPLACE_SCALE)
    sampling_rate: float = param(SAMPLING_RATE)
    sensitivity: float = param(L1_SENSITIVITY, default=1.0)

    sampling: str = param(SAMPLING, default="poisson")

    @property
    def eps0(self) -> float:
        return ratio(self.sensitivity, self.scale)

    def noise_halfwidth(self, level: float = 0.95) -> tuple[float, str]:
        """P(|X| > t) = e^{-t/b}: t = b log(1 / (1 - level)), 3.0 b at 95%."""
        return self.scale * math.log(1.0 / (1.0 - level)), "query units"

    def is_trivial(self) -> bool:
        return self.sampling_rate == 0 or self.eps0 == 0

    def is_blatant(self) -> bool:
        """Every record sampled and a largest loss eps0 above BLATANT_LOSS (as the Laplace
        kind's): the loss is taken as +infinity."""
        return self.sampling_rate == 1 and not self.eps0 <= BLATANT_LOSS

    def under(self, relation: Relation) -> Mechanism:
        from ._mixtures import FixedSizePair, LaplaceMixturePair, subsampled_under
        from .laplace import Laplace
        return subsampled_under(self, relation, lambda d: Laplace(self.scale, d),
                                lambda q, k, replace: LaplaceMixturePair(q, k, replace, self.eps0),
                                lambda q: FixedSizePair(q, self.eps0, subsampled_laplace_prv, laplace=True))

    def attack_pair(self, relation: Relation, variant: int = 0) -> Mechanism:
        """Fixed-size batches under replace-one: the Poisson add/remove pair at twice the
        sensitivity, realised by the datasets of without_replacement.py (either direction)."""
        from ._mixtures import fixed_size_attack
        return fixed_size_attack(self, relation, lambda: SubsampledLaplace(
            self.scale, self.sampling_rate, 2.0 * self.sensitivity))

    def poisson_counterpart(self) -> tuple[Mechanism, int] | None:
        """Fixed-size batches: the same step with Poisson sampling at the same rate."""
        return None if self.sampling == "poisson" else (dataclasses.replace(self, sampling="poisson"), 1)

    def _prv(self, order: str) -> PRV:
        if self.sampling != "poisson":
            raise fixed_size_error()
        return subsampled_laplace_prv(self.eps0, self.sampling_rate, order)

    def eps_delta(self) -> tuple[float, float]:
        """Amplification by subsampling of the eps0-DP Laplace mechanism."""
        q, e = self.sampling_rate, self.eps0
        if math.isinf(e):  # no noise: the sampled record is revealed
            return (0.0, q)
        if q == 0:
            return (0.0, 0.0)
        return (float(np.logaddexp(math.log(q) + e, math.log1p(-q))) if q < 1 else e, 0.0)

    def rdp(self, orders: np.ndarray) -> np.ndarray:
        e, q = self.eps0, self.sampling_rate
        if q == 1:
            return _rdp.laplace_rdp(e, orders)
        if not math.isfinite(e):
            return np.full(orders.shape, math.inf)

        def at(k: int) -> float:
            j, r = np.arange(k + 1.0), 2 * np.arange(k + 1.0) - 1  # log E_Q0 (P0/Q0)^j, Table II
            with np.errstate(divide="ignore"):  # j = 0, 1: log 0 = -inf terms drop out
                lm = np.logaddexp(np.log(j / r) + (j - 1) * e, np.log((j - 1) / r) - j * e)
            return max(_rdp.subsampled_remove(k, q, lm), _rdp.subsampled_laplace_add(k, e, q))
        # eps'-DP in both orders caps it
        return np.minimum(_rdp.at_integer_orders(orders, at), _rdp.rr_rdp(self.eps_delta()[0], orders))
