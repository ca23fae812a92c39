"""A list parameter (a pmf pair's probabilities, a privacy profile's points) edited one entry per
line: long lists do not fit a one-line field."""
from __future__ import annotations

from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QPlainTextEdit, QVBoxLayout, QWidget


def lines_of(text: str, points: bool) -> str:
    """A field's one-line text as one entry per line (``0.5, 0.5`` -> two lines; points split at
    semicolons)."""
    if points:
        parts = [p.strip() for p in text.replace("\n", ";").split(";")]
    else:
        parts = [p.strip() for p in text.replace("\n", ",").replace(" ", ",").split(",")]
    return "\n".join(p for p in parts if p)


def one_line(text: str, points: bool) -> str:
    """The editor's lines back as the field's one line (``parse_list`` reads both)."""
    parts = [line.strip() for line in text.splitlines() if line.strip()]
    return ("; " if points else ", ").join(parts)


class ListDialog(QDialog):
    """One entry per line: numbers, or "ε δ" pairs."""

    def __init__(self, title: str, text: str, points: bool, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"Edit {title}")
        self.points = points
        lay = QVBoxLayout(self)
        how = ("One point per line: ε and δ separated by a space, e.g. 1 1e-5" if points else
               "One number per line")
        lay.addWidget(QLabel(how))
        self.editor = QPlainTextEdit(lines_of(text, points))
        self.editor.setObjectName("list_lines")
        self.editor.setMinimumSize(320, 260)
        lay.addWidget(self.editor, 1)
        ok, cancel = QDialogButtonBox.StandardButton.Ok, QDialogButtonBox.StandardButton.Cancel
        buttons = QDialogButtonBox(ok | cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        lay.addWidget(buttons)

    def text(self) -> str:
        """The list as the field's one line."""
        return one_line(self.editor.toPlainText(), self.points)
