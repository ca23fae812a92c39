"""The Audit tab: the epsilon a one-run privacy audit proves, beside the composition's certified
epsilon, and what an audit with as many canaries could show.

The numbers are the engine's (engine/audit_view.py over accounting/queries/audit.py); this tab
only reads the fields and prints an ``AuditView``. Lower bounds are rounded down and upper
bounds up (``fmt_bound``). A bad field names itself and its value in red; the rest keeps working.
Edits are evaluated after a short pause (they take milliseconds for the counts people type).
"""
from __future__ import annotations

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QFormLayout, QLabel, QLineEdit, QVBoxLayout, QWidget

from ..engine.audit_view import LABELS, AuditView, default_delta, evaluate
from .fmt import fmt, fmt_bound, fmt_value, parse_count, parse_number
from .widgets import ERROR_COLOR, ErrorLabel, mark

TIP = ("A privacy audit runs the mechanism once with canaries, each included with probability 1/2, "
       "and guesses which were in. The count of correct guesses proves a lower bound on ε (Steinke, "
       "Nasr, Jagielski 2023); the f-DP analysis (Mahloujifar, Melis, Chaudhuri 2025) proves more for "
       "mechanisms whose tradeoff curve is Gaussian. An audit above the certified ε means that the "
       "implementation or its settings do not match the accounting.")
HEADLINE = "<b>Privacy audit</b>: the ε a one-run audit proves, against the certified ε"
DEFAULTS = {"canaries": "1000", "guesses": "100", "correct": "90", "confidence": "0.95"}
TIPS = {"canaries": "Canaries inserted, each included independently with probability 1/2",
        "guesses": "Canaries the auditor guessed in or out for (it abstained on the rest)",
        "correct": "Guesses that were right",
        "delta": "δ of the claims the audit tests (default: the composition's target δ)",
        "confidence": "Confidence of the lower bound, between 0 and 1 (e.g. 0.95)"}
#: a pause after typing before the audit is evaluated, in ms
DEBOUNCE_MS = 150


def bound_text(view: AuditView) -> str:
    """The audit's bounds in words (``view.audit`` must be set)."""
    a = view.audit
    how = "the f-DP analysis, Gaussian curves" if a.method == "fdp" else "the one-run analysis"
    fdp = ("n/a at δ = 0 (no Gaussian curve has δ = 0)" if a.fdp is None else
           f"{fmt_bound(a.fdp, up=False)} (if the mechanism's tradeoff curve is Gaussian)")
    return (f"<b>ε ≥ {fmt_bound(a.epsilon_lower, up=False)}</b> at δ = {fmt(a.delta)}, confidence "
            f"{fmt(a.confidence)} (by {how})<br>one-run analysis (any mechanism): "
            f"{fmt_bound(a.one_run, up=False)}; f-DP analysis: {fdp}")


def comparison_text(view: AuditView) -> str:
    a = view.audit
    if view.certified_upper is None:
        return f"Certified ε: not shown ({view.upper_note})."
    out = f"Certified ε ≤ {fmt_bound(view.certified_upper)} at δ = {fmt(a.delta)} (this composition)."
    if view.curve_p_value is not None:
        out += (f" Under its certified tradeoff curve this count has p-value {fmt(view.curve_p_value, 3)}.")
    return out


def warning_text(view: AuditView) -> str:
    """The loud sentence when the audit contradicts the accounting ("" otherwise)."""
    if not view.exceeds:
        return ""
    a = view.audit
    if view.certified_upper is not None and a.one_run > view.certified_upper:
        why = (f"the audit proves ε ≥ {fmt_bound(a.one_run, up=False)}, above the certified "
               f"ε ≤ {fmt_bound(view.certified_upper)}")
    else:
        why = (f"this count is unlikely (p-value {fmt(view.curve_p_value, 3)} ≤ {fmt(1 - a.confidence)}) "
               "under the composition's certified tradeoff curve")
    return f"⚠ Warning: {why}. The implementation or the settings do not match the accounting."


def note_text(view: AuditView) -> str:
    a = view.audit
    if view.exceeds or a.fdp is None or view.certified_upper is None or a.fdp <= view.certified_upper:
        return ""
    return ("The f-DP bound is above the certified ε, but the composition's own tradeoff curve is not "
            "rejected: its curve is not Gaussian, so this is no contradiction.")


