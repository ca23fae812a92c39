"""Command line: ``prvgui [FILE]`` opens the window; subcommands compute without Qt.

    prvgui epsilon FILE --delta D [--eps-error E] [--json] [--max-seconds S] [--max-memory SIZE]
    prvgui delta FILE --epsilon E [--eps-error E] [--json] [--max-seconds S] [--max-memory SIZE]
    prvgui curve FILE --kind profile|tradeoff|steps|pld --out OUT.csv [--max-seconds S] ...
    prvgui calibrate FILE --row I --parameter NAME --target-epsilon E --delta D
    prvgui calibrate FILE --row I --parameter NAME --tpr-at-fpr A T
    prvgui calibrate FILE --row I --parameter NAME --reconstruction K S | --bayes-risk PI R
    prvgui risk FILE [--fpr A ...] [--prior PI ...] [--baseline K ...] [--json]
    prvgui report FILE --out REPORT.html|.pdf|.md|.json [--delta D] [--eps-error E]
    prvgui audit --canaries M --guesses R --correct V [--delta D] [--confidence C] [--json] [FILE]
    prvgui from-training CONFIG [--json] [--out COMP.json] [--epsilon]
    prvgui import FILE --from dpevent|opacus|jax_privacy [--out COMP.json] [--json]
    prvgui export FILE --to dp_accounting|opacus|prv_accountant [--out SCRIPT.py]
    prvgui workload CSV [--delta D] [--neighbouring add_remove|replace_one] [--out COMP.json] [--json]
    prvgui workload CSV --split-rho R | --split-epsilon E [--weights W,...] --out COMP.json
    prvgui sweep FILE --vary ROW.PARAM=START:STOP:NUM[:log] ... --out RESULTS.csv|.parquet [--scheduler ADDR]
    prvgui --screenshot OUT.png [FILE]
    prvgui --version

Before composing, epsilon, delta and curve estimate the time and memory the work needs
(Accountant.cost, from the plan alone). Above NOTICE_SECONDS or NOTICE_BYTES the
estimate is printed on stderr; above --max-seconds or --max-memory the command refuses.

Bad input, and a refusal over a limit, exit with status 2 and one line on stderr; an
infeasible calibration target exits with status 1 and one line saying why. Qt is imported
only when the window or a PDF report is asked for (a PDF uses Qt's own writer, on the offscreen
platform when there is no display).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys
from typing import Sequence

from . import __version__
from .cli_args import load, number as _number

SUBCOMMANDS = ("epsilon", "delta", "curve", "calibrate", "risk", "report", "audit", "from-training", "import",
               "export", "workload", "sweep")


class UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, exit 2
        raise UsageError(message)


#: an estimate above either of these is printed on stderr before the work starts
NOTICE_SECONDS, NOTICE_BYTES = 5.0, 1e9
_UNITS = {"": 1, "b": 1, "k": 1e3, "kb": 1e3, "m": 1e6, "mb": 1e6, "g": 1e9, "gb": 1e9, "t": 1e12,
          "tb": 1e12, "kib": 2 ** 10, "mib": 2 ** 20, "gib": 2 ** 30, "tib": 2 ** 40}


def _seconds(text: str) -> float:
    v = _number(text)  # (text stays text when it is not a finite number)
    if isinstance(v, str) or v <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, got {text!r}")
    return v


def _size(text: str) -> float:
    """A memory size: bytes, or a number with a unit (500M, 2G, 2GB, 1.5GiB)."""
    t = text.strip().lower()
    num = t.rstrip("abcdefghijklmnopqrstuvwxyz ")
    unit = t[len(num):].strip()
    try:
        v = float(num) * _UNITS[unit]
    except (ValueError, KeyError):
        raise argparse.ArgumentTypeError(
            f"not a memory size: {text!r} (write e.g. 500M, 2G or 1.5GiB)") from None
    if not (v > 0 and math.isfinite(v)):
        raise argparse.ArgumentTypeError(f"must be a positive size, got {text!r}")
    return v


def _parser() -> _Parser:
    p = _Parser(prog="prvgui", description="Certified differential-privacy accounting.")
    p.add_argument("--version", action="version", version=f"prvgui {__version__}")
    sub = p.add_subparsers(dest="command")
    common = _Parser(add_help=False)
    common.add_argument("file", help="composition file (JSON)")
    common.add_argument("--eps-error", type=_number, default=None,
                        help="half-width of the epsilon bracket (default: the file's, else 0.01)")
    common.add_argument("--json", action="store_true", help="print one JSON object")
    limits = _Parser(add_help=False)
    lim = limits.add_argument_group(
        "cost limits", "The time and memory are estimated before composing; an estimate above "
        f"{NOTICE_SECONDS:g} s or {NOTICE_BYTES / 1e9:g} GB is printed on stderr. These refuse "
        "(exit status 2) when the estimate is over them; there is no limit by default.")
    lim.add_argument("--max-seconds", type=_seconds, default=None, metavar="S",
                     help="refuse when the estimated time exceeds S seconds")
    lim.add_argument("--max-memory", type=_size, default=None, metavar="SIZE",
                     help="refuse when the estimated peak memory exceeds SIZE (e.g. 500M, 2G, 1.5GiB)")
    e = sub.add_parser("epsilon", parents=[common, limits], help="epsilon at a given delta")
    e.add_argument("--delta", type=_number, default=None, help="target delta (default: the file's)")
    d = sub.add_parser("delta", parents=[common, limits], help="delta at a given epsilon")
    d.add_argument("--epsilon", type=_number, required=True, help="epsilon")
    c = sub.add_parser("curve", parents=[common, limits], help="write a curve as CSV")
    c.add_argument("--kind", choices=["profile", "tradeoff", "steps", "pld"], required=True)
    c.add_argument("--out", required=True, help="output CSV path")
    c.add_argument("--delta", type=_number, default=None, help="target delta (default: the file's)")
    c.add_argument("--row", type=int, default=None,
                   help="steps: index (from 0) of the row whose count varies (default: largest count)")
    c.add_argument("--points", type=int, default=None, help="number of points (steps: at most 200)")
    k = sub.add_parser("calibrate", parents=[common],
                       help="solve one parameter for a target epsilon or attack risk")
    k.add_argument("--row", type=int, required=True, help="row index, from 0")
    k.add_argument("--parameter", required=True,
                   help="sigma, scale, sampling_rate, count or epsilon (depending on the row's kind)")
    goal = k.add_mutually_exclusive_group(required=True)
    goal.add_argument("--target-epsilon", type=_number, help="target epsilon")
    goal.add_argument("--tpr-at-fpr", type=_number, nargs=2, metavar=("A", "T"),
                      help="target attack risk: the best membership-inference attack's true-positive "
                           "rate at false-positive rate A is at most T (0 < A < T < 1)")
    goal.add_argument("--reconstruction", type=_number, nargs=2, metavar=("K", "S"),
                      help="target: a reconstruction or re-identification guess with baseline success K "
                           "succeeds with probability at most S (0 < K < S < 1)")
    goal.add_argument("--bayes-risk", type=_number, nargs=2, metavar=("PI", "R"),
                      help="target: at prior PI of membership the best attack errs with probability at "
                           "least R (0 < R < min(PI, 1 - PI))")
    k.add_argument("--delta", type=_number, default=None, help="target delta (default: the file's)")
    r = sub.add_parser("risk", parents=[common],
                       help="certified membership-inference risk: TPR at given FPRs, and the advantage")
    r.add_argument("--fpr", type=_number, action="append", default=None, metavar="A",
                   help="false-positive rate in (0, 1); repeat for several (default 0.001 0.01 0.1)")
    r.add_argument("--prior", type=_number, action="append", default=None, metavar="PI",
                   help="prior probability of membership in (0, 1) for the Bayes risk; repeat for several "
                        "(default 0.5 0.1 0.01)")
    r.add_argument("--baseline", type=_number, action="append", default=None, metavar="K",
                   help="baseline success in (0, 1) of a reconstruction or re-identification guess; "
                        "repeat for several (default 0.001 0.01 0.1)")
    rp = sub.add_parser("report", parents=[limits],
                        help="write a report (HTML or PDF): composition, certified result, plots, risk")
    rp.add_argument("file", help="composition file (JSON)")
    rp.add_argument("--out", required=True, metavar="REPORT.html|.pdf|.md|.json",
                    help="the report file; its extension (.html, .pdf, .md or .json) chooses the format")
    rp.add_argument("--delta", type=_number, default=None, help="target delta (default: the file's)")
    rp.add_argument("--eps-error", type=_number, default=None,
                    help="half-width of the epsilon bracket (default: the file's, else 0.01)")
    for s in (e, d, c, k, r, rp):
        s.error = p.error  # type: ignore[method-assign]
    from .cli_audit import add_parser as audit_parser
    audit_parser(sub, p)
    from .cli_training import add_parser as training_parser
    training_parser(sub, p.error, _number)
    from .cli_interop import add_parsers as interop_parsers
    interop_parsers(sub, p.error)
    from .cli_workload import add_parser as workload_parser
    workload_parser(sub, p.error, limits)
    from .cli_sweep import add_parser as sweep_parser
    sweep_parser(sub, p.error)
    return p


def _gui_parser() -> _Parser:
    p = _Parser(prog="prvgui", description="Open the prvgui window.")
    p.add_argument("--version", action="version", version=f"prvgui {__version__}")
    p.add_argument("file", nargs="?", help="composition file to open")
    p.add_argument("--screenshot", metavar="OUT.png", help="save a screenshot of the window and exit")
    return p


def _fmt(x: float) -> str:
    return "inf" if math.isinf(x) else f"{x:.6g}"


def _inputs(args):
    """(composition, delta, eps_error, engine rows) from the file and the flags that override it."""
    from .accounting.core.validate import check_delta, check_eps_error
    comp = load(args.file)
    delta = getattr(args, "delta", None)
    delta = comp.targets.delta if delta is None else check_delta(delta, "--delta")
    err = comp.targets.eps_error if args.eps_error is None else check_eps_error(args.eps_error, "--eps-error")
    return comp, delta, err, comp.engine_rows()


class OverLimit(Exception):
    """The estimated cost is over a --max-seconds or --max-memory limit."""


def _check_cost(estimate, args) -> None:
    """Print the estimate (``estimate()``) when it is large; raise OverLimit when it is over a
    limit. An estimate that fails says so and lets the work go ahead (the work reports its own
    errors)."""
    from .accounting.core.cost import format_bytes
    try:
        est = estimate()
    except (ArithmeticError, MemoryError, ValueError) as exc:
        print(f"prvgui: could not estimate the cost ({exc}); computing anyway", file=sys.stderr)
        return
    if not est.fits:
        return  # the work fails at once with a message that says why
    over = []
    if args.max_seconds is not None and est.seconds > args.max_seconds:
        over.append(f"--max-seconds {args.max_seconds:g}")
    if args.max_memory is not None and est.bytes > args.max_memory:
        over.append(f"--max-memory {format_bytes(args.max_memory)}")
    why = f" ({est.why})" if est.why else ""
    if over:
        raise OverLimit(f"this would take {est.describe()}{why}, over {' and '.join(over)}; "
                        "raise the limit or ask for less accuracy (a larger --eps-error)")
    if est.seconds > NOTICE_SECONDS or est.bytes > NOTICE_BYTES:
        print(f"prvgui: this will take {est.describe()}{why}; --max-seconds and --max-memory "
              "refuse such runs", file=sys.stderr)


def _query(args, want_eps: bool) -> int:
    """``epsilon`` (want_eps) or ``delta``: the API's whole answer (api.query), printed."""
    from . import api
    from .accounting.core.validate import check_epsilon
    comp, delta, err, _ = _inputs(args)
    x = delta if want_eps else check_epsilon(args.epsilon, "--epsilon")
    acc = api.accountant(comp, err)
    _check_cost(lambda: acc.cost(delta=x) if want_eps else acc.cost(epsilon=x), args)
    a = api.query(comp, want_eps, x, err)
    failed = None if a.failed is None else a.failed.replace("accuracy (ε error)", "--eps-error")
    if args.json:
        out = a.as_dict()
        if failed is not None:
            out["failed"] = {"prv": failed}
        print(json.dumps(out))
        return 0
    b, best, comps, at_least = a.bracket, a.certified_upper, a.comparisons, a.epsilon_at_least
    asked, given = ("epsilon", "delta") if want_eps else ("delta", "epsilon")
    show = _fmt if want_eps else (lambda v: f"{v:.6g}")
    print(f"{asked} at {given} = {x:g} (eps_error {err:g}; {comp.relation.describe()})")
    print(f"  certified     {asked} <= {show(best.value)}   <- publish this one"
          + ("" if best.by == "prv" else f" ({comps[best.by].label}: tighter than the PRV bracket)"))
    if failed is not None:
        print(f"  PRV bracket   could not be composed: {failed}")
    else:
        # the bracket's own name: the dominating pair's when some rows' pairs are upper bounds
        # only (its lower end is then no bound on the truth: "proven lower" below is)
        who = "PRV" if at_least is None else "pair"
        est = min(b.estimate, best.value) if at_least is None else b.estimate
        print(f"  {who + ' lower':<14}{show(b.lower)}"
              + ("   (the dominating pair's bracket, not a bound on the truth)" if at_least is not None else ""))
        print(f"  {who + ' estimate':<14}{show(est) if math.isfinite(b.upper) else 'n/a (the bracket is unbounded)'}")
        print(f"  {who + ' upper':<14}{show(b.upper)}")
    if at_least is not None:
        print(f"  proven lower  {_fmt(at_least)}   (a concrete attack; the truth is at least this)")
    if a.rho is not None:
        print(f"  rho-zCDP      {a.rho:.6g}   (every row is a Gaussian mechanism)")
    if a.tuning is not None:  # releasing the best of the tuning runs (selection.py)
        from .engine.view_model import tuning_sentence
        print(f"  tuning        {tuning_sentence(a.tuning, _fmt)}")
    for f in a.row_facts:
        how = "exact" if f.get("sensitivity_exact") else "a certified upper bound"
        print(f"  row {f['row']}: sensitivity {f['sensitivity']:.6g} ({how}: {f.get('sensitivity_method', '')})"
              + (f", rho {f['rho']:.6g} per run" if "rho" in f else ""))
    for w in (*a.notes, *a.warnings):
        print(f"  note: {w}")
    for c in comps.values():
        val = "n/a" if c.value is None else show(c.value)
        note = c.note if c.note.startswith(c.kind) else f"{c.kind}; {c.note}" if c.note else c.kind
        print(f"  {c.label:<34} {val:>10}  ({note})")
    return 0


