"""Small shared widgets: marking a field invalid, an error label, icons."""
from __future__ import annotations

from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QApplication, QLabel, QStyle, QWidget

from ..paths import resource_dir

INVALID_STYLE = "background: #ffe0e0; border: 1px solid #c62828; border-radius: 2px;"
ERROR_COLOR = "#b71c1c"
#: notes that qualify a result (a bracket wider than asked): amber, readable on white
WARN_COLOR = "#8a5a00"


def mark(widget: QWidget, error: str | None, tip: str = "") -> None:
    """Colour a field red and put the reason in its tooltip (or clear both)."""
    widget.setStyleSheet(INVALID_STYLE if error else "")
    widget.setToolTip(f"<b>Invalid:</b> {error}<br>{tip}" if error else tip)


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
