"""List parameters as text: reading them from a CSV file (untrusted) and from what people type,
and showing them in a field. No Qt, no numerics.

A CSV file for a pair of distributions has two columns p and q (one row per outcome); one for a
privacy profile has two columns epsilon and delta (one row per point). A first row of names
picks the columns (``p,q``; ``epsilon,delta``, also ``eps``, ``ε``, ``δ``); without one the first
two columns are used. Blank lines and lines starting with ``#`` are skipped. Every problem is a
``FileFormatError`` naming the line: ``line 4, q: Probabilities q must be a number; the file has
"abc"``. What the numbers must satisfy together (sum to 1, ...) is the kind's check, done when
they reach the row.
"""
from __future__ import annotations

import csv
import io
import math
import os
import re

from ..accounting.kinds.base import MAX_MATRIX, Matrix, Points, Vector
from ..accounting.mechanisms import kind_class
from ..accounting.core.validate import IN_FILE, NumberError, check_number
from .fileio import FileFormatError, read_text

#: names a header may give each column (lower case)
ALIASES = {"epsilon": {"epsilon", "eps", "ε"}, "delta": {"delta", "δ"}}
#: the most data lines read
MAX_LINES = 100_000


def list_params(kind: str) -> dict[str, Vector | Points]:
    """The list parameters of a kind (empty for kinds without any)."""
    return {n: s for n, s in kind_class(kind).param_specs().items()
            if isinstance(s, (Vector, Points)) and getattr(s, "csv", True)}


def columns_for(kind: str) -> list[tuple[str, str, float, float]]:
    """(column name, label, lowest, highest value) of the columns a kind's CSV file has: p, q or
    epsilon, delta."""
    specs = list_params(kind)
    if any(isinstance(s, Matrix) for s in specs.values()):
        return [(n, s.title, -math.inf, math.inf) for n, s in specs.items() if isinstance(s, Matrix)]
    if any(isinstance(s, Points) for s in specs.values()):
        return [("epsilon", "ε", 0.0, math.inf), ("delta", "δ", 0.0, 1.0)]
    return [(n, s.title, s.lo, s.hi) for n, s in specs.items()]


def read_csv(path: str | os.PathLike, kind: str) -> dict[str, tuple]:
    """The list parameters of a ``kind`` row read from a CSV file (see the module docstring)."""
    return parse_csv(read_text(path), kind)


def parse_csv(text: str, kind: str) -> dict[str, tuple]:
    """Like :func:`read_csv`, from the file's text."""
    matrix = [n for n, s in list_params(kind).items() if isinstance(s, Matrix)]
    if matrix:
        return {matrix[0]: _matrix_rows(text)}
    cols = columns_for(kind)
    if not cols:
        raise FileFormatError(f"{kind_class(kind).title} has no list to fill from a file")
    names = [c[0] for c in cols]
    index = list(range(len(cols)))
    values: list[list[float]] = [[] for _ in cols]
    header_seen = data_seen = False
    try:
        rows = list(csv.reader(io.StringIO(text)))
    except csv.Error as exc:
        raise FileFormatError(f"not a CSV file: {exc}") from None
    for line, row in enumerate(rows, start=1):
        cells = [c.strip() for c in row]
        if not any(cells) or cells[0].startswith("#"):
            continue
        if not header_seen and not data_seen and not _numeric(cells[0]):
            index = _header(cells, names, line)
            header_seen = True
            continue
        data_seen = True
        if len(values[0]) >= MAX_LINES:
            raise FileFormatError(f"line {line}: the file has more than {MAX_LINES:,} rows")
        for k, (name, label, lo, hi) in enumerate(cols):
            if index[k] >= len(cells) or cells[index[k]] == "":
                raise FileFormatError(f"line {line}, {name}: {label} is missing (the line has "
                                      f"{len(cells)} column{'s' if len(cells) != 1 else ''})")
            cell = cells[index[k]]
            try:
                v = float(cell)
            except ValueError:
                v = None
            try:
                values[k].append(check_number(label, v if v is not None and math.isfinite(v) else cell,
                                              lo, hi, field=name))
            except NumberError as exc:
                raise FileFormatError(f"line {line}, {name}: {exc.message(IN_FILE)}") from None
    if not values[0]:
        raise FileFormatError("the file has no rows of numbers")
    if names == ["epsilon", "delta"]:
        return {"points": tuple(zip(values[0], values[1]))}
    return {name: tuple(v) for name, v in zip(names, values)}


