"""The f-DP analysis of a one-run audit (Mahloujifar, Melis, Chaudhuri, "Auditing f-differential
privacy in one run", ICML 2025, arXiv 2410.22235): how likely an auditor's count of correct
guesses is under a hypothesised tradeoff function f.

The game (audit.py): m canaries, each in the input independently with probability 1/2; from
one output the auditor guesses in or out for exactly r of them and abstains on the rest; W of
the r guesses are correct. The mechanism is f-DP for each canary, f symmetric (both orders of
the pair), F(x) = 1 - f(x) the best true-positive rate at false-positive rate x (concave,
non-decreasing).

Derivation (the paper's analysis for two choices, written out as implemented here):

1. Fix canary j and level t, and condition on the other canaries S_-j. Let C = {j is guessed
   correctly and at least t of the other guesses are correct}, I = {j is guessed wrongly and
   at least t others are correct}. The guess and the other canaries' correctness depend only
   on the output, so with R_b = {the guess for j is b, at least t others correct} and P_b the
   output's distribution when S_j = b: P[C] = (P_0[R_0] + P_1[R_1]) / 2 and P[I] = (P_0[R_1] +
   P_1[R_0]) / 2. f-DP gives P_1[R_1] <= F(P_0[R_1]) and P_0[R_0] <= F(P_1[R_0]), so by the
   concavity of F, P[C] <= F(P[I]); averaging over S_-j (Jensen again) keeps it.
2. Sum over the m canaries (F concave: sum F(x_j) <= m F(mean x_j)). A correct guess for j
   leaves W - 1 others correct, a wrong one W; so for t = 0, ..., r - 1

       E[W 1{W >= t + 1}] <= m F(E[(r - W) 1{W >= t}] / m).                       (*)

3. p(v) = the largest P[W >= v] over distributions of W on {0..r} that satisfy (*). The
   constraints are convex (F concave), and the optimum puts mass tau at v and the least mass
   below, level by level from v - 1 down: with A_t, B_t the correct and wrong guesses per
   canary of the mass at levels >= t, B_t = max(B_(t+1), F^-1(A_(t+1))) (the paper's r_i and
   h_i). Exchange argument: mass at a level whose constraint is slack can move one level down,
   which loosens every constraint below, and then the lowest mass can shrink; so at the
   optimum every level with mass is tight, which is this greedy fill. A tau is possible iff
   the fill's total mass (A_0 + B_0) m / r is at most 1; p(v) is the largest such tau.

Checked: a linear programme over the same constraints agrees with the greedy fill to 1e-4,
and simulated audits of independent Gaussian canaries never beat p(v) (tests/accounting/queries).
Keeping only a subset of the levels drops constraints, so it can only raise p(v): above
LEVELS levels the fill uses LEVELS of them, dense near v (a conservative, slightly looser p).

The Gaussian family (``gaussian_finv``): F_mu^-1(a) = Phi(Phi^-1(a) - mu), the mu-GDP curve.
``hull_finv`` builds F^-1 from a tradeoff curve known at grid points as an upper bound on the
best TPR: the concave majorant of its staircase, so that the test stays conservative.
"""
from __future__ import annotations

import bisect
import math
from typing import Callable, Sequence

import numpy as np
from scipy.special import ndtr, ndtri

#: at most this many levels in the greedy fill (beyond: a subset, dense near v)
LEVELS = 1024
#: the fill stops once its mass reaches this (the answer is then "impossible")
_CAP = 2.0

Finv = Callable[[float], float]


def levels(v: int) -> list[int]:
    """The levels t < v whose constraints the fill uses, from v - 1 down to 0."""
    if v <= LEVELS:
        return list(range(v - 1, -1, -1))
    gaps = np.unique(np.round(np.geomspace(1.0, float(v), LEVELS)).astype(np.int64))
    return sorted({0, *(int(v - g) for g in gaps if g <= v)}, reverse=True)


