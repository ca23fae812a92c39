"""What the command line's modules share (cli.py and its subcommand modules, which cli.py imports)."""
from __future__ import annotations

import math
import os


def number(text: str) -> float | str:
    """A finite number as a float; anything else stays text, for the option's own check to
    reject with a message that names it (``--delta must be ...; you typed 1e400``)."""
    try:
        v = float(text)
    except ValueError:
        return text
    return v if math.isfinite(v) else text


def named(path, exc: Exception) -> ValueError:
    """``exc`` as a ValueError whose message names the file (``FILE: what is wrong``), unless it
    names it already (``cannot read FILE: ...``)."""
    msg, name = str(exc), os.fspath(path)
    return ValueError(msg if name in msg else f"{name}: {msg}")


def load(path):
    """The composition file at ``path``; what is wrong with it names the file."""
    from . import api
    from .document.fileio import FileFormatError
    try:
        return api.load(path)
    except FileFormatError as exc:
        raise named(path, exc) from None


def read(path) -> str:
    """The text file at ``path`` (fileio.read_text); what is wrong with it names the file."""
    from .document.fileio import FileFormatError, read_text
    try:
        return read_text(path)
    except FileFormatError as exc:
        raise named(path, exc) from None
