"""Files: New, Open, Save, Save As, recent files, examples, the unsaved-changes prompt, settings.

Loading and saving go through ``prvgui.api``, as in scripts (the file format,
``prvgui.document.fileio``, checks untrusted input and saves atomically). A file that cannot
be read leaves the current document untouched and shows the ``FileFormatError`` text. The dialogs are attributes (``ask_unsaved``, ``ask_open_path``,
``ask_save_path``, ``show_error``) so that tests can answer them.
"""
from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtCore import QObject, QSettings, Signal
from PySide6.QtGui import QAction, QUndoStack
from PySide6.QtWidgets import QFileDialog, QMenu, QMessageBox, QWidget

from .. import api
from ..document import fileio
from ..document.composition import Composition
from ..document.model import Document
from ..paths import examples

MAX_RECENT = 8
JSON_FILTER = "Composition files (*.json);;All files (*)"
EXAMPLE_TITLES = {"dpsgd_mnist": "DP-SGD on MNIST-like settings",
                  "census_laplace": "Census-style Laplace counts",
                  "mixed": "A mix of mechanisms"}


def settings() -> QSettings:
    """The application's settings (an INI file in the user's config folder)."""
    return QSettings(QSettings.Format.IniFormat, QSettings.Scope.UserScope, "prvgui", "prvgui")


