"""PRVs of the Laplace mixture pairs (the pairs, their sources and the accuracy: mixture.py).

Base Lap(m, 1/eps0) in units of the sensitivity; w_j = Binom(j; k, q).

* group_laplace_prv: P = sum_j w_j Lap(j) vs Q = Lap(0), both orders. The loss
  l(x) = log sum_j w_j e^{eps0 (|x| - |x - j|)} is t_lo = k log(1 + q (e^-eps0 - 1)) for
  x <= 0, t_hi = k log(1 + q (e^eps0 - 1)) for x >= k, and log(C_m + D_m e^{2 eps0 x}) on
  [m, m+1] (C_m = sum_{j<=m} w_j e^{eps0 j}, D_m = sum_{j>m} w_j e^{-eps0 j}), strictly
  increasing there: inverted in closed form piece by piece. Atoms: P(X <= 0) = e^{t_lo}/2 at
  t_lo and P(X >= k) = e^{t_hi - eps0 k}/2 at t_hi ("remove"); 1/2 at -t_lo and e^{-eps0 k}/2
  at -t_hi ("add": Y = -l(X), X ~ Lap(0)). k = 1 is subsampled_laplace_prv.
* replace_laplace_prv: P = sum_j w_j Lap(j) vs Q = sum_j w_j Lap(-j); for 0 <= x <= k the
  loss is l(x) - t_lo (the denominator is e^{-eps0 x} e^{t_lo} there), and it is odd. Atoms
  at +-(t_hi - t_lo) with masses e^{t_hi - eps0 k}/2 (X >= k) and e^{t_lo - eps0 k}/2.

The tails are sums over j of w_j P(a < Lap(j) <= b), each term without cancellation (expm1).
"""
from __future__ import annotations

import math

import numpy as np
from scipy.special import logsumexp

from .mixture import _TINY_W, _check, _check_k, _chunked, _order, _point_err, binomial_weights
from .prv import PRV, TRIVIAL, Continuous, point_mass
from .subsampling import blind_subsample, kl_integrand, kl_pair, refined_breaks

Array = np.ndarray


def _lap_between(w: Array, lw: Array, mu: Array, a: Array | float, b: Array | float,
                 e: float) -> Array:
    """sum_j w_j P(a < L_j <= b), L_j ~ Lap(mu_j, 1/e), a <= b, each term without cancellation."""
    a, b = np.broadcast_arrays(np.atleast_1d(np.asarray(a, dtype=float)),
                               np.atleast_1d(np.asarray(b, dtype=float)))
    a, b = a[None, :], b[None, :]
    m = mu[:, None]
    width = -np.expm1(-e * (b - a))  # 1 - e^{-e (b - a)}
    with np.errstate(divide="ignore", invalid="ignore"):
        log_g = np.where(b <= m, -e * (m - b) + np.log(width),
                         np.where(a >= m, -e * (a - m) + np.log(width),
                                  np.log(-np.expm1(-e * np.maximum(m - a, 0.0))
                                         - np.expm1(-e * np.maximum(b - m, 0.0)))))
    log_g -= math.log(2.0)
    big = w > _TINY_W
    out = (w[big, None] * np.exp(log_g[big])).sum(axis=0)
    if not big.all():
        out = out + np.exp(lw[~big, None] + log_g[~big]).sum(axis=0)
    return out


def _laplace(e: float) -> PRV:
    """Lap(e) vs Lap(0) in units of the scale (q = 1): loss in [-e, e], F(t) = e^{(t-e)/2}/2."""
    lo_mass, mass = 0.5 * math.exp(-e), 0.5 * -math.expm1(-e)

    def cdf(t: Array) -> Array:  # (e^{(t+e)/2} - 1) e^{-e} / 2
        return lo_mass * np.expm1((np.clip(np.asarray(t, dtype=float), -e, e) + e) / 2)

    def sf(t: Array) -> Array:
        return -0.5 * np.expm1((np.clip(np.asarray(t, dtype=float), -e, e) - e) / 2)
    mean = e + math.expm1(-e) if e >= 0.5 else float(
        sum((-1) ** (n % 2) * e ** n / math.factorial(n) for n in range(2, 30)))
    return PRV(((e, 0.5), (-e, lo_mass)), 0.0, Continuous(-e, e, mass, cdf, sf, 0.0), mean,
               1e-14 * mean)


