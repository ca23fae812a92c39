"""Random allocation of one participation among m steps: the pair and its PRVs, both sides.

The pair (units of the clipping norm, noise multiplier s, mu = 1 / s). One round puts the record
in one uniformly random step of m; the m noisy sums are Q = N(0, s^2 I) without the record and
P = (1/m) sum_j N(e_j, s^2 I) with it (the other records' gradients 0, the record's +1: two
realisable datasets; Feldman and Shenfeld, "Privacy amplification by random allocation", 2025,
show that this pair dominates the adaptive mechanism, DP-SGD included). With R_j = dP_j/dQ at the
output, independent under Q with log R_j ~ N(-mu^2/2, mu^2),

    dP/dQ = S / m,  S = R_1 + ... + R_m,    remove: Y = log(S/m) under P;  add: Y = -log(S/m) under Q,

and P(A) = E_Q[(S/m) 1_A]. k participations among t steps are k such rounds with m = floor(t / k):
a uniformly random permutation of the t outputs turns k stratified rounds (one participation in
each block of m steps, t - k m steps of pure noise) into a uniformly random k-subset, and maps Q to
itself, so the k-of-t pair is a post-processing of the k rounds (kinds/random_allocation.py).

The law of S, certified from both sides. S is computed under Q on a grid twice, once with every
value rounded UP (``up``: S_up >= S, coupled) and once DOWN (``down``: S_down <= S):

* terms are split at R1 (with J of the m terms above it, P(J >= 2) <= TAU_TWO): the small terms'
  conditional law is put on a fine grid g (each term's rounding moves S/m by at most g), their
  m- and (m-1)-fold sums are formed by FFT convolution, doubling with the binary digits of m; an
  n-fold sum is re-gridded on a grid of about n g / ops (``grid``: it is repeated m / n times in
  the end, so each re-gridding moves S/m by at most g / ops); the large term B (J = 1) is put on
  a grid relative to R1 and added to the (m-1)-fold sum; J >= 2 is set aside;
* each sum is cut to [lo, hi] by Chernoff bounds from the grid laws' moment generating functions
  (mass beyond hi set aside in ``up``, clamped in ``down``; below lo clamped up in ``up``, set to
  0 in ``down``);
* an FFT's round-off is bounded as the composition engine bounds its own (docs/method.md, "The
  error budget": twice its most negative output, at least 4 ulp of the peak) and that much mass
  is added to every point: ``up``'s excess is then taken from its bottom, ``down``'s from its top.

Then, with e the P-mass of what was set aside (bounded separately, ``_escape_p``):
``remove`` upper: log(S_up/m) with masses (S_up/m) Q(S_up), cut from the bottom to total 1 - e,
plus e at +infinity (every upper tail at least the truth's); ``add`` upper: -log(S_down/m) under
Q, S_down = 0 at +infinity; the lower sides swap the roles (a proven LOWER bound: the pair is
realised). The result's sides differ by the grids' rounding, about 1e-3 in S/m (coarser where
little noise makes R1 large: ``N_BASE`` caps the fine grid's points; beyond ``ACC_WORST`` the
caller falls back to the Gaussian bound). Measured against PLD_accounting 2.0 (tests,
test_random_allocation.py): the certified upper epsilon within 1% of its upper bound, in about
2 s for a thousand steps.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from scipy import fft as sfft
from scipy.special import ndtr, ndtri

from .prv import PRV, Continuous

#: the mass a cut or a rare event may set aside (each, per round)
TAU = 1e-15
#: the Q-probability that two terms are large (set aside; its P-mass is bounded in ``escape_p``)
TAU_TWO = 1e-12
#: the most grid points an array may have, and the small terms' fine grid
N_MAX = 1 << 22
N_BASE = 1 << 18
#: the coarsest rounding of S / m accepted (beyond it the kind falls back to the Gaussian bound),
#: and the finest asked for (below it the loss is too small to matter: the Gaussian bound)
ACC_WORST = 1e-2
ACC_BEST = 1e-8
_ULP = np.finfo(float).eps


@dataclass(frozen=True)
class Grid:
    """A law on the points (offset + i) h, masses ``p`` (float64); ``spill`` mass set aside above
    (``up``) or at 0 (``down``)."""

    h: float
    offset: int
    p: np.ndarray
    spill: float = 0.0

    @property
    def values(self) -> np.ndarray:
        return (self.offset + np.arange(self.p.size)) * self.h


def _conv(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a * b by FFT, non-negative, with the round-off bound added to every point."""
    n = a.size + b.size - 1
    if n > 4 * N_MAX:
        raise OverflowError("random allocation grid too large")
    if not (a.size and b.size):  # (mu so large that a term's grid holds no cell: 5e6, R1 below one step)
        raise OverflowError("random allocation grid empty")
    size = sfft.next_fast_len(n, real=True)
    fa = sfft.rfft(a, size, workers=-1)
    fb = fa if b is a else sfft.rfft(b, size, workers=-1)
    y = sfft.irfft(fa * fb, size, workers=-1)[:n]
    floor = max(2.0 * max(0.0, -float(y.min())), 4.0 * _ULP * float(y.max()))
    return np.maximum(y, 0.0) + floor


