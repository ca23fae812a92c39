"""The cost prompt: a banner in the results area that says what a costly computation would
take, and why, and starts it only when asked ("Compute anyway"); not a modal dialog, so that
editing goes on (an edit replaces the prompt with a fresh estimate)."""
from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from ..accounting.core.cost import Cost
from .widgets import WARN_COLOR

ADVICE = "A larger accuracy value (ε error) is quicker."


def reason_text(why: str) -> str:
    """The engine's reason in the window's words (δ and ε for delta and epsilon)."""
    if not why:
        return ""
    text = why.replace("epsilon-versus-count", "ε-versus-count").replace("delta ", "δ ")
    return text[0].upper() + text[1:] + "."


class CostPrompt(QFrame):
    """Hidden until ``ask(estimate)``; emits ``compute_requested`` or ``cancel_requested``."""

    compute_requested = Signal()
    cancel_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("costPrompt")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setStyleSheet("#costPrompt { background: #fff6dc; border: 1px solid #e0c36c; "
                           "border-radius: 4px; }")
        self.estimate: Cost | None = None
        lay = QVBoxLayout(self)
        lay.setContentsMargins(8, 6, 8, 6)
        lay.setSpacing(4)
        self.title = QLabel("")
        self.title.setObjectName("costTitle")
        self.title.setStyleSheet(f"color: {WARN_COLOR}; font-weight: bold;")
        self.title.setWordWrap(True)
        self.detail = QLabel("")
        self.detail.setObjectName("costDetail")
        self.detail.setWordWrap(True)
        self.detail.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        buttons = QHBoxLayout()
        buttons.setContentsMargins(0, 0, 0, 0)
        self.compute_button = QPushButton("Compute anyway")
        self.compute_button.setObjectName("computeAnyway")
        self.compute_button.setToolTip("Start this computation (Cancel in the status bar stops it)")
        self.cancel_button = QPushButton("Don't compute")
        self.cancel_button.setObjectName("dontCompute")
        self.cancel_button.setToolTip("Leave the results as they are; edit the settings to try others")
        self.compute_button.clicked.connect(self.compute_requested)
        self.cancel_button.clicked.connect(self.cancel_requested)
        buttons.addWidget(self.compute_button)
        buttons.addWidget(self.cancel_button)
        buttons.addStretch(1)
        lay.addWidget(self.title)
        lay.addWidget(self.detail)
        lay.addLayout(buttons)
        self.hide()

    def ask(self, estimate: Cost) -> None:
        """Show what the computation would take, and why."""
        self.estimate = estimate
        self.title.setText(f"This computation would take {estimate.describe()} of memory.")
        self.detail.setText(" ".join(t for t in (reason_text(estimate.why), ADVICE) if t))
        self.show()  # no focus taken: the user may be typing in a field

    def dismiss(self) -> None:
        self.estimate = None
        self.hide()
