"""The results table as plain data, and as Markdown or LaTeX text (Edit ▸ Copy as Markdown /
Copy as LaTeX, and the report's comparison table). No Qt.

The table is the window's: the certified headline (the publishable upper bound, the PRV
bracket lower / estimate / upper), then one line per accountant with its kind as the app
reports it (certified bounds, upper bound, approximation, exact), its ε at the target δ and
δ at the chosen ε; then the targets and the neighbouring relation. Upper bounds are printed
rounded up and lower bounds rounded down (``numbers.fmt_bound``).
"""
from __future__ import annotations

import html
import math
from dataclasses import dataclass

from ..accounting.core.values import Relation
from ..engine.view_model import bracket_shown, fact_sentences
from ..document.export import setting_text
from .numbers import fmt, fmt_bound

#: how each kind of accountant is named, as in the window's results table
KIND_TEXT = {"bound": "upper bound", "approximation": "approximation, may under-report",
             "exact": "exact", "certified": "certified bounds"}
HEADER = ("Accountant", "Kind", "ε at δ", "δ at ε", "Note")


@dataclass(frozen=True)
class AccountantLine:
    name: str
    label: str
    kind: str
    eps: str
    delta: str
    note: str


def certified(result) -> tuple[float, str]:
    """(the publishable upper bound on ε, the name of the accountant that gave it)."""
    best = getattr(result, "certified_upper", None)
    return (best.value, best.by) if best is not None else (result.epsilon.upper, "prv")


def certified_delta(result) -> tuple[float, str] | None:
    if result.delta is None:
        return None
    best = getattr(result, "certified_upper_delta", None)
    return (best.value, best.by) if best is not None else (result.delta.upper, "prv")


def short_label(result, name: str) -> str:
    """An accountant's short name (``rdp`` -> ``RDP``)."""
    info = result.comparisons.get(name) or result.comparisons_delta.get(name) or {}
    return info.get("label", name).split(" (")[0]


def _value(v: object, kind: str) -> str:
    if v is None:
        return "n/a"
    return fmt_bound(v) if kind in ("bound", "certified") else fmt(v)


def accountant_lines(result) -> list[AccountantLine]:
    """The comparison table: the PRV accountant first, then the others in the engine's order."""
    req = result.request
    value, by = certified(result)
    note = "certified: safe to publish" if by == "prv" else \
        f"certified; {short_label(result, by)} gives the smaller bound here"
    d_up = result.delta.upper if result.delta is not None else None
    out = [AccountantLine("prv", "PRV (this calculator)", KIND_TEXT["certified"],
                          _value(result.epsilon.upper, "certified"), _value(d_up, "certified"), note)]
    names = list(result.comparisons) + [n for n in result.comparisons_delta if n not in result.comparisons]
    for name in names:
        ce = result.comparisons.get(name) or {}
        cd = result.comparisons_delta.get(name) or {}
        info = ce or cd
        kind = info.get("kind", "")
        kind_text = KIND_TEXT["approximation"] if name == "gdp" else KIND_TEXT.get(kind, kind)
        note = ce.get("note") or cd.get("note") or ""
        out.append(AccountantLine(name, info.get("label", name), kind_text, _value(ce.get("value"), kind),
                                  _value(cd.get("value"), kind) if req.epsilon is not None else "n/a",
                                  "" if note == kind_text else note))
    return out


def headline_text(result) -> str:
    """``ε ≤ 5.363 (certified, by PRV) at δ = 1e-05; PRV bracket [5.343, 5.363], estimate 5.353``."""
    e, req = result.epsilon, result.request
    value, by = certified(result)
    by_text = "PRV" if by == "prv" else short_label(result, by)
    name, lower, est_value, _ = bracket_shown(result)
    est = fmt(est_value) if math.isfinite(e.upper) else "n/a"
    text = (f"ε ≤ {fmt_bound(value)} (certified, by {by_text}) at δ = {fmt(req.delta)}; "
            f"{name} [{fmt_bound(lower, up=False)}, {fmt_bound(e.upper)}], estimate {est}")
    at_least = getattr(result, "epsilon_at_least", None)
    if at_least is not None:
        text += f"; the true ε is at least {fmt_bound(at_least, up=False)} (proven lower bound)"
    return text


