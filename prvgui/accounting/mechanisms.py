"""Rows of a composition, and the mechanism kinds they use.

A kind is a module of the ``kinds`` package (``kinds/__init__.py`` finds them); this module
re-exports the registry and adds what a composition row is: a mechanism run ``count`` times.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .kinds import DPSGD_KIND, KINDS, Mechanism, Neighbouring, kind_class, mechanism_from_params
from .kinds.approx_dp import ApproxDP
from .kinds.gaussian import Gaussian
from .kinds.laplace import Laplace
from .kinds.pure_dp import PureDP
from .kinds.randomized_response import RandomizedResponse
from .kinds.subsampled_gaussian import SubsampledGaussian
from .kinds.subsampled_laplace import SubsampledLaplace
from .validate import NumberError

__all__ = [
    "Mechanism", "Gaussian", "Laplace", "RandomizedResponse", "PureDP", "ApproxDP",
    "SubsampledGaussian", "SubsampledLaplace", "Row", "MECHANISM_KINDS", "Neighbouring",
    "kind_class", "mechanism_from_params", "check_count", "MAX_COUNT", "DPSGD_KIND",
]

#: kind name -> class (the registry, in menu order)
MECHANISM_KINDS = KINDS

MAX_COUNT = 10**9


def check_count(value: object, lo: int = 0, name: str = "Count", field: str | None = "count") -> int:
    """An integer count in [lo, MAX_COUNT] (integral floats such as 1e4 are accepted); a
    ``NumberError`` naming ``name`` otherwise."""
    whole = (isinstance(value, (int, np.integer)) and not isinstance(value, bool)) or (
        isinstance(value, float) and math.isfinite(value) and value == int(value))
    if not whole or not lo <= value <= MAX_COUNT:
        raise NumberError(name, f"a whole number from {lo} to {MAX_COUNT:,}", value, field)
    return int(value)


@dataclass(frozen=True, slots=True)
class Row:
    """One row of a composition: a mechanism self-composed ``count`` times."""

    mechanism: Mechanism
    count: int = 1

    def __post_init__(self) -> None:
        if not isinstance(self.mechanism, Mechanism):
            raise ValueError(f"mechanism must be a Mechanism, got {self.mechanism!r}")
        object.__setattr__(self, "count", check_count(self.count))
