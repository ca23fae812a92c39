"""``prvgui import`` and ``prvgui export`` (issue 29): compositions from and to other accountants.
Registered by cli.py: ``add_parsers(sub, error)`` adds both subcommands, ``COMMANDS`` maps each to
its function (``args -> exit status``).

    prvgui import FILE --from dpevent|opacus|jax_privacy [--out COMP.json] [--json] [--delta D]
    prvgui export FILE --to dp_accounting|opacus|prv_accountant [--out SCRIPT.py]

``import`` reads the other accountant's description (document/interop.py) and writes the
composition file atomically (``--out``); it prints the rows and the notes (what was assumed), or with
``--json`` the composition file's JSON object. ``export`` writes a Python script that recomputes the
composition's epsilon in the other library (document/scripts.py), to ``--out`` or stdout; what the
library cannot express is printed on stderr. A bad input raises ValueError naming the field or the
option (the command line exits with status 2 and one line).
"""
from __future__ import annotations

from .cli_args import load, read, number as _number

import json
import sys




def add_parsers(sub, error) -> None:
    """The ``import`` and ``export`` subcommands (``error``: the parent parser's error, one line)."""
    from .document.interop import SOURCES
    from .document.scripts import TARGETS
    i = sub.add_parser("import", help="a composition from another accountant's description (a dp_accounting "
                                      "DpEvent, an Opacus accountant's history, jax_privacy's DpParams)")
    i.add_argument("file", help="the description (JSON)")
    i.add_argument("--from", dest="source", required=True, choices=SOURCES,
                   help="what the file holds: dpevent (a DpEvent's to_named_tuple() as JSON objects), opacus "
                        "([[noise_multiplier, sample_rate, steps], ...]), jax_privacy (DpParams fields and "
                        "num_updates)")
    i.add_argument("--out", default=None, metavar="COMP.json", help="write the composition file (atomically)")
    i.add_argument("--json", action="store_true",
                   help="print the composition file's JSON object instead of the rows and notes")
    i.add_argument("--delta", type=_number, default=None,
                   help="the composition's target delta (default: the description's, else 1e-05)")
    e = sub.add_parser("export", help="a Python script that recomputes a composition's epsilon in another "
                                      "library (dp_accounting, Opacus, prv_accountant)")
    e.add_argument("file", help="composition file (JSON)")
    e.add_argument("--to", dest="target", required=True, choices=TARGETS, help="the library the script uses")
    e.add_argument("--out", default=None, metavar="SCRIPT.py",
                   help="write the script there (default: stdout)")
    for p in (i, e):
        p.error = error  # type: ignore[method-assign]


def run_import(args) -> int:
    from .accounting.core.validate import check_delta
    from .document import interop
    from .document.fileio import atomic_write, dumps
    delta = None if args.delta is None else check_delta(args.delta, "--delta")
    text = read(args.file)
    try:
        imported = interop.convert(interop.parse_json(text), args.source, delta)
    except ValueError as exc:
        raise ValueError(f"{args.file}: {exc}") from None
    comp = imported.composition
    if args.out is not None:
        atomic_write(args.out, dumps(comp.document()))
    if args.json:
        print(json.dumps(comp.to_dict()))
        return 0
    print(f"{len(comp.rows)} row(s), {comp.relation.describe()}, target delta {comp.targets.delta:g}:")
    for r in comp.rows:
        params = ", ".join(f"{k} = {v!r}" for k, v in r.params.items())
        print(f"  {r.kind} ({params}) × {r.count}   [{r.label}]")
    if comp.tuning is not None:
        print(f"  tuning: {comp.tuning.describe()}")
    for note in imported.notes:
        print(f"note: {note}")
    if args.out is not None:
        print(f"wrote {args.out}")
    else:
        print("(nothing written: give --out COMP.json to save it, or --json to print it)")
    return 0


def run_export(args) -> int:
    from .document.fileio import atomic_write
    from .document.scripts import script
    s = script(load(args.file), args.target)
    if args.out is None:
        sys.stdout.write(s.text)
    else:
        atomic_write(args.out, s.text)
    for note in s.notes:
        print(f"prvgui: note: {note}", file=sys.stderr)
    if args.out is not None:
        print(f"wrote {args.out}", file=sys.stderr)
    return 0


COMMANDS = {"import": run_import, "export": run_export}
