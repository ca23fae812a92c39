"""The clone pair of the shuffle model and its privacy loss random variable (PRV).

Feldman, McMillan, Talwar, "Hiding among the clones" (FOCS 2021, arXiv 2012.12803, Thm 3.2):
n users each apply an eps0-DP local randomizer and the n reports are shuffled. For two
datasets that differ in one user's data (replace-one), the shuffled output is a
post-processing of one of

    P = (A + D, C - A + 1 - D),    Q = (A + 1 - D, C - A + D),

C ~ Binom(n - 1, e^-eps0) (the other users whose report is a "clone"), A | C ~ Binom(C, 1/2),
D ~ Bernoulli(e^eps0 / (e^eps0 + 1)), all independent. With m = C + 1 (observed: the sum of
the two counts) and a the first count, E = e^eps0 - 1, u = a / m:

    P(m, a) = pi(m) 2 B_m(a) (1 + E u) / (2 + E),   Q(m, a) = P(m, m - a),
    loss l(a/m) = log(1 + E u) - log(1 + E (1 - u))   in [-eps0, eps0],

pi(m) = Binom(m - 1; n - 1, e^-eps0), B_m(a) = binom(m, a) 2^-m. Swapping the counts maps P to
Q, so the pair is symmetric: one order is composed. The PRV takes finitely many values.

What ``clone_prv`` returns is a PRV Y' that is stochastically at least the clone pair's Y (so
delta(eps) = E[(1 - e^(eps - Y'))_+] can only be larger, for one run and, by coupling the
draws, for any composition), with at most about ``MAX_ATOMS`` atoms, built in four steps:

1. Fewer clones: p = e^-eps0 is rounded down (to 53 - bits(n) significant bits: n p is then
   exact, and the binomial masses come out to a few ulps) and E up. A pair with more clones
   is a post-processing of one with fewer (give each extra clone's report to either count
   with probability 1/2: P_c becomes P_{c+1} and Q_c becomes Q_{c+1}); a larger E gives a pair
   from which the exact one follows by swapping the two counts with a fixed probability.
2. Groups of rows: for large n the rows c = m - 1 are grouped in runs of w and every row of a
   run replaced by its first (fewest clones: the same argument), with the run's total mass.
   Rows in C's tails (mass <= TAU each) and, in each row, the counts a outside a Hoeffding
   window (mass <= 2 TAU per side, since P(a | m) <= 2 B_m(a)) are dropped, and their mass
   is put at the largest loss log(1 + E): every outcome's loss is at most that, so this only
   moves mass up. (+infinity would be as conservative, but would make delta > 0 at every
   eps; this way delta(eps0) = 0 stays true: the certified epsilon never exceeds eps0 beyond
   the bracket.)
3. Connect the dots (Doroshenko, Ghazi, Kamath, Kumar, Manurangsi, PETS 2022): when the atoms
   are too many, each atom of loss l in a bucket [a, b] (a = j g, b = (j + 1) g, the outer
   ends at the smallest and largest loss) is split between the two ends so that both its P
   and its Q mass are kept (theta = expm1(a - l) / expm1(a - b) of its P mass to b). The
   original pair is a post-processing of the split one. g is a power of 2, at most the support
   over BUCKETS; one run's delta(eps) grows by at most g times the mass of one bucket.
4. Rounding: every computed mass carries a relative error below ``rho`` (bounded below);
   all masses are scaled so that each is at most its exact value, and the rest (2 rho plus
   the dropped tails, about 3e-13) is put at the largest loss as in step 2.

So the certified upper bounds hold for the shuffle model. A lower bound computed from this
PRV is a lower bound for this pair: for small n (steps 2-3 do nothing) that is the clone pair
up to the ~3e-13 of step 4 in delta, and the clone pair is itself only an upper bound for a
particular randomizer.
"""
from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from scipy import stats

from .prv import PRV, TRIVIAL

#: tail mass cut per side (rows of C, counts within a row)
TAU = 1e-18
#: at most this many (m, a) atoms are evaluated; beyond it rows are grouped (step 2)
BUDGET = 1_500_000
#: at most this many atoms in the PRV; beyond it connect the dots on >= BUCKETS buckets
MAX_ATOMS, BUCKETS = 16384, 8192
#: atoms evaluated at a time
CHUNK = 1 << 18
_U = 2.0 ** -53
#: bound on the relative error of one evaluated mass (tests check it against mpmath)
EVAL_REL = 1e-13

