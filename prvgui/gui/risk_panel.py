"""Attack risk and noise: what the guarantee means for an attacker, and what it costs in accuracy.

The numbers are the engine's (``Result.risk``: accounting/queries/risk.py, certified from the tradeoff
bounds; ``Result.noise_95``: each noisy row's 95% interval half-width); this panel only prints
them. Upper ends are rounded up and lower ends down (``fmt_bound``), so a printed upper end is
still an upper bound. While the results panel is out of date this panel is greyed with it
(``set_stale``); a pinned result ("A", compare.py) gets its own column.
"""
from __future__ import annotations

import re

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (QAbstractItemView, QHeaderView, QLabel, QTableWidget, QTableWidgetItem,
                               QVBoxLayout, QWidget)

from ..engine.view_model import failure
from .fmt import fmt, fmt_bound

TIP = ("How well the best membership-inference attack can do against this composition: its "
       "true-positive rate at a few false-positive rates, certified from the tradeoff function, and "
       "how much noise each row adds to its output.")
HEADLINE = "<b>Attack risk</b>: the best membership-inference attack, certified"
ADVANTAGE = "Advantage (TPR − FPR)"
ADVANTAGE_TIP = ("The best attack's true-positive rate minus its false-positive rate, over all attacks: "
                 "the total variation distance of the pair, δ at ε = 0")
#: the false-positive rate the plain-words sentence is about (when the result has it)
WORDS_FPR = 0.01
BAYES_TIP = ("The best attack's least probability of error when a fraction π of the people are in the "
             "data (its Bayes risk, certified): guessing from π alone errs with probability min(π, 1 − π)")
RECON_TIP = ("A reconstruction or re-identification guess that would succeed with the baseline "
             "probability without the release succeeds with at most the upper end (1 − T(baseline)); "
             "the lower end is reached by the best attack")


def pct(x: float, up: bool, digits: int = 3) -> str:
    """A rate as a percentage, rounded outwards (``up``: an upper end, rounded up)."""
    return f"{fmt_bound(100.0 * x, digits, up=up)}%"


def interval_text(lower: float, upper: float) -> str:
    """``3.98% – 4.06%``: a certified interval of rates, rounded outwards."""
    return f"{pct(lower, up=False)} – {pct(upper, up=True)}"


def fpr_text(a: float) -> str:
    return f"{fmt(100.0 * a, 3)}%"


def risk_words(risk) -> str:
    """Two or three sentences in plain words on a ``Risk`` (the upper ends: what no attack beats)."""
    k = min(range(len(risk.fprs)), key=lambda i: abs(risk.fprs[i] - WORDS_FPR))
    a, t = risk.fprs[k], risk.tpr[k]
    if t.lower >= 1.0:
        return (f"No protection: an attack that wrongly flags at most {fpr_text(a)} of the people who are "
                "not in the data finds every one of those who are.")
    out = [f"No attack that wrongly flags at most {fpr_text(a)} of the people who are not in the data "
           f"can find more than {pct(t.upper, up=True)} of those who are (guessing finds {fpr_text(a)})."]
    adv = risk.advantage
    out.append(f"Over all attacks, the true-positive rate exceeds the false-positive rate by at most "
               f"{fmt_bound(100.0 * adv.upper, 3)} percentage points (the attacker's advantage).")
    out.append(f"The lower ends are reached: some attack on some pair of neighbouring datasets finds "
               f"at least {pct(t.lower, up=False)} at that rate.")
    return " ".join(out)


def bayes_name(prior: float) -> str:
    return f"Bayes risk at prior {fpr_text(prior)}"


def recon_name(baseline: float) -> str:
    return f"Reconstruction, baseline {fpr_text(baseline)}"


