"""A structured privacy statement: what a reader needs to judge a DP claim, in the order the
reporting guides ask for it (Ponomareva et al., "How to DP-fy ML", JAIR 2023, Sec. 5.3; NIST SP
800-226, 2025), with flags for the classic mistakes. Built from an engine Result (and the
composition, for what only the file knows: the dataset size, the tuning), with no numerics of
its own: every number is one the result already certified.

Fields: unit of privacy, neighbouring relation, what is released, sampling as run and as
accounted, hyperparameter tuning, delta against 1/n, the guarantee (certified epsilon and its
tier), rho and mu beside epsilon, attack risk. Flags: delta >= 1/n (or delta above 1e-5 when n
is unknown), tuning not accounted, a weak tier, batches whose Poisson accounting would
under-state epsilon, a bracket that bounds a dominating pair only, G_mu a poor summary.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from ..accounting.core.values import Neighbouring, Relation
from ..document.export import batch_schemes
from ..engine.view_model import published, tuning_sentence, zcdp_rho
from .numbers import fmt, fmt_bound

#: Ponomareva et al.'s tiers of epsilon (Sec. 5.2): strong, reasonable, weak
TIERS = ((1.0, "Tier 1 (ε ≤ 1): a strong formal guarantee"),
         (10.0, "Tier 2 (1 < ε ≤ 10): a reasonable guarantee"),
         (math.inf, "Tier 3 (ε > 10): a weak formal guarantee; say what else protects the data"))
#: delta above this is flagged when the dataset size is not known
DELTA_WITHOUT_N = 1e-5


@dataclass(frozen=True)
class Statement:
    fields: tuple[tuple[str, str], ...]
    flags: tuple[str, ...]

    def as_dict(self) -> dict:
        return {"fields": [{"field": k, "value": v} for k, v in self.fields], "flags": list(self.flags)}

    def as_text(self) -> str:
        out = ["Privacy statement"] + [f"  {k}: {v}" for k, v in self.fields]
        out += [f"  flag: {f}" for f in self.flags]
        return "\n".join(out)

    def as_markdown(self) -> str:
        out = ["| Field | Value |", "|---|---|"] + [f"| {k} | {v.replace('|', '/')} |" for k, v in self.fields]
        if self.flags:
            out += [""] + [f"- **Flag:** {f}" for f in self.flags]
        return "\n".join(out)


def dataset_size(composition) -> int | None:
    """n where a row states it (a dataset size, or a matrix mechanism's amplification (m, B))."""
    for spec in getattr(composition, "rows", ()) or ():
        params = getattr(spec, "params", {}) or {}
        for key in ("dataset_size",):
            if isinstance(params.get(key), int) and params[key] > 0:
                return params[key]
        amp = params.get("amplification")
        if isinstance(amp, (tuple, list)) and amp and isinstance(amp[0], (int, float)) and amp[0] > 0:
            return int(amp[0])
    return None


def _released(rows) -> str:
    parts = []
    for r in rows:
        if r.count <= 0:
            continue
        parts.append(f"{r.mechanism.title} × {r.count:,}")
    if not parts:
        return "nothing (the composition is empty)"
    return ("every output of " + "; ".join(parts) + " (each run's output is accounted: for DP-SGD every "
            "iterate, so intermediate checkpoints are covered)")


def _tuning(composition, result) -> tuple[str, str | None]:
    tuning = getattr(composition, "tuning", None)
    got = getattr(result, "tuning", None)
    if tuning is None and got is None:
        return ("not stated: the runs of hyperparameter tuning are not accounted",
                "tuning is not accounted: if several runs were trained to pick hyperparameters, their "
                "cost is missing (state it in the composition's tuning)")
    if got is not None:
        sentence = tuning_sentence(got, lambda x: fmt_bound(x, 4))
        return (f"accounted: {sentence}", None)
    return (f"stated in the composition ({tuning.describe()}); not yet computed", None)


def statement(result, composition=None, risk=None) -> Statement:
    """The structured statement of ``result`` (an engine Result) for ``composition``; ``risk``
    (risk.Risk) stands in for the result's own read-out when given."""
    req = result.request
    rel = Relation(Neighbouring.parse(getattr(req, "neighbouring", "add_remove")), getattr(req, "group_size", 1))
    k, replace = rel.group_size, rel.replace
    unit = "one record" if k == 1 else f"any {k} records (e.g. one person's records, if each has at most {k})"
    relation = ("replace one record (bounded DP: the dataset size is public)" if replace
                else "add or remove one record (unbounded DP)")
    schemes = batch_schemes(req.rows)
    eps = published(result)
    fields = [("Unit of privacy", unit), ("Neighbouring relation", relation),
              ("What is released", _released(req.rows))]
    flags = []
    if schemes:
        as_acc = "the same scheme (its own certified pair)"
        pe = getattr(result, "poisson_epsilon", None)
        if pe is not None and math.isfinite(pe.upper):
            as_acc += f"; Poisson accounting would claim ε = {fmt_bound(pe.upper, 4)}"
            if pe.upper < eps:
                flags.append(f"batches run as {', '.join(schemes)}: accounting them as Poisson would "
                             f"under-state ε ({fmt_bound(pe.upper, 4)} against {fmt_bound(eps, 4)})")
        fields += [("Sampling as run", ", ".join(schemes)), ("Sampling as accounted", as_acc)]
    tuning, flag = _tuning(composition, result)
    fields.append(("Hyperparameter tuning", tuning))
    if flag:
        flags.append(flag)
    n = dataset_size(composition) if composition is not None else None
    if n is not None:
        fields.append(("δ against 1/n", f"δ = {fmt(req.delta)}, 1/n = {fmt(1.0 / n)} (n = {n:,})"))
        if req.delta >= 1.0 / n:
            flags.append(f"δ = {fmt(req.delta)} is not below 1/n = {fmt(1.0 / n)}: a mechanism that "
                         "publishes one random record outright meets it")
    else:
        fields.append(("δ against 1/n", f"δ = {fmt(req.delta)}; n is not stated: δ should be well below 1/n"))
        if req.delta > DELTA_WITHOUT_N:
            flags.append(f"δ = {fmt(req.delta)} is large: check it against 1/n for the dataset size n")
    tuned = getattr(result, "tuning", None)
    if isinstance(tuned, dict) and isinstance(tuned.get("epsilon"), (int, float)) and tuned["epsilon"] > eps:
        fields.append(("One training run", f"(ε, δ) = ({fmt_bound(eps, 4)}, {fmt(req.delta)}), certified"))
        eps = float(tuned["epsilon"])  # the released model is the best of the tuning runs
    tier = next(t for cap, t in TIERS if eps <= cap)
    fields.append(("Guarantee", f"(ε, δ) = ({fmt_bound(eps, 4)}, {fmt(req.delta)}), certified upper "
                               f"bound; {tier}"))
    if eps > 10:
        flags.append(f"ε = {fmt_bound(eps, 4)} is in tier 3: the formal guarantee alone is weak")
    at_least = getattr(result, "epsilon_at_least", None)
    if at_least is not None:
        fields.append(("Where the truth lies", f"the true ε of one run is between "
                                               f"{fmt_bound(at_least, 4, up=False)} (proven) and "
                                               f"{fmt_bound(published(result), 4)}"))
    rho = zcdp_rho(req.rows, rel)
    risk = risk if risk is not None else getattr(result, "risk", None)
    fit = getattr(risk, "gdp", None) if risk is not None else None
    beside = []
    if rho is not None:
        beside.append("no finite ρ (zCDP)" if math.isinf(rho) else f"ρ = {fmt_bound(rho, 4)} (zCDP)")
    if fit is not None and fit.mu is not None:
        if math.isinf(fit.mu):
            beside.append("no finite μ-GDP")
        else:
            beside.append(f"μ = {fmt_bound(fit.mu, 4)} (μ-GDP, {'exact' if fit.exact else 'certified'})")
            if fit.note and fit.resolved_mu is not None:
                beside.append(f"μ = {fmt_bound(fit.resolved_mu, 4)} where δ ≥ {fmt(fit.floor, 2)} (a "
                              "description of the curve there, not a guarantee)")
            if fit.note:
                flags.append(fit.note)
    if beside:
        fields.append(("Beside ε", "; ".join(beside)))
    if risk is not None and risk.bayes:
        b = next((x for x in risk.bayes if x.prior == 0.5), risk.bayes[0])
        fields.append(("Attack risk", f"at prior {fmt(b.prior)} the best membership attack is right with "
                                      f"probability at most {fmt_bound(b.accuracy.upper, 4)}; advantage at "
                                      f"most {fmt_bound(risk.advantage.upper, 4)}"))
    return Statement(tuple(fields), tuple(flags))
