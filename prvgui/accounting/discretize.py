"""Truncate and discretise one PRV onto the global mesh (PRV paper, Algorithm 2).

Grid: cell j is [(j - 1/2) h, (j + 1/2) h) with centre c_j = j h; every row uses
the same mesh so that composed values stay on the mesh (plus a known offset).

Given a PRV Y (finite part, conditioned on being finite) we

1. cut both tails of the continuous part at mass ``tau`` each: Y^L = Y | Y in
   [a, b]; the total-variation distance between Y and Y^L is the cut mass, which
   becomes a coupling failure probability of the composition;
2. give cell j the mass of Y^L in it (differences of ``cdf`` on the left half,
   of ``sf`` on the right half, so tails keep their relative precision); atoms
   go to the cell that contains them;
3. shift all values by s = E[Y^L] - sum_j p_j c_j, so that the discrete variable
   Y~ has exactly the mean of Y^L (the paper's key step).

The coupling "Y^L in cell j  ->  Y~ = c_j + s" has D = Y~ - Y^L in
[s - h/2, s + h/2]: a range of width h and mean E[Y~] - E[Y^L], which is zero
up to ``bias`` (the error of our E[Y^L]); this is what Hoeffding's inequality
needs in :mod:`prvgui.accounting.compose`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .prv import PRV

_ULP = 2.0 ** -52


@dataclass(frozen=True)
class DiscretePRV:
    """A discretised finite part of a PRV. Value of ``pmf[i]`` is (start + i) h + shift."""

    pmf: np.ndarray
    start: int
    h: float
    shift: float
    inf_mass: float
    #: probability that the finite Y was cut away (TV distance of the truncation)
    tail_prob: float
    #: bound on |E[Y~] - E[Y^L]|
    bias: float

    @property
    def values(self) -> np.ndarray:
        return (self.start + np.arange(self.pmf.size)) * self.h + self.shift

    def mean(self) -> float:
        return float(np.dot(self.pmf, self.values))

    def variance(self) -> float:
        v = self.values - self.mean()
        return float(np.dot(self.pmf, v * v))


def discretize(prv: PRV, h: float, tau: float, max_cells: int = 2 ** 26) -> DiscretePRV:
    """Discretise ``prv`` on mesh ``h``, cutting at most ``tau`` of mass from each tail.

    Raises ``GridTooLarge`` (a MemoryError) instead of allocating more than ``max_cells``.
    """
    if not (h > 0 and math.isfinite(h)):
        raise ValueError(f"mesh h must be positive, got {h!r}")
    fin = prv.finite_mass
    if fin <= 0:
        return DiscretePRV(np.ones(1), 0, h, 0.0, 1.0, 0.0, 0.0)
    pieces: list[tuple[int, np.ndarray]] = []
    moment_cut, moment_cut_err, cut = 0.0, 0.0, 0.0
    c = prv.cont
    if c is not None and c.mass > 0:
        a, b = c.lower_cut(tau, 0.25 * h), c.upper_cut(tau, 0.25 * h)  # a cell's accuracy
        j_lo = math.floor(a / h + 0.5)
        j_hi = max(math.ceil(b / h - 0.5), j_lo)
        if j_hi - j_lo + 2 > max_cells:
            from .compose import GridTooLarge
            raise GridTooLarge(j_hi - j_lo + 2, max_cells, b - a)
        edges = (np.arange(j_lo, j_hi + 2, dtype=float) - 0.5) * h
        # split at the edge closest to the centre: cdf differences left, sf right
        k = int(np.clip(np.searchsorted(edges, c.centre), 1, edges.size - 1))
        left = c.cdf(edges[:k + 1])
        right = c.sf(edges[k:])
        masses = np.concatenate([np.diff(left), -np.diff(right)])
        masses = np.maximum(masses, 0.0)
        cut_lo, cut_hi = float(left[0]), float(right[-1])
        cut = cut_lo + cut_hi
        # first moments of the cut tails: a bounded guess (the tails are ~tau)
        moment_cut = edges[0] * cut_lo + edges[-1] * cut_hi
        moment_cut_err = (abs(edges[0]) + abs(edges[-1]) + 64.0) * cut
        pieces.append((j_lo, masses))
    for loc, m in prv.atoms:
        pieces.append((int(round(loc / h)), np.array([m])))
    start = min(p[0] for p in pieces)
    stop = max(p[0] + p[1].size for p in pieces)
    pmf = np.zeros(stop - start)
    for j0, m in pieces:
        pmf[j0 - start:j0 - start + m.size] += m
    # trim exact zeros at both ends (continuous parts far from their cut points)
    nz = np.flatnonzero(pmf)
    if nz.size == 0:
        raise ArithmeticError("discretised PRV has no mass; the mechanism is degenerate")
    pmf = pmf[nz[0]:nz[-1] + 1]
    start += int(nz[0])
    kept = float(pmf.sum())
    pmf = pmf / kept
    idx_mean = float(np.dot(pmf, np.arange(pmf.size, dtype=float)))
    disc_mean = (start + idx_mean) * h
    true_mean = (prv.mean - moment_cut) / kept
    shift = true_mean - disc_mean
    bias = ((prv.mean_err + moment_cut_err) / kept
            + 8 * _ULP * (abs(true_mean) + h * (abs(start) + pmf.size)))
    if not abs(shift) <= 0.5 * h * (1 + 1e-6) + bias:
        raise ArithmeticError(
            f"the discretised PRV's mean is off by {shift:.3g} (mesh {h:.3g}); the mechanism's "
            "mean could not be computed accurately enough for these parameters")
    tail_prob = cut / fin
    return DiscretePRV(pmf, start, h, shift, prv.inf_mass, tail_prob, bias)
