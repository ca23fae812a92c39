"""The window's view model: ``compute(request, progress=..., cancel=...)`` produces everything
the GUI shows for a composition (headline bracket, comparisons, curves, error budget) as plain
data. No Qt, no files.

``cancel`` is a callable returning True (or an object with ``is_set()``, such as a
``threading.Event``); it is checked between stages and inside the composition loops (long
numpy calls run in a helper thread meanwhile, compose.interruptible), so a cancel is honoured
at once. ``progress(fraction, text)`` is called between stages and within the long ones (discretising,
each row's power on the FFT path, chunk by chunk), with fractions that never decrease.
"""
from __future__ import annotations

import math
import threading
import time
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Sequence, TypeVar, cast

import numpy as np

from ..accounting.queries import bracket
from ..accounting.queries import comparisons as cmp
from ..accounting.queries.accountant import Accountant
from ..accounting.queries.escalation import SPENT_WORDS
from ..accounting.core.validate import check_delta, check_eps_error, check_epsilon
from ..accounting.core.errors import Cancelled
from ..accounting.core.values import Relation
from ..accounting.queries.certified import CertifiedUpper, best_upper
from ..accounting.numerics.pricing import VIEW_S
from ..accounting.queries.comparisons import rdp_seconds
from ..accounting.core.cost import Cost
from ..accounting.queries.curves import atom_kind, pld_for_plot, tradeoff_bounds
from ..accounting.mechanisms import Row
from ..accounting.numerics.pipeline import error_level
from ..accounting.core.values import Bounds
from ..accounting.queries.risk import DEFAULT_FPRS, Risk, risk_of
from ..accounting.queries.selection import Tuning, TuningResult, tuned_epsilon

__all__ = ["Request", "Result", "Curve", "compute", "cost", "Cost", "Cancelled", "CURVES"]

_T = TypeVar("_T")


@dataclass(frozen=True)
class Request:
    rows: tuple[Row, ...]
    delta: float = 1e-5
    #: epsilon at which delta is reported (None: skip)
    epsilon: float | None = 1.0
    eps_error: float = 0.01
    neighbouring: str = "add_remove"
    #: records one protected person may contribute
    group_size: int = 1
    profile_points: int = 120
    tradeoff_points: int = 201
    #: index of the row whose count is swept for the epsilon-vs-count curve (None: skip)
    steps_row: int | None = None
    steps_points: int = 40
    want_pld: bool = True
    #: false-positive rates of the attack-risk read-out (``Result.risk``; empty: skip)
    risk_fprs: tuple[float, ...] = DEFAULT_FPRS
    #: an id the caller may use to match results to requests
    request_id: int = 0
    #: how the composition was tuned (``Result.tuning`` bounds releasing the best run); None: skip
    tuning: Tuning | None = None


@dataclass(frozen=True)
class Curve:
    """x plus named y columns (e.g. lower / estimate / upper / rdp / gdp)."""

    x_name: str
    x: np.ndarray
    columns: dict[str, np.ndarray | None] = field(default_factory=dict)


