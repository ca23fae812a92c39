"""The window's computing side: the background ``Recomputer``, the status bar (message,
progress, clock, Cancel), the cost prompt, and what each answer does to the results panel
and the plots.

A request whose estimate (the engine's, ``view_model.cost``) is over the Recomputer's
limits is not started: the results area shows the cost prompt with the estimate and its
reason, and the work starts on "Compute anyway". The progress bar follows the engine's
progress, which moves within the long stages (discretising, the powers on the FFT path).

Answers arrive progressively (``Recomputer.partial_ready``): the headline first, then each
plot as its curve is ready. Until then a plot keeps its previous curves dimmed under an
"Updating…" note (``PlotTab.set_stale``), never shown as current.
"""
from __future__ import annotations

import math
import time
from collections.abc import Callable

import numpy as np

from PySide6.QtCore import QObject, Qt, QTimer
from PySide6.QtWidgets import QLabel, QProgressBar, QPushButton, QStatusBar, QWidget

from ..accounting.core.cost import Cost
from ..document.model import Document
from .results_panel import ResultsPanel
from .shown import Shown
from .widgets import ERROR_COLOR
from .worker import Recomputer


#: the progress bar moves at most this often (seconds)
PROGRESS_SHOWN_S = 0.1
#: the next part of a partial answer shows this long after the last (ms): a timer, not a queued
#: call (a zero-delay single shot is one), so that the event loop's other timers and input,
#: not only the repaints the last part posted, get their turn between two parts
PART_GAP_MS = 1
#: estimates at least this long are shown beside the progress ("about 12 s")
SHOW_ESTIMATE_SECONDS = 2.0
#: the note on a plot whose curves are for the previous inputs while its new ones are computed
UPDATING = "Updating… (curves of the previous inputs)"
#: the parts of an answer still to come, in the status bar's words
PART_WORDS = {"comparisons": "the other accountants",
              "delta": "δ at the target ε", "tradeoff": "the tradeoff curve", "pld": "the privacy loss "
              "distribution", "profile": "the privacy profile", "steps": "ε versus steps",
              "refine": "the privacy profile's small end (long double)", "risk": "the attack risk"}


def _sentence(message: str) -> str:
    return message[0].upper() + message[1:]


