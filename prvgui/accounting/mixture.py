"""PRVs of mixture pairs: groups of k records under Poisson subsampling, and replace-one.

Units of the sensitivity (one record shifts the output by 1); w_j = Binom(j; k, q), j = 0..k,
the chance that j of the group's k records are sampled (each independently with rate q).

Pairs (P, Q); the PRV is Y = log(dP/dQ)(X), X ~ P; the swapped order is the pair (Q, P):

* group_gaussian_prv (add/remove, group of k): P = sum_j w_j N(j, s^2), Q = N(0, s^2), both
  orders. It dominates the Poisson-subsampled Gaussian (sum query, clipping norm 1) for
  datasets that differ in k records: the sum moves by the sampled records' sum, a vector of
  norm at most j, and the vector pair is dominated by the scalar one with the norms
  (Ganesh 2024, arXiv:2401.10294; Choquette-Choo, Ganesh, Steinke, Thakurta 2023,
  arXiv:2310.15526, Cor. 4.7, which dp-accounting's MixtureOfGaussiansDpEvent implements).
  k = 1 is subsampled_gaussian_prv; q = 1 is the Gaussian with sensitivity k.
* replace_gaussian_prv (replace-one, group of k): P = sum_j w_j N(j, s^2),
  Q = sum_j w_j N(-j, s^2); k = 1 is the replace-one subsampled Gaussian pair
  (1-q) N(0) + q N(1) vs (1-q) N(0) + q N(-1) (Zhu, Dong, Wang, AISTATS 2022; Lebeda et al.
  2024; for fixed-size batches Balle, Barthe, Gaboardi 2018). The replaced records' sampled
  contributions x and x' have norm at most 1 each; reflection x -> -x maps P to Q and Q to P,
  so (Q, P) has the same PRV as (P, Q) and one order suffices. q = 1: sensitivity 2k.
* group_laplace_prv / replace_laplace_prv: the same with Lap(j, 1/eps0) in place of N(j, s^2)
  (scalar queries of L1 sensitivity 1: Laplace shifts dominate scalar shifts of norm <= j).
  The loss is constant for x <= 0 and x >= k (group), x <= -k and x >= k (replace): two atoms
  per order, a continuous part between.

dp-accounting 0.6.0 (read, not used): from_gaussian_mechanism(..., REPLACE_ONE) uses
mu_upper = (1-q) N(0) + q N(-1), mu_lower = (1-q) N(0) + q N(1): our k = 1 replace pair
reflected, so the same PLD. Its MixtureGaussianPrivacyLoss(sensitivities 0..k, probs w_j)
REMOVE is sum_j w_j N(-j) vs N(0) (ours reflected), ADD is N(0) vs sum_j w_j N(j) (our add).
Its Laplace mechanism has no REPLACE_ONE (LaplacePrivacyLoss raises for REPLACE).

All four likelihood ratios are nondecreasing in x, so F_Y(t) = P(X <= x_t) and each tail is a
sum of positive terms (cdf and sf computed directly, relative precision in both tails). x_t:
Gaussian, safeguarded Newton on the loss in log space (for the group, on the convex
h(x) = log sum_{j>=1} (w_j/w_0) e^{(jx - j^2/2)/s^2} = log(e^{t - log w_0} - 1), from above,
monotone); Laplace, closed form piece by piece. The weights are exact rationals rounded once.
Accuracy (test_mixture checks it against mpmath): the computed cdf/sf at t are within
CDF_ULPS ulps of the exact ones at a point t' with |t' - t| <= 128 u (1 + |t|) + E, E a
constant of the pair (rounding of the loss's coefficients, POINT_ULPS u times their size);
E (below 1e-11 for s >= 0.01, k <= 100) is added to mean_err, which discretize's bias carries.
The means are KL divergences with non-negative integrands (subsampling.kl_integrand).
"""
from __future__ import annotations

import math

import numpy as np
from scipy.special import log_ndtr, logsumexp, ndtr

from .prv import PRV, TRIVIAL, Continuous, point_mass
from .subsampling import blind_subsample, kl_integrand, kl_pair, refined_breaks

Array = np.ndarray
_U = 2.0 ** -53
_LOG_SQRT2PI = 0.5 * math.log(2 * math.pi)
#: the point error E is POINT_ULPS u times the size of the loss's coefficients
POINT_ULPS = 16
_CHUNK = 1 << 15
_TINY_W = 1e-300  # weights below this enter the tails in log space


