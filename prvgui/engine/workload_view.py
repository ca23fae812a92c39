"""A workload's shares as the window and the command line show them: one dict per row (its share of
the total privacy cost, in the currency named), the dominant rows and the sentences that say what
the numbers are and are not. The numbers are accounting/queries/workload.py's ``row_shares``.

    {"currency": "rho" | "rdp" | "epsilon", "additive": bool, "order": a (rdp) or None,
     "total": ..., "threshold": 0.8, "dominant": [row numbers, largest share first],
     "rows": [{"row", "label", "kind", "share", "value", "currency"}, ...], "notes": [...]}
"""
from __future__ import annotations

from typing import Callable, Sequence

from ..accounting.core.values import Relation, Row
from ..accounting.queries.workload import Shares, row_shares

#: what each currency's value is, in words (the table's column header and the notes)
CURRENCY_WORDS = {"rho": "ρ (zCDP)", "rdp": "RDP at order α", "epsilon": "ε alone (not additive)"}
NOT_A_SUM = ("The certified ε of the whole composition is not a sum of the rows' shares: the PRV accountant "
             "composes the rows' privacy loss distributions, and says how the whole adds up.")


def currency_label(shares: Shares) -> str:
    """``ρ (zCDP)``, ``RDP at order α = 12`` or ``ε alone (not additive)``."""
    if shares.currency == "rdp":
        return f"RDP at order α = {shares.order:g}"
    return CURRENCY_WORDS[shares.currency]


def shares_notes(shares: Shares, delta: float) -> list[str]:
    """The sentences shown under the table."""
    pct = f"{100 * shares.threshold:g}%"
    out = []
    if shares.currency == "rho":
        out.append("Each row's share of the composition's ρ-zCDP (ρ adds up over rows: count × ρ of one run; "
                   f"the whole is {shares.total:.6g}-zCDP).")
    elif shares.currency == "rdp":
        out.append(f"Not every row has an exact ρ: each row's share of the composition's RDP at order "
                   f"α = {shares.order:g}, the order where the whole RDP curve gives the smallest ε at "
                   f"δ = {delta:g} (RDP adds up over rows at each order).")
    else:
        out.append(f"Not additive: some row has no RDP curve, so each row's share is of the sum of the rows' "
                   f"certified ε alone at δ = {delta:g}; it says which rows cost most, not how the whole adds up.")
    if shares.total == 0:
        out.append("No row leaks anything: every share is 0.")
    else:
        n = len(shares.dominant)
        out.append(f"Dominant: the {'row' if n == 1 else f'{n} rows'} marked make{'s' if n == 1 else ''} up at "
                   f"least {pct} of the total (the fewest rows that do, largest first).")
    out.append(NOT_A_SUM)
    return out


#: dominant rows named by number at most (the rest are counted: a workload of alike rows has
#: hundreds of them, which the table's marks show each)
LISTED = 12


def dominant_text(rows: Sequence[int], total: int, where: str = "marked") -> str:
    """The dominant rows (numbers, largest share first) as a summary names them: all of them up
    to LISTED, else the LISTED largest and how many more (``where`` says where the rest are)."""
    if not rows:
        return "none"
    named = ", ".join(str(i) for i in rows[:LISTED])
    if len(rows) <= LISTED:
        return f"row(s) {named}"
    return f"{len(rows)} of {total} rows, the largest {named} and {len(rows) - LISTED} more ({where})"


def shares_view(rows: Sequence[Row], labels: Sequence[str], relation: Relation, delta: float,
                eps_error: float = 0.01, cancel: Callable[[], bool] | None = None) -> dict:
    """The shares of ``rows`` (``labels``: each row's label, "" for none) as the JSON-friendly dict
    of the module docstring."""
    s = row_shares(rows, relation, delta, eps_error, cancel=cancel)
    currency = currency_label(s)
    table = [{"row": i + 1, "label": label, "kind": r.mechanism.kind, "share": share, "value": value,
              "currency": currency}
             for i, (r, label, share, value) in enumerate(zip(rows, labels, s.shares, s.values))]
    return {"currency": s.currency, "additive": s.additive, "order": s.order, "total": s.total,
            "threshold": s.threshold, "dominant": [i + 1 for i in s.dominant], "rows": table,
            "notes": shares_notes(s, delta)}
