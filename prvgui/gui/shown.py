"""What the window shows: the latest answer and the document it answers (a snapshot taken when
it was asked). ComputeView sets it; the pin (compare.py), report export and plot exports read
it. A small object handed to each of them, so that none needs the window."""
from __future__ import annotations

from PySide6.QtCore import QObject, Signal


class Shown(QObject):
    """``result`` (an engine Result, or None) and ``doc`` (the Document snapshot it answers)."""

    #: emitted after every change, with the new result (or None)
    changed = Signal(object)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.result = None
        self.doc = None

    def set(self, result, doc) -> None:
        self.result, self.doc = result, doc
        self.changed.emit(result)
