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

Version 4 adds an optional ``"tuning": {"runs": "fixed" | "poisson" | "truncated_negative_binomial",
"mean": 10, "eta": 1}`` (how the composition was tuned; ``eta`` for the truncated negative
binomial only); a file is written with the smallest version that holds its content.

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

import errno
import json
import math
import os
import stat
import tempfile
from typing import Iterable, Sequence

import numpy as np

# (the file format's object, re-exported: fileio is where callers look for the format)
from .composition import (FORMAT, MAX_ROWS, VERSION, VERSIONS, Composition, FileFormatError,  # noqa: F401
                          composition_from_dict, from_dict, to_dict)
from .model import Document

MAX_BYTES = 10 * 1024 * 1024


def _reject_constant(name: str) -> float:
    raise FileFormatError(f"{name} is not allowed in a composition file (numbers must be finite)")


def _float_or_text(text: str) -> float | str:
    """A JSON number as a float, or as its text when a float cannot hold it (1e400)."""
    v = float(text)
    return v if math.isfinite(v) else text


def no_duplicates(pairs: list[tuple[str, object]]) -> dict:
    """A JSON object's pairs as a dict, refusing a key given twice (json.loads' object_pairs_hook)."""
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
        data = json.loads(text, parse_constant=_reject_constant, object_pairs_hook=no_duplicates,
                          parse_float=_float_or_text)
    except FileFormatError:
        raise
    except RecursionError:
        raise FileFormatError("file is nested too deeply to be a composition") from None
    except ValueError as exc:
        raise FileFormatError(f"not valid JSON: {exc}") from None
    return composition_from_dict(data)


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


class WriteError(OSError):
    """A file that cannot be written, in words: ``strerror`` says why (a dialog shows it beside
    the path), ``str`` names the path too (what a command line prints)."""

    def __init__(self, path: str, why: str, code: int = 0) -> None:
        super().__init__(code, why, path)

    def __str__(self) -> str:
        return f"cannot write {self.filename}: {self.strerror}"


def check_target(path: str | os.PathLike) -> None:
    """A WriteError (naming the path and why) if a file cannot be written at ``path``: checked
    before the work whose result it is to hold, and again by atomic_write."""
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise WriteError(path, "it is a folder, not a file name", errno.EISDIR)
    if not os.path.isdir(folder):
        raise WriteError(path, f"the folder {folder} does not exist", errno.ENOENT)
    if not os.access(folder, os.W_OK | os.X_OK):
        raise WriteError(path, f"the folder {folder} is not writable", errno.EACCES)


def atomic_write(path: str | os.PathLike, data: str | bytes) -> None:
    """Write to a temporary file in the target's folder, fsync, then rename over the target.
    A target that cannot be written raises WriteError; nothing is left behind.

    The file ends up with the permissions a plain ``open(path, "w")`` would leave: an existing
    file keeps its mode, a new one gets 0666 masked by the umask."""
    path = os.fspath(path)
    check_target(path)
    folder = os.path.dirname(os.path.abspath(path))
    mode = _final_mode(path)
    try:
        fd, tmp = tempfile.mkstemp(prefix=".prvgui-", suffix=".tmp", dir=folder)
    except OSError as exc:
        raise WriteError(path, exc.strerror or str(exc), exc.errno or 0) from None
    try:
        with os.fdopen(fd, "wb") as f:
            if hasattr(os, "fchmod"):
                os.fchmod(f.fileno(), mode)
            f.write(data.encode("utf-8") if isinstance(data, str) else data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(exc, OSError) and not isinstance(exc, WriteError):
            raise WriteError(path, exc.strerror or str(exc), exc.errno or 0) from None
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
