"""The one validator of numbers from users and files, and the query parameters built on it.

Every message starts with the field's name and shows the value that was given, e.g.
``sigma must be >= 0, got -1`` or ``delta must be in (0, 1), got 2``.
"""
from __future__ import annotations

import math

import numpy as np


def check_number(name: str, value: object, lo: float = -math.inf, hi: float = math.inf,
                 lo_open: bool = False, hi_open: bool = False) -> float:
    """``value`` as a float if it is a finite real number in the range, else a ValueError whose
    message starts with ``name`` and shows the value (``sigma must be >= 0, got -1``)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ValueError(f"{name} must be a number, got {value!r}")
    v = float(value)
    if not math.isfinite(v):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    if v < lo or v > hi or (lo_open and v == lo) or (hi_open and v == hi):
        raise ValueError(f"{name} must be {_range_text(lo, hi, lo_open, hi_open)}, got {value!r}")
    return v


def _range_text(lo: float, hi: float, lo_open: bool, hi_open: bool) -> str:
    if math.isinf(hi):
        return f"{'>' if lo_open else '>='} {lo:g}"
    if math.isinf(lo):
        return f"{'<' if hi_open else '<='} {hi:g}"
    return f"in {'(' if lo_open else '['}{lo:g}, {hi:g}{')' if hi_open else ']'}"


def check_delta(delta: object, name: str = "delta") -> float:
    return check_number(name, delta, 0.0, 1.0, lo_open=True, hi_open=True)


def check_epsilon(eps: object, name: str = "epsilon") -> float:
    return check_number(name, eps, 0.0)


def check_eps_error(eps_error: object, name: str = "eps_error") -> float:
    return check_number(name, eps_error, 1e-6, 10.0)
