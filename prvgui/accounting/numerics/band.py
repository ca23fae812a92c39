"""The low frequencies of a row's transform, without a full-length FFT.

A composition of many steps is smooth: its transform prod_i X_i^{k_i} is below
e^-700 beyond a few hundred frequencies even when the window needs millions of
mesh points. This module proves such a band limit and computes the rows'
transforms only inside it, so the cost no longer grows with the window.

Band limit (a rigorous bound, not an estimate). For a pmf p on the circle of n
points, X_m (1 - w^m) = sum_j (p_j - p_{j-1}) w^{mj} with w = e^{-2 pi i / n},
so |X_m| <= TV1 / (2 sin(pi m / n)), and with second differences
|X_m| <= TV2 / (4 sin^2(pi m / n)), for 0 < m < n. Both bounds fall as m rises
to n / 2, so the first m where sum_i k_i log(bound_i) <= -700 bounds every
later coefficient of the product (the rfft needs m <= n / 2 only).

Transform on the band (``low_dft``). Cut the row into blocks of B cells with
centres c_b; within a block, e^{-2 pi i m (j - c_b) / n} = sum_r (-i x_m v_j)^r / r!
with x_m = pi m B / n <= 0.4 and v_j = (j - c_b) / (B / 2) in [-1, 1], so

    X_m = sum_r (-i x_m)^r / r! * sum_b e^{-2 pi i m (c_b - centre) / n} mu_{r,b},
    mu_{r,b} = sum_{j in b} p_j v_j^r,

truncated once x^{R+1} / (R+1)! < 1e-18. Every sum is a numpy pairwise
reduction (error <= (20 + log2 length) u times the sum of magnitudes, which is
at most e^x sum p), so each coefficient carries an absolute error below
``err_abs``, returned with it; compose.power_error turns these into a bound on
the composed tail sums.
"""
from __future__ import annotations

import math
from typing import Callable, Sequence

import numpy as np

from .discretize import DiscretePRV
from .packed import Row, cells, dense

#: the log-magnitude below which the composed transform is dropped (as in compose.power)
LOG_FLOOR = -700.0
#: x_m = pi m B / n stays below this inside the band
X_MAX = 0.4
#: low_dft works on this many (frequency, block) pairs at a time
DFT_CHUNK = 1 << 20


def _tv(d: DiscretePRV) -> tuple[float, float, float]:
    """Total variation of the first and second differences of the zero-padded pmf of the
    single-width cells (all of them without wide cells), rounded up by a relative 1e-12 for
    the summation, and the mass of the rest (wide cells' middles, atoms outside): the
    transform is that of the fine cells plus one of modulus at most that mass."""
    lo, hi = (0, d.pmf.size) if d.fine is None else d.fine
    p = np.zeros(hi - lo + 4)
    p[2:-2] = d.pmf[lo:hi]
    d1 = np.diff(p)
    tv1 = float(np.abs(d1).sum())
    tv2 = float(np.abs(np.diff(d1)).sum())
    rest = float(d.pmf[d.sparse].sum()) if d.sparse is not None else 0.0
    return tv1 * (1 + 1e-12), tv2 * (1 + 1e-12), rest * (1 + 1e-12)


def _log_bound(tv: tuple[float, float, float], s: float) -> float:
    """log of the bound on |X_m| with s = sin(pi m / n): that of the fine cells' transform
    plus the rest's mass (triangle inequality)."""
    tv1, tv2, rest = tv
    b = min(1.0, min(tv1 / (2.0 * s), tv2 / (4.0 * s * s)) + rest)
    return math.log(b) if b > 0 else -math.inf


