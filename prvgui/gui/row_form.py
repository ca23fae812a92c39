"""The form beside the table: one field per parameter of the selected row's mechanism.

Every keystroke goes to the document as an undoable edit (consecutive keystrokes in one
field merge into one undo step). The document's validation message marks the field it is
about and is shown under the form; invalid rows are never sent to the engine.
"""
from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import (QComboBox, QFileDialog, QFormLayout, QGroupBox, QHBoxLayout, QLabel,
                               QLineEdit, QPushButton, QToolButton, QVBoxLayout, QWidget)

from ..accounting.kinds.base import Choice, Points, Vector
from ..accounting.mechanisms import kind_class
from ..document.fileio import FileFormatError
from ..document.list_csv import columns_for, list_text, parse_list, read_csv
from ..document.model import KIND_TITLES, Document, RowSpec
from ..accounting.kinds.shuffled_gaussian import ShuffledGaussian
from ..accounting.kinds.random_allocation import RandomAllocation
from .fmt import POISSON_NOTE, fmt_field, fmt_value, parse_count, parse_number, same_value
from .undo import Editor, UndoKeys
from .widgets import ErrorLabel, mark

COUNT_TIP = "How many times this mechanism runs on the same data (e.g. DP-SGD training steps). " \
            "A whole number from 1 to 10^9; 1e4 works."
LABEL_TIP = "Your name for this part of the analysis (saved in the file)."
SHUFFLED_KIND = ShuffledGaussian.kind
#: the kinds whose count is epochs (and whose rows the DP-SGD helper fills in besides dpsgd_step)
EPOCH_KINDS = (SHUFFLED_KIND, RandomAllocation.kind)
#: the longest title in average characters; longer ones are elided (the full text is the tooltip)
TITLE_CHARS = 40


class _Field(QWidget):
    """A line edit with a unit label after it."""

    def __init__(self, unit: str, tip: str) -> None:
        super().__init__()
        lay = QHBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        self.edit = QLineEdit()
        self.edit.setToolTip(tip)
        self.tip = tip
        self.unit = QLabel(unit)
        self.unit.setStyleSheet("color: #555;")
        self.unit.setToolTip(tip)
        lay.addWidget(self.edit, 3)
        lay.addWidget(self.unit, 2)