# ------------------------------------------------------------------ inputs and weights
def _check(name: str, v: float, lo: float = 0.0, hi: float = math.inf) -> float:
    v = float(v)
    if not (lo <= v <= hi):  # NaN fails too
        raise ValueError(f"{name} must be in [{lo}, {hi}], got {v!r}")
    return v


def _check_k(k: int) -> int:
    if isinstance(k, bool) or int(k) != k or not 1 <= k <= 10_000:
        raise ValueError(f"group size k must be an integer in [1, 10000], got {k!r}")
    return int(k)


def binomial_weights(q: float, k: int) -> tuple[Array, Array]:
    """(w, log w): w_j = C(k, j) q^j (1-q)^(k-j) from exact integers, rounded once (~1 ulp;
    0 when it underflows, log w then from a power-of-two scaling; log w_0 = k log1p(-q) and
    log w_k = k log q directly). 0 < q < 1."""
    m, d = float(q).as_integer_ratio()  # q = m / 2^e exactly, 1 - q = (d - m) / 2^e
    e, r = d.bit_length() - 1, d - m
    pm, pr = [1], [1]
    for _ in range(k):
        pm.append(pm[-1] * m)
        pr.append(pr[-1] * r)
    w, lw = np.empty(k + 1), np.empty(k + 1)
    for j in range(k + 1):
        n = math.comb(k, j) * pm[j] * pr[k - j]
        sh = max(n.bit_length() - 64, 0)
        top = float(n >> sh)  # 64 leading bits: <= 1 ulp, then one rounding
        w[j] = math.ldexp(top, sh - e * k)
        lw[j] = math.log(w[j]) if w[j] > _TINY_W else math.log(top) + (sh - e * k) * math.log(2.0)
    # the ends may be close to 1: their logs to a few ulps relative (0 < w_j <= 1/2 in between)
    lw[0], lw[k] = k * math.log1p(-q), k * math.log(q)
    return w, lw


def _chunked(f):
    """Apply an elementwise f of a 1-d array in chunks (bounded (n, k+1) temporaries)."""
    def g(t: Array) -> Array:
        t = np.asarray(t, dtype=float)
        flat = t.ravel()
        if flat.size <= _CHUNK:
            return f(flat).reshape(t.shape)
        return np.concatenate([f(flat[i:i + _CHUNK]) for i in range(0, flat.size, _CHUNK)]
                              ).reshape(t.shape)
    return g


def _table(fun, a: float, b: float, n: int = 1025) -> tuple[Array, Array]:
    """fun's values on a grid of [a, b], for starting points of _solve."""
    xs = np.linspace(a, b, n)
    return xs, np.maximum.accumulate(fun(xs)[0])


def _solve(fun, target: Array, lo: Array, hi: Array, x: Array, x_tol: float,
           table: tuple[Array, Array] | None = None) -> Array:
    """x in [lo, hi] with fun(x)[0] = target (fun increasing; returns value and slope):
    Newton, with bisection whenever a step leaves the bracket, until a step is below
    2 u (|x| + x_tol) (x_tol: the loss's rounding noise over its slope, in units of x).
    ``table`` (_table) gives starting points by linear interpolation where it covers them."""
    x, lo, hi = x.copy(), lo.copy(), hi.copy()
    if table is not None:
        xs, vs = table
        inside = (target > vs[0]) & (target < vs[-1])
        guess = np.interp(target, vs, xs)
        x = np.where(inside & (guess > lo) & (guess < hi), guess, x)
    vlo, vhi = np.full(x.shape, -np.inf), np.full(x.shape, np.inf)
    idx = np.arange(x.size)
    for _ in range(400):
        if idx.size == 0:
            break
        xi, ti = x[idx], target[idx]
        v, d = fun(xi)
        below = v < ti
        lo[idx], vlo[idx] = np.where(below, xi, lo[idx]), np.where(below, v, vlo[idx])
        hi[idx], vhi[idx] = np.where(below, hi[idx], xi), np.where(below, vhi[idx], v)
        a, b = lo[idx], hi[idx]
        with np.errstate(all="ignore"):
            nx = xi - (v - ti) / d
            # out of the bracket: the secant through its ends, else bisection
            sec = a + (ti - vlo[idx]) * ((b - a) / (vhi[idx] - vlo[idx]))
        # (an end never evaluated: try that end itself, the step went beyond it)
        sec = np.where((sec > a) & (sec < b), sec,
                       np.where((nx >= b) & (vhi[idx] == np.inf), b,
                                np.where((nx <= a) & (vlo[idx] == -np.inf), a, 0.5 * (a + b))))
        small = 2 * _U * (np.abs(xi) + x_tol)
        done = (np.abs(nx - xi) <= small) | (v == ti) | (b - a <= small)
        inside = (nx > a) & (nx < b)
        x[idx] = np.where(done & ~inside, xi, np.where(inside, nx, sec))
        idx = idx[~done]
    return x


