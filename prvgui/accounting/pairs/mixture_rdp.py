"""Renyi DP of the mixture pairs of mixture.py and mixture_laplace.py, as upper bounds at
integer orders a >= 2 (``mixture_rdp``).

A dominating pair's Renyi divergence bounds the mechanism's RDP (data processing), so
D_a(P || Q) = log I_a / (a - 1), I_a = int p^a q^(1-a), for the pair of each order is an RDP
bound; for add/remove the kind takes the larger of "remove" and "add".

Both P and Q are mixtures with the same weights, P = sum_j w_j B(m_j), Q = sum_j w_j B(n_j)
(B a Gaussian or Laplace shift: group m_j = j, n_j = 0; replace m_j = j, n_j = -j; "add"
swaps them). (p, q) -> p^a q^(1-a) is jointly convex, so pointwise
p^a q^(1-a) <= sum_j w_j B(m_j)^a B(n_j)^(1-a), which gives

* the closed-form bound I_a <= sum_j w_j e^{(a-1) D_a(B(m_j) || B(n_j))} (exact at q = 1), and
* rigorous tail bounds for the quadrature (Gaussian: each term is e^{a(a-1)d^2/(2s^2)} times
  the N(a m_j - (a-1) n_j, s^2) density).

The quadrature is composite 16-point Gauss-Legendre in log space with the error estimate of
rdp.py (difference to the rule with half the panels), panels of width 1/2 over the root of
the largest curvature of log(p^a q^(1-a)); Laplace pairs are integrated between the integer
kinks, the half-lines beyond them exactly (the loss is constant there). Where the quadrature
would need more than MAX_PANELS panels the closed-form bound is used; Laplace pairs are also
capped by the RDP of eps'-DP (eps' = the largest |loss|, rdp.rr_rdp). Rounding goes up
(rdp.lse_up; for the long quadrature sums the same bound with max |term| in place of the
weighted mean). As in rdp.py the quadrature's error is an estimate, not a proof; everything
else (tails, closed forms, caps) is a bound. Non-integer orders and orders below 2 get inf.
Components whose weight underflows are kept (in log space): they dominate at large orders.
"""
from __future__ import annotations

import math

import numpy as np
from scipy.special import log_ndtr

from .mixture import _check, _check_k, binomial_weights
from .quadrature import GL_W, GL_X, lse_up
from .rdp import rr_rdp

Array = np.ndarray
MAX_PANELS = 40_000
_LOG_SQRT2PI = 0.5 * math.log(2 * math.pi)
_U = 2.0 ** -53


def mixture_rdp(pair: str, param: float, q: float, k: int, orders: Array, *,
                laplace: bool = False) -> Array:
    """Upper bounds on D_a(P || Q) at ``orders`` (inf at non-integer orders and below 2).

    pair: "remove" or "add" (the two orders of the group-of-k add/remove pair) or "replace"
    (replace-one with a group of k). Gaussian noise (param = s, noise sd / sensitivity,
    0 = no noise), or with ``laplace`` Laplace noise (param = eps0 = sensitivity / scale,
    inf = no noise).
    """
    orders = np.asarray(orders, dtype=float)
    if pair not in ("remove", "add", "replace"):
        raise ValueError(f"pair must be 'remove', 'add' or 'replace', got {pair!r}")
    if not laplace and isinstance(param, (int, float)) and math.isinf(param):
        raise ValueError("noise s must be finite (s = 0: no noise)")
    p, q, k = _check("noise parameter", param), _check("sampling rate q", q, 0.0, 1.0), _check_k(k)
    out = np.full(orders.shape, math.inf)
    sel = np.flatnonzero((orders == np.round(orders)) & (orders >= 2))
    a = orders[sel]
    if q == 0 or (laplace and p == 0):
        out[sel] = 0.0
        return out
    if (not laplace and p == 0) or math.isinf(p) or a.size == 0:
        return out  # no noise: not RDP
    if q == 1:
        lw, jj = np.zeros(1), np.array([float(k)])
    else:  # every component, however small its weight (log w is finite; w may underflow)
        lw, jj = binomial_weights(q, k)[1], np.arange(k + 1.0)
    m, n = {"remove": (jj, 0 * jj), "add": (0 * jj, jj), "replace": (jj, -jj)}[pair]
    out[sel] = (_laplace if laplace else _gaussian)(p, lw, m, n, a)
    if laplace:  # eps'-DP with eps' the largest |loss|
        out[sel] = np.minimum(out[sel], rr_rdp(_lap_max_loss(p, lw, m, n), a))
    return out