def _regrid(x: Grid, h: float, up: bool) -> Grid:
    """The same law on the grid h, each value rounded up (or down)."""
    if h == x.h:
        return x
    v = x.values / h
    idx = np.ceil(v * (1 - 1e-15)) if up else np.floor(v * (1 + 1e-15))
    idx = idx.astype(np.int64)
    lo = int(idx.min())
    return Grid(h, lo, np.bincount(idx - lo, weights=x.p), x.spill)


def _cut(x: Grid, lo: float, hi: float, up: bool) -> Grid:
    """Values above hi set aside (up) or clamped to hi (down); below lo clamped up to lo (up) or
    set aside at 0 (down)."""
    v = x.values
    p = x.p.copy()
    spill = x.spill
    above, below = v > hi, v < lo
    i_hi = int(np.searchsorted(v, hi, side="right")) - 1
    i_lo = int(np.searchsorted(v, lo, side="left"))
    if up:
        spill += float(p[above].sum())
        p[i_lo] += float(p[below].sum()) if i_lo < p.size else 0.0
    else:
        spill += float(p[below].sum())
        if i_hi >= 0:
            p[i_hi] += float(p[above].sum())
    keep = slice(max(i_lo, 0), max(i_hi, i_lo - 1) + 1) if i_lo <= i_hi else slice(0, 0)
    return Grid(x.h, x.offset + (keep.start or 0), p[keep], spill)


def _add(a: Grid, b: Grid, up: bool) -> Grid:
    assert a.h == b.h
    return Grid(a.h, a.offset + b.offset, _conv(a.p, a.p if b is a else b.p), a.spill + b.spill)


