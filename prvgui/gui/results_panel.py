"""Results: the certified ε at the target δ, δ at the chosen ε, comparison accountants, time.

Printed bounds are rounded outwards (``fmt_bound``): the upper bound shown is never below
the computed one. While the inputs have changed since the shown result, the panel is
greyed out and a banner says why (recomputing, or what to fix).
"""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (QAbstractItemView, QHeaderView, QLabel, QTableWidget, QTableWidgetItem,
                               QVBoxLayout, QWidget)

from .fmt import fmt, fmt_bound
from .widgets import ERROR_COLOR

KIND_TEXT = {"bound": "upper bound", "approximation": "approximation, may under-report",
             "exact": "exact", "certified": "certified bounds"}
COLUMNS = ("Accountant", "Kind", "ε at δ", "δ at ε", "Note")


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
        body.addWidget(self.headline)
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
        self.headline.setText(
            f"<span style='font-size:17pt; font-weight:600'>ε ≤ {fmt_bound(e.upper)}</span>"
            f"&nbsp;&nbsp;<span style='color:#444'>certified, at δ = {fmt(req.delta)}</span>")
        lines = [f"lower {fmt_bound(e.lower, up=False)} · estimate {fmt(e.estimate)} · "
                 f"accuracy ±{fmt(req.eps_error)}"]
        if result.delta is not None and req.epsilon is not None:
            d = result.delta
            lines.append(f"At ε = {fmt(req.epsilon)}: δ ≤ {fmt_bound(d.upper)} "
                         f"(lower {fmt_bound(d.lower, up=False)} · estimate {fmt(d.estimate)})")
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
        rows = [("PRV (this calculator)", KIND_TEXT["certified"], _value(result.epsilon.upper, "certified"),
                 _value(delta_up, "certified"), "certified: safe to publish")]
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

    def as_text(self) -> str:
        """The results as plain text (Edit ▸ Copy results)."""
        r = self.result
        if r is None:
            return ""
        req, e = r.request, r.epsilon
        out = [f"prvgui results (δ = {req.delta!r}, accuracy ±{req.eps_error!r}, {len(req.rows)} row(s))",
               f"ε ≤ {fmt_bound(e.upper, 6)} (certified upper bound); "
               f"lower {fmt_bound(e.lower, 6, up=False)}, "
               f"estimate {fmt(e.estimate, 6)}"]
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
