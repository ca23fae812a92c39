"""A composition as a value (``Composition``: what a file holds) and the file format's JSON object
for it, both ways (``composition_from_dict``, ``to_dict``): every field of an untrusted object
checked, the first problem reported as ``FileFormatError`` naming the row, the key and the
field's label. The format itself, and reading and writing files, are fileio.py. No Qt."""
from __future__ import annotations

from dataclasses import dataclass, field

from ..accounting.core.validate import (DELTA_LABEL, EPS_ERROR_LABEL, EPS_ERROR_RANGE, IN_FILE, NumberError,
                                        check_number, given)
from ..accounting.core.values import Neighbouring, Relation, Row, check_group_size
from ..accounting.mechanisms import MECHANISM_KINDS
from ..accounting.queries.selection import Tuning
from .model import KIND_TITLES, Document, RowSpec, Targets, _engine_rows, check_count, param_names

FORMAT = "prvgui.composition"
VERSION = 4
#: the versions this prvgui reads
VERSIONS = (1, 2, 3, 4)
#: the oldest version a file is written as: a file is written with the smallest version that holds
#: every kind in it (``Mechanism.since_version``), so that a composition of older kinds stays
#: readable by the prvgui that made its kinds
WRITTEN_FROM = 2
#: the first version that holds ``tuning`` (how the composition was tuned)
TUNING_SINCE = 4
MAX_ROWS = 10_000
TOP_KEYS = {"format", "version", "neighbouring", "group_size", "mechanisms", "targets", "tuning"}
ROW_KEYS = {"kind", "count", "label"}


class FileFormatError(ValueError):
    """A composition file that cannot be read; the message names the place."""



@dataclass(frozen=True)
class Composition:
    """A composition as a value: what a file holds (rows, neighbouring relation, targets).
    ``Document`` is the same thing being edited."""

    rows: tuple[RowSpec, ...] = ()
    neighbouring: str = "add_remove"
    targets: Targets = field(default_factory=Targets)
    #: records one protected person may contribute (group / user-level privacy)
    group_size: int = 1
    #: how the composition was tuned (the best of several runs is released); None: run once
    tuning: Tuning | None = None

    @property
    def relation(self) -> Relation:
        return Relation(Neighbouring.parse(self.neighbouring), self.group_size)

    @classmethod
    def from_dict(cls, data: object) -> "Composition":
        """From the file format's JSON object (untrusted: every field is checked, the message
        names it). ``format`` and ``version`` may be left out: the current version is meant."""
        if isinstance(data, dict) and "format" not in data and "version" not in data:
            data = {"format": FORMAT, "version": VERSION, **data}
        return composition_from_dict(data)

    def to_dict(self) -> dict:
        """The file format's JSON object."""
        return to_dict(self)

    @classmethod
    def of(cls, doc: Document) -> "Composition":
        return cls(doc.rows, doc.neighbouring, doc.targets, doc.group_size, doc.tuning)

    def document(self) -> Document:
        """A document to edit, holding this composition."""
        return Document(list(self.rows), self.neighbouring, self.targets, self.group_size, self.tuning)

    def engine_rows(self) -> list[Row]:
        """Validated engine rows (each with a pair under the composition's relation); raises
        ValueError naming the first bad row."""
        return _engine_rows(self.rows, self.relation)


def from_dict(data: object) -> Document:
    """A document holding the composition of a file format JSON object (checked)."""
    return composition_from_dict(data).document()


def composition_from_dict(data: object) -> Composition:
    if not isinstance(data, dict):
        raise FileFormatError(f"a composition file must hold one JSON object; this one holds "
                              f"{_json_type(data)}")
    unknown = sorted(set(data) - TOP_KEYS)
    if unknown:
        raise FileFormatError(f"{unknown[0]}: not a field of a composition file (its fields: "
                              f"{', '.join(sorted(TOP_KEYS))})")
    if data.get("format") != FORMAT:
        what = "it is missing" if "format" not in data else given(data.get("format"), IN_FILE)
        raise FileFormatError(f'format: must be "{FORMAT}" (is this a prvgui composition file?); {what}')
    version = data.get("version")
    if isinstance(version, bool) or not isinstance(version, int):
        what = "it is missing" if "version" not in data else given(version, IN_FILE)
        raise FileFormatError(f"version: must be a whole number; {what}")
    if version not in VERSIONS:
        raise FileFormatError(f"version {version} is not supported (this prvgui reads versions "
                              f"{', '.join(map(str, VERSIONS))})")
    neighbouring = data.get("neighbouring", "add_remove")
    allowed = ("add_remove", "replace_one") if version >= 2 else ("add_remove",)
    if neighbouring not in allowed:
        words = " or ".join(f'"{a}"' for a in allowed)
        raise FileFormatError(f"neighbouring: must be {words}"
                              + (" (add or remove one record) in a version 1 file" if version == 1 else
                                 " (add or remove one record, or replace one)")
                              + f"; {given(neighbouring, IN_FILE)}")
    if version == 1 and "group_size" in data:
        raise FileFormatError("group_size: not part of version 1 files (version 2 has it)")
    try:
        relation = Relation(neighbouring, check_group_size(data.get("group_size", 1)))
    except NumberError as exc:
        raise FileFormatError(f"group_size: {exc.message(IN_FILE)}") from None
    mechs = data.get("mechanisms")
    if not isinstance(mechs, list):
        what = "it is missing" if "mechanisms" not in data else f"the file has {_json_type(mechs)}"
        raise FileFormatError(f"mechanisms: must be a list of rows; {what}")
    if len(mechs) > MAX_ROWS:
        raise FileFormatError(f"mechanisms: the file has {len(mechs)} rows; at most {MAX_ROWS} can be read")
    rows = [_row(i, m, version) for i, m in enumerate(mechs)]
    for i, r in enumerate(rows):  # each row must have a pair under the file's relation
        problem = r.problem(relation)
        if problem is not None:
            field = getattr(problem, "field", None) or "kind"
            raise FileFormatError(f"row {i + 1} ({r.title}), {field}: {problem}")
    targets = _targets(data.get("targets", {}))
    tuning = None
    if "tuning" in data:
        if version < TUNING_SINCE:
            raise FileFormatError(f"tuning: not part of version {version} files (version {TUNING_SINCE} has it)")
        try:
            tuning = Tuning.from_dict(data["tuning"])
        except ValueError as exc:
            raise FileFormatError(str(exc).replace("; got ", "; the file has ", 1)) from None
    return Composition(tuple(rows), neighbouring, targets, relation.group_size, tuning)


