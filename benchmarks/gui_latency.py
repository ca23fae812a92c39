"""How long the real window takes to answer an edit (issue 13), run by hand.

    QT_QPA_PLATFORM=offscreen python benchmarks/gui_latency.py [--json] [--repeats 5] [--only NAME]

For each bundled example (resources/examples/*.json) the window opens it, waits for every
plot, then changes the noise parameter of the first row (sigma, scale or epsilon, by 5%,
alternately up and down) through the document's undo path (``Editor.replace``, as a user's
edit in the row form does) and times

* edit -> the results panel shows the new headline (``headline_ms``),
* edit -> the last of the four plots shows its new curve (``all_ms``),

median of ``--repeats`` edits. A QTimer heartbeat every 5 ms measures the longest stall of
the event loop over all edits (``stall_ms``; the issue's target is 50 ms). An edit whose
estimate raises the cost prompt is confirmed at once (said on stderr). The timings are
taken where the window shows the answers (``ResultsPanel.show_result`` and each plot tab's
``show_result`` with its curve), so the same script measures any version of the window.

``--json`` prints exactly one line: {"examples": {"<name>": {"headline_ms": x, "all_ms": y}, ...}}
(the stall goes to stderr). The machine's load matters: quote medians and the load.

The process is tuned as the ``prvgui`` command tunes the window's (prvgui/tuning.py: one
OpenBLAS thread, inherited by the engine's process): untuned, the engine's process had two
more BLAS threads that spun on the CPU between products, beside the window's thread.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((ROOT / "resources" / "examples").glob("*.json"))
NOISE = ("sigma", "scale", "epsilon", "rho", "epsilon0")
#: which Result field a plot tab draws
FIELDS = {"profile": ("profile",), "tradeoff": ("tradeoff",), "steps": ("steps",),
          "pld": ("pld", "pld_atoms")}
TIMEOUT_S = 120.0


class Probe:
    """Records when the window shows a headline and each plot for the current edit."""

    def __init__(self, window) -> None:
        self.t0 = 0.0
        self.headline: float | None = None
        self.plots: dict[str, float] = {}
        self.value = None
        results = window.results
        shown = results.show_result

        def show_headline(result, *a, **kw):
            out = shown(result, *a, **kw)
            if self.headline is None and self._current(result):
                self.headline = time.perf_counter()
            return out
        results.show_result = show_headline
        for kind, tab in window.plots.items():
            self._wrap(kind, tab)

    def _wrap(self, kind: str, tab) -> None:
        shown = tab.show_result

        def show(result, *a, **kw):
            out = shown(result, *a, **kw)
            if kind not in self.plots and self._current(result) \
                    and any(getattr(result, f, None) is not None for f in FIELDS[kind]):
                self.plots[kind] = time.perf_counter()
            return out
        tab.show_result = show

    def _current(self, result) -> bool:
        if self.value is None:
            return True
        name, value = self.value
        return getattr(result.request.rows[0].mechanism, name, None) == value

    def start(self, value) -> None:
        self.value = value
        self.headline = None
        self.plots = {}
        self.t0 = time.perf_counter()

    def done(self) -> bool:
        return self.headline is not None and len(self.plots) == len(FIELDS)


class Heartbeat:
    """The longest gap between the ticks of a 5 ms QTimer while ``running``."""

    def __init__(self) -> None:
        from PySide6.QtCore import QTimer
        self.timer = QTimer()
        self.timer.setInterval(5)
        self.timer.timeout.connect(self._tick)
        self.last = None
        self.worst = 0.0

    def _tick(self) -> None:
        now = time.perf_counter()
        if self.last is not None:
            self.worst = max(self.worst, now - self.last)
        self.last = now

    def start(self) -> None:
        self.last = None
        self.timer.start()

    def stop(self) -> None:
        self.timer.stop()
        self.last = None


def wait_until(app, cond, timeout: float = TIMEOUT_S) -> bool:
    """Run the event loop, as the app's ``exec`` does (asleep until something happens), until
    ``cond()``; a 1 ms timer looks at it. (A loop of processEvents and short sleeps, the earlier
    way, woke the window's thread 2000 times a second, taking the GIL from the thread that
    relays the engine's answers.)"""
    from PySide6.QtCore import QEventLoop, QTimer
    if cond():
        return True
    loop = QEventLoop()
    end = time.perf_counter() + timeout
    ok = [False]

    def look() -> None:
        if cond():
            ok[0] = True
            loop.quit()
        elif time.perf_counter() > end:
            loop.quit()
    timer = QTimer()
    timer.setInterval(1)
    timer.timeout.connect(look)
    timer.start()
    loop.exec()
    timer.stop()
    return ok[0]


def noise_name(row) -> str:
    return next(n for n in NOISE if n in row.params)


#: examples whose edit raised the cost prompt (confirmed at once; the time includes it)
prompts: list[str] = []


def measure(app, window, path: Path, repeats: int, beat: Heartbeat) -> dict:
    probe = Probe(window)
    probe.start(None)
    window.files.open_example(path, ask=False)
    if not wait_until(app, probe.done):
        raise RuntimeError(f"{path.stem}: the first result never came")
    head, full = [], []
    row = window.doc.row(0)
    name = noise_name(row)
    base = float(row.params[name])
    for i in range(repeats):
        wait_until(app, lambda: window.recomputer.state == "idle", 5.0)
        value = base * (1.05 if i % 2 == 0 else 1.0 / 1.05) ** (1 + i // 2)
        new = window.doc.row(0).with_param(name, value)
        beat.start()
        probe.start((name, value))
        window.editor.replace(0, new)

        def done_or_confirm() -> bool:
            if window.recomputer.state == "waiting":  # the cost prompt: press "Compute anyway"
                prompts.append(path.stem)
                window.recomputer.confirm()
            return probe.done()
        ok = wait_until(app, done_or_confirm)
        beat.stop()
        if not ok:
            raise RuntimeError(f"{path.stem}: edit {i + 1} never finished")
        head.append(1000 * (probe.headline - probe.t0))
        full.append(1000 * (max(probe.plots.values()) - probe.t0))
    return {"headline_ms": round(statistics.median(head), 1), "all_ms": round(statistics.median(full), 1),
            "headline_all": [round(x, 1) for x in head], "all_all": [round(x, 1) for x in full]}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true", help="print one JSON line")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--only", help="one example by name (e.g. mixed)")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    from prvgui.tuning import tuned_startup
    with tuned_startup():  # as the command starts the window (cli.main)
        from PySide6.QtWidgets import QApplication

        import prvgui.gui  # noqa: F401
        from prvgui.gui.main_window import MainWindow
    app = QApplication.instance() or QApplication([])
    out, stalls = {}, {}
    for path in EXAMPLES:
        if args.only and path.stem != args.only:
            continue
        window = MainWindow(persist=False, cost_fn=None)
        window.show()
        beat = Heartbeat()
        try:
            res = measure(app, window, path, args.repeats, beat)
        finally:
            window.shutdown()
            window.stack.setClean()  # closing must not ask to save the edited example
            window.close()
            window.deleteLater()
            app.processEvents()
        stalls[path.stem] = round(1000 * beat.worst, 1)
        out[path.stem] = {"headline_ms": res["headline_ms"], "all_ms": res["all_ms"]}
        if not args.json:
            print(f"{path.stem:16s} headline {res['headline_ms']:8.1f} ms  all plots {res['all_ms']:8.1f} ms"
                  f"  longest stall {stalls[path.stem]:6.1f} ms   (each: {res['headline_all']} / "
                  f"{res['all_all']})")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    if args.json:
        print(json.dumps({"examples": out}))
        print(f"longest event-loop stall (ms): {json.dumps(stalls)}; load {load:.1f}", file=sys.stderr)
    else:
        print(f"longest event-loop stall: {max(stalls.values(), default=0):.1f} ms; load average {load:.1f}")
    if prompts:
        print(f"cost prompts confirmed: {', '.join(prompts)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
