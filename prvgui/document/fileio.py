"""The composition file format (JSON, version 2; version 1 files load unchanged) and CSV
export. No Qt.

    {"format": "prvgui.composition", "version": 2,
     "neighbouring": "add_remove" | "replace_one",                       (optional)
     "group_size": 1,                   (optional: records one person may contribute)
     "targets": {"delta": 1e-5, "epsilon": 1.0, "eps_error": 0.01},      (optional)
     "mechanisms": [{"kind": "subsampled_gaussian", "sigma": 0.8, "sampling_rate": 0.01,
                     "sampling": "poisson" | "fixed_size",               (optional)
                     "count": 10000, "label": "training"}]}

Version 1 had neither ``group_size``, ``sampling`` nor ``replace_one`` (nor the kinds added
since); a version 1 file means add/remove, groups of one, Poisson sampling.

Files are untrusted: the loader parses plain JSON only (NaN, Infinity and
duplicate keys are rejected), checks every field and reports the first problem
as ``FileFormatError`` naming the row and the field, e.g.
``mechanisms[2].sigma: sigma must be >= 0, got -1``. Saves are atomic: the
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

from ..accounting.kinds.base import Relation, check_group_size
from ..accounting.mechanisms import MECHANISM_KINDS
from ..accounting.validate import check_number
from .model import Composition, Document, RowSpec, Targets, check_count, param_names

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
        data = json.loads(text, parse_constant=_reject_constant, object_pairs_hook=_no_duplicates)
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
        raise FileFormatError("top level must be a JSON object")
    unknown = sorted(set(data) - TOP_KEYS)
    if unknown:
        raise FileFormatError(f"unknown top-level field {unknown[0]!r}")
    if data.get("format") != FORMAT:
        raise FileFormatError(f"format must be {FORMAT!r}, got {data.get('format')!r}")
    version = data.get("version")
    if isinstance(version, bool) or not isinstance(version, int):
        raise FileFormatError(f"version must be an integer, got {version!r}")
    if version not in VERSIONS:
        raise FileFormatError(f"version {version} is not supported (this prvgui reads versions "
                              f"{', '.join(map(str, VERSIONS))})")
    neighbouring = data.get("neighbouring", "add_remove")
    allowed = ("add_remove", "replace_one") if version >= 2 else ("add_remove",)
    if neighbouring not in allowed:
        raise FileFormatError(f"neighbouring must be {' or '.join(repr(a) for a in allowed)}"
                              f"{' in a version 1 file' if version == 1 else ''}, got {neighbouring!r}")
    if version == 1 and "group_size" in data:
        raise FileFormatError("group_size: not part of version 1 files (save as version 2)")
    try:
        relation = Relation(neighbouring, check_group_size(data.get("group_size", 1)))
    except ValueError as exc:
        raise FileFormatError(f"group_size: {exc}") from None
    mechs = data.get("mechanisms")
    if not isinstance(mechs, list):
        raise FileFormatError(f"mechanisms must be a list, got {type(mechs).__name__}")
    if len(mechs) > MAX_ROWS:
        raise FileFormatError(f"mechanisms has {len(mechs)} rows (limit {MAX_ROWS})")
    rows = [_row(i, m, version) for i, m in enumerate(mechs)]
    for i, r in enumerate(rows):
        err = r.error(relation)
        if err is not None:
            field = "sampling" if "sampling" in err else "kind"
            raise FileFormatError(f"mechanisms[{i}].{field}: {err}")
    targets = _targets(data.get("targets", {}))
    return Composition(tuple(rows), neighbouring, targets, relation.group_size)


#: what version 1 files could not hold
V2_KINDS = {"shuffled_gaussian", "exponential_mechanism", "zcdp"}
V2_FIELDS = {"sampling"}


def _row(i: int, m: object, version: int = VERSION) -> RowSpec:
    where = f"mechanisms[{i}]"
    if not isinstance(m, dict):
        raise FileFormatError(f"{where}: must be an object, got {type(m).__name__}")
    kind = m.get("kind")
    if not isinstance(kind, str) or kind not in MECHANISM_KINDS:
        raise FileFormatError(f"{where}.kind: must be one of {', '.join(sorted(MECHANISM_KINDS))}, "
                              f"got {kind!r}")
    if version == 1 and kind in V2_KINDS:
        raise FileFormatError(f"{where}.kind: {kind!r} is not part of version 1 files (save as version 2)")
    allowed = ROW_KEYS | set(param_names(kind)) - (V2_FIELDS if version == 1 else set())
    unknown = sorted(set(m) - allowed)
    if unknown:
        raise FileFormatError(f"{where}.{unknown[0]}: unknown field for kind {kind!r}")
    label = m.get("label", "")
    if not isinstance(label, str) or len(label) > 200:
        raise FileFormatError(f"{where}.label: must be text of at most 200 characters")
    try:
        count = check_count(m.get("count", 1))
    except ValueError as exc:
        raise FileFormatError(f"{where}.count: {exc}") from None
    params = {k: v for k, v in m.items() if k not in ROW_KEYS}
    spec = RowSpec(kind, params, count, label)
    err = spec.error()
    if err is not None:
        field = next((p for p in param_names(kind) if err.startswith(p + " ")
                      or f"parameter {p!r}" in err), "parameters")
        raise FileFormatError(f"{where}.{field}: {err}")
    return spec


def _number(where: str, v: object, lo: float, hi: float, lo_open: bool = False) -> float:
    field = where.rsplit(".", 1)[-1]
    try:
        return check_number(field, v, lo, hi, lo_open)
    except ValueError as exc:
        raise FileFormatError(f"{where}: {exc}") from None


def _targets(t: object) -> Targets:
    if not isinstance(t, dict):
        raise FileFormatError("targets: must be an object")
    unknown = sorted(set(t) - {"delta", "epsilon", "eps_error"})
    if unknown:
        raise FileFormatError(f"targets.{unknown[0]}: unknown field")
    d = Targets()
    delta = _number("targets.delta", t.get("delta", d.delta), 0.0, 1.0, lo_open=True)
    if delta >= 1:
        raise FileFormatError(f"targets.delta: must be below 1, got {delta!r}")
    eps = t.get("epsilon", d.epsilon)
    eps = None if eps is None else _number("targets.epsilon", eps, 0.0, 1e6)
    err = _number("targets.eps_error", t.get("eps_error", d.eps_error), 1e-6, 10.0)
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
    try:
        size = os.path.getsize(path)
        if size > MAX_BYTES:
            raise FileFormatError(f"file is larger than {MAX_BYTES} bytes")
        with open(path, "rb") as f:
            raw = f.read(MAX_BYTES + 1)
    except OSError as exc:
        raise FileFormatError(f"cannot read {os.fspath(path)}: {exc.strerror or exc}") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise FileFormatError("file is not UTF-8 text") from None
    return loads_composition(text)


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