@dataclass(frozen=True)
class Result:
    request: Request
    epsilon: Bounds
    delta: Bounds | None
    comparisons: dict
    comparisons_delta: dict
    profile: Curve | None
    tradeoff: Curve | None
    steps: Curve | None
    pld: Curve | None
    pld_inf_mass: float
    budget: list[dict]
    elapsed: float
    #: the publishable bound on epsilon at delta (and on delta at epsilon): the smallest valid
    #: upper bound among the PRV accountant's and the comparison bounds (certified.py)
    certified_upper: CertifiedUpper | None = None
    certified_upper_delta: CertifiedUpper | None = None
    #: the engine's notes on the answers (a bracket wider than asked, and why)
    warnings: tuple[str, ...] = ()
    #: the atoms (point masses) of the composed PLD: x = their loss values, column "mass" their
    #: probabilities; ``pld`` holds the density of the rest (None when every row is atoms only)
    pld_atoms: Curve | None = None
    #: with shuffled rows (whose bracket bounds a dominating pair, not the truth): a proven lower
    #: bound on the true epsilon at delta, and what Poisson accounting would say (bracket.py)
    epsilon_at_least: float | None = None
    poisson_epsilon: Bounds | None = None
    #: for balls-in-bins rows: the same training with shuffled batches, (proven lower, certified
    #: upper, certified upper) (bracket.shuffled_contrast)
    shuffled_epsilon: Bounds | None = None
    #: per row as given: (half-width of the noise's 95% interval, its unit), None without noise
    noise_95: tuple[tuple[float, str] | None, ...] = ()
    #: the best membership-inference attack's certified TPR at ``request.risk_fprs`` and its
    #: advantage (risk.py), None when not asked for
    risk: Risk | None = None
    #: the curves still being computed (``compute``'s ``partial`` answers; empty when complete)
    pending: tuple[str, ...] = ()
    #: the parts that could not be computed, each with the reason: (part, message) pairs (a part
    #: of PARTS, "bracket" for the proven lower bound, "contrast" for Poisson accounting's number
    #: beside it); the rest of the answer stands
    failed: tuple[tuple[str, str], ...] = ()
    #: epsilon at delta of releasing the best of the tuning runs (selection.py's
    #: ``TuningResult.as_dict()``: "epsilon", "method", "runs", "mean", "eta", "delta", "note"),
    #: None when the request has no tuning
    tuning: dict | None = None


def published(result: "Result") -> float:
    """The epsilon to publish: the smallest certified upper bound (certified.best_upper), which
    every marker, caption and headline shows."""
    best = getattr(result, "certified_upper", None)
    return best.value if best is not None else result.epsilon.upper


def bracket_shown(result: "Result") -> tuple[str, float, float, float]:
    """(name, lower, estimate, accuracy achieved) of the PRV bracket beside the published bound,
    the one reading the window, the report and the command line give:

    * named "PRV bracket", or "bracket of the dominating pair" when some rows' pairs are upper
      bounds only (its lower end is then not a bound on the truth; ``epsilon_at_least`` is);
    * the estimate never above the published bound (a tighter accountant caps it);
    * the accuracy is the half-width the bracket has, not the one asked for (a bracket widened
      by float64 or a capped grid says so here too)."""
    b = result.epsilon
    untight = getattr(result, "epsilon_at_least", None) is not None
    name = "Bracket of the dominating pair" if untight else "PRV bracket"
    est = b.estimate if untight else min(b.estimate, published(result))
    half = 0.5 * (b.upper - b.lower) if math.isfinite(b.upper) else math.inf
    return name, b.lower, est, half


def failure(result: "Result | None", part: str) -> str | None:
    """Why ``part`` of ``result`` could not be computed, or None when it was (or was not asked)."""
    return dict(getattr(result, "failed", ()) or ()).get(part)


#: each part of an answer in words (notes, reports, the command line)
PART_TITLES = {"headline": "the PRV bracket", "comparisons": "the comparison accountants",
               "delta": "δ at ε", "tradeoff": "the tradeoff function",
               "pld": "the privacy loss distribution", "risk": "the attack-risk read-out",
               "profile": "the privacy profile", "steps": "ε versus steps",
               "refine": "the privacy profile's small end in long double",
               "bracket": "the proven lower bound", "budget": "the error budget",
               "contrast": "what Poisson accounting would say (for contrast)",
               "tuning": "the hyperparameter-tuning bound"}


#: how each method of selection.py bounds the tuned release, in words
TUNING_METHODS = {"prv": "certified PRV bound", "rdp": "RDP bound", "pure": "pure-DP bound"}


def tuning_sentence(tuning: TuningResult | dict | None, fmt: Callable[[float], str] = repr) -> str | None:
    """The line the window, the report and the command line give for releasing the best of the
    tuning runs (a ``TuningResult`` or its dict), e.g. 'Hyperparameter tuning (best of 10 runs):
    ε ≤ 1.81 at δ = 1e-05 (certified PRV bound; ...).', the epsilon written by ``fmt`` (rounded
    up by the caller's formatter); None without tuning."""
    if tuning is None:
        return None
    if isinstance(tuning, dict):
        tuning = TuningResult(**tuning)
    spec = Tuning(tuning.runs, tuning.mean, tuning.eta)
    how = TUNING_METHODS.get(tuning.method, tuning.method)
    value = "∞" if math.isinf(tuning.epsilon) else fmt(tuning.epsilon)
    return (f"Hyperparameter tuning ({spec.describe()}): ε ≤ {value} at δ = {tuning.delta:g} ({how}"
            + (f"; {tuning.note}" if tuning.note else "") + ").")


