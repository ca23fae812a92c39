"""Where the bundled resources (examples, icons) live, installed or in a checkout."""
from __future__ import annotations

from pathlib import Path


def resource_dir() -> Path:
    try:
        from importlib.resources import files
        p = Path(str(files("prvgui.resources")))
        if p.is_dir():
            return p
    except (ImportError, ModuleNotFoundError, TypeError):
        pass
    return Path(__file__).resolve().parent.parent / "resources"


def examples() -> list[Path]:
    return sorted((resource_dir() / "examples").glob("*.json"))
