"""Older accountants shown beside the certified PRV accountant, each labelled.

* RDP / moments accountant, a *bound*: Mironov 2017 (Renyi DP, Table II: Gaussian, Laplace,
  randomized response); Poisson-subsampled mechanisms at integer orders by the binomial
  expansion of Mironov, Talwar, Zhang 2019 (arXiv 1908.10530, Sec. 3.3). Both orders of the
  neighbouring pair are computed (the "add" order by log-space quadrature) and the larger is
  used. eps-DP is eps^2/2-zCDP (Bun, Steinke 2016, Prop. 3.3). Conversion to (eps, delta):
  Canonne, Kamath, Steinke 2020 (arXiv 2004.00010, Prop. 12); Balle et al. 2020 (arXiv
  1905.09982). Rounding errors are always added, never subtracted.
* GDP / CLT, an *approximation* (may under-report): Dong, Roth, Su 2019, Thm 3.4 (moment
  matching of the privacy loss, mu = 2 E[Y] / sd[Y]); Bu, Dong, Long, Su 2019 for DP-SGD.
  *Exact* when every row is a plain Gaussian (Balle, Wang 2018, Thm 8).
* Basic and advanced composition, *bounds*: Dwork, Rothblum, Vadhan 2010, Thm III.3;
  heterogeneous by the same Azuma argument (Dwork, Roth 2014, Thm 3.20).
* Optimal composition of one homogeneous (eps0, delta0)-DP row, *exact*: Kairouz, Oh,
  Viswanath 2015, Thm 3.3, via the binomial privacy loss Y = eps0 (k - 2i).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable, Sequence

import numpy as np

from .mechanisms import MAX_COUNT, Mechanism, Row
from .prv import PRV, integrate
from .special import expit, gammaln, log_ndtr, logsumexp, ndtr, ndtri

__all__ = ["Comparison", "compare_epsilon", "compare_delta", "rdp_delta_curve", "gdp_mu",
           "gdp_delta_curve", "gdp_tradeoff", "epsilon_vs_count", "ORDERS"]

#: Renyi orders; subsampled mechanisms use the integer ones only.
ORDERS = np.array([1.01, 1.05, 1.1, 1.25, 1.5, 1.75, *np.arange(2.0, 10.5, 0.5), *range(11, 65),
                   80, 96, 128, 192, 256, 512, 1024], dtype=float)
ORDERS.setflags(write=False)
_LABELS = {"rdp": ("RDP (moments accountant)", "bound"), "gdp": ("GDP / CLT", "approximation"),
           "basic": ("Basic composition", "bound"), "advanced": ("Advanced composition", "bound"),
           "exact": ("Exact (KOV optimal composition)", "exact")}
_PURE = ("pure_dp", "randomized_response", "approx_dp")
_GL_X, _GL_W = np.polynomial.legendre.leggauss(16)
_ULP, _MAX_PANELS = 4.5e-16, 40_000


@dataclass(frozen=True)
class Comparison:
    """One accountant's answer.

    Attributes
    ----------
    name, label : str
        Key (``rdp``, ``gdp``, ``basic``, ``advanced``, ``exact``) and display name.
    kind : str
        ``"bound"``, ``"approximation"`` or ``"exact"``.
    value : float or None
        Epsilon (or delta); None when the accountant does not apply.
    note : str
        Why it does not apply, or what was assumed; ``""`` otherwise.
    """

    name: str
    label: str
    kind: str
    value: float | None
    note: str

    def as_dict(self) -> dict:
        """JSON-friendly dict; None stays None and infinity stays ``float('inf')``."""
        return {"name": self.name, "label": self.label, "kind": self.kind,
                "value": None if self.value is None else float(self.value), "note": self.note}


def _number(name: str, x: object, lo: float, hi: float, strict: bool = False) -> float:
    """A finite real in [lo, hi] ((lo, hi) if strict); NaN and infinities fail."""
    ok = not isinstance(x, bool) and isinstance(x, (int, float, np.integer, np.floating))
    v = float(x) if ok else math.nan
    if not math.isfinite(v) or not (lo < v < hi if strict else lo <= v <= hi):
        rng = f"in ({lo}, {hi})" if strict else f"in [{lo}, {hi}]" if hi < math.inf else f">= {lo}"
        raise ValueError(f"{name} must be a finite number {rng}, got {x!r}")
    return v


def _array(name: str, x: object, lo: float = 0.0, hi: float = math.inf) -> np.ndarray:
    try:
        a = np.asarray(x, dtype=float)
    except (TypeError, ValueError):
        a = np.array([math.nan])
    if a.ndim > 1 or not np.all(np.isfinite(a)) or np.any(a < lo) or np.any(a > hi):
        raise ValueError(f"{name} must be a 1-d array of finite numbers in [{lo}, {hi}], got {x!r}")
    return np.atleast_1d(a)


def _scan(rows: Sequence[Row]) -> tuple[list[Row], bool]:
    """Validate; return the rows that leak something and whether one of them is blatant."""
    for i, row in enumerate(rows):
        if not isinstance(row, Row):
            raise ValueError(f"rows[{i}] must be a Row, got {row!r}")
    active = [r for r in rows if r.count > 0 and not r.mechanism.is_trivial()]
    return active, any(r.mechanism.is_blatant() for r in active)


def _eps_delta(mech: Mechanism) -> tuple[float, float] | None:
    """mech.eps_delta(); subsampled Laplace's log(1 + q (e^eps0 - 1)) kept finite for large eps0."""
    if mech.kind == "subsampled_laplace" and math.isfinite(e := mech.eps0) and e > 1:
        return float(np.logaddexp(math.log(mech.sampling_rate) + e, math.log1p(-mech.sampling_rate))), 0.0
    return mech.eps_delta()