def _matrix_rows(text: str) -> tuple[tuple[float, ...], ...]:
    """A matrix: every line that is not blank or a # comment is one row of numbers."""
    try:
        rows = list(csv.reader(io.StringIO(text)))
    except csv.Error as exc:
        raise FileFormatError(f"not a CSV file: {exc}") from None
    out: list[tuple[float, ...]] = []
    for line, row in enumerate(rows, start=1):
        cells = [c.strip() for c in row]
        if not any(cells) or cells[0].startswith("#"):
            continue
        if len(out) >= MAX_MATRIX:
            raise FileFormatError(f"line {line}: the matrix has more than {MAX_MATRIX:,} rows")
        vals = []
        for j, cell in enumerate(cells):
            v = float(cell) if _numeric(cell) else math.nan
            if not math.isfinite(v):
                raise FileFormatError(f"line {line}, column {j + 1}: {cell!r} is not a finite number")
            vals.append(v)
        if out and len(vals) != len(out[0]):
            raise FileFormatError(f"line {line}: {len(vals)} numbers, the first row has {len(out[0])}")
        out.append(tuple(vals))
    if not out:
        raise FileFormatError("the file has no rows of numbers")
    return tuple(out)


def _numeric(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


def _header(cells: list[str], names: list[str], line: int) -> list[int]:
    """The column of each name in a header row."""
    lowered = [c.lower() for c in cells]
    out = []
    for name in names:
        allowed = ALIASES.get(name, {name})
        hits = [i for i, c in enumerate(lowered) if c in allowed]
        if not hits:
            raise FileFormatError(f"line {line}: the header has no column {name!r} (it has "
                                  f"{', '.join(repr(c) for c in cells)}; expected {', '.join(names)})")
        out.append(hits[0])
    return out


# ------------------------------------------------------------------ typed text
_SEP = re.compile(r"[,\s]+")
_GROUPS = re.compile(r"[;\n]+")


def _token(tok: str) -> object:
    """A float for text that reads as a finite number, else the text (the kind's check names it)."""
    try:
        v = float(tok)
    except ValueError:
        return tok
    return v if math.isfinite(v) else tok


def parse_list(text: str, points: bool = False) -> object:
    """Typed text as a list parameter: numbers separated by commas or spaces (``0.5, 0.25 0.25``);
    points as "ε δ" pairs separated by semicolons or new lines (``1 1e-5; 2, 1e-8``). Empty text
    stays text (its message says the field is empty); bad entries stay text."""
    if not text.strip():
        return text
    if points:
        groups = [[_token(t) for t in _SEP.split(g.strip()) if t] for g in _GROUPS.split(text) if g.strip()]
        # a lone number is not a pair: kept bare, so that its message shows it as typed
        return tuple(g[0] if len(g) == 1 else tuple(g) for g in groups)
    return tuple(_token(t) for t in _SEP.split(text.strip()) if t)


def list_text(value: object, points: bool = False) -> str:
    """A list parameter as a field shows it (``parse_list`` reads it back)."""
    if not isinstance(value, (list, tuple)):
        return "" if value is None else str(value)
    if points:
        return "; ".join(" ".join(_num(v) for v in p) if isinstance(p, (list, tuple)) else _num(p)
                         for p in value)
    return ", ".join(_num(v) for v in value)


def _num(v: object) -> str:
    if isinstance(v, float) and math.isfinite(v) and v == int(v) and abs(v) < 1e15:
        return str(int(v))
    return repr(v) if isinstance(v, float) else str(v)


def list_summary(spec, name: str, value: list | tuple) -> str:
    """``p: 4 outcomes``, ``3 (ε, δ) points`` for a list parameter in the table."""
    n = len(value)
    if isinstance(spec, Matrix):
        width = len(value[0]) if isinstance(value[0], (list, tuple)) else 1
        return f"C: {n} × {width}"
    own = spec.table_text(name, value) if spec is not None else None
    if own is not None:
        return own
    if isinstance(spec, Points):
        return f"{n} (ε, δ) point{'s' if n != 1 else ''}"
    sym = (spec.symbol or name) if spec is not None else name
    if isinstance(spec, Vector) and spec.entries == "numbers":  # (a band's coefficients, say)
        return f"{sym}: {n} entr{'ies' if n != 1 else 'y'}"
    return f"{sym}: {n} outcome{'s' if n != 1 else ''}"
