"""Fixed-size batches (sampling without replacement) under replace-one: the certified pair.

Each step draws a uniformly random batch of exactly b of the n records (q = b / n) and runs a
base mechanism on it; neighbouring datasets differ in one replaced record (docs/method.md,
"Fixed-size batches").

Why Poisson's replace-one pair is wrong here. With the target's index i in the batch the
batch holds b - 1 others; without it, b others: the rest of the batch depends on whether the
target was drawn. Every other clipped gradient at +C, the target at -C in D and +C in D':
D' always sums to b C, D to (b - 2) C with probability q, so the outputs are exactly
(1 - q) N(0, s^2) + q N(-2C, s^2) against N(0, s^2) - the Poisson add/remove pair of the
base mechanism at twice the sensitivity, which Poisson's symmetric replace-one mixture
under-reports (one step, sigma = C, q = 0.01, delta 1e-5: 3.03 against 0.22).

The pair. Let (P, Q) be the base mechanism's replace-one pair (the shift by 2C; symmetric:
reflection swaps P and Q) and M = q P + (1 - q) Q. Each step's pair (M(D), M(D')) is then
dominated in the tradeoff sense by C_q(f) = conv(min(f_q, f_q^{-1})), f_q the tradeoff of
(M, Q) (Dong, Roth, Su, "Gaussian differential privacy", JRSS-B 2022, Thm 4.2, subsampling
m out of n under substitution). Its privacy profile is max(delta_R, delta_A) at every
epsilon, R = (M, Q) the "remove" order and A = (Q, M) the "add" order. Since the replaced
record's gradients under D and D' may swap roles from step to step (they depend on the
model, which depends on earlier outputs), a step may be R-like or A-like for the same pair of
datasets: composing R and A separately and taking the larger (what add/remove allows) is not
a bound here. An adaptive adversary that picks R or A at each step from the losses seen so
far beats both (sigma 2, q 0.05, 100 steps, delta 1e-5: R composed 3.40, adaptive 3.45;
tests/accounting/pairs/test_fixed_size.py). C_q(f) composed is certified (f-DP composition holds adaptively).

The PRV of C_q(f). For epsilon >= 0 delta_R >= delta_A (the symmetric base makes f_q lie
below f_q^{-1} left of their fixed point: Dong, Roth, Su, the proof of Thm 4.2; checked on a
grid in the tests), so the symmetrised profile is delta_R on epsilon >= 0 and delta_A below.
Its PRV is R's law on (0, inf], A's law on (-inf, 0) and an atom at 0 of mass
1 - P(Y_R > 0) - P(Y_A < 0) (the tradeoff's segment of slope -1); E[e^-Y] = 1 holds, and
delta(eps) = E[(1 - e^(eps - Y))_+] gives delta_R for eps >= 0 and, by
delta_A(eps) = 1 - e^eps + e^eps delta_R(-eps), delta_A below. One PRV, one order.

Its mean: E[Y; Y > 0] under M minus E[L; L > 0] under Q, L = log(dM/dQ):
q * integral over {L > 0} of L (p - q0), a non-negative integrand (no cancellation).

RDP (comparison accountant): Wang, Balle, Kasiviswanathan, "Subsampled Renyi differential
privacy and analytical moments accountant" (AISTATS 2019), Thm 9, sampling without
replacement under replace-one, at integer orders from the base mechanism's replace-one RDP.
"""
from __future__ import annotations

import math
from typing import Callable, cast

import numpy as np
from scipy.special import gammaln, logsumexp

from .prv import PRV, Continuous
from .subsampling import kl_pair, log_mix, refined_breaks

Array = np.ndarray
_LOG_SQRT2PI = 0.5 * math.log(2 * math.pi)


def symmetrised(remove: PRV, add: PRV, mean: float, mean_err: float) -> PRV:
    """The PRV of conv(min(f, f^-1)) from the two orders of a pair (see the module): the remove
    order's law above 0, the add order's below, and the rest of the mass as an atom at 0."""
    rc, ac = remove.cont, add.cont
    zero = np.array([0.0])
    r_pos = float(rc.sf(zero)[0]) if rc is not None and rc.hi > 0 else 0.0
    a_neg = float(ac.cdf(zero)[0]) if ac is not None and ac.lo < 0 else 0.0
    atoms = [(loc, m) for loc, m in remove.atoms if loc > 0 and m > 0]
    atoms += [(loc, m) for loc, m in add.atoms if loc < 0 and m > 0]
    r_atoms = math.fsum(m for loc, m in remove.atoms if loc > 0)
    a_atoms = math.fsum(m for loc, m in add.atoms if loc < 0)
    m0 = 1.0 - remove.inf_mass - r_pos - r_atoms - a_neg - a_atoms
    if m0 < -1e-12:
        raise ArithmeticError(f"the symmetrised pair has negative mass {m0:.3g} at 0")
    if m0 > 0:
        atoms.append((0.0, m0))
    atoms.sort()
    mass = r_pos + a_neg
    if mass <= 0:
        return PRV(tuple(atoms), remove.inf_mass, None, mean, mean_err)
    r_base = rc.mass - r_pos if rc is not None else 0.0  # the remove part's mass at or below 0
    # used only where r_pos > 0 (so rc is not None) or a_neg > 0 (so ac is not None)
    r_cont, a_cont = cast(Continuous, rc), cast(Continuous, ac)

    def cdf(t: Array) -> Array:
        t = np.asarray(t, dtype=float)
        neg = a_cont.cdf(np.minimum(t, 0.0)) if a_neg > 0 else np.zeros(t.shape)
        pos = r_cont.cdf(np.maximum(t, 0.0)) - r_base if r_pos > 0 else np.zeros(t.shape)
        return np.where(t < 0, neg, a_neg + pos)

    def sf(t: Array) -> Array:
        t = np.asarray(t, dtype=float)
        pos = r_cont.sf(np.maximum(t, 0.0)) if r_pos > 0 else np.zeros(t.shape)
        neg = a_cont.sf(np.minimum(t, 0.0)) - (a_cont.mass - a_neg) if a_neg > 0 else np.zeros(t.shape)
        return np.where(t >= 0, pos, r_pos + neg)

    lo = a_cont.lo if a_neg > 0 else 0.0
    hi = r_cont.hi if r_pos > 0 else 0.0
    cont = Continuous(lo, hi, mass, cdf, sf, 0.0 if lo < 0 < hi else 0.5 * (lo + hi))
    return PRV(tuple(atoms), remove.inf_mass, cont, mean, mean_err)


