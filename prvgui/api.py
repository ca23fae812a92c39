"""prvgui from Python: load or build a composition and ask for certified epsilon or delta.

    import prvgui
    comp = prvgui.load("resources/examples/dpsgd_mnist.json")
    prvgui.epsilon(comp, delta=1e-5)        # Bounds(lower=..., estimate=..., upper=...)
    comp = prvgui.Composition.from_dict({"mechanisms": [
        {"kind": "laplace", "scale": 20.0, "count": 3, "label": "statistics"}]})
    prvgui.delta(comp, epsilon=2.0, eps_error=0.005)

The upper bound is the certified number to publish. When a bracket is wider than eps_error
asks for (float64 cannot resolve the delta, or the grid was capped), a ``AccuracyWarning``
says why. The command line uses these functions; the window loads and saves through them.
"""
from __future__ import annotations

import os
import warnings

from .accounting.accountant import Accountant
from .accounting.profile import Bounds
from .document import fileio
from .document.model import Composition

__all__ = ["AccuracyWarning", "Bounds", "Composition", "accountant", "delta", "epsilon", "load", "save"]


class AccuracyWarning(UserWarning):
    """A certified bracket is wider than the accuracy asked for; the message says why."""


def load(path: str | os.PathLike) -> Composition:
    """Read a composition file (untrusted: a ``FileFormatError`` names the bad field)."""
    return fileio.load_composition(path)


def save(comp: Composition, path: str | os.PathLike) -> None:
    """Write a composition file atomically (a temporary file, then a rename)."""
    fileio.save(comp, path)


def _composition(comp: Composition | dict) -> Composition:
    if isinstance(comp, Composition):
        return comp
    if isinstance(comp, dict):
        return Composition.from_dict(comp)
    raise TypeError(f"expected a prvgui.Composition or its dict, got {type(comp).__name__}")


def accountant(comp: Composition | dict, eps_error: float | None = None) -> Accountant:
    """The certified accountant of a composition (at its own eps_error unless one is given)."""
    comp = _composition(comp)
    err = comp.targets.eps_error if eps_error is None else eps_error
    return Accountant(comp.engine_rows(), err, comp.relation)


def _warn(acc: Accountant) -> None:
    for note in acc.warnings:
        warnings.warn(note, AccuracyWarning, stacklevel=3)


def epsilon(comp: Composition | dict, delta: float | None = None, eps_error: float | None = None) -> Bounds:
    """Certified bounds on epsilon at ``delta`` (default: the composition's target delta)."""
    comp = _composition(comp)
    acc = accountant(comp, eps_error)
    b = acc.epsilon(comp.targets.delta if delta is None else delta)
    _warn(acc)
    return b


def delta(comp: Composition | dict, epsilon: float, eps_error: float | None = None) -> Bounds:
    """Certified bounds on delta at ``epsilon``."""
    acc = accountant(comp, eps_error)
    b = acc.delta(epsilon)
    _warn(acc)
    return b
