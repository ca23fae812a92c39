"""Privacy audits: the epsilon a one-run audit proves, and what an audit could show.

The game (Steinke, Nasr, Jagielski, "Privacy auditing with one (1) training run", NeurIPS 2023,
arXiv 2305.08846): m canaries, each included independently with probability 1/2; from one
output the auditor guesses in or out for r of them (abstaining on the rest); v guesses are
correct. With q = e^eps / (1 + e^eps) and B ~ Binomial(r, q):

* an eps-DP mechanism has P[v correct or more] <= beta = P[B >= v] (their Theorem 3.1);
* an (eps, delta)-DP mechanism has P[...] <= beta + alpha 2 m delta, where alpha is the
  largest over i = 1..v of P[v - i <= B < v] / i (their Theorem 5.2; their appendix code).

A claim (eps, delta) is rejected when that p-value is at most 1 - confidence; the audit's lower
bound is the largest eps rejected (0 when none is), found by brentq on a bracket found by
doubling. The p-value is non-decreasing in eps (each term of the max is when 2 m delta <= 1;
checked numerically beyond), and at delta = 0 the bound is exact: P[B >= v] = 1 - confidence.
For v above EXACT_LEVELS, alpha is bounded on a grid of i (S(i) / i <= S(i_b) / i_a between
grid points, S increasing): an upper bound, so the p-value stays valid.

``fdp_epsilon`` is the f-DP refinement (Mahloujifar, Melis, Chaudhuri, ICML 2025; the analysis
is in audit_fdp.py) with the Gaussian family: for each eps the mu-GDP curve with delta_mu(eps) =
delta; the largest eps whose curve the count rejects. It shows that the mechanism is not
mu-GDP; it bounds epsilon only for a mechanism whose tradeoff curve is Gaussian (as the paper's
"empirical privacy" does). At delta = 0 no Gaussian curve applies (delta_mu(eps) > 0 for every
mu > 0), so it is None. ``tradeoff_p_value`` tests a composition's own certified curve instead:
the check that applies to every mechanism.

``audit_plan``: what an audit with m canaries could show, with expected counts. Model: the
auditor guesses "in" when a canary's score is above a threshold (false-positive rate alpha,
true-positive rate tpr) and "out" below the mirrored threshold (wrong with probability alpha,
right with tpr, by the symmetry of the tradeoff curve); the two regions are disjoint when alpha
+ tpr <= 1. Each canary is then guessed with probability tpr + alpha and rightly with tpr, so
r = m (tpr + alpha) rounded up and v = m tpr rounded down (fewer right, more guesses: a smaller
bound). The plan is the one-run bound (valid for every mechanism) at these counts, maximised
over the grid; a real audit's counts vary around them.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np
from scipy.optimize import brentq
from scipy.special import expit
from scipy.stats import binom

from . import audit_fdp
from ..core.validate import check_number, show
from ..pairs.gdp import log_delta

#: the field names messages use (the command line passes its option names instead)
LABELS = {k: k for k in ("canaries", "guesses", "correct", "delta", "confidence")}
MAX_CANARIES = 10**7
#: up to this many correct guesses, alpha is exact over every i; beyond, a bound on a grid
EXACT_LEVELS = 2048
#: false-positive rates at which a composition's tradeoff curve is read for a plan or a test
PLAN_ALPHA = np.concatenate([[0.0], np.geomspace(1e-10, 1.0, 301)])


@dataclass(frozen=True)
class AuditResult:
    epsilon_lower: float
    method: str  # "one_run" or "fdp": which bound is the larger
    one_run: float
    fdp: float | None  # None at delta = 0
    canaries: int
    guesses: int
    correct: int
    delta: float
    confidence: float

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class AuditPlan:
    canaries: int
    epsilon_lower: float
    guesses: int
    correct: int
    alpha: float | None  # the false-positive rate of the best threshold (None: no audit shows anything)

    def as_dict(self) -> dict:
        return asdict(self)


def _count(value: object, label: str, lo: int, hi: int, hi_text: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not lo <= value <= hi:
        raise ValueError(f"{label} must be an integer between {lo} and {hi_text}; you typed {show(value)}")
    return int(value)


def check_audit(canaries: object, guesses: object, correct: object, delta: object = 0.0,
                confidence: object = 0.95, labels: dict | None = None) -> tuple[int, int, int, float, float]:
    """The audit's inputs checked, or a ValueError naming the field (``labels``) and the value."""
    lab = {**LABELS, **(labels or {})}
    m = _count(canaries, lab["canaries"], 1, MAX_CANARIES, f"{MAX_CANARIES:,}".replace(",", ""))
    r = _count(guesses, lab["guesses"], 0, m, f"{lab['canaries']} ({m})")
    v = _count(correct, lab["correct"], 0, r, f"{lab['guesses']} ({r})")
    d = check_number(lab["delta"], delta, 0.0, 1.0, hi_open=True, field="delta")
    c = check_number(lab["confidence"], confidence, 0.0, 1.0, lo_open=True, hi_open=True, field="confidence")
    return m, r, v, d, c