def read_outs(risk) -> list[tuple[str, object, str]]:
    """(name, interval, tooltip) of every row of the table: TPR at each FPR, the advantage, the
    Bayes risk at each prior, reconstruction success at each baseline."""
    out = [(f"True-positive rate at FPR {fpr_text(a)}", t, "") for a, t in zip(risk.fprs, risk.tpr)]
    out.append((ADVANTAGE, risk.advantage, ADVANTAGE_TIP))
    out += [(bayes_name(b.prior), b.risk, BAYES_TIP) for b in getattr(risk, "bayes", ())]
    out += [(recon_name(k), t, RECON_TIP) for k, t in zip(getattr(risk, "baselines", ()),
                                                         getattr(risk, "reconstruction", ()))]
    return out


def gdp_words(fit) -> str:
    """The certified mu-GDP summary in words (certified_gdp.GdpFit), or ""."""
    if fit is None:
        return ""
    if fit.mu is None:
        return f"μ-GDP is not certified here: {fit.note}."
    if fit.mu == float("inf"):
        return "No finite μ-GDP holds" + (f": {fit.note}." if fit.note else ".")
    how = "exactly" if fit.exact else f"certified; regret at most {fmt_bound(fit.regret, 3)}"
    out = f"μ-GDP with μ = {fmt_bound(fit.mu, 4)} ({how})."
    return out + (f" {greek(fit.note)}." if fit.note else "")


def greek(text: str) -> str:
    """The engine's plain-text names (mu, delta, epsilon, G_mu) as the window writes them."""
    for word, letter in (("G_mu", "G_μ"), ("mu", "μ"), ("delta", "δ"), ("deltas", "δs"), ("epsilon", "ε")):
        text = re.sub(rf"\b{word}\b", letter, text)
    return text


def noise_lines(result, names: list[str] | None = None) -> list[str]:
    """One line per noisy row: the half-width of the noise's 95% interval in the output's units."""
    out = []
    for i, item in enumerate(getattr(result, "noise_95", ()) or ()):
        if item is None:
            continue
        width, unit = item
        name = names[i] if names and i < len(names) else f"row {i + 1}"
        out.append(f"{name}: ±{fmt_bound(width, 4)} {unit}")
    return out