def _run_curve(args) -> int:
    from .engine.view_model import PART_TITLES, Request, compute, cost, failure
    from .document.export import curve_csv_text
    from .document.fileio import atomic_write, check_target
    doc, delta, err, rows = _inputs(args)
    check_target(args.out)  # (before the work: its result would have nowhere to go)
    points = args.points
    if points is not None and not 2 <= points <= (200 if args.kind == "steps" else 100_000):
        raise ValueError(f"--points must be between 2 and {200 if args.kind == 'steps' else 100000}; "
                         f"you typed {points}")
    steps_row = None
    if args.kind == "steps":
        if not rows:
            raise ValueError("the composition has no rows to vary")
        steps_row = args.row if args.row is not None else max(range(len(rows)),
                                                               key=lambda i: rows[i].count)
        if not 0 <= steps_row < len(rows):
            raise ValueError(_row_range(rows, steps_row))
    req = Request(tuple(rows), delta=delta, epsilon=None, eps_error=err,
                  neighbouring=doc.neighbouring, group_size=doc.group_size,
                  profile_points=(points or 200) if args.kind == "profile" else 0,
                  tradeoff_points=(points or 201) if args.kind == "tradeoff" else 0,
                  steps_row=steps_row, steps_points=points or 50,
                  want_pld=args.kind == "pld")
    _check_cost(lambda: cost(req), args)
    res = compute(req)
    reason = failure(res, args.kind)
    if reason is not None:
        raise ValueError(f"{PART_TITLES[args.kind]} could not be computed: {reason}")
    atomic_write(args.out, curve_csv_text(res, args.kind, doc))
    return 0


