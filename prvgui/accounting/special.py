"""The normal distribution function, in numpy alone.

``scipy.special`` takes a fifth of a second to import, longer than a whole
k = 10^4 DP-SGD computation, so the accounting package uses this module instead
(the comparison accountants too: log_ndtr, ndtri, gammaln, logsumexp, expit at
the end).

erfc with full relative precision in both tails:

* |x| <= 1/2: erfc = 1 - erf, erf from its Taylor series (13 terms: below a
  unit round-off there);
* 1/2 < x <= 4 and x > 4: erfc(x) = exp(-x^2) erfcx(x), erfcx from a Chebyshev
  series in a variable where it is smooth (16 and 14 terms; coefficients
  derived at 40 digits by ``benchmarks/fit_erfcx.py``, 2 ulp). exp(-x^2) is
  evaluated as exp(-a^2) exp(-(x - a)(x + a)) with a = x rounded to 1/16, which
  keeps the rounding of x^2 out of the result;
* x < -1/2: erfc(x) = 2 - erfc(-x).

Sorted inputs (cell edges, the common case) are split into the pieces by
slicing instead of masks. Tests compare against scipy.special and mpmath.
"""
from __future__ import annotations

import math

import numpy as np

_K, _A, _X1 = 3.0, 0.5, 4.0
_TA, _TB = (_A - _K) / (_A + _K), (_X1 - _K) / (_X1 + _K)
_MID = (
    1.4691763951469055,
    -0.5886571586164456,
    0.08714215203031489,
    -0.009286626379463273,
    0.0006391506622793178,
    -1.6343822739478965e-05,
    -1.4971983231443405e-06,
    1.288601885333146e-07,
    3.39817989360907e-09,
    -6.952864985096718e-10,
    -1.4149163879352719e-11,
    3.8621881223525825e-12,
    1.2918608749994988e-13,
    -2.1375679701911335e-14,
    -1.3927476481474653e-15,
    9.701017712231994e-17,
)
_TAIL = (
    0.9853526361287724,
    -0.014339740271774976,
    0.00029736169220261896,
    -9.803516043362372e-06,
    4.3313342034728005e-07,
    -2.3621500262412274e-08,
    1.515496765813012e-09,
    -1.1084939856604327e-10,
    9.042590142817653e-12,
    -8.09470541619237e-13,
    7.853855739377158e-14,
    -8.179183400452656e-15,
    9.071473527893728e-16,
    -1.0646172287763947e-16,
)
# erf(x) = (2 / sqrt(pi)) sum_n (-1)^n x^(2n+1) / (n! (2n + 1)), in powers of x^2
_ERF_TAYLOR = tuple((-1) ** n / (math.factorial(n) * (2 * n + 1)) * 2 / math.sqrt(math.pi)
                    for n in range(13))
_SQRT1_2 = math.sqrt(0.5)
#: arrays up to this size go through the C library's erfc one by one: the array path costs
#: about 0.3 ms per call whatever the size (Clenshaw loops over five pieces), the C one 0.12 us
#: per value (cut searches and quadratures call erfc on tens to hundreds of points)
SHORT = 1024
_INV_SQRT_PI = 1.0 / math.sqrt(math.pi)


def _cheb(u: np.ndarray, coef: tuple[float, ...]) -> np.ndarray:
    """Clenshaw's recurrence for sum_j coef[j] T_j(u), in place on two work arrays."""
    b1 = np.full_like(u, coef[-1])
    b2 = np.zeros_like(u)
    tmp = np.empty_like(u)
    u2 = 2.0 * u
    for c in coef[-2:0:-1]:
        np.multiply(u2, b1, out=tmp)
        tmp -= b2
        tmp += c
        b1, b2, tmp = tmp, b1, b2
    np.multiply(u, b1, out=tmp)
    tmp -= b2
    tmp += coef[0]
    return tmp


#: exp(-a^2) for a = i / 16, i = 0..640 (a^2 is exact; beyond a = 40 erfc is 0)
_EXP_SQ = np.exp(-(np.arange(641) / 16.0) ** 2)


def _exp_minus_square(x: np.ndarray) -> np.ndarray:
    """exp(-x^2) for 0 <= x <= 40 as exp(-a^2) exp(-(x - a)(x + a)), a = x rounded to 1/16."""
    i = np.rint(x * 16.0)
    a = i / 16.0
    with np.errstate(under="ignore"):
        out = np.exp(-(x - a) * (x + a))
    out *= _EXP_SQ[i.astype(np.intp)]
    return out


def _small(x: np.ndarray) -> np.ndarray:
    """erfc for |x| <= 1/2."""
    z = x * x
    acc = np.full_like(x, _ERF_TAYLOR[-1])
    for c in _ERF_TAYLOR[-2::-1]:
        acc *= z
        acc += c
    return 1.0 - x * acc


def _mid(x: np.ndarray) -> np.ndarray:
    """erfc for 1/2 < x <= 4."""
    t = (x - _K) / (x + _K)
    u = (2.0 / (_TB - _TA)) * (t - _TA) - 1.0
    return _exp_minus_square(x) * _cheb(u, _MID) / (x + _K)


def _tail(x: np.ndarray) -> np.ndarray:
    """erfc for x > 4 (x may be +inf)."""
    xc = np.minimum(x, 40.0)  # erfc(40) underflows to 0 (and so does the result)
    r = _X1 / xc
    u = 2.0 * r * r - 1.0
    return _exp_minus_square(xc) * _cheb(u, _TAIL) * (_INV_SQRT_PI / xc)


def _upper(x: np.ndarray) -> np.ndarray:
    """erfc for x > 1/2."""
    if x.size and x.min() > _X1:
        return _tail(x)
    if x.size and x.max() <= _X1:
        return _mid(x)
    out = np.empty_like(x)
    m = x <= _X1
    out[m] = _mid(x[m])
    out[~m] = _tail(x[~m])
    return out


