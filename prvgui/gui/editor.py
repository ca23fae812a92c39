"""The composition editor: row buttons, the table, and the form for the selected row."""
from __future__ import annotations

from PySide6.QtCore import QModelIndex, Qt, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (QAbstractItemView, QComboBox, QHBoxLayout, QHeaderView, QMenu,
                               QStyle, QStyledItemDelegate, QTableView, QToolButton, QVBoxLayout, QWidget)

from ..accounting.mechanisms import kind_class
from ..document.model import KIND_TITLES, Document, RowSpec
from .row_form import RowForm
from .table_model import COL_COUNT, COL_KIND, COL_LABEL, COL_PARAMS, CompositionModel
from .undo import Editor, RowSelection
from .widgets import icon


class KindDelegate(QStyledItemDelegate):
    """A combo box of mechanism kinds for the Mechanism column."""

    def createEditor(self, parent, option, index):
        box = QComboBox(parent)
        for key, title in KIND_TITLES.items():
            box.addItem(title, key)
            box.setItemData(box.count() - 1, kind_class(key).describe(), Qt.ItemDataRole.ToolTipRole)
        return box

    def setEditorData(self, editor, index) -> None:
        editor.setCurrentIndex(max(editor.findData(index.data(Qt.ItemDataRole.EditRole)), 0))

    def setModelData(self, editor, model, index) -> None:
        model.setData(index, editor.currentData(), Qt.ItemDataRole.EditRole)