def _alpha(r: int, v: int, q: float, beta: float) -> float:
    """max over i = 1..v of P[v - i <= B <= v - 1] / i (exact), or an upper bound on a grid."""
    if v <= EXACT_LEVELS:
        pmf = binom.pmf(np.arange(v - 1, -1, -1), r, q)  # k = v - 1, ..., 0
        s = np.cumsum(pmf)
        return float(np.max(s / np.arange(1, v + 1)))
    mode, sd = r * q, math.sqrt(r * q * (1 - q))
    near = np.arange(math.floor(mode - 12 * sd) - 1, math.ceil(mode + 12 * sd) + 2, max(1, int(sd / 20)))
    grid = np.concatenate([np.arange(1, 257), v - 1 - near,  # i near v and k near the mode
                           np.round(np.geomspace(1, v, 2000)).astype(np.int64), [v]])
    grid = np.unique(grid[(grid >= 1) & (grid <= v)])
    k = v - 1 - grid  # S(i) = P[B > v - 1 - i] - P[B > v - 1], or from the cdf below the mode
    s = np.where(k >= mode, binom.sf(k, r, q) - beta, binom.cdf(v - 1, r, q) - binom.cdf(k, r, q))
    s = np.maximum.accumulate(np.maximum(s, 0.0))
    gap = np.concatenate([np.where(np.diff(grid) > 1, s[1:] / grid[:-1], 0.0), [0.0]])
    ratio = np.maximum(s / grid, gap)
    return float(np.max(ratio)) * (1 + 1e-12)


def one_run_p_value(canaries: int, guesses: int, correct: int, epsilon: float, delta: float = 0.0) -> float:
    """P[correct or more] under (epsilon, delta)-DP: Steinke et al.'s bound (at most 1)."""
    m, r, v = canaries, guesses, correct
    if v == 0:
        return 1.0
    q = float(expit(epsilon))
    beta = float(binom.sf(v - 1, r, q))
    if delta == 0.0:
        return min(beta, 1.0)
    return min(beta + _alpha(r, v, q, beta) * 2.0 * m * delta, 1.0)


def _largest_rejected(g, hi: float = 1.0) -> float:
    """The largest eps >= 0 with g(eps) <= 0, g non-decreasing (0 when g(0) > 0)."""
    if g(0.0) > 0:
        return 0.0
    lo = 0.0
    while g(hi) <= 0:
        lo, hi = hi, 2.0 * hi
        if hi > 1e4:  # no claim up to here survives: far beyond any meaningful epsilon
            return lo
    return float(brentq(g, lo, hi, xtol=1e-13, rtol=4 * np.finfo(float).eps, maxiter=500))


def one_run_epsilon(canaries: object, guesses: object, correct: object, delta: object = 0.0,
                    confidence: object = 0.95, labels: dict | None = None) -> float:
    """The largest epsilon the audit rejects at ``confidence`` (Steinke et al.; 0: none)."""
    m, r, v, d, c = check_audit(canaries, guesses, correct, delta, confidence, labels)
    level = 1.0 - c
    return _largest_rejected(lambda e: one_run_p_value(m, r, v, e, d) - level)


def gaussian_mu(epsilon: float, delta: float) -> float:
    """The mu with delta_mu(epsilon) = delta (rounded up: a larger mu is a weaker claim)."""
    ld = math.log(delta)
    g = lambda mu: float(log_delta(mu, epsilon)) - ld  # noqa: E731  (increasing in mu)
    lo, hi = 1e-12, 1.0
    if g(lo) >= 0:
        return lo
    while g(hi) < 0:
        lo, hi = hi, 2.0 * hi
    mu = float(brentq(g, lo, hi, xtol=1e-15, rtol=4 * np.finfo(float).eps, maxiter=500))
    return mu * (1 + 1e-12) + 1e-15


