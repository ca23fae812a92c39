"""The calibrate dialog's attack-risk target: "the best membership-inference attack, wrongly
flagging at most a share a of non-members, finds at most a share t of members" (two fields,
checked by the engine's ``check_risk_target``, and the answer in words)."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QFormLayout, QLineEdit

from ..accounting.queries.risk_calibrate import FPR_LABEL, TPR_LABEL, check_fpr, check_risk_target
from .fmt import fmt, fmt_bound
from .widgets import field_value, fill, mark

#: the two kinds of target: (data, text, tooltip)
GOALS = (("epsilon", "ε at δ", "Calibrate for a target ε at δ"),
         ("risk", "Attack risk (TPR at FPR)",
          "Calibrate so that the best membership-inference attack, wrongly flagging at most a share a of "
          "non-members, finds at most a share t of members (certified)"))
FPR_TIP = ("The share of non-members the attack may wrongly flag as members: a number between 0 and 1, "
           "e.g. 0.01 for 1%.")
TPR_TIP = ("The largest share of members the best attack may find at that false-positive rate: between "
           "the false-positive rate and 1, e.g. 0.05 for 5%.")


def goal_choice() -> QComboBox:
    """The dialog's choice between a target ε and a target attack risk."""
    goal = QComboBox()
    goal.setObjectName("calibrate_goal")
    for data, text, tip in GOALS:
        goal.addItem(text, data)
        goal.setItemData(goal.count() - 1, tip, Qt.ItemDataRole.ToolTipRole)
    goal.setToolTip("What the answer must meet: a target ε at δ, or a target attack risk")
    return goal


class RiskTargetFields:
    """The false-positive rate and target true-positive rate fields, added to ``form`` with
    ``with_unit(field, unit_text)`` beside each."""

    def __init__(self, form: QFormLayout, with_unit, fpr: float = 0.01, tpr: float = 0.05) -> None:
        self.form = form
        self.fpr_edit = QLineEdit()
        fill(self.fpr_edit, fpr)
        self.fpr_edit.setObjectName("calibrate_fpr")
        self.fpr_edit.setToolTip(FPR_TIP)
        form.addRow(FPR_LABEL, with_unit(self.fpr_edit, "share of non-members, in (0, 1)"))
        self.tpr_edit = QLineEdit()
        fill(self.tpr_edit, tpr)
        self.tpr_edit.setObjectName("calibrate_tpr")
        self.tpr_edit.setToolTip(TPR_TIP)
        form.addRow(TPR_LABEL, with_unit(self.tpr_edit, "share of members, at most"))

    def connect(self, slot) -> None:
        for edit in (self.fpr_edit, self.tpr_edit):
            edit.textChanged.connect(slot)

    def set_visible(self, on: bool) -> None:
        for edit in (self.fpr_edit, self.tpr_edit):
            self.form.setRowVisible(edit.parentWidget(), on)

    def error(self) -> str | None:
        """The first problem with the two fields (each field marked with its own), or None."""
        fpr, tpr = field_value(self.fpr_edit), field_value(self.tpr_edit)
        fpr_err = tpr_err = None
        try:
            check_fpr(fpr)
            check_risk_target(fpr, tpr)
        except ValueError as exc:
            fpr_err, tpr_err = (str(exc), None) if str(exc).startswith(FPR_LABEL) else (None, str(exc))
        mark(self.fpr_edit, fpr_err, FPR_TIP)
        mark(self.tpr_edit, tpr_err, TPR_TIP)
        return fpr_err or tpr_err

    def value(self) -> tuple[float, float]:
        """(false-positive rate, target true-positive rate); raises ValueError when invalid."""
        return check_risk_target(field_value(self.fpr_edit), field_value(self.tpr_edit))


def risk_answer(title: str, value_text: str, cal) -> str:
    """A risk calibration's answer in words (upper end rounded up)."""
    return (f"{title} = {value_text}: the best membership-inference attack, wrongly flagging at most "
            f"{fmt(100 * cal.fpr)}% of non-members, finds at most {fmt_bound(100 * cal.tpr.upper)}% of "
            f"members (certified; estimate {fmt(100 * cal.tpr.estimate)}%)")
