"""A workload: a table of measurements as a CSV file (untrusted), read into a composition and
written back. No Qt, no numerics.

    # census 2020, block-group counts
    label,kind,count,sigma,sensitivity
    total population,discrete_gaussian,1,8,
    county counts,discrete_gaussian,50,30,1

The first line that is not blank or a ``#`` comment is the header: ``kind`` (required), ``label``
and ``count`` (default 1), and one column per parameter, named as the kinds name them
(docs/kinds.md: ``sigma``, ``sensitivity``, ``scale``, ``rho``, ``epsilon``, ...), in any order.
Each later line is one row. An empty cell is the kind's default (a required parameter has none);
a list parameter is written as a field is typed (``0.5 0.5``; points ``1 1e-5; 2 1e-8``). A UTF-8
BOM and CRLF line ends are accepted; a ``#`` comment is a line whose first character (outside a
quoted field) is ``#``. At most ``MAX_ROWS`` rows and fileio's ``MAX_BYTES``. The neighbouring
relation and the targets are not in the file: the caller gives them (the command line's
``--neighbouring`` and ``--delta``).

Every problem is a ``FileFormatError`` naming the line and the column, with the value as the file
has it: ``line 14, column sigma: Noise σ must be a number (greater than 0 and at most 100000); the
file has "abc"``.
"""
from __future__ import annotations

import csv
import io
import math
import os
import re
from dataclasses import dataclass, field, replace

from ..accounting.core.validate import IN_FILE, NumberError, check_delta, number_text
from ..accounting.core.validate import given as given_text
from ..accounting.core.values import Neighbouring, Relation
from ..accounting.kinds.base import Choice, Points, Vector
from ..accounting.mechanisms import MECHANISM_KINDS
from .composition import Composition, FileFormatError
from .fileio import MAX_BYTES, read_text
from .list_csv import list_text, parse_list
from .model import KIND_TITLES, RowSpec, Targets, check_count

#: the most rows a workload may have
MAX_ROWS = 100_000
#: the columns every workload may have besides the parameters
ROW_COLUMNS = ("label", "kind", "count")
#: every parameter name of any kind (the columns a header may name)
_PARAMS = {n for cls in MECHANISM_KINDS.values() for n in cls.param_specs()}
_INTEGER = re.compile(r"[+-]?\d+")


@dataclass(frozen=True)
class Workload:
    """A workload as read: the composition, the line each row came from and the cells of the extra
    columns asked for (``extra``: column name -> one text per row)."""

    composition: Composition
    lines: tuple[int, ...] = ()
    extra: dict[str, tuple[str, ...]] = field(default_factory=dict)


def read_workload(source: str | os.PathLike, neighbouring: str = "add_remove", delta: float | None = None,
                  extra: tuple[str, ...] = ()) -> Composition:
    """The composition of a workload CSV: ``source`` is a path, or the file's text when it is a
    str holding a line break. ``neighbouring`` and ``delta`` (the target) come from the caller."""
    return parse_workload(_text(source), neighbouring, delta, extra).composition


def _text(source: str | os.PathLike) -> str:
    if isinstance(source, str) and ("\n" in source or "\r" in source):
        if len(source.encode("utf-8", "surrogatepass")) > MAX_BYTES:
            raise FileFormatError(f"file is larger than {MAX_BYTES} bytes")
        return source[1:] if source.startswith("\ufeff") else source
    return read_text(source)


def _records(text: str):
    """(line, cells) of each CSV record that is not blank or a comment; ``line`` is where it starts."""
    def physical():  # comment lines become blank lines, so that the reader's line numbers stay true
        quoted = False
        for raw in io.StringIO(text, newline=""):
            if not quoted and raw.lstrip(" \t").startswith("#"):
                yield "\n"
                continue
            yield raw
            quoted ^= raw.count('"') % 2 == 1
    reader = csv.reader(physical(), strict=True)
    while True:
        start = reader.line_num + 1
        try:
            cells = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            raise FileFormatError(f"line {start}: not a CSV line: {exc}") from None
        if any(c.strip() for c in cells):
            yield start, [c.strip() for c in cells]


def parse_workload(text: str, neighbouring: str = "add_remove", delta: float | None = None,
                   extra: tuple[str, ...] = ()) -> Workload:
    """Like :func:`read_workload`, from the file's text, keeping the lines and the ``extra`` columns."""
    relation = Relation(Neighbouring.parse(neighbouring, "--neighbouring"))
    extra = tuple(e.strip().lower() for e in extra)
    clash = [e for e in extra if e in ROW_COLUMNS or e in _PARAMS]
    if clash:
        raise ValueError(f"the weights column {clash[0]!r} is a column of every workload (a row's own or a "
                         "parameter); name a column of its own")
    if "\0" in text:
        line = text.count("\n", 0, text.index("\0")) + 1
        raise FileFormatError(f"line {line}: not a CSV line: a NUL character (is this a text file?)")
    records = _records(text)
    try:
        header_line, header = next(records)
    except StopIteration:
        raise FileFormatError("the file is empty: a workload has a header (label,kind,count and the "
                              "parameters' columns) and a line per row") from None
    columns = _header(header_line, header, extra)
    rows: list[RowSpec] = []
    lines: list[int] = []
    checked: dict[tuple, RowSpec] = {}
    extras: dict[str, list[str]] = {e: [] for e in columns.values() if e.startswith("extra:")}
    for line, cells in records:
        if len(rows) >= MAX_ROWS:
            raise FileFormatError(f"line {line}: the file has more than {MAX_ROWS:,} rows")
        if len(cells) != len(header):
            raise FileFormatError(f"line {line}: {len(cells)} cells, but the header (line {header_line}) has "
                                  f"{len(header)} columns")
        given = {columns[j]: c for j, c in enumerate(cells)}
        label = given.get("label", "")
        if len(label) > 200:
            raise FileFormatError(f"line {line}, column label: the label must be at most 200 characters; it "
                                  f"has {len(label)}")
        # rows that differ in their label only are checked once (a census repeats its noise)
        key = tuple((k, v) for k, v in given.items() if k != "label" and not k.startswith("extra:"))
        if key not in checked:
            checked[key] = _row(line, given, relation)
        rows.append(replace(checked[key], label=label, params=dict(checked[key].params)))
        lines.append(line)
        for e in extras:
            extras[e].append(given[e])
    if not rows:
        raise FileFormatError(f"the file has a header (line {header_line}) but no rows")
    targets = Targets() if delta is None else Targets(delta=check_delta(delta))
    comp = Composition(tuple(rows), relation.neighbouring.value, targets)
    return Workload(comp, tuple(lines), {e[len("extra:"):]: tuple(v) for e, v in extras.items()})


