"""Writing a report file: the format from the file name's extension (.html, .htm, .pdf, .md or
.json),
checked before any work starts, and an atomic write (a temporary file in the same folder, then a
rename), so that a failed report leaves nothing half-written.

The PDF writer (pdf.py, Qt) is imported only when a PDF is asked for.
"""
from __future__ import annotations

import os

from ..document.fileio import atomic_write, check_target
from . import html
from .model import Report

FORMATS = {".html": "html", ".htm": "html", ".pdf": "pdf", ".md": "markdown", ".json": "json"}


def report_format(path: str | os.PathLike, name: str = "The report file") -> str:
    """'html', 'pdf', 'markdown' or 'json' from the extension, else a ValueError naming the path."""
    ext = os.path.splitext(os.fspath(path))[1].lower()
    if ext not in FORMATS:
        raise ValueError(f"{name} must end in .html, .pdf, .md or .json; you typed \"{os.fspath(path)}\"")
    return FORMATS[ext]


def report_bytes(report: Report, fmt: str) -> bytes:
    if fmt == "pdf":
        from .pdf import pdf_bytes  # Qt, only for a PDF
        return pdf_bytes(report)
    if fmt in ("markdown", "json"):
        from .markdown import render_json, render_markdown
        return (render_markdown if fmt == "markdown" else render_json)(report).encode("utf-8")
    return html.render(report).encode("utf-8")


def write_report(path: str | os.PathLike, report: Report) -> str:
    """Write ``report`` to ``path`` in the format its extension names; returns the format."""
    fmt = report_format(path)
    check_target(path)
    data = report_bytes(report, fmt)
    atomic_write(path, data)  # (a WriteError names the path and why)
    return fmt
