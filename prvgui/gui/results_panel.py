"""Results: the certified ε at the target δ, δ at the chosen ε, comparison accountants, time.

Printed bounds are rounded outwards (``fmt_bound``): the upper bound shown is never below
the computed one. While the inputs have changed since the shown result, the panel is
greyed out and a banner says why (recomputing, or what to fix). Above it, the cost prompt
asks before a costly computation starts (cost_prompt.py).
"""
from __future__ import annotations

import math

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (QAbstractItemView, QHeaderView, QLabel, QTableWidget, QTableWidgetItem,
                               QVBoxLayout, QWidget)

from ..accounting.certified import CertifiedUpper
from .cost_prompt import CostPrompt
from .fmt import fmt, fmt_bound
from .widgets import ERROR_COLOR, WARN_COLOR

KIND_TEXT = {"bound": "upper bound", "approximation": "approximation, may under-report",
             "exact": "exact", "certified": "certified bounds"}
COLUMNS = ("Accountant", "Kind", "ε at δ", "δ at ε", "Note")


def _best(best, prv_upper: float):
    """The result's publishable bound (the PRV's upper when the result carries none)."""
    return best if best is not None else CertifiedUpper(prv_upper, "prv")


def _estimate(b, digits: int = 4) -> str:
    """The estimate, unless the bracket is unbounded (then it means nothing)."""
    if not math.isfinite(b.upper):
        return "no estimate (the bracket is unbounded)"
    return f"estimate {fmt(b.estimate, digits)}"


def _value(v: object, kind: str, lower: bool = False) -> str:
    if v is None:
        return "n/a"
    return fmt_bound(v, up=not lower) if kind in ("bound", "certified") else fmt(v)


