"""Small shared widgets: marking a field invalid, an error label, icons, filling a field."""
from __future__ import annotations

import html

from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QApplication, QLabel, QLineEdit, QStyle, QWidget

from ..paths import resource_dir
from .fmt import fmt_field, parse_number

INVALID_STYLE = "background: #ffe0e0; border: 1px solid #c62828; border-radius: 2px;"
ERROR_COLOR = "#b71c1c"
#: notes that qualify a result (a bracket wider than asked): amber, readable on white
WARN_COLOR = "#8a5a00"


def mark(widget: QWidget, error: str | None, tip: str = "") -> None:
    """Colour a field red and put the reason in its tooltip (or clear both)."""
    widget.setStyleSheet(INVALID_STYLE if error else "")
    widget.setProperty("invalid", bool(error))  # (Edit ▸ Undo undoes such a field's typing first)
    widget.setToolTip(f"<b>Invalid:</b> {html.escape(error)}<br>{html.escape(tip)}" if error else tip)


def fill(edit: QLineEdit, value: object) -> None:
    """Show a value the user did not type in this dialog's field (``fmt_field``: in full unless
    the app computed it); ``field_value`` gives the full value back while the text is unchanged."""
    text = "" if value is None else fmt_field(value)
    edit.setText(text)
    # (None: an empty field, which stands for its text like a field the user emptied)
    edit._filled = (text, value) if value is not None else None  # type: ignore[attr-defined]


def field_value(edit: QLineEdit) -> object:
    """What a field stands for: the value it was filled with while its text is unchanged, else
    the typed text as a number (``parse_number``: text that is not a number stays text)."""
    filled = getattr(edit, "_filled", None)
    if filled is not None and edit.text() == filled[0]:
        return filled[1]
    return parse_number(edit.text())


class ErrorLabel(QLabel):
    """Red text that hides itself when empty."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWordWrap(True)
        self.setStyleSheet(f"color: {ERROR_COLOR};")
        self.setTextFormat(self.textFormat().PlainText)
        self.hide()

    def show_error(self, text: str | None) -> None:
        self.setText(text or "")
        self.setVisible(bool(text))


def icon(name: str, fallback: QStyle.StandardPixmap | None = None) -> QIcon:
    """An icon from resources/icons/NAME.svg, else a standard one."""
    path = resource_dir() / "icons" / f"{name}.svg"
    if path.is_file():
        return QIcon(str(path))
    if fallback is not None:
        return QApplication.style().standardIcon(fallback)
    return QIcon()
