"""The mechanism kinds and the rows that use them, in one import.

A kind is a module of the ``kinds`` package (``kinds/__init__.py`` finds them); a row is
``core.values.Row`` (a mechanism run ``count`` times). This module gathers the registry, the
kinds used most and the row for the layers above (queries, engine, document, GUI).
"""
from __future__ import annotations

from .kinds import DPSGD_KIND, KINDS, Mechanism, kind_class, mechanism_from_params
from .core.values import Neighbouring
from .kinds.approx_dp import ApproxDP
from .kinds.gaussian import Gaussian
from .kinds.laplace import Laplace
from .kinds.pure_dp import PureDP
from .kinds.randomized_response import RandomizedResponse
from .kinds.subsampled_gaussian import SubsampledGaussian
from .kinds.subsampled_laplace import SubsampledLaplace
from .core.values import MAX_COUNT, Row, check_count

__all__ = [
    "Mechanism", "Gaussian", "Laplace", "RandomizedResponse", "PureDP", "ApproxDP",
    "SubsampledGaussian", "SubsampledLaplace", "Row", "MECHANISM_KINDS", "Neighbouring",
    "kind_class", "mechanism_from_params", "check_count", "MAX_COUNT", "DPSGD_KIND",
]

#: kind name -> class (the registry, in menu order)
MECHANISM_KINDS = KINDS

