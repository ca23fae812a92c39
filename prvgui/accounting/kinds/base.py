"""What every mechanism kind provides: its parameters, its dominating pairs, its facts.

A kind is one module in this package defining one :class:`Mechanism` subclass, a frozen
dataclass whose fields are its parameters, each declared with :func:`param` (its range,
its text for forms and tooltips, its value in a new row, and how calibration may search it).
Everything else about the kind is a method of that class: its privacy loss random variable
for each order of the dominating pair under each neighbouring relation, its closed forms, and
its facts for the comparison accountants. The registry (``kinds/__init__.py``) finds the
modules; the file format, the CLI, the GUI form, calibration and the comparisons read the
kind's class and nothing else.
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from enum import Enum
from typing import ClassVar

import numpy as np

from .. import prv as _prv
from ..validate import MISSING, check_number


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


#: the two orders of a dominating pair (P, Q): "remove" is P = D, Q = D' with D' = D minus a
#: record; "add" is the swapped pair. Symmetric mechanisms have one PRV for both.
ORDERS = ("remove", "add")


@dataclass(frozen=True)
class Search:
    """How calibration may search a parameter: epsilon grows with it (``increasing``) or
    falls, within [lo, hi]."""

    increasing: bool
    lo: float
    hi: float


@dataclass(frozen=True)
class Param:
    """A parameter of a kind: its valid range, its texts and its value in a new row."""

    title: str
    unit: str
    help: str
    symbol: str
    initial: float
    lo: float = 0.0
    hi: float = math.inf
    lo_open: bool = False
    search: Search | None = None

    def check(self, name: str, value: object) -> float:
        """``value`` as a float, else a ``NumberError`` naming the parameter by its title
        (``Noise σ must be at least 0; you typed -1``) and by ``name`` (its ``field``)."""
        return check_number(self.title, value, self.lo, self.hi, self.lo_open, field=name)


def param(spec: Param, default: float | None = None):
    """A dataclass field for a parameter; ``default`` makes it optional in files and calls."""
    meta = {"param": spec}
    if default is None:
        return dataclasses.field(metadata=meta)
    return dataclasses.field(default=default, metadata=meta)


@dataclass(frozen=True, slots=True)
class Mechanism:
    """Base of the kinds. Subclasses are ``@dataclass(frozen=True, slots=True)`` with
    :func:`param` fields (no zero-argument ``super()`` in their methods: slots make a new
    class)."""

    #: the name in files, the CLI and the registry
    kind: ClassVar[str] = ""
    #: the name people read (menus, tables, reports)
    title: ClassVar[str] = ""
    #: one sentence saying what the mechanism does, for people (tooltips of menus and lists);
    #: empty: the first line of the class's docstring
    summary: ClassVar[str] = ""
    #: position in menus
    menu_order: ClassVar[int] = 100
    #: the rows of DP-SGD training use this kind (the DP-SGD helper fills them in)
    dpsgd_step: ClassVar[bool] = False
    #: False when the two orders of the add/remove pair differ (subsampling)
    symmetric: ClassVar[bool] = True

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            object.__setattr__(self, f.name, f.metadata["param"].check(f.name, getattr(self, f.name)))

    @classmethod
    def describe(cls) -> str:
        """The one-sentence summary people read (``summary``, else the docstring's first line)."""
        return cls.summary or (cls.__doc__ or cls.title).strip().splitlines()[0]

    # ------------------------------------------------------------ parameters
    @classmethod
    def param_specs(cls) -> dict[str, Param]:
        """The parameters in declaration order."""
        return {f.name: f.metadata["param"] for f in dataclasses.fields(cls)}

    @classmethod
    def defaults(cls) -> dict[str, float]:
        """The optional parameters and their defaults."""
        return {f.name: f.default for f in dataclasses.fields(cls) if f.default is not dataclasses.MISSING}

    @classmethod
    def required(cls) -> list[str]:
        return [f.name for f in dataclasses.fields(cls) if f.default is dataclasses.MISSING]

    @classmethod
    def initial_params(cls) -> dict[str, float]:
        """The parameters of a new row of this kind."""
        return {name: p.initial for name, p in cls.param_specs().items()}

    @classmethod
    def from_params(cls, params: dict[str, object]) -> "Mechanism":
        """Build from an untrusted parameter dict; messages name the kind and the field."""
        names = list(cls.param_specs())
        unknown = sorted(set(params) - set(names))
        if unknown:
            raise ValueError(f"{cls.title} has no parameter {unknown[0]!r} (its parameters: "
                             f"{', '.join(names)})")
        missing = [n for n in cls.required() if n not in params]
        if missing:
            cls.param_specs()[missing[0]].check(missing[0], MISSING)
        return cls(**params)

    def params(self) -> dict[str, float]:
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}

    # ------------------------------------------------------------ privacy loss
    def orders(self, neighbouring: Neighbouring = Neighbouring.ADD_REMOVE) -> tuple[str, ...]:
        """The orders of the dominating pair that must be composed (one when they agree)."""
        return ("remove",) if self.symmetric else ORDERS

    def prv(self, order: str = "remove",
            neighbouring: Neighbouring = Neighbouring.ADD_REMOVE) -> _prv.PRV:
        """Privacy loss random variable of one run, for one order of the dominating pair."""
        if order not in ORDERS:
            raise ValueError(f"order must be one of {ORDERS}, got {order!r}")
        if Neighbouring(neighbouring) is not Neighbouring.ADD_REMOVE:
            raise ValueError(f"{self.title} is not yet available under {Neighbouring(neighbouring).value}")
        return self._prv(order)

    def _prv(self, order: str) -> _prv.PRV:
        raise NotImplementedError

    def is_trivial(self) -> bool:
        """True if the mechanism leaks nothing (Y = 0 almost surely)."""
        return False

    def is_blatant(self) -> bool:
        """True if the mechanism is not private at all (Y = +inf with probability 1)."""
        return False

    # ------------------------------------------------------------ closed forms
    def gaussian_mu(self) -> float | None:
        """mu when the mechanism is exactly the mu-GDP Gaussian mechanism (its compositions
        then have a closed form), else None."""
        return None

    def exact_eps_delta(self) -> tuple[float, float] | None:
        """(eps, delta) when the mechanism's pair is exactly the (eps, delta)-DP pair (randomized
        response plus delta at +infinity: Kairouz-Oh-Viswanath's closed form applies), else None."""
        return None

    # ------------------------------------------------------------ comparison accountants
    def eps_delta(self) -> tuple[float, float] | None:
        """An (epsilon, delta)-DP guarantee of one run (basic and advanced composition)."""
        return None

    def rdp(self, orders: np.ndarray) -> np.ndarray | None:
        """Renyi DP of one run at ``orders`` (an upper bound; inf where not computed), or None
        when RDP does not describe the mechanism."""
        return None

    def gdp_mu2(self) -> float | None:
        """mu^2 of the CLT (GDP) approximation of one run: by default moment matching of the
        larger of the two orders' PRVs (Dong, Roth, Su 2019, Thm 3.4)."""
        from ..gdp import prv_mu2
        try:
            return max(prv_mu2(self.prv(order)) for order in self.orders())
        except ArithmeticError:  # overflow building the PRV: report no privacy, never less
            return math.inf


# ---------------------------------------------------------------- parameters several kinds share
SAMPLING_RATE = Param("Sampling rate q", "probability in [0, 1]",
                      "Poisson sampling probability q of each record per step", "q", 0.01, hi=1.0,
                      search=Search(True, 1e-9, 1.0))
EPSILON = Param("ε", "nats", "privacy parameter epsilon (nats)", "ε", 1.0, search=Search(True, 1e-6, 50.0))
L1_SENSITIVITY = Param("Sensitivity Δ", "L1 norm", "L1 sensitivity of the query (default 1)", "Δ", 1.0)
LAPLACE_SCALE = Param("Noise scale b", "Laplace scale, units of Δ",
                      "Laplace scale b of the added noise (same units as the sensitivity)", "b", 1.0,
                      search=Search(False, 0.01, 1e7))


def ratio(num: float, den: float) -> float:
    """num / den for a sensitivity over a noise scale: 0 without sensitivity, inf without noise."""
    if num == 0:
        return 0.0
    return math.inf if den == 0 else num / den
