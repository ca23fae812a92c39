"""A composition as a short, runnable Python script for another library (issue 29):
``export_script(comp, "dp_accounting" | "opacus" | "prv_accountant")``. The script rebuilds the
rows in the library's own terms (script_rows.py), asks it for epsilon at the composition's target
delta and prints it; what the library cannot express is said in a comment beside the row and in a
printed NOTE line, and left out (or, for shuffled and random-allocation batches, replaced by the
Poisson counterpart, printed as NOT a certified bound). Numbers are written with repr(). prvgui
never imports these libraries; the script does.

dp_accounting: a DpEvent tree, PLDAccountant (and RdpAccountant on a second line), the
composition's relation (ADD_OR_REMOVE_ONE or REPLACE_ONE) for records, add/remove equivalents for
groups. Opacus: the accountant's history of (noise_multiplier, sample_rate, steps), RDPAccountant
and PRVAccountant. prv_accountant: PRVAccountant over its mechanisms, printing its bracket.
"""
from __future__ import annotations

from dataclasses import dataclass

from .. import __version__
from . import script_rows as sr
from .composition import Composition

TARGETS = ("dp_accounting", "opacus", "prv_accountant")
TARGET_CAVEATS = {
    ("dp_accounting", "exponential"): "dp_accounting's PLD accountant takes it as any ε-DP mechanism, "
                                      "looser than prvgui's bounded-range pair",
    ("dp_accounting", "zcdp"): "dp_accounting's PLD accountant does not take zCDP events (its RDP "
                               "accountant does)",
    ("prv_accountant", "exponential"): "exported as any ε-DP mechanism, looser than prvgui's bounded-range "
                                       "pair",
}


@dataclass(frozen=True)
class Script:
    """A script's text and the notes it prints (what it cannot express or only approximates)."""

    text: str
    notes: tuple[str, ...]


def export_script(comp: Composition, target: str) -> str:
    """The script's text."""
    return script(comp, target).text


def script(comp: Composition, target: str) -> Script:
    """The script for ``target`` and its notes."""
    if target not in TARGETS:
        raise ValueError(f"the target must be one of {', '.join(TARGETS)}; got {target!r}")
    relation = comp.relation
    native = target == "dp_accounting" and relation.group_size == 1
    replace = native and relation.replace
    notes: list[str] = []
    if relation.replace and not native:
        notes.append(f"{target} assumes add/remove neighbouring: replace-one rows are exported as their "
                     "add/remove equivalents (e.g. a Gaussian at twice the sensitivity) where one exists")
    if relation.group_size > 1:
        notes.append(f"groups of {relation.group_size} records: {target} has no group privacy; rows are "
                     "exported as their equivalents for the whole group where one exists")
    items: list[tuple[int, str, int, str]] = []  # (row, code, count, comment)
    for i, spec in enumerate(comp.rows):
        row = spec.to_row()
        where = f"row {i + 1} ({spec.title}{', ' + spec.label if spec.label else ''})"
        if row.mechanism.is_trivial():
            items.append((i + 1, "", 0, f"{where}: adds no privacy loss"))
            continue
        b = sr.basic(row.mechanism, relation, native)
        say = {"dp_accounting": lambda x: sr.dp_accounting(x, replace), "opacus": sr.opacus,
               "prv_accountant": sr.prv_accountant}[target]
        code = b if isinstance(b, str) else say(b)
        if isinstance(b, str) or code.startswith("!"):
            why = b if isinstance(b, str) else code[1:]
            notes.append(f"{where}: NOT EXPRESSED, left out: {why}")
            items.append((i + 1, "", 0, f"{where}: NOT EXPRESSED: {why}"))
            continue
        caveats = [c for c in (b.caveat, TARGET_CAVEATS.get((target, b.what), "")) if c]
        notes += [f"{where}: {c}" for c in caveats]
        items.append((i + 1, code, row.count * b.times, "; ".join([where, *caveats])))
    if comp.tuning is not None and target != "dp_accounting":
        notes.append(f"tuning ({comp.tuning.describe()}): {target} cannot express it; the epsilon is of "
                     "one run")
    head = _head(comp, target, notes)
    body = {"dp_accounting": _dp_accounting, "opacus": _opacus, "prv_accountant": _prv_accountant}[target]
    return Script(head + body(comp, items, replace), tuple(notes))


def _head(comp: Composition, target: str, notes: list[str]) -> str:
    lines = [f'"""Epsilon of a prvgui composition, computed by {target} (written by prvgui {__version__}).',
             "",
             f"prvgui certifies its own bracket: compare with `prvgui epsilon FILE --delta "
             f"{sr.r(comp.targets.delta)}`. {len(comp.rows)} row(s), {comp.relation.describe()}.",
             '"""']
    lines += ["", f"DELTA = {sr.r(comp.targets.delta)}", f"EPS_ERROR = {sr.r(comp.targets.eps_error)}",
              "NOTES = ["]
    lines += [f"    {n!r}," for n in notes]
    lines += ["]", "for note in NOTES:", '    print("NOTE:", note)', ""]
    return "\n".join(lines) + "\n"


def _rows(items: list[tuple[int, str, int, str]], line) -> list[str]:
    out = []
    for _, code, count, comment in items:
        out.append(f"# {comment}")
        if code:
            out.append(line(code, count))
    return out


