"""Independent reference values for the tests (closed forms; no prvgui code).

Each function states how its numbers are computed.
"""
from __future__ import annotations

import math

import numpy as np
from scipy import optimize, special, stats


def gaussian_delta(mu: float, eps: float) -> float:
    """Balle-Wang 2018: delta(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2), in log space."""
    a = special.log_ndtr(-eps / mu + mu / 2)
    b = eps + special.log_ndtr(-eps / mu - mu / 2)
    return float(math.exp(a) * -math.expm1(b - a)) if b < a else 0.0


def gaussian_epsilon(mu: float, delta: float) -> float:
    """Smallest eps >= 0 with gaussian_delta(mu, eps) <= delta (brentq to 1e-13)."""
    if gaussian_delta(mu, 0.0) <= delta:
        return 0.0
    hi = 1.0
    while gaussian_delta(mu, hi) > delta:
        hi *= 2
    return optimize.brentq(lambda e: gaussian_delta(mu, e) - delta, 0.0, hi, xtol=1e-13, rtol=1e-15)


def rr_kfold_delta(eps0: float, k: int, eps: float, delta0: float = 0.0) -> float:
    """Kairouz-Oh-Viswanath 2015 exact k-fold composition of (eps0, delta0)-DP:
    Y = eps0 (k - 2i), i ~ Binomial(k, 1/(1+e^eps0)); delta_RR(eps) = E[(1 - e^{eps - Y})_+];
    delta = 1 - (1-delta0)^k + (1-delta0)^k delta_RR."""
    i = np.arange(k + 1)
    logp = stats.binom.logpmf(i, k, 1.0 / (1.0 + math.exp(eps0)))
    y = eps0 * (k - 2 * i)
    m = y > eps
    d_rr = float(np.sum(np.exp(logp[m]) * -np.expm1(eps - y[m])))
    keep = (1 - delta0) ** k
    return 1 - keep + keep * d_rr


def rr_kfold_epsilon(eps0: float, k: int, delta: float, delta0: float = 0.0) -> float:
    f = lambda e: rr_kfold_delta(eps0, k, e, delta0) - delta  # noqa: E731
    if f(0.0) <= 0:
        return 0.0
    hi = eps0 * k + 1.0
    if f(hi) > 0:
        return math.inf
    return optimize.brentq(f, 0.0, hi, xtol=1e-12)


def laplace_delta(eps0: float, eps: float) -> float:
    """One Laplace mechanism (eps0 = sensitivity/scale): delta(eps) = 1 - e^{(eps - eps0)/2} for
    0 <= eps <= eps0, else 0 (from the PRV's CDF F(t) = e^{(t - eps0)/2} / 2)."""
    return -math.expm1((eps - eps0) / 2) if eps < eps0 else 0.0


def subsampled_gaussian_delta(sigma: float, q: float, eps: float, order: str = "remove") -> float:
    """One Poisson-subsampled Gaussian step, delta(eps) = int (p - e^eps q)_+ dx with
    P = q N(1, s^2) + (1 - q) N(0, s^2), Q = N(0, s^2) (remove) or swapped (add).
    The region where p > e^eps q is a half-line {x > x*}; closed form in Phi."""
    s = sigma
    if order == "remove":
        # q e^{l0} + 1 - q > e^eps  <=>  l0 > log((e^eps - 1 + q)/q)
        if eps <= math.log1p(-q):
            return 1.0 - math.exp(eps)
        x = s * s * math.log((math.expm1(eps) + q) / q) + 0.5
        p_mass = q * stats.norm.sf(x, 1, s) + (1 - q) * stats.norm.sf(x, 0, s)
        q_mass = stats.norm.sf(x, 0, s)
        return float(p_mass - math.exp(eps) * q_mass)
    # add: P' = N(0), Q' = mixture; p' > e^eps q'  <=>  1 > e^eps L(x)  <=>  L(x) < e^-eps
    if -eps <= math.log1p(-q):
        return 0.0
    x = s * s * math.log((math.expm1(-eps) + q) / q) + 0.5
    p_mass = stats.norm.cdf(x, 0, s)
    q_mass = q * stats.norm.cdf(x, 1, s) + (1 - q) * stats.norm.cdf(x, 0, s)
    return float(p_mass - math.exp(eps) * q_mass)
