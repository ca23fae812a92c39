"""Freed heap memory handed back to the system during a streamed composition (glibc only).

A streamed composition (pipeline.discretize_many: many rows, each discretised again when its
group takes it) frees and allocates arrays of a few kB to a few MB by the million. glibc's
allocator keeps freed blocks in its heap for reuse, and blocks of many sizes leave it
fragmented: the process's resident size creeps up while the live data does not (3 x 10^4
discrete Gaussians at delta 1e-10: tracemalloc sees the traced total flat while the resident
size grows from 0.40 to 0.76 GB). ``malloc_trim(0)`` returns the free pages inside the heap to
the kernel (glibc >= 2.8 releases whole free pages anywhere in it, not only at its top); it
frees nothing that is in use, and changes no setting of the allocator. ``give_back`` calls it,
at most once every TRIM_SECONDS, where a streamed composition has let much go; elsewhere (musl,
macOS, Windows) it does nothing. The cost is a walk over the heap (about a millisecond a
hundred MB) and the page faults of memory asked for again."""
from __future__ import annotations

import sys
import time

#: give_back trims at most this often (a trim walks the whole heap)
TRIM_SECONDS = 0.5

_state: dict = {"libc": None, "last": -1e9}


def _trim_function():
    if _state["libc"] is None:
        fn = False
        if sys.platform.startswith("linux"):
            try:
                import ctypes
                fn = ctypes.CDLL("libc.so.6").malloc_trim
                fn.argtypes = [ctypes.c_size_t]
                fn.restype = ctypes.c_int
            except (OSError, AttributeError):  # not glibc (musl, ...)
                fn = False
        _state["libc"] = fn
    return _state["libc"]


def give_back(force: bool = False) -> bool:
    """Return the heap's free pages to the system (glibc's malloc_trim), unless the last time
    was less than TRIM_SECONDS ago (``force``: whatever the time); True when it trimmed."""
    now = time.monotonic()
    if not force and now - _state["last"] < TRIM_SECONDS:
        return False
    fn = _trim_function()
    if not fn:
        return False
    _state["last"] = now
    fn(0)
    return True