# ------------------------------------------------------------------ Gaussian mixtures
def _gaussian(mu: float) -> PRV:
    """Y ~ N(mu^2/2, mu^2): the Gaussian pair (closed form; q = 1)."""
    m = 0.5 * mu * mu
    cont = Continuous(-math.inf, math.inf, 1.0, lambda t: ndtr((np.asarray(t) - m) / mu),
                      lambda t: ndtr((m - np.asarray(t)) / mu), m)
    return PRV((), 0.0, cont, m, 1e-15 * m)


def _lse(lw: Array, j: Array, x: Array, s2: float) -> tuple[Array, Array]:
    """A(x) = log sum_j w_j e^{(j x - j^2/2)/s^2} and A'(x), for an array x."""
    a = lw[:, None] + (j[:, None] * x[None, :] - (0.5 * j * j)[:, None]) / s2  # (terms, points)
    m = np.max(a, axis=0)
    with np.errstate(invalid="ignore"):
        e = np.exp(a - np.where(np.isfinite(m), m, 0.0))
    tot = e.sum(axis=0)
    return m + np.log(tot), (j[:, None] * e).sum(axis=0) / (tot * s2)


def _mix_tail(w: Array, lw: Array, j: Array, x: Array, s: float, upper: bool) -> Array:
    """sum_j w_j Phi(+-(x - j)/s): P(X <= x) (upper: P(X > x)) for X ~ sum_j w_j N(j, s^2)."""
    z = (x[None, :] - j[:, None]) / s
    if upper:
        z = -z
    big = w > _TINY_W
    out = (w[big, None] * ndtr(z[big])).sum(axis=0)  # row by row: the same for any length
    if not big.all():  # tiny weights: in log space (they never dominate a tail above 1e-300)
        with np.errstate(divide="ignore"):
            out = out + np.exp(lw[~big, None] + log_ndtr(z[~big])).sum(axis=0)
    return np.minimum(out, 1.0)  # the weights' sum may round above 1


def _check_gauss(s: float, q: float, k: int) -> tuple[float, float, int]:
    """s finite (inf is refused: the subsampled kind passes inf for "no noise"). s below 1e-6
    (losses beyond 10^11 nats) is taken as no noise: the noisy pair is a post-processing of the
    noiseless one, so this only adds privacy loss."""
    if isinstance(s, (int, float)) and math.isinf(s):
        raise ValueError("noise s must be finite (s = 0: no noise)")
    s = _check("noise s", s)
    return (0.0 if s < 1e-6 else s), _check("sampling rate q", q, 0.0, 1.0), _check_k(k)


def _order(order: str) -> str:
    if order not in ("remove", "add"):
        raise ValueError(f"order must be 'remove' or 'add', got {order!r}")
    return order


