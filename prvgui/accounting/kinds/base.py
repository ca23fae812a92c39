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
from typing import ClassVar, Sequence, TypeGuard, cast

import numpy as np

from ..pairs import prv as _prv
from ..core.values import ORDERS, Neighbouring, Relation, as_relation
from ..core.validate import MISSING, TYPED, NumberError, check_number, given, number_text, range_text


#: a privacy loss above this many nats is taken as +infinity (``Mechanism.is_blatant``): no grid
#: can index it, and nothing short of an epsilon of 1e12 tells the two apart (an upper bound)
BLATANT_LOSS = 1e12
#: Gaussian noise below this (sigma / sensitivity), or Laplace eps0 above its inverse, is taken as
#: none in the subsampled pairs (as mixture.py does): the noisy pair is a post-processing of the
#: noiseless one, so this only adds privacy loss
NOISELESS = 1e-6

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
    #: a float or an int here; text for a ``Choice``, a tuple for a ``Vector`` or ``Points``
    initial: object
    lo: float = 0.0
    hi: float = math.inf
    lo_open: bool = False
    search: Search | None = None
    #: only whole numbers (e.g. batches per epoch)
    integer: bool = False

    def to_file(self, value: object) -> object:
        """The value as a composition file holds it (most values: as they are)."""
        return value

    def table_text(self, name: str, value: object) -> str | None:
        """A short text for the composition table, for values a number cannot show (None: the
        table's own rule)."""
        return None

    def check(self, name: str, value: object) -> object:
        """``value`` as a float (an int for ``integer`` parameters; subclasses return their own
        kinds of value), else a ``NumberError`` naming the parameter by its title
        (``Noise σ must be at least 0; you typed -1``) and by ``name`` (its ``field``)."""
        v = check_number(self.title, value, self.lo, self.hi, self.lo_open, field=name)
        if self.integer:
            if v != int(v):
                raise NumberError(self.title, "a whole number", value, field=name)
            return int(v)
        return v


@dataclass(frozen=True)
class Choice(Param):
    """A parameter with a few named values (``choices``: value -> words people read)."""

    choices: tuple[tuple[str, str], ...] = ()

    def check(self, name: str, value: object) -> str:
        values = [v for v, _ in self.choices]
        if not isinstance(value, str) or value not in values:
            raise NumberError(self.title, "one of " + " or ".join(f'"{v}"' for v in values), value, field=name)
        return value


class VectorError(NumberError):
    """A list parameter that is not accepted. ``entry`` (counted from 1) names the bad entry;
    ``plain`` replaces the "you typed ..." part when the fault is the whole list (its sum)."""

    def __init__(self, label: str, requirement: str, value: object, field: str | None = None,
                 entry: int | None = None, plain: str | None = None, be: bool = True) -> None:
        self.entry, self.plain, self.be = entry, plain, be
        super().__init__(label, requirement, value, field)

    def message(self, source: str = TYPED) -> str:
        if self.plain is not None:
            return f"{self.label} must {'be ' if self.be else ''}{self.requirement}; {self.plain}"
        where = f"entry {self.entry}: " if self.entry is not None else ""
        return f"{self.label} must be {self.requirement}; {where}{given(self.value, source)}"


def _listlike(value: object) -> TypeGuard[list | tuple | np.ndarray]:
    return isinstance(value, (list, tuple, np.ndarray))


