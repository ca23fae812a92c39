"""Independent references for the max-statistic pair of shuffled DP-SGD (no prvgui code).

One epoch, in x = m / s: Q's maximum is max(Z_1 + alpha_0, Z_2, ..., Z_T) and P's has alpha_1
= alpha_0 + shift / s in place of alpha_0 (Z_i independent N(0, 1); alpha_0 = base / s). So

    Pr(M <= x) = Phi(x - alpha) Phi(x)^(T-1),
    density    = phi(x - alpha) Phi(x)^(T-1) + (T-1) Phi(x - alpha) phi(x) Phi(x)^(T-2),

with alpha = alpha_1 under P and alpha_0 under Q, written out from these definitions at 40
digits with mpmath (each tail directly: log Phi(x) = log1p(-Phi(-x)) for x > 0). The loss
l = log(p/q) is inverted by bisection and mpmath's root finder; float64 only seeds the search.
"""
from __future__ import annotations

import math

import mpmath as mp
import numpy as np
from scipy.special import log_ndtr

mp.mp.dps = 40


def log_ncdf(y):
    y = mp.mpf(y)
    return mp.log1p(-mp.ncdf(-y)) if y > 0 else mp.log(mp.ncdf(y))


class MaxPair:
    def __init__(self, s: float, T: int, shift: float = 1.0, base: float = 0.0) -> None:
        self.s, self.T, self.n = s, T, T - 1
        self.a0, self.a1 = mp.mpf(base) / s, (mp.mpf(base) + shift) / s
        self.f0, self.f1 = float(self.a0), float(self.a1)

    # ------------------------------------------------------------ 40 digits
    def log_density(self, x, alpha):
        x = mp.mpf(x)
        t1 = -(x - alpha) ** 2 / 2 + self.n * log_ncdf(x)
        if self.n > 0:
            t2 = mp.log(self.n) + log_ncdf(x - alpha) - x * x / 2 + (self.n - 1) * log_ncdf(x)
            m = max(t1, t2)
            t1 = m + mp.log(mp.exp(t1 - m) + mp.exp(t2 - m))
        return t1 - mp.log(2 * mp.pi) / 2

    def loss(self, x):
        return self.log_density(x, self.a1) - self.log_density(x, self.a0)

    def log_cdf(self, x, alpha):
        return log_ncdf(mp.mpf(x) - alpha) + self.n * log_ncdf(x)

    # ------------------------------------------------------------ float64 seed
    def _loss64(self, x: float) -> float:
        def logd(a):
            t1 = -0.5 * (x - a) ** 2 + self.n * log_ndtr(x)
            if self.n == 0:
                return t1
            return np.logaddexp(t1, math.log(self.n) + log_ndtr(x - a) - 0.5 * x * x
                                + (self.n - 1) * log_ndtr(x))
        return float(logd(self.f1) - logd(self.f0))

    def x_of(self, t):
        """The x with l(x) = t (l increases: bisection is safe)."""
        d = self.f1 - self.f0
        c = 0.5 * (self.f1 ** 2 - self.f0 ** 2)
        lo, hi = (float(t) + c) / d - 1.0, (float(t) + math.log(self.T) + c) / d + 1.0
        for _ in range(70):
            mid = 0.5 * (lo + hi)
            lo, hi = (mid, hi) if self._loss64(mid) < float(t) else (lo, mid)
        t = mp.mpf(t)
        f = lambda x: self.loss(x) - t  # noqa: E731
        a, b = mp.mpf(lo) - 1e-6 * (1 + abs(lo)), mp.mpf(hi) + 1e-6 * (1 + abs(hi))
        while f(a) > 0:
            a -= 1e-3 * (1 + abs(a))
        while f(b) < 0:
            b += 1e-3 * (1 + abs(b))
        return mp.findroot(f, (a, b), solver="anderson")

    def tails(self, t, order):
        """(cdf, sf) of the PRV at t: Y = l(M), M ~ P (remove) or Y = -l(M), M ~ Q (add)."""
        if order == "remove":
            lf = self.log_cdf(self.x_of(t), self.a1)
            return mp.exp(lf), -mp.expm1(lf)
        lf = self.log_cdf(self.x_of(-t), self.a0)
        return -mp.expm1(lf), mp.exp(lf)

    # ------------------------------------------------------------ integrals
    @staticmethod
    def _grid(lo, hi, near):
        """Breakpoints on [lo, hi]: steps of 1/2, refined geometrically towards ``near`` (where
        the integrand of delta changes sign, or the bulk)."""
        pts = set(np.linspace(float(lo), float(hi), int(2 * (float(hi) - float(lo))) + 2).tolist())
        for k in range(1, 30):
            for p in (float(near) - 2.0 ** -k, float(near) + 2.0 ** -k):
                if float(lo) < p < float(hi):
                    pts.add(p)
        return [mp.mpf(v) for v in sorted(pts)]

    def _lo(self):
        # Q(M/s <= x) <= Phi(x)^T <= e^-120 below this (P's cdf is smaller still)
        x = -40.0
        while self.T * float(log_ncdf(x + 0.25)) < -120:
            x += 0.25
        return x

    def _density(self, x, alpha):
        """phi(x - alpha) Phi(x)^(T-1) + (T-1) Phi(x - alpha) phi(x) Phi(x)^(T-2), directly."""
        c = mp.ncdf(x)
        out = mp.npdf(x - alpha) * c
        if self.n > 0:
            out += self.n * mp.ncdf(x - alpha) * mp.npdf(x)
        return out * c ** (self.n - 1) if self.n > 0 else mp.npdf(x - alpha)

    def delta(self, eps: float, order: str):
        """H_{e^eps}: int (p - e^eps q)_+ (remove) or int (q - e^eps p)_+ (add), by mp.quad
        (Gauss-Legendre, 20 digits) on the half-line where the integrand is positive (l
        increases), from the densities written out directly."""
        e = mp.exp(eps)
        a, b = (self.a1, self.a0) if order == "remove" else (self.a0, self.a1)
        x0 = self.x_of(eps if order == "remove" else -eps)
        if order == "remove":
            grid = self._grid(x0, max(x0, self.a1) + 14, x0)
        else:
            grid = self._grid(min(self._lo(), x0 - 1), x0, x0)
        with mp.workdps(20):
            return mp.quad(lambda x: self._density(x, a) - e * self._density(x, b), grid,
                           method="gauss-legendre")

    def kl(self, order: str, lo=None, hi=None):
        """E[Y]: KL(P || Q) (remove) or KL(Q || P) (add), by mp.quad (20 digits), on [lo, hi]
        (default: from where Phi(x)^T < e^-120 to alpha_1 + 14; pass a window around the mass
        when alpha_1 is in the thousands)."""
        a, b = (self.a1, self.a0) if order == "remove" else (self.a0, self.a1)
        lo = self._lo() if lo is None else lo
        hi = self.a1 + 14 if hi is None else hi

        def f(x):
            da = self._density(x, a)
            return da * mp.log(da / self._density(x, b)) if da > 0 else mp.mpf(0)
        with mp.workdps(20):
            return mp.quad(f, self._grid(lo, hi, min(max(self.a1, lo), hi)), method="gauss-legendre")