def group_gaussian_prv(s: float, q: float, k: int, order: str) -> PRV:
    """P = sum_j w_j N(j, s^2) vs Q = N(0, s^2) ("remove"), or the swapped pair ("add")."""
    s, q, k = _check_gauss(s, q, k)
    order = _order(order)
    if q == 0:
        return TRIVIAL
    if s == 0:  # no noise: the outputs differ unless no record of the group is sampled
        return blind_subsample(1.0 if q == 1 else -math.expm1(k * math.log1p(-q)), order)
    if q == 1:
        return _gaussian(k / s)
    s2, w, lw = s * s, *binomial_weights(q, k)
    j = np.arange(k + 1.0)
    t0 = float(lw[0])  # k log(1-q): the loss's infimum
    c, b = lw[1:] - t0 - 0.5 * j[1:] ** 2 / s2, j[1:] / s2
    lk = math.log(k)
    x_noise = float(np.abs(c).max()) + 1.0  # h's rounding noise over its slope, in s^2

    def h(x: Array) -> tuple[Array, Array]:  # convex, slope in [1/s^2, k/s^2]
        a = c[:, None] + b[:, None] * x[None, :]
        m = a.max(axis=0)
        e = np.exp(a - m)
        tot = e.sum(axis=0)
        return m + np.log(tot), (b[:, None] * e).sum(axis=0) / tot

    def loss(x: Array) -> Array:
        return _lse(lw, j, x, s2)[0]
    table = _table(h, -40.0 * s - 1.0, k + 40.0 * s + 1.0)
    x_sat = (-41.0 * s - 1.0, k + 41.0 * s + 1.0)
    r_sat = tuple(float(v) for v in h(np.array(x_sat))[0])

    def x_of(t: Array) -> Array:
        """x_t with l(x_t) = t, for t > t0 (r = log(e^{t - t0} - 1) = h(x_t))."""
        d = t - t0
        with np.errstate(divide="ignore", over="ignore"):
            r = np.where(d > 30.0, d + np.log1p(-np.exp(-np.maximum(d, 30.0))),
                         np.log(np.expm1(np.minimum(d, 30.0))))
        # beyond +-x_sat every ndtr argument is beyond +-41: the tails are 0 and 1 in floats
        x = np.where(r >= r_sat[1], x_sat[1], x_sat[0])
        ok = (r > r_sat[0]) & (r < r_sat[1])
        rr = r[ok]
        hi = np.min((rr[:, None] - c[None, :]) / b[None, :], axis=1)  # h(hi) >= r
        lo = np.min((rr[:, None] - lk - c[None, :]) / b[None, :], axis=1)  # h(lo) <= r
        pad = 1e-9 * (np.abs(hi) + np.abs(lo) + s2)
        x[ok] = _solve(h, rr, lo - pad, hi + pad, hi + pad, s2 * x_noise, table)
        return x

    def tail(upper_of_x: bool, t: Array) -> Array:
        return _mix_tail(w, lw, j, x_of(t), s, upper_of_x)

    # mean: KL with a non-negative integrand over x = s z, z ~ N(0, 1) under Q
    def integrand(which: str):
        def f(z: Array) -> Array:
            return kl_integrand(which, loss(s * z), -0.5 * z * z - _LOG_SQRT2PI)
        return f
    kinks = [0.0, *(j / s), *((np.log(k) - c) / b / s)]  # where the loss bends
    breaks = refined_breaks(-40.0, 40.0 + k / s, kinks, s)
    mean, err = kl_pair(integrand("psi" if order == "remove" else "phi"), breaks)
    err += _point_err(np.abs(c).max() + k * k / s2 + abs(t0))
    if order == "remove":
        def cdf(t: Array) -> Array:
            t = np.asarray(t, dtype=float)
            out = np.zeros(t.shape)
            m = t > t0
            out[m] = tail(False, t[m])
            return out

        def sf(t: Array) -> Array:
            t = np.asarray(t, dtype=float)
            out = np.ones(t.shape)
            m = t > t0
            out[m] = tail(True, t[m])
            return out
        cont = Continuous(t0, math.inf, 1.0, _chunked(cdf), _chunked(sf),
                          float(loss(np.array([k * q]))[0]))
    else:  # Y = -l(X), X ~ N(0, s^2): F(t) = P(X >= x_{-t}), support below -t0
        def cdf(t: Array) -> Array:
            t = np.asarray(t, dtype=float)
            out = np.ones(t.shape)
            m = t < -t0
            out[m] = ndtr(-x_of(-t[m]) / s)
            return out

        def sf(t: Array) -> Array:
            t = np.asarray(t, dtype=float)
            out = np.zeros(t.shape)
            m = t < -t0
            out[m] = ndtr(x_of(-t[m]) / s)
            return out
        cont = Continuous(-math.inf, -t0, 1.0, _chunked(cdf), _chunked(sf),
                          -float(loss(np.array([0.0]))[0]))
    return PRV((), 0.0, cont, mean, err)


def _point_err(size: float) -> float:
    """E: the computed cdf/sf are exact at a point within E (+ discretize's 64 ulps (1 + |t|))."""
    return POINT_ULPS * _U * (1.0 + size)


