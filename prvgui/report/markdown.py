"""The report as Markdown and as JSON (``prvgui report --out REPORT.md|REPORT.json``): the same
Report the HTML page renders (model.gather), without the plots (a Markdown or JSON reader gets
the numbers; the window and the HTML report show the curves)."""
from __future__ import annotations

import dataclasses
import html
import json

from .model import Headline, Report
from .tables import md_cell


def _prose(x: object) -> str:
    """A sentence that may quote a label: the HTML specials escaped (as ``md_cell``)."""
    return html.escape(str(x), quote=False)


def _table(header: tuple[str, ...], rows) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(md_cell(c) for c in row) + " |" for row in rows]
    return out + [""]


def _headline(h: Headline) -> list[str]:
    by = "" if h.by == "PRV" else f" by {h.by}"
    out = [f"**ε ≤ {h.epsilon}** (certified{by}, at δ = {h.delta:g})", "",
           f"{h.bracket_name}: lower {h.lower} · estimate {h.estimate} · upper {h.upper}", ""]
    out += [f"> {' '.join(h.bracket)}", ""] if h.bracket else []
    out += [" ".join(h.facts), ""] if h.facts else []
    if h.delta_at is not None:
        e, d, lo, est = h.delta_at
        out += [f"At ε = {e}: δ ≤ {d} (lower {lo} · estimate {est})", ""]
    return out


def render_markdown(report: Report) -> str:
    out = [f"# {report.title}", "", f"prvgui {report.version} · created {report.created}", "",
           "## Composition", ""]
    out += _table(("#", "Label", "Mechanism", "Parameters", "Count"),
                  [(i + 1, r.label, r.kind, "; ".join(r.parameters), f"{r.count:,}")
                   for i, r in enumerate(report.rows)])
    out += _table(("Target", "Value"), report.targets)
    out += [f"**Guarantee for:** {report.setting}", ""]
    if report.statement:
        out += ["## Privacy statement", ""] + _table(("Field", "Value"), report.statement)
        out += [f"- **Flag:** {_prose(f)}" for f in report.flags] + ([""] if report.flags else [])
    out += ["## Certified result", ""] + _headline(report.headline)
    if report.pinned is not None:
        out += [f"### Pinned result {report.pinned.name}", ""] + _headline(report.pinned)
    out += [f"- ⚠ {_prose(w)}" for w in report.warnings] + ([""] if report.warnings else [])
    out += ["## Accountants compared", ""]
    out += _table(("Accountant", "Kind", "ε", "δ", "Note"),
                  [(a.label, a.kind, a.eps, a.delta, a.note) for a in report.accountants])
    out += ["## What it means for an attacker", ""]
    head = ("Read-out", "this result") + ((f"pinned {report.pinned.name}",) if report.pinned else ())
    out += _table(head, [(w, a) + ((b or "n/a",) if report.pinned else ()) for w, a, b in report.risk])
    if report.utility:
        out += ["## What it costs in accuracy", ""] + _table(("Row", "95% noise half-width"), report.utility)
    out += ["## Method", ""] + [p + "\n" for p in report.method]
    out += [f"{i + 1}. {r}" for i, r in enumerate(report.references)]
    return "\n".join(out) + "\n"


def report_dict(report: Report) -> dict:
    """Every field of the report but the plots, as JSON-ready values."""
    out = {}
    for f in dataclasses.fields(report):
        if f.name == "figures":
            continue
        v = getattr(report, f.name)
        out[f.name] = dataclasses.asdict(v) if dataclasses.is_dataclass(v) else _plain(v)
    out["statement"] = [{"field": k, "value": v} for k, v in report.statement]
    out["risk"] = [{"read_out": w, "value": a, "pinned": b} for w, a, b in report.risk]
    return out


def _plain(v):
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        return dataclasses.asdict(v)
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    return v


def render_json(report: Report) -> str:
    return json.dumps(report_dict(report), indent=1, ensure_ascii=False) + "\n"