class RiskPanel(QWidget):
    """The attack-risk table (current result, and the pinned one), its words, the noise read-out."""

    kind = "risk"
    tip = TIP

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.result = None
        self.pin: tuple[str, object] | None = None
        self.row_names: list[str] | None = None
        lay = QVBoxLayout(self)
        lay.setContentsMargins(6, 6, 6, 6)
        lay.setSpacing(4)
        self.banner = QLabel("")
        self.banner.setObjectName("risk_banner")
        self.banner.setWordWrap(True)
        self.banner.setStyleSheet("color: #555; font-weight: bold;")
        self.banner.hide()
        lay.addWidget(self.banner)
        self.body = QWidget()
        body = QVBoxLayout(self.body)
        body.setContentsMargins(0, 0, 0, 0)
        body.setSpacing(4)
        lay.addWidget(self.body)
        lay.addStretch(1)
        title = QLabel(HEADLINE)
        title.setToolTip(TIP)
        body.addWidget(title)
        self.table = QTableWidget(0, 2)
        self.table.setObjectName("risk_table")
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.table.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.horizontalHeader().setStretchLastSection(True)
        body.addWidget(self.table)
        self.words = QLabel("")
        self.words.setObjectName("risk_words")
        self.words.setWordWrap(True)
        self.words.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        body.addWidget(self.words)
        self.noise_title = QLabel("<b>Noise</b>: the half-width of the central 95% interval of each noisy "
                                  "row's noise, in its output's units (the accuracy this privacy costs)")
        self.noise_title.setWordWrap(True)
        self.noise_title.setToolTip("The accuracy this privacy costs: the half-width of the central 95% "
                                    "interval of the noise added to one output of the row.")
        body.addWidget(self.noise_title)
        self.noise = QLabel("")
        self.noise.setObjectName("noise_readout")
        self.noise.setWordWrap(True)
        self.noise.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        body.addWidget(self.noise)
        self.clear()

    # ------------------------------------------------------------ state
    def clear(self, message: str | None = None) -> None:
        self.result = None
        self.table.setRowCount(0)
        self.table.hide()
        self.words.setText(message or "No result yet.")
        self.noise_title.hide()
        self.noise.setText("")
        self.set_stale(None)

    def set_stale(self, message: str | None, error: bool = False) -> None:
        """Grey the shown numbers and say why (None: they are current)."""
        self.body.setEnabled(message is None)
        self.banner.setVisible(message is not None)
        self.banner.setText(message or "")
        self.banner.setStyleSheet(f"color: {'#b71c1c' if error else '#555'}; font-weight: bold;")

    def set_row_names(self, names: list[str] | None) -> None:
        """How the noise lines name the rows (``row 1 (DP-SGD)``); None: by number."""
        self.row_names = names

    def set_pinned(self, pin) -> None:
        """Show the pinned result ``(label, Result)`` beside the current one (None: no pin)."""
        self.pin = tuple(pin) if pin is not None else None
        if self.result is not None:
            self.show_result(self.result)

    def show_result(self, result) -> None:
        self.result = result
        risk = getattr(result, "risk", None)
        reason = failure(result, "risk")
        if risk is None:
            self.table.hide()
            self.words.setText("This result has no attack-risk read-out." if reason is None else
                               f"The attack-risk read-out could not be computed: {reason}")
        else:
            self._fill_table(risk)
            self.words.setText(" ".join(filter(None, [risk_words(risk), gdp_words(getattr(risk, "gdp", None))])))
        lines = noise_lines(result, self.row_names)
        if self.pin is not None:  # A's half-widths, row by row, for comparison
            theirs = noise_lines(self.pin[1])
            if theirs:
                lines.append("A: " + "; ".join(theirs))
        self.noise_title.setVisible(True)
        none = "No row adds noise to an output (randomized response and DP guarantees have no noise scale)."
        self.noise.setText("\n".join(lines) if lines else none)
        self.set_stale(None)

    def _fill_table(self, risk) -> None:
        pinned = self.pin[1].risk if self.pin is not None and getattr(self.pin[1], "risk", None) else None
        heads = ["Read-out", "Certified interval"]
        if pinned is not None:
            heads.append("A (pinned)")
        self.table.setColumnCount(len(heads))
        self.table.setHorizontalHeaderLabels(heads)
        if pinned is not None:
            self.table.horizontalHeaderItem(2).setToolTip(f"The pinned result A: {self.pin[0]}")
        rows = read_outs(risk)
        other = {}
        if pinned is not None:
            other = {name: t for name, t, _ in read_outs(pinned)}
        self.table.setRowCount(len(rows))
        for r, (name, t, tip) in enumerate(rows):
            cells = [name, interval_text(t.lower, t.upper)]
            if pinned is not None:
                o = other.get(name)
                cells.append(interval_text(o.lower, o.upper) if o is not None else "n/a")
            for c, text in enumerate(cells):
                item = QTableWidgetItem(text)
                if c == 0 and tip:
                    item.setToolTip(tip)
                if c > 0:
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                    item.setToolTip("Certified: the best attack's rate lies in this interval (upper end "
                                    "rounded up, lower end rounded down)")
                self.table.setItem(r, c, item)
        self.table.show()
        self.table.resizeRowsToContents()
        height = self.table.horizontalHeader().height() + sum(map(self.table.rowHeight, range(len(rows))))
        self.table.setFixedHeight(height + 2 * self.table.frameWidth())

    def as_text(self) -> str:
        """The read-outs as plain text (empty without a result)."""
        if self.result is None:
            return ""
        out = []
        risk = getattr(self.result, "risk", None)
        if risk is not None:
            for name, t, _ in read_outs(risk):
                out.append(f"{name}: {interval_text(t.lower, t.upper)}")
            out.append(risk_words(risk))
            if getattr(risk, "gdp", None) is not None:
                out.append(gdp_words(risk.gdp))
        out += [f"noise (95%) {line}" for line in noise_lines(self.result, self.row_names)]
        return "\n".join(out)