def _positive_part(f: Callable[[Array], Array], breaks: list[float]) -> tuple[float, float]:
    val, err = kl_pair(f, breaks)
    return val, err + 1e-15 * abs(val)


def gaussian_mean(s: float, q: float) -> tuple[float, float]:
    """Mean (and its error) of the symmetrised pair of the subsampled Gaussian with shift 1 and
    noise s: q * int_{z > 1/(2s)} L(z) (e^{l0(z)} - 1) phi(z) dz, l0 = z/s - 1/(2 s^2),
    L = log(1 - q + q e^{l0}), in log space (both factors positive there)."""
    z0 = 0.5 / s

    def f(z: Array) -> Array:
        l0 = np.maximum(z / s - 0.5 / (s * s), 1e-300)
        lL = np.log(np.maximum(log_mix(q, l0), 1e-320))
        lE = np.where(l0 < 30, np.log(np.maximum(np.expm1(np.minimum(l0, 30.0)), 1e-320)), l0)
        return np.exp(lL + lE - 0.5 * z * z - _LOG_SQRT2PI)

    top = z0 + 40.0 + 1.0 / s
    val, err = _positive_part(f, refined_breaks(z0, top, [z0, 1.0 / s, z0 + 1.0], min(s, 1.0)))
    return q * val, q * err


def laplace_mean(e: float, q: float) -> tuple[float, float]:
    """Mean of the symmetrised pair of the subsampled Laplace with shift 1 and eps0 = e:
    q * (L(e) (1 - e^-e) / 2 + int_{1/2}^{1} L(l0(x)) (p(x) - q0(x)) dx), l0 = e (2x - 1),
    p(x) - q0(x) = (e/2)(e^{-e(1-x)} - e^{-e x}) > 0 on (1/2, 1)."""
    top = float(log_mix(q, np.array([e]))[0])
    const = top * 0.5 * -math.expm1(-e)

    def f(x: Array) -> Array:
        lL = log_mix(q, e * (2 * x - 1))
        diff = 0.5 * e * np.exp(-e * (1 - x)) * -np.expm1(-e * (2 * x - 1))
        return lL * diff

    val, err = _positive_part(f, refined_breaks(0.5, 1.0, [0.5, 1.0], min(0.5, 1.0 / e)))
    return q * (const + val), q * err + 1e-15 * q * const


def _log_binom(a: int) -> Array:
    j = np.arange(a + 1)
    return gammaln(a + 1.0) - gammaln(j + 1.0) - gammaln(a - j + 1.0)


def wbk_rdp(a: int, q: float, base: Callable[[int], float], eps_inf: float) -> float:
    """Wang, Balle, Kasiviswanathan 2019, Thm 9: the RDP at integer order a >= 2 of a mechanism
    run on a fixed-size batch (rate q), from its replace-one RDP ``base(j)`` and its largest
    loss ``eps_inf`` (inf for Gaussian noise):
    (1/(a-1)) log(1 + q^2 C(a,2) min(4 (e^{eps(2)} - 1), e^{eps(2)} min(2, (e^{eps_inf} - 1)^2))
                  + sum_{j=3}^a q^j C(a,j) e^{(j-1) eps(j)} min(2, (e^{eps_inf} - 1)^j)).
    Rounded up (a few ulps on the log)."""
    if q == 0:
        return 0.0
    lq = math.log(q)
    lb = _log_binom(a)

    def log_cap(j: int) -> float:  # log min(2, (e^eps_inf - 1)^j)
        if math.isinf(eps_inf):
            return math.log(2.0)
        return min(math.log(2.0), j * math.log(math.expm1(eps_inf))) if eps_inf > 0 else -math.inf

    e2 = base(2)
    second = min(math.log(4.0) + (math.log(math.expm1(e2)) if e2 > 0 else -math.inf),
                 e2 + log_cap(2))
    terms = [0.0, 2 * lq + lb[2] + second]
    terms += [j * lq + lb[j] + (j - 1) * base(j) + log_cap(j) for j in range(3, a + 1)]
    total = float(logsumexp(terms))
    return total * (1 + 1e-12) / (a - 1)
