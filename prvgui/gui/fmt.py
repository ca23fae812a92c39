"""Parsing typed text and formatting numbers for display. No Qt, no numerics (the parameters'
titles, units and symbols come from their kinds' declarations).

User input is untrusted: ``parse_number`` never raises. Text that is not a finite number is
returned unchanged, so that the document's own validation (``RowSpec.error()``) produces
the message shown to the user with the text as typed, e.g.
``Noise σ must be a number (at least 0); you typed "abc"`` or
``Noise σ must be at most 1.8e308; you typed 1e400``.
"""
from __future__ import annotations

import math

from ..accounting.mechanisms import MECHANISM_KINDS
from ..accounting.core.validate import show
from ..document.list_csv import list_summary  # noqa: F401  (the table's words for a list)
from ..report.numbers import fmt, fmt_bound  # noqa: F401  (one rule for the window and reports)

POISSON_NOTE = "Poisson sampling (each record independently with probability q)"


def _spec(kind: str, name: str):
    cls = MECHANISM_KINDS.get(kind)
    return None if cls is None else cls.param_specs().get(name)


def field_text(kind: str, name: str) -> tuple[str, str]:
    """(title, unit) for a parameter of a kind (its ``param`` declaration)."""
    spec = _spec(kind, name)
    return (spec.title, spec.unit) if spec is not None else (name, "")


def parse_number(text: object) -> object:
    """A float for text that reads as a finite number (``1e-5``, ``0.5``), else the text (``abc``,
    ``inf``, ``1e400``: the validators reject it and show it as typed)."""
    if not isinstance(text, str):
        return text
    s = text.strip()
    try:
        v = float(s)
    except ValueError:
        return text
    return v if math.isfinite(v) else text


def parse_count(text: object) -> object:
    """An int for text that reads as a whole number (``1e6`` included), else what was typed."""
    v = parse_number(text)
    if isinstance(v, float) and math.isfinite(v) and v == int(v):
        return int(v)
    return v


def same_value(text: str, value: object) -> bool:
    """True if the typed text already stands for ``value`` (so a refresh must not rewrite it)."""
    parsed = parse_number(text)
    if isinstance(parsed, float) and isinstance(value, (int, float)) and not isinstance(value, bool):
        return parsed == value or (math.isnan(parsed) and math.isnan(value))
    return parsed == value or text == value


def fmt_value(value: object) -> str:
    """A parameter value as editable text (round-trips through parse_number)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, int):
        return str(value)
    if math.isfinite(value) and value == int(value) and abs(value) < 1e15:
        return str(int(value))
    return repr(value)


#: significant digits of a value shown in a field that the user did not type (from a file, the
#: DP-SGD helper, an undo)
FIELD_DIGITS = 6
#: a value with at most this many significant digits is shown as it is: people type no more, so
#: a value the user typed comes back digit for digit when the field shows it again
TYPED_DIGITS = 9


def significant_digits(value: float) -> int:
    """Significant digits of the shortest text that gives ``value`` back (repr)."""
    mant = repr(abs(value)).split("e")[0].replace(".", "").lstrip("0")
    return len(mant.rstrip("0")) if mant else 1


def fmt_field(value: object) -> str:
    """A parameter value as a field shows it: a value with more than ``TYPED_DIGITS``
    significant digits (the app computed it: a file written by it, the DP-SGD helper) shows
    ``FIELD_DIGITS`` of them (0.004266666666666667 shows as 0.00426667); a shorter one, such as
    anything the user typed, shows in full. The field's text is only a view: the document keeps
    the full value until the user edits the field. Whole numbers are shown whole."""
    if isinstance(value, float) and math.isfinite(value) and value != int(value) \
            and significant_digits(value) > TYPED_DIGITS:
        return f"{value:.{FIELD_DIGITS}g}"
    return fmt_value(value)


def fmt_count(x: object) -> str:
    if isinstance(x, int) and not isinstance(x, bool):
        return f"{x:,}".replace(",", "\u202f")  # narrow no-break space: a count never wraps
    return str(x)


def param_summary(kind: str, params: dict) -> str:
    """``σ=1.1, q=0.004267`` for the table's Parameters column."""
    parts = []
    for name, value in params.items():
        spec = _spec(kind, name)
        if isinstance(value, (list, tuple)):  # a list parameter: its length, not its entries
            parts.append(list_summary(spec, name, value))
            continue
        choices = dict(getattr(spec, "choices", ()))
        if value in choices:  # a named choice: its words up to the colon ("Fixed size"), not key=value
            if value != spec.initial:
                parts.append(choices[value].split(":")[0].lower())
            continue
        sym = (spec.symbol or name) if spec is not None else name
        number = isinstance(value, (int, float)) and not isinstance(value, bool)
        text = fmt(value, 6) if number else show(value)  # text as typed: "abc" in quotes, 1e400 bare
        parts.append(f"{sym}={text}")
    return ", ".join(parts)
