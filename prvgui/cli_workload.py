"""``prvgui workload CSV``: a table of measurements (document/workload.py) read into a composition;
each row's share of the privacy cost, the rows that dominate it and the certified epsilon of the
whole; or a total rho or epsilon split over the rows by weights. Registered by cli.py
(``add_parser``, ``run``).

    prvgui workload CSV [--delta D] [--neighbouring add_remove|replace_one] [--eps-error E]
                        [--out COMP.json] [--json] [--max-seconds S] [--max-memory SIZE]
    prvgui workload CSV --split-rho R | --split-epsilon E [--weights W1,W2,... | --weights-column NAME]
                        --out COMP.json [--delta D] [--neighbouring ...] [--json]

A bad cell, column or option raises ValueError naming it (``CSV: line 14, column sigma: ...``; the
command line exits with status 2 and one line); a split that no noise in a kind's range can meet
raises ``Infeasible`` naming the row (status 1).
"""
from __future__ import annotations

import json
import math

from .cli_args import read, number as _number


def add_parser(sub, error, limits=None) -> None:
    """The ``workload`` subcommand (``error``: the parent parser's error, one line; ``limits``:
    the parser of --max-seconds and --max-memory, which the whole composition's epsilon obeys)."""
    w = sub.add_parser("workload", parents=[limits] if limits is not None else [],
                       help="a table of measurements (CSV): each row's share of the privacy cost, "
                            "or a total ρ or ε split over the rows")
    w.add_argument("csv", help="the workload: a CSV file with a header label,kind,count,<parameters> "
                               "(docs/file-format.md)")
    w.add_argument("--delta", type=_number, default=None, help="target delta (default 1e-05)")
    w.add_argument("--neighbouring", choices=("add_remove", "replace_one"), default="add_remove",
                   help="the neighbouring relation the rows are accounted under (default add_remove)")
    w.add_argument("--eps-error", type=_number, default=None,
                   help="half-width of the epsilon bracket (default 0.01)")
    w.add_argument("--out", default=None, metavar="COMP.json",
                   help="write the composition file (atomically); with a split, the split composition")
    w.add_argument("--json", action="store_true", help="print one JSON object")
    split = w.add_mutually_exclusive_group()
    split.add_argument("--split-rho", type=_number, default=None, metavar="R",
                       help="set each row's noise so that the rows' ρ (zCDP) add up to R, shared by the weights")
    split.add_argument("--split-epsilon", type=_number, default=None, metavar="E",
                       help="calibrate each row to its weight's share of E (basic composition at δ / rows)")
    weights = w.add_mutually_exclusive_group()
    weights.add_argument("--weights", default=None, metavar="W1,W2,...",
                         help="one weight > 0 per row, separated by commas (default: equal)")
    weights.add_argument("--weights-column", default=None, metavar="NAME",
                         help="take the weights from this column of the CSV")
    w.error = error  # type: ignore[method-assign]


def _weights(args, workload) -> list[float] | None:
    """The weights the options give (each checked, the message naming the option or the cell)."""
    from .accounting.core.validate import IN_FILE, NumberError, check_number
    if args.weights is not None:
        parts = args.weights.split(",")
        return [check_number(f"--weights entry {i + 1}", _number(p.strip()), 0.0, lo_open=True)
                for i, p in enumerate(parts)]
    if args.weights_column is None:
        return None
    name = args.weights_column.strip().lower()
    out = []
    for line, cell in zip(workload.lines, workload.extra[name]):
        try:
            out.append(check_number("Weight", _number(cell) if cell else "", 0.0, lo_open=True))
        except NumberError as exc:
            raise ValueError(f"{args.csv}: line {line}, column {name}: {exc.message(IN_FILE)}") from None
    return out


def _inputs(args):
    """(workload, delta, eps_error) from the CSV and the options."""
    from .accounting.core.validate import check_delta, check_eps_error
    from .document.fileio import FileFormatError
    from .document.workload import parse_workload
    delta = None if args.delta is None else check_delta(args.delta, "--delta")
    err = None if args.eps_error is None else check_eps_error(args.eps_error, "--eps-error")
    extra = () if args.weights_column is None else (args.weights_column,)
    text = read(args.csv)  # (its messages name the file)
    try:
        workload = parse_workload(text, args.neighbouring, delta, extra)
    except FileFormatError as exc:
        raise ValueError(f"{args.csv}: {exc}") from None
    if err is not None:
        from dataclasses import replace
        comp = workload.composition
        workload = replace(workload, composition=replace(comp, targets=replace(comp.targets, eps_error=err)))
    return workload, workload.composition.targets.delta, workload.composition.targets.eps_error