def failure_notes(result: "Result | None") -> list[str]:
    """One sentence per reason for the parts of ``result`` that could not be computed, e.g.
    'Not computed: the tradeoff function, the privacy profile (the grid is ...).'"""
    by_reason: dict[str, list[str]] = {}
    for part, reason in getattr(result, "failed", ()) or ():
        by_reason.setdefault(reason, []).append(PART_TITLES.get(part, part))
    return [f"Not computed: {', '.join(dict.fromkeys(parts))} ({reason})." for reason, parts in by_reason.items()]


def part_failure_text(exc: BaseException) -> str:
    """A one-line reason for a part that failed, in the engine's words."""
    if isinstance(exc, OverflowError):  # a loss too large to index on any grid
        return ("the privacy loss is too large for a grid: the composition is far from private at these "
                "parameters (for example a very small noise scale)")
    text = (str(exc) or type(exc).__name__).splitlines()[0]
    if isinstance(exc, MemoryError) and "accuracy" not in text:
        text += "; try a larger accuracy (ε error)"
    return text


def _cancel_fn(cancel) -> Callable[[], bool] | None:
    if cancel is None:
        return None
    if hasattr(cancel, "is_set"):
        return cancel.is_set
    return cancel


def region_boundary(eps: float, delta: float, alpha: np.ndarray) -> np.ndarray:
    """The tradeoff curve of (eps, delta)-DP: max(0, 1 - delta - e^eps a, e^-eps (1 - delta - a))."""
    if math.isinf(eps):
        return np.zeros_like(alpha)
    with np.errstate(over="ignore"):
        a = 1.0 - delta - math.exp(min(eps, 700.0)) * alpha
    b = math.exp(-eps) * (1.0 - delta - alpha)
    return np.maximum.reduce([np.zeros_like(alpha), a, b])


#: the epsilon-versus-count curve reaches at least this count (a row run once gets a curve too)
STEPS_MIN_TOTAL = 10


