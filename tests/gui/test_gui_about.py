"""Help ▸ About lists exactly the libraries prvgui runs on, with their versions (issue 15, item 9)."""
import importlib
import re
import tomllib
from pathlib import Path

import pytest

pytestmark = pytest.mark.gui

ROOT = Path(__file__).resolve().parents[2]
#: distribution name in pyproject.toml -> the module it provides
MODULE_OF = {"pyside6-essentials": "PySide6", "pyside6": "PySide6"}


def runtime_modules() -> set[str]:
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["dependencies"]
    names = {re.split(r"[<>=!~;\[ ]", d, maxsplit=1)[0].strip().lower() for d in deps}
    return {MODULE_OF.get(n, n) for n in names}


def library_items(text: str) -> list[str]:
    """The "name version (licence)" items after "with these libraries: ", up to the full stop."""
    part = text.split("with these libraries: ", 1)[1].split(").", 1)[0] + ")"
    return re.findall(r"[^,]+? \S+ \([^)]*\)", part)


def test_about_lists_the_runtime_dependencies_with_versions(qtbot):
    from prvgui.gui.about import RUNTIME_LIBRARIES, AboutDialog
    dialog = AboutDialog()
    qtbot.addWidget(dialog)
    dialog.show()
    text = dialog.libraries.text()
    assert {module for _, module, _ in RUNTIME_LIBRARIES} == runtime_modules()
    items = library_items(text)
    assert len(items) == len(runtime_modules()) == 4
    for (name, module, _), item in zip(RUNTIME_LIBRARIES, items):
        version = importlib.import_module(module).__version__
        assert item.strip().startswith(f"{name} {version} ("), item
    for unused in ("mpmath", "matplotlib", "prv_accountant", "prv-accountant", "dp_accounting",
                   "dp-accounting", "hypothesis", "PyQt5", "PyQt6", "Opacus", "TensorFlow"):
        assert unused.lower() not in (text + dialog.body.text()).lower(), unused
    assert re.search(r"Python \d+\.\d+", text) and re.search(r"Qt \d+\.\d+", text)
    dialog.grab().save("/tmp/about.png")


def test_about_opens_even_if_a_version_cannot_be_read(qtbot, monkeypatch):
    from prvgui.gui import about
    monkeypatch.setattr(about, "RUNTIME_LIBRARIES", about.RUNTIME_LIBRARIES + (("Ghost", "no_such_module_x", "?"),))
    dialog = about.AboutDialog()
    qtbot.addWidget(dialog)
    assert "Ghost not found" in dialog.libraries.text()