# stirlerr(k) = log k! - (k + 1/2) log k + k - log sqrt(2 pi), k = 0..15 (40-digit values)
_STIRLERR = np.array([0.0, 0.08106146679532726, 0.0413406959554093, 0.02767792568499834,
                      0.020790672103765093, 0.016644691189821193, 0.013876128823070748,
                      0.01189670994589177, 0.010411265261972096, 0.009255462182712733,
                      0.00833056343336287, 0.007573675487951841, 0.00694284010720953,
                      0.006408994188004207, 0.0059513701127588475, 0.005554733551962801])


def stirlerr(k: np.ndarray) -> np.ndarray:
    """The remainder of Stirling's formula at integers k >= 1 (the table, then the asymptotic
    series 1/12k - 1/360k^3 + 1/1260k^5 - 1/1680k^7 + 1/1188k^9, error < 2e-16 from k = 16)."""
    k = np.asarray(k, dtype=float)
    r = 1.0 / np.maximum(k, 16.0)
    r2 = r * r
    series = r * (1 / 12 - r2 * (1 / 360 - r2 * (1 / 1260 - r2 * (1 / 1680 - r2 / 1188))))
    return np.where(k < 16, _STIRLERR[np.clip(k, 0, 15).astype(np.int64)], series)


def bd0(x: np.ndarray, mu: np.ndarray) -> np.ndarray:
    """x log(x / mu) + mu - x (the binomial deviance term), to a few ulps of its value when
    x - mu and x + mu are exact: near mu the series 2 x sum_j v^(2j+1) / (2j+1) - (x - mu) v ...
    written as (x - mu) v + 2 x (v^3/3 + v^5/5 + ...), v = (x - mu) / (x + mu) (Loader 2000)."""
    x, mu = np.asarray(x, dtype=float), np.asarray(mu, dtype=float)
    d = x - mu
    with np.errstate(divide="ignore", invalid="ignore"):
        v = d / (x + mu)
        near = np.abs(d) < 0.1 * (x + mu)
        v2, term, series = v * v, 2 * x * v, d * v
        for j in range(1, 13):  # v^2 < 1/120: 12 terms reach 1e-25 of the first
            term = term * v2
            series = series + term / (2 * j + 1)
        far = x * np.log(x / mu) + mu - x
    return np.where(near, series, np.where(x == 0, mu, far))


def log_binom_pmf(k: np.ndarray, n: np.ndarray, p: float) -> np.ndarray:
    """log of the Binomial(n, p) probability of k, 0 <= k <= n, n >= 1, to a few ulps of its size
    (Loader's saddle-point form: Stirling remainders and deviances). n p must be exact (p with at
    most 53 - bits(n) significant bits), so that k - n p and k + n p are exact."""
    k, n = np.asarray(k, dtype=np.int64), np.asarray(n, dtype=np.int64)
    kf, nf = k.astype(float), n.astype(float)
    edge = (k == 0) | (k == n)
    ki, li = np.where(edge, 1.0, kf), np.where(edge, 1.0, nf - kf)  # interior counts
    inner = (stirlerr(nf) - stirlerr(ki) - stirlerr(li) - bd0(ki, nf * p) - bd0(li, nf * (1 - p))
             + 0.5 * (np.log(nf / (ki * li)) - math.log(2 * math.pi)))
    return np.where(k == 0, nf * math.log1p(-p), np.where(k == n, nf * math.log(p), inner))


def quantized(p: float, n: int) -> float:
    """The largest float <= p with at most 53 - bits(n) significant bits (n p is then exact)."""
    f, e = math.frexp(p)
    bits = 53 - int(n).bit_length()
    return math.ldexp(math.floor(math.ldexp(f, bits)), e - bits)


def _c_range(n1: int, p: float) -> tuple[int, int]:
    """(lo, hi): P(C < lo) <= TAU and P(C > hi) <= TAU for C ~ Binom(n1, p) (bisection)."""
    lo, top = 0, int(n1 * p)
    while lo < top:  # largest c with cdf(c - 1) <= TAU
        mid = (lo + top + 1) // 2
        lo, top = (mid, top) if stats.binom.cdf(mid - 1, n1, p) <= TAU else (lo, mid - 1)
    bot, hi = math.ceil(n1 * p), n1
    while bot < hi:  # smallest c with sf(c) <= TAU
        mid = (bot + hi) // 2
        bot, hi = (bot, mid) if stats.binom.sf(mid, n1, p) <= TAU else (mid + 1, hi)
    return lo, hi


