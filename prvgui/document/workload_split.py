"""A total budget split over a composition's rows by weights (``split_budget``): the document's side
of accounting/queries/workload.py (which does the numbers), mapping rows to the composition's rows
and back. No Qt.

In rho: row i gets rho_i = R w_i / sum w, and its noise is solved exactly (Gaussian and discrete
Gaussian rows: sigma; zCDP rows: rho). In epsilon: row i alone is calibrated to
(E w_i / sum w, delta / n)-DP, so that basic composition certifies (E, delta) for the whole; the
PRV accountant's certified epsilon of the whole is then at most E (up to its bracket) and usually
well below: report it beside the split (the command line does).
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable, Sequence

from ..accounting.queries.calibrate import Infeasible
from ..accounting.queries.workload import (RHO_KINDS, check_weights, noise_parameter, shares_of, split_epsilon,
                                           split_rho)
from .composition import Composition

CURRENCIES = ("rho", "epsilon")


@dataclass(frozen=True)
class Split:
    """A split's answer: the composition with the noise set, and per row the parameter set and the
    share of the total it was given (rho_i, or epsilon_i at delta / n)."""

    composition: Composition
    currency: str
    total: float
    delta: float
    weights: tuple[float, ...]
    parameters: tuple[str, ...]
    targets: tuple[float, ...]

    def note(self) -> str:
        """What the split guarantees, in words."""
        n = len(self.targets)
        if self.currency == "rho":
            return (f"Each row's ρ is its weight's share of ρ = {self.total:.6g}; zCDP adds up, so the "
                    f"composition is {self.total:.6g}-zCDP (Bun, Steinke 2016).")
        return (f"Each row alone is certified (ε_i, δ/{n})-DP with ε_i its weight's share of ε = {self.total:.6g}; "
                f"by basic composition the whole is ({self.total:.6g}, {self.delta:.6g})-DP, and its certified "
                "ε (below) is at most that, up to the accountant's bracket.")

    def as_dict(self) -> dict:
        return {"currency": self.currency, "total": self.total, "delta": self.delta,
                "rows": [{"row": i + 1, "label": r.label, "kind": r.kind, "weight": w, "parameter": p,
                          "value": r.params[p], "share": t}
                         for i, (r, w, p, t) in enumerate(zip(self.composition.rows, self.weights,
                                                               self.parameters, self.targets))],
                "note": self.note()}


def split_budget(comp: Composition, total: float, currency: str = "rho",
                 weights: Sequence[object] | None = None, delta: float | None = None,
                 eps_error: float | None = None, progress: Callable[[float, str], None] | None = None,
                 cancel: Callable[[], bool] | None = None) -> Split:
    """Set each row's noise so that the rows' shares of ``total`` (rho, or epsilon at ``delta``,
    default the composition's target) follow ``weights`` (default: equal). A row that cannot be
    split is refused by a ValueError naming it (``row 3 (county 12): ...``)."""
    if currency not in CURRENCIES:
        raise ValueError(f"the currency must be {' or '.join(CURRENCIES)}; got {currency!r}")
    if not comp.rows:
        raise ValueError("the composition has no rows to split a budget over")
    w = check_weights(weights, len(comp.rows))
    rows = comp.engine_rows()
    delta = comp.targets.delta if delta is None else delta
    err = comp.targets.eps_error if eps_error is None else eps_error
    try:
        if currency == "rho":
            new = split_rho(rows, total, w, comp.relation)
            names = [RHO_KINDS[r.kind] for r in comp.rows]
        else:
            new = split_epsilon(rows, total, delta, w, comp.relation, err, progress, cancel)
            names = [noise_parameter(r.kind) or "" for r in comp.rows]
    except Infeasible as exc:  # "row 3 (Laplace): ..." -> the row's label, as the table shows it
        raise Infeasible(_with_label(str(exc), comp)) from None
    except ValueError as exc:
        raise ValueError(_with_label(str(exc), comp)) from None
    specs = tuple(replace(spec, params={**spec.params, name: getattr(row.mechanism, name)})
                  for spec, row, name in zip(comp.rows, new, names))
    shares = tuple(shares_of(float(total), w))
    return Split(replace(comp, rows=specs), currency, float(total), float(delta), w, tuple(names), shares)


def _with_label(message: str, comp: Composition) -> str:
    """``row 3 (Laplace): ...`` as ``row 3 (county 12, Laplace): ...`` when the row has a label."""
    if message.startswith("row "):
        head = message.split(" ", 2)[1]
        if head.isdigit() and 1 <= int(head) <= len(comp.rows):
            label = comp.rows[int(head) - 1].label
            if label:
                return message.replace("(", f"({label}, ", 1)
    return message
