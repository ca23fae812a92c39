"""``prvgui from-training CONFIG [--json] [--out comp.json] [--epsilon]``: a training configuration
(document/training.py) translated into the rows that account it, with every conversion and the
pitfalls found. Registered by cli.py (``add_parser``, ``run``).

Text mode prints the conversions, then the pitfalls, then (``--epsilon``) the certified epsilon of
the composition at its delta. A configuration with an error pitfall (a weighted sampler) has no
composition: the command prints why and exits with status 1; bad fields exit with status 2.
"""
from __future__ import annotations

import json


def add_parser(sub, error, number) -> None:
    t = sub.add_parser("from-training", help="translate a training configuration (Opacus, jax_privacy, "
                                             "tensorflow_privacy, plain) into the rows that account it")
    t.add_argument("config", help="training configuration (JSON object; see docs/user-guide.md)")
    t.add_argument("--json", action="store_true",
                   help='print {"composition", "conversions", "pitfalls"} as one JSON object')
    t.add_argument("--out", default=None, metavar="COMP.json", help="write the composition file (atomically)")
    t.add_argument("--epsilon", action="store_true",
                   help="also compute the certified epsilon at the composition's delta")
    t.error = error  # type: ignore[method-assign]


def _read(path: str) -> object:
    """The configuration's JSON (untrusted: a syntax error with its line and column, NaN, duplicate
    keys and deep nesting refused, each named)."""
    from .document.fileio import read_text
    from .document.interop import parse_json
    try:
        return parse_json(read_text(path))
    except ValueError as exc:
        raise ValueError(f"{path}: {exc}") from None


def run(args) -> int:
    from .document.training import translate
    t = translate(_read(args.config))
    if args.out is not None and t.composition is not None:
        from .document.fileio import save
        save(t.composition.document(), args.out)
    out = t.as_dict()
    answer = None
    if args.epsilon and t.composition is not None:
        from . import api
        answer = api.epsilon(t.composition)
        out["epsilon"] = answer.as_dict()
    if args.json:
        print(json.dumps(out))
        return 0 if t.composition is not None else 1
    print("conversions:")
    for line in t.conversions:
        print(f"  {line}")
    if t.pitfalls:
        print("pitfalls:")
        for p in t.pitfalls:
            print(f"  [{p.severity}] {p.code}: {p.message}")
    if t.composition is None:
        print("no composition: fix the error above")
        return 1
    for r in t.composition.rows:
        params = ", ".join(f"{k} = {v!r}" for k, v in r.params.items())
        print(f"row: {r.kind} ({params}) × {r.count}")
    if args.out is not None:
        print(f"wrote {args.out}")
    if answer is not None:
        print(f"epsilon <= {answer.certified_upper.value:.6g} at delta {answer.at:g} (certified; PRV lower "
              f"{answer.lower:.6g})")
    return 0
