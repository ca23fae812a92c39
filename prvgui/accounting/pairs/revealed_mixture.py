"""The revealed mixture of dominating pairs: the PRV of a pair whose components are drawn at
random, independently of the data, and named in the output.

Let a mechanism first draw a case c with probability w_c, the same under both datasets, and
then run a pair (P_c, Q_c). The revealed pair P = sum_c w_c (c, P_c), Q = sum_c w_c (c, Q_c)
(the case is part of the output) has the privacy loss log(dP_c/dQ_c) on case c, so its PRV is
the mixture of the components' PRVs with weights w_c, and its hockey-stick divergence is the
weighted sum of theirs: delta(eps) = sum_c w_c delta_c(eps). The pair that hides the case,
(sum_c w_c P_c, sum_c w_c Q_c), is a post-processing of the revealed one (forget c): revealing
only helps the adversary (joint convexity of the hockey-stick divergence), so the revealed
mixture of each component's dominating pair dominates the hidden one, in each order.

``revealed_mixture`` builds that PRV from the components' PRVs (all of one order): atoms side
by side with weighted masses, weighted masses at +infinity, and one continuous part whose cdf
and sf are the weighted sums of the parts' (each evaluated only inside its own support, so a
part's formula never sees a point it was not written for). The mean (a first moment) and its
error bound mix linearly.
"""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from .prv import PRV, Continuous

Array = np.ndarray

#: how far from 1 the weights may sum
WEIGHT_TOL = 1e-12


def _check(parts: Sequence[tuple[float, PRV]]) -> list[tuple[float, PRV]]:
    """The parts with positive weight, weights rescaled to sum to 1 exactly (in floats)."""
    if not parts:
        raise ValueError("a revealed mixture needs at least one part")
    for w, _ in parts:
        if not (isinstance(w, (int, float)) and math.isfinite(w) and w >= 0):
            raise ValueError(f"mixture weights must be finite and at least 0, got {w!r}")
    total = math.fsum(w for w, _ in parts)
    if not abs(total - 1.0) <= WEIGHT_TOL:
        raise ValueError(f"mixture weights must sum to 1 (within {WEIGHT_TOL:g}), they sum to {total!r}")
    return [(w / total, prv) for w, prv in parts if w > 0]


#: what placing a part's values costs beside evaluating them (``_mixed``), in Continuous.cost's unit
MIX_COST = 0.15


def _tail(c: Continuous, which: str, t: Array) -> Array:
    """``c.cdf`` or ``c.sf`` at t, with the values outside (lo, hi) set by definition."""
    inside = (t > c.lo) & (t < c.hi)
    fn = c.cdf if which == "cdf" else c.sf
    v = np.asarray(fn(np.where(inside, t, c.centre)), dtype=float) if inside.any() else np.zeros(t.shape)
    below, above = (0.0, c.mass) if which == "cdf" else (c.mass, 0.0)
    return np.where(inside, v, np.where(t <= c.lo, below, above))


def _mixed(conts: list[tuple[float, Continuous]]) -> Continuous:
    """One continuous part: the weighted sum of the parts' (w, part)."""
    def cdf(t: Array) -> Array:
        t = np.asarray(t, dtype=float)
        return sum((w * _tail(c, "cdf", t) for w, c in conts), np.zeros(t.shape))

    def sf(t: Array) -> Array:
        t = np.asarray(t, dtype=float)
        return sum((w * _tail(c, "sf", t) for w, c in conts), np.zeros(t.shape))

    mass = math.fsum(w * c.mass for w, c in conts)
    lo = min(c.lo for _, c in conts)
    hi = max(c.hi for _, c in conts)
    centre = max(conts, key=lambda wc: wc[0] * wc[1].mass)[1].centre  # the heaviest part's
    # (each part evaluated where it lives, and its values placed: ``_tail``; a truncated Poisson
    # step's two subsampled Gaussians at sigma 0.001 spent 11.2 s in their sf, 1.6 s around it)
    cost = math.fsum(c.cost + MIX_COST for _, c in conts)
    return Continuous(lo, hi, mass, cdf, sf, centre, cost=cost)


def revealed_mixture(parts: Sequence[tuple[float, PRV]]) -> PRV:
    """The PRV of the revealed mixture of ``parts`` = (weight, PRV of one order) (see the
    module): weights at least 0 and summing to 1 within ``WEIGHT_TOL``; a part of weight 0 is
    left out, and a single part is returned as it is."""
    kept = _check(parts)
    if len(kept) == 1:
        return kept[0][1]
    atoms = tuple(sorted((loc, w * m) for w, prv in kept for loc, m in prv.atoms if w * m > 0))
    inf_mass = math.fsum(w * prv.inf_mass for w, prv in kept)
    conts = [(w, prv.cont) for w, prv in kept if prv.cont is not None and prv.cont.mass > 0]
    cont = _mixed(conts) if conts else None
    mean = math.fsum(w * prv.mean for w, prv in kept)
    mean_err = math.fsum(w * prv.mean_err for w, prv in kept)
    return PRV(atoms, inf_mass, cont, mean, mean_err)