def _tv_band(tvs: list[tuple[tuple[float, float, float], int]], n: int) -> int | None:
    """Smallest M from the total-variation bounds alone (None if they never reach e^-700)."""
    def log_prod(s: float) -> float:
        return sum(k * _log_bound(tv, s) for tv, k in tvs)

    if log_prod(1.0) > LOG_FLOOR:
        return None
    lo, hi = 0.0, 1.0  # log_prod(hi) <= floor < log_prod(lo)
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if log_prod(mid) <= LOG_FLOOR:
            hi = mid
        else:
            lo = mid
    m = math.ceil(n * math.asin(hi) / math.pi)
    # guard the float rounding of asin and of the product of sines
    while m > 1 and log_prod(math.sin(math.pi * (m - 1) / n)) <= LOG_FLOOR:
        m -= 1
    while m <= n // 2 and log_prod(math.sin(math.pi * m / n)) > LOG_FLOOR:
        m += 1
    return max(1, m) if m <= n // 2 else None


def tv_band(rows: Sequence[tuple[Row, int]], n: int) -> int | None:
    """The total-variation band M_tv of ``band_limit`` (an upper bound on the band; None when
    the rows do not fit the circle or no such band is found)."""
    if any(cells(d) + 4 > n for d, _ in rows):
        return None
    dense_rows = [(dense(d), k) for d, k in rows]
    if _stays_above_floor(dense_rows):
        return None  # (as _tv_band finds, without the rows' differences)
    return _tv_band([(_tv(d), k) for d, k in dense_rows], n)


def _stays_above_floor(rows: Sequence[tuple[DiscretePRV, int]]) -> bool:
    """True when the total-variation bounds surely stay above e^LOG_FLOOR even at the highest
    frequency (s = 1), where ``_tv_band`` gives up: a screen from each row's largest fine
    mass m over its W fine cells, which costs one pass instead of _tv's seven (a tree's groups
    of many narrow rows: 10^4 discrete Gaussians spent 0.3 s in _tv, for no band).

    The zero-padded fine masses rise from 0 to m and fall back, so tv1 >= 2 m; their first
    differences go from 0 to a step of at least m / W and back, so tv2 >= 2 m / W. The bound
    at s = 1 is then at least min(1, m / (2 W)) and its log sum at least that of
    min(1, m / (4 W)) (a factor 2 for the rounding of these few operations); the screen asks
    for a margin of 100 on top. False (decide by _tv) whenever in doubt."""
    total = 0.0
    for d, k in rows:
        lo, hi = (0, d.pmf.size) if d.fine is None else d.fine
        if hi <= lo:
            return False
        m = float(d.pmf[lo:hi].max())
        if not m > 0:
            return False
        total += k * math.log(min(1.0, m / (4.0 * (hi - lo))))
        if total <= LOG_FLOOR + 100.0:
            return False
    return True


def band_limit(rows: Sequence[tuple[Row, int]], n: int) -> int | None:
    """Smallest M such that prod_i |X_i,m|^{k_i} <= e^-700 for every M <= m <= n / 2 (up to
    the rigour of the bounds below), or None when no such M below n / 2 is found or the rows
    do not fit the circle.

    Beyond M_tv the total-variation bounds hold. Below it, each row's transform is
    evaluated on [0, M_tv) from block moments by short FFTs (length n / B, B a power of
    two dividing n), with an error bound from the normwise FFT bound (per coefficient at
    most 8 u log2(L) sqrt(L) |mu_r|_2); the band ends where the product of
    min(1, |X~| + error) stays below e^-700 up to M_tv. Only a bound is needed here, so the
    Taylor series stops at a remainder of 7 / K (K the total count: it moves the log of the
    product by at most about 7 of its 700), not at low_dft's 1e-18.
    """
    m_tv = tv_band(rows, n)
    if m_tv is None or m_tv <= 32:
        return m_tv
    b_size, length, r_max, rem = _refinement(rows, n, m_tv)
    if length > (1 << 22):
        return m_tv  # no cheap refinement
    u = 2.0 ** -53
    x = math.pi * m_tv * b_size / n
    log_env = np.zeros(m_tv)
    mm = np.arange(m_tv, dtype=float)
    for row, k in rows:
        d = dense(row)
        mu, _, err_tail = _moments(d, b_size, r_max, np.float64, pairwise=False)
        coef = np.ones(m_tv, dtype=complex)
        acc = np.zeros(m_tv, dtype=complex)
        mass = float(np.sum(np.abs(d.pmf)))
        err = (rem + u * (_gamma(b_size) + 3 * r_max + 8) * math.exp(x)) * mass \
            + err_tail * math.exp(x)  # moments
        for r in range(r_max + 1):
            f = np.fft.rfft(mu[r], length)[:m_tv]
            acc += coef * f
            err += (x ** r / math.factorial(r)) * 8 * u * math.log2(length) * math.sqrt(length) \
                * float(np.sqrt(np.dot(mu[r], mu[r])))
            coef *= (-1j * (math.pi * b_size / n)) * mm / (r + 1)
        with np.errstate(divide="ignore"):
            log_env += k * np.log(np.minimum(1.0, np.abs(acc) + err))
    above = np.flatnonzero(log_env > LOG_FLOOR)
    return int(above[-1]) + 1 if above.size else 1