def _dp_accounting(comp: Composition, items: list, replace: bool) -> str:
    rel = "REPLACE_ONE" if replace else "ADD_OR_REMOVE_ONE"
    lines = ["import math", "", "import dp_accounting", "from dp_accounting import dp_event as E", "",
             f"RELATION = dp_accounting.NeighboringRelation.{rel}", "",
             "",
             "def binomial(k, q):",
             '    """P(j of k records in the batch), j = 0..k: a group\'s Poisson-subsampled Gaussian."""',
             "    return [math.comb(k, j) * q ** j * (1 - q) ** (k - j) for j in range(k + 1)]",
             "", "", "events = []", "left_out = []", "", "",
             "def add(row, make, count):",
             "    try:",
             "        events.append(E.SelfComposedDpEvent(make(), count))",
             "    except AttributeError as exc:  # an event this dp_accounting does not have",
             '        left_out.append(f"row {row}: {exc}")', "", ""]
    for row, code, count, comment in items:
        lines.append(f"# {comment}")
        if code:
            lines.append(f"add({row}, lambda: {code}, {sr.r(count)})")
    lines += ["", "event = E.ComposedDpEvent(events)"]
    t = comp.tuning
    if t is not None and t.runs == "fixed":
        lines += [f"# tuning: {t.describe()}; releasing the best run is bounded by composing them all",
                  f"event = E.SelfComposedDpEvent(event, {sr.r(int(t.mean))})"]
    elif t is not None:
        shape = 'float("inf")' if t.runs == "poisson" else sr.r(t.eta)  # type: ignore[arg-type]
        lines += [f"# tuning: {t.describe()} (dp_accounting's RDP accountant takes it, its PLD one does not)",
                  f"event = E.RepeatAndSelectDpEvent(event, {sr.r(t.mean)}, {shape})"]
    lines += ["for line in left_out:",
              '    print("NOTE: left out, this dp_accounting has no such event:", line)',
              "accountants = [",
              "    (\"PLD\", lambda: dp_accounting.pld.PLDAccountant(neighboring_relation=RELATION)),",
              "    (\"RDP\", lambda: dp_accounting.rdp.RdpAccountant(neighboring_relation=RELATION))]",
              "for name, make in accountants:",
              "    try:",
              "        accountant = make()",
              "        accountant.compose(event)",
              "        epsilon = float(accountant.get_epsilon(DELTA))",
              "    except Exception as exc:  # the accountant cannot take some event",
              "        why = str(exc)",
              '        why = why[why.find("Error: "):] if "Error: " in why else why  # (not the tree)',
              '        print(f"dp_accounting {name}: cannot account this composition: {why[:400]}")',
              "    else:",
              '        print(f"epsilon (dp_accounting {name}) = {epsilon!r} at delta {DELTA!r}")']
    return "\n".join(lines) + "\n"


def _opacus(comp: Composition, items: list, replace: bool) -> str:
    lines = ["from opacus.accountants import PRVAccountant, RDPAccountant", "", "# (noise_multiplier, "
             "sample_rate, steps): the accountant's history, Poisson sampling, add/remove", "HISTORY = ["]
    lines += ["    " + x for x in _rows(items, lambda code, count: f"{code[:-1]}, {sr.r(count)}),")]
    lines += ["]", "",
              "for name, cls in ((\"RDP\", RDPAccountant), (\"PRV\", PRVAccountant)):",
              "    accountant = cls()",
              "    accountant.history = list(HISTORY)",
              "    try:",
              "        epsilon = float(accountant.get_epsilon(delta=DELTA))",
              "    except Exception as exc:  # e.g. an empty history",
              '        print(f"opacus {name}: cannot account this composition: {exc}")',
              "    else:",
              '        print(f"epsilon (opacus {name}) = {epsilon!r} at delta {DELTA!r}")']
    return "\n".join(lines) + "\n"


def _prv_accountant(comp: Composition, items: list, replace: bool) -> str:
    lines = ["from prv_accountant import (ApproximateDPMechanism, GaussianMechanism, LaplaceMechanism,",
             "                            PoissonSubsampledGaussianMechanism, PRVAccountant,",
             "                            PureDPMechanism)",
             "", "PRVS, COUNTS = [], []"]
    lines += _rows(items, lambda code, count: f"PRVS.append({code}); COUNTS.append({sr.r(count)})")
    lines += ["",
              "if not PRVS:",
              '    print("prv_accountant: nothing to account (every row was left out)")',
              "else:",
              "    try:",
              "        accountant = PRVAccountant(prvs=PRVS, max_self_compositions=COUNTS,",
              "                                   eps_error=EPS_ERROR, delta_error=DELTA * 1e-3)",
              "        bracket = accountant.compute_epsilon(delta=DELTA, num_self_compositions=COUNTS)",
              "    except Exception as exc:  # e.g. a mechanism its discretisation cannot hold",
              '        print(f"prv_accountant: cannot account this composition: {exc!r}")',
              "    else:",
              "        lower, estimate, upper = (float(x) for x in bracket)",
              '        print(f"epsilon (prv_accountant upper) = {upper!r} at delta {DELTA!r}")',
              '        print(f"prv_accountant bracket: lower {lower!r}, estimate {estimate!r}, "',
              '              f"upper {upper!r}")']
    return "\n".join(lines) + "\n"
