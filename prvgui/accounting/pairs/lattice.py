"""Privacy losses on a lattice: the PRVs of integer-valued noise (discrete Gaussian, discrete Laplace).

When the noise lives on the integers, the privacy loss takes values on a lattice
Y = origin + step * i, i an integer in [lo, hi] (Canonne, Kamath, Steinke, "The discrete Gaussian
for differential privacy", NeurIPS 2020, Sec. 2; PRV paper, Def. 3.1). Such a PRV is handed to the
accountant in one of two exact forms (``lattice_prv``):

* few points (``as_atoms``): one atom per lattice point, with its mass;
* many points, or an unbounded lattice: the lattice's *step* distribution function as the PRV's
  ``Continuous`` part. The discretiser only ever evaluates cdf/sf at its cell edges, so each cell
  receives exactly the lattice points inside it; that is the same coupling (every value moved
  to its cell's centre, by at most h/2) that discretize.py already certifies for continuous
  parts, and its tail cut at mass tau (counted as a total-variation term) applies unchanged.
  Nothing is merged, so neither the lower nor the upper bound moves. No atom count limit arises.

The accuracy the discretiser trusts (discretize.CDF_ULPS: the sf to a relative 64 units of 2^-53,
the cdf to an absolute 64 units) is met by (tests/accounting/kinds/test_discrete.py checks it against mpmath):

* ``exp_neg_quotient``: e^{-n/d} with the quotient n/d carried to about 2^-106 (Dekker's exact
  product), so a weight e^{-700} keeps a relative error of a few units, not 700 of them;
* ``suffix_sums``: tail sums of the weights with their rounding errors recovered exactly (Knuth's
  TwoSum) and added back, so a tail sum over millions of weights is correct to one rounding.

Each kind truncates its lattice where the weights fall below e^-700 and puts a bound on the
left-out mass at +infinity (``inf_mass``): moving mass to a larger loss can only raise every
delta(eps) of every composition (delta = E[(1 - e^{eps - Y})_+] is nondecreasing in Y), so the
upper bound stays valid, and the truth lies within k * inf_mass (< 1e-290 for k <= 10^9) of the
represented pair, far below any error level the accountant plans for.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from .prv import PRV, Continuous

Array = np.ndarray
#: lattices with at most this many points become atoms when the kind allows it
MAX_ATOMS = 4096
#: weights below e^-E_MAX are left out (their mass, bounded, goes to +infinity)
E_MAX = 700.0
_SPLIT = 134217729.0  # 2^27 + 1 (Veltkamp)


# ---------------------------------------------------------------- error-free arithmetic
def two_sum(a, b):
    """(s, e) with s = fl(a + b) and s + e = a + b exactly (Knuth)."""
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def two_prod(a, b):
    """(p, e) with p = fl(a b) and p + e = a b exactly (Dekker; |a|, |b| < 1e300)."""
    p = a * b
    ca, cb = _SPLIT * a, _SPLIT * b
    ah, bh = ca - (ca - a), cb - (cb - b)
    al, bl = a - ah, b - bh
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


def dd_add(ah, al, bh, bl):
    """Double-double sum (ah + al) + (bh + bl), normalised: hi = fl(hi + lo)."""
    s, e = two_sum(ah, bh)
    e = e + (al + bl)
    hi = s + e
    return hi, e - (hi - s)


def exp_neg_quotient(num: Array | float, den_hi: float, den_lo: float = 0.0) -> Array:
    """e^{-num / (den_hi + den_lo)} for exact non-negative floats ``num`` (integers, squares of
    integers below 2^26), to a few units of 2^-53 while the quotient is at most ~708.

    q = fl(num / den_hi) is corrected by the exact remainder num - q den (Dekker's product;
    num - p is exact by Sterbenz's lemma), so the exponent is known to ~2^-106 relative; the
    two exponentials and the product add three roundings."""
    num = np.asarray(num, dtype=float)
    q = num / den_hi
    nil = q > 746.0  # e^-q underflows to 0 (and q may be too large for Dekker's split)
    q, num = np.where(nil, 0.0, q), np.where(nil, 0.0, num)
    p, e = two_prod(q, den_hi)
    rem = ((num - p) - e) - q * den_lo
    return np.where(nil, 0.0, np.exp(-q) * np.exp(-rem / den_hi))


def suffix_sums(w: Array) -> tuple[Array, Array]:
    """(hi, lo) with hi + lo = S_m = sum_{j >= m} w_j for m = 0..n (S_n = 0), hi = S_m to one
    rounding (non-negative w); along the last axis of a 2-d ``w``, row by row the same values.

    A float running sum s_m from the right leaves exact local errors
    d_m = s_{m+1} + w_m - s_m (TwoSum, then Sterbenz), and S_m = s_m + sum_{j >= m} d_j by
    telescoping. The d_j are below 2^-53 s_j, so their own running sum is correct to far below
    one rounding of S_m (its error is at most n^2 2^-106 S_m). Zeros after a row's last weight
    change none of its sums (each running sum meets them as exact zeros)."""
    w = np.asarray(w, dtype=float)
    n = w.shape[-1]
    s = np.zeros((*w.shape[:-1], n + 1))
    s[..., :n] = np.cumsum(w[..., ::-1], axis=-1)[..., ::-1]
    p, e = two_sum(s[..., 1:], w)
    d = np.zeros_like(s)
    d[..., :n] = np.cumsum(((p - s[..., :n]) + e)[..., ::-1], axis=-1)[..., ::-1]
    return two_sum(s, d)


def mass_bound_up(log_mass: float) -> float:
    """A float >= e^{log_mass} (the bound of a left-out mass, rounded up; never 0)."""
    m = math.exp(log_mass) if log_mass > -745.0 else 0.0
    return math.nextafter(m * (1 + 1e-12), math.inf)


# ---------------------------------------------------------------- the lattice and its PRV
#: a kind that makes many lattice PRVs together (DiscreteGaussian.prvs) keeps at most this
#: many bytes of their tables (``Lattice.held``); each PRV past it lets its tables go as soon as
#: it is made, and makes them again when discretised (0.13 ms at sigma 125): without this, 4 x
#: 10^4 discrete Gaussians held 0.6 GB of tables before the first was discretised
KEEP_BYTES = 128 * 2 ** 20


@dataclass(frozen=True, slots=True)
class Functions:
    """A lattice's functions of its index given one by one (``Lattice.fns``)."""

    pmf: Callable[[Array], Array]
    cdf: Callable[[Array], Array]
    sf: Callable[[Array], Array]
    cut: Callable[[Array], tuple[Array, Array, Array]] | None = None
    release: Callable[[], None] | None = None


@dataclass(frozen=True, eq=False, slots=True)
class Lattice:
    """Y = origin + step * i for integers i in [lo, hi] (step > 0), with P(I = i) = pmf(i),
    P(I <= i) = cdf(i) (absolute accuracy) and P(I > i) = sf(i) (relative accuracy), each
    vectorised over int64 arrays clipped to [lo - 1, hi]; ``mass`` = cdf(hi) = sf(lo - 1).

    The functions are those of ``fns``: a Functions, or any object with these five names, such as
    a kind's own object whose methods they are (a discrete Gaussian's: many rows hold their PRVs
    at once, and five bound methods held apart would be 320 bytes a PRV)."""

    origin: float
    step: float
    lo: int
    hi: int
    fns: Any
    mass: float
    #: the indices between which cdf and sf are quick to evaluate (Continuous.quick)
    quick: tuple[int, int] | None = None
    #: bytes of the arrays the functions hold (a discrete Gaussian's tail sums: pricing.py)
    held: int = 0

    @property
    def pmf(self) -> Callable[[Array], Array]:
        return self.fns.pmf

    @property
    def cdf(self) -> Callable[[Array], Array]:
        return self.fns.cdf

    @property
    def sf(self) -> Callable[[Array], Array]:
        return self.fns.sf

    @property
    def cut(self) -> Callable[[Array], tuple[Array, Array, Array]] | None:
        """cut(taus) for tail masses 0 < tau <= mass / 2: (lo, hi, ok), for each tau the largest i
        with cdf(i) <= tau and the smallest i with sf(i) <= tau, read from the kind's tables
        (discretize.py then needs no tail scan), where ``ok``; None when the kind has no tables."""
        return self.fns.cut

    @property
    def release(self) -> Callable[[], None] | None:
        """release() lets the arrays the functions hold go (``held`` bytes), made again when next
        asked for, the same numbers (pipeline.discretize_many, for many rows once discretised);
        None when they hold none."""
        return self.fns.release

    def values(self, i: Array | int) -> Array:
        return self.origin + self.step * np.asarray(i, dtype=float)

    def index(self, t: Array) -> Array:
        """The largest i with value(i) <= t, clipped to [lo - 1, hi] (a threshold computed to
        a few ulps of |t| + |origin|, which discretize's edge term covers)."""
        u = (np.asarray(t, dtype=float) - self.origin) / self.step
        # (np.minimum and np.maximum: np.clip's values, without its Python wrapper)
        return np.floor(np.minimum(np.maximum(u, self.lo - 1), self.hi)).astype(np.int64)

    def y_cdf(self, t: Array) -> Array:
        return self.cdf(self.index(t))

    def y_sf(self, t: Array) -> Array:
        return self.sf(self.index(t))


@dataclass(frozen=True, slots=True)
class LatticePRV(PRV):
    """A PRV on a lattice (atoms or a step ``cont``): ``delta`` sums the lattice exactly."""

    lattice: Lattice | None = None

    def delta(self, eps: float) -> float:
        """delta(eps) = inf_mass + sum over the points above eps of P(i) (1 - e^{eps - y_i}), summed
        directly (for tests and checks, as ``PRV.delta``; at most 2^26 points)."""
        lat = self.lattice
        assert lat is not None  # lattice_prv, the only maker, always gives one
        first = int(lat.index(np.array([eps]))[0]) + 1
        if first > lat.hi:
            return min(1.0, self.inf_mass)
        if lat.hi - first >= 2 ** 26:
            raise ValueError(f"{lat.hi - first + 1} lattice points are too many for a direct sum")
        i = np.arange(first, lat.hi + 1)
        terms = lat.pmf(i) * -np.expm1(eps - lat.values(i))
        return min(1.0, max(0.0, self.inf_mass + math.fsum(terms)))


def lattice_prv(lat: Lattice, inf_mass: float, mean: float, mean_err: float,
                as_atoms: bool = False) -> LatticePRV:
    """The PRV of a lattice loss plus a mass at +infinity; ``mean`` = E[Y; Y finite].

    Atoms when ``as_atoms`` and the lattice has at most MAX_ATOMS points; else the lattice's
    step distribution function as the continuous part (module docstring)."""
    if as_atoms and lat.hi - lat.lo + 1 <= MAX_ATOMS:
        i = np.arange(lat.lo, lat.hi + 1)
        atoms = tuple((float(y), float(m)) for y, m in zip(lat.values(i), lat.pmf(i)) if m > 0)
        return LatticePRV(atoms, inf_mass, None, mean, mean_err, lat)
    lo = float(lat.values(lat.lo)) - 0.5 * lat.step  # no mass between lo and the first point
    hi = float(lat.values(lat.hi)) + 0.5 * lat.step
    centre = min(max(mean / lat.mass if lat.mass > 0 else 0.0, lo), hi)
    quick = (-math.inf, math.inf) if lat.quick is None else \
        (float(lat.values(lat.quick[0])), float(lat.values(lat.quick[1])))
    cont = Continuous(lo, hi, lat.mass, lat.y_cdf, lat.y_sf, centre, quick)
    return LatticePRV((), inf_mass, cont, mean, mean_err, lat)
