"""The composition file format (JSON, version 2; version 1 files load unchanged) and CSV
export. No Qt.

    {"format": "prvgui.composition", "version": 2,
     "neighbouring": "add_remove" | "replace_one",                       (optional)
     "group_size": 1,                   (optional: records one person may contribute)
     "targets": {"delta": 1e-5, "epsilon": 1.0, "eps_error": 0.01},      (optional)
     "mechanisms": [{"kind": "subsampled_gaussian", "sigma": 0.8, "sampling_rate": 0.01,
                     "sampling": "poisson" | "fixed_size",               (optional)
                     "count": 10000, "label": "training"},
                    {"kind": "pmf_pair", "p": [0.75, 0.25], "q": [0.25, 0.75], "symmetric": "no"},
                    {"kind": "privacy_profile", "points": [[0.5, 1e-3], [1.0, 1e-5]]}]}

List parameters (``p``, ``q``, ``points``) are JSON lists (of numbers, or of [epsilon, delta]
pairs); they exist in version 2 files only, with the kinds that have them.

Version 1 had neither ``group_size``, ``sampling`` nor ``replace_one`` (nor the kinds added
since); a version 1 file means add/remove, groups of one, Poisson sampling.

Files are untrusted: the loader parses plain JSON only (NaN, Infinity and
duplicate keys are rejected), checks every field and reports the first problem
as ``FileFormatError`` naming the row, the file's key and the field's label, e.g.
``row 3 (Gaussian), sigma: Noise σ must be at least 0; the file has -1``. Numbers too
large for a float (``1e400``) are kept as their text, so that the message shows them as
written. Saves are atomic: the
text goes to a temporary file in the same folder, is flushed to disk, and then
renamed over the target.
"""
from __future__ import annotations

import json
import math
import os
import stat
import tempfile
from typing import Iterable, Sequence

import numpy as np

from ..accounting.core.values import Relation, check_group_size
from ..accounting.mechanisms import MECHANISM_KINDS
from ..accounting.core.validate import (DELTA_LABEL, EPS_ERROR_LABEL, EPS_ERROR_RANGE, IN_FILE, NumberError,
                                   check_number, given)
from .model import KIND_TITLES, Composition, Document, RowSpec, Targets, check_count, param_names

FORMAT = "prvgui.composition"
VERSION = 2
#: the versions this prvgui reads
VERSIONS = (1, 2)
MAX_BYTES = 10 * 1024 * 1024
MAX_ROWS = 10_000
TOP_KEYS = {"format", "version", "neighbouring", "group_size", "mechanisms", "targets"}
ROW_KEYS = {"kind", "count", "label"}


class FileFormatError(ValueError):
    """A composition file that cannot be read; the message names the place."""


def _reject_constant(name: str) -> float:
    raise FileFormatError(f"{name} is not allowed in a composition file (numbers must be finite)")


def _float_or_text(text: str) -> float | str:
    """A JSON number as a float, or as its text when a float cannot hold it (1e400)."""
    v = float(text)
    return v if math.isfinite(v) else text


def _no_duplicates(pairs: list[tuple[str, object]]) -> dict:
    out: dict = {}
    for k, v in pairs:
        if k in out:
            raise FileFormatError(f"duplicate key {k!r}")
        out[k] = v
    return out


def loads(text: str) -> Document:
    """Parse a composition from JSON text, as a document to edit."""
    return loads_composition(text).document()


def loads_composition(text: str) -> Composition:
    """Parse a composition from JSON text."""
    if len(text) > MAX_BYTES:
        raise FileFormatError(f"file is larger than {MAX_BYTES} bytes")
    try:
        data = json.loads(text, parse_constant=_reject_constant, object_pairs_hook=_no_duplicates,
                          parse_float=_float_or_text)
    except FileFormatError:
        raise
    except RecursionError:
        raise FileFormatError("file is nested too deeply to be a composition") from None
    except ValueError as exc:
        raise FileFormatError(f"not valid JSON: {exc}") from None
    return composition_from_dict(data)


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
    return Composition(tuple(rows), neighbouring, targets, relation.group_size)


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
        m.update(r.params)
        m["count"] = r.count
        if r.label:
            m["label"] = r.label
        mechs.append(m)
    t = doc.targets
    return {"format": FORMAT, "version": VERSION, "neighbouring": doc.neighbouring,
            "group_size": doc.group_size,
            "targets": {"delta": t.delta, "epsilon": t.epsilon, "eps_error": t.eps_error},
            "mechanisms": mechs}