@dataclass(frozen=True)
class Vector(Param):
    """A list of numbers, each in [lo, hi] (e.g. a probability vector: ``total`` 1). ``check``
    returns a tuple of floats; files hold a JSON list."""

    #: the most entries accepted
    max_len: int = 100_000
    #: the sum the entries must have (within ``TOTAL_TOL``), or None
    total: float | None = None
    #: what one entry is, in words ("probabilities", "numbers")
    entries: str = "numbers"
    #: a column of numbers a row may be filled with from a CSV file ("Fill from CSV")
    csv: bool = True

    def check(self, name: str, value: object) -> tuple[float, ...]:
        rng = range_text(self.lo, self.hi, self.lo_open)
        what = f"a list of {self.entries} ({rng})" if rng else f"a list of {self.entries}"
        _check_list(self.title, name, value, what, self.max_len, self.entries)
        items = cast("list | tuple | np.ndarray", value)  # (_check_list raised if it is not)
        out = _numbers(items)
        bad = None if out is not None else 0
        if out is not None:
            ok = np.isfinite(out) & (out >= self.lo) & (out <= self.hi)
            if self.lo_open:
                ok &= out > self.lo
            bad = None if ok.all() else int(np.flatnonzero(~ok)[0])
        if bad is not None:
            for i, v in enumerate(items):
                if i < bad:
                    continue
                try:
                    check_number(self.title, v, self.lo, self.hi, self.lo_open)
                except NumberError:
                    raise VectorError(self.title, what, v, field=name, entry=i + 1) from None
        assert out is not None
        if self.total is not None:
            s = math.fsum(out.tolist())
            if not abs(s - self.total) <= TOTAL_TOL:
                raise VectorError(self.title, f"sum to {number_text(self.total)} (within "
                                  f"{number_text(TOTAL_TOL)})", value, field=name, be=False,
                                  plain=f"they sum to {s!r}")
        return tuple(out.tolist())


#: how far the entries of a probability vector may sum from 1
TOTAL_TOL = 1e-9


def _check_list(title: str, name: str, value: object, what: str, max_len: int, entries: str) -> None:
    """A VectorError unless ``value`` is a list of 1 to ``max_len`` entries (of any kind)."""
    if not _listlike(value):
        raise VectorError(title, what, value, field=name)
    n = len(value)
    if n == 0:
        raise VectorError(title, what, value, field=name, plain="the list is empty")
    if n > max_len:
        raise VectorError(title, f"a list of at most {max_len:,} {entries}", value, field=name,
                          plain=f"it has {n:,}")


def _numbers(value: "list | tuple | np.ndarray") -> np.ndarray | None:
    """The entries as floats when every one is a real number (not text, not bool), else None."""
    if isinstance(value, np.ndarray):
        return value.astype(float) if value.ndim == 1 and value.dtype.kind in "fiu" else None
    if all(isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool) for v in value):
        try:
            return np.array(value, dtype=float)
        except OverflowError:  # an int too large for a float
            return None
    return None


@dataclass(frozen=True)
class Points(Param):
    """A list of [epsilon, delta] pairs (a privacy profile's points). ``check`` returns a tuple of
    (epsilon, delta) tuples, each epsilon finite and >= 0, each delta in [0, 1]."""

    max_len: int = 10_000

    def check(self, name: str, value: object) -> tuple[tuple[float, float], ...]:
        what = "a list of [ε, δ] pairs"
        _check_list(self.title, name, value, what, self.max_len, "[ε, δ] pairs")
        items = cast("list | tuple | np.ndarray", value)  # (_check_list raised if it is not)
        out = []
        for i, pair in enumerate(items):
            if not _listlike(pair) or len(pair) != 2:
                raise VectorError(self.title, f"{what} (two numbers each)", _pair_text(pair), field=name,
                                  entry=i + 1)
            for j, (need, lo, hi) in enumerate((("ε a finite number at least 0", 0.0, math.inf),
                                                 ("δ between 0 and 1", 0.0, 1.0))):
                try:
                    v = check_number(self.title, pair[j], lo, hi)
                except NumberError:
                    raise VectorError(self.title, f"{what} with {need}", pair[j], field=name,
                                      entry=i + 1) from None
                if j == 0:
                    eps = v
            out.append((eps, v))
        return tuple(out)


def _pair_text(pair: object) -> object:
    """A bad entry of a list of pairs, as a message shows it: a short list as text."""
    if _listlike(pair) and len(pair) <= 4:
        return "[" + ", ".join(number_text(v) if isinstance(v, (int, float)) and not isinstance(v, bool)
                               else str(v) for v in pair) + "]"
    return pair


