"""Budget view: how much of a total budget (eps_g, delta_g) a composition uses, and how
many more compositions of one row fit.

Two answers side by side:

* PRV accountant: the certified upper epsilon at delta_g against eps_g, and the largest
  count of the chosen row whose certified upper epsilon stays <= eps_g (calibrate.py).
  This accounts for a composition whose mechanisms are fixed in advance.
* Privacy filter with advanced composition (Rogers, Roth, Ullman, Vadhan 2016, "Privacy
  Odometers and Filters", as stated in the composition-theorems seed): valid even when each
  mechanism's (eps_i, delta_i) is chosen adaptively, for delta_g in (0, 1/e). With
  H = eps_g^2 / (28.04 log(1/delta_g)),
  K = sum eps_j (e^eps_j - 1) / 2 + sqrt((sum eps_i^2 + H) (2 + log(sum eps_i^2 / H + 1))
  log(2/delta_g)); HALT if sum delta_i > delta_g / 2 or K > eps_g, else CONTINUE.
  Applies only when every row has an (epsilon, delta) description.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Sequence

from .accountant import Accountant, rows_under
from ..core.values import Relation, as_relation
from ..core.validate import check_delta, check_eps_error, check_number
from .calibrate import COUNT_SEARCH, Infeasible, calibrate
from ..mechanisms import Row
from ..core.values import Bounds


@dataclass(frozen=True)
class BudgetStatus:
    eps_budget: float
    delta_budget: float
    epsilon: Bounds
    used_fraction: float
    decision: str
    row_index: int | None
    more: int | None
    filter_decision: str | None
    filter_more: int | None
    note: str

    def as_dict(self) -> dict:
        d = dict(self.__dict__)
        d["epsilon"] = self.epsilon.as_dict()
        return d


def filter_value(terms: Sequence[tuple[int, float, float]], eps_g: float, delta_g: float
                 ) -> tuple[float, float]:
    """(K, sum of deltas) of the advanced-composition privacy filter for (count, eps, delta) terms."""
    h = eps_g * eps_g / (28.04 * math.log(1.0 / delta_g))
    s2 = math.fsum(c * e * e for c, e, _ in terms)
    drift = math.fsum(c * e * math.expm1(min(e, 700.0)) / 2 for c, e, _ in terms)
    k = drift + math.sqrt((s2 + h) * (2 + math.log(s2 / h + 1)) * math.log(2.0 / delta_g))
    return k, math.fsum(c * d for c, _, d in terms)


def _filter_continues(terms, eps_g: float, delta_g: float) -> bool:
    k, dsum = filter_value(terms, eps_g, delta_g)
    return not (dsum > delta_g / 2 or k > eps_g)


def budget_status(rows: Sequence[Row], eps_budget: float, delta_budget: float,
                  row_index: int | None = None, eps_error: float = 0.01,
                  cancel: Callable[[], bool] | None = None, relation: Relation | None = None) -> BudgetStatus:
    """Budget use of ``rows`` against (eps_budget, delta_budget) and headroom for one row, under
    ``relation`` (default add/remove one record)."""
    eps_budget = check_number("ε budget", eps_budget, 0.0, lo_open=True, field="eps_budget")
    delta_budget = check_delta(delta_budget, "δ budget")
    eps_error = check_eps_error(eps_error)
    rows = rows_under(list(rows), as_relation(relation))  # each row's pair under the relation
    if row_index is not None and not 0 <= row_index < len(rows):
        raise ValueError(f"the row index must be from 0 to {len(rows) - 1}; got {row_index}")
    b = Accountant(rows, eps_error, cancel=cancel).epsilon(delta_budget)
    used = b.upper / eps_budget
    decision = "CONTINUE" if b.upper <= eps_budget else "HALT"
    more = None
    notes = []
    if row_index is not None:
        try:
            c = calibrate(rows, row_index, "count", eps_budget, delta_budget, eps_error, cancel=cancel)
            more = max(0, int(c.value) - rows[row_index].count)
            if c.at_bound:
                notes.append(f"the count search stopped at its limit of {int(COUNT_SEARCH.hi):,} runs")
        except Infeasible:
            more = 0
    # privacy filter (adaptive), rows with an (epsilon, delta) description only
    f_dec = f_more = None
    if delta_budget >= 1 / math.e:
        notes.append("the privacy filter needs a δ budget below 1/e (0.3679)")
    else:
        live = [r for r in rows if r.count > 0 and not r.mechanism.is_trivial()]
        descr = [(r.count, *r.mechanism.eps_delta()) if r.mechanism.eps_delta() is not None else None
                 for r in live]
        if None in descr:
            titles = list(dict.fromkeys(r.mechanism.title for r in live if r.mechanism.eps_delta() is None))
            notes.append(f"the privacy filter needs one (ε, δ) guarantee per run of every row, and "
                         f"{' and '.join(titles)} has none")
        else:
            f_dec = "CONTINUE" if _filter_continues(descr, eps_budget, delta_budget) else "HALT"
            if row_index is not None:
                ed = rows[row_index].mechanism.eps_delta()
                if ed is not None:
                    f_more = _filter_headroom(descr, ed, eps_budget, delta_budget)
    return BudgetStatus(eps_budget, delta_budget, b, used, decision, row_index, more, f_dec, f_more,
                        "; ".join(notes))


def _filter_headroom(descr, ed, eps_g: float, delta_g: float, limit: int = 10 ** 9) -> int:
    """Largest m >= 0 such that m more (eps, delta) runs keep the filter at CONTINUE."""
    def ok(m: int) -> bool:
        return _filter_continues(descr + [(m, ed[0], ed[1])], eps_g, delta_g)
    if not ok(0):
        return 0
    lo, hi = 0, 1
    while ok(hi):
        lo, hi = hi, hi * 2
        if hi > limit:
            return limit
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if ok(mid):
            lo = mid
        else:
            hi = mid
    return lo