class _Round:
    """One round's sums (module docstring) for mu and m, both roundings."""

    def __init__(self, mu: float, m: int, acc: float) -> None:
        self.mu, self.m = mu, m
        self.p1 = math.sqrt(2.0 * TAU_TWO / (m * (m - 1)))
        self.r1 = self._quantile(self.p1)
        self.u = self._quantile(TAU / m)  # the large term's cap: P(R > U) <= TAU / m
        self.g = max(acc / 2.0, self.r1 / N_BASE)
        if self.g > ACC_WORST / 2:
            raise OverflowError("random allocation grid too large")
        ops = 2 * m.bit_length() + 2
        #: an n-fold sum's grid is about step * n (``grid``)
        self.step = acc / 2.0 / ops
        # the large term and what it is added to: a relative rounding of g / 2 on top of R1
        self.h_large = max(self.grid(m), self.g * (self.r1 + 1.0) / 2.0)
        if (self.u - self.r1) / self.h_large > N_MAX:
            raise OverflowError("random allocation grid too large")

    def _quantile(self, p: float) -> float:
        """R's upper p-quantile under Q: exp(mu z - mu^2/2), P(Z > z) = p."""
        return math.exp(self.mu * float(-ndtri(p)) - 0.5 * self.mu * self.mu)

    def _cdf_r(self, x: np.ndarray, shifted: bool = False) -> np.ndarray:
        """P(R <= x) under Q (or of the shifted term R* under P), x > 0."""
        with np.errstate(divide="ignore"):
            z = (np.log(x) + (-0.5 if shifted else 0.5) * self.mu * self.mu) / self.mu
        return ndtr(z)

    def base(self, up: bool) -> Grid:
        """The small terms' law (R given R <= R1) on the grid g."""
        k = int(math.ceil(self.r1 / self.g))
        edges = np.arange(k + 1) * self.g
        c = self._cdf_r(np.maximum(edges, 1e-300))
        c[0] = 0.0
        mass = np.diff(c) / (1.0 - self.p1)
        mass = np.maximum(mass, 0.0)
        return Grid(self.g, 1 if up else 0, mass)

    def large(self, up: bool) -> Grid:
        """The large term's law (R given R > R1) on the grid ``h_large``, beyond U set aside (up)
        or clamped (down)."""
        h = self.h_large
        i0 = int(math.floor(self.r1 / h))
        i1 = int(math.ceil(self.u / h)) + 1
        edges = np.arange(i0, i1 + 1) * h
        edges[0] = self.r1
        c = self._cdf_r(edges)
        mass = np.maximum(np.diff(c), 0.0) / self.p1
        spill = float(ndtr(-(math.log(edges[-1]) + 0.5 * self.mu ** 2) / self.mu)) / self.p1
        if up:
            return Grid(h, i0 + 1, mass, spill)
        mass[-1] += spill
        return Grid(h, i0, mass)

    def _mgf(self, base_up: Grid, base_down: Grid) -> None:
        """log E[e^(th R)], log E[R e^(th R)] (upper bounds: the up grid) and log E[e^(-th R)] (the
        down grid) of a small term, at the Chernoff bounds' tilts."""
        v_up, p_up = base_up.values, base_up.p
        v_dn, p_dn = base_down.values, base_down.p
        self.thetas = np.geomspace(1e-3, 2e3, 80) / max(self.r1, 1.0)
        self.lm = np.array([_logsumexp(th * v_up, p_up) for th in self.thetas])
        self.lmd = np.array([_logsumexp(th * v_up, p_up * v_up) for th in self.thetas])
        self.lm_neg = np.array([_logsumexp(-th * v_dn, p_dn) for th in self.thetas])
        self.mean = float((v_up * p_up).sum())

    def _tails(self, n: int) -> tuple[float, float]:
        """[lo, hi] holding the n-fold small sum but for TAU/2 (Q and P, by Chernoff)."""
        log_tau = math.log(TAU / 4)
        # Q: exp(n lm - th w) <= TAU/4;  P: (n/m) exp(lmd + (n-1) lm - th w) + (m-n)/m Q <= TAU/2
        hi = float(np.min(np.maximum(n * self.lm - log_tau, self.lmd + (n - 1) * self.lm - log_tau)
                          / self.thetas))
        lo = float(np.max((log_tau - n * self.lm_neg) / self.thetas))
        return max(0.0, min(lo, n * self.mean)), max(hi, n * self.mean)

    def grid(self, n: int) -> float:
        """The grid of an n-fold sum: a rounding there moves S / m by at most grid / n (the sum
        is repeated m / n times in the end), a share 1 / ops of the allowed rounding."""
        return self.g * max(1, int(self.step * n / self.g))

    def sums(self, up: bool) -> tuple[Grid, Grid, float]:
        """(m-fold small sum, (m-1)-fold small sum plus the large term, cut mass bound under P)."""
        base_u, base_d = self.base(True), self.base(False)
        if not hasattr(self, "thetas"):
            self._mgf(base_u, base_d)
        base = base_u if up else base_d
        p_cut = 0.0
        acc: Grid | None = None
        n = 0
        for bit in bin(self.m - 1)[2:]:
            if acc is not None:
                n *= 2
                acc = _regrid(_add(acc, acc, up), self.grid(n), up)
            if bit == "1":
                n += 1
                acc = base if acc is None else _regrid(_add(acc, _regrid(base, acc.h, up), up), self.grid(n), up)
            if n > 1 and acc is not None:
                lo, hi = self._tails(n)
                acc = _cut(acc, lo, hi, up)
                p_cut += 2 * TAU
        assert acc is not None
        full = _add(acc, _regrid(base, acc.h, up), up)
        lo, hi = self._tails(self.m)
        full = _cut(full, lo, hi, up)
        with_large = _add(_regrid(acc, self.h_large, up), self.large(up), up)
        return full, with_large, p_cut + 2 * TAU

    def weights(self) -> tuple[float, float, float]:
        """(P(J = 0), P(J = 1), P(J >= 2)) under Q."""
        m, p = self.m, self.p1
        w0 = math.exp(m * math.log1p(-p))
        w1 = m * p * math.exp((m - 1) * math.log1p(-p))
        return w0, w1, max(0.0, 1.0 - w0 - w1)

    def escape_p(self, p_cut: float) -> float:
        """The P-mass of everything ``up`` set aside: J >= 2, the large term beyond U, the cuts."""
        m, p = self.m, self.p1
        star = float(ndtr(-(math.log(self.r1) - 0.5 * self.mu ** 2) / self.mu))  # P(R* > R1)
        j2 = star * (1 - math.exp((m - 1) * math.log1p(-p))) + (m - 1) * (m - 2) / 2 * p * p
        star_u = float(ndtr(-(math.log(self.u) - 0.5 * self.mu ** 2) / self.mu))
        return j2 + star_u + TAU + p_cut