#: the most rows and columns of a Matrix parameter
MAX_MATRIX = 2000


@dataclass(frozen=True)
class Matrix(Points):
    """A matrix as a list of rows of numbers (at most ``MAX_MATRIX`` each way); ``check`` returns
    a tuple of tuples of floats. Typed as rows separated by semicolons."""

    def check(self, name: str, value: object) -> tuple[tuple[float, ...], ...]:  # type: ignore[override]
        what = f"a list of rows of numbers (at most {MAX_MATRIX} x {MAX_MATRIX})"
        if not isinstance(value, (list, tuple, np.ndarray)) or len(value) == 0:
            raise VectorError(self.title, what, value, field=name)
        if len(value) > MAX_MATRIX:
            raise VectorError(self.title, what, value, field=name, plain=f"it has {len(value):,} rows")
        rows = [r if isinstance(r, (list, tuple, np.ndarray)) else [r] for r in value]
        width = len(rows[0])
        for i, r in enumerate(rows):
            if len(r) != width or not 1 <= width <= MAX_MATRIX:
                raise VectorError(self.title, f"{what}, every row as long as the first ({width})",
                                  f"a row of {len(r)} entries", field=name, entry=i + 1)
        try:
            arr = np.array([[_entry(v) for v in r] for r in rows], dtype=float)
        except (TypeError, ValueError):
            raise VectorError(self.title, f"{what} that are all finite numbers", _bad(rows), field=name) from None
        if not np.isfinite(arr).all():
            i = int(np.flatnonzero(~np.isfinite(arr).all(axis=1))[0])
            raise VectorError(self.title, f"{what} that are all finite numbers", "a row with "
                              + ", ".join(str(v) for v in rows[i] if not np.isfinite(_safe(v))), field=name,
                              entry=i + 1)
        return tuple(tuple(r) for r in arr.tolist())


def _entry(v: object) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)):
        raise TypeError(v)
    return float(v)


def _safe(v: object) -> float:
    try:
        return _entry(v)
    except (TypeError, ValueError, OverflowError):
        return math.nan


def _bad(rows: list) -> object:
    for r in rows:
        for v in r:
            if math.isnan(_safe(v)) and not (isinstance(v, float) and math.isnan(v)):
                return v
    return rows


def param(spec: Param, default: float | str | tuple | None = None, kw_only: bool = False):
    """A dataclass field for a parameter; ``default`` makes it optional in files and calls.
    ``kw_only``: a field named like a class attribute of :class:`Mechanism` (e.g. ``symmetric``)
    must be keyword-only (dataclasses would place it first); it still comes last in forms."""
    meta = {"param": spec}
    if default is None:
        return dataclasses.field(metadata=meta, kw_only=kw_only)
    return dataclasses.field(default=default, metadata=meta, kw_only=kw_only)


def _fields(cls_or_obj) -> list[dataclasses.Field]:
    """The parameter fields in declaration order, keyword-only ones last."""
    return sorted(dataclasses.fields(cls_or_obj), key=lambda f: bool(f.kw_only))


