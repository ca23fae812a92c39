"""Certified differential-privacy accounting (NumPy and SciPy; no Qt, no files).

The public surface: mechanisms and rows (:mod:`.mechanisms`), the certified PRV
:class:`Accountant`, and :func:`compute` for everything a view needs at once.
"""
from .queries.accountant import Accountant
from .mechanisms import (MECHANISM_KINDS, ApproxDP, Gaussian, Laplace, Mechanism, Neighbouring,
                         PureDP, RandomizedResponse, Row, SubsampledGaussian, SubsampledLaplace,
                         mechanism_from_params)
from .core.values import Bounds

__all__ = ["Accountant", "Bounds", "Row", "Mechanism", "MECHANISM_KINDS", "Neighbouring", "mechanism_from_params",
           "Gaussian", "Laplace", "RandomizedResponse", "PureDP", "ApproxDP",
           "SubsampledGaussian", "SubsampledLaplace"]