#: what version 1 files could not hold

V2_FIELDS = {"sampling"}


def _row(i: int, m: object, version: int = VERSION) -> RowSpec:
    where = f"row {i + 1}"
    if not isinstance(m, dict):
        raise FileFormatError(f"{where} of mechanisms must be an object; the file has {_json_type(m)}")
    kind = m.get("kind")
    if not isinstance(kind, str) or kind not in MECHANISM_KINDS:
        what = "it is missing" if "kind" not in m else given(kind, IN_FILE)
        raise FileFormatError(f"{where}, kind: the mechanism must be one of "
                              f"{', '.join(sorted(MECHANISM_KINDS))}; {what}")
    if version < MECHANISM_KINDS[kind].since_version:
        raise FileFormatError(f"{where}, kind: {kind!r} is not part of version {version} files (version {MECHANISM_KINDS[kind].since_version} has it)")
    where = f"{where} ({KIND_TITLES[kind]})"
    allowed = ROW_KEYS | set(param_names(kind)) - (V2_FIELDS if version == 1 else set())
    unknown = sorted(set(m) - allowed)
    if unknown and unknown[0] in V2_FIELDS:
        raise FileFormatError(f"{where}, {unknown[0]}: not part of version 1 files (version 2 has it)")
    if unknown:
        raise FileFormatError(f"{where}, {unknown[0]}: not a field of this mechanism (its fields: "
                              f"{', '.join(['kind', *param_names(kind), 'count', 'label'])})")
    label = m.get("label", "")
    if not isinstance(label, str) or len(label) > 200:
        raise FileFormatError(f"{where}, label: the label must be text of at most 200 characters")
    try:
        count = check_count(m.get("count", 1))
    except NumberError as exc:
        raise FileFormatError(f"{where}, count: {exc.message(IN_FILE)}") from None
    params = {k: v for k, v in m.items() if k not in ROW_KEYS}
    spec = RowSpec(kind, params, count, label)
    problem = spec.problem()
    if problem is not None:
        text = problem.message(IN_FILE) if isinstance(problem, NumberError) else str(problem)
        field = getattr(problem, "field", None)
        raise FileFormatError(f"{where}, {field}: {text}" if field else f"{where}: {text}")
    return spec.normalised()


def _json_type(v: object) -> str:
    return {dict: "an object", list: "a list", str: "text", bool: "true or false",
            type(None): "null"}.get(type(v), "a number")


def _number(field: str, label: str, v: object, lo: float, hi: float, lo_open: bool = False,
            hi_open: bool = False) -> float:
    try:
        return check_number(label, v, lo, hi, lo_open, hi_open, field=field)
    except NumberError as exc:
        raise FileFormatError(f"targets, {field}: {exc.message(IN_FILE)}") from None


def _targets(t: object) -> Targets:
    if not isinstance(t, dict):
        raise FileFormatError(f"targets must be an object; the file has {_json_type(t)}")
    unknown = sorted(set(t) - {"delta", "epsilon", "eps_error"})
    if unknown:
        raise FileFormatError(f"targets, {unknown[0]}: not a target (the targets are delta, epsilon "
                              "and eps_error)")
    d = Targets()
    delta = _number("delta", DELTA_LABEL, t.get("delta", d.delta), 0.0, 1.0, lo_open=True, hi_open=True)
    eps = t.get("epsilon", d.epsilon)
    eps = None if eps is None else _number("epsilon", "Report δ at ε", eps, 0.0, 1e6)
    err = _number("eps_error", EPS_ERROR_LABEL, t.get("eps_error", d.eps_error), *EPS_ERROR_RANGE)
    return Targets(delta, eps, err)


def to_dict(doc: Document | Composition) -> dict:
    mechs = []
    for r in doc.rows:
        m: dict[str, object] = {"kind": r.kind}
        specs = MECHANISM_KINDS[r.kind].param_specs() if r.kind in MECHANISM_KINDS else {}
        m.update({k: specs[k].to_file(v) if k in specs else v for k, v in r.params.items()})
        m["count"] = r.count
        if r.label:
            m["label"] = r.label
        mechs.append(m)
    t = doc.targets
    tuning = getattr(doc, "tuning", None)
    version = max([WRITTEN_FROM] + [MECHANISM_KINDS[r.kind].since_version for r in doc.rows]
                  + ([TUNING_SINCE] if tuning is not None else []))
    out = {"format": FORMAT, "version": version, "neighbouring": doc.neighbouring,
           "group_size": doc.group_size,
           "targets": {"delta": t.delta, "epsilon": t.epsilon, "eps_error": t.eps_error},
           "mechanisms": mechs}
    if tuning is not None:
        out["tuning"] = tuning.as_dict()
    return out