def _log_q_or_rest(q: float, e: float) -> float:
    """log(q + (1 - q) e^-e) = t_hi / k - e: log1p((1 - q) expm1(-e)) where it keeps precision,
    in log space for large e (where 1 - q rounding to 1 made it log1p(-1): q = 1e-180, e = 1e6)."""
    if e < 50.0:
        return math.log1p((1 - q) * math.expm1(-e))
    return float(np.logaddexp(math.log(q), math.log1p(-q) - e))


class _GroupLoss:
    """l(x) = log sum_j w_j e^{e (|x| - |x - j|)}: t_lo for x <= 0, t_hi for x >= k, and on
    [m, m+1] log(C_m + D_m e^{2 e x}), C_m = sum_{j<=m} w_j e^{e j}, D_m = sum_{j>m} w_j e^{-e j}."""

    def __init__(self, e: float, q: float, k: int, lw: Array) -> None:
        self.e, self.k, self.lw = e, k, lw
        j = np.arange(k + 1.0)
        self.log_c = np.array([logsumexp(lw[:m + 1] + e * j[:m + 1]) for m in range(k)])
        self.log_d = np.array([logsumexp(lw[m + 1:] - e * j[m + 1:]) for m in range(k)])
        self.t_lo = k * math.log1p(q * math.expm1(-e))  # log sum_j w_j e^{-e j}
        # log sum_j w_j e^{e j} = k log(q e^e + 1 - q); for large e in log space (the form
        # e + log1p((1 - q) expm1(-e)) met log1p(-1) when 1 - q rounds to 1: q = 1e-180, e = 1e6)
        self.t_hi = k * (math.log1p(q * math.expm1(e)) if e < 50.0
                         else float(np.logaddexp(math.log(q) + e, math.log1p(-q))))
        self.breaks = np.maximum.accumulate(np.array(  # l(m), m = 0..k (monotone despite rounding)
            [self.t_lo, *np.logaddexp(self.log_c, self.log_d + 2 * e * j[:-1])[1:], self.t_hi]))
        self.size = float(np.abs(self.log_c).max() + np.abs(self.log_d).max() + 2 * e * k)

    def __call__(self, x: Array) -> Array:
        j = np.arange(self.k + 1.0)
        return logsumexp(self.lw[:, None] + self.e * (np.abs(x) - np.abs(x - j[:, None])), axis=0)

    def x_of(self, t: Array) -> Array:
        """x in [0, k] with l(x) = t (0 at or below t_lo, k at or above t_hi)."""
        t = np.asarray(t, dtype=float)
        m = np.clip(np.searchsorted(self.breaks, t, side="right") - 1, 0, self.k - 1)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            x = (t + np.log(-np.expm1(np.minimum(self.log_c[m] - t, 0.0))) - self.log_d[m]) / (2 * self.e)
        x = np.clip(np.nan_to_num(x, nan=0.0), m, m + 1.0)
        return np.where(t <= self.t_lo, 0.0, np.where(t >= self.t_hi, float(self.k), x))


def _check_lap(eps0: float, q: float, k: int) -> tuple[float, float, int]:
    """eps0 above 1e6 is taken as no noise (inf), as s < 1e-6 for the Gaussian."""
    e = _check("eps0", eps0)
    return (math.inf if e > 1e6 else e), _check("sampling rate q", q, 0.0, 1.0), _check_k(k)