def steps_counts(total: int, points: int) -> np.ndarray:
    """Up to ``points`` counts from 1 to ``total``: log-spaced at first, then linear."""
    points = max(2, min(int(points), 200))
    if total <= points:
        return np.arange(1, total + 1)
    lin = np.linspace(1, total, points // 2)
    geo = np.geomspace(1, total, points - points // 2)
    return np.unique(np.round(np.concatenate([lin, geo])).astype(np.int64))


def _wants_curves(request: Request) -> bool:
    return request.profile_points > 0 or request.tradeoff_points > 0 or request.want_pld


def _steps(request: Request) -> tuple[int, np.ndarray] | None:
    """(row index, counts) of the request's epsilon-versus-count curve, or None."""
    rows = request.rows
    if request.steps_row is None or not 0 <= request.steps_row < len(rows):
        return None
    # (a row run once or a few times: the curve still shows where ε goes with more runs, up to
    # STEPS_MIN_TOTAL, instead of a lone point nobody can see)
    return request.steps_row, steps_counts(max(rows[request.steps_row].count, STEPS_MIN_TOTAL),
                                           request.steps_points)


def cost(request: Request) -> Cost:
    """What ``compute(request)`` will cost: seconds, peak bytes, the grid and why, worked out from
    the plan in milliseconds (Accountant.cost; numerics/pricing.py). Raises ValueError for bad input."""
    check_delta(request.delta)
    check_eps_error(request.eps_error)
    if request.epsilon is not None:
        check_epsilon(request.epsilon)
    curves = _wants_curves(request)
    acc = Accountant(list(request.rows), request.eps_error, request.neighbouring, screen=not curves,
                     group_size=request.group_size)
    # (the counts are an integer array: Accountant.cost takes any sequence of ints, arrays included)
    steps = cast("tuple[int, Sequence[int]] | None", _steps(request))
    est = acc.cost(delta=request.delta, epsilon=request.epsilon, curves=curves, steps=steps)
    t = request.tuning
    if t is not None and t.runs == "fixed" and t.mean > 1:  # the best of k runs: their k-fold composition
        est = est + Accountant([Row(r.mechanism, r.count * int(t.mean)) for r in request.rows], request.eps_error,
                               request.neighbouring, group_size=request.group_size).cost(delta=request.delta)
    if not curves:
        return replace(est, first=est.seconds)
    # (the comparison accountants' RDP curves of the rows not worked out yet: a second for a
    # window of 25 distinct DP-SGD rows)
    rdp = rdp_seconds(acc.rows)
    why = f"the comparison accountants work out the rows' RDP curves ({rdp:.0f} s)" if rdp >= 1 else ""
    # the headline comes first, alone (``compute``: epsilon at delta, the second order screened)
    head = Accountant(list(request.rows), request.eps_error, request.neighbouring,
                      group_size=request.group_size).cost(delta=request.delta)
    return replace(est + Cost(VIEW_S + rdp, 0.0, why=why), first=min(head.seconds, est.seconds))


#: the curves a Result may still wait for, in the order ``compute`` delivers them
CURVES = ("tradeoff", "pld", "profile", "steps")
#: every part of an answer after the headline, in the order ``compute`` delivers them
PARTS = ("comparisons", "delta", "tradeoff", "pld", "risk", "profile", "steps", "refine")
#: the order of delivery with the part only a tuned composition asks for (``Request.tuning``)
_DELIVERY = PARTS[:2] + ("tuning",) + PARTS[2:]


def compute(request: Request, progress: Callable[[float, str], None] | None = None,
            cancel=None, partial: Callable[[Result], None] | None = None) -> Result:
    """Run every query of ``request``; raises ValueError for bad input, Cancelled on cancel.

    ``partial(result)`` hears the answer as it grows: first the headline (the certified epsilon
    bracket) with every part still to come listed in ``result.pending``, then once more after
    each part (PARTS: the comparison accountants, delta at epsilon, the tradeoff, the PLD, the
    attack risk, the profile, the steps curve),
    each time with the parts so far, and last the profile again with its small end recomposed
    in long double where round-off needs it ("refine"; until then the profile shown holds, with
    the larger additive error of the plain composition). The returned Result is the last of
    them, complete (``pending`` empty). All curves share the compositions of the headline (the
    Accountant's sides at the same level)."""
    t0 = time.perf_counter()
    check_delta(request.delta)
    check_eps_error(request.eps_error)
    if request.epsilon is not None:
        check_epsilon(request.epsilon)
    cancel_fn = _cancel_fn(cancel)
    given = list(request.rows)

    shown, lock = [0.0], threading.Lock()  # the fraction never goes back (a coarsened grid starts
    # over; the two orders of the pair report from two threads)

    def step(frac: float, text: str) -> None:
        if cancel_fn is not None and cancel_fn():
            raise Cancelled("computation cancelled")
        if progress is not None:
            with lock:
                shown[0] = max(shown[0], frac)
                progress(shown[0], text)

    curves = _wants_curves(request)
    # screened like a single query (the headline comes sooner); the curves then build what the
    # screen skipped, and the final error budget lists the full builds
    acc = Accountant(given, request.eps_error, request.neighbouring, cancel=cancel_fn,
                     group_size=request.group_size)
    rows = acc.rows  # each row's pair under the relation: every accountant below uses these
    step(0.02, "composing")
    at_least = poisson = shuffled = None
    notes: list[str] = []
    failed: list[tuple[str, str]] = []

    def attempt(part: str, fn: Callable[[], _T]) -> _T | None:
        """fn(), or None with the reason kept in ``failed`` when it raises: a part that cannot
        be computed leaves the others standing (Cancelled still stops everything)."""
        try:
            return fn()
        except Cancelled:
            raise
        except Exception as exc:  # noqa: BLE001 - any part's failure is said in its own place
            failed.append((part, part_failure_text(exc)))
            return None
    eps = attempt("headline", lambda: acc.epsilon(request.delta, progress=lambda f: step(0.02 + 0.35 * f,
                                                                                         "composing")))
    headline_failed = eps is None
    if headline_failed:  # the PRV bracket could not be composed: the trivial bracket [0, inf]; the
        # comparison accountants still answer, and the parts that compose the same rows say why not
        eps = Bounds(0.0, math.inf, math.inf)
        curves = False
    assert eps is not None  # (the headline's bracket, or the trivial one just above)
    # (the comparisons before the headline only where a crossing can be the noiseless reading's:
    # cold, 10^4 discrete Gaussians' take 6 s)
    maybe = not headline_failed and eps.lower > 0 and acc.infinite_mass()[0] > 0
    early = _quietly(lambda: cmp.compare_epsilon(rows, request.delta)) if maybe else None
    crossed = early is not None and bracket.crossed(acc, eps.lower, early, request.eps_error)
    if (bracket.has_untight(given) or crossed) and not headline_failed:
        step(0.38, "proven lower bound (a realised pair)")
        at_least = attempt("bracket", lambda: bracket.epsilon_at_least(
            given, request.delta, acc.relation, request.eps_error, cancel=cancel_fn))
        poisson = attempt("contrast", lambda: bracket.poisson_contrast(
            given, request.delta, acc.relation, request.eps_error, cancel=cancel_fn))
        shuffled = attempt("contrast", lambda: bracket.shuffled_contrast(
            given, request.delta, acc.relation, request.eps_error, cancel=cancel_fn))
        if at_least is None:  # (as the API: 0 is proven for any composition, its failure says why no
            at_least = 0.0    # more; the bracket stays the dominating pair's, its lower end no bound)
        # (with the PRV's upper end: the window and the report give these sentences with the
        # published bound in their own place, and leave this note out by matching it)
        notes.append(untight_note(given, at_least, eps.upper, poisson, shuffled))
    steps_of = _steps(request)
    wanted = {"comparisons": True, "delta": request.epsilon is not None, "tradeoff": request.tradeoff_points > 0,
              "pld": request.want_pld, "profile": request.profile_points > 0, "steps": steps_of is not None}
    wanted["refine"], wanted["risk"] = wanted["profile"], bool(request.risk_fprs)
    wanted["tuning"] = request.tuning is not None
    pending = [c for c in _DELIVERY if wanted[c]]
    if headline_failed:
        reason = failed[0][1]
        failed.extend((c, reason) for c in pending if c != "comparisons")
        pending = [c for c in pending if c == "comparisons"]
        wanted = {c: c == "comparisons" for c in wanted}
        steps_of = None
    budget: list[dict] | None  # (None: the final error budget could not be computed)
    budget = (attempt("budget", lambda: acc.error_budget(request.delta)) or []) \
        if acc.total_count and not headline_failed else []
    # the headline first: the certified bracket alone (its upper bound holds on its own; a
    # comparison accountant may lower the published number when it arrives)
    result = Result(request, eps, None, {}, {}, None, None, None, None, 0.0,
                    budget, time.perf_counter() - t0, best_upper(eps.upper, {}), None, tuple(notes) + engine_notes(acc, crossed), None,
                    at_least, poisson, shuffled, tuple(r.mechanism.noise_halfwidth(0.95) for r in given),
                    pending=tuple(pending), failed=tuple(failed))

    def deliver(done: str, **fields) -> None:
        nonlocal result
        pending.remove(done)
        result = replace(result, **fields, pending=tuple(pending), elapsed=time.perf_counter() - t0,
                         warnings=tuple(notes) + engine_notes(acc, crossed), failed=tuple(failed))
        if partial is not None and pending:
            partial(result)

    def part(name: str, fn: Callable[[], dict]) -> None:
        """Compute one part (fn returns its fields) and deliver it, or deliver its failure."""
        fields = attempt(name, fn)
        deliver(name, **(fields if isinstance(fields, dict) else {}))

    if partial is not None and pending:
        partial(result)
    step(0.4, "comparisons")

    def comparisons() -> dict:
        comps = {k: v.as_dict() for k, v in (early or cmp.compare_epsilon(rows, request.delta)).items()}
        return {"comparisons": comps, "certified_upper": best_upper(eps.upper, comps, tie=request.eps_error)}
    part("comparisons", comparisons)
    if wanted["delta"]:
        step(0.42, "delta at epsilon")

        def delta_part() -> dict:
            assert request.epsilon is not None  # (wanted["delta"] says so)
            dlt = acc.delta(request.epsilon)
            comps_d = {k: v.as_dict() for k, v in cmp.compare_delta(rows, request.epsilon).items()}
            return {"delta": dlt, "comparisons_delta": comps_d,
                    "certified_upper_delta": best_upper(dlt.upper, comps_d, want_eps=False)}
        part("delta", delta_part)
    if wanted["tuning"]:
        step(0.44, "hyperparameter tuning")
        tuning = request.tuning
        assert tuning is not None  # (wanted["tuning"] says so)
        part("tuning", lambda: {"tuning": tuned_epsilon(given, acc.relation, request.delta, tuning, request.eps_error,
                                                        accountant=acc, cancel=cancel_fn).as_dict()})
    level = error_level(request.delta)
    # both orders in full only when a curve needs them (a single query may have screened one out)
    profs = (attempt("curves", lambda: acc.profiles(level)) or []) if curves else []
    if curves and failure_of(failed, "curves"):
        reason = failed.pop()[1]
        failed.extend((c, reason) for c in ("tradeoff", "pld", "risk", "profile") if wanted[c])
    if profs and acc.total_count:  # the curves' answers list the full builds in their budget
        result = replace(result, budget=acc.error_budget(request.delta))
    if wanted["tradeoff"]:
        step(0.47, "tradeoff function")
        part("tradeoff", lambda: {"tradeoff": _tradeoff(request, acc, profs, rows, published(result))}
             if not failure_of(failed, "tradeoff") else {})
    if wanted["pld"]:
        step(0.5, "privacy loss distribution")

        def pld_part() -> dict:
            pld = pld_atoms = None
            inf_mass = 0.0
            if profs:
                # the rows' PRVs in both orders: whether the composed PLD has atoms does not
                # depend on it
                kind = atom_kind(r.mechanism.prv(o) for o in acc.orders for r in rows
                                 if r.count > 0 and not r.mechanism.is_trivial() and o in r.mechanism.orders())
                x, dens, inf_mass, ax, am = pld_for_plot(profs[0], atoms=kind)
                pld = Curve("loss", x, {"density": dens})
                pld_atoms = Curve("loss", ax, {"mass": am}) if ax.size else None
            return {"pld": pld, "pld_atoms": pld_atoms, "pld_inf_mass": inf_mass}
        part("pld", pld_part if not failure_of(failed, "pld") else dict)
    if wanted["risk"]:
        step(0.53, "attack risk")
        part("risk", (lambda: {"risk": risk_of(acc, request.risk_fprs, level)})
             if not failure_of(failed, "risk") else dict)
    if wanted["profile"]:
        step(0.55, "privacy profile")
        top = eps.upper if math.isfinite(eps.upper) else 10.0
        grid = np.linspace(0.0, max(1.5 * top, 1.0), int(request.profile_points))

        def profile_part() -> dict:
            others = {"rdp": cmp.rdp_delta_curve(rows, grid), "gdp": cmp.gdp_delta_curve(rows, grid)}
            # first from the headline's compositions as they are; the refined curve comes last
            lo, es, up = acc.delta_curve(grid, level=level, refine=False)
            return {"profile": Curve("epsilon", grid, {"lower": lo, "estimate": es, "upper": up, **others})}
        part("profile", profile_part if not failure_of(failed, "profile") else dict)
    if steps_of is not None:
        step(0.62, "epsilon versus count")

        def steps_part() -> dict:
            # (the counts are an integer array: epsilon_vs_count takes any sequence of ints)
            cs, bounds = acc.epsilon_vs_count(*cast("tuple[int, Sequence[int]]", steps_of), request.delta,
                                              progress=lambda f: step(0.62 + 0.3 * f, "epsilon versus count"))
            others = cmp.epsilon_vs_count(rows, steps_of[0], cs, request.delta)
            return {"steps": Curve("count", cs.astype(float), {
                "lower": np.array([b.lower for b in bounds]),
                "estimate": np.array([b.estimate for b in bounds]),
                "upper": np.array([b.upper for b in bounds]),
                "rdp": others.get("rdp"), "gdp": others.get("gdp")})}
        part("steps", steps_part)
    if wanted["refine"]:
        step(0.98, "privacy profile (small end in long double)")

        def refine_part() -> dict:
            quick = result.profile
            if quick is None:
                return {}
            fine = acc.delta_curve(quick.x, level=level)
            # (profile_part fills lower / estimate / upper with arrays; only rdp / gdp may be None)
            same = all(np.array_equal(a, cast(np.ndarray, quick.columns[k]))
                       for a, k in zip(fine, ("lower", "estimate", "upper")))
            return {"profile": quick if same else Curve("epsilon", quick.x, {
                **quick.columns, "lower": fine[0], "estimate": fine[1], "upper": fine[2]})}
        part("refine", refine_part)
    step(1.0, "done")
    # (once: a budget that failed before the parts fails again, and its reason is said already)
    budget = attempt("budget", lambda: acc.error_budget(request.delta) if acc.total_count else []) \
        if not headline_failed and not failure_of(failed, "budget") else None
    return replace(result, budget=budget if budget is not None else result.budget,
                   elapsed=time.perf_counter() - t0, warnings=tuple(notes) + engine_notes(acc, crossed),
                   failed=tuple(failed))


def failure_of(failed: list[tuple[str, str]], part: str) -> bool:
    return any(p == part for p, _ in failed)


def _tradeoff(request: Request, acc: Accountant, profs, rows, eps_upper: float) -> Curve:
    alpha = np.linspace(0.0, 1.0, int(request.tradeoff_points))
    if profs:
        parts = [tradeoff_bounds(p, alpha) for p in profs]
        lo = np.minimum.reduce([p[0] for p in parts])
        es = np.minimum.reduce([p[1] for p in parts])
        up = np.minimum.reduce([p[2] for p in parts])
    elif acc.total_count == 0:
        lo = es = up = 1.0 - alpha
    else:  # blatant: beta = 0
        lo = es = up = np.zeros_like(alpha)
    mu = cmp.gdp_mu(rows)
    gdp = cmp.gdp_tradeoff(mu, alpha) if mu is not None and math.isfinite(mu) else None
    return Curve("alpha", alpha, {"lower": lo, "estimate": es, "upper": up, "gdp": gdp,
                                  "region": region_boundary(eps_upper, request.delta, alpha)})


_SCHEME_ADJ = {"shuffled": "shuffled", "fixed_size": "fixed-size"}


def engine_notes(acc: Accountant, crossed: bool) -> tuple[str, ...]:
    """The accountant's notes, less "epsilon is infinite" when a comparison accountant certifies
    a finite one (``bracket.crossed``: the infinite mass is the dominating pair's, not the truth's)."""
    return tuple(w for w in acc.warnings if not (crossed and SPENT_WORDS in w))


def _quietly(fn: Callable[[], Any]) -> Any:
    """fn(), or None if it raises (its own part says why later)."""
    try:
        return fn()
    except Exception:  # noqa: BLE001 - the part that needs it computes it again and names the failure
        return None


def untight_sentences(rows: Sequence[Row], at_least: float, upper: float, poisson: Bounds | None,
                      fmt: Callable[[float, bool], str] | None = None,
                      shuffled: Bounds | None = None) -> list[str]:
    """The words beside a bracket whose rows include pairs that are upper bounds only, as
    sentences (the one text the window, the command line and the report show): what each kind
    of such rows means, where the truth lies, and Poisson accounting's number for contrast.
    ``fmt(value, up)`` formats a bound (default: 4 significant digits)."""
    show = fmt or (lambda v, up: f"{v:.4g}")
    untight = [r.mechanism for r in rows if r.count > 0 and not r.mechanism.tight
               and not r.mechanism.is_trivial()]
    own = [m for m in untight if m.bracket_words]
    if not untight:  # every pair realised, but some read with a loss of +inf (bracket.crossed)
        return [f"Some rows have so little noise that their loss is read as +∞ (noise below 1e-6 of the "
                f"sensitivity, or a loss beyond 1e12 nats): the bracket is that of a dominating pair. The true "
                f"ε lies between {show(at_least, False)} (proven lower bound: those rows left out) and "
                f"{show(upper, True)} (the certified upper bound)."]
    schemes = [b for b in ("shuffled", "fixed_size") if any(m.batch_scheme == b for m in untight)]
    lo, hi = show(at_least, False), show(upper, True)
    if own and not schemes:
        out = list(dict.fromkeys(m.bracket_words.format(lo=lo, hi=hi) for m in own))
        adjectives = list(dict.fromkeys(m.batch_words or m.title for m in own))
        if poisson is not None:
            out.append(f"For contrast, Poisson accounting would say ε ≤ {show(poisson.upper, True)}: not a "
                       f"guarantee for {' and '.join(adjectives)} (it assumes each record joins each step "
                       "independently).")
        if shuffled is not None:
            out.append(f"Shuffled batches for the same training: certified only at ε ≤ {show(shuffled.upper, True)}, "
                       f"and proven to cost at least {show(shuffled.lower, False)} (Chua et al. 2024).")
        return out
    if not schemes:
        titles = ", ".join(dict.fromkeys(m.title for m in untight))
        return [f"{titles}: the true ε lies between {lo} (proven lower bound: each such row run as one "
                f"concrete mechanism of its kind) and {hi} (the certified upper bound).",
                "The pair composed covers every mechanism of the kind, and no single one attains it over "
                "several runs; publish the upper bound."]
    if schemes[0] == "shuffled":
        out = [f"Shuffled batches: the true ε lies between {lo} (proven lower bound: an attack on "
               f"shuffled batches, Chua et al. 2024) and {hi} (the certified upper bound: each epoch "
               "counted as one Gaussian, no amplification).",
               "No tight accountant for shuffled batches exists, so the gap between the two cannot be "
               "closed today; publish the upper bound."]
        if "fixed_size" in schemes:
            out.append("Fixed-size batches are certified by the pair for sampling without replacement.")
    else:
        out = [f"Fixed-size batches under replace-one: the true ε lies between {lo} (proven lower bound: "
               "two datasets realise it, the replaced record displacing another from the batch) and "
               f"{hi} (the certified upper bound: the pair for sampling without replacement, Dong, Roth "
               "and Su 2022).",
               "The upper bound also covers a record whose gradient changes sides from step to step; "
               "publish the upper bound."]
    if poisson is not None:
        what = " and ".join(_SCHEME_ADJ[s] for s in schemes)
        out.append(f"For contrast, Poisson accounting would say ε ≤ {show(poisson.upper, True)}: not a "
                   f"guarantee for {what} batches (it assumes each record joins each step independently)."
                   + (" Under replace-one, fixed-size batches cost much more than Poisson sampling at the "
                      "same rate." if "fixed_size" in schemes else ""))
    return out


def zcdp_rho(rows: Sequence[Row], relation: Relation) -> float | None:
    """rho-zCDP of the composition when every row is exactly a Gaussian mechanism under the
    relation (sum of count x mu^2 / 2; production reports DP-FTRL so), else None."""
    total = 0.0
    for r in rows:
        if r.count == 0:
            continue
        rho = r.mechanism.under(relation).zcdp_rho()
        if rho is None:
            return None
        total += r.count * rho
    return total


def fact_sentences(rows: Sequence[Row], relation: Relation) -> list[str]:
    """What reports print beside epsilon for Gaussian-type rows: the composition's rho-zCDP (when
    every row is a Gaussian mechanism) and each matrix mechanism row's sensitivity, exact or a
    certified upper bound (``Mechanism.facts``)."""
    out = []
    rho = zcdp_rho(rows, relation)
    if rho is not None and any(r.count for r in rows):
        out.append(f"ρ-zCDP of the composition: ρ = {rho:.6g} (every row is a Gaussian mechanism).")
    for i, r in enumerate(rows):
        facts = r.mechanism.facts()
        if "sensitivity" in facts:
            how = "exact" if facts.get("sensitivity_exact") else "a certified upper bound"
            out.append(f"Row {i + 1} ({r.mechanism.title}): L2 sensitivity {facts['sensitivity']:.6g} per "
                       f"record ({how}; {facts.get('sensitivity_method', '')}).")
    return out


def untight_note(rows: Sequence[Row], at_least: float, upper: float, poisson: Bounds | None,
                 shuffled: Bounds | None = None) -> str:
    """``untight_sentences`` as one note (the engine's warning, the command line, the report)."""
    return " ".join(untight_sentences(rows, at_least, upper, poisson, shuffled=shuffled))
