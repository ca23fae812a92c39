"""A QAbstractTableModel over the composition document: one row per mechanism.

The document announces changes after they happen, but Qt wants ``begin*`` before the
model's answers change. The model therefore answers from its own copy of the rows,
``self._rows``, and refreshes that copy between ``begin*`` and ``end*``.

Edits (``setData``) are not applied here: they go to ``edit(i, new_row)`` (the undo
``Editor``), which changes the document, whose event then updates the model. Values that
do not validate are still stored (so undo can restore them and the user sees what they
typed), marked on the cell with the reason from ``RowSpec.error(relation)`` (a row can be valid
on its own and invalid under the document's neighbouring relation, e.g. fixed-size batches
under add/remove), and never sent to the engine.
"""
from __future__ import annotations

from typing import Callable

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import QApplication, QStyle

from ..accounting.mechanisms import MECHANISM_KINDS
from ..document.model import KIND_TITLES, Document, RowSpec
from .fmt import fmt_count, param_summary, parse_count

COL_LABEL, COL_KIND, COL_PARAMS, COL_COUNT = range(4)
HEADERS = ("Label", "Mechanism", "Parameters", "Count")
HEADER_TIPS = (
    "Your name for this part of the analysis",
    "The mechanism each run uses",
    "Mechanism parameters (edit them in the form beside the table)",
    "How many times the mechanism runs (e.g. training steps)",
)
#: the row's validation message (or None)
ErrorRole = Qt.ItemDataRole.UserRole + 1
#: the row's RowSpec
RowRole = Qt.ItemDataRole.UserRole + 2
ERROR_BRUSH = QBrush(QColor(255, 224, 224))
MAX_LABEL = 200
CHANGE_ROLES = [Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.EditRole, Qt.ItemDataRole.ToolTipRole,
                Qt.ItemDataRole.BackgroundRole, Qt.ItemDataRole.DecorationRole, ErrorRole, RowRole]

Index = QModelIndex | QPersistentModelIndex


def error_column(problem: ValueError | None) -> int | None:
    """The column whose cell a row's problem (``RowSpec.problem()``) is about."""
    if problem is None:
        return None
    name = getattr(problem, "field", None)
    return {"count": COL_COUNT, "label": COL_LABEL}.get(name or "", COL_PARAMS)