def _lse(t: Array, axis: int = 0) -> Array:
    """log sum exp along ``axis`` (terms with the largest first)."""
    m = np.max(t, axis=axis, keepdims=True)
    with np.errstate(invalid="ignore"):
        tot = np.exp(t - np.where(np.isfinite(m), m, 0.0)).sum(axis=axis)
    return np.squeeze(m, axis=axis) + np.log(tot)


def _lse_up(t: Array) -> float:
    """log sum exp of a flat array plus a bound on its rounding: that of rdp.lse_up, with the
    weighted mean of |t| replaced by its maximum (one pass less over a long array)."""
    m = float(np.max(t))
    if not math.isfinite(m):
        return m
    val = m + math.log(float(np.exp(t - m).sum()))
    return val + 4 * _U * (math.log2(t.size) + 2 + float(np.max(np.abs(t))) + abs(val))


def _log_integrals(lp, lq, breaks: Array, h: float, a: Array, lo: Array, hi: Array
                   ) -> tuple[Array, Array, Array]:
    """For each order a_i: log int e^{a lp + (1-a) lq} over the panels (at most h wide, between
    consecutive breaks) that meet [lo_i, hi_i], plus the error estimate (the rule on panels
    twice as wide); and the ends of those panels. lp and lq are evaluated once for all orders."""
    per = np.maximum(np.ceil(np.diff(breaks) / (2 * h)), 1).astype(int)  # coarse panels
    edges = np.concatenate([np.linspace(x0, x1, p + 1)[:-1] for x0, x1, p in
                            zip(breaks[:-1], breaks[1:], per)] + [breaks[-1:]])
    fine_edges = np.empty(2 * edges.size - 1)
    fine_edges[::2], fine_edges[1::2] = edges, 0.5 * (edges[:-1] + edges[1:])
    rules = []
    for e in (fine_edges, edges):
        half = 0.5 * np.diff(e)
        x = ((e[:-1] + half)[:, None] + half[:, None] * GL_X).ravel()
        rules.append((lp(x).reshape(-1, 16), lq(x).reshape(-1, 16), np.log(half[:, None] * GL_W)))
    out, left, right = np.empty(a.shape), np.empty(a.shape), np.empty(a.shape)
    for i, ai in enumerate(a):
        c0 = max(int(np.searchsorted(edges, lo[i], side="right")) - 1, 0)
        c1 = min(int(np.searchsorted(edges, hi[i], side="left")), edges.size - 1)
        left[i], right[i] = edges[c0], edges[c1]
        fine, coarse = (_lse_up((ai * u[sl] + (1 - ai) * v[sl] + lwt[sl]).ravel())
                        for (u, v, lwt), sl in zip(rules, (slice(2 * c0, 2 * c1), slice(c0, c1))))
        if fine == coarse:
            out[i] = fine
        else:
            diff = max(fine, coarse) + math.log(-math.expm1(-abs(fine - coarse)))
            out[i] = float(np.logaddexp(fine, diff))
    return out, left, right


def _feasible(lo: Array, hi: Array, h: Array) -> Array:
    """The orders whose quadrature fits: the shared grid (the finest h over the union of the
    ranges) has at most MAX_PANELS panels; the most demanding orders are left out until it does."""
    ok = (hi - lo) / h <= MAX_PANELS
    while ok.any() and (hi[ok].max() - lo[ok].min()) / h[ok].min() > MAX_PANELS:
        ok[np.flatnonzero(ok)[np.argmax(((hi - lo) / h)[ok])]] = False
    return ok