def _logsumexp(x: np.ndarray, w: np.ndarray) -> float:
    keep = w > 0
    if not keep.any():
        return -math.inf
    x, w = x[keep], w[keep]
    top = float(x.max())
    return top + math.log(float((w * np.exp(x - top)).sum()))


def _mixture(parts: list[tuple[float, Grid]]) -> tuple[np.ndarray, np.ndarray, float]:
    """(values of S ascending, masses, spill) of a mixture of laws on grids."""
    values = np.concatenate([g.values for _, g in parts])
    mass = np.concatenate([w * g.p for w, g in parts])
    order = np.argsort(values, kind="stable")
    return values[order], mass[order], sum(w * g.spill for w, g in parts)


def _trim(mass: np.ndarray, total: float, from_bottom: bool) -> np.ndarray:
    """Remove mass beyond ``total`` from the bottom (or the top) of ``mass``."""
    excess = float(mass.sum()) - total
    if excess <= 0:
        return mass
    out = mass.copy() if from_bottom else mass[::-1].copy()
    cum = np.cumsum(out)
    k = min(int(np.searchsorted(cum, excess)), out.size - 1)
    out[:k] = 0.0
    out[k] = max(0.0, float(cum[k]) - excess)
    return out if from_bottom else out[::-1]


def _step_prv(locs: np.ndarray, mass: np.ndarray, inf_mass: float) -> PRV:
    """A PRV with atoms at ``locs`` (ascending), as a continuous part with step cdf/sf."""
    keep = mass > 0
    locs, mass = locs[keep], mass[keep]
    order = np.argsort(locs, kind="stable")
    locs, mass = locs[order], mass[order]
    cum = np.concatenate([[0.0], np.cumsum(mass)])
    tail = np.concatenate([np.cumsum(mass[::-1])[::-1], [0.0]])
    total = float(cum[-1])

    def cdf(t):
        return cum[np.searchsorted(locs, np.asarray(t, dtype=float), side="right")]

    def sf(t):
        return tail[np.searchsorted(locs, np.asarray(t, dtype=float), side="right")]

    mean = float((locs * mass).sum())
    centre = float(locs[np.searchsorted(cum[1:], total / 2)]) if locs.size else 0.0
    lo, hi = float(locs[0]), float(locs[-1])
    if hi <= lo:
        return PRV(((lo, total),), inf_mass, None, mean, 1e-12 * abs(mean))
    cont = Continuous(lo - 1e-12 * (1 + abs(lo)), hi, total, cdf, sf, centre)
    return PRV((), inf_mass, cont, mean, 1e-12 * (1 + abs(mean)))


