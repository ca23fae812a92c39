"""What the importers share (interop.py, interop_dpevent.py): checks of untrusted fields that name
the field's path (``events[2].event.noise_multiplier must be a number >= 0; got -1``), the rows
found (``Piece``: a kind, its parameters, a count, where in the input it came from and which
neighbouring relation it needs), and the composition built from them: the relation chosen, each
row checked by the kind itself, equal neighbouring rows merged, labels saying where each row came
from. No Qt, no numerics beyond arithmetic.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field

from ..accounting.core.values import MAX_COUNT, Relation
from ..accounting.queries.selection import Tuning
from .composition import MAX_ROWS, Composition
from .model import RowSpec, Targets

MAX_LABEL = 200
REPLACE, ADD = "replace_one", "add_remove"


class ImportRefused(ValueError):
    """An input that cannot be imported; the message names the field's path and the value."""


def shown(v: object) -> str:
    """A value as the message shows it: JSON's spelling, cut short."""
    if isinstance(v, bool) or v is None:
        return json.dumps(v)
    if isinstance(v, (int, float)):
        text = repr(v)
        return text if len(text) <= 60 else f"{text[:24]}... (an integer of {len(text.lstrip('-'))} digits)"
    try:
        text = json.dumps(v, default=repr, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(v)
    return text if len(text) <= 60 else text[:57] + "..."


def join(path: str, key: str) -> str:
    """The path of a field: ``events[2].event`` + ``count``."""
    return f"{path}.{key}" if path else key


def _float(v: object) -> float | None:
    """A JSON number as a float (None for anything else, and for an integer too large for one)."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    try:
        return float(v)
    except OverflowError:
        return None


def number(path: str, v: object, lo: float = 0.0, hi: float = math.inf, lo_open: bool = False,
           allow_inf: bool = False) -> float:
    """A number in [lo, hi] (lo excluded when ``lo_open``), finite unless ``allow_inf``."""
    x = _float(v)
    ok = x is not None and not math.isnan(x) and (allow_inf or math.isfinite(x))
    if ok:
        assert x is not None
        ok = (x > lo if lo_open else x >= lo) and x <= hi
    if not ok:
        rng = "a positive number" if lo == 0 and lo_open else f"a number {'>' if lo_open else '>='} {lo:g}"
        if math.isfinite(hi):
            rng += f" and <= {hi:g}"
        raise ImportRefused(f"{path} must be {rng}; got {shown(v)}")
    assert x is not None
    return x


def whole(path: str, v: object, lo: int = 0, hi: int = 10**12) -> int:
    """A whole number in [lo, hi] (an integral float such as 1e3 is taken as one)."""
    if isinstance(v, float) and math.isfinite(v) and v == int(v):
        v = int(v)
    if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
        raise ImportRefused(f"{path} must be a whole number from {lo:,} to {hi:,}; got {shown(v)}")
    return v


def obj(path: str, v: object, what: str) -> dict:
    if not isinstance(v, dict):
        raise ImportRefused(f"{path or 'the input'} must be {what}; got {shown(v)}")
    return v


def check_keys(path: str, d: dict, allowed: tuple[str, ...], what: str) -> None:
    """Every key of ``d`` is one of ``allowed``; else the first other is named."""
    for k in d:
        if k not in allowed:
            raise ImportRefused(f"{join(path, str(k))}: not a field of {what} (its fields: "
                                f"{', '.join(allowed)})")


@dataclass(frozen=True)
class Piece:
    """One row found in the input: its kind and parameters, its count, what it was (``desc``, for
    the label), where (``path``) and the neighbouring relation it needs (None: either)."""

    kind: str
    params: dict
    count: int
    desc: str
    path: str
    needs: str | None = None
    why: str = ""


@dataclass(frozen=True)
class Imported:
    """An imported composition and the notes a person should read (what was assumed or chosen)."""

    composition: Composition
    notes: tuple[str, ...] = ()


@dataclass
class Found:
    """What an importer collects before the composition is built."""

    source: str  # the label prefix: "dp_accounting", "opacus", "jax_privacy"
    pieces: list[Piece] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    tuning: Tuning | None = None
    group_size: int = 1
    delta: float | None = None

    def note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)


def _relation(found: Found, neighbouring: str | None) -> str:
    """The relation the rows are composed under: ``neighbouring`` if given, else the one some row
    needs (add/remove when none does); two rows that need different ones are refused."""
    replace = [p for p in found.pieces if p.needs == REPLACE]
    add = [p for p in found.pieces if p.needs == ADD]
    if replace and add:
        a, r = add[0], replace[0]
        raise ImportRefused(f"{a.path} ({a.desc}) is accounted under add/remove only, but {r.path} "
                            f"({r.desc}) needs replace-one ({r.why}); prvgui composes every row under one "
                            "relation: import them as two compositions")
    if neighbouring is None:
        if replace:
            found.note("neighbouring: replace_one (one record replaced by another), because "
                       f"{replace[0].path} needs it: {replace[0].why}")
        return REPLACE if replace else ADD
    clash = (add if neighbouring == REPLACE else replace)
    if clash:
        p = clash[0]
        needs = str(p.needs).replace("_", " ")
        raise ImportRefused(f"{p.path} ({p.desc}) needs {needs} neighbouring "
                            f"({p.why or 'prvgui accounts it under that relation only'}); got {neighbouring}")
    return neighbouring


def _label(source: str, desc: str, count: int) -> str:
    text = f"{source}: {desc} × {count:,}"
    return text if len(text) <= MAX_LABEL else text[:MAX_LABEL - 1] + "…"


def build(found: Found, neighbouring: str | None = None, delta: float | None = None) -> Imported:
    """The composition of the pieces found (checked; consecutive equal rows merged)."""
    rel_name = _relation(found, neighbouring)
    relation = Relation(rel_name, found.group_size)  # type: ignore[arg-type]
    merged: list[Piece] = []
    for p in found.pieces:
        if p.count == 0:
            continue
        last = merged[-1] if merged else None
        if last is not None and (last.kind, last.params, last.desc) == (p.kind, p.params, p.desc):
            merged[-1] = Piece(p.kind, p.params, last.count + p.count, p.desc, last.path, p.needs, p.why)
        else:
            merged.append(p)
    if len(merged) > MAX_ROWS:
        raise ImportRefused(f"the input has {len(merged):,} different rows; a composition holds at most "
                            f"{MAX_ROWS:,}")
    rows = []
    for p in merged:
        if p.count > MAX_COUNT:
            raise ImportRefused(f"{p.path}: {p.count:,} runs in all (counts multiplied through the nesting); "
                                f"prvgui counts at most {MAX_COUNT:,} runs per row")
        spec = RowSpec(p.kind, dict(p.params), p.count, _label(found.source, p.desc, p.count)).normalised()
        problem = spec.problem(relation)
        if problem is not None:
            raise ImportRefused(f"{p.path} ({p.desc}): {problem}")
        rows.append(spec)
    d = delta if delta is not None else found.delta
    targets = Targets() if d is None else Targets(delta=number("delta", d, 0.0, 1.0, lo_open=True))
    if not targets.delta < 1:
        raise ImportRefused(f"delta must be a number > 0 and < 1; got {shown(d)}")
    comp = Composition(tuple(rows), rel_name, targets, found.group_size, found.tuning)
    return Imported(comp, tuple(found.notes))
