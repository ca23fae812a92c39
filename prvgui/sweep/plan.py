"""A sweep's plan: the axes parsed from ``--vary ROW.PARAM=START:STOP:NUM[:log]`` against a
composition, the grid they span and the composition at each of its points.

ROW is a row number counted from 1 (as the window's table shows) or a row's label; PARAM is a
numeric parameter of the row's kind or ``count``. START:STOP:NUM gives NUM points from START to
STOP, evenly spaced or (``:log``) evenly spaced in the logarithm (``numpy.linspace`` and
``numpy.geomspace``, both exact at the ends); whole-number parameters and counts are rounded and
repeated values dropped. The grid is the Cartesian product of the axes in the order given, the
last axis varying fastest (as ``itertools.product``): point ``i``'s values are the digits of
``i`` in the mixed radix of the axes' lengths, so an index names the same point on every run.
Every problem is a ``ValueError`` naming the option and the value, e.g.
``--vary 3.sigma=0.5:2:10: the file has 2 rows``.
"""
from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, replace

import numpy as np

from .. import __version__
from ..accounting.core.validate import NumberError
from ..accounting.kinds.base import Choice, Param
from ..accounting.mechanisms import MAX_COUNT, kind_class
from ..document.composition import Composition

#: the most points a sweep may have
MAX_POINTS = 10_000_000
#: the journal's format: a change makes older journals another plan
PLAN_VERSION = 1
OPTION = "--vary"


def _show(text: str) -> str:
    return text if len(text) <= 80 else text[:77] + "…"


@dataclass(frozen=True)
class Axis:
    """One varied parameter: ``row`` (from 0), ``param`` (a parameter name or ``count``) and its
    ``values`` (floats; ints for counts and whole-number parameters), in the order swept."""

    row: int
    param: str
    values: tuple
    log: bool = False
    spec: str = ""

    @property
    def name(self) -> str:
        """The column's name in the results: the row number from 1 and the parameter."""
        return f"{self.row + 1}.{self.param}"

    @property
    def integer(self) -> bool:
        return all(isinstance(v, int) for v in self.values)


def _row(target: str, comp: Composition, where: str) -> int:
    n = len(comp.rows)
    if target.isdigit():
        i = int(target)
        if n == 0:
            raise ValueError(f"{where}: the file has no rows")
        if not 1 <= i <= n:
            raise ValueError(f"{where}: the file has {n} row{'s' if n != 1 else ''} (rows count from 1)"
                             if i > n else f"{where}: rows count from 1 (1 to {n})")
        return i - 1
    hits = [i for i, r in enumerate(comp.rows) if r.label == target]
    if len(hits) > 1:
        raise ValueError(f"{where}: rows {', '.join(str(i + 1) for i in hits)} are all labelled "
                         f"{target!r}; give a row number")
    if not hits:
        raise ValueError(f"{where}: ROW must be a row number from 1 to {n} or a row's label; no row is "
                         f"labelled {_show(target)!r}")
    return hits[0]


def _numeric(kind: str) -> dict[str, Param]:
    """The parameters of a kind a sweep can vary (plain numbers; not choices, lists or matrices)."""
    return {k: p for k, p in kind_class(kind).param_specs().items() if type(p) is Param}


