"""Static checks run with the suite (so the README's test command and CI see them): ruff
(pyflakes, the pycodestyle errors, bugbear; pyproject.toml [tool.ruff]) over the code, tests and
benchmarks, and mypy over the layers without Qt (accounting, document, engine; [tool.mypy])."""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.dirname(sys.executable)


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=600)


def test_ruff_finds_nothing():
    r = _run(os.path.join(BIN, "ruff"), "check", "--no-cache", "prvgui", "tests", "benchmarks", "packaging")
    assert r.returncode == 0, r.stdout + r.stderr


def test_mypy_finds_nothing_in_the_layers_without_qt():
    r = _run(sys.executable, "-m", "mypy", "prvgui/accounting", "prvgui/document", "prvgui/engine", "prvgui/sweep")
    assert r.returncode == 0, r.stdout + r.stderr