# ------------------------------------------------------------------ RDP (a bound)
def _lse_up(t: np.ndarray, axis: int = -1) -> np.ndarray:
    """logsumexp plus a few ulps of the terms' size, so that rounding never lowers the RDP."""
    m = logsumexp(t, axis=axis)
    with np.errstate(invalid="ignore", over="ignore"):
        w = np.exp(t - np.expand_dims(m, axis))
        size = np.sum(np.where(w > 0, w * np.abs(t), 0.0), axis=axis)
    return m + 4 * _ULP * (np.log2(t.shape[axis]) + 2 + size + np.abs(m))


def _log_quad(logf: Callable[[np.ndarray], np.ndarray], a: float, b: float, h: float) -> float:
    """log of int_a^b e^logf: composite 16-point Gauss-Legendre plus its error estimate."""
    n, out = 2 * max(1, math.ceil((b - a) / (2 * h))), []
    for m in (n, n // 2):
        half = (b - a) / (2 * m)
        x = (a + half * (2 * np.arange(m) + 1))[:, None] + half * _GL_X
        out.append(float(_lse_up(logf(x.ravel()) + np.log(half * np.tile(_GL_W, m)))))
    return out[0] + abs(out[0] - out[1])


@lru_cache(maxsize=64)
def _log_binom(a: int) -> np.ndarray:
    return np.array([math.log(math.comb(a, j)) for j in range(a + 1)])


def _rr_rdp(e: float, a: np.ndarray) -> np.ndarray:
    """Randomized response (worst eps-DP pair): log(cosh((a - 1/2) e) / cosh(e / 2)) / (a - 1)."""
    def logcosh(x: np.ndarray) -> np.ndarray:  # x >= 0
        return np.where(x < 1, np.log1p(2 * np.sinh(np.minimum(x, 1) / 2) ** 2),
                        x + np.log1p(np.exp(-2 * x)) - math.log(2))
    l1, l2 = logcosh((a - 0.5) * e), logcosh(np.array(0.5 * e))
    return np.minimum((l1 - l2 + 4 * _ULP * (l1 + l2)) / (a - 1), np.minimum(e, 0.5 * a * e * e))


def _laplace_rdp(e: float, a: np.ndarray) -> np.ndarray:
    t = np.stack([np.log(a / (2 * a - 1)) + (a - 1) * e, np.log((a - 1) / (2 * a - 1)) - a * e])
    return np.minimum(_lse_up(t, axis=0) / (a - 1), _rr_rdp(e, a))


def _remove(a: int, q: float, log_moment: np.ndarray) -> float:
    """D_a(q P0 + (1-q) Q0 || Q0) by the binomial expansion; log_moment[j] = log E_Q0 (P0/Q0)^j."""
    j = np.arange(a + 1)
    return float(_lse_up(_log_binom(a) + (a - j) * math.log1p(-q) + j * math.log(q) + log_moment)) / (a - 1)


def _sigmoid(x: float) -> float:
    """1 / (1 + e^-x) for one float (the array version costs ten times more per call)."""
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


def _sg_add(a: int, s: float, q: float) -> float:
    """D_a(Q0 || q P0 + (1-q) Q0), P0 = N(1, s^2), Q0 = N(0, s^2), by quadrature in z = x / s."""
    lq, l1q, c = math.log(q), math.log1p(-q), 0.5 / (s * s)
    lo, hi = -(a - 1) / s, 0.0  # the integrand is 1-strongly log-concave: bisect for its peak
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if mid + (a - 1) / s * _sigmoid(mid / s - c + lq - l1q) < 0 else (lo, mid)
    h = 0.5 / math.sqrt(1 + (a - 1) * c / 2)  # resolves the largest curvature of the log
    if 80 / h > _MAX_PANELS:  # x^(1-a) is convex: E (q L + 1-q)^(1-a) <= q E L^(1-a) + 1-q
        return float(np.logaddexp(lq + a * (a - 1) * c, l1q)) / (a - 1)
    return _log_quad(lambda z: -0.5 * z * z - 0.5 * math.log(2 * math.pi)
                     - (a - 1) * np.logaddexp(lq + z / s - c, l1q), lo - 40, lo + 40, h) / (a - 1)


def _sl_add(a: int, e: float, q: float) -> float:
    """D_a(Q0 || q P0 + (1-q) Q0) for Laplace P0 = Lap(1, 1/e), Q0 = Lap(0, 1/e)."""
    lq, l1q, h = math.log(q), math.log1p(-q), min(1 / 16, 2 / (e * (2 * a - 1)))
    if 1 / h > _MAX_PANELS:
        return math.inf
    mid = _log_quad(lambda x: math.log(e / 2) - e * x + (1 - a) * np.logaddexp(lq + e * (2 * x - 1), l1q),
                    0.0, 1.0, h)  # x ~ Q0 on [0, 1]; constant loss for x <= 0 and x >= 1:
    ends = [math.log(0.5) + (1 - a) * np.logaddexp(lq - e, l1q),
            math.log(0.5) - e + (1 - a) * np.logaddexp(lq + e, l1q)]
    return float(_lse_up(np.array([*ends, mid]))) / (a - 1)


@lru_cache(maxsize=256)
@np.errstate(all="ignore")
def _row_rdp(mech: Mechanism) -> np.ndarray | None:
    """RDP of one run at ORDERS (inf where not computed); None if RDP does not apply."""
    a, kind, out = ORDERS, mech.kind, np.full(ORDERS.shape, math.inf)
    ints = [(i, int(a[i])) for i in np.flatnonzero(a == np.round(a))]
    if kind == "gaussian":
        out = 0.5 * a * mech.mu * mech.mu
    elif kind == "laplace":
        out = _laplace_rdp(mech.eps0, a)
    elif kind in _PURE:
        if mech.eps_delta()[1] > 0:
            return None
        out = _rr_rdp(mech.epsilon, a)
    elif kind == "subsampled_gaussian":
        q, s = mech.sampling_rate, mech.sigma / mech.sensitivity
        c = 0.5 / (s * s) if s * s > 0 else math.inf
        if q == 1:
            out = a * c
        elif c < math.inf:
            for i, k in ints:
                j = np.arange(k + 1)
                out[i] = max(_remove(k, q, (j * j - j) * c), _sg_add(k, s, q))
    elif kind == "subsampled_laplace":
        e, q = mech.eps0, mech.sampling_rate
        if q == 1:
            out = _laplace_rdp(e, a)
        elif math.isfinite(e):
            for i, k in ints:
                j, r = np.arange(k + 1.0), 2 * np.arange(k + 1.0) - 1  # log E_Q0 (P0/Q0)^j, Table II
                lm = np.logaddexp(np.log(j / r) + (j - 1) * e, np.log((j - 1) / r) - j * e)
                out[i] = max(_remove(k, q, lm), _sl_add(k, e, q))
            out = np.minimum(out, _rr_rdp(_eps_delta(mech)[0], a))  # eps'-DP in both orders
    else:
        return None
    out.setflags(write=False)
    return out


def _rdp_split(active: list[Row]) -> tuple[np.ndarray, float, float]:
    """RDP of the rows it applies to, plus (sum count eps_i, sum count delta_i) of the
    approx_dp rows with delta > 0, which join by basic composition:
    (eps_R(delta'), delta') then (sum eps_i, sum delta_i) gives
    (eps_R(delta') + sum eps_i, delta' + sum delta_i)."""
    total, e_sum, d_sum = np.zeros(ORDERS.shape), [], []
    for row in active:
        r = _row_rdp(row.mechanism)
        if r is None:  # approx_dp with delta > 0 (the only kind without RDP)
            e, d = _eps_delta(row.mechanism)
            e_sum.append(row.count * e)
            d_sum.append(row.count * d)
        else:
            total = total + row.count * r
    return total, math.fsum(e_sum), math.fsum(d_sum)


def _rdp_eps_split(r: np.ndarray, e_sum: float, d_sum: float, delta: float) -> float:
    if d_sum >= delta:
        return math.inf
    return float(_rdp_eps(r, delta - d_sum)) + e_sum


def _rdp_delta_split(r: np.ndarray, e_sum: float, d_sum: float, eps: np.ndarray) -> np.ndarray:
    out = np.ones(eps.shape)
    ok = eps >= e_sum
    if np.any(ok):
        out[ok] = np.minimum(_rdp_delta(r, eps[ok] - e_sum) + d_sum, 1.0)
    return out


def _rdp_eps(r: np.ndarray, delta: float) -> np.ndarray:
    """min over orders of R + log((a-1)/a) - (log delta + log a)/(a-1), >= 0 (R = 0 gives 0)."""
    a = ORDERS
    with np.errstate(invalid="ignore"):
        e = r + np.log1p(-1 / a) - (math.log(delta) + np.log(a)) / (a - 1)
    e = np.where(np.isnan(e), math.inf, e).min(axis=-1)
    return np.where(np.all(r == 0, axis=-1), 0.0, np.maximum(e, 0.0))


def _rdp_delta(r: np.ndarray, eps: np.ndarray) -> np.ndarray:
    """min over orders of exp((a-1)(R - eps)) (1 - 1/a)^(a-1) / a, capped at 1."""
    if np.all(r == 0):
        return np.zeros(eps.shape)
    a = ORDERS
    with np.errstate(invalid="ignore", over="ignore"):
        ld = (a - 1) * (r - eps[:, None]) - np.log(a) + (a - 1) * np.log1p(-1 / a)
        return np.minimum(np.exp(np.where(np.isnan(ld), math.inf, ld).min(axis=1)), 1.0)


# ------------------------------------------------------------------ GDP / CLT (approximation)
def _prv_mu2(p: PRV) -> float:
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


@lru_cache(maxsize=256)
@np.errstate(all="ignore")
def _row_mu2(mech: Mechanism) -> float | None:
    """mu^2 of one run (the larger of the two orders); None if GDP does not apply."""
    kind = mech.kind
    if kind == "gaussian":
        return mech.mu * mech.mu
    if kind == "subsampled_gaussian":
        q, s = mech.sampling_rate, mech.sigma / mech.sensitivity
        u = 1 / (s * s) if s * s > 0 else math.inf
        return u if q == 1 else q * q * float(np.expm1(u))  # Bu et al. 2019
    if kind in _PURE:  # Y = +-e: mean e tanh(e/2), variance e^2 / cosh(e/2)^2
        sh = float(np.sinh(mech.eps_delta()[0] / 2))
        return None if mech.eps_delta()[1] > 0 else 4 * sh * sh
    if kind in ("laplace", "subsampled_laplace"):
        try:
            return max(_prv_mu2(mech.prv(order)) for order in ("remove", "add"))
        except ArithmeticError:  # overflow building the PRV: report no privacy, never less
            return math.inf
    return None


def _gdp_total(active: list[Row]) -> tuple[float | None, bool]:
    """Total mu^2 = sum count mu_i^2, and whether it is exact (every row Gaussian)."""
    mu2 = [r.count * m if (m := _row_mu2(r.mechanism)) is not None else None for r in active]
    exact = all(r.mechanism.kind == "gaussian" or (r.mechanism.kind == "subsampled_gaussian"
                and r.mechanism.sampling_rate == 1) for r in active)
    return (None if None in mu2 else math.fsum(mu2)), exact


def _log1mexp(x: np.ndarray) -> np.ndarray:
    """log(1 - e^x) for x <= 0."""
    with np.errstate(divide="ignore"):
        return np.where(x > -0.693, np.log(-np.expm1(np.minimum(x, 0))),
                        np.log1p(-np.exp(np.minimum(x, -0.693))))


def _gdp_log_delta(mu: float, eps: np.ndarray | float) -> np.ndarray:
    """log(Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2)), the mu-GDP privacy curve."""
    eps = np.asarray(eps, dtype=float)
    if mu == 0 or math.isinf(mu):
        return np.full(eps.shape, -math.inf if mu == 0 else 0.0)
    la, lb = log_ndtr(-eps / mu + mu / 2), log_ndtr(-eps / mu - mu / 2)
    with np.errstate(invalid="ignore"):
        return np.where(la == -math.inf, -math.inf, la + _log1mexp(np.minimum(eps + lb - la, 0)))


def _gdp_eps(mu: float, delta: float) -> float:
    """Smallest eps >= 0 with delta_mu(eps) <= delta."""
    ld = math.log(delta)
    if mu == 0 or _gdp_log_delta(mu, 0.0) <= ld:
        return 0.0
    hi = 0.5 * mu * mu + mu * math.sqrt(-2 * ld) + 1.0  # Gaussian tail bound: delta(hi) < delta
    if not math.isfinite(hi) or not _gdp_log_delta(mu, hi) < ld:  # rounding hides the root
        return math.inf
    return _bisect(lambda e: float(_gdp_log_delta(mu, e)) - ld, 0.0, hi)


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


# ------------------------------------------------------------------ exact (KOV)
def _kov_window(e0: float, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Atoms Y_i = e0 (k - 2i) > 0 of k-fold randomized response, i ~ Bin(k, 1/(1+e^e0)).

    Returns Y, log P(i) and log Q(i) = log P(i) - Y_i for i within w = 60 sd + 1200 of the mean;
    by Bernstein's inequality the rest has mass below e^-900. gammaln limits the relative
    accuracy of P to ~1e-9 at k = 1e6.
    """
    p = float(expit(-e0))
    w = 60 * math.sqrt(k * p * (1 - p)) + 1200
    i = np.arange(max(0, math.floor(k * p - w)), min((k - 1) // 2, math.ceil(k * p + w)) + 1.0)
    i = i if e0 > 0 else i[:0]
    lp = gammaln(k + 1) - gammaln(i + 1) - gammaln(k - i + 1) - k * math.log1p(math.exp(-e0)) - i * e0
    return e0 * (k - 2 * i), lp, lp - e0 * (k - 2 * i)


def _kov(e0: float, d0: float, k: int, x: float, want_eps: bool) -> float:
    """delta(eps) = 1 - (1-d0)^k + (1-d0)^k sum_{Y_i > eps} P(i) (1 - e^(eps - Y_i)), or its inverse."""
    y, lp, lq = _kov_window(e0, k)
    keep, lost = math.exp(k * math.log1p(-d0)), -math.expm1(k * math.log1p(-d0))
    if not want_eps:
        n = int(np.sum(y > x))
        with np.errstate(divide="ignore"):
            rr = float(np.exp(logsumexp(lp[:n] + np.log(-np.expm1(x - y[:n]))))) if n else 0.0
        return min(1.0, lost + keep * rr)
    t = (x - lost) / keep if keep > 0 else -1.0  # target for delta_RR
    if t < 0 or y.size == 0:
        return math.inf if t < 0 else 0.0
    ca, cb = np.logaddexp.accumulate(lp), np.logaddexp.accumulate(lq)
    left = np.append(y[1:], 0.0)  # segment n: eps in [left[n], y[n]), atoms 0..n exceed eps
    log_l = ca + _log1mexp(np.minimum(left + cb - ca, 0.0))  # delta_RR at each left end
    lt = math.log(t) if t > 0 else -math.inf
    if log_l[-1] <= lt:
        return 0.0
    n = int(np.argmax(log_l > lt))  # there delta_RR(eps) = A_n - e^eps B_n = t
    e = ca[n] + float(_log1mexp(np.array(lt - ca[n]))) - cb[n]
    return float(min(max(e, left[n]), y[n]))


# ------------------------------------------------------------------ the accountants
def _compute(name: str, active: list[Row], x: float, want_eps: bool) -> tuple[float | None, str]:
    """One accountant: epsilon at delta = x (want_eps) or delta at epsilon = x."""
    if name == "rdp":
        r, e_sum, d_sum = _rdp_split(active)
        note = "approx_dp rows added by basic composition" if d_sum > 0 else ""
        if want_eps:
            v = _rdp_eps_split(r, e_sum, d_sum, x)
            return v, (note if math.isfinite(v) else "delta is not larger than the approx_dp rows' deltas")
        return float(_rdp_delta_split(r, e_sum, d_sum, np.array([x]))[0]), note
    if name == "gdp":
        if (mu2 := _gdp_total(active)[0]) is None:
            return None, "GDP does not apply to approx_dp with delta > 0"
        mu = math.sqrt(mu2)
        return (_gdp_eps(mu, x) if want_eps else float(np.exp(_gdp_log_delta(mu, x)))), ""
    params = {_eps_delta(r.mechanism) for r in active}
    if name == "exact":
        if any(r.mechanism.kind not in _PURE for r in active) or len(params) > 1:
            return None, "exact only for one homogeneous pure/approximate-DP row"
        (e0, d0), k = params.pop(), sum(r.count for r in active)
        return _kov(e0, d0, k, x, want_eps), ""
    if None in params:
        kind = next(r.mechanism.kind for r in active if _eps_delta(r.mechanism) is None)
        return None, f"{kind} has no (epsilon, delta) description"
    with np.errstate(over="ignore"):
        terms = [(r.count, *_eps_delta(r.mechanism)) for r in active]
        e1, d1 = math.fsum(c * e for c, e, _ in terms), math.fsum(c * d for c, _, d in terms)
        s2 = math.fsum(c * e * e for c, e, _ in terms)
        drift = math.fsum(c * e * float(np.expm1(e)) for c, e, _ in terms)
    if want_eps:
        basic = e1 if d1 <= x else math.inf
        if name == "basic":
            return basic, "" if d1 <= x else "sum of row deltas exceeds delta"
        if x <= d1:
            return None, "delta is not larger than the sum of row deltas"
        return min(basic, math.sqrt(-2 * math.log(x - d1) * s2) + drift), ""
    basic = min(1.0, d1) if e1 <= x else 1.0
    if name == "basic":
        return basic, "" if e1 <= x else "epsilon is below the sum of row epsilons"
    if x > drift:  # advanced: the smallest delta' with sqrt(2 log(1/delta') s2) + drift <= x
        basic = min(basic, 1.0, d1 + (math.exp(-(x - drift) * (x - drift) / (2 * s2)) if s2 > 0 else 0.0))
    return basic, ""


def exact_value(rows: Sequence[Row], x: float, want_eps: bool) -> float | None:
    """The exact epsilon at delta = x (or delta at epsilon = x) when a closed form applies:
    every active row Gaussian (mu composes exactly), or one homogeneous pure/approximate-DP
    row (Kairouz-Oh-Viswanath). None otherwise. Inputs must already be validated."""
    active, blatant = _scan(rows)
    if blatant or not active:
        return None
    mu2, exact = _gdp_total(active)
    if exact and mu2 is not None:
        mu = math.sqrt(mu2)
        return _gdp_eps(mu, x) if want_eps else float(np.exp(_gdp_log_delta(mu, x)))
    value, _ = _compute("exact", active, x, want_eps)
    return value


def _compare(rows: Sequence[Row], x: float, want_eps: bool) -> dict[str, Comparison]:
    active, blatant = _scan(rows)
    out = {}
    for name, (label, kind) in _LABELS.items():
        if blatant or not active:
            value = (math.inf if want_eps else 1.0) if blatant else 0.0
            note = "a row is not private at all" if blatant else "empty composition"
        else:
            value, note = _compute(name, active, x, want_eps)
        if value is not None and math.isnan(value):
            value = math.inf if want_eps else 1.0
        if name == "gdp" and value is not None:
            kind = "exact" if blatant or _gdp_total(active)[1] else kind
            note = note or ("exact: every row is Gaussian" if kind == "exact"
                            else "approximation, may under-report")
        out[name] = Comparison(name, label, kind, value, note)
    return out


def compare_epsilon(rows: Sequence[Row], delta: float) -> dict[str, Comparison]:
    """Epsilon at the given delta from each older accountant.

    Parameters
    ----------
    rows : sequence of Row
        The composition.
    delta : float
        Target delta, in (0, 1).

    Returns
    -------
    dict of str to Comparison
        Keys ``rdp``, ``gdp``, ``basic``, ``advanced``, ``exact``, in that order.
    """
    return _compare(rows, _number("delta", delta, 0.0, 1.0, strict=True), True)


def compare_delta(rows: Sequence[Row], epsilon: float) -> dict[str, Comparison]:
    """Delta at the given epsilon (finite, >= 0) from each older accountant.

    Parameters and return value as for :func:`compare_epsilon`, with epsilon in place of delta.
    """
    return _compare(rows, _number("epsilon", epsilon, 0.0, math.inf), False)


def rdp_delta_curve(rows: Sequence[Row], eps: np.ndarray) -> np.ndarray | None:
    """Upper bound on delta at each eps (>= 0) from RDP; None if RDP does not apply."""
    eps = _array("eps", eps)
    active, blatant = _scan(rows)
    if blatant:
        return np.ones(eps.shape)
    r, e_sum, d_sum = _rdp_split(active)
    return _rdp_delta_split(r, e_sum, d_sum, eps)


def gdp_mu(rows: Sequence[Row]) -> float | None:
    """CLT mu of the whole composition (inf if a row is blatant); None if not applicable."""
    active, blatant = _scan(rows)
    mu2 = math.inf if blatant else _gdp_total(active)[0]
    return None if mu2 is None else math.sqrt(mu2)


def gdp_delta_curve(rows: Sequence[Row], eps: np.ndarray) -> np.ndarray | None:
    """delta at each eps (>= 0) of mu-GDP with mu = gdp_mu(rows) (an approximation); None if N/A."""
    eps = _array("eps", eps)
    mu = gdp_mu(rows)
    return None if mu is None else np.minimum(np.exp(_gdp_log_delta(mu, eps)), 1.0)


def gdp_tradeoff(mu: float, alpha: np.ndarray) -> np.ndarray:
    """Tradeoff function of mu-GDP, beta = Phi(Phi^-1(1 - alpha) - mu), for alpha in [0, 1]."""
    mu = mu if mu == math.inf else _number("mu", mu, 0.0, math.inf)
    alpha = _array("alpha", alpha, 0.0, 1.0)
    return np.zeros(alpha.shape) if math.isinf(mu) else ndtr(-ndtri(alpha) - mu)


def epsilon_vs_count(rows: Sequence[Row], row_index: int, counts: np.ndarray,
                     delta: float) -> dict[str, np.ndarray | None]:
    """Epsilon from RDP and from GDP as the count of one row varies, the others fixed.

    Parameters
    ----------
    rows : sequence of Row
        The composition.
    row_index : int
        Index of the row whose count varies.
    counts : array of int
        Counts (>= 0) at which to evaluate.
    delta : float
        Target delta, in (0, 1).

    Returns
    -------
    dict
        ``{"rdp": eps array or None, "gdp": eps array or None}`` (None: not applicable).
    """
    delta = _number("delta", delta, 0.0, 1.0, strict=True)
    rows = list(rows)
    if isinstance(row_index, bool) or not isinstance(row_index, (int, np.integer)) \
            or not 0 <= row_index < len(rows):
        raise ValueError(f"row_index must be an index into rows, got {row_index!r}")
    c = _array("counts", counts, 0.0, MAX_COUNT)
    if np.any(c != np.round(c)):
        raise ValueError(f"counts must be integers, got {counts!r}")
    _scan(rows)
    active, blatant = _scan(rows[:row_index] + rows[row_index + 1:])
    mech = rows[row_index].mechanism
    if blatant:
        return {"rdp": np.full(c.shape, math.inf), "gdp": np.full(c.shape, math.inf)}
    if mech.is_trivial() or mech.is_blatant():
        v = math.inf if mech.is_blatant() else 0.0
        unit, unit2 = np.full(ORDERS.shape, v), v
    else:
        unit, unit2 = _row_rdp(mech), _row_mu2(mech)
    (r0, e0, d0), (m0, _) = _rdp_split(active), _gdp_total(active)
    with np.errstate(invalid="ignore"):
        if unit is None:  # the varying row is approx_dp with delta > 0
            e1, d1 = _eps_delta(mech)
            rdp = np.array([_rdp_eps_split(r0, e0 + cc * e1, d0 + cc * d1, delta) for cc in c])
        else:
            rdp = (np.full(c.shape, math.inf) if d0 >= delta else _rdp_eps(
                r0 + np.where(c[:, None] > 0, c[:, None] * unit, 0.0), delta - d0) + e0)
        mu2 = None if m0 is None or unit2 is None else m0 + np.where(c > 0, c * unit2, 0.0)
    if mu2 is not None:
        cache = {m: _gdp_eps(math.sqrt(m), delta) for m in np.unique(mu2)}
        mu2 = np.array([cache[m] for m in mu2])
    return {"rdp": rdp, "gdp": mu2}
