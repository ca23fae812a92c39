"""The discrete Gaussian mechanism: an integer-valued query of sensitivity Delta (a whole number)
released with noise P(x) = e^{-x^2 / (2 sigma^2)} / Z on the integers, Z = sum_x e^{-x^2/(2 sigma^2)}
(Canonne, Kamath, Steinke, "The discrete Gaussian for differential privacy", NeurIPS 2020).

Dominating pair. P = N_Z(Delta, sigma^2), Q = N_Z(0, sigma^2): an integer shift keeps the
normaliser Z, so at an integer x the loss is
    log P(x)/Q(x) = (x^2 - (x - Delta)^2) / (2 sigma^2) = (2 x Delta - Delta^2) / (2 sigma^2).
With x = Delta + y, y ~ N_Z(0, sigma^2) under P: Y = a + b y, a = Delta^2 / (2 sigma^2),
b = Delta / sigma^2, P(Y = a + b y) = e^{-y^2/(2 sigma^2)} / Z: a lattice of step b. E[Y] = a
exactly (y is symmetric): the KL divergence Delta^2 / (2 sigma^2), as for the continuous Gaussian.
* One order suffices: the map x -> Delta - x carries P to Q and Q to P and leaves the loss of
  the swapped pair, log Q/P at Delta - x, equal to log P/Q at x; so (Q, P) has the same PRV.
* Smaller shifts are dominated: N_Z is log-concave, so the likelihood ratio is monotone and the
  best tests are thresholds; P(x >= c - s) grows with the shift s, hence every hockey-stick
  divergence H_g(N_Z(s) || N_Z(0)), g >= 0, is nondecreasing in the integer s in [0, Delta].
  Queries that move by less than Delta, and groups (k Delta, or 2 k Delta under replace-one:
  triangle inequality on the integer query), are covered by the pair at the largest shift.

Truncation. y is kept for |y| <= J = floor(sigma sqrt(2 E_MAX)) (weights >= e^-700); the rest
has mass 2 sum_{j > J} e^{-j^2/(2 sigma^2)} / Z <= 2 e^{-(J+1)^2/(2 sigma^2)} / (1 - e^{-(J+1)/sigma^2})
(as (J+1+i)^2 >= (J+1)^2 + 2 i (J+1)), which goes to +infinity (lattice.py: conservative). The
kept lattice goes to the accountant as its exact step distribution function (lattice.py), whose
tails the discretiser cuts with a certified total-variation term. sigma is limited to MAX_SIGMA
(a table of 37.4 sigma weights).

Comparisons. RDP: D_a(N_Z(Delta) || N_Z(0)) <= a Delta^2 / (2 sigma^2), i.e. the mechanism is
Delta^2 / (2 sigma^2)-zCDP (CKS 2020, Sec. 2): a bound. GDP: the continuous Gaussian's
mu = Delta / sigma is NOT claimed (the lattice loss is not exactly mu-GDP, and ``gaussian_mu`` is
None, so no Gaussian closed form is used); the GDP column is the central-limit approximation by
moment matching (Dong, Roth, Su 2019, Thm 3.4), mu^2 = 4 E[Y]^2 / Var[Y] = Delta^2 / Var[N_Z(0,
sigma^2)], larger than Delta^2 / sigma^2 as the discrete variance is below sigma^2: an
approximation, labelled so, which may under-report.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Iterator, Sequence

import numpy as np

from ..pairs.lattice import (E_MAX, KEEP_BYTES, Lattice, dd_add, exp_neg_quotient, lattice_prv, mass_bound_up,
                             suffix_sums,
                       two_prod)
from ..pairs.prv import PRV, point_mass
from .base import BLATANT_LOSS, INTEGER_SENSITIVITY, Mechanism, Param, Search, group_factor, param
from ..core.values import ORDERS, Relation

#: the largest sigma: its weight table holds 37.4 sigma + 1 numbers (30 MB at 1e5)
MAX_SIGMA = 1e5
#: a PRV holds its tail sums S_m while S_m / Z >= e^-NEAR_LOG (the cell edges of any tail cut
#: above 1e-34 lie there); further out it reads them from the whole table, made again when asked
NEAR_LOG = 80.0



@dataclass(frozen=True)
class _Table:
    """For the weights w_j = e^{-j^2/(2 sigma^2)}, j = 0..J (or fewer: ``_near_table``): their
    tail sums S_m = sum_{j >= m} w_j (m = 0..J+1), Z = w_0 + 2 S_1 (the kept lattice's
    normaliser), the left-out mass and the variance of the kept lattice."""

    sigma2: tuple[float, float]
    s: np.ndarray
    z: float
    left_out: float
    var: float


@lru_cache(maxsize=2)
def _table(sigma: float) -> _Table:
    """The whole table, J = floor(sigma sqrt(2 E_MAX)) (the lattice the PRV represents)."""
    return _build(sigma, None)


def _build(sigma: float, top: int | None) -> _Table:
    """The table over j = 0..min(J, top): the tail sums S_m over [m, min(J, top)] (below J they
    leave out the weights past top: ``_near_table`` bounds them), Z from them, the left-out mass
    past J, the variance."""
    big_j = math.floor(sigma * math.sqrt(2.0 * E_MAX))
    end = big_j if top is None else min(big_j, top)
    j = np.arange(end + 1, dtype=float)
    v_hi, v_lo = two_prod(sigma, sigma)  # sigma^2 = v_hi + v_lo exactly
    w = exp_neg_quotient(j * j, 2.0 * v_hi, 2.0 * v_lo) if end else np.ones(1)
    return _finish(big_j, j, w, *suffix_sums(w), v_hi, v_lo)


def _finish(big_j: int, j: np.ndarray, w: np.ndarray, s_hi: np.ndarray, s_lo: np.ndarray,
            v_hi: float, v_lo: float) -> _Table:
    """The table from the weights w_j (j = 0..end) and their tail sums."""
    end = j.size - 1
    z = dd_add(s_hi[0], s_lo[0], s_hi[1], s_lo[1])[0] if end else 1.0
    # left out: 2 sum_{j >= n} w_j <= 2 e^{-n^2 / (2 sigma^2)} / (1 - e^{-n / sigma^2}), n = J + 1
    n = big_j + 1.0
    expo = n * n / (2.0 * v_hi) if v_hi > 0 else math.inf
    log_left = -math.inf if expo > 800 else -expo - math.log(-math.expm1(-n / v_hi))
    left_out = mass_bound_up(math.log(2.0) + log_left - math.log(z))
    var = 2.0 * float(np.dot(j[1:] * j[1:], w[1:])) / z
    return _Table((float(v_hi), float(v_lo)), s_hi, float(z), left_out, var)


def _near_top(sigma: float) -> tuple[int, int]:
    """(J, top): the kept lattice's end and where a PRV's table stops (``_near_table``)."""
    big_j = math.floor(sigma * math.sqrt(2.0 * E_MAX))
    return big_j, math.ceil(sigma * math.sqrt(2.0 * (NEAR_LOG + 50.0 + math.log1p(sigma))))


def _near_table(sigma: float, built: _Table | None = None) -> tuple[_Table, int]:
    """The table a PRV is built from and the first index m_near whose S_m / Z is below
    e^-NEAR_LOG: the weights only out to where those past it are below 2^-60 of S_{m_near}
    (a geometric bound, w_{j+1} / w_j <= e^{-(top + 1) / sigma^2} past top; checked, else the
    whole table), so S_m for m <= m_near and Z are the whole table's to far below a rounding,
    at half the cost or less for sigma above ~10. ``built``: that table when made already
    (``_near_tables``)."""
    big_j, top = _near_top(sigma)
    t = (built or _build(sigma, top)) if top < big_j else _table(sigma)
    m_near = min(int(np.searchsorted(-t.s, -t.z * math.exp(-NEAR_LOG), side="left")), t.s.size - 1)
    if top < big_j:
        n = top + 1.0
        past = math.exp(-n * n / (2.0 * t.sigma2[0]) - math.log(-math.expm1(-n / t.sigma2[0])))
        if not past <= 2.0 ** -60 * t.s[m_near]:
            t = _table(sigma)
            m_near = min(int(np.searchsorted(-t.s, -t.z * math.exp(-NEAR_LOG), side="left")), t.s.size - 1)
    return t, m_near


#: ``_near_tables`` computes at most this many weights in one array (its temporaries then stay
#: in cache: 3000 sigmas of 50 to 200, 0.104 ms a table against 0.134 one by one and 0.146
#: with 2^20 weights an array)
BATCH_WEIGHTS = 1 << 15


def _near_tables(sigmas: Sequence[float]) -> Iterator[tuple[int, tuple[_Table, int]]]:
    """(i, ``_near_table(sigmas[i])``) for every i, in some order. The tables that stop short of J
    are built together, those of alike sigmas as the rows of one array of weights (a few dozen
    numpy calls for a chunk of rows instead of for each row): the same values as one by one,
    since exp_neg_quotient is elementwise and suffix_sums runs along the rows, a row's zeros
    past its end changing none of its sums. A chunk's tables are views of its arrays, let go
    once the caller is done with them (make each PRV as its table comes: the tables of 2 x 10^4
    sigmas held at once would be 0.3 GB)."""
    tops = {}
    for i, sigma in enumerate(sigmas):
        big_j, top = _near_top(sigma)
        if top < big_j:
            tops[i] = top
        else:
            yield i, _near_table(sigma)
    batch = sorted(tops, key=tops.__getitem__)
    lo = 0
    while lo < len(batch):
        hi = lo + 1
        while hi < len(batch) and (hi - lo + 1) * (tops[batch[hi]] + 1) <= BATCH_WEIGHTS \
                and tops[batch[hi]] <= 1.25 * tops[batch[lo]]:
            hi += 1
        chunk = batch[lo:hi]
        sig = np.array([sigmas[i] for i in chunk])
        j = np.arange(tops[chunk[-1]] + 1, dtype=float)
        v_hi, v_lo = two_prod(sig, sig)
        w = exp_neg_quotient((j * j)[None, :], 2.0 * v_hi[:, None], 2.0 * v_lo[:, None])
        w[j[None, :] > np.array([tops[i] for i in chunk], dtype=float)[:, None]] = 0.0
        s_hi, s_lo = suffix_sums(w)
        for r, i in enumerate(chunk):
            end = tops[i]
            big_j = _near_top(sigmas[i])[0]
            t = _finish(big_j, j[:end + 1], w[r, :end + 1], s_hi[r, :end + 2], s_lo[r, :end + 2],
                        v_hi[r], v_lo[r])
            yield i, _near_table(sigmas[i], t)
        lo = hi


class _Loss:
    """The functions of one discrete Gaussian's loss lattice (``discrete_gaussian_lattice``), as
    the methods of one small object, which its Lattice holds whole (Lattice.fns): many rows hold
    their PRVs at once, and with ten closures and their cells a PRV took 2.7 kB, with this and
    five bound methods 1.46 kB, with this alone 1.05 kB (its tables let go; tracemalloc).

    The tail sums S_m for m <= m_near are held (``near``); ``release`` lets them go (many rows,
    once discretised: Lattice.release) and the next ``near`` makes them again, the same numbers
    (``_near_table`` is deterministic, and the tables built together are bit for bit these).
    Beyond m_near they are read from the whole table (``_table``: rebuilt when evicted, which only
    a tail cut below ~1e-34 asks for)."""

    __slots__ = ("sigma", "m_near", "big_j", "z", "v_hi", "v_lo", "_near")

    def __init__(self, sigma: float, t: _Table, m_near: int) -> None:
        self.sigma, self.m_near = sigma, m_near
        self.big_j = math.floor(sigma * math.sqrt(2.0 * E_MAX))
        self.z, (self.v_hi, self.v_lo) = t.z, t.sigma2
        self._near: np.ndarray | None = t.s[:m_near + 1].copy()  # (a copy: a view keeps the table)

    def near(self) -> np.ndarray:
        got = self._near
        if got is None:
            got = self._near = _near_table(self.sigma)[0].s[:self.m_near + 1].copy()
        return got

    def release(self) -> None:
        self._near = None

    def tail(self, m: np.ndarray) -> np.ndarray:
        """P(y >= m) for m >= 0 (clipped to J + 1), the kept lattice, as S_m / Z."""
        m = np.minimum(m, self.big_j + 1)
        if not m.size or int(m.max()) <= self.m_near:
            return self.near()[np.minimum(m, self.m_near)] / self.z
        return _table(self.sigma).s[m] / self.z

    def cut(self, taus: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Lattice.cut. m, the first index with S_m / Z <= tau (S_{J+1} = 0): cdf(-m) = S_m / Z
        <= tau and sf(m - 1) = S_m / Z <= tau, while cdf(-m + 1) and sf(m - 2) are above tau,
        the one at 0 (1 - S_1 / Z = (1 + w_0 / Z) / 2, above 1/2) as long as tau <= 1/2; and
        m >= 1 there, as S_0 / Z is that too. The same quotients as ``tail``'s."""
        taus = np.asarray(taus, dtype=float)
        near = self.near()
        m = np.searchsorted(-(near / self.z), -taus, side="left")
        far = m == near.size
        if far.any():
            m[far] = np.searchsorted(-(_table(self.sigma).s / self.z), -taus[far], side="left")
        return -m, m - 1, (m >= 1) & (m <= self.big_j + 1) & (taus <= 0.5)

    # (one tail lookup a point: S_|y| below 0, S_{y + 1} from 0 up; tail is elementwise, so the
    # values are those of looking up both and choosing)
    def cdf(self, y: np.ndarray) -> np.ndarray:
        """P(y' <= y)."""
        below = y < 0
        v = self.tail(np.where(below, -y, y + 1))
        return np.where(below, v, 1.0 - v)

    def sf(self, y: np.ndarray) -> np.ndarray:
        """P(y' > y)."""
        up = y >= 0
        v = self.tail(np.where(up, y + 1, -y))
        return np.where(up, v, 1.0 - v)

    def pmf(self, y: np.ndarray) -> np.ndarray:
        y = np.abs(np.asarray(y, dtype=float))
        w = exp_neg_quotient(y * y, 2.0 * self.v_hi, 2.0 * self.v_lo)
        return np.where(y <= self.big_j, w / self.z, 0.0)

    @staticmethod
    def stack(losses: "Sequence[_Loss]") -> "_Stack":
        """Many rows' tail sums side by side (numerics/lattice_batch.py)."""
        return _Stack(losses)