class ResultsPanel(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.result = None
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.setSpacing(3)
        #: shown in place of a computation too costly to start unasked (compute_view.py)
        self.prompt = CostPrompt()
        lay.addWidget(self.prompt)
        self.banner = QLabel("")
        self.banner.setObjectName("banner")
        self.banner.setWordWrap(True)
        self.banner.hide()
        lay.addWidget(self.banner)
        self.body = QWidget()
        body = QVBoxLayout(self.body)
        body.setContentsMargins(0, 0, 0, 0)
        body.setSpacing(2)
        lay.addWidget(self.body, 1)
        self.headline = QLabel("ε: —")
        self.headline.setObjectName("headline")
        self.headline.setTextFormat(Qt.TextFormat.RichText)
        self.headline.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.detail = QLabel("")
        self.detail.setObjectName("detail")
        self.detail.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.detail.setWordWrap(True)
        self.warnings = QLabel("")
        self.warnings.setObjectName("warnings")
        self.warnings.setWordWrap(True)
        self.warnings.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.warnings.setStyleSheet(f"color: {WARN_COLOR};")
        self.warnings.hide()
        body.addWidget(self.headline)
        body.addWidget(self.warnings)
        body.addWidget(self.detail)
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setObjectName("comparisons")
        self.table.setHorizontalHeaderLabels(list(COLUMNS))
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.table.setWordWrap(True)  # long notes wrap; the row grows to fit
        hh = self.table.horizontalHeader()
        for col in range(len(COLUMNS) - 1):
            hh.setSectionResizeMode(col, QHeaderView.ResizeMode.ResizeToContents)
        hh.setSectionResizeMode(len(COLUMNS) - 1, QHeaderView.ResizeMode.Stretch)
        self.table.verticalHeader().setDefaultSectionSize(self.table.fontMetrics().height() + 6)
        body.addWidget(self.table, 1)
        self.footer = QLabel("")
        self.footer.setObjectName("footer")
        self.footer.setStyleSheet("color: #555;")
        body.addWidget(self.footer)
        self.clear()

    # ------------------------------------------------------------ state
    def clear(self, message: str = "No result yet.") -> None:
        self.result = None
        self.headline.setText("<span style='font-size:15pt'>ε: —</span>")
        self.detail.setText(message)
        self.warnings.hide()
        self.table.setRowCount(0)
        self.footer.setText("")

    def set_stale(self, message: str | None, error: bool = False) -> None:
        """Grey out the shown result and say why (None: the result is current)."""
        self.body.setEnabled(message is None)
        self.banner.setVisible(message is not None)
        self.banner.setText(message or "")
        colour = ERROR_COLOR if error else "#555"
        self.banner.setStyleSheet(f"color: {colour}; font-weight: bold;")

    def show_result(self, result) -> None:
        self.result = result
        req, e = result.request, result.epsilon
        best = _best(result.certified_upper, e.upper)
        by = "" if best.by == "prv" else f" by {self._label(result, best.by)}"
        self.headline.setText(
            f"<span style='font-size:17pt; font-weight:600'>ε ≤ {fmt_bound(best.value)}</span>"
            f"&nbsp;&nbsp;<span style='color:#444'>certified{by}, at δ = {fmt(req.delta)}</span>")
        self.warnings.setText("\n".join(f"⚠ {w}" for w in result.warnings))
        self.warnings.setVisible(bool(result.warnings))
        lines = [f"PRV bracket: lower {fmt_bound(e.lower, up=False)} · {_estimate(e)} · "
                 f"accuracy ±{fmt(req.eps_error)}"]
        if result.delta is not None and req.epsilon is not None:
            d = result.delta
            best_d = _best(result.certified_upper_delta, d.upper)
            lines.append(f"At ε = {fmt(req.epsilon)}: δ ≤ {fmt_bound(best_d.value)} "
                         f"(lower {fmt_bound(d.lower, up=False)} · {_estimate(d)})")
        self.detail.setText("\n".join(lines))
        rows = self._rows(result)
        eps_text = "ε" if req.epsilon is None else f"ε = {fmt(req.epsilon)}"
        self.table.setHorizontalHeaderLabels([COLUMNS[0], COLUMNS[1], f"ε at δ = {fmt(req.delta)}",
                                              f"δ at {eps_text}", COLUMNS[4]])
        self.table.setRowCount(len(rows))
        for r, cells in enumerate(rows):
            for c, text in enumerate(cells):
                item = QTableWidgetItem(text)
                if c == len(cells) - 1:
                    item.setToolTip(text)
                if c in (2, 3):
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                if r == 0:
                    font = item.font()
                    font.setBold(True)
                    item.setFont(font)
                self.table.setItem(r, c, item)
        self.table.resizeRowsToContents()
        self.footer.setText(f"Computed in {result.elapsed:.2f} s · {len(req.rows)} row(s)")
        self.set_stale(None)

    def _rows(self, result) -> list[tuple[str, ...]]:
        req = result.request
        delta_up = result.delta.upper if result.delta is not None else None
        best = _best(result.certified_upper, result.epsilon.upper)
        note = "certified: safe to publish" if best.by == "prv" else \
            f"certified; {self._label(result, best.by)} gives the smaller bound here"
        rows = [("PRV (this calculator)", KIND_TEXT["certified"], _value(result.epsilon.upper, "certified"),
                 _value(delta_up, "certified"), note)]
        names = list(result.comparisons) + [n for n in result.comparisons_delta
                                            if n not in result.comparisons]
        for name in names:
            ce = result.comparisons.get(name) or {}
            cd = result.comparisons_delta.get(name) or {}
            info = ce or cd
            kind = info.get("kind", "")
            kind_text = KIND_TEXT.get(kind, kind)
            if name == "gdp":
                kind_text = KIND_TEXT["approximation"]
            note = ce.get("note") or cd.get("note") or ""
            if note == kind_text:
                note = ""
            rows.append((info.get("label", name), kind_text, _value(ce.get("value"), kind),
                         _value(cd.get("value"), kind) if req.epsilon is not None else "n/a", note))
        return rows

    @staticmethod
    def _label(result, name: str) -> str:
        """An accountant's short display name (``rdp`` -> ``RDP``)."""
        info = result.comparisons.get(name) or result.comparisons_delta.get(name) or {}
        return info.get("label", name).split(" (")[0]

    def as_text(self) -> str:
        """The results as plain text (Edit ▸ Copy results)."""
        r = self.result
        if r is None:
            return ""
        req, e = r.request, r.epsilon
        best = _best(r.certified_upper, e.upper)
        out = [f"prvgui results (δ = {req.delta!r}, accuracy ±{req.eps_error!r}, {len(req.rows)} row(s))",
               f"ε ≤ {fmt_bound(best.value, 6)} (certified upper bound"
               + ("" if best.by == "prv" else f", by {self._label(r, best.by)}") + "); "
               f"PRV lower {fmt_bound(e.lower, 6, up=False)}, {_estimate(e, 6)}"]
        out += [f"warning: {w}" for w in r.warnings]
        if r.delta is not None and req.epsilon is not None:
            out.append(f"at ε = {req.epsilon!r}: δ ≤ {fmt_bound(r.delta.upper, 6)}; "
                       f"lower {fmt_bound(r.delta.lower, 6, up=False)}, estimate {fmt(r.delta.estimate, 6)}")
        out.append("")
        out.append("\t".join(COLUMNS))
        for cells in self._rows(r):
            out.append("\t".join(cells))
        out.append("")
        out.append(f"computed in {r.elapsed:.2f} s")
        return "\n".join(out) + "\n"
