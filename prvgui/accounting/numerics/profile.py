"""Certified privacy profile of one order of the neighbouring pair.

From a composed discrete PRV (estimate delta~) the true curve of the finite
part satisfies, for every eps (PRV paper, Lemma 5.2 with Thm 5.5's coupling):

    delta~(eps + t) - E  <=  delta_fin(eps)  <=  delta~(eps - t) + E

where t is the coupling distance (the sum of discretisation errors exceeds t
with probability at most the Hoeffding term), and E adds up every probability
that the coupling fails (Hoeffding, truncation of the rows' tails) and the
composition's own errors (window and float round-off; see compose.py). A mass p
at +infinity composes exactly: delta(eps) = p + (1 - p) delta_fin(eps).

delta~(eps) = sum_{y_i > eps} r_i (1 - e^{eps - y_i}) is evaluated exactly for
any real eps from two suffix sums, S_i = sum_{j>=i} r_j and
T_i = sum_{j>=i} r_j e^{-(y_j - y_i)} (computed blockwise so nothing overflows):
delta~(eps) = S_i - e^{eps - y_i} T_i with i the first grid point above eps.
"""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from .compose import Composed
from .discretize import DiscretePRV, mass_factors
from ..core.values import Bounds

#: relative accuracy of the composed mass at +infinity (compose.inf_mass_of: a few ulps per row)
P_INF_REL = 1e-12


def _block(n: int, h: float) -> int:
    """Block length of the suffix sums: e^{-h block} stays far from underflow, and a query
    needing the tail only computes at most one block more than it needs."""
    return max(1, min(n, int(500.0 / h), 4096))


