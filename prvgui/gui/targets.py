"""Targets: delta, the epsilon at which delta is reported, accuracy, and who is protected (the
neighbouring relation and the records per person, i.e. the group size).

Typed text (``1e-5`` works) is validated as the user types. A valid value goes to the
document through the undo ``Editor``; an invalid one is marked on the field, stays in the
field only (the document keeps the last good value), and ``error()`` reports it so that
nothing is computed until it is fixed.
"""
from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (QComboBox, QDialog, QFormLayout, QGroupBox, QHBoxLayout, QLabel, QLineEdit,
                               QPushButton, QWidget)

from ..accounting.core.values import MAX_GROUP, check_group_size
from ..accounting.core.validate import (DELTA_LABEL, EPS_ERROR_LABEL, EPS_ERROR_RANGE, NumberError, check_delta,
                                   check_eps_error, check_epsilon, number_text)
from ..document.model import Document, Targets
from .fmt import fmt_field, parse_number, same_value
from .tuning_dialog import TuningDialog
from .undo import Editor, UndoKeys
from .widgets import ErrorLabel, mark

FIELDS = ("delta", "epsilon", "eps_error")
TITLES = {"delta": DELTA_LABEL, "epsilon": "Report δ at ε", "eps_error": EPS_ERROR_LABEL}
TIPS = {
    "delta": "ε is reported at this δ: the probability that the ε guarantee fails. "
             "A number in (0, 1); 1e-5 works. Common choice: below 1 / dataset size.",
    "epsilon": "The results also show the δ the composition achieves at this ε (nats, ≥ 0). "
               "Leave empty to skip.",
    "eps_error": f"Half-width of the certified ε bracket: upper − lower ≤ 2 × this. From "
                 f"{number_text(EPS_ERROR_RANGE[0])} to {number_text(EPS_ERROR_RANGE[1])}; "
                 "smaller is slower and needs more memory.",
}
NEIGHBOURING = {"add_remove": "Add/remove one record", "replace_one": "Replace one record"}
NEIGHBOURING_TIPS = {
    "add_remove": "Neighbouring datasets differ by one record being added or removed (the dataset "
                  "size changes by one). The usual relation for DP-SGD with Poisson sampling.",
    "replace_one": "Neighbouring datasets differ by one record being swapped for another: the dataset "
                   "size stays the same. A sum of clipped contributions can then move by twice the "
                   "clipping norm. Needed for fixed-size batches; many papers state this relation.",
}
NEIGHBOURING_TIP = ("Which datasets count as neighbours, i.e. what the guarantee protects. Every row's "
                    "parameters stay as typed; the accountant derives each row's worst case for this "
                    "relation.\n\n• Add/remove one record: " + NEIGHBOURING_TIPS["add_remove"]
                    + "\n• Replace one record: " + NEIGHBOURING_TIPS["replace_one"])
GROUP_TITLE = "Records per person"
GROUP_TIP = (f"Group (user-level) privacy: how many records one protected person may contribute. "
             f"1 protects a single record; k protects everyone with up to k records, all changed at "
             f"once (the guarantee is then for groups of k records, and ε grows with k). "
             f"A whole number from 1 to {MAX_GROUP}.")
TUNING_TIP = ("How the composition was run to tune hyperparameters, when only the best run is released: "
              "a fixed number of runs, or a random one (Poisson, truncated negative binomial). The "
              "results then also show ε for releasing the best run.")


def check_field(name: str, text: object, label: str | None = None) -> tuple[object, str | None]:
    """(value, None) or (None, message) for a typed target (text, or a field's value); the
    message names the field by ``label`` (default: its title in the Targets form)."""
    if name == "epsilon" and isinstance(text, str) and not text.strip():
        return None, None
    value = parse_number(text)
    label = label or TITLES[name]
    try:
        if name == "delta":
            return check_delta(value, label), None
        if name == "epsilon":
            return check_epsilon(value, label), None
        return check_eps_error(value, label), None
    except ValueError as exc:
        return None, str(exc)


def check_group_text(text: str) -> tuple[int | None, str | None]:
    """(group size, None) or (None, a message naming the field by its label and what was typed)."""
    try:
        return check_group_size(parse_number(text)), None
    except NumberError as exc:
        return None, exc.message()