def _row_range(rows, typed: int) -> str:
    n = len(rows)
    return (f"--row must be a row index from 0 to {n - 1} (rows count from 0; the file has {n} "
            f"row{'s' if n != 1 else ''}); you typed {typed}")


def _run_calibrate(args) -> int:
    from .accounting.queries.calibrate import calibrate
    from .accounting.core.validate import check_number
    comp, delta, err, rows = _inputs(args)
    if not rows:
        raise ValueError("the composition has no rows")
    if not 0 <= args.row < len(rows):
        raise ValueError(_row_range(rows, args.row))
    if args.tpr_at_fpr is not None or args.reconstruction is not None:
        return _run_calibrate_risk(args, comp, err, rows)
    if args.bayes_risk is not None:
        return _run_calibrate_bayes(args, comp, err, rows)
    target = check_number("--target-epsilon", args.target_epsilon, 0.0, lo_open=True)
    c = calibrate(rows, args.row, args.parameter, target, delta, err, relation=comp.relation)
    return _print_calibration(args, c, f"  gives epsilon <= {_fmt(c.epsilon.upper)} (certified; lower "
                              f"{_fmt(c.epsilon.lower)}, estimate {_fmt(c.epsilon.estimate)}) at delta "
                              f"{delta:g}; target {c.target_epsilon:g}")


