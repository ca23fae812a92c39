"""Curves from the certified profiles: the tradeoff function and the composed PLD.

Tradeoff (f-DP; Dong, Roth, Su 2019): for one order of the pair,
T(alpha) = sup_{eps in R} max(0, 1 - delta(eps) - e^eps alpha). On a finite eps
grid eps_0 < ... < eps_m:

* lower: sup over the grid with delta replaced by its upper bound (a sup over
  a subset of valid lower bounds is a lower bound);
* upper: for eps in [eps_i, eps_{i+1}], 1 - delta(eps) - e^eps alpha <=
  1 - delta_low(eps_{i+1}) - e^{eps_i} alpha; below eps_0 the term is at most
  e^{eps_0} (as delta(eps) >= 1 - e^eps), above eps_m at most 1 - e^{eps_m} alpha.

Under add/remove adjacency the curve shown is the pointwise minimum over the two
orders (both pairs occur among neighbouring datasets).
(The epsilon-against-count curve is sweep.py.)
"""
from __future__ import annotations

import math

import numpy as np

from .profile import CertifiedProfile


def tradeoff_bounds(prof: CertifiedProfile, alpha: np.ndarray, n_eps: int = 4001):
    """(lower, estimate, upper) of beta(alpha) for one order of the pair."""
    alpha = np.asarray(alpha, dtype=float)
    top = float(min(max(abs(prof.y[0]), abs(prof.y[-1])) + 2 * prof.t + 1.0, 60.0))
    eps = np.linspace(-top, top, n_eps)
    d_low, d_est, d_up = prof.delta(eps)
    ex = np.exp(eps)
    lower = np.max(1.0 - d_up[:, None] - ex[:, None] * alpha[None, :], axis=0)
    est = np.max(1.0 - d_est[:, None] - ex[:, None] * alpha[None, :], axis=0)
    up_in = np.max(1.0 - d_low[1:, None] - ex[:-1, None] * alpha[None, :], axis=0)
    upper = np.maximum.reduce([up_in, np.full(alpha.shape, math.exp(eps[0])), 1.0 - ex[-1] * alpha])
    cap = 1.0 - alpha
    lower = np.clip(lower, 0.0, cap)
    upper = np.clip(upper, 0.0, cap)
    est = np.clip(est, lower, upper)
    return lower, est, upper


def pld_for_plot(prof: CertifiedProfile, max_points: int = 2000):
    """(loss values, density, mass at +inf) of the composed PLD, trimmed and binned."""
    r, y, h = prof.c.pmf, prof.y, prof.c.h
    cdf = np.cumsum(r)
    total = cdf[-1] if cdf.size else 0.0
    if total <= 0:
        return np.zeros(0), np.zeros(0), prof.p_inf
    i0 = int(np.searchsorted(cdf, 1e-9 * total))
    i1 = int(np.searchsorted(cdf, (1 - 1e-9) * total)) + 1
    r, y = r[i0:i1], y[i0:i1]
    b = max(1, -(-r.size // max_points))
    pad = (-r.size) % b
    mass = np.concatenate([r, np.zeros(pad)]).reshape(-1, b).sum(axis=1)
    centres = y[0] + (np.arange(mass.size) * b + 0.5 * (b - 1)) * h
    dens = mass / (b * h) * (1.0 - prof.p_inf)
    return centres, dens, prof.p_inf
