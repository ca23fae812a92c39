"""Which row's count the "ε vs steps" plot varies: a combo box kept in step with the document.

The default ("largest count") follows the document; an explicit choice follows its row when
rows are inserted, removed or moved, and falls back to the default when its row is deleted.
"""
from __future__ import annotations

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import QComboBox

from ..document.model import KIND_TITLES, Document


class StepsChoice(QObject):
    changed = Signal()

    def __init__(self, doc: Document, combo: QComboBox) -> None:
        super().__init__(combo)
        self._doc = doc
        self._combo = combo
        self._choice: int | None = None
        combo.activated.connect(self._picked)
        doc.subscribe(self._on_document)
        self._fill()

    def detach(self) -> None:
        self._doc.unsubscribe(self._on_document)

    @property
    def choice(self) -> int | None:
        """The chosen row, or None for "largest count"."""
        return self._choice

    def set_choice(self, i: int | None) -> None:
        self._choice = i if i is not None and 0 <= i < len(self._doc) else None
        self._fill()
        self.changed.emit()

    def row(self) -> int | None:
        """The row to vary: the choice, else the row with the largest count (None: no rows)."""
        if self._choice is not None and self._choice < len(self._doc):
            return self._choice
        counts = [(r.count if isinstance(r.count, int) else -1, -i) for i, r in enumerate(self._doc.rows)]
        return -max(counts)[1] if counts else None

    def _picked(self, index: int) -> None:
        data = self._combo.itemData(index)
        self.set_choice(None if data is None or data < 0 else int(data))

    def _on_document(self, what: str, arg: object) -> None:
        c = self._choice
        if c is not None:
            if what == "insert" and int(arg) <= c:  # type: ignore[arg-type]
                c += 1
            elif what == "remove":
                i = int(arg)  # type: ignore[arg-type]
                c = None if i == c else (c - 1 if i < c else c)
            elif what == "move":
                i, j = arg  # type: ignore[misc]
                if c == i:
                    c = j
                elif i < c <= j:
                    c -= 1
                elif j <= c < i:
                    c += 1
            elif what == "reset":
                c = None
            self._choice = c
        self._fill()

    def _fill(self) -> None:
        combo = self._combo
        combo.blockSignals(True)
        combo.clear()
        default = self._choice_row_default()
        combo.addItem(f"largest count (row {default + 1})" if default is not None else "largest count", -1)
        for i, r in enumerate(self._doc.rows):
            name = str(r.label or KIND_TITLES.get(r.kind, r.kind))
            combo.addItem(f"row {i + 1}: {name[:28] + '…' if len(name) > 29 else name}", i)
            combo.setItemData(i + 1, name, Qt.ItemDataRole.ToolTipRole)
        combo.setCurrentIndex(0 if self._choice is None else self._choice + 1)
        combo.blockSignals(False)

    def _choice_row_default(self) -> int | None:
        saved, self._choice = self._choice, None
        try:
            return self.row()
        finally:
            self._choice = saved