def _gaussian(s: float, lw: Array, m: Array, n: Array, a: Array) -> Array:
    """D_a for P = sum_j w_j N(m_j, s^2), Q = sum_j w_j N(n_j, s^2), at the orders a."""
    s2 = s * s
    ac = a[:, None]
    g = lw + ac * (ac - 1) * (m - n) ** 2 / (2 * s2)  # log w_j + (a-1) D_a(N(m_j) || N(n_j))
    jensen = lse_up(g, axis=1)
    if m.size == 1:
        return jensen / (a - 1)
    c = ac * m - (ac - 1) * n  # centre of the j-th pointwise bound
    reach = s * np.sqrt(2 * np.maximum(g + 50.0, 0.0)) + 1.0
    lo, hi = np.min(c - reach, axis=1), np.max(c + reach, axis=1)
    vp, vq = (np.ptp(m) / 2) ** 2, (np.ptp(n) / 2) ** 2  # largest posterior variances of m, n
    h = 0.5 / np.sqrt(1 / s2 + np.maximum(a * vp, (a - 1) * vq) / s2 ** 2)
    ok = _feasible(lo, hi, h)
    out = jensen.copy()
    if ok.any():
        lo_g, hi_g = float(lo[ok].min()), float(hi[ok].max())
        lwc, mc, nc = lw[:, None], m[:, None], n[:, None]

        def mix(loc):
            return lambda x: (_lse(lwc - (x - loc) ** 2 / (2 * s2))
                              - math.log(s) - _LOG_SQRT2PI)
        mid, left, right = _log_integrals(mix(mc), mix(nc), np.array([lo_g, hi_g]), float(h[ok].min()),
                                          a[ok], lo[ok], hi[ok])
        cs, gs = c[ok], g[ok]
        tails = np.concatenate([gs + log_ndtr((left[:, None] - cs) / s),
                                gs + log_ndtr((cs - right[:, None]) / s)], axis=1)
        total = lse_up(np.concatenate([mid[:, None], tails], axis=1), axis=1)
        out[ok] = np.minimum(total, jensen[ok])
    return out / (a - 1)


def _lap_log_pdf(lw: Array, loc: Array, e: float, x: Array) -> Array:
    return math.log(0.5 * e) + _lse(lw[:, None] - e * np.abs(x - loc[:, None]))


def _lap_max_loss(e: float, lw: Array, m: Array, n: Array) -> float:
    """The largest |log p/q|: attained where the loss is constant (beyond all the locations)."""
    ends = np.array([min(m.min(), n.min()), max(m.max(), n.max())])
    return float(np.max(np.abs(_lap_log_pdf(lw, m, e, ends) - _lap_log_pdf(lw, n, e, ends))))


def _laplace(e: float, lw: Array, m: Array, n: Array, a: Array) -> Array:
    """D_a for P = sum_j w_j Lap(m_j, 1/e), Q = sum_j w_j Lap(n_j, 1/e), at the orders a."""
    ac, d = a[:, None], e * np.abs(m - n)  # (a-1) D_a(Lap(m_j) || Lap(n_j)): Mironov 2017
    with np.errstate(divide="ignore"):
        pair = np.logaddexp(np.log(ac / (2 * ac - 1)) + (ac - 1) * d,
                            np.log((ac - 1) / (2 * ac - 1)) - ac * d)
    jensen = lse_up(lw + pair, axis=1)
    if m.size == 1:
        return jensen / (a - 1)
    lo, hi = float(min(m.min(), n.min())), float(max(m.max(), n.max()))
    # beyond [lo, hi] the loss l is constant: int_R p^a q^(1-a) = e^{a l} Q(R), Q(R) exact
    ends = np.array([lo, hi])
    loss = _lap_log_pdf(lw, m, e, ends) - _lap_log_pdf(lw, n, e, ends)
    q_lo = float(lse_up(lw - e * np.maximum(n - lo, 0.0) - math.log(2)))
    q_hi = float(lse_up(lw - e * np.maximum(hi - n, 0.0) - math.log(2)))
    h = np.minimum(1 / 16, 1 / (e * a))
    ok = _feasible(np.full(a.shape, lo), np.full(a.shape, hi), h)
    out = jensen.copy()
    if ok.any():
        mid = _log_integrals(lambda x: _lap_log_pdf(lw, m, e, x), lambda x: _lap_log_pdf(lw, n, e, x),
                             np.arange(lo, hi + 0.5), float(h[ok].min()), a[ok],
                             np.full(ok.sum(), lo), np.full(ok.sum(), hi))[0]
        total = lse_up(np.stack([mid, a[ok] * loss[0] + q_lo, a[ok] * loss[1] + q_hi], axis=1), axis=1)
        out[ok] = np.minimum(total, jensen[ok])
    return out / (a - 1)