def _erfc_sorted(x: np.ndarray, out: np.ndarray) -> None:
    """erfc of an ascending 1-d array, piece by piece on slices."""
    i, j, k, m = np.searchsorted(x, [-_X1, -_A, _A, _X1], side="right")
    n = np.searchsorted(x, np.nan)  # NaNs sort last
    if i:
        out[:i] = 2.0 - _tail(-x[:i])
    if j > i:
        out[i:j] = 2.0 - _mid(-x[i:j])
    if k > j:
        out[j:k] = _small(x[j:k])
    if m > k:
        out[k:m] = _mid(x[k:m])
    if n > m:
        out[m:n] = _tail(x[m:n])
    out[n:] = np.nan


def erfc(x) -> np.ndarray:
    """Complementary error function, elementwise (NaN in, NaN out)."""
    x = np.asarray(x, dtype=float)
    if x.size <= SHORT:  # the C library's erfc; the array machinery would cost more
        return np.fromiter(map(math.erfc, x.ravel().tolist()), float, x.size).reshape(x.shape)
    out = np.empty_like(x)
    if x.ndim == 1 and x.size > 1:
        if x[0] <= x[-1] and np.all(x[1:] >= x[:-1]):
            _erfc_sorted(x, out)
            return out
        if x[0] > x[-1] and np.all(x[1:] <= x[:-1]):
            _erfc_sorted(x[::-1], out[::-1])
            return out
    ax = np.abs(x)
    mid = ax <= _A
    out[mid] = _small(x[mid])
    hi = x > _A
    out[hi] = _upper(x[hi])
    lo = x < -_A
    out[lo] = 2.0 - _upper(-x[lo])
    out[np.isnan(x)] = np.nan
    return out


def ndtr(z) -> np.ndarray:
    """Standard normal distribution function P(N(0, 1) <= z), elementwise."""
    return 0.5 * erfc(-_SQRT1_2 * np.asarray(z, dtype=float))


# ----------------------------------------------------------- for the comparison accountants
_LOG_SQRT_PI = 0.5 * math.log(math.pi)


def log_ndtr(z) -> np.ndarray:
    """log P(N(0, 1) <= z), elementwise, without underflow in the lower tail: log1p(-ndtr(-z))
    above 0, log(ndtr(z)) down to -30, and below, log erfc(x) = -x^2 + log(g(u) / (sqrt(pi) x))
    from the tail series (x = -z / sqrt 2)."""
    z = np.asarray(z, dtype=float)
    out = np.empty(z.shape)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        pos = z > 0
        out[pos] = np.log1p(-ndtr(-z[pos]))
        mid = (z <= 0) & (z >= -30)
        out[mid] = np.log(ndtr(z[mid]))
        far = z < -30
        if far.any():
            x = -_SQRT1_2 * z[far]
            xc = np.minimum(x, 1e150)
            r = _X1 / xc
            series = _cheb(2.0 * r * r - 1.0, _TAIL)
            out[far] = -x * x + np.log(series) - _LOG_SQRT_PI - np.log(xc) - math.log(2.0)
        out[np.isnan(z)] = np.nan
    return out


def ndtri(p) -> np.ndarray:
    """The standard normal quantile, elementwise: bisection on ndtr (monotone) to adjacent
    floats in the lower half, and -ndtri(1 - p) in the upper half (1 - p is exact there, the
    lower tail keeps full relative precision); 0 -> -inf, 1 -> inf."""
    p = np.asarray(p, dtype=float)
    upper = p > 0.5
    q = np.where(upper, 1.0 - p, p)
    lo = np.full(p.shape, -40.0)
    hi = np.zeros(p.shape)
    for _ in range(70):
        mid = 0.5 * (lo + hi)
        below = ndtr(mid) < q
        lo = np.where(below, mid, lo)
        hi = np.where(below, hi, mid)
    out = 0.5 * (lo + hi)
    out = np.where(upper, -out, np.where(p == 0.5, 0.0, out))
    out = np.where(p <= 0, -np.inf, np.where(p >= 1, np.inf, out))
    return np.where(np.isnan(p), np.nan, out)


def gammaln(x) -> np.ndarray:
    """log Gamma(x) for x > 0, elementwise: Stirling's series to x^-9 from x >= 20 (truncation
    below 1e-17), the C library's lgamma below."""
    x = np.asarray(x, dtype=float)
    out = np.empty(x.shape)
    big = x >= 20
    xb = x[big]
    inv = 1.0 / xb
    inv2 = inv * inv
    series = inv * (1 / 12 - inv2 * (1 / 360 - inv2 * (1 / 1260 - inv2 * (1 / 1680 - inv2 / 1188))))
    out[big] = (xb - 0.5) * np.log(xb) - xb + 0.5 * math.log(2 * math.pi) + series
    small = ~big
    out[small] = [math.lgamma(v) if v > 0 else math.inf for v in x[small].ravel()]
    return out


def logsumexp(t, axis=None) -> np.ndarray:
    """log(sum(exp(t))) along ``axis``, scaled by the maximum (-inf for no mass)."""
    t = np.asarray(t, dtype=float)
    m = np.max(t, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0) if np.any(np.isfinite(m)) else np.zeros_like(m)
    with np.errstate(divide="ignore"):
        out = np.log(np.sum(np.exp(t - m), axis=axis, keepdims=True)) + m
    return out.squeeze(axis=axis) if axis is not None else out.reshape(())[()]


def expit(x) -> np.ndarray:
    """1 / (1 + e^-x), elementwise, without overflow."""
    x = np.asarray(x, dtype=float)
    with np.errstate(over="ignore"):
        e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e))
