"""L2 sensitivity of a matrix-factorisation mechanism (DP-FTRL, DP-MF) under participation patterns.

The mechanism releases C x + z, z Gaussian, with C an n_rows x n strategy matrix and x the n steps'
clipped gradient sums. A record takes part in at most k of the n steps (k = ``participations``),
any two of them at least b steps apart (b = ``min_separation``; b = 1: any distinct steps), and
adds a vector g_i with ||g_i|| <= 1 (clipping norm 1) at each step i of its pattern S. The
sensitivity is sup over S and g of ||sum_{i in S} C[:, i] g_i^T||_F; with G = C^T C its square is
sup sum_{i, j in S} G_ij <g_i, g_j> (Choquette-Choo, McMahan, Rush, Thakurta, "Multi-epoch matrix
factorization mechanisms for private machine learning", ICML 2023, Sec. 2; jax_privacy's
``matrix_factorization.sensitivity``). The methods, and when each is exact:

* k = 1: the largest column norm of C (exact);
* few patterns (at most ``ENUMERATION_LIMIT``, counted first: C(n - (s-1)(b-1), s) patterns of s
  steps, s = 1..k): every pattern enumerated. The bound is max_S sum_{i,j in S} |G_ij|, since
  |<g_i, g_j>| <= 1. It is exact when the pattern entries of G are >= 0 (all g_i equal attains it),
  and otherwise when a sign vector u in {-1, +1}^S found by coordinate ascent (g_i = u_i e,
  realisable) reaches it to rounding;
* otherwise the bound max over separated sets S of at most k steps of sum_{i in S} w_i, with
  w_i = G_ii + the k-1 largest |G_ij| over |i - j| >= b, by dynamic programming in O(n k). Exact
  when G_ij = 0 for |i - j| >= b (disjoint bands: then only the diagonal counts).

"At most k" is kept throughout: a short pattern inside no k-step pattern (e.g. {50} in 201 steps
with k = 3, b = 100) can beat every pattern of exactly k steps. Values are rounded up to cover the
floating-point error of C^T C and the sums (a relative (n_rows + k) k^2 2^-52, then one ulp);
"exact" means exact up to that rounding. Uses numpy and scipy only.
"""
from __future__ import annotations

import itertools
import math
import operator
from dataclasses import dataclass
from typing import Callable, Iterator, Sequence

import numpy as np
from scipy import signal

#: enumerate every pattern when there are at most this many (all sizes 1..k together)
ENUMERATION_LIMIT = 200_000
#: toeplitz_sensitivity builds the n x n matrix up to this n (beyond it: the structured bound)
DENSE_LIMIT = 2048
_TOL = 1e-9  # two bounds "agree to rounding" when the lower is within this relative distance


@dataclass(frozen=True)
class Sensitivity:
    """The L2 sensitivity at clipping norm 1 (multiply by the clipping norm for others).

    ``value`` is a certified upper bound on the sup; ``exact`` is True when a realisable pattern
    and choice of vectors attains it (to rounding); ``method`` names how it was found."""

    value: float
    exact: bool
    method: str


def max_patterns(n: int, b: int) -> int:
    """The most participations n steps allow when any two are at least b steps apart."""
    return (n - 1) // b + 1


def matrix_sensitivity(C: np.ndarray, participations: int = 1, min_separation: int = 1) -> Sensitivity:
    """Sensitivity of the strategy matrix C (n_rows x n, column i = step i) when a record takes part
    in at most ``participations`` steps, any two at least ``min_separation`` steps apart."""
    C = np.asarray(C, dtype=float)
    if C.ndim != 2:
        raise ValueError(f"the strategy matrix must have two dimensions (got {C.ndim})")
    rows, n = C.shape
    k, b = _check(n, participations, min_separation)
    if not np.isfinite(C).all():
        raise ValueError("the strategy matrix has an entry that is not a finite number")
    if k == 1:
        return Sensitivity(_round_up(float(np.einsum("ij,ij->j", C, C).max()), rows), True,
                           "largest column norm")
    G = C.T @ C
    idx = np.arange(n)
    far = np.abs(idx[:, None] - idx[None, :]) >= b  # the pairs two participations can form
    couplings = G[far]

    def weights() -> np.ndarray:
        return np.diag(G) + _top_sums(np.where(far, np.abs(G), 0.0), k - 1)

    return _solve(n, k, b, lambda i, j: G[i, j], weights, nonneg=bool((couplings >= 0).all()),
                  banded=not couplings.any(), terms=(rows + k) * k * k)