def context_lines(result) -> list[tuple[str, str]]:
    """(name, value) of the settings the table is for: targets and the relation."""
    req = result.request
    out = [("Certified headline", headline_text(result)), ("Target δ", fmt(req.delta)),
           ("Accuracy (ε error)", fmt(req.eps_error))]
    if req.epsilon is not None:
        out.append(("δ reported at ε", fmt(req.epsilon)))
        cd = certified_delta(result)
        if cd is not None:
            d = result.delta
            out.append(("δ at that ε", f"δ ≤ {fmt_bound(cd[0])} (PRV bracket [{fmt_bound(d.lower, up=False)}, "
                                       f"{fmt_bound(d.upper)}])"))
    out.append(("Guarantee for", setting_text(req)))
    relation = Relation(req.neighbouring, req.group_size)
    out += [("Gaussian facts", f) for f in fact_sentences(req.rows, relation)]
    return out


def _header(result) -> tuple[str, ...]:
    req = result.request
    eps_text = "ε" if req.epsilon is None else f"ε = {fmt(req.epsilon)}"
    return (HEADER[0], HEADER[1], f"ε at δ = {fmt(req.delta)}", f"δ at {eps_text}", HEADER[4])


def md_cell(x: object) -> str:
    """Text for a Markdown table cell: a backslash, a pipe and the HTML specials (a label may be
    ``<script>``: a renderer that passes HTML through would run it) escaped, lines joined."""
    return html.escape(str(x).replace("\\", "\\\\").replace("|", "\\|").replace("\n", " "), quote=False)


def markdown_table(result) -> str:
    """The results as Markdown: the settings as a two-column table, then the accountants."""
    lines = ["| Setting | Value |", "| --- | --- |"]
    lines += [f"| {md_cell(k)} | {md_cell(v)} |" for k, v in context_lines(result)]
    lines.append("")
    head = _header(result)
    lines.append("| " + " | ".join(md_cell(h) for h in head) + " |")
    lines.append("| --- | --- | ---: | ---: | --- |")
    for a in accountant_lines(result):
        cells = (a.label, a.kind, a.eps, a.delta, a.note)
        lines.append("| " + " | ".join(md_cell(c) for c in cells) + " |")
    return "\n".join(lines) + "\n"


#: LaTeX's special characters in text mode, and the symbols the table uses
_LATEX = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
          "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
          "ε": r"$\varepsilon$", "δ": r"$\delta$", "σ": r"$\sigma$", "ρ": r"$\rho$", "ξ": r"$\xi$",
          "Δ": r"$\Delta$", "≤": r"$\leq$", "≥": r"$\geq$", "∞": r"$\infty$", "−": "-",
          "±": r"$\pm$", "×": r"$\times$", "·": r"$\cdot$", "₀": r"$_0$", "α": r"$\alpha$",
          "β": r"$\beta$", "μ": r"$\mu$", "<": r"$<$", ">": r"$>$", "|": r"\textbar{}", "\u202f": "~",
          "–": "--", "—": "---", "≈": r"$\approx$"}


def latex_escape(text: str) -> str:
    """Text for a LaTeX table cell: the special characters escaped, Greek letters as math."""
    return "".join(_LATEX.get(ch, ch) for ch in text)


def latex_table(result) -> str:
    """The results as a LaTeX ``tabular`` (no packages needed), the settings above it."""
    lines = [r"\begin{tabular}{ll}", r"\hline", r"Setting & Value \\", r"\hline"]
    lines += [f"{latex_escape(k)} & {latex_escape(v)} \\\\" for k, v in context_lines(result)]
    lines += [r"\hline", r"\end{tabular}", "", r"\begin{tabular}{llrrl}", r"\hline"]
    lines.append(" & ".join(latex_escape(h) for h in _header(result)) + r" \\")
    lines.append(r"\hline")
    for a in accountant_lines(result):
        cells = (a.label, a.kind, a.eps, a.delta, a.note)
        lines.append(" & ".join(latex_escape(c) for c in cells) + r" \\")
    lines += [r"\hline", r"\end{tabular}"]
    return "\n".join(lines) + "\n"