class ComputeView(QObject):
    """Connects a Recomputer to the status bar, the cost prompt, the results panel and the
    plots, and keeps ``shown`` (what is on show) up to date. It is given what it drives and
    nothing else: the status bar, the results panel (with its cost prompt), the plot tabs by
    kind, the document (read: is it empty, which relation would unblock it) and a callable that
    sets every row's relation (the one-click fix)."""

    def __init__(self, parent: QWidget, make_request: Callable, status_bar: QStatusBar,
                 results: ResultsPanel, plots: dict, shown: Shown, doc: Document,
                 set_relation: Callable[[str, int], None], compute_fn: Callable | None = None,
                 cost_fn: Callable | None = None) -> None:
        super().__init__(parent)
        self.results, self.plots, self.shown, self.doc = results, plots, shown, doc
        self.set_relation = set_relation
        self._bar = status_bar
        self.recomputer = Recomputer(make_request, compute_fn, parent=parent, cost_fn=cost_fn)
        self.prompt = results.prompt
        self._estimate_text = ""
        self._progress_at = -math.inf  # when the progress bar last moved (time.monotonic)
        self._latest = None  # the latest partial answer and its document, while parts wait
        self._draining = False  # a _show_next call is queued
        #: the request whose answers are on show, and which parts of it ("headline", plot kinds)
        self._shown_id, self._shown = -1, set()
        #: the curve each plot tab draws for that request (a new object: draw it again)
        self._shown_curve: dict[str, object] = {}
        self._build_status()
        r = self.recomputer
        r.state_changed.connect(self._show_busy)
        r.progress.connect(self._on_progress)
        r.result_ready.connect(self._on_result)
        r.partial_ready.connect(self._on_partial)
        r.failed.connect(self._on_failed)
        r.blocked.connect(self._on_blocked)
        r.cancelled.connect(self._on_cancelled)
        r.confirm_needed.connect(self._on_confirm_needed)
        r.estimated.connect(self._on_estimated)
        self.prompt.compute_requested.connect(r.confirm)
        self.prompt.cancel_requested.connect(r.cancel)

    def _build_status(self) -> None:
        bar = self._bar
        self.status = QLabel("")
        self.status.setObjectName("status")
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        bar.addWidget(self.status, 1)
        self.elapsed = QLabel("")
        self.progress = QProgressBar()
        self.progress.setRange(0, 1000)
        self.progress.setFixedWidth(220)
        self.progress.setFormat("%p%")
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setObjectName("cancel")
        self.cancel_button.setToolTip("Stop the running computation")
        self.cancel_button.clicked.connect(self.recomputer.cancel)
        for w in (self.elapsed, self.progress, self.cancel_button):
            bar.addPermanentWidget(w)
        self._clock = QTimer(self)
        self._clock.setInterval(100)
        self._clock.timeout.connect(self._tick)
        self._show_busy("idle")

    def set_status(self, text: str, error: bool = False) -> None:
        self.status.setText(text)
        self.status.setStyleSheet(f"color: {ERROR_COLOR};" if error else "")

    def stop(self) -> None:
        self.recomputer.shutdown()
        self._clock.stop()

    # ------------------------------------------------------------ states
    def inputs_changed(self) -> None:
        self.recomputer.invalidate()
        self.results.offer_fix(None)  # offered again if the new settings are still blocked
        if self.shown.result is not None:
            self.results.set_stale("Recomputing…")
        self._plots_stale(UPDATING, error=False)

    def _show_busy(self, state: str) -> None:
        busy = state in ("pending", "running", "cancelling")
        self.progress.setVisible(busy)
        self.cancel_button.setVisible(busy)
        self.cancel_button.setEnabled(state in ("pending", "running"))
        if state != "waiting" and self.prompt.isVisibleTo(self.results):
            self.prompt.dismiss()
            self._after_prompt(state)
        if state == "running":
            self.progress.setValue(0)
            self._estimate_text = ""
            self._clock.start()
            self.set_status("Computing…")
            if self.shown.result is None:  # (not the words of before, "the composition is empty")
                self._after_prompt(state)
        elif state == "pending":
            self.progress.setValue(0)
            self.elapsed.setText("")
        elif state == "cancelling":
            self.set_status("Cancelling…")
        else:
            self._clock.stop()

    def _after_prompt(self, state: str) -> None:
        """The prompt's words in the results and plots give way to what happens instead."""
        if state != "running" and state != "pending":
            return  # cancelled: _on_cancelled says so
        if self.shown.result is not None:
            self.results.set_stale("Recomputing…")
            return
        self.results.clear("Computing… (progress in the status bar)")
        for tab in self.plots.values():
            tab.clear("Computing…")

    def _tick(self) -> None:
        self.elapsed.setText(f"{self.recomputer.elapsed():.1f} s")

    # ------------------------------------------------------------ answers
    def _on_estimated(self, estimate: Cost) -> None:
        if estimate.seconds >= SHOW_ESTIMATE_SECONDS:
            self._estimate_text = f" (estimated {estimate.describe()})"
            self.set_status(f"Computing{self._estimate_text}…")

    def _on_progress(self, fraction: float, text: str) -> None:
        # at most every PROGRESS_SHOWN_S (and the end): a progress bar whose percentage changes
        # repaints at once, not at the next paint (1-2 ms each, between the answers' plots)
        now = time.monotonic()
        if fraction < 1.0 and now - self._progress_at < PROGRESS_SHOWN_S:
            return
        self._progress_at = now
        # QProgressBar.setValue repaints at once, and a repaint paints every widget of the
        # window that waits for one (a plot just given its curves: 10-20 ms in this handler);
        # with updates off it only schedules the paint for the next pass of the event loop
        self.progress.setUpdatesEnabled(False)
        self.progress.setValue(int(1000 * max(0.0, min(1.0, fraction))))
        self.progress.setUpdatesEnabled(True)
        self.set_status(f"Computing: {text}{self._estimate_text}…")

    def _on_confirm_needed(self, estimate: Cost) -> None:
        self.elapsed.setText("")
        self.prompt.ask(estimate)
        self.set_status(f"Not started: this would take {estimate.describe()}. "
                        "“Compute anyway” (in the results) starts it.")
        if self.shown.result is not None:
            self.results.set_stale("Out of date: the new settings wait for “Compute anyway”.")
            self._plots_stale()
        else:
            self.results.clear("Not computed yet: the settings wait for “Compute anyway” above.")
            for tab in self.plots.values():
                tab.clear("Not computed yet (see the note above the results).")

    def _show_parts(self, result, snapshot, limit: int | None = None) -> bool:
        """Show what ``result`` holds that is not on show yet: the headline once, each plot
        whose curve is no longer pending once (the visible one first); the plots still pending
        are marked. At most ``limit`` of those (None: all); returns whether some are left."""
        if result.request.request_id != self._shown_id:
            self._shown_id, self._shown, self._shown_curve = result.request.request_id, set(), {}
        self.shown.set(result, snapshot)
        done = 0
        # the results panel (and the risk panel it feeds) again when delta or the risk arrive
        head = ("headline",) + tuple(p for p in ("delta", "risk") if p not in result.pending)
        if head not in self._shown or not result.pending:
            self.results.show_result(result)  # and the complete answer at the end (time, notes, risk)
            self._shown.add(head)
            done += 1
        tabs = sorted(self.plots.items(), key=lambda kv: not kv[1].isVisible())
        for kind, tab in tabs:
            if kind in result.pending:
                if tab.result is not None:
                    tab.set_stale(UPDATING)
                elif ("computing", kind) not in self._shown:  # (nothing drawn yet: say so, once)
                    tab.clear("Computing…")
                    self._shown.add(("computing", kind))
            elif not _same_curve(self._shown_curve.get(kind, self), getattr(result, kind, None)):
                if limit is not None and done >= limit:
                    return True
                tab.show_result(result)  # first, or a refined curve (the profile's small end)
                tab.set_stale(None)
                self._shown_curve[kind] = getattr(result, kind, None)
                done += 1
            elif not result.pending:
                tab.result = result  # the complete answer; its curve is the one drawn
        return False

    def _on_partial(self, result, snapshot) -> None:
        # one part now, the rest one per pass of the event loop (input and repaints between
        # them): answers that arrive together, each showing a part, would otherwise hold the
        # loop for 40 ms+; after a part the next pass looks again, whatever came meanwhile
        self._latest = (result, snapshot)
        if not self._draining:
            self._show_parts(result, snapshot, limit=1)
            self._draining = True
            QTimer.singleShot(PART_GAP_MS, self._show_next)
        self.set_status(f"ε ready; computing {', '.join(PART_WORDS.get(p, p) for p in result.pending)}…")

    def _show_next(self) -> None:
        """One more part of the latest partial answer, if it is still the current request's."""
        self._draining = False
        if self._latest is None:
            return
        result, snapshot = self._latest
        if result.request.request_id != self.recomputer.submitted:
            return  # superseded: its parts must not show as current
        if self._show_parts(result, snapshot, limit=1):
            self._draining = True
            QTimer.singleShot(PART_GAP_MS, self._show_next)

    def _on_result(self, result, snapshot) -> None:
        self._latest = None  # (the complete answer shows at once, all of it)
        self._show_parts(result, snapshot)
        self.elapsed.setText(f"{result.elapsed:.2f} s")
        self.set_status(f"Done in {result.elapsed:.2f} s.")

    def _on_failed(self, message: str) -> None:
        message = message.replace("eps_error", "accuracy (ε error)")
        self.set_status(f"Computation failed: {message}", error=True)
        self.results.set_stale(f"Out of date. Computation failed: {message}", error=True)
        self._plots_stale()

    def _plots_stale(self, text: str = "Out of date: the inputs changed (see the status bar)",
                     error: bool = True) -> None:
        for tab in self.plots.values():
            if tab.result is not None:
                tab.set_stale(text, error)

    def _on_blocked(self, message: str) -> None:
        empty = not len(self.doc)
        fix = self.doc.relation_fix()
        self.results.offer_fix(None if fix is None else f"Use “{fix.describe()}” for every row",
                            None if fix is None else
                            lambda: self.set_relation(fix.neighbouring.value, fix.group_size))
        self.set_status(_sentence(message), error=not empty)
        if self.shown.result is None or empty:
            self.shown.set(None, None)
            self.results.clear(_sentence(message) + ".")
            for tab in self.plots.values():  # a hint in place of empty axes
                tab.clear(None if empty else _sentence(message) + ".")
            self.results.set_stale(None)
        else:
            self.results.set_stale(f"Out of date: {message}", error=True)
            self._plots_stale()

    def _on_cancelled(self) -> None:
        self.set_status("Cancelled. Edit anything or press F5 to compute again.")
        if self.shown.result is None and len(self.doc):
            self.results.clear("Not computed: cancelled. Edit anything or press F5 to compute.")
            for tab in self.plots.values():
                tab.clear("Not computed (cancelled).")
        elif self.shown.result is not None:
            self.results.set_stale("Out of date: the computation was cancelled (F5 computes again).")
            self._plots_stale()


def _same_curve(a: object, b: object) -> bool:
    """Whether two answers' curves are the same numbers (answers from the engine's process are
    new objects each time: identity would redraw every plot on every partial answer)."""
    if a is b:
        return True
    if a is None or b is None or not hasattr(a, "columns") or not hasattr(b, "columns"):
        return False
    if a.x_name != b.x_name or a.columns.keys() != b.columns.keys() or not np.array_equal(a.x, b.x):
        return False
    return all((u is None and v is None) or (u is not None and v is not None and np.array_equal(u, v))
               for u, v in ((a.columns[k], b.columns[k]) for k in a.columns))
