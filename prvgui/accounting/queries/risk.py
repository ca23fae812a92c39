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

At a prior pi of membership the best attack's Bayes risk (its least probability of error) is
R(pi) = min_a [(1 - pi) a + pi T(a)] = min(pi, 1 - pi) (1 - delta(|log((1 - pi) / pi)|)) (the
convex conjugate of T; delta the larger over the orders), certified from the delta bracket at
that one epsilon. A reconstruction or re-identification guess whose baseline success is kappa
succeeds with probability at most 1 - T(kappa) (Hayes, Mahloujifar, Balle 2023; Kulynych et al.
2025): the TPR bracket at FPR kappa. certified_gdp.py gives the mu-GDP summary.

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
from .certified_gdp import GdpFit, gdp_fit
from .curves import tradeoff_bounds
from ..core.values import Relation, as_relation
from ..mechanisms import Row

#: the false-positive rates reported by default
DEFAULT_FPRS = (0.001, 0.01, 0.1)
#: priors of membership for the Bayes risk, and baselines of reconstruction, by default
DEFAULT_PRIORS = (0.5, 0.1, 0.01)
DEFAULT_BASELINES = (0.001, 0.01, 0.1)
#: the additive error level of the profiles behind the tradeoff bounds
LEVEL = 1e-12


@dataclass(frozen=True)
class Interval:
    lower: float
    upper: float

    def as_dict(self) -> dict:
        return {"lower": self.lower, "upper": self.upper}


@dataclass(frozen=True)
class BayesRisk:
    """At a prior of membership: the best attack's least error probability (certified interval)
    and its accuracy, 1 - risk; ``gain``: accuracy above guessing from the prior alone."""

    prior: float
    risk: Interval

    @property
    def accuracy(self) -> Interval:
        return Interval(1.0 - self.risk.upper, 1.0 - self.risk.lower)

    def as_dict(self) -> dict:
        base = max(self.prior, 1.0 - self.prior)
        acc = self.accuracy
        return {"prior": self.prior, **self.risk.as_dict(), "accuracy": acc.as_dict(),
                "gain": {"lower": max(0.0, acc.lower - base), "upper": max(0.0, acc.upper - base)}}


@dataclass(frozen=True)
class Risk:
    """Certified attack-risk read-outs: TPR at each FPR, the advantage, the Bayes risk at each
    prior, reconstruction success at each baseline, and the certified mu-GDP fit."""

    fprs: tuple[float, ...]
    tpr: tuple[Interval, ...]
    advantage: Interval
    bayes: tuple[BayesRisk, ...] = ()
    baselines: tuple[float, ...] = ()
    reconstruction: tuple[Interval, ...] = ()
    gdp: GdpFit | None = None

    def as_dict(self) -> dict:
        out = {"tpr_at_fpr": [{"fpr": a, **t.as_dict()} for a, t in zip(self.fprs, self.tpr)],
               "advantage": self.advantage.as_dict(),
               "bayes_risk": [b.as_dict() for b in self.bayes],
               "reconstruction": [{"baseline": k, **t.as_dict()}
                                  for k, t in zip(self.baselines, self.reconstruction)]}
        if self.gdp is not None:
            out["gdp"] = self.gdp.as_dict()
        return out


def check_rates(values: Sequence[float], what: str = "false-positive rate") -> tuple[float, ...]:
    """Numbers strictly between 0 and 1 (a ValueError names ``what`` and the value); a single
    number is one."""
    if isinstance(values, (int, float)) and not isinstance(values, bool):
        values = (values,)
    if isinstance(values, (str, bytes, dict)) or not hasattr(values, "__iter__"):
        raise ValueError(f"{what}s must be a list of numbers between 0 and 1 (exclusive), got {values!r}")
    out = []
    for a in values:
        if isinstance(a, bool) or not isinstance(a, (int, float)) or not 0 < a < 1:  # (nan fails 0 < a)
            raise ValueError(f"{what} must be a number between 0 and 1 (exclusive), got {a!r}")
        out.append(float(a))
    if not out:
        raise ValueError(f"give at least one {what}")
    return tuple(out)