def plan_text(view: AuditView) -> str:
    p, m = view.plan, view.audit.canaries
    if p is None:
        return f"Plan: not available ({view.plan_note})."
    if p.alpha is None:
        return f"An audit with {m} canaries shows nothing at the expected counts."
    return (f"An audit with {m} canaries could show at most about ε {fmt(p.epsilon_lower)} (one-run "
            f"analysis at the expected counts: {p.guesses} guesses, {p.correct} correct, threshold at a "
            f"false-positive rate of {fmt(100 * p.alpha, 3)}%).")


class AuditPanel(QWidget):
    """The audit's fields and its read-out (``view``: the latest AuditView)."""

    kind = "audit"
    tip = TIP

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.result = None
        self.view: AuditView | None = None
        self._delta_typed = False
        lay = QVBoxLayout(self)
        lay.setContentsMargins(6, 6, 6, 6)
        lay.setSpacing(6)
        title = QLabel(HEADLINE)
        title.setToolTip(TIP)
        title.setWordWrap(True)
        lay.addWidget(title)
        form = QFormLayout()
        self.fields: dict[str, QLineEdit] = {}
        for key in ("canaries", "guesses", "correct", "delta", "confidence"):
            edit = QLineEdit(DEFAULTS.get(key, "0"))
            edit.setObjectName(f"audit_{key}")
            edit.setToolTip(TIPS[key])
            edit.textEdited.connect(lambda _t, k=key: self._edited(k))
            self.fields[key] = edit
            form.addRow(LABELS[key], edit)
        lay.addLayout(form)
        self.error = ErrorLabel()
        self.error.setObjectName("audit_error")
        lay.addWidget(self.error)
        self.bound = self._label("audit_bound")
        self.certified = self._label("audit_certified")
        self.warning = self._label("audit_warning")
        self.warning.setStyleSheet(f"color: {ERROR_COLOR}; font-weight: bold; font-size: 120%;")
        self.note = self._label("audit_note")
        self.plan = self._label("audit_plan")
        lay.addStretch(1)
        self.timer = QTimer(self)
        self.timer.setSingleShot(True)
        self.timer.setInterval(DEBOUNCE_MS)
        self.timer.timeout.connect(self.update_view)
        self.update_view()

    def _label(self, name: str) -> QLabel:
        label = QLabel("")
        label.setObjectName(name)
        label.setWordWrap(True)
        label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.layout().addWidget(label)
        return label

    # ------------------------------------------------------------ state
    def _edited(self, key: str) -> None:
        if key == "delta":
            self._delta_typed = True
        self.timer.start()

    def show_result(self, result) -> None:
        """A new result on show: compare with it (and take its target δ unless one was typed)."""
        self.result = result
        if not self._delta_typed:
            self.fields["delta"].setText(fmt_value(default_delta(result)))
        self.update_view()

    def clear(self, message: str | None = None) -> None:
        self.result = None
        self.update_view()

    def values(self) -> dict[str, object]:
        """What the fields stand for: whole numbers as ints, other numbers as floats, else text."""
        out: dict[str, object] = {}
        for key, edit in self.fields.items():
            out[key] = (parse_count if key in ("canaries", "guesses", "correct") else parse_number)(edit.text())
        return out

    def update_view(self) -> AuditView:
        self.timer.stop()
        v = self.values()
        view = evaluate(v["canaries"], v["guesses"], v["correct"], v["delta"], v["confidence"], self.result)
        self.view = view
        bad = None if view.error is None else next(
            (k for k in self.fields if view.error.startswith(LABELS[k] + " ")), None)
        for key, edit in self.fields.items():
            mark(edit, view.error if key == bad else None, TIPS[key])
        self.error.show_error(view.error)
        ok = view.audit is not None
        self.bound.setText(bound_text(view) if ok else "")
        self.certified.setText(comparison_text(view) if ok else "")
        self.warning.setText(warning_text(view) if ok else "")
        self.warning.setVisible(ok and view.exceeds)
        self.note.setText(note_text(view) if ok else "")
        self.note.setVisible(bool(self.note.text()))
        self.plan.setText(plan_text(view) if ok else "")
        return view