class CompositionEditor(QWidget):
    """Buttons + table + form. ``actions`` holds the row actions for the main window's menus."""

    current_row_changed = Signal(object)

    def __init__(self, doc: Document, editor: Editor, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.doc, self.editor = doc, editor
        self.model = CompositionModel(doc, edit=lambda i, row: editor.replace(i, row, "Edit row"),
                                      parent=self)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        self._build_add_menu()
        self._build_actions()
        self._build_buttons(lay)
        self._build_table(lay)
        self._build_form(lay)
        self.view.selectionModel().currentRowChanged.connect(lambda *_: self._sync())
        doc.subscribe(self._on_document)
        # undo and redo select the row they changed (e.g. the row a deletion took away)
        self._selection = RowSelection(editor.stack, doc, self.select_row, self)
        self._sync()

    # ------------------------------------------------------------ building the editor
    def _build_add_menu(self) -> None:
        """The "Add mechanism" menu: one entry per mechanism kind (``add_menu``)."""
        self.add_menu = QMenu("Add mechanism", self)
        self.add_menu.setToolTipsVisible(True)
        for key, title in KIND_TITLES.items():
            a = self.add_menu.addAction(title)
            a.setObjectName(f"add_{key}")
            a.setToolTip(kind_class(key).describe())
            a.triggered.connect(lambda _=False, k=key: self.add(k))

    def _build_actions(self) -> None:
        """The row actions: duplicate, delete, move up, move down, DP-SGD helper (``actions_``)."""
        self.actions_: dict[str, QAction] = {}
        tips = {"duplicate": "Add a copy of the selected row below it.",
                "delete": "Remove the selected row (Edit ▸ Undo brings it back).",
                "up": "Move the selected row one place up.", "down": "Move the selected row one place down.",
                "dpsgd": "Fill the sampling rate and the number of steps from dataset size, batch size "
                         "and epochs."}
        for name, text, pix, keys, slot in (
                ("duplicate", "Duplicate row", QStyle.StandardPixmap.SP_FileDialogNewFolder,
                 QKeySequence("Ctrl+D"), self.duplicate),
                ("delete", "Delete row", QStyle.StandardPixmap.SP_TrashIcon,
                 QKeySequence(QKeySequence.StandardKey.Delete), self.delete),
                ("up", "Move row up", QStyle.StandardPixmap.SP_ArrowUp, QKeySequence("Ctrl+Up"),
                 lambda: self.move(-1)),
                ("down", "Move row down", QStyle.StandardPixmap.SP_ArrowDown, QKeySequence("Ctrl+Down"),
                 lambda: self.move(1)),
                ("dpsgd", "DP-SGD helper…", None, QKeySequence(), None)):
            a = QAction(icon(name, pix) if pix else icon(name), text, self)
            a.setShortcut(keys)
            a.setToolTip(tips[name])
            if slot is not None:
                a.triggered.connect(slot)
            self.actions_[name] = a

    def _build_buttons(self, lay: QVBoxLayout) -> None:
        """The bar above the table: Add (with the menu) and a button per row action."""
        bar = QHBoxLayout()
        add = QToolButton()
        add.setText("Add")
        add.setObjectName("add_button")
        add.setIcon(icon("add", QStyle.StandardPixmap.SP_FileIcon))
        add.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        add.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        add.setMenu(self.add_menu)
        add.setToolTip("Add a row: choose the mechanism it runs.")
        bar.addWidget(add)
        for name in ("duplicate", "delete", "up", "down", "dpsgd"):
            b = QToolButton()
            b.setDefaultAction(self.actions_[name])
            b.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly if name == "dpsgd"
                                 else Qt.ToolButtonStyle.ToolButtonIconOnly)
            bar.addWidget(b)
        bar.addStretch(1)
        lay.addLayout(bar)

    def _build_table(self, lay: QVBoxLayout) -> None:
        """The composition's table (``view``), with the row actions' shortcuts."""
        self.view = QTableView()
        self.view.setObjectName("composition_table")
        self.view.setModel(self.model)
        self.view.setItemDelegateForColumn(COL_KIND, KindDelegate(self.view))
        self.view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.view.setEditTriggers(QAbstractItemView.EditTrigger.DoubleClicked
                                  | QAbstractItemView.EditTrigger.EditKeyPressed
                                  | QAbstractItemView.EditTrigger.AnyKeyPressed)
        self.view.setAlternatingRowColors(True)
        self.view.setWordWrap(False)
        hh = self.view.horizontalHeader()
        # label, mechanism and parameters share the width (each elides, its tooltip has it all):
        # fixed widths for the first two left the parameters a sliver at 1024 px
        for col in (COL_LABEL, COL_KIND, COL_PARAMS):
            hh.setSectionResizeMode(col, QHeaderView.ResizeMode.Stretch)
        hh.setSectionResizeMode(COL_COUNT, QHeaderView.ResizeMode.ResizeToContents)
        self.view.verticalHeader().setDefaultSectionSize(self.view.fontMetrics().height() + 8)
        self.view.doubleClicked.connect(self._double_clicked)
        # Delete works while the table has focus; the other shortcuts anywhere in the editor
        delete = self.actions_["delete"]
        delete.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
        self.view.addAction(delete)
        for name in ("duplicate", "up", "down"):
            self.actions_[name].setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
            self.addAction(self.actions_[name])
        lay.addWidget(self.view, 1)

    def _build_form(self, lay: QVBoxLayout) -> None:
        """The form for the selected row, under the table (``form``)."""
        self.form = RowForm(self.doc, self.editor)
        self.form.dpsgd_requested.connect(self.actions_["dpsgd"].trigger)
        lay.addWidget(self.form)

    def detach(self) -> None:
        self.doc.unsubscribe(self._on_document)
        self.model.detach()

    # ------------------------------------------------------------ selection
    def current_row(self) -> int | None:
        idx = self.view.currentIndex()
        return idx.row() if idx.isValid() and 0 <= idx.row() < len(self.doc) else None

    def select_row(self, i: int | None) -> None:
        if i is None or not 0 <= i < len(self.doc):
            self.view.setCurrentIndex(QModelIndex())
            self.view.clearSelection()
        else:
            self.view.selectRow(i)
            self.view.setCurrentIndex(self.model.index(i, COL_LABEL))
        self._sync()

    def _on_document(self, what: str, arg: object) -> None:
        if what == "reset":
            self.select_row(0 if len(self.doc) else None)
        else:
            self._sync()

    def _sync(self) -> None:
        i = self.current_row()
        self.form.set_row(i)
        n = len(self.doc)
        for name in ("duplicate", "delete"):
            self.actions_[name].setEnabled(i is not None)
        self.actions_["up"].setEnabled(i is not None and i > 0)
        self.actions_["down"].setEnabled(i is not None and i < n - 1)
        self.current_row_changed.emit(i)

    def _double_clicked(self, index: QModelIndex) -> None:
        if index.column() == COL_PARAMS and self.form.params:
            edit = next(iter(self.form.params.values())).edit
            edit.setFocus()
            edit.selectAll()

    # ------------------------------------------------------------ row commands
    def add(self, kind: str) -> None:
        i = self.current_row()
        at = len(self.doc) if i is None else i + 1
        if self.editor.insert(at, RowSpec.default(kind), f"Add {KIND_TITLES[kind]}"):
            self.select_row(at)

    def insert_row(self, row: RowSpec) -> None:
        i = self.current_row()
        at = len(self.doc) if i is None else i + 1
        if self.editor.insert(at, row, "Add row"):
            self.select_row(at)

    def duplicate(self) -> None:
        i = self.current_row()
        if i is not None and self.editor.insert(i + 1, self.doc.row(i), "Duplicate row"):
            self.select_row(i + 1)

    def delete(self) -> None:
        i = self.current_row()
        if i is not None and self.editor.remove(i):
            self.select_row(min(i, len(self.doc) - 1) if len(self.doc) else None)

    def move(self, step: int) -> None:
        i = self.current_row()
        if i is not None and self.editor.move(i, i + step):
            self.select_row(i + step)