def toeplitz_sensitivity(coefficients: Sequence[float], n: int, participations: int = 1,
                         min_separation: int = 1) -> Sensitivity:
    """Sensitivity of the n x n lower-triangular banded Toeplitz strategy C[i, j] = c[i - j] for
    0 <= i - j < len(c), without building it when n > ``DENSE_LIMIT``.

    Column j's squared norm is sum_{d < min(len(c), n - j)} c_d^2. With len(c) <= b (after dropping
    trailing zeros) the columns of a pattern have disjoint supports: the sum of the k largest
    separated squared column norms, exact. Otherwise, for n <= ``DENSE_LIMIT``, the matrix is built
    and handed to ``matrix_sensitivity``. For larger n the DP bound is taken with the couplings
    |G_ij| <= |R(|i - j|)|, R the autocorrelation of c (the coupling of two uncut columns, by FFT):
    for c >= 0 a cut-off column's couplings are partial sums of nonnegative terms, so no larger;
    for signed c every column is first extended to its full length (adding rows never lowers the
    norm), so G_ii = ||c||^2. This bound is not claimed exact, and patterns are not enumerated."""
    k, b = _check(n, participations, min_separation)
    c = np.asarray(coefficients, dtype=float).ravel()[:n]
    if c.size == 0:
        raise ValueError("the Toeplitz strategy needs at least one coefficient")
    if not np.isfinite(c).all():
        raise ValueError("the Toeplitz strategy has a coefficient that is not a finite number")
    nonzero = np.flatnonzero(c)
    c = c[: nonzero[-1] + 1] if nonzero.size else c[:1]
    L = c.size
    sq = np.concatenate(([0.0], np.cumsum(c * c)))  # sq[m] = sum_{d < m} c_d^2
    if k == 1:
        return Sensitivity(_round_up(float(sq[L]), L), True, "largest column norm")
    column_sq = sq[np.minimum(L, n - np.arange(n))]
    if L <= b:
        return Sensitivity(_round_up(_best_separated(column_sq, k, b), k * L), True, "disjoint bands")
    if n <= DENSE_LIMIT:
        C = np.zeros((n, n))
        for d in range(L):
            C[np.arange(d, n), np.arange(n - d)] = c[d]
        return matrix_sensitivity(C, k, b)
    lags = np.abs(signal.correlate(c, c, mode="full")[L - 1 + b:])  # |R(d)|, d = b .. L-1
    top = _top_sums(np.concatenate([lags, lags])[None, :], k - 1)[0]  # each lag: one j each side
    diag = column_sq if (c >= 0).all() else np.full(n, sq[L])
    return Sensitivity(_round_up(_best_separated(diag + top, k, b), k * k * (L + 1)), False,
                       "bound by the k largest couplings per step")


def tree_matrix(n: int) -> np.ndarray:
    """The binary-tree aggregation strategy over the steps 0..n-1 (the "binary mechanism" of Chan,
    Shi, Song 2011 and Dwork, Naor, Pitassi, Rothblum 2010; Kairouz, McMahan, Song, Thakkar,
    Thakurta, Xu, "Practical and private (deep) learning without sampling or shuffling", ICML 2021).

    One row per node of the complete dyadic tree, levels l = 0..L-1 with L = ceil(log2 n) + 1
    (L = 1 for n = 1), in level order, nodes left to right: node (l, j) has entry 1 at the steps
    [j 2^l, (j+1) 2^l) within [0, n). Each step lies in exactly L nodes, so every column has norm
    sqrt(L): the single-participation sensitivity is sqrt(ceil(log2 n) + 1)."""
    _check(n, 1, 1)
    steps = np.arange(n)
    return np.vstack([(np.arange(-(-n >> lv))[:, None] == (steps >> lv)[None, :]).astype(float)
                      for lv in range(_levels(n))])


def tree_sensitivity(n: int, participations: int = 1, min_separation: int = 1) -> Sensitivity:
    """``matrix_sensitivity(tree_matrix(n), ...)`` without building the matrix (n up to ~2^20).

    G_ij is the number of levels at which steps i and j share a node, L - bit_length(i ^ j) >= 0,
    so enumeration is exact; the DP weights count, level by level, the j at distance >= b."""
    k, b = _check(n, participations, min_separation)
    L = _levels(n)
    if k == 1:
        return Sensitivity(_round_up(float(L), 0), True, "largest column norm")

    def gram(i: np.ndarray, j: np.ndarray) -> np.ndarray:
        return L - np.frexp(np.bitwise_xor(i, j).astype(float))[1]

    def weights() -> np.ndarray:
        # j first differs from i at bit h-1 (shares levels h..L-1: G_ij = L - h) iff j lies in the
        # other half of i's 2^h-block: above i when bit h-1 of i is 0, below it otherwise
        i = np.arange(n)
        w, need = np.full(n, float(L)), np.full(n, k - 1)
        for h in range(1, L):
            low_half = ((i >> (h - 1)) & 1) == 0
            lo = ((i >> h) << h) + np.where(low_half, 1 << (h - 1), 0)
            hi = np.minimum(lo + (1 << (h - 1)), n)
            count = np.where(low_half, hi - np.maximum(lo, i + b), np.minimum(hi, i - b + 1) - lo)
            take = np.minimum(np.maximum(count, 0), need)
            w += take * (L - h)
            need -= take
        return w

    return _solve(n, k, b, gram, weights, nonneg=True, banded=False, terms=0)