def _check_out(args, n: int) -> None:
    from .document.composition import MAX_ROWS
    from .document.fileio import check_target
    if args.out is not None and n > MAX_ROWS:
        raise ValueError(f"--out: a composition file holds at most {MAX_ROWS:,} rows; the workload has {n:,}")
    if args.out is not None:
        check_target(args.out)  # (before the work: its result would have nowhere to go)


def run(args, check_cost=None) -> int:
    """The command; ``check_cost(estimate)`` (cli.py: --max-seconds, --max-memory) sees the
    estimated cost of the whole composition's epsilon before it is composed."""
    splitting = args.split_rho is not None or args.split_epsilon is not None
    if not splitting and (args.weights is not None or args.weights_column is not None):
        raise ValueError("--weights and --weights-column are for a split: give --split-rho R or --split-epsilon E")
    if splitting and args.out is None:
        raise ValueError("a split writes the composition: give --out COMP.json")
    workload, delta, err = _inputs(args)
    comp = workload.composition
    _check_out(args, len(comp.rows))
    weights = _weights(args, workload)
    if splitting:
        return _split(args, comp, weights, delta, err, check_cost)
    return _shares(args, comp, delta, err, check_cost)


def _whole(comp, delta: float, check_cost=None):
    """The whole composition's epsilon, after ``check_cost`` has seen its estimate."""
    from . import api
    if check_cost is not None:
        check_cost(lambda: api.accountant(comp).cost(delta=delta))
    return api.epsilon(comp, delta)


def _shares(args, comp, delta: float, err: float, check_cost=None) -> int:
    from .engine.workload_view import dominant_text, shares_view
    if args.out is not None:
        from .document.fileio import save
        save(comp.document(), args.out)
    view = shares_view(comp.engine_rows(), [r.label for r in comp.rows], comp.relation, delta, err)
    answer = _whole(comp, delta, check_cost)
    if args.json:
        print(json.dumps({"shares": view, "epsilon": answer.as_dict()}))
        return 0
    print(f"{len(comp.rows)} row(s), {comp.relation.describe()}, δ = {delta:g}; shares of "
          f"{view['rows'][0]['currency']}:")
    dominant = set(view["dominant"])
    for r in view["rows"]:
        mark = "  ◀ dominant" if r["row"] in dominant else ""
        print(f"  {r['row']:>6}  {100 * r['share']:7.3f}%  {r['value']:<12.6g} {r['kind']:<20} {r['label']}{mark}")
    listed = dominant_text(view["dominant"], len(view["rows"]), "marked above")
    print(f"dominant (at least {100 * view['threshold']:g}% of the total): {listed}")
    for note in view["notes"]:
        print(f"note: {note}")
    _print_whole(answer)
    if args.out is not None:
        print(f"wrote {args.out}")
    return 0


def _split(args, comp, weights, delta: float, err: float, check_cost=None) -> int:
    from .document.fileio import save
    from .document.workload_split import split_budget
    currency, total = ("rho", args.split_rho) if args.split_rho is not None else ("epsilon", args.split_epsilon)
    split = split_budget(comp, total, currency, weights, delta, err)
    save(split.composition.document(), args.out)
    answer = _whole(split.composition, delta, check_cost)
    if args.json:
        print(json.dumps({"split": split.as_dict(), "epsilon": answer.as_dict()}))
        return 0
    what = "ρ" if currency == "rho" else f"ε (at δ/{len(comp.rows)} each)"
    print(f"{len(comp.rows)} row(s), {comp.relation.describe()}; {what} split by weight:")
    for r in split.as_dict()["rows"]:
        print(f"  {r['row']:>6}  {r['parameter']} = {r['value']:<12.6g} share {r['share']:<12.6g} "
              f"weight {r['weight']:<8g} {r['kind']:<20} {r['label']}")
    print(f"note: {split.note()}")
    _print_whole(answer)
    if currency == "epsilon" and not answer.certified_upper.value <= total:
        print(f"note: the accountant's bracket is wider than the margin; basic composition of the calibrated rows "
              f"certifies ε ≤ {total:.6g} at δ = {delta:g}")
    print(f"wrote {args.out}")
    return 0


def _print_whole(answer) -> None:
    value = answer.certified_upper.value
    shown = "inf" if math.isinf(value) else f"{value:.6g}"
    print(f"epsilon <= {shown} at delta {answer.at:g} for the whole composition (certified; PRV lower "
          f"{answer.lower:.6g})")