class FileController(QObject):
    """Owns the document's file name and the file menu's actions."""

    path_changed = Signal()
    #: a file was opened (the path, or the example's path)
    opened = Signal(str)

    def __init__(self, parent: QWidget, doc: Document, stack: QUndoStack, persist: bool = True) -> None:
        super().__init__(parent)
        self._parent = parent
        self.doc = doc
        self.stack = stack
        self.persist = persist
        self.path: Path | None = None
        self.example: str | None = None
        self.ask_unsaved = self._ask_unsaved
        self.ask_open_path = self._ask_open_path
        self.ask_save_path = self._ask_save_path
        self.show_error = self._show_error
        #: returns a message if the inputs outside the document (e.g. a target field) are invalid
        self.check_inputs = lambda: None
        self.recent_menu: QMenu | None = None

    # ------------------------------------------------------------ names
    def display_name(self) -> str:
        if self.path is not None:
            return self.path.name
        if self.example:
            return f"{self.example} (example)"
        return "Untitled"

    def last_folder(self) -> str:
        folder = settings().value("last_folder", "") if self.persist else ""
        return str(folder) if folder and os.path.isdir(str(folder)) else str(Path.home())

    def remember_folder(self, path: str | os.PathLike) -> None:
        if self.persist:
            settings().setValue("last_folder", str(Path(path).resolve().parent))

    # ------------------------------------------------------------ dialogs (replaceable)
    def _ask_unsaved(self) -> str:
        box = QMessageBox(QMessageBox.Icon.Warning, "Unsaved changes",
                          f"Save the changes to {self.display_name()}?",
                          QMessageBox.StandardButton.Save | QMessageBox.StandardButton.Discard
                          | QMessageBox.StandardButton.Cancel, self._parent)
        box.setInformativeText("Your changes will be lost if you don't save them.")
        answer = box.exec()
        return {QMessageBox.StandardButton.Save: "save",
                QMessageBox.StandardButton.Discard: "discard"}.get(QMessageBox.StandardButton(answer),
                                                                   "cancel")

    def _ask_open_path(self) -> str | None:
        path, _ = QFileDialog.getOpenFileName(self._parent, "Open composition", self.last_folder(),
                                              JSON_FILTER)
        return path or None

    def _ask_save_path(self, title: str, name: str, filters: str) -> str | None:
        start = str(Path(self.last_folder()) / name)
        path, _ = QFileDialog.getSaveFileName(self._parent, title, start, filters)
        return path or None

    def _show_error(self, title: str, text: str) -> None:
        QMessageBox.critical(self._parent, title, text)

    # ------------------------------------------------------------ commands
    def maybe_save(self) -> bool:
        """True if it is fine to drop the current document (saved, discarded or unchanged)."""
        if self.stack.isClean():
            return True
        answer = self.ask_unsaved()
        if answer == "save":
            return self.save()
        return answer == "discard"

    def install_untitled(self, new: Document) -> None:
        """Show ``new`` as an untitled document, as File ▸ Open does for a file (File ▸ Import)."""
        self._install(new, None, None)

    def _install(self, new: Document, path: Path | None, example: str | None) -> None:
        self.doc.reset(list(new.rows), new.neighbouring, new.targets, new.group_size, new.tuning)
        self.stack.clear()
        self.stack.setClean()
        self.path, self.example = path, example
        self.path_changed.emit()

    def new(self) -> bool:
        if not self.maybe_save():
            return False
        self._install(Document(), None, None)
        return True

    def open(self, path: str | os.PathLike | None = None, ask: bool = True) -> bool:
        """Open a file (asking for one if ``path`` is None). Bad files keep the current document."""
        if ask and not self.maybe_save():
            return False
        if path is None:
            path = self.ask_open_path()
            if path is None:
                return False
        try:
            new = api.load(path).document()
        except fileio.FileFormatError as exc:
            self.show_error("Cannot open file", f"{Path(path).name}: {exc}")
            return False
        self._install(new, Path(path).resolve(), None)
        self.remember_folder(path)
        self.add_recent(str(Path(path).resolve()))
        self.opened.emit(str(path))
        return True

    def open_example(self, path: str | os.PathLike, ask: bool = True) -> bool:
        """Open a bundled example as an untitled copy (Save asks where to put it)."""
        if ask and not self.maybe_save():
            return False
        try:
            new = api.load(path).document()
        except fileio.FileFormatError as exc:
            self.show_error("Cannot open example", str(exc))
            return False
        self._install(new, None, Path(path).stem)
        self.opened.emit(str(path))
        return True

    def save(self) -> bool:
        if self.path is None:
            return self.save_as()
        return self._write(self.path)

    def save_as(self, path: str | os.PathLike | None = None) -> bool:
        if path is None:
            name = self.path.name if self.path else f"{self.example or 'composition'}.json"
            path = self.ask_save_path("Save composition", name, JSON_FILTER)
            if path is None:
                return False
        path = Path(path)
        if not path.suffix:
            path = path.with_suffix(".json")
        return self._write(path.resolve())

    def _write(self, path: Path) -> bool:
        errors = self.doc.errors()
        if errors:
            i, msg = errors[0]
            self.show_error("Cannot save", f"Fix row {i + 1} before saving: {msg}")
            return False
        if (msg := self.check_inputs()) is not None:
            self.show_error("Cannot save", f"Fix the targets before saving: {msg}")
            return False
        try:
            api.save(Composition.of(self.doc), path)
        except (OSError, ValueError) as exc:
            self.show_error("Cannot save", f"{path}: {getattr(exc, 'strerror', None) or exc}")
            return False
        self.stack.setClean()
        self.path, self.example = path, None
        self.remember_folder(path)
        self.add_recent(str(path))
        self.path_changed.emit()
        return True

    # ------------------------------------------------------------ recent files and examples
    def recent_files(self) -> list[str]:
        if not self.persist:
            return []
        value = settings().value("recent_files", [])
        if isinstance(value, str):
            value = [value]
        return [str(v) for v in (value or []) if v]

    def add_recent(self, path: str) -> None:
        if not self.persist:
            return
        files = [path] + [p for p in self.recent_files() if p != path]
        settings().setValue("recent_files", files[:MAX_RECENT])
        self.fill_recent_menu()

    def clear_recent(self) -> None:
        if self.persist:
            settings().setValue("recent_files", [])
        self.fill_recent_menu()

    def fill_recent_menu(self, menu: QMenu | None = None) -> None:
        if menu is not None:
            self.recent_menu = menu
        menu = self.recent_menu
        if menu is None:
            return
        menu.clear()
        files = self.recent_files()
        for i, path in enumerate(files):
            action = QAction(f"&{i + 1} {Path(path).name}", menu)
            action.setToolTip(path)
            action.setStatusTip(path)
            action.triggered.connect(lambda _=False, p=path: self.open(p))
            menu.addAction(action)
        if files:
            menu.addSeparator()
        clear = menu.addAction("Clear recent files")
        clear.setEnabled(bool(files))
        clear.triggered.connect(self.clear_recent)

    def fill_examples_menu(self, menu: QMenu) -> None:
        for path in examples():
            title = EXAMPLE_TITLES.get(path.stem, path.stem.replace("_", " "))
            action = menu.addAction(title)
            action.setStatusTip(str(path))
            action.setObjectName(f"example_{path.stem}")
            action.triggered.connect(lambda _=False, p=path: self.open_example(p))
