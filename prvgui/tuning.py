"""Process tuning for the ``prvgui`` command (cli.main applies it; importing the library never does).

A run of the command is short and spends much of its time starting up, so three settings of the
process pay for it. Each can be switched off through the environment:

* One OpenBLAS thread (``OPENBLAS_NUM_THREADS=1``). The engine's arrays are long but its matrix
  products are small; by default OpenBLAS starts a thread per CPU when NumPy is imported, and
  those threads cost start-up time and spin on the CPU. Takes effect only when set before NumPy
  is first imported; an explicit setting is kept.
* No garbage collection while NumPy and the package are imported. The imports create tens of
  thousands of long-lived objects (modules, functions, classes) and no garbage cycles, and the
  collector would walk them again and again. ``pause_collection`` stops it for the imports and
  ``resume_collection`` moves every object alive then into the permanent generation (gc.freeze,
  made for this) before restarting it; those objects are never collected as cycles.
  ``PRVGUI_GC_FREEZE=0`` leaves the collector alone.
* Freed heap memory kept for reuse (glibc only; a no-op elsewhere). The engine works on many
  temporary arrays of a few megabytes; glibc gives such blocks back to the kernel as soon as
  they are freed, and the next array page-faults its memory in again, which costs as much as
  the arithmetic on it. Raising malloc's top pad keeps up to ``PAD`` bytes of freed memory in
  the process. ``PRVGUI_HEAP_PAD=0`` leaves malloc alone.
"""
from __future__ import annotations

import gc
import os
import sys
from contextlib import contextmanager
from typing import Iterator

PAD = 64 << 20
_M_TOP_PAD = -2  # glibc's mallopt parameter number


def limit_blas_threads() -> None:
    """One OpenBLAS thread unless the environment says otherwise (call before importing NumPy)."""
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def keep_freed_memory() -> bool:
    """Ask glibc's malloc to keep up to PAD bytes of freed memory; True if it agreed."""
    if not sys.platform.startswith("linux") or os.environ.get("PRVGUI_HEAP_PAD") == "0":
        return False
    try:
        import ctypes
        libc = ctypes.CDLL("libc.so.6")
        return bool(libc.mallopt(_M_TOP_PAD, PAD))
    except (OSError, AttributeError):  # not glibc (musl, ...)
        return False


def pause_collection() -> bool | None:
    """Stop the cyclic garbage collector for the imports; returns what resume_collection needs
    (None: left alone)."""
    if os.environ.get("PRVGUI_GC_FREEZE") == "0":
        return None
    enabled = gc.isenabled()
    gc.disable()
    return enabled


def resume_collection(state: bool | None) -> None:
    """Freeze the objects made so far and restart the collector if it ran before."""
    if state is None:
        return
    gc.freeze()
    if state:
        gc.enable()


@contextmanager
def tuned_startup() -> Iterator[None]:
    """All three settings around the block that imports what the command needs."""
    limit_blas_threads()
    state = pause_collection()
    try:
        yield
    finally:
        resume_collection(state)
    keep_freed_memory()
