"""The pin "A": its value (``Pin``), its description (``describe``) and the bar that shows it
under the results' headline (``PinBar``); the controller that pins is compare.py.

Pin as A and see it beside the current one while editing.

``Compare.pin()`` keeps the window's current engine ``Result`` and a short description of the
inputs it is for (``describe``); every plot tab draws A's certified curve dashed, labelled
"A: <description>" (plot_base.py ``set_pinned``), the results panel shows A's bracket under the
headline and the risk panel gets an A column. The pin survives recomputation (A is a result,
not a setting) and undo; File ▸ New and File ▸ Open drop it (a pin from another document
compared with a new one would mislead). ``Compare.pinned`` is ``Pin(label, result)`` or None
(``MainWindow.pinned``), for anything that reports the comparison.
"""
from __future__ import annotations

import html
from typing import NamedTuple

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QWidget

from ..document.export import setting_text
from .fmt import fmt, fmt_bound, fmt_count, param_summary


#: a description longer than this is cut (it labels curves and a table column)
MAX_DESCRIPTION = 44


class Pin(NamedTuple):
    label: str
    result: object


def describe(doc, request=None) -> str:
    """A short description of a composition: its rows' parameters and counts, and the relation
    when it is not add/remove one record (``σ=1.1, q=0.004267 ×14 000``)."""
    parts = []
    for spec in doc.rows if doc is not None else ():
        text = param_summary(spec.kind, spec.params)
        if spec.count != 1:
            text += f" ×{fmt_count(spec.count)}"
        parts.append(text)
    text = "; ".join(parts) or "empty"
    if request is not None and (request.neighbouring != "add_remove" or request.group_size != 1):
        text += f"; {setting_text(request).split(';')[0]}"
    if len(text) > MAX_DESCRIPTION:
        text = text[:MAX_DESCRIPTION - 1].rstrip(" ,;") + "…"
    return text


def pin_text(pin: Pin, current=None) -> str:
    """A's bracket as the results panel shows it under the headline (rich text)."""
    r = pin.result
    best = r.certified_upper.value if r.certified_upper is not None else r.epsilon.upper
    text = (f"<b>A</b> ({html.escape(pin.label)}): ε ≤ {fmt_bound(best)} "
            f"<span style='color:#555'>(lower {fmt_bound(r.epsilon.lower, up=False)})")
    if current is None or current.request.delta != r.request.delta:
        text += f" at δ = {fmt(r.request.delta)}"
    return text + "</span>"


class PinBar(QWidget):
    """The "Pin as A" and "Unpin" buttons (beside the headline) and A's line (under it)."""

    pin_requested = Signal()
    unpin_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        lay = QHBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        self.pin_button = QPushButton("Pin as A")
        self.pin_button.setObjectName("pin")
        self.pin_button.setToolTip("Keep this result as “A”: its curves stay on every plot (dashed) and "
                                   "its bracket beside the headline while you edit")
        self.unpin_button = QPushButton("Unpin A")
        self.unpin_button.setObjectName("unpin")
        self.unpin_button.setToolTip("Remove the pinned result A from the plots and the headline")
        for b in (self.pin_button, self.unpin_button):
            b.setMinimumWidth(b.fontMetrics().horizontalAdvance(b.text()) + 20)
            lay.addWidget(b)
        self.pin_button.clicked.connect(self.pin_requested)
        self.unpin_button.clicked.connect(self.unpin_requested)
        self.label = QLabel("")
        self.label.setObjectName("pinned")
        self.label.setWordWrap(True)
        self.label.setStyleSheet("border-left: 3px dashed #333; padding-left: 4px;")
        self.show_pin(None, False)

    def show_pin(self, pin: Pin | None, can_pin: bool, current=None) -> None:
        self.pin_button.setEnabled(can_pin)
        self.unpin_button.setVisible(pin is not None)
        self.label.setText(pin_text(pin, current) if pin is not None else "")
        self.label.setVisible(pin is not None)
