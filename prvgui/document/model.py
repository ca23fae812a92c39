"""The composition document: rows of (kind, parameters, count, label) plus targets.

Plain Python, no Qt. The document is the single source of truth the GUI edits;
every mutation goes through a method that validates first and then announces
itself to listeners (``("insert", i)``, ``("remove", i)``, ``("change", i)``,
``("move", (i, j))``, ``("targets", None)``, ``("tuning", None)``, ``("reset", None)``), so
that a Qt model can map the events onto its own signals.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Callable, Iterator, Mapping

from ..accounting.kinds.base import Points, Vector
from ..accounting.core.values import Neighbouring, Relation, check_group_size
from ..accounting.mechanisms import MECHANISM_KINDS, Row, kind_class, mechanism_from_params
from ..accounting.mechanisms import check_count as _check_count
from ..accounting.queries.selection import Tuning

Listener = Callable[[str, object], None]

class _KindTitles(Mapping):
    """kind -> its name for people, in menu order: a live view of the registry."""

    def __getitem__(self, kind: str) -> str:
        return MECHANISM_KINDS[kind].title

    def __iter__(self) -> Iterator[str]:
        return iter(MECHANISM_KINDS)

    def __len__(self) -> int:
        return len(MECHANISM_KINDS)


KIND_TITLES: Mapping[str, str] = _KindTitles()


def param_names(kind: str) -> list[str]:
    """Parameter names of a kind, in declaration order."""
    return list(kind_class(kind).param_specs())


def check_count(value: object, name: str = "Count") -> int:
    """A row's count as the user gives it: an integer in [1, MAX_COUNT] (else a NumberError
    naming ``name``, the form's label)."""
    return _check_count(value, lo=1, name=name)


@dataclass(frozen=True)
class RowSpec:
    """One row as the user wrote it. ``to_row`` validates and builds the engine's Row."""

    kind: str
    params: dict = field(default_factory=dict)
    count: int = 1
    label: str = ""

    @classmethod
    def default(cls, kind: str) -> "RowSpec":
        """A new row of a kind, with the kind's initial parameters."""
        return cls(kind, kind_class(kind).initial_params(), 1, "")

    def to_row(self) -> Row:
        mech = mechanism_from_params(self.kind, dict(self.params))
        count = check_count(self.count)
        runs = mech.runs_per_count()
        if runs > 1:  # (amplified banded MF: a run is ceil(n / b) subsampled steps)
            try:
                count = check_count(count * runs)
            except ValueError:
                raise ValueError(f"Count: {count:,} runs of {runs:,} steps each are more steps than a row "
                                 "can count") from None
        return Row(mech, count)

    def error(self, relation: Relation | None = None) -> str | None:
        """The validation message for this row (under ``relation``, if given), or None if it
        is valid."""
        problem = self.problem(relation)
        return None if problem is None else str(problem)

    def problem(self, relation: Relation | None = None) -> ValueError | None:
        """Why this row is invalid (under ``relation``, if given), or None. A ``NumberError``
        (validate.py) has the field it is about in ``field`` (a parameter name or ``count``);
        ``field`` is ``label`` for a label that is not text, ``sampling`` for a batch scheme the
        relation does not allow, and None when no one field is to blame."""
        try:
            row = self.to_row()
            if relation is not None:
                row.mechanism.check_relation(relation)
        except ValueError as exc:
            if not hasattr(exc, "field"):
                exc.field = None  # type: ignore[attr-defined]
            return exc
        if not isinstance(self.label, str):
            exc = ValueError("Label must be text")
            exc.field = "label"  # type: ignore[attr-defined]
            return exc
        return None

    def normalised(self) -> "RowSpec":
        """The same row with its list parameters as the tuples of floats the kind checks them to
        (a file's JSON lists, a form's parsed text), so that equal rows compare equal. Other values
        are kept as given; a value that is not valid is kept too (its message comes from
        ``problem``)."""
        cls = MECHANISM_KINDS.get(self.kind)
        if cls is None:
            return self
        params = dict(self.params)
        for name, spec in cls.param_specs().items():
            if isinstance(spec, (Vector, Points)) and name in params:
                try:
                    params[name] = spec.check(name, params[name])
                except ValueError:
                    pass
        return replace(self, params=params)

    @property
    def title(self) -> str:
        """The kind's name for people (the kind itself if it is unknown)."""
        return KIND_TITLES[self.kind] if self.kind in MECHANISM_KINDS else str(self.kind)

    def with_param(self, name: str, value: object) -> "RowSpec":
        p = dict(self.params)
        p[name] = value
        return replace(self, params=p)

    def with_kind(self, kind: str) -> "RowSpec":
        """Change the kind, keeping parameters that the new kind shares."""
        base = kind_class(kind).initial_params()
        for k, v in self.params.items():
            if k in base:
                base[k] = v
        return replace(self, kind=kind, params=base)


