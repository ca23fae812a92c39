"""Results: the certified ε at the target δ, δ at the chosen ε, comparison accountants, time.

Printed bounds are rounded outwards (``fmt_bound``): the upper bound shown is never below
the computed one. While the inputs have changed since the shown result, the panel is
greyed out and a banner says why (recomputing, or what to fix).

Where a row's pair is an upper bound only (shuffled or fixed-size batches, zCDP, the exponential
mechanism, the shuffle model: ``Result.epsilon_at_least``) the certified bound holds but no
tight accountant exists: beside the headline the panel says in words that the true ε lies between
the proven lower bound and the certified upper bound, with the Poisson number for contrast,
marked as not a guarantee. The headline's publishable number stays the certified upper bound. Above it, the cost prompt
asks before a costly computation starts (cost_prompt.py).
"""
from __future__ import annotations

import math
from dataclasses import replace

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QAction, QFontMetrics, QResizeEvent
from PySide6.QtWidgets import (QAbstractItemView, QApplication, QHBoxLayout, QHeaderView, QLabel, QMenu,
                               QPushButton, QTableWidget, QTableWidgetItem, QToolButton, QVBoxLayout,
                               QWidget)

from ..accounting.queries.certified import CertifiedUpper
from ..engine.view_model import (bracket_shown, failure, failure_notes, tuning_sentence, untight_note,
                                 untight_sentences)
from ..report.tables import latex_table, markdown_table
from .pin import PinBar
from .cost_prompt import CostPrompt
from .fmt import fmt, fmt_bound
from .widgets import ERROR_COLOR, WARN_COLOR

KIND_TEXT = {"bound": "upper bound", "approximation": "approximation, may under-report",
             "exact": "exact", "certified": "certified bounds"}
COLUMNS = ("Accountant", "Kind", "ε at δ", "δ at ε", "Note")
#: one sentence per accountant, the tooltip of its row
ACCOUNTANT_TIPS = {
    "prv": "This calculator: certified lower and upper bounds from the privacy loss distributions, "
           "composed numerically with every error term accounted for.",
    "rdp": "Rényi DP (the moments accountant): adds the rows' Rényi divergences and converts them to "
           "(ε, δ); always an upper bound, usually a looser one.",
    "gdp": "Gaussian DP by the central limit theorem: an approximation that may under-report ε, exact "
           "when every row is Gaussian.",
    "basic": "Basic composition: adds up the rows' ε and δ; a valid but loose upper bound.",
    "advanced": "Advanced composition (Dwork, Rothblum, Vadhan 2010): an upper bound that grows with the "
                "square root of the number of runs.",
    "exact": "Optimal composition of one (ε, δ) pair (Kairouz, Oh, Viswanath 2015): exact, when every "
             "row is the same pure or approximate DP mechanism.",
}


def _best(best, prv_upper: float):
    """The result's publishable bound (the PRV's upper when the result carries none)."""
    return best if best is not None else CertifiedUpper(prv_upper, "prv")


def _estimate(b, digits: int = 4) -> str:
    """The estimate, unless the bracket is unbounded (then it means nothing)."""
    if not math.isfinite(b.upper):
        return "no estimate (the bracket is unbounded)"
    return f"estimate {fmt(b.estimate, digits)}"


def bracket_words(result, digits: int = 4) -> list[str] | None:
    """The bracket around the truth for a result whose rows include pairs that are upper bounds
    only (shuffled or fixed-size batches, zCDP, ...), as sentences (None when the result has no
    such bracket): the engine's own words (view_model.untight_sentences), numbers at ``digits``."""
    at_least = getattr(result, "epsilon_at_least", None)
    if at_least is None:
        return None
    upper = _best(result.certified_upper, result.epsilon.upper).value
    return untight_sentences(result.request.rows, at_least, upper, getattr(result, "poisson_epsilon", None),
                             lambda v, up: fmt_bound(v, digits, up=up), getattr(result, "shuffled_epsilon", None))


def _value(v: object, kind: str, lower: bool = False) -> str:
    if v is None:
        return "n/a"
    return fmt_bound(v, up=not lower) if kind in ("bound", "certified") else fmt(v)