@dataclass(frozen=True, slots=True)
class Mechanism:
    """Base of the kinds. Subclasses are ``@dataclass(frozen=True, slots=True)`` with
    :func:`param` fields (no zero-argument ``super()`` in their methods: slots make a new
    class)."""

    #: the name in files, the CLI and the registry
    kind: ClassVar[str] = ""
    #: about how long ``rdp`` at the comparison accountants' orders takes (a closed form: well
    #: under a millisecond; a kind whose RDP is a quadrature says so: the window's estimate)
    rdp_seconds: ClassVar[float] = 1e-4
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
    #: False when the dominating pair is only an upper bound, not realised by any pair of
    #: datasets (shuffled batches): the bracket then bounds the pair, and ``attack_pair``
    #: gives a proven lower bound on the truth
    tight: ClassVar[bool] = True
    #: how many pairs of datasets ``attack_pair`` can offer
    attack_variants: ClassVar[int] = 1
    #: how the rows of this kind form their batches: 'poisson', 'fixed_size' or 'shuffled'
    #: (captions and notes name them); None for mechanisms without batches
    batch_scheme: ClassVar[str | None] = None
    #: how captions name this kind's batches when ``batch_scheme`` is its own (e.g. "random
    #: allocation (balls-in-bins)"); None: the scheme's usual words (export.py)
    batch_words: ClassVar[str | None] = None
    #: for a kind whose pair is an upper bound only: the sentence beside the bracket saying where the
    #: truth lies, with {lo} and {hi} for the two bounds; empty: the generic sentence
    bracket_words: ClassVar[str] = ""
    #: the first composition file version that holds the kind
    since_version: ClassVar[int] = 2
    #: parameter sets where the kind's pair is worth checking (corners: little or much noise,
    #: small or large rates), beside a new row's; the contract tests run every kind on them
    #: (tests/accounting/kinds/test_contract.py), so that a new kind is checked from its module
    examples: ClassVar[tuple[dict[str, object], ...]] = ()

    def __post_init__(self) -> None:
        for f in _fields(self):
            object.__setattr__(self, f.name, f.metadata["param"].check(f.name, getattr(self, f.name)))

    @classmethod
    def describe(cls) -> str:
        """The one-sentence summary people read (``summary``, else the docstring's first line)."""
        return cls.summary or (cls.__doc__ or cls.title).strip().splitlines()[0]

    # ------------------------------------------------------------ parameters
    @classmethod
    def param_specs(cls) -> dict[str, Param]:
        """The parameters in declaration order."""
        return {f.name: f.metadata["param"] for f in _fields(cls)}

    @classmethod
    def defaults(cls) -> dict[str, float]:
        """The optional parameters and their defaults."""
        return {f.name: f.default for f in _fields(cls) if f.default is not dataclasses.MISSING}

    @classmethod
    def required(cls) -> list[str]:
        return [f.name for f in _fields(cls) if f.default is dataclasses.MISSING]

    @classmethod
    def initial_params(cls) -> dict[str, object]:
        """The parameters of a new row of this kind."""
        return {name: p.initial for name, p in cls.param_specs().items()}

    @classmethod
    def example_instances(cls) -> list["Mechanism"]:
        """The kind at a new row's parameters and at each of ``examples``."""
        return [cls.from_params(cls.initial_params())] + [cls.from_params(e) for e in cls.examples]

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
        return {f.name: getattr(self, f.name) for f in _fields(self)}

    # ------------------------------------------------------------ relations
    def under(self, relation: Relation) -> "Mechanism":
        """The mechanism whose add/remove pair for one record dominates this mechanism's pair
        under ``relation`` (neighbouring relation and group size): every accountant then works
        on it unchanged. Kinds override this with their derivation; a ValueError says when a
        kind has no pair for the relation."""
        if relation.plain:
            return self
        raise ValueError(f"{self.title} has no dominating pair for {relation.describe()}")

    def check_relation(self, relation: "Relation | Neighbouring | str | None") -> None:
        """Raise ValueError (in words) if this mechanism has no pair under ``relation``."""
        self.under(as_relation(relation))

    def attack_pair(self, relation: Relation, variant: int = 0) -> "Mechanism":
        """A pair realised by two neighbouring datasets (or a post-processing of one): its
        composition's epsilon is a proven LOWER bound on the true epsilon. For a tight kind it
        is the dominating pair itself. Non-tight kinds may offer several (``attack_variants``:
        different pairs of datasets); each is a lower bound, and so is their maximum."""
        return self.under(relation)

    def poisson_counterpart(self) -> tuple["Mechanism", int] | None:
        """For a non-tight kind of DP-SGD training: the Poisson-sampled step Poisson accounting
        would use, and how many of them one run counts as (``bracket.poisson_contrast``); None
        when no Poisson accounting would stand in for the kind (e.g. a selection mechanism)."""
        return None

    def runs_per_count(self) -> int:
        """How many runs of this mechanism's pair one count of the row stands for (1; amplified
        banded MF: its ceil(n / b) subsampled steps)."""
        return 1

    def facts(self) -> dict[str, object]:
        """Numbers reports print beside epsilon for this row (e.g. a matrix mechanism's
        sensitivity and rho); empty for most kinds."""
        return {}

    def zcdp_rho(self) -> float | None:
        """rho when one run is exactly rho-zCDP as the Gaussian mechanism (mu^2 / 2), else None."""
        mu = self.gaussian_mu()
        return None if mu is None else 0.5 * mu * mu

    def tail_rho(self) -> float | None:
        """A rho with D_alpha(P || Q) <= rho alpha for every alpha > 1, in each order of this
        mechanism's pair: a Gaussian tail that certifies mu-GDP where the numerical profile cannot
        resolve delta (docs/method.md, "Certified mu-GDP"). None where no such bound is known; a
        kind whose losses are bounded needs none. Default: the exact Gaussian's mu^2 / 2."""
        return self.zcdp_rho()

    # ------------------------------------------------------------ privacy loss
    def orders(self, relation: "Relation | Neighbouring | str | None" = None) -> tuple[str, ...]:
        """The orders of the dominating pair that must be composed (one when they agree)."""
        rel = as_relation(relation)
        if not rel.plain:
            return self.under(rel).orders()
        return ("remove",) if self.symmetric else ORDERS

    def prv(self, order: str = "remove", relation: "Relation | Neighbouring | str | None" = None) -> _prv.PRV:
        """Privacy loss random variable of one run, for one order of the dominating pair under
        ``relation`` (default: add/remove one record)."""
        if order not in ORDERS:
            raise ValueError(f"order must be one of {ORDERS}, got {order!r}")
        rel = as_relation(relation)
        if not rel.plain:
            return self.under(rel).prv(order)
        return self._prv(order)

    @classmethod
    def prvs(cls, mechanisms: Sequence["Mechanism"], order: str = "remove") -> list[_prv.PRV]:
        """``prv(order)`` of each of many mechanisms of this kind (add/remove); a kind whose PRVs
        are quicker made together overrides it (the discrete Gaussian's weight tables)."""
        return [m.prv(order) for m in mechanisms]

    def _prv(self, order: str) -> _prv.PRV:
        raise NotImplementedError

    def loss_bounds(self, order: str = "remove") -> tuple[float, float]:
        """(at most P(Y = +inf), at least the largest value Y takes) of one run in ``order``
        (add/remove): what an estimate of many rows reads without making their PRVs
        (Accountant.cost). The PRV's own two numbers; a kind whose PRV is slow to make gives
        bounds of them instead (a discrete Gaussian's tables, a subsampled Gaussian's cuts)."""
        prv = self.prv(order)
        return prv.inf_mass, prv.max_loss

    def is_trivial(self) -> bool:
        """True if the mechanism leaks nothing (Y = 0 almost surely)."""
        return False

    def is_blatant(self) -> bool:
        """True if the mechanism is not private at all (Y = +inf with probability 1)."""
        return False

    # ------------------------------------------------------------ utility
    def noise_halfwidth(self, level: float = 0.95) -> tuple[float, str] | None:
        """Half-width of the central ``level`` interval of the noise added to one output, and
        the unit it is in (what the privacy costs in accuracy); None for kinds without additive
        noise."""
        return None

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
        from ..pairs.gdp import prv_mu2
        try:
            return max(prv_mu2(self.prv(order)) for order in self.orders())
        except ArithmeticError:  # overflow building the PRV: report no privacy, never less
            return math.inf


