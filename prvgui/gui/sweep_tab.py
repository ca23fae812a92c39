"""The Sweep tab: the certified ε over one or two parameters of the composition, as lines (one
parameter) or a heatmap (two).

The tab only builds ``--vary`` specs from its fields and shows what comes back: the sweep engine
(prvgui/sweep: ``make_plan``, ``run_sweep``) parses them, with the command line's messages, and
computes the points on a background thread (``TaskRunner``): on every core through Dask when the
``sweep`` extra is installed, else on that thread alone, with a note naming the extra. The CSV
export is the file ``prvgui sweep`` writes for the same sweep; the PNG is the plot.
"""
from __future__ import annotations

import math
import os
import shutil
import tempfile

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (QCheckBox, QComboBox, QFileDialog, QGridLayout, QHBoxLayout, QLabel, QLineEdit,
                               QPushButton, QSpinBox, QStackedWidget, QVBoxLayout, QWidget)

import pyqtgraph as pg  # noqa: E402  (after PySide6, so pyqtgraph picks that binding)

from ..accounting.kinds.base import Param
from ..accounting.mechanisms import kind_class
from ..document.fileio import atomic_write
from .plot_base import BLUE, pen, png_of
from .tasks import TaskRunner, failure_text

TIP = "ε against one or two parameters of the composition: each point certified, as prvgui sweep computes it."
EXTRA = 'pip install "prvgui[sweep]"'
NONE = "—"


def have_dask() -> bool:
    try:
        import dask.distributed  # noqa: F401
    except ImportError:
        return False
    return True


