"""The one validator of numbers from users and files, and the query parameters built on it.

A message names the field by its label (what the form shows), says what would be accepted
and shows what was given, once:

    Sampling rate q must be between 0 and 1; you typed 1.5
    Target δ must be greater than 0 and less than 1; the file has 2
    Noise σ must be at most 1.8e308; you typed 1e400

The error (``NumberError``) keeps its parts, so that a file loader can say where the value was
(``row 2 (Gaussian), sigma: ...``) and that it was read, not typed (``message(IN_FILE)``).
Text that reads as a number too large for a float (``1e400``) is passed in as that text, so
that the message can show it as it was written.
"""
from __future__ import annotations

import math
import sys

import numpy as np

#: how a message introduces the value it was given
TYPED = "you typed"
IN_FILE = "the file has"
#: the largest number a float holds (about 1.8e308)
LARGEST = sys.float_info.max
#: a required value that was not given at all (a key missing from a file)
MISSING = object()
#: the labels of the query parameters, as the Targets form shows them
DELTA_LABEL = "Target δ"
EPSILON_LABEL = "ε"
EPS_ERROR_LABEL = "Accuracy (ε error)"
EPS_ERROR_RANGE = (1e-6, 10.0)


class NumberError(ValueError):
    """A value that is not an accepted number.

    ``label`` is the field's name for people, ``requirement`` what it must be ("between 0 and
    1"), ``value`` what was given, ``field`` the field's name in files and code (or None).
    ``str(err)`` is ``message(TYPED)``."""

    def __init__(self, label: str, requirement: str, value: object, field: str | None = None) -> None:
        self.label, self.requirement, self.value, self.field = label, requirement, value, field
        super().__init__(self.message())

    def message(self, source: str = TYPED) -> str:
        return f"{self.label} must be {self.requirement}; {given(self.value, source)}"


def show(value: object) -> str:
    """A value as a message shows it: numbers as written (1e-5, not 1e-05; 2, not 2.0), text
    in quotes (cut short when long), but a number too large for a float bare (1e400)."""
    if value is MISSING:
        return "nothing"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, np.integer)):
        text = str(int(value))
        return text if len(text) <= 30 else f"{text[:12]}…({len(text)} digits)"
    if isinstance(value, (float, np.floating)):
        return number_text(float(value))
    if isinstance(value, str):
        s = value.strip()
        s = s if len(s) <= 30 else s[:27] + "…"
        # a number a float cannot hold (1e400, typed or in a file) is shown bare; other text quoted
        return s if _numeral(value.strip()) and not math.isfinite(float(value.strip())) else f'"{s}"'
    if isinstance(value, (list, tuple)):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return repr(value)


def given(value: object, source: str = TYPED) -> str:
    """``you typed 1.5``, ``the file has 1.5``; an empty field or a missing key says so."""
    if value is MISSING:
        return "it is missing"
    if isinstance(value, str) and not value.strip():
        return "the field is empty" if source == TYPED else f'{source} ""'
    return f"{source} {show(value)}"


def number_text(x: float) -> str:
    """A float as people write it, exactly: 1e-5, 0.5, 2, 14063, 1e7, 1.5e20, inf."""
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    whole = x == int(x) and abs(x) < 1e16
    if whole and abs(x) < 1e6:
        return str(int(x))
    for digits in range(17):  # the shortest exact scientific form
        mant, exp = f"{x:.{digits}e}".split("e")
        if float(f"{mant}e{exp}") == x:
            break
    sci = f"{mant}e{int(exp)}"
    plain = str(int(x)) if whole else repr(x)
    return plain if "e" not in plain and len(plain) <= len(sci) else sci


def _numeral(s: str) -> bool:
    try:
        float(s)
    except ValueError:
        return False
    return True


def _as_float(value: object) -> float | None:
    """The number a value stands for: numbers, and text that reads as a number (which the
    caller rejects as text unless it is too large for a float); None otherwise."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, np.integer)):
        try:
            return float(value)
        except OverflowError:
            return math.inf if value > 0 else -math.inf
    if isinstance(value, (float, np.floating)):
        return float(value)
    if isinstance(value, str) and _numeral(value.strip()):
        return float(value.strip())
    return None


def range_text(lo: float = -math.inf, hi: float = math.inf, lo_open: bool = False,
               hi_open: bool = False) -> str:
    """``between 0 and 1``, ``at least 0``, ``greater than 0 and less than 1``; "" for no range."""
    low = f"{'greater than' if lo_open else 'at least'} {number_text(lo)}"
    high = f"{'less than' if hi_open else 'at most'} {number_text(hi)}"
    if math.isinf(lo) and math.isinf(hi):
        return ""
    if math.isinf(hi):
        return low
    if math.isinf(lo):
        return high
    if not lo_open and not hi_open:
        return f"between {number_text(lo)} and {number_text(hi)}"
    return f"{low} and {high}"


def check_number(label: str, value: object, lo: float = -math.inf, hi: float = math.inf,
                 lo_open: bool = False, hi_open: bool = False, field: str | None = None) -> float:
    """``value`` as a float if it is a finite real number in the range, else a ``NumberError``
    naming ``label``: ``Noise σ must be at least 0; you typed -1``."""
    rng = range_text(lo, hi, lo_open, hi_open)
    in_range = f" ({rng})" if rng else ""
    v = _as_float(value)
    if v is None or math.isnan(v):
        raise NumberError(label, f"a number{in_range}", value, field)
    if isinstance(value, str) and math.isfinite(v):  # "0.5" in a file: text, not a number
        raise NumberError(label, f"a number{in_range}, not text", value, field)
    if v < lo or v > hi or (lo_open and v == lo) or (hi_open and v == hi):
        raise NumberError(label, rng, value, field)
    if not math.isfinite(v):
        if isinstance(value, str) and value.strip().lstrip("+-").lower() not in ("inf", "infinity"):
            raise NumberError(label, f"at most {LARGEST:.2g}".replace("e+", "e"), value, field)  # 1e400
        raise NumberError(label, f"a finite number{in_range}", value, field)
    return v


def check_delta(delta: object, name: str = DELTA_LABEL) -> float:
    return check_number(name, delta, 0.0, 1.0, lo_open=True, hi_open=True, field="delta")


def check_epsilon(eps: object, name: str = EPSILON_LABEL) -> float:
    return check_number(name, eps, 0.0, field="epsilon")


def check_eps_error(eps_error: object, name: str = EPS_ERROR_LABEL) -> float:
    return check_number(name, eps_error, *EPS_ERROR_RANGE, field="eps_error")