def _print_calibration(args, c, what: str) -> int:
    """A calibration's answer: its JSON (``--json``), else the value and ``what`` it gives."""
    value = int(c.value) if c.parameter == "count" else c.value
    if args.json:
        print(json.dumps({**c.as_dict(), "value": value}))
    else:
        bound = "  (at the search bound)" if c.at_bound else ""
        print(f"{c.parameter} of row {args.row} = {value:.6g}{bound}")
        print(what)
    return 0


def _run_calibrate_risk(args, comp, err, rows) -> int:
    from .accounting.queries.risk_calibrate import calibrate_risk, check_risk_target
    if args.reconstruction is not None:
        a, t = check_risk_target(*args.reconstruction, fpr_label="--reconstruction K",
                                 tpr_label="--reconstruction S")
    else:
        a, t = check_risk_target(*args.tpr_at_fpr, fpr_label="--tpr-at-fpr A", tpr_label="--tpr-at-fpr T")
    c = calibrate_risk(rows, args.row, args.parameter, a, t, err, relation=comp.relation)
    if args.reconstruction is not None:
        return _print_calibration(args, c, f"  gives a reconstruction with baseline success {a:g} a success "
                                  f"<= {c.tpr.upper:.6g} (certified; lower {c.tpr.lower:.6g}); target {t:g}")
    return _print_calibration(args, c, f"  gives the best attack a true-positive rate <= {c.tpr.upper:.6g} "
                              f"at false-positive rate {a:g} (certified; lower {c.tpr.lower:.6g}); target {t:g}")