class _Stack:
    """The cdf and sf of many discrete Gaussians' loss lattices (``_Loss``), each at its own
    points, in one pass: the near tail sums of all of them in one array. Row ``r``'s values are
    the ones its own ``cdf`` and ``sf`` give (the same lookups and the same quotient) wherever
    every point that row asks for is within its near sums; ``far`` marks the points that are
    not (the row's own functions then read its whole table)."""

    def __init__(self, losses: "Sequence[_Loss]") -> None:
        nears = [loss.near() for loss in losses]
        self.table = np.concatenate(nears)
        sizes = np.fromiter((a.size for a in nears), dtype=np.int64, count=len(nears))
        self.offset = np.cumsum(sizes) - sizes
        self.m_near = np.fromiter((loss.m_near for loss in losses), dtype=np.int64, count=len(nears))
        self.cap = np.fromiter((loss.big_j + 1 for loss in losses), dtype=np.int64, count=len(nears))
        self.z = np.fromiter((loss.z for loss in losses), dtype=float, count=len(nears))
        self.sizes, self.nears = sizes, nears

    def cut(self, taus: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``_Loss.cut`` of each row (``taus``: one row of tail masses per loss), as (lo, hi, ok)
        arrays of that shape, each row's the same search on the same keys as its own; ``ok`` is
        False also where its own cut would read its whole table."""
        m = np.empty(taus.shape, dtype=np.int64)
        for r, near in enumerate(self.nears):
            m[r] = np.searchsorted(-(near / self.z[r]), -taus[r], side="left")
        ok = (m >= 1) & (m <= self.cap[:, None]) & (taus <= 0.5) & (m < self.sizes[:, None])
        return -m, m - 1, ok

    def cdf_sf(self, counts: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(cdf, sf, far) at lattice indices ``y``: the first ``counts[0]`` points the first
        loss's, the next ``counts[1]`` the second's, and so on. One lookup serves both, as
        ``_Loss.cdf`` and ``_Loss.sf`` read the same sum: S_|y| below 0, S_{y + 1} from 0 up."""
        below = y < 0
        m = np.minimum(np.where(below, -y, y + 1), np.repeat(self.cap, counts))
        near = np.repeat(self.m_near, counts)
        v = self.table[np.repeat(self.offset, counts) + np.minimum(m, near)] / np.repeat(self.z, counts)
        w = 1.0 - v
        return np.where(below, v, w), np.where(below, w, v), m > near


def discrete_gaussian_lattice(sigma: float, sensitivity: int, near_table: tuple[_Table, int] | None = None
                              ) -> tuple[Lattice, _Table]:
    """The loss lattice Y = a + b y, y in [-J, J], of the pair N_Z(sensitivity) vs N_Z(0)
    (``near_table``: ``_near_table(sigma)`` when made already)."""
    t, m_near = near_table or _near_table(sigma)
    loss = _Loss(sigma, t, m_near)  # (it holds the near tail sums, not the table)
    big_j = loss.big_j
    a = sensitivity * sensitivity / (2.0 * sigma * sigma)
    b = sensitivity / (sigma * sigma)
    # (cdf(y) reads S_{|y|}, sf(y) S_{y + 1}: both held for |y| < m_near)
    quick = (-min(m_near - 1, big_j), min(m_near - 1, big_j))
    return Lattice(a, b, -big_j, big_j, loss, 1.0, quick, (m_near + 1) * 8), t


@dataclass(frozen=True, slots=True)
class DiscreteGaussian(Mechanism):
    """Discrete Gaussian noise added to an integer-valued query (CKS 2020)."""

    kind = "discrete_gaussian"
    examples = ({"sigma": 0.5}, {"sigma": 3.0, "sensitivity": 2})
    title = "Discrete Gaussian"
    menu_order = 12

    sigma: float = param(Param("Noise σ", "integer noise; σ in units of the query",
                               "scale σ of the discrete Gaussian noise, P(x) ∝ exp(−x²/(2σ²)) on the "
                               f"integers (> 0, at most {MAX_SIGMA:g})", "σ", 1.0, lo_open=True,
                               hi=MAX_SIGMA, search=Search(False, 0.05, MAX_SIGMA)))
    sensitivity: int = param(INTEGER_SENSITIVITY, default=1)

    @property
    def a(self) -> float:
        """The loss at y = 0, Delta^2 / (2 sigma^2) = E[Y] (inf when sigma^2 underflows)."""
        # (Python floats, the same operations as numpy's: its errstate cost 9 us a call, and
        # many rows call this five times each)
        try:
            return float(self.sensitivity) ** 2 / (2.0 * float(self.sigma) ** 2)
        except (OverflowError, ZeroDivisionError):
            return math.inf

    def is_blatant(self) -> bool:
        """No noise to speak of: the loss at y = 0 is above BLATANT_LOSS (sigma below ~1e-6 per
        unit of sensitivity); taken as +inf, an upper bound that no delta of interest tells apart
        (delta(eps) = 1 - e^(eps - a) for eps < a: below 1 - e^-1e12 only past 1e12 nats)."""
        return self.a > BLATANT_LOSS

    def _prv(self, order: str, near_table: tuple[_Table, int] | None = None) -> PRV:
        a = self.a
        if self.is_blatant():
            return point_mass(math.inf)
        lat, t = discrete_gaussian_lattice(self.sigma, self.sensitivity, near_table)
        # (a lattice of one point, sigma below 0.027: an atom, not a step function)
        return lattice_prv(lat, t.left_out, a, 4 * 2.0 ** -53 * a, as_atoms=lat.hi == lat.lo)

    @classmethod
    def prvs(cls, mechanisms: Sequence[Mechanism], order: str = "remove") -> list[PRV]:
        """``prv(order)`` of each (add/remove), their weight tables built together
        (``_near_tables``: 0.104 ms a table against 0.134 one by one at sigma 50 to 200)."""
        if order not in ORDERS:
            raise ValueError(f"order must be one of {ORDERS}, got {order!r}")
        rows = [m for m in mechanisms if isinstance(m, DiscreteGaussian)]
        if len(rows) < len(mechanisms):
            raise TypeError("DiscreteGaussian.prvs takes discrete Gaussians only")
        out = [m._prv(order) if m.is_blatant() else None for m in rows]
        live = [i for i, m in enumerate(rows) if not m.is_blatant()]
        held = 0
        for i, table in _near_tables([rows[i].sigma for i in live]):
            prv = out[live[i]] = rows[live[i]]._prv(order, table)
            lat = getattr(prv, "lattice", None)
            if lat is not None and lat.release is not None:
                held += lat.held
                if held > KEEP_BYTES:  # (past it, each PRV's tables are made when discretised)
                    lat.release()
        return out  # type: ignore[return-value]

    def loss_bounds(self, order: str = "remove") -> tuple[float, float]:
        """(0, inf): the PRV puts the weights past J at +infinity (``_Table.left_out``, about
        e^-700 of the mass, never 0: so its largest loss is +inf), which only its table gives
        exactly (about 0.1 ms a row)."""
        if self.is_blatant():
            return Mechanism.loss_bounds(self, order)
        return 0.0, math.inf

    def under(self, relation: Relation) -> "DiscreteGaussian":
        """Replace-one: the integer query moves by up to 2 Delta; k records: k Delta (add/remove)
        or 2 k Delta (replace-one); the pair at the largest shift dominates (module docstring)."""
        if relation.plain:
            return self
        return DiscreteGaussian(self.sigma, self.sensitivity * group_factor(relation))

    def noise_halfwidth(self, level: float = 0.95) -> tuple[float, str]:
        """The smallest whole m with P(|X| <= m) >= level: P(|X| > m) = 2 S_{m+1} / Z from the
        weight table's tail sums (plus the left-out mass, to be safe)."""
        t = _table(self.sigma)
        outside = 2.0 * t.s[1:] / t.z + t.left_out  # P(|X| > m), m = 0..J, decreasing
        m = int(np.argmax(outside <= 1.0 - level)) if outside[-1] <= 1.0 - level else t.s.size - 1
        return float(m), "query units (whole numbers)"

    def rdp(self, orders: np.ndarray) -> np.ndarray:
        return orders * self.a  # a Delta^2 / (2 sigma^2)

    def tail_rho(self) -> float | None:
        return self.a

    def gdp_mu2(self) -> float:
        var = _table(self.sigma).var
        return math.inf if var <= 0 else self.sensitivity ** 2 / var
