"""What the window's Audit tab shows: a privacy audit's lower bound (accounting/queries/audit.py)
beside the shown result's certified epsilon, and what an audit of the composition could show.
No Qt; the tab only prints an ``AuditView``.

The certified epsilon at the audit's delta is the result's published one when the deltas agree;
otherwise it is read off the certified privacy profile (the smallest grid epsilon whose
certified delta is at most the audit's: valid, as delta decreases in epsilon). The composition's
tradeoff curve (its optimistic side: 1 - T_lower from ``Result.tradeoff``, the attack-risk
read-out's TPRs, and at small false-positive rates the bound the certified profile gives) serves
the plan and the test of the composition's own curve; both run in well under a second for the
counts people type (the f-DP fill keeps at most 1024 levels).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..accounting.queries.audit import AuditPlan, AuditResult, audit, audit_plan, tradeoff_p_value
from .view_model import published

#: the fields' names, as the tab shows them (messages name them)
LABELS = {"canaries": "Canaries", "guesses": "Guesses", "correct": "Correct guesses", "delta": "Audit δ",
          "confidence": "Confidence"}


@dataclass(frozen=True)
class AuditView:
    """``audit``: the bounds (None when a field is bad: ``error`` says which); ``certified_upper``:
    the result's certified epsilon at the audit's delta (None: ``upper_note`` says why);
    ``exceeds``: the audit contradicts the accounting (its one-run bound is above the certified
    epsilon, or the count rejects the composition's certified tradeoff curve: ``curve_p_value``);
    ``plan``: what an audit with as many canaries could show (None: ``plan_note``)."""

    audit: AuditResult | None = None
    error: str | None = None
    certified_upper: float | None = None
    upper_note: str = ""
    exceeds: bool = False
    curve_p_value: float | None = None
    plan: AuditPlan | None = None
    plan_note: str = ""


def certified_at(result, delta: float) -> tuple[float | None, str]:
    """The result's certified epsilon at ``delta`` (None and why, when it has none)."""
    if result is None:
        return None, "no result yet"
    if delta == result.request.delta:
        return published(result), ""
    if delta == 0.0:
        return None, "no certified epsilon at δ = 0"
    prof = result.profile
    up = None if prof is None else prof.columns.get("upper")
    if up is not None:
        ok = np.isfinite(up) & (up <= delta)
        if ok.any():
            return float(prof.x[np.argmax(ok)]), ""
    return None, f"the certified profile does not reach δ = {delta:g}; set the audit's δ to the target δ"


#: false-positive rates at which the certified profile bounds the best TPR (the tradeoff curve's
#: linear grid says little below 1%, where audits with few wrong guesses look)
PROFILE_ALPHA = np.geomspace(1e-10, 1.0, 301)


def profile_tpr(result, alpha: np.ndarray) -> np.ndarray | None:
    """An upper bound on the best TPR at each ``alpha`` from the certified profile: (eps,
    delta)-DP in both orders gives TPR <= e^eps alpha + delta and <= 1 - e^-eps (1 - delta - alpha)."""
    prof = None if result is None else result.profile
    up = None if prof is None else prof.columns.get("upper")
    if prof is None or up is None:
        return None
    up = np.asarray(up, dtype=np.float64)
    ok = np.isfinite(up) & (up < 1.0)
    if not ok.any():
        return None
    e, d = np.minimum(np.asarray(prof.x, dtype=np.float64)[ok], 700.0), up[ok]
    a = alpha[:, None]
    t = np.minimum(np.exp(e) * a + d, 1.0 - np.exp(-e) * (1.0 - d - a)).min(axis=1)
    return np.clip(t, alpha, 1.0)


def tradeoff_points(result) -> tuple[np.ndarray, np.ndarray] | None:
    """(alpha, best TPR's upper end) from the result's tradeoff curve, risk read-out and certified
    profile (each point the least of the bounds that reach it), or None."""
    xs, ts = [], []
    if result is not None and result.profile is not None:
        xs.append(PROFILE_ALPHA)
        ts.append(np.ones(PROFILE_ALPHA.shape))
    curve = None if result is None else result.tradeoff
    lower = None if curve is None else curve.columns.get("lower")
    if curve is not None and lower is not None:
        xs.append(np.asarray(curve.x, dtype=np.float64))
        ts.append(1.0 - np.asarray(lower, dtype=np.float64))
    risk = None if result is None else getattr(result, "risk", None)
    if risk is not None:
        xs.append(np.asarray(risk.fprs, dtype=float))
        ts.append(np.array([t.upper for t in risk.tpr], dtype=float))
    if not xs:
        return None
    alpha, tpr = np.concatenate(xs), np.concatenate(ts)
    ok = np.isfinite(alpha) & np.isfinite(tpr)
    if not ok.any():
        return None
    alpha, tpr = alpha[ok], np.clip(tpr[ok], 0.0, 1.0)
    from_profile = profile_tpr(result, alpha)
    if from_profile is not None:
        tpr = np.minimum(tpr, from_profile)
    return alpha, np.maximum(tpr, alpha)


def evaluate(canaries: object, guesses: object, correct: object, delta: object, confidence: object,
             result=None) -> AuditView:
    """The audit of the typed counts, compared with ``result`` (an engine Result, or None)."""
    try:
        res = audit(canaries, guesses, correct, delta, confidence, LABELS)
    except ValueError as exc:
        return AuditView(error=str(exc))
    upper, upper_note = certified_at(result, res.delta)
    points = tradeoff_points(result)
    p_curve = plan = None
    plan_note = "no result yet" if result is None else "the result has no tradeoff curve"
    if points is not None:
        alpha, tpr = points
        p_curve = tradeoff_p_value(alpha, tpr, res.canaries, res.guesses, res.correct)
        plan = audit_plan(alpha, tpr, res.canaries, res.delta, res.confidence)
        plan_note = ""
    exceeds = (upper is not None and res.one_run > upper) or (p_curve is not None and
                                                              p_curve <= 1.0 - res.confidence)
    return AuditView(res, None, upper, upper_note, bool(exceeds), p_curve, plan, plan_note)


def default_delta(result) -> float:
    """The audit's δ when the user has not typed one: the result's target δ, else 0."""
    d = None if result is None else result.request.delta
    return float(d) if d is not None and math.isfinite(d) else 0.0