class CompositionModel(QAbstractTableModel):
    def __init__(self, doc: Document, edit: Callable[[int, RowSpec], bool] | None = None,
                 parent=None) -> None:
        super().__init__(parent)
        self._doc = doc
        self._edit = edit or self._edit_directly
        self._rows: list[RowSpec] = list(doc.rows)
        self._sync()
        doc.subscribe(self._on_document)

    def detach(self) -> None:
        self._doc.unsubscribe(self._on_document)

    def _edit_directly(self, i: int, row: RowSpec) -> bool:
        self._doc.replace(i, row)
        return True

    def _sync(self) -> None:
        self._rows = list(self._doc.rows)
        try:
            relation = self._doc.relation
        except ValueError:  # cannot happen through set_relation; never block the table on it
            relation = None
        problems = [r.problem(relation) for r in self._rows]
        self._columns = [error_column(p) for p in problems]
        self._errors: list[str | None] = [None if p is None else str(p) for p in problems]

    # ------------------------------------------------------------ document events
    def _on_document(self, what: str, arg: object) -> None:
        root = QModelIndex()
        if what == "insert":
            i = int(arg)  # type: ignore[arg-type]
            self.beginInsertRows(root, i, i)
            self._sync()
            self.endInsertRows()
        elif what == "remove":
            i = int(arg)  # type: ignore[arg-type]
            self.beginRemoveRows(root, i, i)
            self._sync()
            self.endRemoveRows()
        elif what == "move":
            i, j = arg  # type: ignore[misc]
            if self.beginMoveRows(root, i, i, root, j + 1 if j > i else j):
                self._sync()
                self.endMoveRows()
            else:  # cannot happen for i != j; stay consistent anyway
                self.beginResetModel()
                self._sync()
                self.endResetModel()
        elif what == "change":
            i = int(arg)  # type: ignore[arg-type]
            self._sync()
            self.dataChanged.emit(self.index(i, 0), self.index(i, len(HEADERS) - 1), CHANGE_ROLES)
            self.headerDataChanged.emit(Qt.Orientation.Vertical, i, i)
        elif what == "relation":  # the rows stay; whether each is valid under the relation may not
            self._sync()
            if self._rows:
                last = len(self._rows) - 1
                self.dataChanged.emit(self.index(0, 0), self.index(last, len(HEADERS) - 1), CHANGE_ROLES)
                self.headerDataChanged.emit(Qt.Orientation.Vertical, 0, last)
        elif what == "reset":
            self.beginResetModel()
            self._sync()
            self.endResetModel()

    # ------------------------------------------------------------ read
    def rowCount(self, parent: Index = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: Index = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(HEADERS)

    def row_error(self, i: int) -> str | None:
        return self._errors[i] if 0 <= i < len(self._errors) else None

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole):
        if not index.isValid() or not 0 <= index.row() < len(self._rows):
            return None
        row, col = self._rows[index.row()], index.column()
        err = self._errors[index.row()]
        bad = err is not None and self._columns[index.row()] == col
        if role == Qt.ItemDataRole.DisplayRole:
            return self._display(row, col)
        if role == Qt.ItemDataRole.EditRole:
            return (row.label, row.kind, self._display(row, COL_PARAMS), str(row.count))[col]
        if role == Qt.ItemDataRole.ToolTipRole:
            if bad:
                return f"Invalid: {err}"
            if col == COL_KIND:
                cls = MECHANISM_KINDS.get(row.kind)
                return f"{cls.title}: {cls.describe()}" if cls is not None else None
            if col == COL_LABEL and row.label:  # the cell elides a long label: show it all here
                return f"{row.label}\n\n{HEADER_TIPS[col]}"
            if col == COL_PARAMS:  # elided when narrow: show it all here
                return f"{self._display(row, col)}\n\n{HEADER_TIPS[col]}"
            return HEADER_TIPS[col]
        if role == Qt.ItemDataRole.BackgroundRole:
            return ERROR_BRUSH if bad else None
        if role == Qt.ItemDataRole.DecorationRole:
            if bad:
                return QApplication.style().standardIcon(QStyle.StandardPixmap.SP_MessageBoxWarning)
            return None
        if role == Qt.ItemDataRole.TextAlignmentRole and col == COL_COUNT:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == ErrorRole:
            return err
        if role == RowRole:
            return row
        return None

    def _display(self, row: RowSpec, col: int) -> str:
        if col == COL_LABEL:
            return str(row.label)
        if col == COL_KIND:
            return KIND_TITLES.get(row.kind, str(row.kind))
        if col == COL_PARAMS:
            return param_summary(row.kind, row.params)
        return fmt_count(row.count)

    def headerData(self, section: int, orientation: Qt.Orientation,
                   role: int = Qt.ItemDataRole.DisplayRole):
        if orientation == Qt.Orientation.Horizontal:
            if not 0 <= section < len(HEADERS):
                return None
            if role == Qt.ItemDataRole.DisplayRole:
                return HEADERS[section]
            if role == Qt.ItemDataRole.ToolTipRole:
                return HEADER_TIPS[section]
            return None
        if not 0 <= section < len(self._rows):
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return f"{section + 1}{' ⚠' if self._errors[section] else ''}"
        if role == Qt.ItemDataRole.ToolTipRole:
            err = self._errors[section]
            return f"Row {section + 1}: {err}" if err else f"Row {section + 1}"
        return None

    def flags(self, index: Index) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        base = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable | Qt.ItemFlag.ItemNeverHasChildren
        if index.column() != COL_PARAMS:
            base |= Qt.ItemFlag.ItemIsEditable
        return base

    # ------------------------------------------------------------ write
    def setData(self, index: Index, value: object, role: int = Qt.ItemDataRole.EditRole) -> bool:
        if role != Qt.ItemDataRole.EditRole or not index.isValid() \
                or not 0 <= index.row() < len(self._rows):
            return False
        i, col = index.row(), index.column()
        row = self._rows[i]
        if col == COL_LABEL:
            if not isinstance(value, str) or len(value) > MAX_LABEL:
                return False
            new = RowSpec(row.kind, dict(row.params), row.count, value.strip())
        elif col == COL_KIND:
            kind = value if value in KIND_TITLES else next(
                (k for k, t in KIND_TITLES.items() if t == value), None)
            if kind is None:
                return False
            new = row.with_kind(kind)
        elif col == COL_COUNT:
            new = RowSpec(row.kind, dict(row.params), parse_count(value), row.label)  # type: ignore[arg-type]
        else:
            return False
        if new == row:
            return True
        return bool(self._edit(i, new))