def _header(line: int, cells: list[str], extra: tuple[str, ...]) -> dict[int, str]:
    """Column index -> its name (``extra:NAME`` for an extra column), every name checked."""
    out: dict[int, str] = {}
    for j, cell in enumerate(cells):
        name = cell.lower()
        where = f"line {line}, column {j + 1}"
        if not name:
            raise FileFormatError(f"{where}: the header's column has no name")
        if name in extra:
            name = f"extra:{name}"
        elif name not in ROW_COLUMNS and name not in _PARAMS:
            raise FileFormatError(f"{where}: {cell!r} is not a column of a workload (its columns: label, kind, "
                                  f"count and the parameters of the kinds, docs/kinds.md)")
        if name in out.values():
            raise FileFormatError(f"{where}: the header names {cell!r} twice")
        out[j] = name
    missing = [e for e in extra if f"extra:{e}" not in out.values()]
    if "kind" not in out.values() or missing:
        raise FileFormatError(f"line {line}: the header has no column {('kind' if not missing else missing[0])!r} "
                              f"(it has {', '.join(cells)})")
    return out


def _row(line: int, given: dict[str, str], relation: Relation) -> RowSpec:
    """The row of one line, without its label (every cell checked)."""
    kind = given["kind"]
    if kind not in MECHANISM_KINDS:
        raise FileFormatError(f"line {line}, column kind: the kind must be one of "
                              f"{', '.join(sorted(MECHANISM_KINDS))}; {given_text(kind, IN_FILE)}")
    specs = MECHANISM_KINDS[kind].param_specs()
    count = 1
    if given.get("count", ""):
        try:
            count = check_count(_number(given["count"]))
        except NumberError as exc:
            raise FileFormatError(f"line {line}, column count: {exc.message(IN_FILE)}") from None
    params: dict[str, object] = {}
    for name, cell in given.items():
        if name in ROW_COLUMNS or name.startswith("extra:") or cell == "":
            continue
        if name not in specs:
            raise FileFormatError(f"line {line}, column {name}: a {KIND_TITLES[kind]} row has no parameter "
                                  f"{name} (its parameters: {', '.join(specs)}); leave the cell empty")
        params[name] = _value(specs[name], cell)
        try:
            specs[name].check(name, params[name])
        except NumberError as exc:
            raise FileFormatError(f"line {line}, column {name}: {exc.message(IN_FILE)}") from None
    missing = [n for n in MECHANISM_KINDS[kind].required() if n not in params]
    if missing:
        raise FileFormatError(f"line {line}, column {missing[0]}: a {KIND_TITLES[kind]} row needs "
                              f"{specs[missing[0]].title} (there is no default); the cell is empty")
    spec = RowSpec(kind, params, count).normalised()
    problem = spec.problem(relation)
    if problem is not None:
        text = problem.message(IN_FILE) if isinstance(problem, NumberError) else str(problem)
        column = getattr(problem, "field", None)
        raise FileFormatError(f"line {line}, column {column}: {text}" if column else f"line {line}: {text}")
    return spec


def _number(cell: str) -> object:
    """A cell as a number (an int for a whole numeral), or its text when it is not a finite number."""
    if _INTEGER.fullmatch(cell):
        return int(cell)
    try:
        v = float(cell)
    except ValueError:
        return cell
    return v if math.isfinite(v) else cell


def _value(spec, cell: str) -> object:
    if isinstance(spec, Choice):
        return cell
    if isinstance(spec, Points):  # (a matrix too: rows separated by semicolons)
        return parse_list(cell, points=True)
    if isinstance(spec, Vector):
        return parse_list(cell)
    return _number(cell)


def write_workload(comp: Composition) -> str:
    """The composition as a workload CSV (``read_workload`` reads it back; the relation and the
    targets are not in it)."""
    names: list[str] = []
    for r in comp.rows:
        names += [n for n in MECHANISM_KINDS[r.kind].param_specs() if n in r.params and n not in names]
    lines = [_csv_line([*ROW_COLUMNS, *names])]
    for r in comp.rows:
        specs = MECHANISM_KINDS[r.kind].param_specs()
        cells = [_cell(specs[n], r.params[n]) if n in r.params else "" for n in names]
        line = _csv_line([r.label, r.kind, str(r.count), *cells])
        if line.startswith("#"):  # a label that would read as a comment (unquoted: no comma or quote in it)
            line = f'"{r.label}"{line[len(r.label):]}'
        lines.append(line)
    return "".join(lines)


def _csv_line(cells: list[str]) -> str:
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerow(cells)
    return out.getvalue()


def _cell(spec, value: object) -> str:
    if isinstance(value, (list, tuple)):
        return list_text(value, points=isinstance(spec, Points))
    if isinstance(value, float):
        return number_text(value)
    return str(value)
