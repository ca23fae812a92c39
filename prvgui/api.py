"""prvgui from Python: load or build a composition and ask for certified epsilon or delta.

    import prvgui
    comp = prvgui.load("resources/examples/dpsgd_shuffled.json")
    a = prvgui.epsilon(comp, delta=1e-6)
    a.certified_upper          # CertifiedUpper(value=6.32..., by='prv'): the number to publish
    a.epsilon_at_least         # 6.04...: a proven lower bound (shuffled batches have no tight pair)
    a.lower, a.upper           # the PRV bracket (here the dominating pair's, not the truth's)
    a.comparisons["rdp"].value # the other accountants; a.warnings, a.notes: what the CLI prints
    prvgui.delta(comp, epsilon=2.0, eps_error=0.005)

``certified_upper`` is the certified number to publish (the PRV bracket's upper end unless
another accountant is tighter by more than the accuracy). When a bracket is wider than eps_error
asks for (float64 cannot resolve the delta, or the grid was capped), an ``AccuracyWarning`` says
why. The command line prints this answer (``as_dict`` is its JSON); the window loads and saves
through these functions.
"""
from __future__ import annotations

import os
import warnings

import math
from dataclasses import dataclass, field

from .accounting.queries.accountant import Accountant
from .accounting.queries.certified import CertifiedUpper
from .accounting.core.values import Bounds
from .document import fileio
from .document.composition import Composition

__all__ = ["AccuracyWarning", "Answer", "Bounds", "Composition", "accountant", "audit", "delta", "epsilon",
           "from_training", "load", "risk", "save", "statement"]


class AccuracyWarning(UserWarning):
    """A certified bracket is wider than the accuracy asked for; the message says why."""


def load(path: str | os.PathLike) -> Composition:
    """Read a composition file (untrusted: a ``FileFormatError`` names the bad field)."""
    return fileio.load_composition(path)


def save(comp: Composition, path: str | os.PathLike) -> None:
    """Write a composition file atomically (a temporary file, then a rename)."""
    fileio.save(comp, path)


def _composition(comp: Composition | dict) -> Composition:
    if isinstance(comp, Composition):
        return comp
    if isinstance(comp, dict):
        return Composition.from_dict(comp)
    raise TypeError(f"expected a prvgui.Composition or its dict, got {type(comp).__name__}")


def accountant(comp: Composition | dict, eps_error: float | None = None) -> Accountant:
    """The certified accountant of a composition (at its own eps_error unless one is given)."""
    comp = _composition(comp)
    err = comp.targets.eps_error if eps_error is None else eps_error
    return Accountant(comp.engine_rows(), err, comp.relation)