def fdp_epsilon(canaries: object, guesses: object, correct: object, delta: object = 0.0,
                confidence: object = 0.95, labels: dict | None = None) -> float | None:
    """The largest epsilon whose Gaussian curve (delta_mu(epsilon) = delta) the count rejects
    (Mahloujifar et al.); None at delta = 0, where no Gaussian curve applies."""
    m, r, v, d, c = check_audit(canaries, guesses, correct, delta, confidence, labels)
    if d == 0.0:
        return None
    level = 1.0 - c
    return _largest_rejected(lambda e: -audit_fdp.rejects(audit_fdp.gaussian_finv(gaussian_mu(e, d)),
                                                         m, r, v, level))


def audit(canaries: object, guesses: object, correct: object, delta: object = 0.0,
          confidence: object = 0.95, labels: dict | None = None) -> AuditResult:
    """Both bounds and the larger (``method`` says which; the f-DP one assumes a Gaussian curve)."""
    m, r, v, d, c = check_audit(canaries, guesses, correct, delta, confidence, labels)
    one = one_run_epsilon(m, r, v, d, c)
    fdp = fdp_epsilon(m, r, v, d, c)
    method = "fdp" if fdp is not None and fdp > one else "one_run"
    return AuditResult(max(one, fdp or 0.0), method, one, fdp, m, r, v, d, c)


def tradeoff_p_value(alpha, tpr, canaries: object, guesses: object, correct: object,
                     labels: dict | None = None) -> float:
    """The count's p-value under a mechanism whose best TPR at FPR alpha is at most ``tpr``
    (a certified curve's optimistic side): at most 1 - confidence means the audit contradicts it."""
    m, r, v, _, _ = check_audit(canaries, guesses, correct, labels=labels)
    a, t = _curve(alpha, tpr)
    return audit_fdp.p_value(audit_fdp.hull_finv(a, t), m, r, v)


def _curve(alpha, tpr) -> tuple[np.ndarray, np.ndarray]:
    a = np.asarray(alpha, dtype=float).ravel()
    t = np.asarray(tpr, dtype=float).ravel()
    if a.shape != t.shape or a.size == 0 or not (np.all(np.isfinite(a)) and np.all(np.isfinite(t))):
        raise ValueError("the tradeoff needs as many finite true-positive rates as false-positive rates")
    if np.any((a < 0) | (a > 1) | (t < 0) | (t > 1)):
        raise ValueError("the tradeoff's rates must be between 0 and 1")
    return a, t


def audit_plan(alpha, tpr, canaries: object, delta: object = 0.0, confidence: object = 0.95,
               labels: dict | None = None) -> AuditPlan:
    """The largest one-run bound an audit with ``canaries`` canaries shows at expected counts,
    over the thresholds of a tradeoff (``tpr``: the best TPR at each FPR ``alpha``)."""
    m, _, _, d, c = check_audit(canaries, 0, 0, delta, confidence, labels)
    a, t = _curve(alpha, tpr)
    ok = (a + t <= 1.0) & (t > a)
    a, t = a[ok], t[ok]
    v = np.floor(m * t * (1 + 1e-12)).astype(np.int64)  # (a product that is whole stays whole)
    r = np.clip(np.ceil(m * (t + a) * (1 - 1e-12)).astype(np.int64), v, m)
    keep = v > 0
    a, v, r = a[keep], v[keep], r[keep]
    if a.size == 0:
        return AuditPlan(m, 0.0, 0, 0, None)
    # an upper bound on each candidate's bound (vectorised bisection on a p-value's lower
    # bound: alpha >= P[B = v - 1] and >= P[B < v] / v): try the best first
    level = 1.0 - c
    lo, hi = np.zeros(a.size), np.full(a.size, 60.0)
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        q = expit(mid)
        beta = binom.sf(v - 1, r, q)
        rej = beta + 2.0 * m * d * np.maximum(binom.pmf(v - 1, r, q), (1.0 - beta) / v) <= level
        lo, hi = np.where(rej, mid, lo), np.where(rej, hi, mid)
    best = AuditPlan(m, 0.0, 0, 0, None)
    for k in np.argsort(-hi, kind="stable"):
        if hi[k] <= best.epsilon_lower:
            break
        if best.epsilon_lower > 0 and one_run_p_value(m, int(r[k]), int(v[k]), best.epsilon_lower, d) > level:
            continue  # not even the best so far is rejected (the p-value grows with epsilon)
        e = one_run_epsilon(m, int(r[k]), int(v[k]), d, c)
        if e > best.epsilon_lower:
            best = AuditPlan(m, e, int(r[k]), int(v[k]), float(a[k]))
    return best