def _number(text: str, what: str, where: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise ValueError(f"{where}: {what} must be a number; got {_show(text)!r}") from None
    if not math.isfinite(v):
        raise ValueError(f"{where}: {what} must be a finite number; got {_show(text)!r}")
    return v


def _values(parts: list[str], integer: bool, where: str) -> tuple[tuple, bool]:
    if len(parts) not in (3, 4) or (len(parts) == 4 and parts[3].strip().lower() != "log"):
        raise ValueError(f"{where}: the values must be START:STOP:NUM or START:STOP:NUM:log")
    start, stop = _number(parts[0], "START", where), _number(parts[1], "STOP", where)
    try:
        num = int(parts[2])
    except ValueError:
        raise ValueError(f"{where}: NUM must be a whole number of points; got {_show(parts[2])!r}") from None
    if not 1 <= num <= MAX_POINTS:
        raise ValueError(f"{where}: NUM must be from 1 to {MAX_POINTS:,}; got {num}")
    if num == 1 and start != stop:
        raise ValueError(f"{where}: one point (NUM 1) needs START = STOP")
    log = len(parts) == 4
    if log and not (start > 0 and stop > 0):
        raise ValueError(f"{where}: log spacing needs START and STOP above 0")
    grid = np.geomspace(start, stop, num) if log else np.linspace(start, stop, num)
    out: list = []
    seen: set = set()
    for x in grid:
        v = int(np.rint(x)) if integer else float(x)
        if v not in seen:
            seen.add(v)
            out.append(v)
    return tuple(out), log


def parse_axis(text: str, comp: Composition) -> Axis:
    """One ``--vary ROW.PARAM=START:STOP:NUM[:log]`` against ``comp`` (ValueError naming it)."""
    where = f"{OPTION} {_show(text)}"
    target, eq, values = text.rpartition("=")
    if not eq or not target:
        raise ValueError(f"{where}: write ROW.PARAM=START:STOP:NUM[:log], e.g. 1.sigma=0.5:2:10")
    row_text, dot, param = target.strip().rpartition(".")
    if not dot or not row_text or not param:
        raise ValueError(f"{where}: write ROW.PARAM (a row number from 1 or its label, a dot, a parameter)")
    row = _row(row_text, comp, where)
    spec = comp.rows[row]
    numeric = _numeric(spec.kind)
    if param != "count" and param not in numeric:
        others = kind_class(spec.kind).param_specs()
        why = (f"{param} is not a number (it is one of a few named values)" if isinstance(others.get(param), Choice)
               else f"{param} is a list, which a sweep cannot vary" if param in others
               else f"row {row + 1} ({spec.title}) has no parameter {_show(param)!r}")
        raise ValueError(f"{where}: {why}; it can vary {', '.join([*numeric, 'count'])}")
    p = numeric.get(param)
    integer = param == "count" or (p is not None and p.integer)
    vals, log = _values(values.split(":"), integer, where)
    for v in vals:
        _check_value(param, p, v, where)
    return Axis(row, param, vals, log, text)


def _check_value(param: str, p: Param | None, v: float | int, where: str) -> None:
    if p is None:  # count
        if not 1 <= v <= MAX_COUNT:
            raise ValueError(f"{where}: count must be a whole number from 1 to {MAX_COUNT:,}; the range "
                             f"holds {v}")
        return
    try:
        p.check(param, v)
    except NumberError as exc:
        raise ValueError(f"{where}: {exc.message('the range holds')}") from None


@dataclass(frozen=True)
class SweepPlan:
    """The axes over a composition, and the query asked at each point (epsilon at ``delta``,
    bracket half-width ``eps_error``)."""

    composition: Composition
    axes: tuple[Axis, ...]
    delta: float
    eps_error: float

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(len(a.values) for a in self.axes)

    @property
    def total(self) -> int:
        return math.prod(self.shape)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(a.name for a in self.axes)

    def point(self, index: int) -> tuple:
        """The axes' values at point ``index`` (the last axis varies fastest)."""
        if not 0 <= index < self.total:
            raise IndexError(f"point {index} is not in the sweep (0 to {self.total - 1})")
        out = []
        for a in reversed(self.axes):
            index, k = divmod(index, len(a.values))
            out.append(a.values[k])
        return tuple(reversed(out))

    def composition_at(self, values: tuple) -> Composition:
        """The composition with the axes set to ``values``."""
        rows = list(self.composition.rows)
        for a, v in zip(self.axes, values):
            r = rows[a.row]
            rows[a.row] = replace(r, count=v) if a.param == "count" else r.with_param(a.param, v)
        return replace(self.composition, rows=tuple(rows))

    def as_dict(self) -> dict:
        """Everything the results depend on, as JSON (the journal keeps it)."""
        return {"plan_version": PLAN_VERSION, "prvgui": __version__,
                "composition": self.composition.to_dict(), "delta": self.delta, "eps_error": self.eps_error,
                "axes": [{"row": a.row + 1, "param": a.param, "log": a.log, "values": list(a.values)}
                         for a in self.axes]}

    def digest(self) -> str:
        """A hash of ``as_dict``: equal for equal plans, on any machine."""
        text = json.dumps(self.as_dict(), sort_keys=True, separators=(",", ":"), default=list)
        return hashlib.sha256(text.encode()).hexdigest()


def make_plan(comp: Composition, specs: list[str], delta: float, eps_error: float) -> SweepPlan:
    """The plan of ``--vary`` specs over ``comp`` (ValueError naming the first bad spec)."""
    if not specs:
        raise ValueError(f"{OPTION}: give at least one ROW.PARAM=START:STOP:NUM[:log]")
    axes = [parse_axis(s, comp) for s in specs]
    seen: dict[tuple[int, str], str] = {}
    for a in axes:
        if (a.row, a.param) in seen:
            raise ValueError(f"{OPTION} {_show(a.spec)}: row {a.row + 1}'s {a.param} is varied already "
                             f"(by {OPTION} {_show(seen[a.row, a.param])})")
        seen[a.row, a.param] = a.spec
    total = math.prod(len(a.values) for a in axes)
    if total > MAX_POINTS:
        raise ValueError(f"{OPTION}: the grid has {total:,} points; a sweep may have at most {MAX_POINTS:,}")
    return SweepPlan(comp, tuple(axes), delta, eps_error)