def fill_mass(finv: Finv, m: int, r: int, v: int, tau: float, at: Sequence[int] | None = None) -> float:
    """The least total probability of a distribution of W satisfying (*) with P[W >= v] = tau
    (capped at 2: above 1 means impossible)."""
    a, b, mass = v * tau / m, (r - v) * tau / m, tau
    for t in (levels(v) if at is None else at):
        need = finv(a)
        if need > b:
            q = (need - b) * m / (r - t)
            mass += q
            if not mass < _CAP:
                return _CAP
            a += t * q / m
            b = need
    return mass


def p_value(finv: Finv, m: int, r: int, v: int) -> float:
    """Sup of P[W >= v] under f-DP (F^-1 = ``finv``): the audit's p-value (bisection on tau to
    1e-12, rounded up)."""
    if v == 0:
        return 1.0
    at = levels(v)
    if fill_mass(finv, m, r, v, 1.0, at) <= 1.0:
        return 1.0
    lo, hi = 0.0, 1.0
    while hi - lo > 1e-12:
        mid = 0.5 * (lo + hi)
        if fill_mass(finv, m, r, v, mid, at) <= 1.0:
            lo = mid
        else:
            hi = mid
    return hi


def rejects(finv: Finv, m: int, r: int, v: int, level: float) -> float:
    """The fill's mass at tau = ``level``, minus 1: >= 0 when the count rejects the curve at
    significance ``level`` (p-value <= level); continuous and non-increasing as F grows."""
    if v == 0:
        return -1.0
    return fill_mass(finv, m, r, v, level) - 1.0


def gaussian_finv(mu: float) -> Finv:
    """F^-1 of mu-GDP: the least false-positive rate at which the best test reaches TPR a."""
    def finv(a: float) -> float:
        if a <= 0.0:
            return 0.0
        if a >= 1.0:
            return 1.0 if a == 1.0 else math.inf
        return float(ndtr(ndtri(a) - mu))
    return finv


def hull_finv(alpha: np.ndarray, tpr: np.ndarray) -> Finv:
    """F^-1 of the least concave majorant of a staircase over (alpha, tpr): the true best TPR is
    non-decreasing and at most ``tpr`` at each grid alpha, so on (alpha_k-1, alpha_k] it is at
    most tpr_k, and beyond the last point at most 1."""
    alpha = np.asarray(alpha, dtype=float)
    tpr = np.asarray(tpr, dtype=float)
    order = np.argsort(alpha, kind="stable")
    alpha, tpr = alpha[order], np.maximum.accumulate(np.clip(tpr[order], 0.0, 1.0))
    xs = [0.0, *alpha[:-1].tolist(), float(alpha[-1])]
    ys = [float(tpr[0]), *tpr[1:].tolist(), float(tpr[-1])]
    if alpha[-1] < 1.0:
        xs.append(float(alpha[-1]))
        ys.append(1.0)
    hull: list[tuple[float, float]] = []
    for p in sorted(zip(xs, ys)):
        while len(hull) >= 2 and _cross(hull[-2], hull[-1], p) >= 0:
            hull.pop()
        if hull and hull[-1][0] == p[0]:
            hull[-1] = (p[0], max(hull[-1][1], p[1]))
            continue
        hull.append(p)
    hx = [h[0] for h in hull]
    hy = [h[1] for h in hull]
    while len(hy) >= 2 and hy[-2] >= hy[-1]:  # the flat top: the first point reaching the top
        hx.pop()
        hy.pop()

    def finv(a: float) -> float:
        if a <= hy[0]:
            return 0.0
        if a > hy[-1]:
            return math.inf
        k = bisect.bisect_left(hy, a)
        x0, x1, y0, y1 = hx[k - 1], hx[k], hy[k - 1], hy[k]
        return x0 + (x1 - x0) * (a - y0) / (y1 - y0)
    return finv


def _cross(o: tuple[float, float], a: tuple[float, float], b: tuple[float, float]) -> float:
    return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])