# ---------------------------------------------------------------- shared machinery
def _check(n: int, k: int, b: int) -> tuple[int, int]:
    n, k, b = operator.index(n), operator.index(k), operator.index(b)
    if n < 1:
        raise ValueError(f"steps: there must be at least 1 step (got {n})")
    if k < 1:
        raise ValueError(f"participations: a record takes part at least once (got {k})")
    if b < 1:
        raise ValueError(f"min_separation: participations are at least 1 step apart (got {b})")
    most = max_patterns(n, b)
    if k > most:
        apart = f" at least {b} steps apart" if b > 1 else ""
        raise ValueError(f"participations: {k} participations{apart} do not fit in {n} steps "
                         f"(at most {most})")
    return k, b


def _levels(n: int) -> int:
    return (n - 1).bit_length() + 1  # ceil(log2 n) + 1


def _round_up(square: float, terms: int) -> float:
    """sqrt of a computed sum of squares, raised by a relative terms 2^-52, then one ulp."""
    if square <= 0:
        return 0.0
    return math.nextafter(math.sqrt(square * (1 + terms * 2.0 ** -52)), math.inf)


def _top_sums(A: np.ndarray, m: int) -> np.ndarray:
    """Each row's sum of its m largest entries."""
    if m >= A.shape[1]:
        return A.sum(axis=1)
    return np.partition(A, A.shape[1] - m, axis=1)[:, A.shape[1] - m:].sum(axis=1)


def _best_separated(w: np.ndarray, k: int, b: int) -> float:
    """max over sets S of at most k steps, pairwise >= b apart, of sum_{i in S} w_i (w >= 0).

    f[i] after t rounds: the best with at most t steps among 0..i (the last at some i' <= i)."""
    f = np.zeros(w.size)
    for _ in range(k):
        g = w.copy()
        g[b:] += f[:-b]
        f = np.maximum(f, np.maximum.accumulate(g))
    return float(f[-1])


def _pattern_count(n: int, k: int, b: int, cap: int) -> int:
    """Patterns of 1..k steps with gaps >= b (stops counting once past cap)."""
    total = 0
    for s in range(1, k + 1):
        total += math.comb(n - (s - 1) * (b - 1), s)
        if total > cap:
            break
    return total


def _patterns(n: int, s: int, b: int, chunk: int) -> Iterator[np.ndarray]:
    """All patterns of s steps with gaps >= b, as rows of (chunk, s) arrays: x_a = y_a + a (b-1)
    for the s-subsets y of range(n - (s-1)(b-1))."""
    combos = itertools.combinations(range(n - (s - 1) * (b - 1)), s)
    shift = np.arange(s) * (b - 1)
    while True:
        flat = np.fromiter(itertools.chain.from_iterable(itertools.islice(combos, chunk)), np.int64)
        if flat.size == 0:
            return
        yield flat.reshape(-1, s) + shift


def _sign_ascent(A: np.ndarray) -> np.ndarray:
    """max u^T A u over u in {-1, +1}^s found by coordinate ascent, for each (s, s) block of A
    (a lower bound; it starts from the signs of the first row)."""
    u = np.where(A[:, 0, :] < 0, -1.0, 1.0)
    for _ in range(A.shape[1] + 1):
        before = u.copy()
        for a in range(A.shape[1]):
            field = np.einsum("mj,mj->m", A[:, a, :], u) - A[:, a, a] * u[:, a]
            u[:, a] = np.where(field < 0, -1.0, 1.0)
        if (u == before).all():
            break
    return np.einsum("mi,mij,mj->m", u, A, u)


def _solve(n: int, k: int, b: int, gram: Callable[[np.ndarray, np.ndarray], np.ndarray],
           weights: Callable[[], np.ndarray], nonneg: bool, banded: bool, terms: int) -> Sensitivity:
    """Enumeration when the patterns are few, else the DP bound; gram(i, j) gives G on index arrays."""
    if _pattern_count(n, k, b, ENUMERATION_LIMIT) > ENUMERATION_LIMIT:
        value = _round_up(_best_separated(weights(), k, b), terms)
        if banded:
            return Sensitivity(value, True, "disjoint bands")
        return Sensitivity(value, False, "bound by the k largest couplings per step")
    upper = lower = 0.0
    for s in range(1, k + 1):
        for P in _patterns(n, s, b, max(1, 2 ** 18 // (s * s))):
            A = gram(P[:, :, None], P[:, None, :])
            total = np.abs(A).sum(axis=(1, 2))
            upper = max(upper, float(total.max()))
            near = A[total >= upper * (1 - _TOL)]  # only these can attain the final upper bound
            if not nonneg and near.size:
                lower = max(lower, float(_sign_ascent(near).max()))
    exact = nonneg or lower >= upper * (1 - _TOL)
    return Sensitivity(_round_up(upper, terms), exact, "all patterns enumerated")
