"""The value types every layer shares: a bracket (``Bounds``), what a guarantee protects
(``Neighbouring``, ``Relation``), the orders of a dominating pair, and a composition's row
(``Row``: a mechanism run ``count`` times). Imports nothing of prvgui but ``validate``."""
from __future__ import annotations

import math
from dataclasses import dataclass
from enum import Enum
from typing import Any, Protocol, cast, runtime_checkable

import numpy as np

from .validate import NumberError


@dataclass(frozen=True, slots=True)
class Bounds:
    """lower <= estimate <= upper."""

    lower: float
    estimate: float
    upper: float

    def as_dict(self) -> dict[str, float]:
        return {"lower": self.lower, "estimate": self.estimate, "upper": self.upper}


class Neighbouring(str, Enum):
    """The neighbouring relation between datasets that a guarantee is stated for."""

    ADD_REMOVE = "add_remove"
    REPLACE_ONE = "replace_one"

    @classmethod
    def parse(cls, value: object, name: str = "neighbouring") -> "Neighbouring":
        try:
            return cls(value)
        except ValueError:
            choices = ", ".join(repr(m.value) for m in cls)
            raise ValueError(f"{name} must be one of {choices}, got {value!r}") from None


#: the largest group a person may contribute (group privacy); the mixture pairs of the
#: subsampled kinds have group_size + 1 components
MAX_GROUP = 1000


@dataclass(frozen=True)
class Relation:
    """What a guarantee protects: the neighbouring relation and the group size, i.e. the number
    of records one protected person may contribute (group / user-level privacy)."""

    neighbouring: Neighbouring = Neighbouring.ADD_REMOVE
    group_size: int = 1

    def __post_init__(self) -> None:
        object.__setattr__(self, "neighbouring", Neighbouring.parse(self.neighbouring))
        object.__setattr__(self, "group_size", check_group_size(self.group_size))

    @property
    def plain(self) -> bool:
        """Add/remove one record: the relation every kind's own pair is stated for."""
        return self.neighbouring is Neighbouring.ADD_REMOVE and self.group_size == 1

    @property
    def replace(self) -> bool:
        return self.neighbouring is Neighbouring.REPLACE_ONE

    def describe(self) -> str:
        """In words, e.g. 'replace one record, groups of 4 records'."""
        what = "replace one record" if self.replace else "add/remove one record"
        return what if self.group_size == 1 else f"{what}, groups of {self.group_size} records"


def check_group_size(value: object, name: str = "group_size") -> int:
    """An integer in [1, MAX_GROUP] (integral floats such as 4.0 are accepted)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or (
            isinstance(value, float) and (not math.isfinite(value) or value != int(value))) \
            or not 1 <= value <= MAX_GROUP:
        raise NumberError("Records per person", f"a whole number from 1 to {MAX_GROUP}", value, field=name)
    return int(value)


def as_relation(value: "Relation | Neighbouring | str | None") -> Relation:
    """A Relation from a Relation, a neighbouring relation (group of 1) or None (plain)."""
    if value is None:
        return PLAIN
    if isinstance(value, Relation):
        return value
    return Relation(Neighbouring.parse(value))


#: the plain relation: add/remove one record
PLAIN = Relation()

#: the two orders of a dominating pair (P, Q): "remove" is P = D, Q = D' with D' = D minus a
#: record; "add" is the swapped pair. Symmetric mechanisms have one PRV for both.
ORDERS = ("remove", "add")

MAX_COUNT = 10**9


def check_count(value: object, lo: int = 0, name: str = "Count", field: str | None = "count") -> int:
    """An integer count in [lo, MAX_COUNT] (integral floats such as 1e4 are accepted); a
    ``NumberError`` naming ``name`` otherwise."""
    whole = (isinstance(value, (int, np.integer)) and not isinstance(value, bool)) or (
        isinstance(value, float) and math.isfinite(value) and value == int(value))
    # (when ``whole``, value is an int, a numpy integer or an integral float)
    if not whole or not lo <= cast(float, value) <= MAX_COUNT:
        raise NumberError(name, f"a whole number from {lo} to {MAX_COUNT:,}", value, field)
    return int(cast(float, value))


@runtime_checkable
class Mechanism(Protocol):
    """What a row needs of its mechanism (``kinds.base.Mechanism`` is the one implementation;
    named here so that the value types need not import the kinds)."""

    kind: str

    def prv(self, order: str): ...

    def under(self, relation: Relation): ...

    def is_trivial(self) -> bool: ...


#: the classes whose instances passed the Mechanism check (the protocol names methods and a
#: class attribute, which every instance of a class that has them has)
_MECHANISM_TYPES: set[type] = set()


@dataclass(frozen=True, slots=True)
class Row:
    """One row of a composition: a mechanism self-composed ``count`` times."""

    mechanism: Any  # a kinds.base.Mechanism (checked against the protocol above)
    count: int = 1

    def __post_init__(self) -> None:
        kind = type(self.mechanism)
        if kind not in _MECHANISM_TYPES:  # (the protocol's isinstance walks its members: 30 us)
            if not isinstance(self.mechanism, Mechanism):
                raise ValueError(f"mechanism must be a Mechanism, got {self.mechanism!r}")
            _MECHANISM_TYPES.add(kind)
        object.__setattr__(self, "count", check_count(self.count))
