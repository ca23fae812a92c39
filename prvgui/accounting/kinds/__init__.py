"""The registry of mechanism kinds: every module of this package (but ``base`` and the private
``_*`` modules of derived pairs) defines one.

Adding a kind is adding a module here (and its tests): the file format, the command line,
the GUI's form and menus, calibration and the comparison accountants all read ``KINDS``.
A kind may import ``pairs`` and ``core`` (never the numerics or the queries: pyproject.toml's
import contracts); its pair and source are listed in docs/method.md, "Each kind's pair".
"""
from __future__ import annotations

import importlib
import pkgutil

from .base import Mechanism
from ..core.values import Neighbouring

__all__ = ["KINDS", "DPSGD_KIND", "Mechanism", "Neighbouring", "discover", "kind_class", "mechanism_from_params"]


def discover() -> dict[str, type[Mechanism]]:
    """Import every kind module of this package (its ``__path__``) and return its classes by
    kind name, in menu order."""
    found = []
    for info in pkgutil.iter_modules(__path__):
        if info.name == "base" or info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        classes = [v for v in vars(module).values() if isinstance(v, type) and issubclass(v, Mechanism)
                   and v.__module__ == module.__name__ and v.kind]
        if len(classes) != 1:
            raise ImportError(f"kind module {info.name} must define exactly one Mechanism subclass, "
                              f"found {len(classes)}")
        found.append(classes[0])
    found.sort(key=lambda c: (c.menu_order, c.kind))
    return {c.kind: c for c in found}


#: kind name -> class, in menu order
KINDS: dict[str, type[Mechanism]] = discover()


#: the kind of a DP-SGD training step (the DP-SGD helper makes rows of it)
DPSGD_KIND: str = next(k for k, c in KINDS.items() if c.dpsgd_step)


def kind_class(kind: object) -> type[Mechanism]:
    """The class of a kind name (untrusted input): a ValueError names the known kinds."""
    if not isinstance(kind, str) or kind not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(sorted(KINDS))}, got {kind!r}")
    return KINDS[kind]


def mechanism_from_params(kind: object, params: dict[str, object]) -> Mechanism:
    """Build a mechanism from a kind name and a parameter dict (untrusted input)."""
    return kind_class(kind).from_params(params)