class SampledBatches:
    """What the subsampled kinds share about their ``sampling`` field: Poisson batches are a
    realised pair (``tight``), fixed-size batches an upper bound only (without_replacement.py);
    the scheme names itself in captions (``batch_scheme``).

    (Its properties stand in for Mechanism's class constants ``tight`` and ``batch_scheme``,
    per instance; mypy allows no read-only property over a class variable, so the kinds that
    mix this in silence that check with ``type: ignore[misc, override]``.)"""

    __slots__ = ()

    @property
    def tight(self) -> bool:
        return self.sampling == "poisson"  # type: ignore[attr-defined]

    @property
    def batch_scheme(self) -> str:
        return self.sampling  # type: ignore[attr-defined]


# ---------------------------------------------------------------- parameters several kinds share
SAMPLING_RATE = Param("Sampling rate q", "probability in [0, 1]",
                      "Poisson sampling probability q of each record per step", "q", 0.01, hi=1.0,
                      search=Search(True, 1e-9, 1.0))
SAMPLING = Choice("Batches", "", "how each step's batch is formed: 'poisson' (each record joins "
                  "independently with probability q) or 'fixed_size' (a uniformly random batch of exactly "
                  "q × n records; defined under replace-one only)", "", "poisson",
                  choices=(("poisson", "Poisson: each record joins with probability q"),
                           ("fixed_size", "Fixed size: a random batch of exactly q·n records")))