@dataclass(frozen=True)
class RoundPRVs:
    """One round's four PRVs: upper and lower, each order."""

    remove_up: PRV
    add_up: PRV
    remove_low: PRV
    add_low: PRV


@lru_cache(maxsize=64)
def round_prvs(mu: float, m: int, acc: float = 1e-3) -> RoundPRVs | None:
    """The PRVs of one round of 1-of-m random allocation at mu (module docstring); None when
    the grids would be too large (large mu: the caller falls back to a bound without
    amplification). ``acc``: the rounding allowed in S / m, from each side."""
    atoms = round_atoms(mu, m, acc)
    if atoms is None:
        return None
    return RoundPRVs(*(_step_prv(*atoms[k]) for k in ("remove_up", "add_up", "remove_low", "add_low")))


def round_atoms(mu: float, m: int, acc: float = 1e-3) -> dict[str, tuple[np.ndarray, np.ndarray, float]] | None:
    """``round_prvs``'s PRVs as (losses, masses, mass at +infinity), for checks by direct sums."""
    if m < 2:
        raise ValueError("a round needs at least two steps")
    sd = math.sqrt(math.expm1(min(mu * mu, 700.0)) / m)
    acc = min(acc, 0.02 * sd)
    if acc < ACC_BEST:  # a loss too small to resolve on a grid: the caller's Gaussian bound is as good
        return None
    try:
        r = _Round(mu, m, acc)
        w0, w1, w2 = r.weights()
        out = {}
        for up in (True, False):
            full, with_large, p_cut = r.sums(up)
            s, q, spill = _mixture([(w0, full), (w1, with_large)])
            out[up] = (s / m, q, spill + w2, p_cut)
    except (OverflowError, MemoryError):  # grids too large for this machine, or empty: the Gaussian bound
        return None
    sbar_u, q_u, spill_u, cut_u = out[True]
    sbar_d, q_d, spill_d, _ = out[False]
    esc_p = r.escape_p(cut_u)
    res = {}
    # remove, upper: log(S_up/m) under P, bottom-trimmed to 1 - esc_p, esc_p at +inf
    pm = _trim(sbar_u * q_u, 1.0 - esc_p, from_bottom=True)
    # (a shortfall, from rounding, goes to +infinity too: the upper side never loses mass)
    res["remove_up"] = (np.log(sbar_u), pm, esc_p + max(0.0, 1.0 - esc_p - float(pm.sum())))
    # add, upper: -log(S_down/m) under Q; S_down = 0 (spill) at +inf
    pos = sbar_d > 0
    qd = _trim(q_d[pos], 1.0 - spill_d, from_bottom=False)
    res["add_up"] = (-np.log(sbar_d[pos]), qd, spill_d + max(0.0, 1.0 - spill_d - float(qd.sum())))
    # remove, lower: log(S_down/m) under P, top-trimmed to at most 1; the deficit at the bottom
    pml = _trim(sbar_d[pos] * q_d[pos], 1.0, from_bottom=False).copy()
    pml[0] += max(0.0, 1.0 - float(pml.sum()))
    res["remove_low"] = (np.log(sbar_d[pos]), pml, 0.0)
    # add, lower: -log(S_up/m) under Q, bottom-trimmed (in S) to 1; S_up = inf at the bottom
    qu = _trim(q_u, 1.0, from_bottom=True).copy()
    qu[-1] += max(0.0, 1.0 - float(qu.sum()))
    res["add_low"] = (-np.log(sbar_u), qu, 0.0)
    return res
