"""Gaussian differential privacy (GDP): the mu-GDP privacy curve and its inverse, and the
central-limit mu of a privacy loss random variable.

mu-GDP: delta(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2) (Dong, Roth, Su 2019,
Cor. 2.13; Balle, Wang 2018, Thm 8 for the Gaussian mechanism, where it is exact). CLT: a
composition of many mechanisms is close to mu-GDP with mu = 2 E[Y] / sd[Y] per run, mu^2
adding up (Dong, Roth, Su 2019, Thm 3.4): an approximation, which may under-report.
"""
from __future__ import annotations

import math
from typing import Callable

import numpy as np
from scipy.special import log_ndtr

from .prv import PRV
from .quadrature import integrate


def prv_mu2(p: PRV) -> float:
    """CLT mu^2 = 4 m^2 / v from the PRV's mean and variance (positive integrands only)."""
    if p.inf_mass > 0:
        return math.inf
    m, c = p.mean, p.cont
    v = math.fsum(w * (loc - m) * (loc - m) for loc, w in p.atoms)
    if c is not None and c.mass > 0:
        lo = c.lo if math.isfinite(c.lo) else c.lower_cut(1e-40)
        hi = c.hi if math.isfinite(c.hi) else c.upper_cut(1e-40)
        mid = min(max(m, lo), hi)  # (t - m)^2 dF integrated by parts on each side of m
        f = lambda t: np.where(t < mid, 2 * (m - t) * c.cdf(t), 2 * (t - m) * c.sf(t))  # noqa: E731
        v += (mid - m) * (mid - m) * c.mass + integrate(f, [lo, mid, hi], panels=256)[0]
    return 4 * m * m / v if v > 0 else math.inf


def log1mexp(x: np.ndarray) -> np.ndarray:
    """log(1 - e^x) for x <= 0."""
    with np.errstate(divide="ignore"):
        return np.where(x > -0.693, np.log(-np.expm1(np.minimum(x, 0))),
                        np.log1p(-np.exp(np.minimum(x, -0.693))))


def log_delta(mu: float, eps: np.ndarray | float) -> np.ndarray:
    """log(Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2)), the mu-GDP privacy curve."""
    eps = np.asarray(eps, dtype=float)
    if mu == 0 or math.isinf(mu):
        return np.full(eps.shape, -math.inf if mu == 0 else 0.0)
    la, lb = log_ndtr(-eps / mu + mu / 2), log_ndtr(-eps / mu - mu / 2)
    with np.errstate(invalid="ignore"):
        return np.where(la == -math.inf, -math.inf, la + log1mexp(np.minimum(eps + lb - la, 0)))


def epsilon(mu: float, delta: float) -> float:
    """Smallest eps >= 0 with delta_mu(eps) <= delta."""
    ld = math.log(delta)
    if mu == 0 or log_delta(mu, 0.0) <= ld:
        return 0.0
    hi = 0.5 * mu * mu + mu * math.sqrt(-2 * ld) + 1.0  # Gaussian tail bound: delta(hi) < delta
    if not math.isfinite(hi) or not log_delta(mu, hi) < ld:  # rounding hides the root
        return math.inf
    return _bisect(lambda e: float(log_delta(mu, e)) - ld, 0.0, hi)


def _bisect(f: Callable[[float], float], a: float, b: float) -> float:
    """Root of a decreasing f on [a, b] with f(a) >= 0 > f(b), to float resolution.

    (Plain bisection: importing scipy.optimize would cost a quarter of a second per CLI call.)
    """
    for _ in range(200):
        m = 0.5 * (a + b)
        if m in (a, b):
            break
        if f(m) >= 0:
            a = m
        else:
            b = m
    return b


def randomized_response_mu2(eps: float) -> float:
    """mu^2 of Y = +-eps (randomized response): mean eps tanh(eps/2), variance eps^2 / cosh(eps/2)^2."""
    with np.errstate(over="ignore"):
        sh = float(np.sinh(eps / 2))
    return 4 * sh * sh
