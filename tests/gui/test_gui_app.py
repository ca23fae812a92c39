"""The entry point: ``prvgui --screenshot`` in-process, bad files, and the layering rule."""
import subprocess
import sys

from PySide6.QtGui import QImage

from prvgui.cli import main
from prvgui.paths import resource_dir


def test_screenshot_of_an_example(tmp_path):
    out = tmp_path / "shot.png"
    assert main(["--screenshot", str(out), str(resource_dir() / "examples" / "census_laplace.json")]) == 0
    image = QImage(str(out))
    assert image.width() >= 1280 and image.height() >= 800


def test_screenshot_without_a_file_shows_the_dpsgd_example(tmp_path, monkeypatch):
    from prvgui.gui import app
    seen = []
    real = app._screenshot

    def spy(qapp, window, path, out):
        code = real(qapp, window, path, out)
        seen.append((window.files.display_name(), window.results.result))
        return code

    monkeypatch.setattr(app, "_screenshot", spy)
    out = tmp_path / "default.png"
    assert app.run(None, screenshot=out) == 0
    name, result = seen[0]
    assert name == "dpsgd_mnist (example)"
    assert result is not None and result.request.rows[0].count == 14063
    assert not QImage(str(out)).isNull()


def test_screenshot_of_a_bad_file_exits_2(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "prvgui.composition", "version": 1, "mechanisms": [{"kind": "nope"}]}')
    assert main(["--screenshot", str(tmp_path / "x.png"), str(bad)]) == 2
    assert 'row 1, kind: the mechanism must be one of' in capsys.readouterr().err
    assert not (tmp_path / "x.png").exists()


def test_document_and_engine_never_import_qt():
    code = ("import sys, prvgui.accounting, prvgui.document, prvgui.document.export, prvgui.cli; "
            "bad = [m for m in sys.modules if m.split('.')[0] in ('PySide6', 'pyqtgraph', 'shiboken6')]; "
            "assert not bad, bad")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_run_opens_the_window_on_a_file_and_returns_when_it_closes(qtbot):
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    from prvgui.gui.app import run
    from prvgui.gui.main_window import MainWindow
    seen = []
    polls = []

    def poll():
        polls.append(1)
        windows = [w for w in QApplication.topLevelWidgets() if isinstance(w, MainWindow) and w.isVisible()]
        if windows and (windows[0].results.result is not None or len(polls) > 1200):  # 60 s at most
            seen.append(windows[0].files.display_name())
            windows[0].close()
        else:
            QTimer.singleShot(50, poll)

    QTimer.singleShot(0, poll)
    assert run(str(resource_dir() / "examples" / "census_laplace.json")) == 0
    assert seen == ["census_laplace.json"] and len(polls) <= 1200
