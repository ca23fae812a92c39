"""Undo/redo: every edit of the document is a QUndoCommand pushed through ``Editor``.

The commands only call the document's own mutation methods (insert, remove, replace, move,
set_targets, set_relation, set_tuning), so the document stays the single source of truth and its events drive the
views. Consecutive edits of one field (typing ``1``, ``1.``, ``1.5``) merge into one step
when they carry the same ``merge_key``.

There is one history: ``UndoKeys`` routes the undo and redo keys (and the context menu's Undo and
Redo) of the text fields that edit the document to the stack, so a field never undoes its own
keystrokes behind the document's back. ``RowSelection`` selects the row an undo or redo touched
(undoing a deletion selects the restored row; redoing an insertion the inserted one).
"""
from __future__ import annotations

from collections.abc import Callable

import shiboken6
from PySide6.QtCore import QEvent, QObject
from PySide6.QtGui import QKeySequence, QUndoCommand, QUndoStack
from PySide6.QtWidgets import QLineEdit

from ..accounting.core.values import Neighbouring, Relation, check_group_size
from ..document.model import Document, RowSpec, Targets, Tuning

_MERGE_ID = 0x70726


class _Command(QUndoCommand):
    def __init__(self, doc: Document, text: str, merge_key: object = None) -> None:
        super().__init__(text)
        self.doc = doc
        self.merge_key = merge_key

    def id(self) -> int:  # noqa: A003 - Qt override
        return _MERGE_ID if self.merge_key is not None else -1

    def row_after(self, undone: bool) -> int | None:
        """The row to select after this command was undone (or redone); None: leave the selection."""
        return None


class ReplaceRow(_Command):
    def __init__(self, doc: Document, i: int, new: RowSpec, text: str, merge_key: object = None) -> None:
        super().__init__(doc, text, merge_key)
        self.i, self.old, self.new = i, doc.row(i), new

    def redo(self) -> None:
        self.doc.replace(self.i, self.new)

    def undo(self) -> None:
        self.doc.replace(self.i, self.old)

    def row_after(self, undone: bool) -> int | None:
        return self.i

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

    def row_after(self, undone: bool) -> int | None:
        return max(self.i - 1, 0) if undone else self.i


class RemoveRow(_Command):
    def __init__(self, doc: Document, i: int, text: str) -> None:
        super().__init__(doc, text)
        self.i, self.row = i, doc.row(i)

    def redo(self) -> None:
        self.doc.remove(self.i)

    def undo(self) -> None:
        self.doc.insert(self.i, self.row)

    def row_after(self, undone: bool) -> int | None:
        return self.i  # the restored row, or the one that took the deleted row's place


class MoveRow(_Command):
    def __init__(self, doc: Document, i: int, j: int, text: str) -> None:
        super().__init__(doc, text)
        self.i, self.j = i, j

    def redo(self) -> None:
        self.doc.move(self.i, self.j)

    def undo(self) -> None:
        self.doc.move(self.j, self.i)

    def row_after(self, undone: bool) -> int | None:
        return self.i if undone else self.j


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


class SetTuning(_Command):
    """How the composition was tuned (None: run once)."""

    def __init__(self, doc: Document, new: Tuning | None, text: str) -> None:
        super().__init__(doc, text)
        self.old, self.new = doc.tuning, new

    def redo(self) -> None:
        self.doc.set_tuning(self.new)

    def undo(self) -> None:
        self.doc.set_tuning(self.old)


class SetRelation(_Command):
    """The neighbouring relation and the group size (records per person)."""

    def __init__(self, doc: Document, neighbouring: str, group_size: int, text: str,
                 merge_key: object = None) -> None:
        super().__init__(doc, text, merge_key)
        self.old = (doc.neighbouring, doc.group_size)
        self.new = (neighbouring, group_size)

    def redo(self) -> None:
        self.doc.set_relation(*self.new)

    def undo(self) -> None:
        self.doc.set_relation(*self.old)

    def mergeWith(self, other: QUndoCommand) -> bool:
        if not isinstance(other, SetRelation) or other.merge_key != self.merge_key:
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

    def set_tuning(self, tuning: Tuning | None) -> bool:
        """Say how the composition was tuned (None: run once); False when nothing changes."""
        if tuning == self.doc.tuning:
            return False
        self.stack.push(SetTuning(self.doc, tuning, "Change tuning"))
        return True

    def set_relation(self, neighbouring: str | None = None, group_size: int | None = None,
                     merge_key: object = None) -> bool:
        """Change the neighbouring relation and/or the group size (None keeps the document's);
        raises ValueError (naming the field) for a value the document refuses."""
        new = (self.doc.neighbouring if neighbouring is None else neighbouring,
               self.doc.group_size if group_size is None else group_size)
        Relation(new[0], check_group_size(new[1]))  # refuse before anything is pushed
        new = (Neighbouring.parse(new[0]).value, int(new[1]))
        if new == (self.doc.neighbouring, self.doc.group_size):
            return False
        self.stack.push(SetRelation(self.doc, *new, "Change who is protected", merge_key))
        return True


class RowSelection(QObject):
    """After each undo or redo on ``stack``, call ``select(row)`` with the row the command touched
    (clamped to the document; None when it is empty). Pushes count as redos."""

    def __init__(self, stack: QUndoStack, doc: Document, select: Callable[[int | None], None],
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._stack, self._doc, self._select = stack, doc, select
        self._index = stack.index()
        stack.indexChanged.connect(self._moved)

    def _moved(self, index: int) -> None:
        before, self._index = self._index, index
        # a jump through the history, or the stack being cleared or destroyed: nothing to show
        if abs(index - before) != 1 or not shiboken6.isValid(self._stack) or not self._stack.count():
            return
        cmd = self._stack.command(min(index, before))
        row = cmd.row_after(undone=index < before) if isinstance(cmd, _Command) else None
        if row is not None:
            n = len(self._doc)
            self._select(min(row, n - 1) if n else None)


class UndoKeys(QObject):
    """Event filter for text fields that edit the document: the undo/redo keys and the context
    menu's Undo/Redo act on ``stack`` instead of the field's own history."""

    def __init__(self, stack: QUndoStack, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._stack = stack

    def watch(self, *edits: QLineEdit) -> None:
        for edit in edits:
            edit.installEventFilter(self)

    def _which(self, event: QEvent) -> str | None:
        if event.matches(QKeySequence.StandardKey.Undo):
            return "undo"
        if event.matches(QKeySequence.StandardKey.Redo):
            return "redo"
        return None

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt override
        kind = event.type()
        if kind in (QEvent.Type.ShortcutOverride, QEvent.Type.KeyPress):
            which = self._which(event)
            if which is None:
                return False
            if kind == QEvent.Type.KeyPress:
                getattr(self._stack, which)()
            else:  # claim the key, so that it comes here as a key press (even with no Edit menu)
                event.accept()
            return True
        if kind == QEvent.Type.ContextMenu and isinstance(obj, QLineEdit):
            menu = obj.createStandardContextMenu()
            for action in menu.actions():
                which = {"edit-undo": "undo", "edit-redo": "redo"}.get(action.objectName())
                if which is not None:
                    action.triggered.disconnect()
                    action.triggered.connect(lambda _=False, w=which: getattr(self._stack, w)())
                    action.setEnabled(self._stack.canUndo() if which == "undo" else self._stack.canRedo())
            menu.exec(event.globalPos())
            menu.deleteLater()
            return True
        return False