@dataclass(frozen=True)
class Answer:
    """The whole answer to one query, as the command line prints it.

    ``bracket``: the PRV accountant's certified bracket (of the dominating pair: when some rows'
    pairs are upper bounds only, e.g. shuffled batches, its lower end is no bound on the truth);
    ``certified_upper``: the number to publish and the accountant that gave it;
    ``epsilon_at_least``: a proven lower bound on the true epsilon where the rows' pairs are upper
    bounds only (else None); ``comparisons``: the other accountants (name -> Comparison);
    ``warnings``: why a bracket is wider than asked; ``notes``: where the truth lies for untight
    rows; ``failed``: why the PRV bracket could not be composed (it is then [0, inf] and the
    comparisons certify). ``lower``, ``estimate`` and ``upper`` read the bracket."""

    asked: str  # "epsilon" or "delta"
    at: float  # the delta (or epsilon) asked at
    bracket: Bounds
    certified_upper: CertifiedUpper
    comparisons: dict = field(default_factory=dict)
    epsilon_at_least: float | None = None
    poisson: Bounds | None = None
    warnings: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    failed: str | None = None
    eps_error: float = 0.01
    neighbouring: str = "add_remove"
    group_size: int = 1
    #: rho of the whole composition when every row is exactly a Gaussian mechanism (zCDP, as
    #: production reports DP-FTRL: rho = sum of count x mu^2 / 2), else None
    rho: float | None = None
    #: per row that has them, the numbers reports print beside epsilon (a matrix mechanism's
    #: sensitivity, whether it is exact, rho): {"row", "kind", ...}
    row_facts: tuple[dict, ...] = ()
    #: for a tuned composition (``Composition.tuning``), epsilon at delta of releasing the best of
    #: the runs: ``TuningResult.as_dict()`` ({"epsilon", "method", "runs", "mean", "eta", "delta",
    #: "note"}); None otherwise and for delta queries
    tuning: dict | None = None

    @property
    def lower(self) -> float:
        return self.bracket.lower

    @property
    def estimate(self) -> float:
        return self.bracket.estimate

    @property
    def upper(self) -> float:
        return self.bracket.upper

    def as_dict(self) -> dict:
        """The command line's JSON: {asked: bracket, given: at, "certified_upper", "comparisons",
        "warnings", "notes", "neighbouring", "group_size"[, "epsilon_at_least", "failed"]}."""
        given = "delta" if self.asked == "epsilon" else "epsilon"
        out = {self.asked: self.bracket.as_dict(), given: self.at, "eps_error": self.eps_error,
               "certified_upper": self.certified_upper.as_dict(),
               "comparisons": {k: v.as_dict() for k, v in self.comparisons.items()},
               "warnings": list(self.warnings), "notes": list(self.notes),
               "neighbouring": self.neighbouring, "group_size": self.group_size}
        if self.epsilon_at_least is not None:
            out["epsilon_at_least"] = self.epsilon_at_least
        if self.rho is not None:
            out["rho"] = self.rho
        if self.row_facts:
            out["rows"] = [dict(f) for f in self.row_facts]
        if self.failed is not None:
            out["failed"] = {"prv": self.failed}
        if self.tuning is not None:
            out["tuning"] = dict(self.tuning)
        return out


def query(comp: Composition | dict, want_eps: bool, at: float, eps_error: float | None = None) -> Answer:
    """Epsilon at delta ``at`` (``want_eps``) or delta at epsilon ``at``: the whole answer."""
    from .accounting.queries import bracket as _bracket
    from .accounting.queries.certified import best_upper
    from .accounting.queries.comparisons import compare_delta, compare_epsilon
    from .engine.view_model import PART_TITLES, engine_notes, part_failure_text, untight_note
    comp = _composition(comp)
    acc = accountant(comp, eps_error)
    err = acc.eps_error
    failed = None
    try:
        b = acc.epsilon(at) if want_eps else acc.delta(at)
    except (ArithmeticError, MemoryError) as exc:  # the comparison accountants still answer
        failed = part_failure_text(exc)
        b = Bounds(0.0, math.inf, math.inf) if want_eps else Bounds(0.0, 1.0, 1.0)
    comps = (compare_epsilon if want_eps else compare_delta)(acc.rows, at)
    best = best_upper(b.upper, comps, want_eps, tie=err if want_eps else 0.0)
    rows = comp.engine_rows()
    at_least = poisson = None
    notes: tuple[str, ...] = ()
    crossed = want_eps and failed is None and _bracket.crossed(acc, b.lower, comps, err)
    if want_eps and failed is None and (_bracket.has_untight(rows) or crossed):
        said: list[str] = []

        def part(title: str, fn):
            """fn(), or None and a note naming ``title`` when it cannot be composed (as the
            window's parts: the rest of the answer stands)."""
            try:
                return fn()
            except (ArithmeticError, MemoryError) as exc:
                said.append(f"Not computed: {title} ({part_failure_text(exc)}).")
                return None
        at_least = part(PART_TITLES["bracket"], lambda: _bracket.epsilon_at_least(rows, at, acc.relation, err))
        if at_least is None:
            at_least = 0.0  # (proven for any composition; the note says why no more)
        poisson = part(PART_TITLES["contrast"], lambda: _bracket.poisson_contrast(rows, at, acc.relation, err))
        shuffled = part(PART_TITLES["contrast"], lambda: _bracket.shuffled_contrast(rows, at, acc.relation, err))
        notes = (untight_note(rows, at_least, best.value, poisson, shuffled), *dict.fromkeys(said))
    tuned = None
    if want_eps and comp.tuning is not None:  # releasing the best of the tuning runs (selection.py)
        from .accounting.queries.selection import tuned_epsilon
        tuned = tuned_epsilon(rows, acc.relation, at, comp.tuning, err,
                              accountant=acc if failed is None else None).as_dict()
    return Answer("epsilon" if want_eps else "delta", at, b, best, comps, at_least, poisson,
                  engine_notes(acc, crossed), notes, failed, err, acc.relation.neighbouring.value,
                  acc.relation.group_size, zcdp_rho(rows, acc.relation), row_facts(comp), tuning=tuned)


