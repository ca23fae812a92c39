"""Fixtures for the GUI tests (pytest-qt, offscreen).

The Qt platform is set before anything imports Qt. Settings go to a temporary folder.
A test that leaves a QThread running fails (the threads are recorded by wrapping
QThread.start for the duration of the test, as napari's conftest does).
"""
import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402
import shiboken6  # noqa: E402
from PySide6.QtCore import QSettings, QThread  # noqa: E402

import prvgui.gui  # noqa: E402,F401  (applies the PySide reference-count workaround first)
from prvgui.document.model import RowSpec, Targets  # noqa: E402
from prvgui.gui.app import freeze_startup_objects  # noqa: E402

RESULT_TIMEOUT = 60_000
#: a row with this count stands for a job that runs until it is cancelled (``until_cancelled``)
HOLD_COUNT = 10**7
#: a coarse accuracy keeps each computation well under a second
FAST_TARGETS = Targets(1e-5, 1.0, 0.05)


@pytest.fixture(autouse=True)
def isolated_settings(tmp_path_factory):
    folder = tmp_path_factory.mktemp("settings")
    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, str(folder))
    yield folder


@pytest.fixture(autouse=True)
def no_dangling_qthreads(monkeypatch):
    started = []
    original = QThread.start

    def start(self, *args, **kwargs):
        started.append(self)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(QThread, "start", start)
    yield
    left = [t for t in started if shiboken6.isValid(t) and t.isRunning()]
    for t in left:  # stop them so that later tests are not affected, then fail
        t.quit()
        t.wait(10_000)
    if left:
        pytest.fail(f"the test left {len(left)} QThread(s) running: "
                    f"{[t.objectName() for t in left]}")


def until_cancelled(progress, cancel):
    """A fake job for the worker threads: reports progress and waits until it is cancelled."""
    import time

    from prvgui.accounting.core.errors import Cancelled
    for i in range(100_000):
        if cancel():
            raise Cancelled("computation cancelled")
        progress(min(0.9, i / 1000), "holding")
        time.sleep(0.005)
    raise AssertionError("until_cancelled was never cancelled")


def holding_engine(request, progress=None, cancel=None, partial=None):
    """The engine's compute (with its progressive answers), except that a composition with a
    HOLD_COUNT row runs until cancelled."""
    from prvgui.engine.view_model import compute
    if any(r.count == HOLD_COUNT for r in request.rows):
        return until_cancelled(lambda f, text="": progress(f, text) if progress else None, cancel)
    return compute(request, progress=progress, cancel=cancel, partial=partial)


def holding_cost(request):
    """The engine's estimate, except that a job of ``holding_engine`` costs nothing (it is
    started at once, without the cost prompt)."""
    from prvgui.engine.view_model import Cost, cost
    if any(r.count == HOLD_COUNT for r in request.rows):
        return Cost(0.0, 0.0)
    return cost(request)


@pytest.fixture
def window(qtbot, tmp_path):
    """A shown MainWindow whose dialogs answer by themselves (errors land in ``w.errors``); its
    engine is ``holding_engine`` and ``holding_cost``."""
    from prvgui.gui.main_window import MainWindow

    w = MainWindow(persist=True, compute_fn=holding_engine, cost_fn=holding_cost)
    w.errors = []
    w.files.show_error = lambda title, text: w.errors.append(text)
    w.files.ask_unsaved = lambda: "discard"
    w.files.ask_open_path = lambda: None
    w.files.ask_save_path = lambda title, name, filters: str(tmp_path / name)
    qtbot.addWidget(w)
    w.resize(1280, 800)
    w.show()
    freeze_startup_objects()  # as app.run() does
    yield w
    w.files.ask_unsaved = lambda: "discard"
    w.close()
    assert not w.recomputer.is_thread_running()


def _small_rows():
    return [RowSpec("subsampled_gaussian", {"sigma": 2.0, "sampling_rate": 0.05, "sensitivity": 1.0}, 200,
                    "training"),
            RowSpec("laplace", {"scale": 10.0, "sensitivity": 1.0}, 3, "counts")]


@pytest.fixture
def small_rows():
    """A composition that computes in a fraction of a second."""
    return _small_rows()


@pytest.fixture
def load(qtbot):
    """``load(window, rows=None, targets=None)``: replace the document, wait for the result."""
    def load_(w, rows=None, targets=None):
        with qtbot.waitSignal(w.recomputer.result_ready, timeout=RESULT_TIMEOUT) as blocker:
            w.doc.reset(rows if rows is not None else _small_rows(), "add_remove", targets or FAST_TARGETS)
        return blocker.args[0]
    return load_


def pytest_collection_modifyitems(items):
    """Every test under tests/gui needs Qt: each gets the ``gui`` marker (``-m 'not gui'`` runs
    the rest without a display), whether or not its file says so."""
    here = os.path.dirname(os.path.abspath(__file__))
    for item in items:
        if str(item.fspath).startswith(here + os.sep):
            item.add_marker(pytest.mark.gui)
