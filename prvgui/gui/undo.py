"""Undo/redo: every edit of the document is a QUndoCommand pushed through ``Editor``.

The commands only call the document's own mutation methods (insert, remove, replace, move,
set_targets), so the document stays the single source of truth and its events drive the
views. Consecutive edits of one field (typing ``1``, ``1.``, ``1.5``) merge into one step
when they carry the same ``merge_key``.
"""
from __future__ import annotations

from PySide6.QtGui import QUndoCommand, QUndoStack

from ..document.model import Document, RowSpec, Targets

_MERGE_ID = 0x70726


class _Command(QUndoCommand):
    def __init__(self, doc: Document, text: str, merge_key: object = None) -> None:
        super().__init__(text)
        self.doc = doc
        self.merge_key = merge_key

    def id(self) -> int:  # noqa: A003 - Qt override
        return _MERGE_ID if self.merge_key is not None else -1


class ReplaceRow(_Command):
    def __init__(self, doc: Document, i: int, new: RowSpec, text: str, merge_key: object = None) -> None:
        super().__init__(doc, text, merge_key)
        self.i, self.old, self.new = i, doc.row(i), new

    def redo(self) -> None:
        self.doc.replace(self.i, self.new)

    def undo(self) -> None:
        self.doc.replace(self.i, self.old)

    def mergeWith(self, other: QUndoCommand) -> bool:
        if not isinstance(other, ReplaceRow) or other.merge_key != self.merge_key or other.i != self.i:
            return False
        self.new = other.new
        return True


class InsertRow(_Command):
    def __init__(self, doc: Document, i: int, row: RowSpec, text: str) -> None:
        super().__init__(doc, text)
        self.i, self.row = i, row

    def redo(self) -> None:
        self.doc.insert(self.i, self.row)

    def undo(self) -> None:
        self.doc.remove(self.i)


class RemoveRow(_Command):
    def __init__(self, doc: Document, i: int, text: str) -> None:
        super().__init__(doc, text)
        self.i, self.row = i, doc.row(i)

    def redo(self) -> None:
        self.doc.remove(self.i)

    def undo(self) -> None:
        self.doc.insert(self.i, self.row)


class MoveRow(_Command):
    def __init__(self, doc: Document, i: int, j: int, text: str) -> None:
        super().__init__(doc, text)
        self.i, self.j = i, j

    def redo(self) -> None:
        self.doc.move(self.i, self.j)

    def undo(self) -> None:
        self.doc.move(self.j, self.i)


class SetTargets(_Command):
    def __init__(self, doc: Document, new: Targets, text: str, merge_key: object = None) -> None:
        super().__init__(doc, text, merge_key)
        self.old, self.new = doc.targets, new

    def redo(self) -> None:
        self.doc.set_targets(self.new)

    def undo(self) -> None:
        self.doc.set_targets(self.old)

    def mergeWith(self, other: QUndoCommand) -> bool:
        if not isinstance(other, SetTargets) or other.merge_key != self.merge_key:
            return False
        self.new = other.new
        return True


class Editor:
    """The one way the GUI changes the document: each call pushes an undoable command."""

    def __init__(self, doc: Document, stack: QUndoStack) -> None:
        self.doc = doc
        self.stack = stack

    def replace(self, i: int, row: RowSpec, text: str = "Edit row", merge_key: object = None) -> bool:
        if not 0 <= i < len(self.doc) or self.doc.row(i) == row:
            return False
        self.stack.push(ReplaceRow(self.doc, i, row, f"{text} {i + 1}", merge_key))
        return True

    def insert(self, i: int, row: RowSpec, text: str = "Add row") -> bool:
        if not 0 <= i <= len(self.doc):
            return False
        self.stack.push(InsertRow(self.doc, i, row, text))
        return True

    def remove(self, i: int) -> bool:
        if not 0 <= i < len(self.doc):
            return False
        self.stack.push(RemoveRow(self.doc, i, f"Delete row {i + 1}"))
        return True

    def move(self, i: int, j: int) -> bool:
        n = len(self.doc)
        if i == j or not (0 <= i < n and 0 <= j < n):
            return False
        self.stack.push(MoveRow(self.doc, i, j, f"Move row {i + 1}"))
        return True

    def set_targets(self, targets: Targets, merge_key: object = None) -> bool:
        if targets == self.doc.targets:
            return False
        self.stack.push(SetTargets(self.doc, targets, "Change targets", merge_key))
        return True