class RowForm(QGroupBox):
    dpsgd_requested = Signal()

    def __init__(self, doc: Document, editor: Editor, parent: QWidget | None = None) -> None:
        super().__init__("Selected row", parent)
        self._doc, self._editor = doc, editor
        self._full_title = "Selected row"
        self._i: int | None = None
        self._kind: str | None = None
        self._defaults: dict[str, object] = {}
        self._session = 0
        self._undo_keys = UndoKeys(editor.stack, self)  # Ctrl+Z in a field undoes the document
        outer = QVBoxLayout(self)
        self.placeholder = QLabel("Select a row of the table, or add a mechanism with “Add”.")
        self.placeholder.setWordWrap(True)
        outer.addWidget(self.placeholder)
        self.body = QWidget()
        outer.addWidget(self.body)
        self.layout_ = QFormLayout(self.body)
        self.layout_.setContentsMargins(0, 0, 0, 0)
        self.layout_.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        self.label = QLineEdit()
        self.label.setMaxLength(200)
        self.label.setToolTip(LABEL_TIP)
        self.label.setPlaceholderText("(optional)")
        self.label.textEdited.connect(self._label_edited)
        self.label.editingFinished.connect(self._end_session)
        self._undo_keys.watch(self.label)
        self.kind = QComboBox()
        for key, title in KIND_TITLES.items():
            self.kind.addItem(title, key)
            self.kind.setItemData(self.kind.count() - 1, kind_class(key).describe(),
                                  Qt.ItemDataRole.ToolTipRole)
        self.kind.setToolTip("The mechanism each run uses; parameters it shares with the old one are kept.")
        self.kind.activated.connect(self._kind_chosen)
        self.layout_.addRow("Label", self.label)
        self.layout_.addRow("Mechanism", self.kind)
        self.params: dict[str, _Field] = {}
        self.choices: dict[str, QComboBox] = {}
        #: the list parameters (their fields are in ``params`` too): name -> holds [ε, δ] pairs
        self.lists: dict[str, bool] = {}
        self._csv_error: str | None = None
        self.count = _Field("runs (e.g. steps)", COUNT_TIP)
        self.error_label = ErrorLabel()
        outer.addWidget(self.error_label)
        self.set_row(None)

    # ------------------------------------------------------------ showing a row
    @property
    def row_index(self) -> int | None:
        return self._i

    def set_row(self, i: int | None) -> None:
        """Show row ``i`` of the document (None or out of range: nothing selected)."""
        if i is not None and not 0 <= i < len(self._doc):
            i = None
        if i != self._i:
            self._session += 1
            self._csv_error = None
        self._i = i
        self.placeholder.setVisible(i is None)
        self.body.setVisible(i is not None)
        if i is None:
            self._set_title("Selected row")
            self.error_label.show_error(None)
            return
        row = self._doc.row(i)
        self._set_title(f"Row {i + 1}: {row.label or KIND_TITLES.get(row.kind, row.kind)}")
        if row.kind != self._kind:
            self._build(row.kind)
        self.kind.setCurrentIndex(max(self.kind.findData(row.kind), 0))
        _set_text(self.label, row.label)
        for name, f in self.params.items():
            if name in self.lists:
                _set_list_text(f.edit, row.params.get(name, ""), self.lists[name])
            else:
                _set_text(f.edit, row.params.get(name, ""))
        for name, box in self.choices.items():
            value = row.params.get(name, self._defaults.get(name))
            box.setCurrentIndex(max(box.findData(value), 0))
        _set_text(self.count.edit, row.count)
        problem = row.problem(self._doc.relation)
        err = None if problem is None else str(problem)
        where = getattr(problem, "field", None)
        for name, f in self.params.items():
            mark(f.edit, err if where == name else None, f.tip)
        for name, box in self.choices.items():  # e.g. fixed-size batches under add/remove
            mark(box, err if where == name else None, box.property("tip") or "")
        mark(self.count.edit, err if where == "count" else None, COUNT_TIP)
        mark(self.label, err if where == "label" else None, LABEL_TIP)
        if err is None and self._csv_error is not None:
            err = self._csv_error
        self.error_label.show_error(f"Row {i + 1}: {err}" if err else None)

    def _set_title(self, text: str) -> None:
        self._full_title = text
        self._elide_title()

    def _elide_title(self) -> None:
        """A long label would set the group box's minimum width (and widen the window): elide it
        to at most TITLE_CHARS average characters and to the box's width; the tooltip has it all."""
        fm = self.fontMetrics()
        room = min(fm.averageCharWidth() * TITLE_CHARS, max(self.width() - 30, 60))
        shown = fm.elidedText(self._full_title, Qt.TextElideMode.ElideRight, room)
        self.setTitle(shown)
        self.setToolTip(self._full_title if shown != self._full_title else "")

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._elide_title()

    def _build(self, kind: str) -> None:
        """Rebuild the parameter fields for a kind."""
        while self.layout_.rowCount() > 2:
            self.layout_.removeRow(2)
        self.params = {}
        self.choices = {}
        self.lists = {}
        cls = kind_class(kind)
        self._defaults = cls.defaults()
        for name, spec in cls.param_specs().items():
            if isinstance(spec, Choice):
                box = QComboBox()
                box.setObjectName(f"param_{name}")
                for value, words in spec.choices:
                    box.addItem(words, value)
                box.setToolTip(f"{spec.help[0].upper()}{spec.help[1:]}.")
                box.setProperty("tip", box.toolTip())
                box.activated.connect(lambda index, n=name, b=box: self._choice_made(n, b.itemData(index)))
                self.choices[name] = box
                self.layout_.addRow(spec.title, box)
                continue
            if isinstance(spec, (Vector, Points)):
                self._add_list_field(name, spec)
                continue
            f = _Field(spec.unit, f"{spec.help[0].upper()}{spec.help[1:]}. Typed as a number, e.g. 1e-3.")
            f.edit.setObjectName(f"param_{name}")
            if name in self._defaults:
                f.edit.setPlaceholderText(f"{fmt_value(self._defaults[name])} (default)")
            f.edit.textEdited.connect(lambda text, n=name: self._param_edited(n, text))
            f.edit.editingFinished.connect(self._end_session)
            self._undo_keys.watch(f.edit)
            self.params[name] = f
            self.layout_.addRow(spec.title, f)
        if self.lists:
            self.csv_button = QPushButton("Fill from CSV…")
            self.csv_button.setObjectName("fill_csv")
            cols = ", ".join(c[0] for c in columns_for(kind))
            self.csv_button.setToolTip(f"Read the columns {cols} from a CSV file (a first row naming "
                                       "the columns is optional; lines starting with # are skipped)")
            self.csv_button.clicked.connect(self._choose_csv)
            self.layout_.addRow(self.csv_button)
        # a shuffled row counts epochs (each one pass over the data), not steps
        self.count = _Field("epochs" if kind in EPOCH_KINDS else "runs (e.g. steps)", COUNT_TIP)
        self.count.edit.setObjectName("count")
        self.count.edit.textEdited.connect(self._count_edited)
        self.count.edit.editingFinished.connect(self._end_session)
        self._undo_keys.watch(self.count.edit)
        self.layout_.addRow("Count", self.count)
        subsampled = "sampling_rate" in self.params and "sampling" not in self.choices
        self.note = QLabel(f"Sampling assumed: {POISSON_NOTE}." if subsampled else "")
        self.note.setWordWrap(True)
        self.note.setStyleSheet("color: #555;")
        if subsampled:
            self.layout_.addRow(self.note)
        if cls.dpsgd_step or kind in EPOCH_KINDS:
            self.dpsgd = QPushButton("DP-SGD helper…")
            self.dpsgd.setToolTip("Fill sampling rate and steps from dataset size, batch size and epochs")
            self.dpsgd.clicked.connect(self.dpsgd_requested)
            self.layout_.addRow(self.dpsgd)
        self._kind = kind

    def _add_list_field(self, name: str, spec: Vector | Points) -> None:
        """A list parameter: one line of text (numbers separated by commas or spaces; points as
        "ε δ" pairs separated by semicolons)."""
        points = isinstance(spec, Points)
        how = ("Typed as “ε δ” pairs separated by semicolons, e.g. 1 1e-5; 2 1e-8" if points else
               "Typed as numbers separated by commas or spaces, e.g. 0.75, 0.25")
        f = _Field(spec.unit, f"{spec.help[0].upper()}{spec.help[1:]}. {how}; or use Fill from CSV…")
        f.edit.setObjectName(f"param_{name}")
        f.layout().setStretch(0, 5)  # a list needs the room more than its unit does
        f.layout().setStretch(1, 1)
        f.edit.setPlaceholderText("ε δ; ε δ; …" if points else "p₁, p₂, …")
        f.edit.textEdited.connect(lambda text, n=name: self._list_edited(n, text))
        f.edit.editingFinished.connect(self._end_session)
        self._undo_keys.watch(f.edit)
        more = QToolButton()
        more.setText("⋯")
        more.setObjectName(f"edit_list_{name}")
        more.setToolTip("Edit the list one entry per line")
        more.clicked.connect(lambda _=False, n=name, t=spec.title: self.edit_list(n, t))
        f.layout().insertWidget(1, more)
        self.params[name] = f
        self.lists[name] = points
        self.layout_.addRow(spec.title, f)

    def edit_list(self, name: str, title: str, dialog_fn=None) -> bool:
        """Edit a list parameter one entry per line (ListDialog; tests pass ``dialog_fn``)."""
        from .list_editor import ListDialog
        f = self.params[name]
        dialog = (dialog_fn or ListDialog)(title, f.edit.text(), self.lists[name], self)
        if not dialog.exec():
            return False
        text = dialog.text()
        f.edit.setText(text)
        self._list_edited(name, text)
        self._end_session()
        return True

    # ------------------------------------------------------------ edits
    def _list_edited(self, name: str, text: str) -> None:
        if (row := self._current()) is None:
            return
        title = kind_class(row.kind).param_specs()[name].title
        new = row.with_param(name, parse_list(text, self.lists[name])).normalised()
        self._push(new, f"Edit {title} of row", ("param", name))

    def _choose_csv(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Fill from CSV", "",
                                              "CSV files (*.csv *.txt);;All files (*)")
        if path:
            self.fill_from_csv(path)

    def fill_from_csv(self, path: str) -> bool:
        """Fill the selected row's list parameters from a CSV file (one undo step). A file that
        cannot be read leaves the row as it was and says why under the form (the line and the
        column); what the numbers must satisfy together is the row's own check."""
        if (row := self._current()) is None:
            return False
        try:
            values = read_csv(path, row.kind)
        except FileFormatError as exc:
            self._csv_error = f"cannot fill from {path.rsplit('/', 1)[-1]}: {exc}"
            self.set_row(self._i)
            return False
        self._csv_error = None
        self._session += 1
        params = {**row.params, **values}
        self._push(RowSpec(row.kind, params, row.count, row.label).normalised(), "Fill row from CSV", None)
        self.set_row(self._i)
        return True

    def _end_session(self) -> None:
        self._session += 1

    def _current(self) -> RowSpec | None:
        return self._doc.row(self._i) if self._i is not None and self._i < len(self._doc) else None

    def _push(self, new: RowSpec, text: str, key: object) -> None:
        assert self._i is not None
        self._csv_error = None
        self._editor.replace(self._i, new, text, merge_key=(key, self._session) if key else None)

    def _label_edited(self, text: str) -> None:
        if (row := self._current()) is not None:
            self._push(RowSpec(row.kind, dict(row.params), row.count, text), "Rename row", "label")

    def _kind_chosen(self, index: int) -> None:
        row = self._current()
        kind = self.kind.itemData(index)
        if row is not None and kind != row.kind:
            self._session += 1
            self._push(row.with_kind(kind), "Change mechanism of row", None)

    def _param_edited(self, name: str, text: str) -> None:
        if (row := self._current()) is None:
            return
        if not text.strip() and name in self._defaults:  # empty optional field: use the default
            params = {k: v for k, v in row.params.items() if k != name}
            new = RowSpec(row.kind, params, row.count, row.label)
        else:
            new = row.with_param(name, parse_number(text))
        title = kind_class(row.kind).param_specs()[name].title
        self._push(new, f"Edit {title} of row", ("param", name))

    def _choice_made(self, name: str, value: str) -> None:
        row = self._current()
        if row is not None and row.params.get(name, self._defaults.get(name)) != value:
            self._session += 1
            self._push(row.with_param(name, value), f"Change {name} of row", None)

    def _count_edited(self, text: str) -> None:
        if (row := self._current()) is not None:
            count = parse_count(text)
            self._push(RowSpec(row.kind, dict(row.params), count, row.label),  # type: ignore[arg-type]
                       "Edit count of row", "count")


def _rows(value: object, points: bool) -> object:
    """A list of rows with each bare number as a one-entry row (a one-column matrix typed as
    "1; 2" stands for ((1,), (2,)))."""
    if not points or not isinstance(value, tuple):
        return value
    return tuple(v if isinstance(v, tuple) else (v,) for v in value)


def _set_list_text(edit: QLineEdit, value: object, points: bool) -> None:
    """Show a list parameter unless the field's text already stands for it."""
    if _rows(parse_list(edit.text(), points), points) != _rows(value, points) and edit.text() != value:
        pos = edit.cursorPosition()
        edit.setText(list_text(value, points))
        edit.setCursorPosition(min(pos, len(edit.text())))


def _set_text(edit: QLineEdit, value: object) -> None:
    """Show ``value`` unless the field's text already stands for it (keeps the cursor put).

    A value the user did not type shows at most six significant digits; showing it does not
    change the document (only an edit does, through ``textEdited``)."""
    text = fmt_field(value)
    if not same_value(edit.text(), value) and edit.text() != text:
        pos = edit.cursorPosition()
        edit.setText(text)
        edit.setCursorPosition(min(pos, len(edit.text())))
