"""Mechanisms as validated, immutable values.

Each mechanism knows its parameters and nothing about numerics beyond building
its privacy loss random variables (PRVs, see :mod:`prvgui.accounting.prv`).
Validation follows one rule: every parameter must be a finite real number in its
range (``math.isfinite`` first, so NaN never slips through a comparison), and
the error message names the field and the value.

Neighbouring relation: all parameters are for *add/remove-one* adjacency. A
mechanism whose two orders of the neighbouring pair differ (Poisson
subsampling) returns a different PRV for ``order="add"`` (the swapped pair);
symmetric mechanisms return the same one.
"""
from __future__ import annotations

import math
from typing import ClassVar

import numpy as np

from . import prv as _prv
from .record import MISSING, Record, fields

__all__ = [
    "Mechanism", "Gaussian", "Laplace", "RandomizedResponse", "PureDP", "ApproxDP",
    "SubsampledGaussian", "SubsampledLaplace", "Row", "MECHANISM_KINDS", "mechanism_from_params",
]


def _check_real(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{name} must be a number, got {value!r}")
    v = float(value)
    if not math.isfinite(v):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    return v


def _positive(name: str, value: object, allow_zero: bool = False) -> float:
    v = _check_real(name, value)
    if v < 0 or (v == 0 and not allow_zero):
        rng = ">= 0" if allow_zero else "> 0"
        raise ValueError(f"{name} must be {rng}, got {value!r}")
    return v


def _rate(name: str, value: object) -> float:
    v = _check_real(name, value)
    if not 0.0 <= v <= 1.0:
        raise ValueError(f"{name} must be in [0, 1], got {value!r}")
    return v


class Mechanism(Record):
    """Base class. Subclasses are frozen records (record.py) with a ``kind`` tag."""

    kind: ClassVar[str] = ""
    #: parameter name -> (unit/short description) for forms and docs
    PARAMS: ClassVar[dict[str, str]] = {}
    symmetric: ClassVar[bool] = True

    def params(self) -> dict[str, float]:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def prv(self, order: str = "remove") -> _prv.PRV:
        """Privacy loss random variable Y of one run, for the given order of the pair."""
        raise NotImplementedError

    def is_trivial(self) -> bool:
        """True if the mechanism leaks nothing (Y = 0 almost surely)."""
        return False

    def is_blatant(self) -> bool:
        """True if the mechanism is not private at all (Y = +inf with probability 1)."""
        return False

    def eps_delta(self) -> tuple[float, float] | None:
        """An (epsilon, delta) description if the mechanism has a natural one."""
        return None


class Gaussian(Mechanism):
    sigma: float
    sensitivity: float = 1.0
    kind: ClassVar[str] = "gaussian"
    PARAMS: ClassVar[dict[str, str]] = {
        "sigma": "standard deviation of the added noise (same units as the sensitivity)",
        "sensitivity": "L2 sensitivity of the query (default 1)",
    }

    def __post_init__(self) -> None:
        object.__setattr__(self, "sigma", _positive("sigma", self.sigma, allow_zero=True))
        object.__setattr__(self, "sensitivity", _positive("sensitivity", self.sensitivity, True))

    @property
    def mu(self) -> float:
        """GDP parameter sensitivity / sigma (inf for sigma = 0)."""
        if self.sensitivity == 0:
            return 0.0
        return math.inf if self.sigma == 0 else self.sensitivity / self.sigma

    def is_trivial(self) -> bool:
        return self.mu == 0

    def is_blatant(self) -> bool:
        return math.isinf(self.mu)

    def prv(self, order: str = "remove") -> _prv.PRV:
        return _prv.gaussian(self.mu)


class Laplace(Mechanism):
    scale: float
    sensitivity: float = 1.0
    kind: ClassVar[str] = "laplace"
    PARAMS: ClassVar[dict[str, str]] = {
        "scale": "Laplace scale b of the added noise (same units as the sensitivity)",
        "sensitivity": "L1 sensitivity of the query (default 1)",
    }

    def __post_init__(self) -> None:
        object.__setattr__(self, "scale", _positive("scale", self.scale, allow_zero=True))
        object.__setattr__(self, "sensitivity", _positive("sensitivity", self.sensitivity, True))

    @property
    def eps0(self) -> float:
        if self.sensitivity == 0:
            return 0.0
        return math.inf if self.scale == 0 else self.sensitivity / self.scale

    def is_trivial(self) -> bool:
        return self.eps0 == 0

    def is_blatant(self) -> bool:
        return math.isinf(self.eps0)

    def eps_delta(self) -> tuple[float, float]:
        return (self.eps0, 0.0)

    def prv(self, order: str = "remove") -> _prv.PRV:
        return _prv.laplace(self.eps0)


class _PureLike(Mechanism):
    epsilon: float
    PARAMS: ClassVar[dict[str, str]] = {"epsilon": "privacy parameter epsilon (nats)"}

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", _positive("epsilon", self.epsilon, allow_zero=True))

    def is_trivial(self) -> bool:
        return self.epsilon == 0

    def eps_delta(self) -> tuple[float, float]:
        return (self.epsilon, 0.0)

    def prv(self, order: str = "remove") -> _prv.PRV:
        return _prv.randomized_response(self.epsilon)


class RandomizedResponse(_PureLike):
    """Binary randomized response reporting the true bit with probability e^eps/(1+e^eps)."""

    kind: ClassVar[str] = "randomized_response"


class PureDP(_PureLike):
    """Any epsilon-DP mechanism; its worst-case PRV is randomized response (KOV 2015)."""

    kind: ClassVar[str] = "pure_dp"


class ApproxDP(Mechanism):
    """Any (epsilon, delta)-DP mechanism, via its dominating pair (PRV paper, App. B)."""

    epsilon: float
    delta: float
    kind: ClassVar[str] = "approx_dp"
    PARAMS: ClassVar[dict[str, str]] = {
        "epsilon": "privacy parameter epsilon (nats)",
        "delta": "privacy parameter delta (probability, in [0, 1])",
    }

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", _positive("epsilon", self.epsilon, allow_zero=True))
        object.__setattr__(self, "delta", _rate("delta", self.delta))

    def is_trivial(self) -> bool:
        return self.epsilon == 0 and self.delta == 0

    def is_blatant(self) -> bool:
        return self.delta == 1

    def eps_delta(self) -> tuple[float, float]:
        return (self.epsilon, self.delta)

    def prv(self, order: str = "remove") -> _prv.PRV:
        return _prv.approx_dp(self.epsilon, self.delta)


class SubsampledGaussian(Mechanism):
    """Gaussian mechanism on a Poisson subsample (one DP-SGD step)."""

    sigma: float
    sampling_rate: float
    sensitivity: float = 1.0
    kind: ClassVar[str] = "subsampled_gaussian"
    symmetric: ClassVar[bool] = False
    PARAMS: ClassVar[dict[str, str]] = {
        "sigma": "noise multiplier: noise standard deviation / clipping norm",
        "sampling_rate": "Poisson sampling probability q of each record per step",
        "sensitivity": "clipping norm in units of the noise scale (default 1)",
    }

    def __post_init__(self) -> None:
        object.__setattr__(self, "sigma", _positive("sigma", self.sigma, allow_zero=True))
        object.__setattr__(self, "sampling_rate", _rate("sampling_rate", self.sampling_rate))
        object.__setattr__(self, "sensitivity", _positive("sensitivity", self.sensitivity, True))

    def is_trivial(self) -> bool:
        return self.sampling_rate == 0 or self.sensitivity == 0

    def is_blatant(self) -> bool:
        return self.sigma == 0 and self.sampling_rate == 1 and not self.is_trivial()

    def prv(self, order: str = "remove") -> _prv.PRV:
        s = math.inf if self.sigma == 0 else self.sigma / self.sensitivity
        return _prv.subsampled_gaussian(s, self.sampling_rate, order)


class SubsampledLaplace(Mechanism):
    """Laplace mechanism on a Poisson subsample."""

    scale: float
    sampling_rate: float
    sensitivity: float = 1.0
    kind: ClassVar[str] = "subsampled_laplace"
    symmetric: ClassVar[bool] = False
    PARAMS: ClassVar[dict[str, str]] = {
        "scale": "Laplace scale b of the added noise",
        "sampling_rate": "Poisson sampling probability q of each record",
        "sensitivity": "L1 sensitivity of the query (default 1)",
    }

    def __post_init__(self) -> None:
        object.__setattr__(self, "scale", _positive("scale", self.scale, allow_zero=True))
        object.__setattr__(self, "sampling_rate", _rate("sampling_rate", self.sampling_rate))
        object.__setattr__(self, "sensitivity", _positive("sensitivity", self.sensitivity, True))

    @property
    def eps0(self) -> float:
        if self.sensitivity == 0:
            return 0.0
        return math.inf if self.scale == 0 else self.sensitivity / self.scale

    def is_trivial(self) -> bool:
        return self.sampling_rate == 0 or self.eps0 == 0

    def is_blatant(self) -> bool:
        return math.isinf(self.eps0) and self.sampling_rate == 1

    def eps_delta(self) -> tuple[float, float]:
        # amplification by subsampling of a pure eps0-DP mechanism
        if math.isinf(self.eps0):  # no noise: the sampled record is revealed
            return (0.0, self.sampling_rate)
        q = self.sampling_rate
        if q == 0:
            return (0.0, 0.0)
        return (float(np.logaddexp(math.log(q) + self.eps0, math.log1p(-q))) if q < 1 else self.eps0, 0.0)

    def prv(self, order: str = "remove") -> _prv.PRV:
        return _prv.subsampled_laplace(self.eps0, self.sampling_rate, order)


MECHANISM_KINDS: dict[str, type[Mechanism]] = {
    cls.kind: cls
    for cls in (Gaussian, Laplace, RandomizedResponse, PureDP, ApproxDP,
                SubsampledGaussian, SubsampledLaplace)
}

MAX_COUNT = 10**9


def check_count(value: object, lo: int = 0, name: str = "count") -> int:
    """An integer count in [lo, MAX_COUNT] (integral floats such as 1e4 are accepted)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or (
            isinstance(value, float) and (not math.isfinite(value) or value != int(value))):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    if not lo <= value <= MAX_COUNT:
        raise ValueError(f"{name} must be an integer in [{lo}, {MAX_COUNT}], got {value!r}")
    return int(value)


class Row(Record):
    """One row of a composition: a mechanism self-composed ``count`` times."""

    mechanism: Mechanism
    count: int = 1

    def __post_init__(self) -> None:
        if not isinstance(self.mechanism, Mechanism):
            raise ValueError(f"mechanism must be a Mechanism, got {self.mechanism!r}")
        object.__setattr__(self, "count", check_count(self.count))


def mechanism_from_params(kind: str, params: dict[str, object]) -> Mechanism:
    """Build a mechanism from a kind name and a parameter dict (untrusted input)."""
    if not isinstance(kind, str) or kind not in MECHANISM_KINDS:
        raise ValueError(f"kind must be one of {sorted(MECHANISM_KINDS)}, got {kind!r}")
    cls = MECHANISM_KINDS[kind]
    names = [f.name for f in fields(cls)]
    unknown = sorted(set(params) - set(names))
    if unknown:
        raise ValueError(f"unknown parameter {unknown[0]!r} for kind {kind!r} "
                         f"(expected {', '.join(names)})")
    required = [f.name for f in fields(cls) if f.default is MISSING]
    missing = [n for n in required if n not in params]
    if missing:
        raise ValueError(f"missing parameter {missing[0]!r} for kind {kind!r}")
    return cls(**params)
