"""A Report as one self-contained HTML page: inline CSS, plots as inline SVG, no scripts, no
links to anything outside the page. No Qt.

``render(report, plot=...)`` lets the PDF writer put images in place of the SVGs and keep the
rest of the page (Qt's rich-text engine draws it). Everything from the report is escaped.
"""
from __future__ import annotations

from html import escape

from . import svg
from .model import Headline, Report
from .numbers import fmt

CSS = """
body { font-family: 'DejaVu Sans', Arial, Helvetica, sans-serif; font-size: 10pt; color: #222; }
h1 { font-size: 17pt; margin-bottom: 0.2em; }
h2 { font-size: 13pt; margin-top: 1.4em; border-bottom: 1px solid #ccc; padding-bottom: 2px; }
table { border-collapse: collapse; margin-top: 0.4em; margin-bottom: 0.4em; }
th, td { border: 1px solid #bbb; padding: 3px 6px; text-align: left; vertical-align: top; }
th { background: #eef2f8; }
td.num { text-align: right; white-space: nowrap; }
.headline { font-size: 15pt; font-weight: bold; }
.muted { color: #555; }
.warn { color: #8a5a00; }
.figure { margin-top: 0.6em; margin-bottom: 0.6em; }
"""
#: for a browser window: a readable line length (Qt's rich text, for the PDF, takes CSS only)
BROWSER_CSS = "body { max-width: 60em; margin: 1.5em auto; padding: 0 1em; }"


def _e(text: object) -> str:
    return escape(str(text))


def _table(header: tuple[str, ...], rows, numeric: tuple[int, ...] = (), wide: bool = False) -> str:
    width = ' width="100%"' if wide else ""
    out = [f'<table cellspacing="0" cellpadding="4" border="1"{width}>', "<tr>" + "".join(f"<th>{_e(h)}</th>" for h in header) + "</tr>"]
    for cells in rows:
        tds = []
        for i, c in enumerate(cells):
            cls = ' class="num" align="right"' if i in numeric else ""
            tds.append(f"<td{cls}>{_e(c)}</td>")
        out.append("<tr>" + "".join(tds) + "</tr>")
    out.append("</table>")
    return "\n".join(out)


def headline_html(h: Headline) -> str:
    who = f"{h.name}: " if h.name else ""
    by = "" if h.by == "PRV" else f" by {h.by}"
    out = [f'<p class="headline">{_e(who)}ε ≤ {_e(h.epsilon)} '
           f'<span class="muted" style="font-size:10pt; font-weight:normal">certified{_e(by)}, at δ = '
           f'{_e(fmt(h.delta))}</span></p>',
           f"<p>{_e(h.bracket_name)}: lower {_e(h.lower)} · estimate {_e(h.estimate)} · upper {_e(h.upper)}</p>"]
    if h.bracket:
        out.append(f'<p class="warn">{_e(" ".join(h.bracket))}</p>')
    if h.facts:
        out.append(f"<p>{_e(' '.join(h.facts))}</p>")
    if h.delta_at is not None:
        e, d, lo, est = h.delta_at
        out.append(f"<p>At ε = {_e(e)}: δ ≤ {_e(d)} (lower {_e(lo)} · estimate {_e(est)})</p>")
    if h.name:
        out.append(f'<p class="muted">Guarantee for: {_e(h.setting)}</p>')
    return "\n".join(out)


def _inline_svg(fig: svg.Figure, index: int) -> str:
    return svg.render(fig, uid=f"fig{index}")


def render(report: Report, plot=_inline_svg, css: str = CSS + BROWSER_CSS) -> str:
    """The page. ``plot(figure, index)`` gives the markup of one plot (inline SVG by default);
    ``css`` its style sheet."""
    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
           f"<title>{_e(report.title)}</title>", f"<style>{css}</style></head><body>",
           f"<h1>{_e(report.title)}</h1>",
           f'<p class="muted">prvgui {_e(report.version)} · created <span class="created">{_e(report.created)}'
           "</span></p>"]
    out.append("<h2>Composition</h2>")
    out.append(_table(("#", "Label", "Mechanism", "Parameters", "Count"),
                      [(i + 1, r.label, r.kind, "; ".join(r.parameters), f"{r.count:,}")
                       for i, r in enumerate(report.rows)], numeric=(0, 4), wide=True))
    out.append(_table(("Target", "Value"), report.targets, numeric=(1,)))
    out.append(f"<p><b>Guarantee for:</b> {_e(report.setting)}</p>")
    if report.statement:
        out.append("<h2>Privacy statement</h2>")
        out.append(_table(("Field", "Value"), report.statement, wide=True))
        for f in report.flags:
            out.append(f'<p class="warn">⚑ {_e(f)}</p>')
    out.append("<h2>Certified result</h2>")
    out.append(headline_html(report.headline))
    if report.pinned is not None:
        out.append(f"<h3>Pinned result {_e(report.pinned.name)}, for comparison</h3>")
        out.append(headline_html(report.pinned))
    for w in report.warnings:
        out.append(f'<p class="warn">⚠ {_e(w)}</p>')
    out.append("<h2>Accountants compared</h2>")
    out.append(_table(("Accountant", "Kind", f"ε at δ = {fmt(report.headline.delta)}",
                       "δ at " + (f"ε = {report.headline.delta_at[0]}" if report.headline.delta_at else "ε"),
                       "Note"),
                      [(a.label, a.kind, a.eps, a.delta, a.note) for a in report.accountants], numeric=(2, 3),
                      wide=True))
    out.append("<h2>Plots</h2>")
    for i, fig in enumerate(report.figures):
        out.append(f'<div class="figure">{plot(fig, i)}</div>')
    out.append("<h2>What it means for an attacker</h2>")
    out.append("<p>The best membership-inference attack against one protected person, bounded by the "
               "certified tradeoff function: its true-positive rate at a given false-positive rate lies in "
               "the interval shown (no attack does better than the upper end).</p>")
    header = ("Read-out", "this result") + ((f"pinned {report.pinned.name}",) if report.pinned else ())
    rows = [(w, a) + ((b or "n/a",) if report.pinned else ()) for w, a, b in report.risk]
    out.append(_table(header, rows, numeric=(1, 2)))
    out.append("<h2>What it costs in accuracy</h2>")
    if report.utility:
        out.append("<p>Half-width of the 95% interval of the noise each noisy row adds to one output:</p>")
        out.append(_table(("Row", "95% noise half-width"), report.utility, numeric=(1,)))
    else:
        out.append("<p>No row adds noise with a stated scale.</p>")
    out.append("<h2>Error budget of the certificate</h2>")
    if report.budget:
        out.append(_table(("Term",) + tuple(f"order: {o}" for o in report.budget_orders),
                          [(t,) + v for t, v in report.budget],
                          numeric=tuple(range(1, 1 + len(report.budget_orders)))))
    else:
        out.append("<p>The composition is empty: nothing to bound.</p>")
    out.append("<h2>Method</h2>")
    out += [f"<p>{_e(p)}</p>" for p in report.method]
    out.append("<ol>" + "".join(f"<li>{_e(r)}</li>" for r in report.references) + "</ol>")
    out.append(f'<p class="muted">Made with prvgui {_e(report.version)} on {_e(report.created)}.</p>')
    out.append("</body></html>")
    return "\n".join(out) + "\n"
