"""Renyi differential privacy (RDP) of the standard mechanisms, as upper bounds.

Mironov 2017 (Renyi DP, Table II: Gaussian, Laplace, randomized response); Poisson-subsampled
mechanisms at integer orders by the binomial expansion of Mironov, Talwar, Zhang 2019 (arXiv
1908.10530, Sec. 3.3), the "add" order by log-space quadrature. eps-DP is eps^2/2-zCDP (Bun,
Steinke 2016, Prop. 3.3). Conversion to (eps, delta): Canonne, Kamath, Steinke 2020 (arXiv
2004.00010, Prop. 12); Balle et al. 2020 (arXiv 1905.09982). Rounding errors are always added,
never subtracted. The kinds (kinds/) call these; comparisons.py composes and converts.
"""
from __future__ import annotations

import math
from functools import lru_cache
from typing import Callable

import numpy as np
from scipy.special import expit

from .quadrature import GL_W, GL_X, log_integrate, lse_up  # noqa: F401 - lse_up: the kinds' RDP sums use it too

#: Renyi orders; subsampled mechanisms use the integer ones only.
ORDERS = np.array([1.01, 1.05, 1.1, 1.25, 1.5, 1.75, *np.arange(2.0, 10.5, 0.5), *range(11, 65),
                   80, 96, 128, 192, 256, 512, 1024], dtype=float)
ORDERS.setflags(write=False)
_ULP, _MAX_PANELS = 4.5e-16, 40_000
#: the subsampled Gaussian's quadrature covers its integrand's peak +- this (in noise units)
_HALF_RANGE = 12.0
#: ... on panels H_SCALE / sqrt(kappa) wide, kappa the largest curvature of the log-integrand
H_SCALE = 2.0


@lru_cache(maxsize=len(ORDERS))  # room for every integer order: a sweep over them cycles
def _log_binom(a: int) -> np.ndarray:
    return np.array([math.log(math.comb(a, j)) for j in range(a + 1)])


def rr_rdp(e: float, a: np.ndarray) -> np.ndarray:
    """Randomized response (worst eps-DP pair): log(cosh((a - 1/2) e) / cosh(e / 2)) / (a - 1)."""
    def logcosh(x: np.ndarray) -> np.ndarray:  # x >= 0
        return np.where(x < 1, np.log1p(2 * np.sinh(np.minimum(x, 1) / 2) ** 2),
                        x + np.log1p(np.exp(-2 * x)) - math.log(2))
    l1, l2 = logcosh((a - 0.5) * e), logcosh(np.array(0.5 * e))
    return np.minimum((l1 - l2 + 4 * _ULP * (l1 + l2)) / (a - 1), np.minimum(e, 0.5 * a * e * e))


def laplace_rdp(e: float, a: np.ndarray) -> np.ndarray:
    t = np.stack([np.log(a / (2 * a - 1)) + (a - 1) * e, np.log((a - 1) / (2 * a - 1)) - a * e])
    return np.minimum(lse_up(t, axis=0) / (a - 1), rr_rdp(e, a))


def subsampled_remove(a: int, q: float, log_moment: np.ndarray) -> float:
    """D_a(q P0 + (1-q) Q0 || Q0) by the binomial expansion; log_moment[j] = log E_Q0 (P0/Q0)^j
    (``subsampled_remove_orders`` at one order)."""
    return float(subsampled_remove_orders(np.array([a]), q, lambda j: log_moment[j])[0])


def subsampled_remove_orders(orders: np.ndarray, q: float, log_moment: Callable[[np.ndarray], np.ndarray]
                             ) -> np.ndarray:
    """``subsampled_remove`` at each integer order >= 2 at once, ``log_moment(j)`` for the
    array j = 0, 1, ...: orders of alike size share one array padded with -inf terms (lse_up
    sums each row pairwise; its rounding allowance counts the padded length)."""
    a = np.asarray(orders, dtype=np.int64)
    out = np.empty(a.shape)
    l1q, lq = math.log1p(-q), math.log(q)
    bucket = np.frexp((a + 1).astype(float))[1]
    for b in np.unique(bucket):
        rows = np.flatnonzero(bucket == b)
        j = np.arange(int(a[rows].max()) + 1)
        terms = np.full((rows.size, j.size), -np.inf)
        for r, ai in enumerate(a[rows]):
            terms[r, :ai + 1] = _log_binom(int(ai))
        with np.errstate(invalid="ignore"):  # (-inf padding plus finite terms stays -inf)
            terms += (a[rows, None] - j[None, :]) * l1q + j[None, :] * lq + log_moment(j)[None, :]
        out[rows] = lse_up(terms, axis=1) / (a[rows] - 1)
    return out


def subsampled_gaussian_add(a: int, s: float, q: float) -> float:
    """D_a(Q0 || q P0 + (1-q) Q0), P0 = N(1, s^2), Q0 = N(0, s^2), by quadrature in z = x / s
    (``subsampled_gaussian_add_orders`` at one order)."""
    return float(subsampled_gaussian_add_orders(np.array([a]), s, q)[0])


