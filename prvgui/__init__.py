"""prvgui: a desktop calculator for certified differential-privacy accounting.

From Python (see ``prvgui.api``): ``prvgui.load``, ``prvgui.Composition``, ``prvgui.epsilon``,
``prvgui.delta``. They are imported on first use, so that ``import prvgui`` stays light; it
changes nothing in the process (the ``prvgui`` command tunes its own, prvgui/tuning.py).
"""

__version__ = "0.1.0"

_API = ("AccuracyWarning", "Answer", "Bounds", "Composition", "accountant", "audit", "delta", "epsilon",
        "from_training", "load", "risk", "save", "statement")
__all__ = ["__version__", *_API]


def __getattr__(name: str):
    if name in _API:
        from . import api
        return getattr(api, name)
    raise AttributeError(f"module 'prvgui' has no attribute {name!r}")
