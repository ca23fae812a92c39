"""prvgui: a desktop calculator for certified differential-privacy accounting.

From Python (see ``prvgui.api``): ``prvgui.load``, ``prvgui.Composition``, ``prvgui.epsilon``,
``prvgui.delta``. They are imported on first use, so that ``import prvgui`` stays light.
"""
import os

__version__ = "0.1.0"

_API = ("AccuracyWarning", "Bounds", "Composition", "accountant", "delta", "epsilon", "load", "save")
__all__ = ["__version__", *_API]

# The engine's arrays are long but its matrix products are small: one BLAS thread is enough,
# and NumPy then starts 10 ms faster and uses half the CPU time to import (measured). Only
# takes effect when prvgui is imported before NumPy; an explicit setting is kept.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def __getattr__(name: str):
    if name in _API:
        from . import api
        return getattr(api, name)
    raise AttributeError(f"module 'prvgui' has no attribute {name!r}")