def _refinement(rows: Sequence[tuple[Row, int]], n: int, m_tv: int) -> tuple[int, int, int, float]:
    """band_limit's refinement below M_tv: (block size B, FFT length n / B, Taylor terms R, the
    series' remainder)."""
    b_size = 1
    while n % (2 * b_size) == 0 and 2 * b_size <= X_MAX * n / (math.pi * m_tv):
        b_size *= 2
    # an error e on |X| moves k log|X| by about k e near the floor: keep that below 7 nats
    r_max, rem = _terms(math.pi * m_tv * b_size / n, min(1e-3, 7.0 / sum(k for _, k in rows)))
    return b_size, n // b_size, r_max, rem


def _terms(x: float, tol: float = 1e-18) -> tuple[int, float]:
    """(R, x^(R+1) / (R+1)!) with the remainder of the exponential series below ``tol``."""
    r_max, term = 0, x
    while term > tol:
        r_max += 1
        term *= x / (r_max + 1)
    return r_max, term


def _moments(d: DiscretePRV, b_size: int, r_max: int, ftype, pairwise: bool = True
             ) -> tuple[np.ndarray, int, float]:
    """mu[r, b] = sum over block b of p_j v_j^r, v_j in [-1, 1] the offset from the block's
    centre in half-blocks; the number of blocks; and a bound on the float error of the part
    summed outside the fine cells.

    The fine cells are reduced pairwise by blocks (numpy's sum along a row). A row with
    coarse tails (discretize.py) is mostly zeros elsewhere: its few nonzero cells there
    (``d.sparse``) are laid out in a row per block and summed pairwise as well; without
    ``pairwise`` (or when that layout would be large) they are summed block by block in
    ftype, at most (cells in a block + r_max + 4) u times their mass: cheaper, and enough
    where the bound matters less (long double, band_limit's search)."""
    pmf = d.pmf
    w = pmf.size
    nb = -(-w // b_size)
    v = ((np.arange(b_size, dtype=ftype) - (b_size - 1) / 2) / (b_size / 2)).astype(ftype)
    mu = np.zeros((r_max + 1, nb), dtype=ftype)
    lo, hi = (0, w) if d.fine is None else d.fine
    b0, b1 = lo // b_size, -(-hi // b_size)
    blocks = np.zeros((b1 - b0) * b_size, dtype=ftype)
    blocks[lo - b0 * b_size:hi - b0 * b_size] = pmf[lo:hi]
    blocks = blocks.reshape(b1 - b0, b_size)
    mu[0, b0:b1] = blocks.sum(axis=1)
    t = blocks.copy()
    for r in range(1, r_max + 1):
        t *= v
        mu[r, b0:b1] = t.sum(axis=1)
    if d.sparse is None or d.sparse.size == 0:
        return mu, nb, 0.0
    idx = d.sparse
    blk = idx // b_size
    vj = ((idx % b_size) - (b_size - 1) / 2) / (b_size / 2)
    tail = float(pmf[idx].sum())
    counts = np.bincount(blk, minlength=nb)
    width = int(counts.max())
    u_f = float(np.finfo(ftype).eps) / 2
    # adding them to the blocks the fine cells share rounds those once more (in ftype)
    shared = u_f * float(mu[0].sum())
    first = np.cumsum(counts) - counts  # position of each block's first sparse cell
    if pairwise and nb * width <= 4 * idx.size + (1 << 20):
        # a row of ``width`` slots per block, summed pairwise like the fine cells
        rank = np.arange(idx.size) - first[blk]
        vals = np.zeros((nb, width), dtype=ftype)
        vals[blk, rank] = pmf[idx]
        vv = np.zeros((nb, width), dtype=ftype)
        vv[blk, rank] = vj
        for r in range(r_max + 1):
            mu[r] += vals.sum(axis=1)
            vals *= vv
        # v^r and its products: (r + 1) u; the pairwise sums
        return mu, nb, u_f * (_gamma(width) + r_max + 4) * tail + shared
    # each block's cells summed in some order (numpy's reduceat), in ftype: at most ``width``
    # roundings of a partial sum of the block's mass
    live = np.flatnonzero(counts)
    vals = pmf[idx].astype(ftype)
    vv = vj.astype(ftype)
    for r in range(r_max + 1):
        mu[r, live] += np.add.reduceat(vals, first[live])
        vals *= vv
    return mu, nb, u_f * (width + r_max + 4) * tail + shared


def worth_it(n: int, band: int, cells: int) -> bool:
    """Whether low_dft on ``band`` frequencies beats a full FFT of length n (cost model: one
    term of low_dft's sums costs about five n log2 n units of the FFT)."""
    b_size = max(1, min(cells, int(X_MAX * n / (math.pi * band))))
    r_max, _ = _terms(math.pi * band * b_size / n)
    terms = band * -(-cells // b_size) * (r_max + 1)
    return 5 * terms < n * math.log2(max(n, 2))


#: a direct sum's cost per cell against an FFT's per n log2 n (may_pay's choice; measured)
PROBE_CELL = 125.0


def may_pay(rows: Sequence[tuple[Row, int]], n: int, cap: int, m_tv: int) -> bool:
    """Whether the band of ``rows`` on n points (at most ``m_tv``, tv_band) could be small
    enough (at most ``cap`` and where ``worth_it`` holds for some row) for the band path to pay;
    False only when the rows' transforms, raised to their counts, stay above e^-700 at the
    first frequency past the largest such band (one direct sum per row, tried only when it
    costs less than band_limit's refinement), so that band_limit's proof would be wasted. A
    screen for speed: a wrong False only costs the band path."""
    cap = min(cap, m_tv, n // 2)
    if cap < 1 or any(worth_it(n, cap, cells(d)) for d, _ in rows):
        return cap >= 1  # (worth_it falls as the band grows: any band up to cap pays)
    _, length, r_max, _ = _refinement(rows, n, m_tv)
    if PROBE_CELL * sum(cells(d) for d, _ in rows) > len(rows) * (r_max + 1) * length * math.log2(length):
        return True  # the proof is cheaper than the probe
    lo, hi = 0, cap  # the largest band at which some row pays, by bisection
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if any(worth_it(n, mid, cells(d)) for d, _ in rows) else (lo, mid)
    if lo == 0:
        return False
    m, log_prod = lo + 1, 0.0
    for row, k in rows:
        d = dense(row)
        j = np.arange(d.pmf.size, dtype=np.int64)
        x = abs(complex(np.dot(d.pmf, np.exp((-2j * np.pi / n) * ((j * m) % n)))))
        log_prod += k * math.log(x) if x > 0 else -math.inf
        if log_prod <= LOG_FLOOR + 1:
            return True  # below the floor there: the band may end before m
    return False


def _gamma(length: int) -> float:
    """Error factor of a numpy pairwise sum of ``length`` terms, in units of u."""
    return 20.0 + math.log2(max(length, 2))


def low_dft(d: DiscretePRV, n: int, band: int, extended: bool = False,
            progress: Callable[[float], None] | None = None) -> tuple[np.ndarray, int, np.ndarray]:
    """(X_m for 0 <= m < band, grid index of circle position 0, absolute error bound of each);
    ``progress`` hears the fraction of the band done.

    X is the transform of the row on the circle of n points, centred like
    compose.row_spectrum (position 0 is the cell nearest the row's mean).
    """
    ftype: type[np.floating] = np.longdouble if extended else np.float64
    ctype: type[np.complexfloating] = np.clongdouble if extended else np.complex128
    u = float(np.finfo(ftype).eps) / 2
    pmf = d.pmf
    w = pmf.size
    centre = d.centre
    b_size = max(1, min(w, int(X_MAX * n / (math.pi * band))))
    x_max = math.pi * band * b_size / n
    r_max, term = _terms(x_max)
    mu, nb, err_tail = _moments(d, b_size, r_max, ftype, pairwise=not extended)
    # phases of the block centres, exactly reduced: 2 (c_b - centre) = 2 B b + B - 1 - 2 centre
    two_c = (2 * b_size * np.arange(nb, dtype=np.int64) + (b_size - 1 - 2 * centre)) % (2 * n)
    pi = 4 * np.arctan(np.ones((), dtype=ftype))  # pi to the working precision
    m = np.arange(band, dtype=np.int64)
    out = np.zeros(band, dtype=ctype)
    chunk = max(1, DFT_CHUNK // nb)
    for lo in range(0, band, chunk):
        mm = m[lo:lo + chunk]
        turns = (mm[:, None] * two_c[None, :]) % (2 * n)  # (m (c_b - centre) / n) in 1/(2n) turns
        e = np.exp(-1j * (turns.astype(ftype) * (pi / n))).astype(ctype)
        x = (pi * b_size / n) * mm.astype(ftype)
        coef = np.ones(mm.size, dtype=ctype)
        terms = []
        for r in range(r_max + 1):
            terms.append(coef * (e * mu[r][None, :]).sum(axis=1))
            coef = coef * (-1j * x) / (r + 1)
        acc = terms.pop()
        for t in reversed(terms):  # smallest terms first: the partial sums stay small
            acc = t + acc
        out[lo:lo + chunk] = acc
        if progress is not None:
            progress(min(1.0, (lo + chunk) / band))
    mass = float(np.sum(np.abs(pmf)))
    # Relative to |c_r| sum_b |mu_r,b| <= x^r / r! mass, term r carries: the moments 2 r u (v
    # rounded once, r products) and the block sums; the phases (angle < 2 pi, two roundings,
    # exp) 20 u, their products u and the sums over the blocks; the Taylor coefficient c_r 9 r u
    # (x to 4 u, a complex product and division per step) and its product 3 u. Summed with
    # weights x^r / r!: e^x (gamma_B + gamma_nb + 24 + 11 x). The terms are added smallest
    # first, so the partial sums hold sum_r (r + 1) |term_r| <= e^x (1 + x) mass in all: one u
    # each. Second-order terms: the 1% and 4 u of margin.
    # Each frequency's bound uses its own x_m = pi m B / n (the low ones, which weigh most in
    # compose.power_error, have x_m near 0).
    xm = math.pi * b_size / n * np.arange(band, dtype=float) * (1 + 1e-12)
    grow_m = np.exp(xm)
    err = 1.01 * u * (_gamma(b_size) + _gamma(nb) + 29 + 12 * xm) * grow_m * mass + term * mass \
        + err_tail * grow_m
    return out, d.start + centre, err


def sparse_worth(n: int, band: int, nonzero: int, cells: int) -> bool:
    """Whether sparse_dft (one complex exponential per frequency and nonzero cell, about four
    units each) beats both low_dft (worth_it's five units per term) and a full FFT."""
    b_size = max(1, min(cells, int(X_MAX * n / (math.pi * band))))
    low = 5 * band * -(-cells // b_size) * (_terms(math.pi * band * b_size / n)[0] + 1)
    return 4 * band * nonzero < min(low, n * math.log2(max(n, 2)))


def sparse_dft(d: DiscretePRV, n: int, band: int) -> tuple[np.ndarray, int, np.ndarray]:
    """low_dft's (X_m for 0 <= m < band, grid index of position 0, absolute error bound of
    each) summed directly over the row's nonzero cells: for rows whose mass sits in a few
    cells (atoms, such as randomized response's two, spread over a row of thousands of empty
    cells that low_dft's blocks would still walk through).

    X_m = sum_j p_j e^{-2 pi i t / n} with t = m (j - centre) mod n exact in integers. The
    angle 2 pi t / n < 2 pi is rounded twice (13 u), the exponential adds 2 u and the product
    with p_j one more: each term is within 16 u |p_j| of its exact value; the pairwise sum over
    the nonzero cells adds gamma(nz) u of the sum of magnitudes (as low_dft's sums)."""
    nz = np.flatnonzero(d.pmf)
    p = d.pmf[nz]
    off = (nz.astype(np.int64) - d.centre) % n
    m = np.arange(band, dtype=np.int64)
    out = np.zeros(band, dtype=np.complex128)
    if nz.size:
        step = (-2.0 * math.pi) / n
        chunk = max(1, DFT_CHUNK // nz.size)
        for lo in range(0, band, chunk):
            turns = (m[lo:lo + chunk, None] * off[None, :]) % n  # < n: exact as floats too
            out[lo:lo + chunk] = (np.exp(1j * (turns * step)) * p[None, :]).sum(axis=1)
    mass = float(np.sum(np.abs(p)))
    u = 2.0 ** -53
    err = np.full(band, 1.01 * u * (_gamma(max(nz.size, 1)) + 16) * mass)
    return out, d.start + d.centre, err


def band_logs(x: np.ndarray, err: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(log(|X| + err), log|X|, float error of one power per unit count) of a row's band
    transform, for product_error. A power X^k is evaluated as exp(k log|X| + i k arg X):
    log and arg carry u (|value| + 1) each, so its relative error is at most
    k u (|log|X|| + |arg X| + 4), u that of X's precision (long double when extended); the
    final rounding to float64 is product_error's 4 u."""
    mag = np.abs(x).astype(float)
    with np.errstate(divide="ignore"):
        log_mag = np.log(mag)
    u = float(np.finfo(x.real.dtype).eps) / 2  # power() works in the transform's precision
    fp = u * (np.abs(log_mag) + np.abs(np.angle(x).astype(float)) + 4.0)
    return np.log(mag + err), log_mag, fp


def product_error(log_up: np.ndarray | float, log_val: np.ndarray | float, kept: np.ndarray,
                  fp: np.ndarray | float = 0.0) -> np.ndarray:
    """Bound on |R_m - R~_m| for m below the band, R = prod X_i^{k_i} exactly and R~ the
    computed product (``kept``: compose.power zeroes the coefficients below e^-700).

    With |X_i - X~_i| <= e_i: |prod X^k - prod X~^k| <= prod (|X~| + e)^k - prod |X~|^k
    = e^{log_val} expm1(log_up - log_val) (arguments: sums of k log(|X~| + e) and of
    k log|X~|); a zeroed coefficient contributes its whole bound e^{log_up}; the float
    evaluation of a kept one adds sum_i k_i fp_i + 4 u of its size (band_logs)."""
    log_up = np.asarray(log_up, dtype=float)
    log_val = np.broadcast_to(np.asarray(log_val, dtype=float), log_up.shape)
    with np.errstate(invalid="ignore", over="ignore", under="ignore"):
        up = np.exp(log_up)
        out = np.where(np.isfinite(log_val), np.exp(log_val) * np.expm1(log_up - log_val), up)
    mags = np.zeros(log_up.size)
    mags[:min(kept.size, mags.size)] = np.abs(kept[:mags.size])
    dropped = mags == 0
    out[dropped] = up[dropped]
    fp = np.broadcast_to(np.asarray(fp, dtype=float), log_up.shape)
    return out + (fp + 4 * 2.0 ** -53) * up
