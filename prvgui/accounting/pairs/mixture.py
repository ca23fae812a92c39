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
* group_laplace_prv / replace_laplace_prv (mixture_laplace.py): the same with Lap(j, 1/eps0)
  in place of N(j, s^2), for a scalar query of L1 sensitivity 1 (the sampled records move it
  by at most j; the Laplace shift pair by exactly j dominates). The loss is constant for
  x <= 0 and x >= k (group), x <= -k and x >= k (replace): two atoms per order, a
  continuous part between. q = 1: the Laplace pair with eps0 k (group) or 2 k eps0 (replace).
* Renyi divergences of all four pairs (RDP bounds): mixture_rdp.py.
* q = 0: TRIVIAL. No noise (s = 0, eps0 = inf) is the pair without noise: the loss is
  log w_0 (remove) or 0 (replace) when no record of the group is sampled, +inf otherwise.
  s < 1e-6 and eps0 > 1e6 are taken as no noise (the noisy pair is a post-processing of the
  noiseless one, so this only adds privacy loss); s = inf is refused (ambiguous: the
  subsampled kind's ``noise`` property returns inf for sigma = 0).

dp-accounting 0.6.0 (read, not used): from_gaussian_mechanism(..., REPLACE_ONE) uses
mu_upper = (1-q) N(0) + q N(-1), mu_lower = (1-q) N(0) + q N(1): our k = 1 replace pair
reflected, so the same PLD. Its MixtureGaussianPrivacyLoss(sensitivities 0..k, probs w_j)
REMOVE is sum_j w_j N(-j) vs N(0) (ours reflected), ADD is N(0) vs sum_j w_j N(j) (our add).
Its Laplace mechanism has no REPLACE_ONE (LaplacePrivacyLoss raises for REPLACE).

All four likelihood ratios are nondecreasing in x (Gaussian: the log ratio is a difference
of log-sum-exps of lines with slopes j/s^2, with derivative A'(x) + A'(-x) > 0 for replace;
Laplace: derivative 2 eps0 (1 - P_x(j < x)) > 0 on (0, k)), so F_Y(t) = P(X <= x_t) with x_t
the inverse of the loss, and each tail is a sum of positive terms: cdf and sf are computed
directly, each with relative precision in its own tail. x_t, Gaussian: Newton in log space,
safeguarded by its bracket (secant or bisection when a step leaves it), started from a table;
for the group it solves the convex h(x) = log sum_{j>=1} (w_j/w_0) e^{(jx - j^2/2)/s^2}
= log(e^{t - log w_0} - 1), whose slopes lie in [1/s^2, k/s^2]; beyond the points where every
ndtr argument exceeds 41 the tails are exactly 0 and 1 in floats and x_t is not needed.
Laplace: closed form piece by piece. The weights are exact rationals rounded once.

Accuracy (test_mixture checks it against mpmath at 50 digits on the brief's grid): the
computed cdf and sf at t are within CDF_ULPS ulps (relative; the cdf right of its median:
of the part's mass) of the exact ones at a point t' with |t' - t| <= 128 u (1 + |t|), what
discretize.py allows. As a margin for parameters outside the tested grid, a point error
E = POINT_ULPS u (1 + size of the loss's coefficients: |log w_j|, k^2 / s^2) is added to
mean_err, which discretize's bias carries (E ~ 4e-13 at s = 0.5, k = 5; 4e-11 at s = 0.1, k = 10).
The means are KL divergences with non-negative integrands (subsampling.kl_integrand), by
composite Gauss-Legendre with its error estimate in mean_err.
"""
from __future__ import annotations

import math

import numpy as np
from scipy.special import log_ndtr, ndtr

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
           table: tuple[Array, Array] | None = None, v_noise: float = 0.0) -> Array:
    """x in [lo, hi] with fun(x)[0] = target (fun increasing; returns value and slope):
    Newton, with bisection whenever a step leaves the bracket, until a step is below
    2 u (|x| + x_tol + v_noise / slope) (x_tol: the loss's rounding noise over its slope, in
    units of x, where the slope is bounded below; v_noise: the noise of the loss's value, in
    ulps of 1, divided by the slope where the iterate is: a flat loss, e.g. the replace-one
    mixture near 0 at q = 1e-5, has slope 2q/s^2 and its root is only defined to v_noise u /
    slope, which moves the loss by v_noise u). ``table`` (_table) gives starting points by
    linear interpolation where it covers them."""
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
        with np.errstate(divide="ignore", over="ignore"):  # (a slope of 1e-300: any x is a root)
            small = 2 * _U * (np.abs(xi) + x_tol + (v_noise / np.abs(d) if v_noise else 0.0))
        done = (np.abs(nx - xi) <= small) | (v == ti) | (b - a <= small)
        inside = (nx > a) & (nx < b)
        x[idx] = np.where(done & ~inside, xi, np.where(inside, nx, sec))
        idx = idx[~done]
    if idx.size:  # never seen; fail closed rather than return an unconverged point
        raise ArithmeticError("the privacy loss could not be inverted to float precision")
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


#: noise above this is taken as this much (its square must stay finite: s^2 overflows beyond 1e154)
S_MAX = 1e100


def _check_gauss(s: float, q: float, k: int) -> tuple[float, float, int]:
    """s finite (inf is refused: the subsampled kind passes inf for "no noise"). s below 1e-6
    (losses beyond 10^11 nats) is taken as no noise, and s above S_MAX as S_MAX: in both the
    pair is a post-processing of the one used (the mixtures at noise s are those at s' < s with
    N(0, s^2 - s'^2) added), so this only adds privacy loss (at S_MAX, below 1e-100 nats)."""
    if isinstance(s, (int, float)) and math.isinf(s):
        raise ValueError("noise s must be finite (s = 0: no noise)")
    s = _check("noise s", s)
    return (0.0 if s < 1e-6 else min(s, S_MAX)), _check("sampling rate q", q, 0.0, 1.0), _check_k(k)


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
    v_noise = float(np.abs(lw).max()) + 0.5 * k * k / s2 + 1.0 + abs(a0)  # l's noise, in ulps of 1

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
        x[m] = _solve(loss_d, tm, np.zeros(tm.shape), hi, hi, x_tol, table, v_noise)
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