def check_fprs(fprs: Sequence[float]) -> tuple[float, ...]:
    return check_rates(fprs)


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
         cancel: Callable[[], bool] | None = None, priors: Sequence[float] = DEFAULT_PRIORS,
         baselines: Sequence[float] = DEFAULT_BASELINES, gdp: bool = True) -> Risk:
    """Certified TPR of the best membership-inference attack at each FPR, its advantage, the
    Bayes risk at each prior, reconstruction success at each baseline and the mu-GDP fit."""
    fprs = check_fprs(fprs)
    priors = check_rates(priors, "prior")
    baselines = check_rates(baselines, "baseline")
    acc = Accountant(rows, eps_error, as_relation(relation),
                     cancel=cancel, screen=False)
    return risk_of(acc, fprs, priors=priors, baselines=baselines, gdp=gdp)


#: below this delta the risk read-out takes the profiles' bracket (``_deltas``)
SMALL_DELTA = 1e-6


def _deltas(acc: Accountant, xs: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The certified delta bracket at each x: the accountant's delta query (closed forms, the
    plain compositions), except where the profiles at ``level`` put delta below SMALL_DELTA.
    There the query would compose the rows again tilted (1000 distinct DP-SGD steps: 8 s for
    the read-out) for digits the advantage and the Bayes risks, min(p, 1 - p) (1 - delta), do
    not show: the profiles' bracket (additive error ``level``) is taken as it is."""
    lo, est, up = (np.array(a, dtype=float) for a in acc.delta_curve(xs, level=level, refine=False))
    for i, x in enumerate(xs):
        if up[i] >= SMALL_DELTA:
            b = acc.delta(float(x))
            lo[i], est[i], up[i] = b.lower, b.estimate, b.upper
    return lo, est, up


def risk_of(acc: Accountant, fprs: Sequence[float] = DEFAULT_FPRS, level: float = LEVEL,
            priors: Sequence[float] = DEFAULT_PRIORS, baselines: Sequence[float] = DEFAULT_BASELINES,
            gdp: bool = True) -> Risk:
    """``risk`` from an accountant that may already hold the compositions (the view model's):
    its profiles at ``level`` give the TPR brackets (and reconstruction's, at FPR = baseline),
    the advantage and the Bayes risks; the lower ends of what an attack
    achieves come from the attack pairs when a row's pair is only an upper bound."""
    fprs = check_fprs(fprs)
    priors = check_rates(priors, "prior") if priors else ()
    baselines = check_rates(baselines, "baseline") if baselines else ()
    rows, rel, cancel = acc.given_rows, acc.relation, acc.cancel
    alpha = np.array(fprs + baselines)
    lo, _, up = tpr_bounds(acc, alpha, level)
    xs = np.array([0.0] + [abs(math.log((1.0 - p) / p)) for p in priors])
    # (delta read from the same profiles, additive error ``level``: the advantage and the risks
    # are read to a few digits, so no query of its own, which far out would compose the rows
    # again tilted; 1000 distinct DP-SGD steps: 8 s for the read-out before)
    d_lo, _, d_up = _deltas(acc, xs, level)
    if has_untight(rows):  # lower ends from the attack pairs, which are realised
        accs = [Accountant(a, acc.eps_error, cancel=cancel, screen=False) for a in attack_rows(rows, rel)]
        lo = np.minimum(np.maximum.reduce([tpr_bounds(a, alpha, level)[0] for a in accs]), up)
        d_lo = np.minimum(np.maximum.reduce([_deltas(a, xs, level)[0] for a in accs]), d_up)
    ivs = [Interval(float(a), float(b)) for a, b in zip(lo, up)]
    adv = Interval(max(0.0, float(d_lo[0])), min(1.0, float(d_up[0])))
    bayes = tuple(BayesRisk(p, Interval(min(p, 1 - p) * max(0.0, 1.0 - min(1.0, float(d))),
                                        min(p, 1 - p) * max(0.0, 1.0 - max(0.0, float(lo_d)))))
                  for p, d, lo_d in zip(priors, d_up[1:], d_lo[1:]))
    fit = None
    if gdp:
        try:
            fit = gdp_fit(acc, level)
        except (ArithmeticError, ValueError, MemoryError) as exc:  # the rest of the read-out stands
            fit = GdpFit(None, None, None, False, "none", f"mu-GDP could not be certified: {exc}")
    n = len(fprs)
    return Risk(fprs, tuple(ivs[:n]), adv, bayes, tuple(baselines), tuple(ivs[n:]), fit)