FIXED_SIZE_ADD_REMOVE = ("Fixed-size batches (exactly q × n records) are defined only under replace-one "
                         "neighbouring: adding or removing a record changes n and so the batch size; "
                         "choose replace-one neighbouring (\"replace_one\" in a file) or Poisson sampling")


def fixed_size_error() -> ValueError:
    """The error for fixed-size sampling under add/remove; its ``field`` is ``sampling``."""
    exc = ValueError(FIXED_SIZE_ADD_REMOVE)
    exc.field = "sampling"  # type: ignore[attr-defined]
    return exc


def fixed_size_group_error(group_size: int) -> ValueError:
    """The error for fixed-size sampling with groups of several records (no certified pair)."""
    exc = ValueError(f"Fixed-size batches with {group_size} records per person: prvgui has no certified pair "
                     "for a group under sampling without replacement (how many of the group's records a "
                     "batch holds depends on the dataset size); choose Poisson sampling or 1 record per "
                     "person")
    exc.field = "sampling"  # type: ignore[attr-defined]
    return exc
EPSILON = Param("ε", "nats", "privacy parameter epsilon (nats)", "ε", 1.0, search=Search(True, 1e-6, 50.0))
L1_SENSITIVITY = Param("Sensitivity Δ", "L1 norm", "L1 sensitivity of the query (default 1)", "Δ", 1.0)
#: the sensitivity of an integer-valued query (discrete noise): a whole number; at most 1e12, so
#: that a group of 1000 under replace-one (2000 times the sensitivity) stays exact in a float
INTEGER_SENSITIVITY = Param("Sensitivity Δ", "integer (counts)",
                            "how far one record can move the integer-valued query: a whole number "
                            ">= 1 (default 1)", "Δ", 1, lo=1, hi=1e12, integer=True)
LAPLACE_SCALE = Param("Noise scale b", "Laplace scale, units of Δ",
                      "Laplace scale b of the added noise (same units as the sensitivity)", "b", 1.0,
                      search=Search(False, 0.01, 1e7))


def group_factor(relation: Relation) -> int:
    """How far one protected person can move a sum of clipped contributions, in clipping norms:
    k records, each moved by up to 2 norms under replace-one (1 under add/remove)."""
    return relation.group_size * (2 if relation.replace else 1)


def ratio(num: float, den: float) -> float:
    """num / den for a sensitivity over a noise scale: 0 without sensitivity, inf without noise."""
    if num == 0:
        return 0.0
    return math.inf if den == 0 else num / den


#: add/remove one record