class TargetsWidget(QGroupBox):
    """Edits ``doc.targets``; emits ``validity_changed`` when a field turns (in)valid."""

    validity_changed = Signal()

    def __init__(self, doc: Document, editor: Editor, parent: QWidget | None = None) -> None:
        super().__init__("Targets", parent)
        self._doc = doc
        self._editor = editor
        self._errors: dict[str, str | None] = {f: None for f in FIELDS}
        self._session = 0
        self._shown: dict[str, object] = {}
        form = QFormLayout(self)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        self.fields: dict[str, QLineEdit] = {}
        undo_keys = UndoKeys(editor.stack, self)  # Ctrl+Z in a field undoes the document
        for name in FIELDS:
            edit = QLineEdit()
            edit.setObjectName(f"target_{name}")
            edit.setToolTip(TIPS[name])
            edit.textEdited.connect(lambda text, n=name: self._edited(n, text))
            edit.editingFinished.connect(self._end_session)
            if name == "epsilon":
                edit.setPlaceholderText("(none)")
            self.fields[name] = edit
            undo_keys.watch(edit)
            form.addRow(TITLES[name], edit)
        self.neighbouring = QComboBox()
        self.neighbouring.setObjectName("target_neighbouring")
        for key, title in NEIGHBOURING.items():
            self.neighbouring.addItem(title, key)
            self.neighbouring.setItemData(self.neighbouring.count() - 1, NEIGHBOURING_TIPS[key],
                                          Qt.ItemDataRole.ToolTipRole)
        self.neighbouring.setToolTip(NEIGHBOURING_TIP)
        self.neighbouring.activated.connect(self._neighbouring_chosen)
        form.addRow("Neighbouring", self.neighbouring)
        self.group = QLineEdit()
        self.group.setObjectName("target_group_size")
        self.group.setToolTip(GROUP_TIP)
        self.group.textEdited.connect(self._group_edited)
        self.group.editingFinished.connect(self._end_session)
        undo_keys.watch(self.group)
        self._group_error: str | None = None
        self._group_shown: int | None = None
        form.addRow(GROUP_TITLE, self.group)
        # how the composition was tuned: a summary and the button that opens the dialog
        self.tuning_summary = QLabel("")
        self.tuning_summary.setObjectName("tuning_summary")
        self.tuning_summary.setWordWrap(True)
        self.tuning_button = QPushButton("Tuning…")
        self.tuning_button.setObjectName("tuning_button")
        self.tuning_button.setToolTip(TUNING_TIP)
        self.tuning_button.clicked.connect(self.edit_tuning)
        tuning_row = QHBoxLayout()
        tuning_row.addWidget(self.tuning_summary, 1)
        tuning_row.addWidget(self.tuning_button)
        form.addRow("Tuning", tuning_row)
        self.error_label = ErrorLabel()
        form.addRow(self.error_label)
        doc.subscribe(self._on_document)
        self.refresh()

    def detach(self) -> None:
        self._doc.unsubscribe(self._on_document)

    def error(self) -> str | None:
        """The first invalid target, e.g. ``Target δ must be a number (greater than 0 and less
        than 1); you typed "x"`` (the message names the field once)."""
        for name in FIELDS:
            if self._errors[name]:
                return self._errors[name]
        if self._group_error:
            return self._group_error
        return None

    def _end_session(self) -> None:
        self._session += 1

    def _edited(self, name: str, text: str) -> None:
        value, err = check_field(name, text)
        was = self.error()
        self._errors[name] = err
        mark(self.fields[name], err, TIPS[name])
        self.error_label.show_error(self.error())
        if err is None:
            t = self._doc.targets
            new = Targets(**{**{f: getattr(t, f) for f in FIELDS}, name: value})
            self._shown[name] = value
            self._editor.set_targets(new, merge_key=("targets", name, self._session))
        if (self.error() is None) != (was is None) or err is not None:
            self.validity_changed.emit()

    def _neighbouring_chosen(self, index: int) -> None:
        key = self.neighbouring.itemData(index)
        if key is not None and key != getattr(self._doc.neighbouring, "value", self._doc.neighbouring):
            self._session += 1
            self._editor.set_relation(neighbouring=key)

    def _group_edited(self, text: str) -> None:
        value, err = check_group_text(text)
        was = self.error()
        self._group_error = err
        mark(self.group, err, GROUP_TIP)
        self.error_label.show_error(self.error())
        if err is None:
            self._group_shown = value
            self._editor.set_relation(group_size=value, merge_key=("group_size", self._session))
        if (self.error() is None) != (was is None) or err is not None:
            self.validity_changed.emit()

    def edit_tuning(self) -> bool:
        """Open the Tuning dialog; accepting it sets the document's tuning (undoably)."""
        dialog = TuningDialog(self._doc.tuning, self)
        try:
            if dialog.exec() != QDialog.DialogCode.Accepted:
                return False
            return self._editor.set_tuning(dialog.tuning())
        finally:
            dialog.deleteLater()

    def _on_document(self, what: str, arg: object) -> None:
        if what == "reset":
            self._shown.clear()
            self._group_shown = None
        if what in ("targets", "reset", "relation", "tuning"):
            self.refresh()

    def refresh(self) -> None:
        """Show the document's targets; a field keeps its text while the document's value for it
        is the one it last showed or sent (so typing, valid or not, is never overwritten)."""
        t = self._doc.targets
        changed = False
        for name in FIELDS:
            value = getattr(t, name)
            if name in self._shown and self._shown[name] == value:
                continue
            self._shown[name] = value
            edit = self.fields[name]
            if value is None or not same_value(edit.text(), value):
                edit.setText("" if value is None else fmt_field(value))
            if self._errors[name] is not None:
                changed = True
                self._errors[name] = None
                mark(edit, None, TIPS[name])
        idx = self.neighbouring.findData(getattr(self._doc.neighbouring, "value", self._doc.neighbouring))
        self.neighbouring.setCurrentIndex(max(idx, 0))
        k = self._doc.group_size
        if self._group_shown != k:  # like the fields above: typing is never overwritten
            self._group_shown = k
            if not same_value(self.group.text(), k):
                self.group.setText(str(k))
            if self._group_error is not None:
                changed = True
                self._group_error = None
                mark(self.group, None, GROUP_TIP)
        tuning = self._doc.tuning
        text = "run once" if tuning is None else tuning.describe()
        # the long name of the negative binomial does not fit the form's row: abbreviated there,
        # in full in the tooltip
        self.tuning_summary.setText(text.replace("truncated negative binomial", "TNB"))
        self.tuning_summary.setToolTip(text)
        self.error_label.show_error(self.error())
        if changed:
            self.validity_changed.emit()
