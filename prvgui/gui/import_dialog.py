"""File ▸ Import…: a composition from another accountant's description (a dp_accounting DpEvent, an
Opacus accountant's history, jax_privacy's DpParams; document/interop.py).

The dialog asks for the file and what it holds. Importing works as File ▸ Open does: unsaved changes
are offered for saving first (``FileController.maybe_save``), a file that cannot be imported leaves
the current document untouched and shows the message naming the problem, and an imported
composition replaces the document as an untitled one (Save asks where to put it). The notes on what
the import assumed (the relation chosen, conventions that differ) are shown after it. The questions
are module attributes (``ask_source_and_path``, ``show_notes``) so that tests can answer them.
"""
from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import (QComboBox, QDialog, QDialogButtonBox, QFileDialog, QFormLayout, QHBoxLayout,
                               QLabel, QLineEdit, QMessageBox, QPushButton, QVBoxLayout, QWidget)

from ..document import interop
from .files import FileController

FILTER = "JSON files (*.json);;All files (*)"


class ImportDialog(QDialog):
    """Asks for a file and its source; ``choice()`` is (source, path) when accepted."""

    def __init__(self, folder: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Import a composition")
        self.setObjectName("import_dialog")
        self.folder = folder
        lay = QVBoxLayout(self)
        intro = QLabel("Read a composition from another accountant's description. The rows are checked as "
                       "in a composition file; what cannot be mapped exactly is refused, with the reason.")
        intro.setWordWrap(True)
        lay.addWidget(intro)
        form = QFormLayout()
        self.source = QComboBox()
        self.source.setObjectName("import_source")
        for key in interop.SOURCES:
            self.source.addItem(interop.SOURCE_TITLES[key], key)
        form.addRow("File holds", self.source)
        row = QHBoxLayout()
        self.path = QLineEdit()
        self.path.setObjectName("import_path")
        self.path.setPlaceholderText("a .json file")
        browse = QPushButton("Browse…")
        browse.clicked.connect(self._browse)
        row.addWidget(self.path, 1)
        row.addWidget(browse)
        form.addRow("File", row)
        lay.addLayout(form)
        ok, cancel = QDialogButtonBox.StandardButton.Ok, QDialogButtonBox.StandardButton.Cancel
        self.buttons = QDialogButtonBox(ok | cancel)
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setText("Import")
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        lay.addWidget(self.buttons)
        self.path.textChanged.connect(self._update)
        self._update()

    def _browse(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Import from", self.path.text() or self.folder, FILTER)
        if path:
            self.path.setText(path)

    def _update(self) -> None:
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setEnabled(bool(self.path.text().strip()))

    def choice(self) -> tuple[str, str]:
        return str(self.source.currentData()), self.path.text().strip()


def _ask(files: FileController, parent: QWidget) -> tuple[str, str] | None:
    dialog = ImportDialog(files.last_folder(), parent)
    return dialog.choice() if dialog.exec() == QDialog.DialogCode.Accepted else None


def _notes(parent: QWidget, notes: tuple[str, ...]) -> None:
    box = QMessageBox(QMessageBox.Icon.Information, "Imported", "The composition was imported.",
                      parent=parent)
    box.setInformativeText("\n\n".join(notes))
    box.exec()


#: (files, parent) -> (source, path) or None; replaceable by tests
ask_source_and_path = _ask
#: (parent, notes) -> None, shown when an import has notes; replaceable by tests
show_notes = _notes


def import_composition(files: FileController, parent: QWidget, source: str | None = None,
                       path: str | None = None, ask: bool = True) -> bool:
    """Import a file into the window (asking for it when ``path`` is None); True if imported."""
    if ask and not files.maybe_save():
        return False
    if path is None or source is None:
        answer = ask_source_and_path(files, parent)
        if answer is None:
            return False
        source, path = answer
    try:
        imported = interop.read(path, source)
    except ValueError as exc:
        files.show_error("Cannot import file", f"{Path(path).name}: {exc}")
        return False
    files.install_untitled(imported.composition.document())  # as File ▸ Open, untitled
    files.remember_folder(path)
    if imported.notes:
        show_notes(parent, imported.notes)
    return True