def zcdp_rho(rows, relation) -> float | None:
    """rho-zCDP of the composition when every row is a Gaussian mechanism (view_model.zcdp_rho)."""
    from .engine.view_model import zcdp_rho as rho
    return rho(rows, relation)


def row_facts(comp: Composition) -> tuple[dict, ...]:
    """Each row's ``Mechanism.facts`` (where it has any), numbered from 1 as the table shows."""
    from .accounting.kinds.base import group_factor
    relation = comp.relation
    out = []
    for i, r in enumerate(comp.rows):
        facts = dict(r.to_row().mechanism.facts())
        if "rho" in facts and not relation.plain:  # (the sensitivity is per record; rho is for the relation)
            facts["rho"] = facts["rho"] * group_factor(relation) ** 2
        if facts:
            out.append({"row": i + 1, "kind": r.kind, **facts, "count": r.count})
    return tuple(out)


def _warn_all(answer: Answer) -> None:
    for note in answer.warnings:
        warnings.warn(note, AccuracyWarning, stacklevel=3)


def epsilon(comp: Composition | dict, delta: float | None = None, eps_error: float | None = None) -> Answer:
    """The whole answer for epsilon at ``delta`` (default: the composition's target delta):
    ``certified_upper`` to publish, the PRV bracket, ``epsilon_at_least`` where it exists, the
    comparisons and the warnings (``Answer``)."""
    comp = _composition(comp)
    a = query(comp, True, comp.targets.delta if delta is None else delta, eps_error)
    _warn_all(a)
    return a


def delta(comp: Composition | dict, epsilon: float, eps_error: float | None = None) -> Answer:
    """The whole answer for delta at ``epsilon`` (``Answer``; ``asked`` is "delta")."""
    from .accounting.core.validate import check_epsilon
    a = query(comp, False, check_epsilon(epsilon), eps_error)
    _warn_all(a)
    return a


def risk(comp: Composition | dict, fprs=None, priors=None, baselines=None, eps_error: float | None = None):
    """What the guarantee means for an attacker (``accounting.queries.risk.Risk``): the best
    membership-inference attack's TPR at each FPR and its advantage, the Bayes risk at each prior,
    reconstruction success at each baseline, and the certified mu-GDP (``.gdp``: mu, regret) --
    what ``prvgui risk FILE --json`` prints (``as_dict``)."""
    from .accounting.queries import risk as _risk
    comp = _composition(comp)
    err = comp.targets.eps_error if eps_error is None else eps_error
    return _risk.risk(comp.engine_rows(), _risk.DEFAULT_FPRS if fprs is None else fprs, comp.relation, err,
                      priors=_risk.DEFAULT_PRIORS if priors is None else priors,
                      baselines=_risk.DEFAULT_BASELINES if baselines is None else baselines)


def audit(canaries: int, guesses: int, correct: int, delta: float = 0.0, confidence: float = 0.95):
    """The epsilon a one-run audit proves (``accounting.queries.audit.AuditResult``: one-run bound,
    f-DP refinement; ``as_dict`` is ``prvgui audit --json``)."""
    from .accounting.queries.audit import audit as _audit
    return _audit(canaries, guesses, correct, delta, confidence)


def statement(comp: Composition | dict, delta: float | None = None, eps_error: float | None = None):
    """The structured privacy statement of a composition (``report.statement.Statement``: fields
    and flags; ``as_text``, ``as_markdown``, ``as_dict``), as the report and Edit > Copy give it."""
    from .engine.view_model import compute
    from .report.model import request_for
    from .report.statement import statement as _statement
    comp = _composition(comp)
    return _statement(compute(request_for(comp, delta, eps_error)), comp)


def from_training(config: dict):
    """A training configuration's rows, conversions and pitfalls (``document.training.Translation``;
    ``as_dict`` is ``prvgui from-training --json``)."""
    from .document.training import translate
    return translate(config)