class FittingTable(QTableWidget):
    """A table whose columns share its width instead of hiding behind a scrollbar: the number
    columns keep their natural width; the text columns get theirs when there is room, else shrink
    together towards their longest word (their text wraps, the rows grow); the last column takes
    what is left. Only a table too narrow for the longest words scrolls sideways."""

    #: columns that never wrap (numbers)
    numeric: tuple[int, ...] = (2, 3)
    #: room for a cell's margins beside its text
    PAD = 14

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self.fit_columns()

    def _text_widths(self, col: int) -> tuple[int, int]:
        """(natural, narrowest) width of a text column: its longest line, its longest word."""
        header = self.horizontalHeader().sectionSizeHint(col)
        natural, word = header, header
        for row in range(self.rowCount()):
            item = self.item(row, col)
            if item is None or not item.text():
                continue
            fm = QFontMetrics(item.font())
            natural = max(natural, fm.horizontalAdvance(item.text()) + self.PAD)
            word = max(word, max(fm.horizontalAdvance(w) for w in item.text().split()) + self.PAD)
        return natural, min(word, natural)

    def fit_columns(self) -> None:
        n = self.columnCount()
        if n == 0:
            return
        hh = self.horizontalHeader()
        width = {c: max(self.sizeHintForColumn(c), hh.sectionSizeHint(c)) for c in self.numeric if c < n}
        text = [c for c in range(n) if c not in width]
        natural, narrow = {}, {}
        for c in text:
            natural[c], narrow[c] = self._text_widths(c)
        room = self.viewport().width() - sum(width.values())
        want, least = sum(natural.values()), sum(narrow.values())
        if want <= room:
            width.update(natural)
        elif least < room:
            share = (room - least) / (want - least)
            width.update({c: int(narrow[c] + share * (natural[c] - narrow[c])) for c in text})
        else:
            width.update(narrow)
        last = n - 1
        width[last] = max(width[last], room + sum(width[c] for c in self.numeric if c < n)
                          - sum(w for c, w in width.items() if c != last))
        for c in range(n):
            hh.resizeSection(c, width[c])
        self.resizeRowsToContents()


#: Copy as ...: the table text of each format (report/tables.py)
COPY_FORMATS = {"markdown": ("Markdown", markdown_table), "latex": ("LaTeX", latex_table)}