def _window(m: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Counts a kept in row m: |a - m/2| <= sqrt(m log(1/TAU) / 2), whose complement has
    B_m-mass <= TAU per side (Hoeffding)."""
    t = np.sqrt(m * math.log(1 / TAU) / 2)
    lo, hi = np.maximum(np.ceil(m / 2 - t), 0), np.minimum(np.floor(m / 2 + t), m)
    return lo.astype(np.int64), hi.astype(np.int64)


@lru_cache(maxsize=32)
def clone_prv(eps0: float, n: int) -> PRV:
    """The PRV (one order; the pair is symmetric) of a pair dominating the clone pair of n users
    with eps0-DP local randomizers (module docstring)."""
    if eps0 == 0:
        return TRIVIAL
    p = quantized(math.exp(-eps0) * (1 - 4 * _U), n)  # step 1: rounded down ...
    e = math.expm1(eps0) * (1 + 4 * _U)  # ... and up
    c_lo, c_hi = _c_range(n - 1, p)
    c = np.arange(c_lo, c_hi + 1)
    lo, hi = _window(c + 1.0)
    w = max(1, math.ceil(float(np.sum(hi - lo + 1)) / BUDGET))  # step 2: rows per group
    starts = np.arange(0, c.size, w)
    weight = np.add.reduceat(np.exp(log_binom_pmf(c, np.full(c.size, n - 1), p)), starts)
    dropped = stats.binom.cdf(c_lo - 1, n - 1, p) + stats.binom.sf(c_hi, n - 1, p)
    rows = _Rows(e, c[starts] + 1, lo[starts], hi[starts], weight)
    dropped += 2 * float(np.sum(weight * (stats.binom.cdf(rows.lo - 1, rows.m, 0.5)
                                          + stats.binom.sf(rows.hi, rows.m, 0.5))))
    locs = None
    if rows.sizes.sum() <= 8 * MAX_ATOMS:  # equal fractions a/m have equal losses: merge them
        aa, mm, loss, mass = rows.atoms(0, rows.m.size)
        g = np.gcd(aa, mm)
        keys, inverse, counts = np.unique((aa // g) * (int(mm.max()) + 1) + mm // g,
                                          return_inverse=True, return_counts=True)
        if keys.size <= MAX_ATOMS:  # the exact atoms
            locs = np.zeros(keys.size)
            locs[inverse] = loss
            masses = np.bincount(inverse, weights=mass, minlength=keys.size)
            terms = w + int(counts.max())
    if locs is None:
        locs, masses, k = _connect_the_dots(rows)
        terms = w + k
    # step 4: rho bounds each mass's relative error (evaluation, theta, sums, the scaling)
    rho = EVAL_REL + (terms + 16) * _U
    slack = min(1.0, dropped * (1 + 1e-9) + 2 * rho)
    keep = masses > 0
    locs, masses = locs[keep], masses[keep] * ((1.0 - slack) / math.fsum(masses[keep]))
    top = math.log1p(e)  # the largest loss (u = 1)
    if locs.max() < top:
        locs, masses = np.append(locs, top), np.append(masses, 0.0)
    order = np.argsort(locs)
    locs, masses = locs[order], masses[order]
    masses[-1] += slack  # at the largest loss
    mean = math.fsum(locs * masses)
    return PRV(tuple(zip(locs.tolist(), masses.tolist())), 0.0, None, mean,
               8 * _U * float(np.sum(np.abs(locs) * masses)) + 1e-300)


class _Rows:
    """The kept atoms, row (group) by row: row i has m[i], counts lo[i]..hi[i], mass weight[i]."""

    def __init__(self, e: float, m, lo, hi, weight) -> None:
        self.e, self.m, self.lo, self.hi = e, m, lo, hi
        self.sizes = hi - lo + 1
        with np.errstate(divide="ignore"):
            self.logw = np.log(weight)

    def chunks(self):
        """Ranges of rows holding about CHUNK atoms each (memory stays bounded)."""
        ends = np.searchsorted(np.cumsum(self.sizes), np.arange(CHUNK, self.sizes.sum() + CHUNK, CHUNK))
        i = 0
        for j in np.unique(np.minimum(ends + 1, self.m.size)):
            if j > i:
                yield i, int(j)
                i = int(j)

    def atoms(self, i: int, j: int, masses: bool = True):
        """(a, m, loss, mass) of the atoms of rows i..j-1 (mass None if not ``masses``)."""
        sizes = self.sizes[i:j]
        first = np.repeat(np.cumsum(sizes) - sizes, sizes)
        mm = np.repeat(self.m[i:j], sizes)
        aa = np.repeat(self.lo[i:j], sizes) + np.arange(first.size) - first
        la = np.log1p(self.e * (aa / mm))
        loss = la - np.log1p(self.e * ((mm - aa) / mm))
        if not masses:
            return aa, mm, loss, None
        mass = np.exp(np.repeat(self.logw[i:j], sizes) + log_binom_pmf(aa, mm, 0.5) + la
                      + math.log(2.0) - math.log(2.0 + self.e))
        return aa, mm, loss, mass


def _bucket(loss: np.ndarray, g: float) -> np.ndarray:
    """k with k g <= loss < (k + 1) g exactly (k g is exact: g is a power of 2)."""
    k = np.floor(loss / g)
    k += (k + 1) * g <= loss
    k -= k * g > loss
    return k.astype(np.int64)


def _connect_the_dots(rows: _Rows) -> tuple[np.ndarray, np.ndarray, int]:
    """Step 3: atoms at the ends of buckets [j g, (j + 1) g] (g a power of 2, so j g is exact;
    the outer ends are the smallest and largest loss), keeping each bucket's P and Q mass;
    also the most terms summed into one atom."""
    spans = [rows.atoms(i, j, masses=False)[2] for i, j in rows.chunks()]
    lo, hi = min(float(x.min()) for x in spans), max(float(x.max()) for x in spans)
    del spans
    if hi <= lo:
        mass = np.concatenate([rows.atoms(i, j)[3] for i, j in rows.chunks()])
        return np.array([lo]), np.array([math.fsum(mass)]), mass.size
    g = 2.0 ** math.floor(math.log2((hi - lo) / BUCKETS))
    j0, j1 = (_bucket(np.array([x]), g)[0] for x in (lo, hi))
    size = j1 - j0 + 2
    ends = (j0 + np.arange(size)) * g
    ends[0], ends[-1] = lo, max(hi, ends[-2])  # the top end is the largest loss
    masses, counts = np.zeros(size), np.zeros(size, dtype=np.int64)
    for i, j in rows.chunks():
        _, _, loss, mass = rows.atoms(i, j)
        idx = _bucket(loss, g) - j0
        a, b = ends[idx], ends[idx + 1]
        with np.errstate(invalid="ignore", divide="ignore"):
            den = np.expm1(a - b)
            up = mass * (np.expm1(a - loss) / den)  # theta: P mass to b
            down = np.where(a < loss, mass * (np.exp(a - loss) * (np.expm1(loss - b) / den)), mass)
        masses += np.bincount(idx, weights=down, minlength=size)
        masses += np.bincount(idx + 1, weights=np.where(a < loss, up, 0.0), minlength=size)
        counts += np.bincount(idx, minlength=size)
    return ends, masses, 2 * int(counts.max())


def clone_rdp(eps0: float, n: int, orders: np.ndarray) -> np.ndarray:
    """Renyi DP of the clone pair at ``orders`` (> 1), an upper bound: E[e^((alpha - 1) Y')] of
    the dominating PRV (Y' >= Y: at least the clone pair's, which dominates the mechanism), and
    never above eps0-randomized response's."""
    from .rdp import lse_up, rr_rdp
    prv = clone_prv(eps0, n)
    if not prv.atoms:
        return np.zeros_like(orders, dtype=float)
    locs, masses = (np.array(v) for v in zip(*prv.atoms))
    t = np.log(masses)[None, :] + (orders[:, None] - 1.0) * locs[None, :]
    return np.minimum(lse_up(t, axis=1) / (orders - 1.0), rr_rdp(eps0, orders))
