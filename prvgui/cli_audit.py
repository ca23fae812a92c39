"""``prvgui audit --canaries M --guesses R --correct V [--delta D] [--confidence C] [--json] [FILE]``:
the epsilon a one-run privacy audit proves (queries/audit.py), and with a composition FILE its
certified epsilon beside it, whether the audit contradicts the accounting, and what an audit of
it could show. Registered by cli.py (``add_parser``, ``run``).
"""
from __future__ import annotations

from .cli_args import load, number as _number

import json
import math


def _fmt(x: float) -> str:
    return "inf" if math.isinf(x) else f"{x:.6g}"




def _whole(text: str) -> int | float | str:
    """A count: an int for text that reads as a whole number (1e3 included), else the number or
    the text, for the audit's own check to reject with a message that names the option."""
    v = _number(text)
    return int(v) if isinstance(v, float) and v == int(v) else v


def add_parser(sub, p) -> None:
    a = sub.add_parser("audit", help="the epsilon a one-run privacy audit proves (and, with FILE, whether it "
                                     "contradicts the composition's accounting)")
    a.add_argument("file", nargs="?", default=None,
                   help="composition file (JSON): compare with its certified epsilon, plan an audit of it")
    a.add_argument("--canaries", type=_whole, required=True, metavar="M",
                   help="canaries, each included independently with probability 1/2")
    a.add_argument("--guesses", type=_whole, required=True, metavar="R",
                   help="canaries the auditor guessed in or out for (it abstained on the rest)")
    a.add_argument("--correct", type=_whole, required=True, metavar="V", help="correct guesses")
    a.add_argument("--delta", type=_number, default=None,
                   help="delta of the claims tested (default: the file's target delta, else 0)")
    a.add_argument("--confidence", type=_number, default=0.95, help="confidence (default 0.95)")
    a.add_argument("--eps-error", type=_number, default=None,
                   help="with FILE: half-width of the epsilon bracket (default: the file's, else 0.01)")
    a.add_argument("--json", action="store_true", help="print one JSON object")
    a.error = p.error  # type: ignore[method-assign]


def run(args) -> int:
    """``audit``: the audit's lower bound; with FILE, the composition's certified epsilon beside it,
    whether the audit contradicts the accounting, and what an audit of it could show."""
    from .accounting.queries.audit import LABELS, audit, check_audit
    labels = {k: f"--{k}" for k in LABELS}
    delta = 0.0 if args.delta is None else args.delta
    check_audit(args.canaries, args.guesses, args.correct, delta, args.confidence, labels)
    comp = None
    if args.file is not None:
        from .accounting.core.validate import check_delta, check_eps_error
        comp = load(args.file)
        delta = comp.targets.delta if args.delta is None else check_delta(args.delta, "--delta")
        err = comp.targets.eps_error if args.eps_error is None else check_eps_error(args.eps_error, "--eps-error")
    res = audit(args.canaries, args.guesses, args.correct, delta, args.confidence, labels)
    out = res.as_dict()
    if comp is not None:
        out.update(_audit_against(comp, res, err))
    if args.json:
        print(json.dumps(out))
        return 0
    how = "the f-DP analysis with Gaussian curves" if res.method == "fdp" else "the one-run analysis"
    print(f"audit: {res.correct} of {res.guesses} guesses correct, {res.canaries} canaries; "
          f"delta {res.delta:g}, confidence {res.confidence:g}")
    print(f"  epsilon >= {_fmt(res.epsilon_lower)}   (by {how})")
    print(f"  one-run  (Steinke et al. 2023)      {_fmt(res.one_run):>10}  any mechanism")
    fdp = "n/a" if res.fdp is None else _fmt(res.fdp)
    print(f"  f-DP     (Mahloujifar et al. 2025)  {fdp:>10}  "
          + ("no Gaussian curve has delta 0: use a delta > 0" if res.fdp is None else
             "a bound on epsilon if the tradeoff curve is Gaussian; else: not mu-GDP"))
    if comp is None:
        return 0
    upper = out["certified_upper"]
    print(f"  certified epsilon <= {_fmt(upper)} at delta {res.delta:g} (the composition's accounting)")
    if out["curve_p_value"] is not None:
        print(f"  p-value of the count under the composition's certified tradeoff curve: "
              f"{out['curve_p_value']:.3g}")
    if out["exceeds"]:
        why = (f"the audit proves epsilon >= {_fmt(res.one_run)} > {_fmt(upper)}" if res.one_run > upper else
               f"the count has p-value {out['curve_p_value']:.3g} <= {1 - res.confidence:g} under the "
               "composition's certified tradeoff curve")
        print(f"WARNING: {why}: the implementation or the settings do not match the accounting")
    elif res.fdp is not None and res.fdp > upper:
        print("  note: the f-DP bound is above the certified epsilon, but the composition's own tradeoff "
              "curve is not rejected: its curve is not Gaussian, so this is no contradiction")
    plan = out["plan"]
    if plan is None:
        print(f"  plan: not available ({out['plan_note']})")
    elif plan["alpha"] is None:
        print(f"  plan: an audit with {plan['canaries']} canaries shows nothing at the expected counts")
    else:
        print(f"  plan: an audit with {plan['canaries']} canaries could show at most about epsilon "
              f"{_fmt(plan['epsilon_lower'])} (one-run bound at the expected counts: {plan['guesses']} guesses, "
              f"{plan['correct']} correct, threshold at false-positive rate {plan['alpha']:.3g})")
    return 0


def _audit_against(comp, res, err) -> dict:
    """certified_upper, exceeds, curve_p_value and plan (audit.py) for a composition."""
    from . import api
    from .accounting.queries.audit import PLAN_ALPHA, audit_plan, tradeoff_p_value
    from .accounting.queries.risk import tpr_bounds
    upper = api.query(comp, True, res.delta, err).certified_upper.value
    out: dict = {"certified_upper": upper, "curve_p_value": None, "plan": None}
    try:
        _, _, tpr = tpr_bounds(api.accountant(comp, err), PLAN_ALPHA)  # the optimistic side
    except (ArithmeticError, MemoryError, ValueError) as exc:
        out["plan_note"] = f"the tradeoff curve could not be computed: {exc}"
    else:
        out["curve_p_value"] = tradeoff_p_value(PLAN_ALPHA, tpr, res.canaries, res.guesses, res.correct)
        out["plan"] = audit_plan(PLAN_ALPHA, tpr, res.canaries, res.delta, res.confidence).as_dict()
    rejected = out["curve_p_value"] is not None and out["curve_p_value"] <= 1 - res.confidence
    out["exceeds"] = bool(res.one_run > upper or rejected)
    return out
