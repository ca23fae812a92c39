"""Curves from the certified profiles: the tradeoff function and the composed PLD.

Tradeoff (f-DP; Dong, Roth, Su 2019): for one order of the pair,
T(alpha) = sup_{eps in R} max(0, 1 - delta(eps) - e^eps alpha). On a finite eps
grid eps_0 < ... < eps_m:

* lower: sup over the grid with delta replaced by its upper bound (a sup over
  a subset of valid lower bounds is a lower bound);
* upper: for eps in [eps_i, eps_{i+1}], 1 - delta(eps) - e^eps alpha <=
  1 - delta_low(eps_{i+1}) - e^{eps_i} alpha; below eps_0 the term is at most
  e^{eps_0} (as delta(eps) >= 1 - e^eps), above eps_m at most 1 - e^{eps_m} alpha.

Under add/remove adjacency the curve shown is the pointwise minimum over the two
orders (both pairs occur among neighbouring datasets).
(The epsilon-against-count curve is sweep.py.)
"""
from __future__ import annotations

import math

import numpy as np

from ..numerics.profile import CertifiedProfile


def tradeoff_bounds(prof: CertifiedProfile, alpha: np.ndarray, n_eps: int = 4001):
    """(lower, estimate, upper) of beta(alpha) for one order of the pair."""
    alpha = np.asarray(alpha, dtype=float)
    top = float(min(max(abs(prof.y[0]), abs(prof.y[-1])) + 2 * prof.t + 1.0, 60.0))
    eps = np.linspace(-top, top, n_eps)
    d_low, d_est, d_up = prof.delta(eps)
    ex = np.exp(eps)
    lower = np.max(1.0 - d_up[:, None] - ex[:, None] * alpha[None, :], axis=0)
    est = np.max(1.0 - d_est[:, None] - ex[:, None] * alpha[None, :], axis=0)
    up_in = np.max(1.0 - d_low[1:, None] - ex[:-1, None] * alpha[None, :], axis=0)
    upper = np.maximum.reduce([up_in, np.full(alpha.shape, math.exp(eps[0])), 1.0 - ex[-1] * alpha])
    cap = 1.0 - alpha
    lower = np.clip(lower, 0.0, cap)
    upper = np.clip(upper, 0.0, cap)
    est = np.clip(est, lower, upper)
    return lower, est, upper


#: a cell is an atom when its mass exceeds ATOM_FACTOR times what the continuous part puts in
#: the cells beside it (``atom_cells``), and ATOM_FLOOR (relative to the total) in any case
ATOM_FACTOR, ATOM_FLOOR, ATOM_WINDOW, ATOM_GAP = 4.0, 1e-12, 8, 3


def atom_kind(prvs) -> str:
    """Which atoms the composed PLD of ``prvs`` (PRVs, one per draw kind) can have.

    The composed distribution is the convolution of the draws; its atomic part is the
    convolution of their atomic parts (anything convolved with a continuous part is
    continuous). Hence "none" when some draw has no atoms, "all" when no draw has a continuous
    part (the whole PLD is atoms), else "some".
    """
    prvs = list(prvs)
    if not prvs or any(not p.atoms for p in prvs):
        return "none"
    if all(p.cont is None or p.cont.mass <= 0 for p in prvs):
        return "all"
    return "some"