def subsampled_gaussian_add_orders(orders: np.ndarray, s: float, q: float) -> np.ndarray:
    """``subsampled_gaussian_add`` at each integer order >= 2, all orders at once: the peaks by
    one bisection over the array, the quadratures of orders with alike panel counts stacked (a
    row of 70 orders in a handful of numpy passes, where one order at a time spent most of its
    time calling numpy)."""
    a = np.asarray(orders, dtype=float)
    lq, l1q, c = math.log(q), math.log1p(-q), 0.5 / (s * s)
    # the integrand is 1-strongly log-concave: bisect for its peak (each order until float
    # resolution stops its interval; only lo is used)
    lo, hi = -(a - 1) / s, np.zeros(a.shape)
    live = np.ones(a.shape, dtype=bool)
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        live &= (mid != lo) & (mid != hi)
        if not live.any():
            break
        left = mid + (a - 1) / s * expit(mid / s - c + lq - l1q) < 0
        lo = np.where(live & left, mid, lo)
        hi = np.where(live & ~left, mid, hi)
    kappa = 1 + (a - 1) * c / 2  # the largest curvature of the log-integrand
    h = H_SCALE / np.sqrt(kappa)
    out = np.empty(a.shape)
    # x^(1-a) is convex: E (q L + 1-q)^(1-a) <= q E L^(1-a) + 1-q
    wide = 2 * _HALF_RANGE / h > _MAX_PANELS
    out[wide] = np.logaddexp(lq + a[wide] * (a[wide] - 1) * c, l1q) / (a[wide] - 1)
    # -log f has curvature between 1 and kappa and its minimum at lo: beyond lo +- L the
    # integral is at most f(lo) 2 e^{-L^2/2} / L, and over lo +- kappa^-1/2 it is at least
    # f(lo) 2 kappa^-1/2 e^{-1/2}; their ratio bounds the relative cut
    cut = math.exp(0.5 - 0.5 * _HALF_RANGE ** 2) * np.sqrt(kappa) / _HALF_RANGE
    panels = 2 * np.maximum(1, np.ceil(2 * _HALF_RANGE / (2 * h))).astype(np.int64)
    rules = []
    for m in (panels, panels // 2):  # (log_integrate's two rules: n panels and n / 2)
        rules.append(_stacked_log_integrals(m, lo - _HALF_RANGE, a - 1, s, c, lq, l1q, ~wide))
    fine, coarse = rules
    done = ~wide
    out[done] = (fine[done] + np.abs(fine[done] - coarse[done]) + cut[done]) / (a[done] - 1)
    return out


def _stacked_log_integrals(m: np.ndarray, start: np.ndarray, am1: np.ndarray, s: float, c: float,
                           lq: float, l1q: float, use: np.ndarray) -> np.ndarray:
    """log of int over [start, start + 2 _HALF_RANGE] of the add order's integrand with exponent
    (a - 1) = ``am1``, on m panels of 16-point Gauss-Legendre, for each order in ``use``; orders
    whose panel counts lie within a factor 2 share one array padded with -inf terms (lse_up
    sums each row pairwise, and its rounding allowance counts the padded length)."""
    out = np.full(m.shape, np.nan)
    idx = np.flatnonzero(use)
    if not idx.size:
        return out
    bucket = np.frexp(m[idx].astype(float))[1]  # (a power of two per bucket)
    for b in np.unique(bucket):
        rows = idx[bucket == b]
        mb = m[rows]
        half = (2 * _HALF_RANGE) / (2 * mb)
        k = np.arange(int(mb.max()))
        z = (start[rows, None, None] + half[:, None, None] * (2 * k[None, :, None] + 1)
             + half[:, None, None] * GL_X[None, None, :])
        t = (-0.5 * z * z - 0.5 * math.log(2 * math.pi)
             - am1[rows, None, None] * np.logaddexp(lq + z / s - c, l1q)
             + np.log(half[:, None, None] * GL_W[None, None, :]))
        t[k[None, :] >= mb[:, None]] = -np.inf
        out[rows] = lse_up(t.reshape(rows.size, -1), axis=1)
    return out


def subsampled_laplace_add(a: int, e: float, q: float) -> float:
    """D_a(Q0 || q P0 + (1-q) Q0) for Laplace P0 = Lap(1, 1/e), Q0 = Lap(0, 1/e)."""
    lq, l1q, h = math.log(q), math.log1p(-q), min(1 / 16, 2 / (e * (2 * a - 1)))
    if not h * _MAX_PANELS >= 1:  # (too many panels; h underflows to 0 at e near 1e306)
        return math.inf
    mid = log_integrate(lambda x: math.log(e / 2) - e * x + (1 - a) * np.logaddexp(lq + e * (2 * x - 1), l1q),
                    0.0, 1.0, h)  # x ~ Q0 on [0, 1]; constant loss for x <= 0 and x >= 1:
    ends = [math.log(0.5) + (1 - a) * np.logaddexp(lq - e, l1q),
            math.log(0.5) - e + (1 - a) * np.logaddexp(lq + e, l1q)]
    return float(lse_up(np.array([*ends, mid]))) / (a - 1)


def at_integer_orders(orders: np.ndarray, fn: Callable[[int], float]) -> np.ndarray:
    """``fn(a)`` at the integer orders a, inf at the others (the binomial expansions of the
    subsampled mechanisms need integer orders)."""
    out = np.full(orders.shape, math.inf)
    for i in np.flatnonzero(orders == np.round(orders)):
        out[i] = fn(int(orders[i]))
    return out