class AxisFields(QWidget):
    """One varied parameter: row, parameter, start, stop, points, log spacing."""

    def __init__(self, doc, optional: bool) -> None:
        super().__init__()
        self.doc, self.optional = doc, optional
        self.row, self.param = QComboBox(), QComboBox()
        self.start, self.stop = QLineEdit(), QLineEdit()
        self.num = QSpinBox()
        self.num.setRange(2, 200)
        self.num.setValue(20)
        self.log = QCheckBox("log")
        for combo in (self.row, self.param):  # (a long label must not widen the window)
            combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
            combo.setMinimumContentsLength(10)
        lay = QGridLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        for k, (label, w) in enumerate((("row", self.row), ("parameter", self.param), ("from", self.start),
                                        ("to", self.stop), ("points", self.num))):
            lay.addWidget(QLabel(label), k // 2, 2 * (k % 2))
            lay.addWidget(w, k // 2, 2 * (k % 2) + 1)
        lay.addWidget(self.log, 2, 3)
        self.row.currentIndexChanged.connect(self._fill_params)
        self.param.currentIndexChanged.connect(self._fill_range)
        self.refresh()

    def refresh(self) -> None:
        """The document's rows (keeping the choice where it still exists)."""
        keep = self.row.currentIndex()
        self.row.blockSignals(True)
        self.row.clear()
        if self.optional:
            self.row.addItem(NONE)
        for i, r in enumerate(self.doc.rows):
            self.row.addItem(f"{i + 1}: {r.label or r.title}")
        self.row.setCurrentIndex(keep if 0 <= keep < self.row.count() else 0)
        self.row.blockSignals(False)
        self._fill_params()

    def row_index(self) -> int | None:
        i = self.row.currentIndex() - (1 if self.optional else 0)
        return i if 0 <= i < len(self.doc.rows) else None

    def _fill_params(self) -> None:
        i = self.row_index()
        self.param.blockSignals(True)
        self.param.clear()
        if i is not None:
            specs = kind_class(self.doc.rows[i].kind).param_specs()
            self.param.addItems([n for n, p in specs.items() if type(p) is Param] + ["count"])
        self.param.blockSignals(False)
        self._fill_range()

    def _fill_range(self) -> None:
        """From half the row's value to twice it."""
        i, name = self.row_index(), self.param.currentText()
        if i is None or not name:
            return
        r = self.doc.rows[i]
        v = r.count if name == "count" else r.params.get(name)
        if isinstance(v, (int, float)) and v > 0:
            lo, hi = (max(1, int(v) // 2), int(v) * 2) if name == "count" else (v / 2, v * 2)
            self.start.setText(f"{lo:.6g}")
            self.stop.setText(f"{hi:.6g}")

    def title(self) -> str:
        """The varied parameter in words, for a plot's axis: the row's label (or its number) and
        the parameter's title."""
        i = self.row_index()
        if i is None:
            return ""
        r, name = self.doc.rows[i], self.param.currentText()
        spec = kind_class(r.kind).param_specs().get(name)
        return f"{r.label or f'row {i + 1}'}: {spec.title if spec is not None else name}"

    def spec(self) -> str | None:
        """The ``--vary`` spec these fields say (None: no parameter chosen)."""
        i = self.row_index()
        if i is None or not self.param.currentText():
            return None
        return (f"{i + 1}.{self.param.currentText()}={self.start.text().strip()}:{self.stop.text().strip()}:"
                f"{self.num.value()}" + (":log" if self.log.isChecked() else ""))


class SweepTab(QWidget):
    """Fields for two parameters, Run and Cancel, the plot, PNG and CSV exports."""

    tip = TIP

    def __init__(self, doc) -> None:
        super().__init__()
        self.doc = doc
        #: local worker processes (None: every core through Dask when it is installed)
        self.workers: int | None = None
        self.folder = tempfile.mkdtemp(prefix="prvgui-sweep-")
        self.results_path: str | None = None
        self._titles: dict[str, str] = {}  # (an axis's column name: the row and parameter in words)
        self.axes = [AxisFields(doc, optional=False), AxisFields(doc, optional=True)]
        self.run_button, self.cancel_button = QPushButton("Run sweep"), QPushButton("Cancel")
        self.png_button, self.csv_button = QPushButton("Export PNG…"), QPushButton("Export CSV…")
        self.status = QLabel("Choose one or two parameters to vary, then Run sweep.")
        self.status.setWordWrap(True)
        # two plots, one shown: lines for one parameter, a heatmap and its colour bar for two
        self.lines, self.heat = pg.PlotWidget(), pg.PlotWidget()
        self.legend = self.lines.addLegend(offset=(10, 10))  # (before the curves: they join it by name)
        self.upper = self.lines.plot([], [], pen=pen(BLUE, 2.4), name="certified ε (upper bound)")
        self.lower = self.lines.plot([], [], pen=pen(BLUE, 1.2, Qt.PenStyle.DashLine), name="proven lower bound")
        self.lines.setLabel("left", "ε")
        self.legend.setVisible(False)  # (no legend over an empty plot: it appears with the curves)
        self.image = pg.ImageItem()
        self.heat.addItem(self.image)
        self.bar = pg.ColorBarItem(values=(0, 1), colorMap="viridis", label="certified ε", interactive=False)
        self.bar.setImageItem(self.image, insert_in=self.heat.getPlotItem())
        self.plots = QStackedWidget()
        self.plots.addWidget(self.lines)
        self.plots.addWidget(self.heat)
        grid = QGridLayout()
        for k, a in enumerate(self.axes):
            grid.addWidget(QLabel("Vary" if k == 0 else "and"), k, 0)
            grid.addWidget(a, k, 1)
        buttons = QHBoxLayout()
        for b in (self.run_button, self.cancel_button, self.png_button, self.csv_button):
            buttons.addWidget(b)
        buttons.addStretch(1)
        lay = QVBoxLayout(self)
        lay.addLayout(grid)
        lay.addLayout(buttons)
        lay.addWidget(self.status)
        lay.addWidget(self.plots, 1)
        self.runner = TaskRunner("prvgui-sweep", self)
        self.runner.progress.connect(lambda f, text: self.status.setText(text))
        self.runner.done.connect(self._show)
        self.runner.failed.connect(lambda exc: self.status.setText(_words(failure_text(exc))))
        self.runner.cancelled.connect(lambda: self.status.setText("Cancelled."))
        self.runner.running_changed.connect(self._running)
        self.run_button.clicked.connect(self.run)
        self.cancel_button.clicked.connect(self.runner.cancel)
        self.png_button.clicked.connect(lambda: self._ask("png"))
        self.csv_button.clicked.connect(lambda: self._ask("csv"))
        doc.subscribe(self._on_doc)
        self._running(False)

    def _on_doc(self, what: str, arg: object) -> None:
        if what in ("insert", "remove", "move", "reset", "change"):
            for a in self.axes:
                a.refresh()

    def _running(self, running: bool) -> None:
        self.run_button.setEnabled(not running)
        self.cancel_button.setEnabled(running)
        self.png_button.setEnabled(not running and self.results_path is not None)
        self.csv_button.setEnabled(not running and self.results_path is not None)

    # ------------------------------------------------------------ running
    def run(self) -> None:
        """Start the sweep the fields say (on the runner's thread)."""
        from ..document.composition import Composition
        specs = [s for s in (a.spec() for a in self.axes) if s is not None]
        comp, t = Composition.of(self.doc), self.doc.targets
        workers, note = self.workers, ""
        if workers is None and not have_dask():
            workers, note = 1, f"on one core: Dask is not installed ({EXTRA} for every core)"
        out = os.path.join(self.folder, "sweep.csv")
        self._titles = {a.spec().split("=", 1)[0]: a.title() for a in self.axes if a.spec() is not None}

        def job(progress, cancel):
            from ..sweep.journal import read_results
            from ..sweep.plan import make_plan
            from ..sweep.run import run_sweep
            plan = make_plan(comp, specs, t.delta, t.eps_error)
            run_sweep(plan, out, workers=workers, restart=True, cancel=cancel,
                      progress=lambda d, n: progress(d / n, f"{d:,} of {n:,} points" + (f" ({note})" if note else "")))
            return plan, read_results(out), out

        self.status.setText("Starting…")
        self.runner.start(job)

    def _show(self, answer) -> None:
        plan, cols, self.results_path = answer
        eps = np.asarray(cols["certified_upper"], dtype=float)
        failed = sum(1 for f in cols["failed"] if f)
        self.status.setText(f"{plan.total:,} points at δ = {plan.delta:g}"
                            + (f"; {failed:,} without a PRV bracket (see the CSV)" if failed else ""))
        if len(plan.axes) == 1:
            self._lines(plan.axes[0], np.asarray(cols[plan.names[0]], dtype=float), eps,
                        np.asarray(cols["proven_lower"], dtype=float))
        else:
            self._heatmap(plan, eps)
        self._running(False)

    def _lines(self, axis, x, eps, lower) -> None:
        for item, y in ((self.upper, eps), (self.lower, lower)):
            item.setData(x, np.where(np.isfinite(y), y, np.nan))
        # the legend in the top corner the curves leave free: left where ε rises, right where it falls
        fin = eps[np.isfinite(eps)]
        self.legend.setOffset((-10, 10) if fin.size > 1 and fin[0] > fin[-1] else (10, 10))
        self.legend.setVisible(True)
        self.lines.setLogMode(x=axis.log, y=False)
        self.lines.setLabel("bottom", self._titles.get(axis.name, axis.name))
        self.plots.setCurrentWidget(self.lines)

    def _heatmap(self, plan, eps) -> None:
        img = np.where(np.isfinite(eps), eps, np.nan).reshape(plan.shape[:2])
        self.image.setImage(img)
        rect = [_edges(a) for a in plan.axes[:2]]
        self.image.setRect(rect[0][0], rect[1][0], rect[0][1] - rect[0][0], rect[1][1] - rect[1][0])
        finite = img[np.isfinite(img)]
        if finite.size:
            lo, hi = float(finite.min()), float(finite.max())
            self.bar.setLevels((lo, hi if hi > lo else lo + 1))
        for side, a in (("bottom", plan.axes[0]), ("left", plan.axes[1])):
            name = self._titles.get(a.name, a.name)
            self.heat.setLabel(side, f"{name} (log10)" if a.log else name)
        self.plots.setCurrentWidget(self.heat)

    # ------------------------------------------------------------ exports
    def _ask(self, kind: str) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Export sweep", f"sweep.{kind}",
                                              "PNG image (*.png)" if kind == "png" else "CSV table (*.csv)")
        if path:
            try:
                self.export_png(path) if kind == "png" else self.export_csv(path)
            except OSError as exc:
                self.status.setText(f"Could not write {path}: {exc}")

    def export_png(self, path: str) -> None:
        """The plot shown, as PNG (written atomically, as every export)."""
        from pyqtgraph.exporters import ImageExporter
        atomic_write(path, png_of(ImageExporter(self.plots.currentWidget().getPlotItem()).export(toBytes=True)))

    def export_csv(self, path: str) -> None:
        """The sweep's results file, as ``prvgui sweep`` writes it (written atomically)."""
        if self.results_path is None:
            raise OSError("no sweep has run yet")
        with open(self.results_path, "rb") as f:
            atomic_write(path, f.read())

    def shutdown(self) -> None:
        """Cancel, stop the thread, forget the temporary results (idempotent)."""
        self.runner.shutdown()
        self.doc.unsubscribe(self._on_doc)
        shutil.rmtree(self.folder, ignore_errors=True)


def _edges(axis) -> tuple[float, float]:
    """The heatmap's extent along an axis: half a step beyond the first and last values (in log10
    for a log axis)."""
    v = [math.log10(x) for x in axis.values] if axis.log else [float(x) for x in axis.values]
    half = (v[-1] - v[0]) / (len(v) - 1) / 2 if len(v) > 1 else 0.5
    return v[0] - half, v[-1] + half


def _words(text: str) -> str:
    """An engine message for the window: the option and its spec left out (the fields say them)."""
    return text.split(": ", 1)[1] if text.startswith("--vary") and ": " in text else text