def replace_gaussian_prv(s: float, q: float, k: int) -> PRV:
    """P = sum_j w_j N(j, s^2) vs Q = sum_j w_j N(-j, s^2) (symmetric: one order)."""
    s, q, k = _check_gauss(s, q, k)
    if q == 0:
        return TRIVIAL
    if s == 0:  # no noise: only "no record sampled" (output 0) is common to both
        if q == 1:
            return point_mass(math.inf)
        w0 = math.exp(k * math.log1p(-q))
        return PRV(((0.0, w0),), 1.0 - w0, None, 0.0, 0.0)
    if q == 1:
        return _gaussian(2 * k / s)
    s2, w, lw = s * s, *binomial_weights(q, k)
    j = np.arange(k + 1.0)
    a0 = float(_lse(lw, j, np.zeros(1), s2)[0][0])  # A(0)
    x_tol = s2 * (float(np.abs(lw).max()) + 0.5 * k * k / s2 + 1.0)  # l's noise over its slope

    def loss_d(x: Array) -> tuple[Array, Array]:  # l(x) = A(x) - A(-x), odd, increasing
        (ap, dp), (am, dm) = _lse(lw, j, x, s2), _lse(lw, j, -x, s2)
        return ap - am, dp + dm

    table = _table(loss_d, 0.0, k + 40.0 * s + 1.0)

    x_sat = k + 41.0 * s + 1.0  # beyond it every ndtr argument is beyond +-41
    t_sat = float(loss_d(np.array([x_sat]))[0][0])

    def x_of(t: Array) -> Array:
        at = np.abs(t)
        x = np.where(at >= t_sat, x_sat, 0.0)
        m = (at > 0) & (at < t_sat)
        tm = at[m]
        # l(x) >= A(x) - A(0) >= lw_j + (j x - j^2/2)/s^2 - A(0) for x >= 0
        hi = np.min(s2 * (tm[:, None] + a0 - lw[None, 1:]) / j[None, 1:] + 0.5 * j[None, 1:], axis=1)
        hi = np.maximum(hi, 0.0) * (1 + 1e-9) + 1e-300
        x[m] = _solve(loss_d, tm, np.zeros(tm.shape), hi, hi, x_tol, table)
        return np.copysign(x, t)

    def cdf(t: Array) -> Array:
        return _mix_tail(w, lw, j, x_of(t), s, False)

    def sf(t: Array) -> Array:
        return _mix_tail(w, lw, j, x_of(t), s, True)

    def f(z: Array) -> Array:  # q(x) = phi_s(x) e^{A(-x)}; x = s z
        lp, lq = _lse(lw, j, s * z, s2)[0], _lse(lw, j, -s * z, s2)[0]
        return kl_integrand("psi", lp - lq, lq - 0.5 * z * z - _LOG_SQRT2PI)
    kinks = [0.0, *(j / s), *(-j / s)]
    mean, err = kl_pair(f, refined_breaks(-40.0 - k / s, 40.0 + k / s, kinks, s))
    err += _point_err(np.abs(lw).max() + 2 * k * k / s2 + abs(a0))
    centre = float(loss_d(np.array([k * q]))[0][0])
    cont = Continuous(-math.inf, math.inf, 1.0, _chunked(cdf), _chunked(sf), centre)
    return PRV((), 0.0, cont, mean, err)


# ------------------------------------------------------------------ Laplace mixtures
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


class _GroupLoss:
    """l(x) = log sum_j w_j e^{e (|x| - |x - j|)}: t_lo for x <= 0, t_hi for x >= k, and on
    [m, m+1] log(C_m + D_m e^{2 e x}), C_m = sum_{j<=m} w_j e^{e j}, D_m = sum_{j>m} w_j e^{-e j}."""

    def __init__(self, e: float, q: float, k: int, lw: Array) -> None:
        self.e, self.k, self.lw = e, k, lw
        j = np.arange(k + 1.0)
        self.log_c = np.array([logsumexp(lw[:m + 1] + e * j[:m + 1]) for m in range(k)])
        self.log_d = np.array([logsumexp(lw[m + 1:] - e * j[m + 1:]) for m in range(k)])
        self.t_lo = k * math.log1p(q * math.expm1(-e))  # log sum_j w_j e^{-e j}
        self.t_hi = k * (math.log1p(q * math.expm1(e)) if e < 50.0  # log sum_j w_j e^{e j}
                         else e + math.log1p((1 - q) * math.expm1(-e)))
        self.breaks = np.array([self.t_lo, *np.logaddexp(self.log_c, self.log_d + 2 * e * j[:-1])[1:],
                                self.t_hi])
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
                 (g.t_hi, 0.5 * math.exp(k * math.log1p((1 - q) * math.expm1(-e)))))
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
    log_hi = math.log(0.5) + k * math.log1p((1 - q) * math.expm1(-e))  # log(e^{t_hi - e k} / 2)
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
