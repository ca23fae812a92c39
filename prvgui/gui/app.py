"""Application entry point: ``run(path, screenshot=None) -> int`` (called by ``prvgui [FILE]``).

Screenshot mode (``prvgui --screenshot OUT.png [FILE]``) opens the window offscreen at
1280x800, waits in an event loop until the first computation has finished (or failed, or
60 s passed), saves a grab of the window and exits 0. Without FILE it shows the DP-SGD
example so that the picture means something. It neither reads nor writes the settings.
"""
from __future__ import annotations

import gc
import os
import sys
from pathlib import Path

SCREENSHOT_SIZE = (1280, 800)
SCREENSHOT_TIMEOUT_MS = 60_000
DEFAULT_EXAMPLE = "dpsgd_mnist.json"


def _application(screenshot: bool):
    if screenshot:
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setApplicationName("prvgui")
    app.setOrganizationName("prvgui")
    app.setApplicationDisplayName("prvgui")
    app.setDesktopFileName("prvgui")  # lets the desktop match windows to prvgui.desktop
    from .about import app_icon
    icon = app_icon()
    if not icon.isNull():
        app.setWindowIcon(icon)
    return app


def freeze_startup_objects() -> None:
    """Move the objects alive now (Qt wrappers, pyqtgraph items, modules) out of the garbage
    collector's reach. A full collection otherwise rescans them all, stalling the event loop
    for 30-100 ms while a computation allocates; objects created later are collected as usual."""
    gc.collect()
    gc.freeze()


def run(path: str | os.PathLike | None = None, screenshot: str | os.PathLike | None = None) -> int:
    """Open the window (on ``path`` if given); with ``screenshot``, save a picture and exit."""
    app = _application(screenshot is not None)
    from .main_window import MainWindow

    window = MainWindow(persist=screenshot is None)
    freeze_startup_objects()
    try:
        if screenshot is not None:
            return _screenshot(app, window, path, Path(screenshot))
        if path is not None:
            window.files.open(path, ask=False)
        window.show()
        return app.exec()
    finally:
        window.shutdown()
        if screenshot is not None:
            window.hide()
            window.deleteLater()


def _screenshot(app, window, path, out: Path) -> int:
    from PySide6.QtCore import QEventLoop, QTimer

    from ..paths import resource_dir

    errors: list[str] = []
    window.files.show_error = lambda title, text: errors.append(text)
    done = {"flag": False}
    loop = QEventLoop()

    def finish() -> None:
        done["flag"] = True
        loop.quit()

    window.recomputer.finished.connect(finish)
    window.resize(*SCREENSHOT_SIZE)
    window.show()
    if path is not None:
        opened = window.files.open(path, ask=False)
    else:
        opened = window.files.open_example(resource_dir() / "examples" / DEFAULT_EXAMPLE, ask=False)
    if not opened:
        print(f"prvgui: error: {errors[0] if errors else 'cannot open the file'}", file=sys.stderr)
        return 2
    window.recomputer.run_now()
    if not done["flag"]:
        QTimer.singleShot(SCREENSHOT_TIMEOUT_MS, loop.quit)
        loop.exec()
    settle = QEventLoop()
    QTimer.singleShot(300, settle.quit)  # let layouts and plots repaint
    settle.exec()
    app.processEvents()
    from ..document.fileio import atomic_write
    from .plot_base import png_of
    try:
        atomic_write(out, png_of(window.grab().toImage()))  # (never written in place)
    except OSError as exc:
        print(f"prvgui: error: {exc}", file=sys.stderr)
        window.close()
        return 1
    window.close()
    return 0
