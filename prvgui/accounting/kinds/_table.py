"""The kinds table of docs/kinds.md, made from the registry (``python -m prvgui.accounting.kinds._table``
prints it; a test checks that the committed file holds it, so it cannot go stale)."""
from __future__ import annotations

import math

from . import KINDS
from .base import Choice, Matrix, Points, Vector

BEGIN, END = "<!-- kinds table: generated -->", "<!-- end of the generated kinds table -->"


def _param(name: str, spec, default) -> str:
    if isinstance(spec, Choice):
        what = " or ".join(f"`{v}`" for v, _ in spec.choices)
    elif getattr(spec, "file_form", None):
        what = spec.file_form
    elif isinstance(spec, Matrix):
        what = "a matrix, as a list of rows of numbers"
    elif isinstance(spec, Points):
        what = "a list of [ε, δ] pairs"
    elif isinstance(spec, Vector):
        what = f"a list of {spec.entries}"
    else:
        lo = ("> " if spec.lo_open else "≥ ") + f"{spec.lo:g}"
        hi = "" if math.isinf(spec.hi) else f", ≤ {spec.hi:g}"
        what = ("whole number " if spec.integer else "") + lo + hi
    opt = "" if default is None else f"; default {default!r}"
    return f"`{name}` ({spec.title}: {what}{opt})"


def table() -> str:
    """One row per kind, in menu order: the file's name, the title people read, its parameters
    (range and default) and what it is."""
    rows = ["| kind | title | parameters | what it is |", "|---|---|---|---|"]
    for kind, cls in KINDS.items():
        defaults = cls.defaults()
        params = "; ".join(_param(n, s, defaults.get(n)) for n, s in cls.param_specs().items())
        rows.append(f"| `{kind}` | {cls.title} | {params} | {cls.describe()} |")
    return "\n".join([BEGIN, *rows, END])


if __name__ == "__main__":
    print(table())