def atom_cells(r: np.ndarray, kind: str = "some") -> tuple[np.ndarray, np.ndarray]:
    """(indices, masses) of the atoms among the cells ``r`` of a composed pmf.

    kind "none": no atoms. kind "all": every cell above ATOM_FLOOR times the total (below that
    is the composition's round-off). kind "some": cell i is an atom when
    r[i] > ATOM_FACTOR * b_i and r[i] > ATOM_FLOOR * total, where b_i, the continuous part's
    mass near i, is the larger of the medians of the ATOM_WINDOW cells on its left and on its
    right, ATOM_GAP cells away from i (the larger, so that a cell at the edge of the continuous
    support is not taken for an atom; the gap, because the rows' atoms are rounded to cells one by
    one, so that one atom of the composition spreads over a few neighbouring cells); the atom's
    mass is r[i] - b_i, and b_i stays with the continuous part.
    """
    total = float(r.sum())
    if kind == "none" or r.size == 0 or total <= 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0)
    floor = ATOM_FLOOR * total
    if kind == "all":
        idx = np.flatnonzero(r > floor)
        return idx, r[idx].copy()
    w, g = ATOM_WINDOW, ATOM_GAP
    pad = w + g
    padded = np.concatenate([np.zeros(pad), r, np.zeros(pad)])
    win = np.lib.stride_tricks.sliding_window_view(padded, w)  # win[j] = padded[j:j + w]
    left = np.median(win[:r.size], axis=1)  # r[i - g - w:i - g]
    right = np.median(win[2 * g + w + 1:2 * g + w + 1 + r.size], axis=1)  # r[i + g + 1:i + g + 1 + w]
    base = np.maximum(left, right)
    seed = (r > ATOM_FACTOR * base) & (r > floor)
    # the rest of a spread atom: cells within ATOM_GAP of a seed holding more than 1.5 b_i
    # ("full", then the centred slice: mode "same" returns the longer of the two inputs, which
    # for fewer than 2 g + 1 cells is the kernel's length, not the cells')
    near = np.convolve(seed.astype(float), np.ones(2 * g + 1), mode="full")[g:g + r.size] > 0
    idx = np.flatnonzero(seed | (near & (r > 1.5 * base) & (r > floor)))
    return idx, r[idx] - base[idx]


def merge_atoms(x: np.ndarray, mass: np.ndarray, gap: float) -> tuple[np.ndarray, np.ndarray]:
    """Atoms closer than ``gap`` merged into one at their centre of mass (one atom of the
    composition spread over neighbouring cells)."""
    if x.size == 0:
        return x, mass
    group = np.concatenate([[0], np.cumsum(np.diff(x) > gap)])
    m = np.bincount(group, weights=mass)
    centre = np.bincount(group, weights=mass * x) / np.where(m > 0, m, 1.0)
    return centre, m


def pld_for_plot(prof: CertifiedProfile, max_points: int = 2000, atoms: str = "none"):
    """The composed PLD, trimmed and binned: (loss values, density of the continuous part,
    mass at +inf, atom locations, atom masses); masses and density are absolute (they sum and
    integrate to 1 - P(L = inf)). ``atoms`` is ``atom_kind`` of the rows: with "all" the
    density is None, with "none" there are no atoms."""
    r, y, h = prof.c.pmf, prof.y, prof.c.h
    cdf = np.cumsum(r)
    total = cdf[-1] if cdf.size else 0.0
    none = np.zeros(0)
    if total <= 0:
        return none, none, prof.p_inf, none, none
    scale = (1.0 - prof.p_inf) / total
    i0 = int(np.searchsorted(cdf, 1e-9 * total))
    i1 = int(np.searchsorted(cdf, (1 - 1e-9) * total)) + 1
    r, y = r[i0:i1], y[i0:i1]
    idx, amass = atom_cells(r, atoms)
    atom_x, atom_m = merge_atoms(y[idx], amass * scale, (ATOM_GAP + 0.5) * h)
    if atoms == "all" and idx.size > 2 * (2 * ATOM_GAP + 1) * atom_x.size:
        # atoms closer than the mesh (the shuffle model has thousands): they run together into
        # a few "atoms" spanning many cells; draw them as the density they are on the mesh
        atoms, idx, atom_x, atom_m = "none", idx[:0], none, none
    if atoms == "all":
        return y[:0], None, prof.p_inf, atom_x, atom_m
    if idx.size:
        r = r.copy()
        r[idx] -= amass
    b = max(1, -(-r.size // max_points))
    pad = (-r.size) % b
    mass = np.concatenate([r, np.zeros(pad)]).reshape(-1, b).sum(axis=1)
    centres = y[0] + (np.arange(mass.size) * b + 0.5 * (b - 1)) * h
    dens = mass / (b * h) * scale
    return centres, dens, prof.p_inf, atom_x, atom_m