def dumps(doc: Document) -> str:
    return json.dumps(to_dict(doc), indent=2, allow_nan=False) + "\n"


def load(path: str | os.PathLike) -> Document:
    """Read a composition file, as a document to edit."""
    return load_composition(path).document()


def load_composition(path: str | os.PathLike) -> Composition:
    """Read a composition file."""
    return loads_composition(read_text(path))


def read_text(path: str | os.PathLike) -> str:
    """An untrusted text file (at most MAX_BYTES, UTF-8 with or without a BOM), or a
    FileFormatError that says what is wrong with it."""
    try:
        size = os.path.getsize(path)
        if size > MAX_BYTES:
            raise FileFormatError(f"file is larger than {MAX_BYTES} bytes")
        with open(path, "rb") as f:
            raw = f.read(MAX_BYTES + 1)
    except OSError as exc:
        raise FileFormatError(f"cannot read {os.fspath(path)}: {exc.strerror or exc}") from None
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise FileFormatError("file is not UTF-8 text") from None


def _umask() -> int:
    """The process umask, read without changing it where the system allows (Linux /proc)."""
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8) & 0o777
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)  # elsewhere: read it by setting it, and put it straight back
    os.umask(mask)
    return mask


def _final_mode(path: str) -> int:
    """The mode the written file should have: an existing file's own permission bits, else what
    creating it normally would give (0666 masked by the umask; mkstemp alone would give 0600)."""
    try:
        st = os.stat(path)
    except OSError:
        st = None
    if st is not None and stat.S_ISREG(st.st_mode):
        return stat.S_IMODE(st.st_mode)
    return 0o666 & ~_umask()


def atomic_write(path: str | os.PathLike, data: str | bytes) -> None:
    """Write to a temporary file in the target's folder, fsync, then rename over the target.

    The file ends up with the permissions a plain ``open(path, "w")`` would leave: an existing
    file keeps its mode, a new one gets 0666 masked by the umask."""
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    mode = _final_mode(path)
    fd, tmp = tempfile.mkstemp(prefix=".prvgui-", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as f:
            if hasattr(os, "fchmod"):
                os.fchmod(f.fileno(), mode)
            f.write(data.encode("utf-8") if isinstance(data, str) else data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def save(doc: Document, path: str | os.PathLike) -> None:
    atomic_write(path, dumps(doc))


def composition_comments(doc: Document | None, extra: Iterable[str] = ()) -> list[str]:
    """Comment lines describing the inputs of an exported curve."""
    lines = ["prvgui export"]
    if doc is not None:
        lines.append("composition: " + json.dumps(to_dict(doc), allow_nan=False))
    lines.extend(extra)
    return lines


def curve_csv(header: Sequence[str], columns: Sequence[np.ndarray], comments: Iterable[str]) -> str:
    """CSV text: '# ' comment lines, one header row, then the columns (repr precision)."""
    cols = [np.asarray(c, dtype=float) for c in columns]
    if len(cols) != len(header) or len({c.size for c in cols}) > 1:
        raise ValueError("header and columns do not match")
    out = [f"# {line}" for line in comments]
    out.append(",".join(header))
    for row in zip(*cols):
        out.append(",".join(_fmt(v) for v in row))
    return "\n".join(out) + "\n"


def _fmt(v: float) -> str:
    if math.isnan(v):
        return ""
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return repr(float(v))


def write_curve_csv(path: str | os.PathLike, header: Sequence[str], columns: Sequence[np.ndarray],
                    comments: Iterable[str]) -> None:
    atomic_write(path, curve_csv(header, columns, comments))