class ResultsPanel(QWidget):
    #: after show_result (the result), set_stale (message, error) and clear (message): the
    #: risk panel and the pin (compare.py) follow the panel's state
    result_shown = Signal(object)
    stale_changed = Signal(object, bool)
    cleared = Signal(str)
    #: the results were copied to the clipboard (the format's name)
    copied = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.result = None
        #: (headers, rows, accountant names) of the table on show
        self._table: tuple | None = None
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.setSpacing(3)
        self._build_banner(lay)
        body = self._build_body(lay)
        self._build_headline(body)
        self._build_table(body)
        self._build_footer(body)
        self.clear()

    # ------------------------------------------------------------ building the panel
    def _build_banner(self, lay: QVBoxLayout) -> None:
        """Above the result: the cost prompt, the out-of-date banner and the relation fix button."""
        #: shown in place of a computation too costly to start unasked (compute_view.py)
        self.prompt = CostPrompt()
        lay.addWidget(self.prompt)
        self.banner = QLabel("")
        self.banner.setObjectName("banner")
        self.banner.setWordWrap(True)
        self.banner.hide()
        lay.addWidget(self.banner)
        #: one click to the relation every row accepts (``offer_fix``), beside the banner
        self.fix_button = QPushButton("")
        self.fix_button.setObjectName("relation_fix")
        self.fix_button.hide()
        self.fix_button.clicked.connect(self._fix_clicked)
        self._fix = None
        lay.addWidget(self.fix_button, 0, Qt.AlignmentFlag.AlignLeft)

    def _build_body(self, lay: QVBoxLayout) -> QVBoxLayout:
        """The part greyed out while the result is out of date (``body``); returns its layout."""
        self.body = QWidget()
        body = QVBoxLayout(self.body)
        body.setContentsMargins(0, 0, 0, 0)
        body.setSpacing(2)
        lay.addWidget(self.body, 1)
        return body

    def _build_headline(self, body: QVBoxLayout) -> None:
        """The headline ε with the pin bar, the bracket, the warnings and the detail line."""
        self.headline = QLabel("ε: —")
        self.headline.setObjectName("headline")
        self.headline.setTextFormat(Qt.TextFormat.RichText)
        self.headline.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.detail = QLabel("")
        self.detail.setObjectName("detail")
        self.detail.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.detail.setWordWrap(True)
        self.bracket = QLabel("")
        self.bracket.setObjectName("shuffled_bracket")
        self.bracket.setWordWrap(True)
        self.bracket.setTextFormat(Qt.TextFormat.PlainText)
        self.bracket.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.bracket.setStyleSheet(f"color: {WARN_COLOR}; background: #fff6e0; border: 1px solid #e5c77a; "
                                   "border-radius: 3px; padding: 3px;")
        self.bracket.setToolTip("The PRV accountant's pair for a shuffled row (one Gaussian per epoch, no "
                                "amplification) bounds the truth from above; an attack on shuffled "
                                "batches (Chua et al., ICML 2024) proves the lower end. Poisson "
                                "accounting assumes a different sampling scheme.")
        self.bracket.hide()
        self.warnings = QLabel("")
        self.warnings.setObjectName("warnings")
        self.warnings.setWordWrap(True)
        self.warnings.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.warnings.setStyleSheet(f"color: {WARN_COLOR};")
        self.warnings.hide()
        #: "Pin as A" / "Unpin A" beside the headline, A's bracket under it (compare.py)
        self.pin_bar = PinBar()
        head = QHBoxLayout()
        head.addWidget(self.headline, 1)
        head.addWidget(self.pin_bar)
        body.addLayout(head)
        body.addWidget(self.pin_bar.label)
        body.addWidget(self.bracket)
        body.addWidget(self.warnings)
        body.addWidget(self.detail)
        #: releasing the best of the tuning runs (the engine's sentence), shown when the composition
        #: says how it was tuned
        self.tuning = QLabel("")
        self.tuning.setObjectName("tuning")
        self.tuning.setWordWrap(True)
        self.tuning.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.tuning.hide()
        body.addWidget(self.tuning)

    def _build_table(self, body: QVBoxLayout) -> None:
        """The comparison of the accountants (``table``)."""
        self.table = FittingTable(0, len(COLUMNS))
        self.table.setObjectName("comparisons")
        self.table.setHorizontalHeaderLabels(list(COLUMNS))
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.table.setWordWrap(True)  # long notes wrap; the row grows to fit
        hh = self.table.horizontalHeader()
        hh.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)  # fit_columns sets the widths
        hh.setStretchLastSection(False)
        self.table.verticalHeader().setDefaultSectionSize(self.table.fontMetrics().height() + 6)
        body.addWidget(self.table, 1)

    def _build_footer(self, body: QVBoxLayout) -> None:
        """The footer line (time taken) beside "Copy as"."""
        self.footer = QLabel("")
        self.footer.setObjectName("footer")
        self.footer.setStyleSheet("color: #555;")
        foot = QHBoxLayout()
        foot.setContentsMargins(0, 0, 0, 0)
        foot.addWidget(self.footer, 1)
        foot.addWidget(self._copy_button())
        body.addLayout(foot)

    def _copy_button(self) -> QToolButton:
        """"Copy as" with Markdown and LaTeX, also on the table's context menu."""
        self.copy_button = QToolButton()
        self.copy_button.setObjectName("copy_as")
        self.copy_button.setText("Copy as")
        self.copy_button.setToolTip("Copy the results table (headline, accountants, targets, relation) "
                                    "as a Markdown or LaTeX table")
        self.copy_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        menu = QMenu(self.copy_button)
        self.copy_actions: dict[str, QAction] = {}
        for key, (name, _) in COPY_FORMATS.items():
            action = menu.addAction(f"Copy as {name}", lambda k=key: self.copy_as(k))
            self.copy_actions[key] = action
            self.table.addAction(action)
        self.table.setContextMenuPolicy(Qt.ContextMenuPolicy.ActionsContextMenu)
        self.copy_button.setMenu(menu)
        return self.copy_button

    def copy_text(self, fmt_name: str) -> str:
        """The shown result's table as ``markdown`` or ``latex`` text ("" without a result)."""
        return COPY_FORMATS[fmt_name][1](self.result) if self.result is not None else ""

    def copy_as(self, fmt_name: str) -> bool:
        """Put the results table on the clipboard as ``markdown`` or ``latex``."""
        text = self.copy_text(fmt_name)
        if not text:
            return False
        QApplication.clipboard().setText(text)
        self.copied.emit(COPY_FORMATS[fmt_name][0])
        return True

    # ------------------------------------------------------------ state
    def clear(self, message: str = "No result yet.") -> None:
        self.result = None
        self.headline.setText("<span style='font-size:15pt'>ε: —</span>")
        self.detail.setText(message)
        self.bracket.hide()
        self.warnings.hide()
        self.tuning.hide()
        self.table.setRowCount(0)
        self._table = None
        self.footer.setText("")
        self.cleared.emit(message)
        self.copy_button.setEnabled(False)

    def offer_fix(self, text: str | None, action=None) -> None:
        """Show a button that applies ``action`` (e.g. the relation every row accepts), or hide it."""
        self._fix = action
        self.fix_button.setText(text or "")
        self.fix_button.setVisible(bool(text) and action is not None)

    def _fix_clicked(self) -> None:
        action, self._fix = self._fix, None
        self.fix_button.hide()
        if action is not None:
            action()

    def set_stale(self, message: str | None, error: bool = False) -> None:
        """Grey out the shown result and say why (None: the result is current)."""
        self.body.setEnabled(message is None)
        self.banner.setVisible(message is not None)
        self.banner.setText(message or "")
        colour = ERROR_COLOR if error else "#555"
        sheet = f"color: {colour}; font-weight: bold;"
        if self.banner.styleSheet() != sheet:  # (a new style sheet re-polishes the widget)
            self.banner.setStyleSheet(sheet)
        self.stale_changed.emit(message, error)

    def show_result(self, result) -> None:
        self.result = result
        req, e = result.request, result.epsilon
        best = _best(result.certified_upper, e.upper)
        by = "" if best.by == "prv" else f" by {self._label(result, best.by)}"
        self.headline.setText(
            f"<span style='font-size:17pt; font-weight:600'>ε ≤ {fmt_bound(best.value)}</span>"
            f"&nbsp;&nbsp;<span style='color:#444'>certified{by}, at δ = {fmt(req.delta)}</span>")
        words = bracket_words(result)
        self.bracket.setText(" ".join(words) if words else "")
        self.bracket.setVisible(words is not None)
        notes = self._notes(result)
        self.warnings.setText("\n".join(f"⚠ {w}" for w in notes))
        self.warnings.setVisible(bool(notes))
        reason = failure(result, "headline")
        if reason is None:
            name, lower, est, half = bracket_shown(result)
            asked = "" if half <= req.eps_error * (1 + 1e-9) else f" (asked ±{fmt(req.eps_error)})"
            lines = [f"{name}: lower {fmt_bound(lower, up=False)} · "
                     f"{_estimate(replace(e, estimate=est))} · accuracy ±{fmt(half)}{asked}"]
        else:
            lines = [f"PRV bracket: could not be composed ({reason}); the bound above is the "
                     "comparison accountants' best"]
        if result.delta is not None and req.epsilon is not None:
            d = result.delta
            best_d = _best(result.certified_upper_delta, d.upper)
            d = replace(d, estimate=min(d.estimate, best_d.value))  # never above the published bound
            lines.append(f"At ε = {fmt(req.epsilon)}: δ ≤ {fmt_bound(best_d.value)} "
                         f"(lower {fmt_bound(min(d.lower, best_d.value), up=False)} · {_estimate(d)})")
        self.detail.setText("\n".join(lines))
        tuning = self._tuning_text(result)
        self.tuning.setText(tuning or "")
        self.tuning.setVisible(tuning is not None)
        rows = self._rows(result)
        waiting = [""] if "comparisons" in getattr(result, "pending", ()) else []
        names = ["prv"] + waiting + self._names(result)
        eps_text = "ε" if req.epsilon is None else f"ε = {fmt(req.epsilon)}"
        headers = [COLUMNS[0], COLUMNS[1], f"ε at δ = {fmt(req.delta)}", f"δ at {eps_text}", COLUMNS[4]]
        table = (headers, rows, names)
        if table != self._table:  # (the same table again, e.g. the complete answer: no new layout)
            self._table = table
            self._fill_table(headers, rows, names)
        done = "Computed" if not getattr(result, "pending", ()) else "Headline"
        self.footer.setText(f"{done} in {result.elapsed:.2f} s · {len(req.rows)} row(s)")
        self.copy_button.setEnabled(not getattr(result, "pending", ()))  # copy the whole answer
        self.set_stale(None)
        self.result_shown.emit(result)

    def _fill_table(self, headers: list[str], rows: list[tuple[str, ...]], names: list[str]) -> None:
        self.table.setHorizontalHeaderLabels(headers)
        self.table.setRowCount(len(rows))
        for r, cells in enumerate(rows):
            for c, text in enumerate(cells):
                item = QTableWidgetItem(text)
                if c == len(cells) - 1 and text:
                    item.setToolTip(text)
                else:
                    item.setToolTip(ACCOUNTANT_TIPS.get(names[r], ""))
                if c in (2, 3):
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                if r == 0:
                    font = item.font()
                    font.setBold(True)
                    item.setFont(font)
                self.table.setItem(r, c, item)
        self.table.fit_columns()

    def _rows(self, result) -> list[tuple[str, ...]]:
        req = result.request
        delta_up = result.delta.upper if result.delta is not None else None
        best = _best(result.certified_upper, result.epsilon.upper)
        note = "certified: safe to publish" if best.by == "prv" else \
            f"certified; {self._label(result, best.by)} gives the smaller bound here"
        waiting = "delta" in getattr(result, "pending", ())  # δ at ε still being computed
        rows = [("PRV (this calculator)", KIND_TEXT["certified"], _value(result.epsilon.upper, "certified"),
                 "…" if waiting else _value(delta_up, "certified"), note)]
        if "comparisons" in getattr(result, "pending", ()):  # the headline came first
            rows.append(("Other accountants", "", "…", "…", "computing…"))
        for name in self._names(result):
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
    def _notes(result) -> list[str]:
        """The engine's notes, less its shuffled-batches note when the bracket says it already."""
        notes = list(result.warnings)
        at_least = getattr(result, "epsilon_at_least", None)
        if at_least is not None:
            said = untight_note(result.request.rows, at_least, result.epsilon.upper,
                                getattr(result, "poisson_epsilon", None), getattr(result, "shuffled_epsilon", None))
            notes = [w for w in notes if w != said]
        # the parts that could not be computed, but the headline's own (the detail line says it)
        return notes + [n for n in failure_notes(result) if failure(result, "headline") is None]

    @staticmethod
    def _tuning_text(result) -> str | None:
        """The tuning line (the engine's sentence), "computing…" while it is on its way; None when
        the request has no tuning (or its part failed: the warnings say why)."""
        if "tuning" in getattr(result, "pending", ()):
            return "Hyperparameter tuning: computing…"
        return tuning_sentence(getattr(result, "tuning", None), fmt_bound)

    @staticmethod
    def _names(result) -> list[str]:
        """The comparison accountants of a result, in the table's order."""
        return list(result.comparisons) + [n for n in result.comparisons_delta if n not in result.comparisons]

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
        out += bracket_words(r, 6) or []
        out += [t for t in [self._tuning_text(r)] if t]
        out += [f"warning: {w}" for w in self._notes(r)]
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