def _run_calibrate_bayes(args, comp, err, rows) -> int:
    from .accounting.queries.risk_calibrate import calibrate_bayes, check_bayes_target
    p, r = check_bayes_target(*args.bayes_risk, prior_label="--bayes-risk PI", risk_label="--bayes-risk R")
    c = calibrate_bayes(rows, args.row, args.parameter, p, r, err, relation=comp.relation)
    return _print_calibration(args, c, f"  gives a Bayes risk >= {1 - c.tpr.upper:.6g} at prior {p:g} "
                              f"(certified; at most {1 - c.tpr.lower:.6g}); target {r:g}")


def _run_risk(args) -> int:
    from .accounting.queries.risk import DEFAULT_BASELINES, DEFAULT_FPRS, DEFAULT_PRIORS, check_rates, risk
    fprs = check_rates(args.fpr or DEFAULT_FPRS, "--fpr (false-positive rate)")
    priors = check_rates(args.prior or DEFAULT_PRIORS, "--prior (prior of membership)")
    baselines = check_rates(args.baseline or DEFAULT_BASELINES, "--baseline (baseline success)")
    comp, _, err, rows = _inputs(args)
    res = risk(rows, fprs, comp.relation, err, priors=priors, baselines=baselines)
    if args.json:
        print(json.dumps(res.as_dict()))
        return 0
    print(f"membership-inference risk, certified ({comp.relation.describe()}):")
    for a, t in zip(res.fprs, res.tpr):
        print(f"  at false-positive rate {a:g}: true-positive rate between {t.lower:.4g} and {t.upper:.4g}")
    print(f"  advantage (TPR - FPR, best attack): between {res.advantage.lower:.4g} and {res.advantage.upper:.4g}")
    for b in res.bayes:
        print(f"  at prior {b.prior:g}: the best attack errs with probability between {b.risk.lower:.4g} "
              f"and {b.risk.upper:.4g} (Bayes risk; accuracy at most {b.accuracy.upper:.4g})")
    for k, t in zip(res.baselines, res.reconstruction):
        print(f"  reconstruction with baseline success {k:g}: success at most {t.upper:.4g} "
              f"(at least {t.lower:.4g} for the best attack)")
    if res.gdp is not None:
        print(gdp_text(res.gdp))
    return 0


