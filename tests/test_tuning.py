"""Importing the library leaves the process alone; the ``prvgui`` command tunes it (tuning.py)."""
import json
import os
import platform
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TUNING_ENV = ("OPENBLAS_NUM_THREADS", "PRVGUI_GC_FREEZE", "PRVGUI_HEAP_PAD")


def run_python(code: str, env: dict | None = None) -> dict:
    """Run ``code`` in a fresh interpreter without the tuning switches (plus ``env``); its last
    line of output is JSON."""
    run_env = {k: v for k, v in os.environ.items() if k not in TUNING_ENV} | (env or {})
    run_env["PYTHONPATH"] = ROOT
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=run_env,
                       cwd=ROOT, timeout=120)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("module", ["prvgui", "prvgui.accounting", "prvgui.document"])
@pytest.mark.parametrize("gc_on", [True, False])
def test_importing_the_library_changes_nothing_in_the_process(module, gc_on):
    code = f"""
import gc, json, os, sys
{'' if gc_on else 'gc.disable()'}
env, enabled = dict(os.environ), gc.isenabled()
import {module}
print(json.dumps({{
    "env_changed": sorted(k for k in env.keys() | os.environ.keys() if env.get(k) != os.environ.get(k)),
    "gc_enabled_changed": gc.isenabled() != enabled,
    "freeze_count": gc.get_freeze_count(),
    "tuning_imported": "prvgui.tuning" in sys.modules}}))
"""
    assert run_python(code) == {"env_changed": [], "gc_enabled_changed": False, "freeze_count": 0,
                                "tuning_imported": False}


def test_the_cli_module_imports_no_numpy():
    # main() must set OPENBLAS_NUM_THREADS before NumPy is first imported
    code = "import json, sys, prvgui.cli; print(json.dumps('numpy' in sys.modules))"
    assert run_python(code) is False


COMMAND = """
import contextlib, gc, io, json, os, sys
{before}
sys.argv = ["prvgui", "--help"]
from prvgui.cli import main
with contextlib.redirect_stdout(io.StringIO()):
    rc = {call}
print(json.dumps({{"rc": rc, "blas": os.environ.get("OPENBLAS_NUM_THREADS"),
                  "frozen": gc.get_freeze_count() > 0, "gc_enabled": gc.isenabled()}}))
"""


@pytest.mark.parametrize("env,before,blas,frozen,gc_enabled", [
    ({}, "", "1", True, True),
    ({"PRVGUI_GC_FREEZE": "0"}, "", "1", False, True),
    ({"OPENBLAS_NUM_THREADS": "3"}, "", "3", True, True),
    ({}, "gc.disable()", "1", True, False),
])
def test_the_command_tunes_its_process(env, before, blas, frozen, gc_enabled):
    out = run_python(COMMAND.format(before=before, call="main()"), env)
    assert out == {"rc": 0, "blas": blas, "frozen": frozen, "gc_enabled": gc_enabled}


def test_main_with_arguments_leaves_the_process_alone():
    out = run_python(COMMAND.format(before="", call="main(['--help'])"))
    assert out == {"rc": 0, "blas": None, "frozen": False, "gc_enabled": True}


def test_heap_pad_is_set_on_glibc_and_can_be_switched_off(monkeypatch):
    from prvgui.tuning import keep_freed_memory
    monkeypatch.setenv("PRVGUI_HEAP_PAD", "0")
    assert keep_freed_memory() is False
    monkeypatch.delenv("PRVGUI_HEAP_PAD")
    assert keep_freed_memory() is (platform.libc_ver()[0] == "glibc")
