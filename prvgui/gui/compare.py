"""Compare: pin the shown result as "A" and see it beside the current one while editing (the
pin itself and its bar: pin.py). ``Compare.pin()`` keeps the current engine Result; see pin.py
for what shows it and when it is dropped."""
from __future__ import annotations

from PySide6.QtCore import QObject, Signal

from ..document.model import Document
from .pin import Pin, describe
from .results_panel import ResultsPanel
from .risk_panel import RiskPanel
from .shown import Shown


class Compare(QObject):
    """The pin state and what shows it: the plots (``set_pinned``), the risk panel, the results
    panel's pin bar. It reads what is on show (``shown``) and hears of a new document from
    ``doc``; the window enables its Pin / Unpin actions from ``actions_changed``."""

    changed = Signal(object)
    #: (a result can be pinned now, a result is pinned)
    actions_changed = Signal(bool, bool)

    def __init__(self, parent: QObject, results: ResultsPanel, plots: dict, risk: RiskPanel, doc: Document,
                 shown: Shown) -> None:
        super().__init__(parent)
        self.results, self.plots, self.risk, self.shown = results, plots, risk, shown
        self._pin: Pin | None = None
        bar = results.pin_bar
        bar.pin_requested.connect(self.pin)
        bar.unpin_requested.connect(self.unpin)
        results.result_shown.connect(lambda _: self._show())
        results.stale_changed.connect(lambda *_: self._show())
        doc.subscribe(self._on_document)
        self._show()

    @property
    def pinned(self) -> Pin | None:
        return self._pin

    def for_report(self) -> tuple[str, object] | None:
        """The pin as the report names it, ``("A (<description>)", Result)``, or None."""
        return None if self._pin is None else (f"A ({self._pin.label})", self._pin.result)

    def can_pin(self) -> bool:
        """True while the window shows a current, complete result (not the headline of an
        answer whose curves are still coming)."""
        r = self.shown.result
        return r is not None and not r.pending and self.results.result is not None \
            and self.results.body.isEnabled()

    def pin(self) -> bool:
        """Pin the shown result as A; False (nothing changes) when there is no current result."""
        if not self.can_pin():
            return False
        result = self.shown.result
        self._pin = Pin(describe(self.shown.doc, result.request), result)
        self._apply()
        return True

    def unpin(self) -> None:
        if self._pin is not None:
            self._pin = None
            self._apply()

    def _on_document(self, what: str, arg: object) -> None:
        if what == "reset":  # File ▸ New, Open, an example: another document
            self.unpin()

    def _apply(self) -> None:
        for tab in self.plots.values():
            tab.set_pinned(self._pin)
        self.risk.set_pinned(self._pin)
        self._show()
        self.changed.emit(self._pin)

    def _show(self) -> None:
        self.results.pin_bar.show_pin(self._pin, self.can_pin(), self.results.result)
        self.actions_changed.emit(self.can_pin(), self._pin is not None)