def group_laplace_prv(eps0: float, q: float, k: int, order: str) -> PRV:
    """P = sum_j w_j Lap(j, 1/eps0) vs Q = Lap(0, 1/eps0) ("remove"), or swapped ("add")."""
    e, q, k = _check_lap(eps0, q, k)
    order = _order(order)
    if q == 0 or e == 0:
        return TRIVIAL
    if math.isinf(e):
        return blind_subsample(1.0 if q == 1 else -math.expm1(k * math.log1p(-q)), order)
    if q == 1:
        return _laplace(k * e)
    w, lw = binomial_weights(q, k)
    j = np.arange(k + 1.0)
    g = _GroupLoss(e, q, k, lw)
    one, zero = np.ones(1), np.zeros(1)

    def middle(which: str) -> tuple[float, float]:  # X ~ Q = Lap(0) on (0, k)
        def f(x: Array) -> Array:
            return kl_integrand(which, g(x), math.log(0.5 * e) - e * x)
        return kl_pair(f, refined_breaks(0.0, float(k), list(j), 1.0 / e))

    which = "psi" if order == "remove" else "phi"
    half = math.log(0.5)
    consts = float(kl_integrand(which, np.array([g.t_lo]), np.array([half]))[0]
                   + kl_integrand(which, np.array([g.t_hi]), np.array([half - e * k]))[0])
    mid, err = middle(which)
    err += 1e-15 * abs(consts) + _point_err(g.size)
    mean = consts + mid
    if order == "remove":  # atoms: X <= 0 (loss t_lo) and X >= k (loss t_hi), X ~ P
        atoms = ((g.t_lo, 0.5 * math.exp(g.t_lo)),
                 (g.t_hi, 0.5 * math.exp(k * _log_q_or_rest(q, e))))
        mass = float(_lap_between(w, lw, j, 0.0, float(k), e)[0])
        cont = Continuous(g.t_lo, g.t_hi, mass,
                          _chunked(lambda t: _lap_between(w, lw, j, 0.0, g.x_of(t), e)),
                          _chunked(lambda t: _lap_between(w, lw, j, g.x_of(t), float(k), e)),
                          0.5 * (g.t_lo + g.t_hi))
    else:  # Y = -l(X), X ~ Lap(0): atoms -t_lo (X <= 0), -t_hi (X >= k)
        atoms = ((-g.t_hi, 0.5 * math.exp(-e * k)), (-g.t_lo, 0.5))
        w0, l0 = one, zero
        cont = Continuous(-g.t_hi, -g.t_lo, 0.5 * -math.expm1(-e * k),
                          _chunked(lambda t: _lap_between(w0, l0, zero, g.x_of(-t), float(k), e)),
                          _chunked(lambda t: _lap_between(w0, l0, zero, 0.0, g.x_of(-t), e)),
                          -0.5 * (g.t_lo + g.t_hi))
    return PRV(atoms, 0.0, cont, mean, err)


def replace_laplace_prv(eps0: float, q: float, k: int) -> PRV:
    """P = sum_j w_j Lap(j, 1/eps0) vs Q = sum_j w_j Lap(-j, 1/eps0) (symmetric: one order).
    For 0 <= x <= k the loss is the group loss minus t_lo; it is odd in x."""
    e, q, k = _check_lap(eps0, q, k)
    if q == 0 or e == 0:
        return TRIVIAL
    if math.isinf(e):
        if q == 1:
            return point_mass(math.inf)
        w0 = math.exp(k * math.log1p(-q))
        return PRV(((0.0, w0),), 1.0 - w0, None, 0.0, 0.0)
    if q == 1:
        return _laplace(2 * k * e)
    w, lw = binomial_weights(q, k)
    j = np.arange(k + 1.0)
    g = _GroupLoss(e, q, k, lw)
    t_max = g.t_hi - g.t_lo
    kk = float(k)

    def x_of(t: Array) -> Array:
        t = np.asarray(t, dtype=float)
        return np.copysign(g.x_of(np.abs(t) + g.t_lo), t)

    def loss(x: Array) -> Array:
        return (logsumexp(lw[:, None] - e * np.abs(x - j[:, None]), axis=0)
                - logsumexp(lw[:, None] - e * np.abs(x + j[:, None]), axis=0))

    def f(x: Array) -> Array:  # X ~ Q on (-k, k)
        lq = math.log(0.5 * e) + logsumexp(lw[:, None] - e * np.abs(x + j[:, None]), axis=0)
        return kl_integrand("psi", loss(x), lq)
    mid, err = kl_pair(f, refined_breaks(-float(k), float(k), list(j) + list(-j), 1.0 / e))
    # Q(X <= -k) = e^{t_hi - e k} / 2 (loss -t_max), Q(X >= k) = e^{t_lo - e k} / 2 (loss t_max)
    log_hi = math.log(0.5) + k * _log_q_or_rest(q, e)  # log(e^{t_hi - e k} / 2)
    log_lo = math.log(0.5) + g.t_lo - e * k
    m_hi, m_lo = math.exp(log_hi), math.exp(log_lo)
    consts = float(kl_integrand("psi", np.array([-t_max]), np.array([log_hi]))[0]
                   + kl_integrand("psi", np.array([t_max]), np.array([log_lo]))[0])
    err += 1e-15 * abs(consts) + _point_err(g.size + abs(g.t_lo))
    # under P: X >= k w.p. e^{t_hi - e k} / 2 (loss t_max), X <= -k w.p. e^{t_lo - e k} / 2
    atoms = ((-t_max, m_lo), (t_max, m_hi))
    mass = float(_lap_between(w, lw, j, -float(k), kk, e)[0])
    cont = Continuous(-t_max, t_max, mass,
                      _chunked(lambda t: _lap_between(w, lw, j, -float(k), x_of(t), e)),
                      _chunked(lambda t: _lap_between(w, lw, j, x_of(t), kk, e)), 0.0)
    return PRV(atoms, 0.0, cont, consts + mid, err)