@dataclass(frozen=True)
class Targets:
    delta: float = 1e-5
    #: epsilon at which delta is reported (None: no delta query)
    epsilon: float | None = 1.0
    eps_error: float = 0.01


class Document:
    """A composition being edited: rows, neighbouring relation, targets and how it was tuned
    (``tuning``: a ``Tuning``, or None when it was run once)."""

    def __init__(self, rows: list[RowSpec] | None = None, neighbouring: str = "add_remove",
                 targets: Targets | None = None, group_size: int = 1, tuning: Tuning | None = None) -> None:
        self._rows: list[RowSpec] = list(rows or [])
        self.neighbouring = neighbouring
        self.group_size = group_size
        self._targets = targets or Targets()
        self._tuning = tuning
        self._listeners: list[Listener] = []

    # ------------------------------------------------------------ events
    def subscribe(self, fn: Listener) -> None:
        self._listeners.append(fn)

    def unsubscribe(self, fn: Listener) -> None:
        if fn in self._listeners:
            self._listeners.remove(fn)

    def _emit(self, what: str, arg: object = None) -> None:
        for fn in list(self._listeners):
            fn(what, arg)

    # ------------------------------------------------------------ access
    @property
    def rows(self) -> tuple[RowSpec, ...]:
        return tuple(self._rows)

    @property
    def targets(self) -> Targets:
        return self._targets

    @property
    def tuning(self) -> Tuning | None:
        return self._tuning

    def __len__(self) -> int:
        return len(self._rows)

    def row(self, i: int) -> RowSpec:
        return self._rows[i]

    @property
    def relation(self) -> Relation:
        return Relation(Neighbouring.parse(self.neighbouring), self.group_size)

    def relation_fix(self) -> Relation | None:
        """A relation under which every row that is valid on its own is valid (the one-click switch
        the window offers when a kind needs another relation, e.g. the shuffle model replace-one),
        or None when the current one is fine or no other would do. The group size is kept when it
        can be, else 1."""
        own = [r for r in self._rows if r.problem() is None]
        if all(r.problem(self.relation) is None for r in own):
            return None
        for neighbouring, group in (("replace_one", self.group_size), ("add_remove", self.group_size),
                                    ("replace_one", 1), ("add_remove", 1)):
            rel = Relation(Neighbouring.parse(neighbouring), group)
            if rel != self.relation and all(r.problem(rel) is None for r in own):
                return rel
        return None

    def errors(self) -> list[tuple[int, str]]:
        rel = self.relation
        return [(i, e) for i, r in enumerate(self._rows) if (e := r.error(rel)) is not None]

    def engine_rows(self) -> list[Row]:
        """Validated engine rows; raises ValueError naming the first bad row."""
        return _engine_rows(self._rows, self.relation)

    # ------------------------------------------------------------ edits
    def insert(self, i: int, row: RowSpec) -> None:
        if not 0 <= i <= len(self._rows):
            raise IndexError(f"row index {i} out of range")
        self._rows.insert(i, row)
        self._emit("insert", i)

    def remove(self, i: int) -> RowSpec:
        row = self._rows.pop(i)
        self._emit("remove", i)
        return row

    def replace(self, i: int, row: RowSpec) -> None:
        self._rows[i] = row
        self._emit("change", i)

    def move(self, i: int, j: int) -> None:
        if not (0 <= i < len(self._rows) and 0 <= j < len(self._rows)):
            raise IndexError(f"cannot move row {i} to {j}")
        row = self._rows.pop(i)
        self._rows.insert(j, row)
        self._emit("move", (i, j))

    def set_targets(self, targets: Targets) -> None:
        self._targets = targets
        self._emit("targets", None)

    def set_tuning(self, tuning: Tuning | None) -> None:
        """How the composition was tuned (None: run once)."""
        if tuning is not None and not isinstance(tuning, Tuning):
            raise ValueError(f"tuning must be a Tuning or None; got {tuning!r}")
        self._tuning = tuning
        self._emit("tuning", None)

    def set_relation(self, neighbouring: str, group_size: int) -> None:
        """Change the neighbouring relation and group size (checked first)."""
        Relation(Neighbouring.parse(neighbouring), check_group_size(group_size))
        self.neighbouring, self.group_size = neighbouring, int(group_size)
        self._emit("relation", None)

    def reset(self, rows: list[RowSpec], neighbouring: str, targets: Targets,
              group_size: int = 1, tuning: Tuning | None = None) -> None:
        self._rows = list(rows)
        self.neighbouring = neighbouring
        self.group_size = group_size
        self._targets = targets
        self._tuning = tuning
        self._emit("reset", None)


def _engine_rows(rows, relation: Relation | None = None) -> list[Row]:
    out = []
    for i, r in enumerate(rows):
        try:
            row = r.to_row()
            if relation is not None:
                row.mechanism.check_relation(relation)
            out.append(row)
        except ValueError as exc:
            raise ValueError(f"row {i + 1} ({r.label or r.title}): {exc}") from None
    return out
