"""Targets: delta, the epsilon at which delta is reported, accuracy, neighbouring relation.

Typed text (``1e-5`` works) is validated as the user types. A valid value goes to the
document through the undo ``Editor``; an invalid one is marked on the field, stays in the
field only, and ``error()`` reports it so that nothing is computed until it is fixed.
"""
from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QComboBox, QFormLayout, QGroupBox, QLineEdit, QWidget

from ..accounting.validate import (DELTA_LABEL, EPS_ERROR_LABEL, EPS_ERROR_RANGE, check_delta,
                                   check_eps_error, check_epsilon, number_text)
from ..document.model import Document, Targets
from .fmt import fmt_field, parse_number, same_value
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
NEIGHBOURING = {"add_remove": "Add/remove one record"}


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
        for key, title in NEIGHBOURING.items():
            self.neighbouring.addItem(title, key)
        self.neighbouring.setToolTip("Neighbouring datasets differ by adding or removing one record. "
                                     "All mechanism parameters are for this relation.")
        form.addRow("Neighbouring", self.neighbouring)
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

    def _on_document(self, what: str, arg: object) -> None:
        if what == "reset":
            self._shown.clear()
        if what in ("targets", "reset"):
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
        idx = self.neighbouring.findData(self._doc.neighbouring)
        self.neighbouring.setCurrentIndex(max(idx, 0))
        self.error_label.show_error(self.error())
        if changed:
            self.validity_changed.emit()