def _suffix_sums(r: np.ndarray, h: float, block: int) -> tuple[np.ndarray, np.ndarray]:
    """S and T of ``r``, blockwise from its start: for a tail r[i0:] with i0 a multiple of
    ``block`` the values are those of the whole array, bit for bit."""
    s = np.cumsum(r[::-1])[::-1]
    n = r.size
    t = np.empty(n)
    carry = 0.0  # T at the first index after the current block
    for b in range(((n - 1) // block) * block, -1, -block):
        e = min(n, b + block)
        w = np.exp(-h * np.arange(e - b))
        local = np.cumsum((r[b:e] * w)[::-1])[::-1] / w
        if carry > 0:
            local += np.exp(-h * (e - b - np.arange(e - b))) * carry
        t[b:e] = local
        carry = t[b]
    return s, t


class CertifiedProfile:
    """delta(eps) bounds for one order of the pair.

    ``parts`` are the discrete rows with their counts: their masses' rounding
    (discretize.mass_factors) and the composition's round-off (``composed.err_rel``) scale
    the estimate by factors lo <= 1 <= hi, so that, with E = ``err_abs`` and t the coupling
    distance,

        lo delta~(eps + t) - E  <=  delta_fin(eps)  <=  hi (delta~(eps - t) + E).

    Whatever the error terms are, they only move the bounds outwards: a vacuous term gives
    lower 0 (or upper 1, or epsilon upper +inf), never a lower bound taken from the estimate.
    """

    def __init__(self, composed: Composed, t: float, coupling_err: float,
                 parts: Sequence[tuple[DiscretePRV, int]] = (),
                 factors: tuple[float, float] | None = None) -> None:
        self.c = composed
        self.t = t + composed.agg
        self.err_abs = composed.err_abs + coupling_err
        # (``factors``: mass_factors of the parts, worked out before: pipeline.RowTerms)
        lo, hi = mass_factors(list(parts)) if factors is None else factors
        fp = composed.err_rel  # delta~ is within a relative fp of its exact composition
        self.lo_factor = lo * (1.0 - fp) if fp < 1 else 0.0
        self.hi_factor = hi / (1.0 - fp) if fp < 1 else math.inf
        #: the larger relative change the factors allow (for the error budget)
        self.err_rel = max(1.0 - self.lo_factor, self.hi_factor - 1.0)
        self.p_inf = composed.inf_mass
        # a tilted composition (tilt.py): the additive error e^{log_a - lam x} on top of err_abs,
        # and delta~ exact only from valid_from on
        self.tilt_lam, self.tilt_log_a = composed.tilt_lam, composed.tilt_log_a
        self.valid_from = composed.valid_from
        # the mass at +inf is composed in float64 to a few ulps per row (compose.inf_mass_of)
        self._p_lo = self.p_inf * (1 - P_INF_REL)
        self._p_hi = min(1.0, self.p_inf * (1 + P_INF_REL))
        self.y = composed.values
        # suffix sums from index _from on (they depend on the cells from there on only): an
        # epsilon query needs them in the upper tail alone (``_start``), a curve everywhere
        self._from = self.y.size
        self._s = self._t = np.zeros(0)
        self._tail: np.ndarray | None = None

    def _ensure(self, i0: int) -> None:
        """Make S_i and T_i available for every i >= i0."""
        i0 = max(0, int(i0))
        if i0 < self._from:
            block = _block(self.c.pmf.size, self.c.h)
            i0 -= i0 % block  # aligned, so that the sums do not depend on the queries before
            self._s, self._t = _suffix_sums(self.c.pmf[i0:], self.c.h, block)
            self._from = i0

    def _start(self, d: float) -> int:
        """An index i0 with delta~(y_i) > d for every i < i0. Cells at least m h above y_i
        give delta~(y_i) >= (1 - e^{-m h}) sum_{j >= i + m} r_j (m h ~ 1 nat)."""
        if self._tail is None:
            self._tail = np.cumsum(self.c.pmf[::-1])[::-1]
        m = max(1, math.ceil(1.0 / self.c.h))
        c = d / -math.expm1(-m * self.c.h) * (1 + 1e-9)
        below = self._tail <= c
        first = int(np.argmax(below)) if below.any() else self._tail.size
        return max(0, first - m - 8)

    # ---------------------------------------------------------- estimates
    def _first_above(self, eps: np.ndarray) -> np.ndarray:
        """Index of the first grid value > eps (the grid is uniform)."""
        y, n = self.y, self.y.size
        with np.errstate(invalid="ignore"):
            f = np.floor((eps - y[0]) / self.c.h)
        idx = np.clip(np.nan_to_num(f, nan=0.0, posinf=n, neginf=-1), -1, n) + 1
        idx = idx.astype(np.int64)
        idx = np.clip(idx, 0, n)
        # repair rounding at cell boundaries
        lower = np.clip(idx - 1, 0, n - 1)
        idx = np.where((idx > 0) & (y[lower] > eps), idx - 1, idx)
        upper = np.clip(idx, 0, n - 1)
        idx = np.where((idx < n) & (y[upper] <= eps), idx + 1, idx)
        return idx

    def _tilde(self, eps: np.ndarray) -> np.ndarray:
        eps = np.asarray(eps, dtype=float)
        idx = self._first_above(eps)
        out = np.zeros(eps.shape)
        ok = idx < self.y.size
        i = idx[ok]
        if i.size:
            self._ensure(int(i.min()))
        with np.errstate(over="ignore", invalid="ignore"):
            v = self._s[i - self._from] - np.exp(eps[ok] - self.y[i]) * self._t[i - self._from]
        out[ok] = np.clip(v, 0.0, 1.0)
        return out

    def _at_grid(self, i: int) -> float:
        """delta~(y_i)."""
        if i + 1 >= self.y.size:
            return 0.0
        j = i + 1 - self._from  # callers _ensure first
        return float(self._s[j] - math.exp(-self.c.h) * self._t[j])

    def _tilde_inverse(self, d: float) -> float:
        """Smallest eps with delta~(eps) <= d (finite part): +inf for d < 0, -inf for d >= 1."""
        if math.isnan(d):
            raise ValueError("delta~ inverse of NaN")
        if d < 0:
            return math.inf
        if d >= 1:
            return -math.inf
        n = self.y.size
        # first grid index i with delta~(y_i) <= d (delta~ decreases along the grid); none
        # lies below _start(d)
        lo, hi = min(self._start(d), n - 1), n - 1
        self._ensure(lo)
        if self._at_grid(lo) <= d:
            i = lo
        else:
            while hi - lo > 1:
                mid = (lo + hi) // 2
                if self._at_grid(mid) <= d:
                    hi = mid
                else:
                    lo = mid
            i = hi
        # on (y_{i-1}, y_i]: delta~(eps) = S_i - e^{eps - y_i} T_i
        s, t = self._s[i - self._from], self._t[i - self._from]
        if s <= d:
            return -math.inf if i == 0 else float(self.y[i - 1])
        if t <= 0:
            return float(self.y[i])
        eps = float(self.y[i]) + math.log((s - d) / t)
        lo_v = -math.inf if i == 0 else float(self.y[i - 1])
        return min(max(eps, lo_v), float(self.y[i]))

    @staticmethod
    def _total(p: float, fin: np.ndarray) -> np.ndarray:
        return p + (1.0 - p) * fin

    @staticmethod
    def _finite(delta: float, p: float) -> float:
        """The finite part's delta when the whole is ``delta`` and P(+inf) = p (< 0: none)."""
        return (delta - p) / (1.0 - p) if delta >= p else -1.0

    # ---------------------------------------------------------- certified
    @property
    def tilted(self) -> bool:
        return self.tilt_log_a > -math.inf or self.valid_from > -math.inf

    def _extra(self, x):
        """The tilted composition's additive error at x (0 when not tilted)."""
        if self.tilt_log_a == -math.inf:
            return np.zeros(np.shape(x)) if np.ndim(x) else 0.0
        with np.errstate(over="ignore"):
            return np.exp(np.minimum(self.tilt_log_a - self.tilt_lam * np.asarray(x, dtype=float), 800.0))

    def delta(self, eps: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(lower, estimate, upper) of delta at each eps."""
        eps = np.asarray(eps, dtype=float)
        if self.p_inf >= 1:
            one = np.ones(eps.shape)
            return one, one, one
        est = self._tilde(eps)
        low = np.maximum(self._tilde(eps + self.t) * self.lo_factor - self.err_abs
                         - self._extra(eps + self.t), 0.0)
        if math.isinf(self.hi_factor):
            up = np.ones(eps.shape)
        else:
            up = np.minimum((self._tilde(eps - self.t) + self.err_abs + self._extra(eps - self.t))
                            * self.hi_factor, 1.0)
            up = np.where(eps - self.t >= self.valid_from, up, 1.0)  # below it delta~ is too small
        # (guards against the last ulp only: lo <= 1 <= hi and delta~ is nonincreasing)
        low = np.minimum(low, est)
        up = np.maximum(up, est)
        return (self._total(self._p_lo, low), self._total(self.p_inf, est),
                self._total(self._p_hi, up))

    def epsilon(self, delta: float) -> Bounds:
        """Bounds on the smallest eps >= 0 with delta(eps) <= delta."""
        if delta < self._p_lo or self.p_inf >= 1:
            return Bounds(math.inf, math.inf, math.inf)
        if self.tilted:
            return self._epsilon_tilted(delta)
        est = max(self._tilde_inverse(self._finite(delta, self.p_inf)), 0.0)
        if math.isinf(self.hi_factor):
            up = math.inf
        else:
            up = self._tilde_inverse(self._finite(delta, self._p_hi) / self.hi_factor - self.err_abs) + self.t
        if self.lo_factor > 0:
            low = self._tilde_inverse((self._finite(delta, self._p_lo) + self.err_abs) / self.lo_factor) - self.t
        else:
            low = 0.0  # the error terms say nothing: the lower bound is vacuous
        return Bounds(min(max(low, 0.0), est), est, max(up, est))

    #: anchors of the tilted inversion, in units of t around the estimate
    ANCHORS = (-8.0, -4.0, -2.0, -1.0, -0.5, -0.25, -0.125, 0.0, 0.125, 0.25, 0.5, 1.0, 2.0)

    def _epsilon_tilted(self, delta: float) -> Bounds:
        """epsilon(delta) when the additive error depends on x (tilted): for an anchor z, the
        error at every x >= z is at most its value at z, which turns each side into one
        inversion of delta~; every anchor gives a valid bound and the best is kept.

        Upper: x = max(z, inverse(d / hi - E - extra(z))) has hi (delta~(x) + E + extra(x)) <= d
        (and z >= valid_from, where delta~ is exact). Lower: with x = inverse((d + E + extra(z))
        / lo) > z, every x' in [z, x) has lo delta~(x') - E - extra(x') > d, so epsilon > x' - t."""
        est = max(self._tilde_inverse(self._finite(delta, self.p_inf)), 0.0)
        x0 = max(est, self.valid_from)
        anchors = [x0 + a * self.t for a in self.ANCHORS]
        up = math.inf
        if not math.isinf(self.hi_factor):
            dd = self._finite(delta, self._p_hi) / self.hi_factor - self.err_abs
            for z in anchors:
                z = max(z, self.valid_from)
                up = min(up, max(z, self._tilde_inverse(dd - float(self._extra(z)))) + self.t)
        low = 0.0
        if self.lo_factor > 0:
            dl = self._finite(delta, self._p_lo) + self.err_abs
            for z in anchors:
                x = self._tilde_inverse((dl + float(self._extra(z))) / self.lo_factor)
                if x > z:
                    low = max(low, x - self.t)
        est = float(min(max(est, low), up))
        return Bounds(float(min(max(low, 0.0), est)), est, float(max(up, est)))
