"""What a guarantee means for an attacker: certified membership-inference risk.

A membership-inference attack is a test between the two outputs of a neighbouring pair; at
false-positive rate a its true-positive rate is at most 1 - T(a), where T is the tradeoff
function of the composition (Dong, Roth, Su, "Gaussian differential privacy", 2019/2022, Def. 2.1;
Kulynych et al., "Attack-aware noise calibration for DP", NeurIPS 2024). The certified profile
gives T a certified bracket at every a (curves.tradeoff_bounds); so

    TPR(a) in [1 - T_upper(a), 1 - T_lower(a)],

taking the most revealing of the pair's orders (both occur among neighbouring datasets). The
attacker's advantage, the largest TPR - FPR over all tests, is the total variation distance
of the pair: delta(0), with the accountant's certified bracket.

The upper ends are the publishable numbers (no attack does better). The lower ends are attained
by the best test against the worst pair; with shuffled rows (``bracket.py``) the upper ends
come from the dominating pairs and the lower ends from the attack pairs, so both still hold for
the truth.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from .accountant import Accountant
from .bracket import attack_rows, has_untight
from .curves import tradeoff_bounds
from ..core.values import Relation, as_relation
from ..mechanisms import Row

#: the false-positive rates reported by default
DEFAULT_FPRS = (0.001, 0.01, 0.1)
#: the additive error level of the profiles behind the tradeoff bounds
LEVEL = 1e-12


@dataclass(frozen=True)
class Interval:
    lower: float
    upper: float

    def as_dict(self) -> dict:
        return {"lower": self.lower, "upper": self.upper}


@dataclass(frozen=True)
class Risk:
    """Certified attack-risk read-outs: TPR at each FPR, and the advantage."""

    fprs: tuple[float, ...]
    tpr: tuple[Interval, ...]
    advantage: Interval

    def as_dict(self) -> dict:
        return {"tpr_at_fpr": [{"fpr": a, **t.as_dict()} for a, t in zip(self.fprs, self.tpr)],
                "advantage": self.advantage.as_dict()}


def check_fprs(fprs: Sequence[float]) -> tuple[float, ...]:
    out = []
    for a in fprs:
        if isinstance(a, bool) or not isinstance(a, (int, float)) or not math.isfinite(a) or not 0 < a < 1:
            raise ValueError(f"false-positive rate must be a number between 0 and 1 (exclusive), got {a!r}")
        out.append(float(a))
    if not out:
        raise ValueError("give at least one false-positive rate")
    return tuple(out)


def tpr_bounds(acc: Accountant, alpha: np.ndarray, level: float = LEVEL
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(lower, estimate, upper) of the best TPR at each alpha for one accountant's pairs, from
    both orders' certified profiles at additive error ``level``."""
    if acc.total_count == 0:
        return alpha.copy(), alpha.copy(), alpha.copy()
    if any(r.count > 0 and r.mechanism.is_blatant() for r in acc.rows):
        one = np.ones(alpha.shape)
        return one, one, one
    profs = acc.profiles(level)
    if not profs:
        return alpha.copy(), alpha.copy(), alpha.copy()
    parts = [tradeoff_bounds(p, alpha) for p in profs]
    lower = np.clip(1.0 - np.minimum.reduce([p[2] for p in parts]), alpha, 1.0)  # 1 - T_upper
    upper = np.clip(1.0 - np.minimum.reduce([p[0] for p in parts]), alpha, 1.0)  # 1 - T_lower
    est = np.clip(1.0 - np.minimum.reduce([p[1] for p in parts]), lower, upper)
    return lower, est, upper


def risk(rows: Sequence[Row], fprs: Sequence[float] = DEFAULT_FPRS,
         relation: Relation | str | None = None, eps_error: float = 0.01,
         cancel: Callable[[], bool] | None = None) -> Risk:
    """Certified TPR of the best membership-inference attack at each FPR, and its advantage."""
    fprs = check_fprs(fprs)
    acc = Accountant(rows, eps_error, as_relation(relation),
                     cancel=cancel, screen=False)
    return risk_of(acc, fprs)


def risk_of(acc: Accountant, fprs: Sequence[float] = DEFAULT_FPRS, level: float = LEVEL) -> Risk:
    """``risk`` from an accountant that may already hold the compositions (the view model's):
    its profiles at ``level`` give the TPR brackets, its delta(0) query the advantage; the
    lower ends from the attack pairs when a row's pair is only an upper bound."""
    fprs = check_fprs(fprs)
    rows, rel, cancel = acc.given_rows, acc.relation, acc.cancel
    alpha = np.array(fprs)
    lo, _, up = tpr_bounds(acc, alpha, level)
    adv = acc.delta(0.0)
    adv_lo = adv.lower
    if has_untight(rows):  # lower ends from the attack pairs, which are realised
        accs = [Accountant(a, acc.eps_error, cancel=cancel, screen=False) for a in attack_rows(rows, rel)]
        lo = np.minimum(np.maximum.reduce([tpr_bounds(a, alpha, level)[0] for a in accs]), up)
        adv_lo = min(max(a.delta(0.0).lower for a in accs), adv.upper)
    tpr = tuple(Interval(float(a), float(b)) for a, b in zip(lo, up))
    return Risk(fprs, tpr, Interval(max(0.0, adv_lo), min(1.0, adv.upper)))