def gdp_text(fit) -> str:
    """One or two lines on a certified mu-GDP fit (certified_gdp.GdpFit)."""
    if fit.mu is None:
        return f"  mu-GDP: not certified ({fit.note})"
    if fit.mu == math.inf:
        return "  mu-GDP: at no finite mu" + (f" ({fit.note})" if fit.note else "")
    how = "exact" if fit.exact else f"certified, regret at most {fit.regret:.3g}"
    line = f"  mu-GDP with mu = {fit.mu:.4g} ({how})"
    return line + (f"\n  note: {fit.note}" if fit.note else "")


def _run_report(args) -> int:
    """``report``: compute what the window shows, then write it as HTML or PDF (atomically)."""
    from .engine.view_model import compute, cost
    from .report.model import gather, request_for
    from .report.output import check_target, report_format, write_report
    report_format(args.out, "--out")  # before any work: a bad name or folder fails at once
    check_target(args.out)
    comp, delta, err, _ = _inputs(args)
    req = request_for(comp, delta, err)
    _check_cost(lambda: cost(req), args)
    write_report(args.out, gather(comp, compute(req)))
    return 0


def _run_audit(args) -> int:
    from .cli_audit import run
    return run(args)


def _run_interop(args) -> int:
    from .cli_interop import COMMANDS
    return COMMANDS[args.command](args)


def _run_workload(args) -> int:
    from .cli_workload import run
    return run(args, lambda estimate: _check_cost(estimate, args))


def _run_sweep(args) -> int:
    from .cli_sweep import run
    return run(args)


def _run_training(args) -> int:
    from .cli_training import run
    return run(args)


def _run_gui(argv: Sequence[str]) -> int:
    args = _gui_parser().parse_args(list(argv))
    from .gui.app import run  # Qt is imported only here
    return run(args.file, screenshot=args.screenshot)


def _not_over_the_input(args: argparse.Namespace) -> None:
    """Refuse an ``--out`` that names the command's own input file: writing there would replace
    what the user made (a report written over its composition, say)."""
    out = getattr(args, "out", None)
    for name in ("file", "csv", "config"):
        src = getattr(args, name, None)
        if not (out and src):
            continue
        try:
            same = os.path.samefile(src, out)
        except OSError:  # (either does not exist yet: not the same file)
            same = False
        if same:
            raise UsageError(f"--out {out} is the input file {src}: writing there would replace it; "
                             "choose another name")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line ``argv`` and return the exit status.

    Without ``argv`` (the ``prvgui`` command, ``python -m prvgui`` and the bundle) it reads
    sys.argv and first tunes the process (tuning.py) before anything imports NumPy; a caller
    that passes ``argv``, such as a test, keeps its process as it was.
    """
    if argv is None:
        from .tuning import tuned_startup
        with tuned_startup():
            from .accounting.queries.calibrate import Infeasible
        argv = sys.argv[1:]
    else:
        from .accounting.queries.calibrate import Infeasible
    argv = list(argv)
    try:
        if argv and argv[0] in SUBCOMMANDS:
            args = _parser().parse_args(argv)
            _not_over_the_input(args)
            return {"epsilon": lambda a: _query(a, True), "delta": lambda a: _query(a, False),
                    "curve": _run_curve, "calibrate": _run_calibrate, "risk": _run_risk,
                    "report": _run_report, "audit": _run_audit,
                    "from-training": _run_training, "import": _run_interop,
                    "export": _run_interop, "workload": _run_workload,
                    "sweep": _run_sweep}[args.command](args)
        if argv and argv[0] in ("-h", "--help") and len(argv) == 1:
            _parser().print_help()
            return 0
        return _run_gui(argv)
    except Infeasible as exc:
        print(f"prvgui: infeasible: {exc}", file=sys.stderr)
        return 1
    except (UsageError, OverLimit) as exc:
        print(f"prvgui: error: {exc}", file=sys.stderr)
        return 2
    except (ValueError, MemoryError, ArithmeticError, OSError) as exc:
        msg = str(exc) or type(exc).__name__
        msg = msg.replace("accuracy (ε error)", "--eps-error")  # the option's name here
        if isinstance(exc, MemoryError) and "--eps-error" not in msg and "accuracy" not in msg:
            msg = f"{msg}; try a larger --eps-error"
        print(f"prvgui: error: {msg}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("prvgui: interrupted", file=sys.stderr)
        return 130
