"""Packaging: desktop entry, AppStream metainfo, icons, About dialog, ``--version``, and (slow)
the PyInstaller one-folder bundle built by packaging/build.sh and run in a clean environment."""
from __future__ import annotations

import configparser
import json
import os
import shutil
import struct
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

import prvgui

ROOT = Path(__file__).resolve().parent.parent
RES = ROOT / "resources"
ICONS = RES / "icons"
DESKTOP = RES / "prvgui.desktop"
METAINFO = RES / "io.github.prvgui.metainfo.xml"
ICON_SIZES = (16, 32, 48, 64, 128, 256)
EXAMPLES = RES / "examples"


# ------------------------------------------------------------------ desktop entry and metainfo
def _desktop_entry() -> dict[str, str]:
    cp = configparser.ConfigParser(interpolation=None)
    cp.optionxform = str  # keys are case-sensitive
    cp.read(DESKTOP, encoding="utf-8")
    return dict(cp["Desktop Entry"])


def test_desktop_entry_has_the_required_keys():
    e = _desktop_entry()
    assert e["Type"] == "Application"
    assert e["Name"] == "prvgui"
    for key in ("GenericName", "Comment"):
        assert e[key].strip()
    assert e["Exec"] == "prvgui %f"
    assert e["Icon"] == "prvgui"
    assert e["Terminal"] == "false"
    cats = [c for c in e["Categories"].split(";") if c]
    assert "Science" in cats and e["Categories"].endswith(";")


@pytest.mark.skipif(shutil.which("desktop-file-validate") is None, reason="desktop-file-validate not installed")
def test_desktop_entry_validates():
    r = subprocess.run(["desktop-file-validate", str(DESKTOP)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "error" not in (r.stdout + r.stderr).lower()


def test_metainfo_has_id_name_summary_and_licences():
    root = ET.parse(METAINFO).getroot()
    assert root.tag == "component" and root.get("type") == "desktop-application"
    assert root.findtext("id") == METAINFO.name.removesuffix(".metainfo.xml") == "io.github.prvgui"
    assert root.findtext("name") == "prvgui"
    assert root.findtext("summary").strip()
    assert root.findtext("metadata_license") == "CC0-1.0"
    assert root.findtext("project_license") == "MIT"
    assert root.findtext("launchable") == DESKTOP.name
    assert root.findtext("icon") == _desktop_entry()["Icon"]
    assert root.find("description/p") is not None
    releases = [r.get("version") for r in root.iter("release")]
    assert prvgui.__version__ in releases


@pytest.mark.skipif(shutil.which("appstreamcli") is None, reason="appstreamcli not installed")
def test_metainfo_validates():
    r = subprocess.run(["appstreamcli", "validate", "--no-net", str(METAINFO)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr


# ------------------------------------------------------------------ icons
def _png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()[:24]
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    return struct.unpack(">II", data[16:24])


def test_icon_files_exist_at_every_size():
    assert (ICONS / "prvgui.svg").is_file()
    for s in ICON_SIZES:
        assert _png_size(ICONS / f"prvgui-{s}.png") == (s, s)


def test_resource_dir_finds_the_icons():
    from prvgui.paths import resource_dir
    assert (resource_dir() / "icons" / "prvgui.svg").is_file()
    for s in ICON_SIZES:
        assert (resource_dir() / "icons" / f"prvgui-{s}.png").is_file()


@pytest.mark.gui
def test_icons_load_and_match_the_svg(qapp):
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    renderer = QSvgRenderer(str(ICONS / "prvgui.svg"))
    assert renderer.isValid()
    assert renderer.defaultSize().width() == renderer.defaultSize().height()
    for s in ICON_SIZES:
        img = QImage(str(ICONS / f"prvgui-{s}.png"))
        assert not img.isNull() and (img.width(), img.height()) == (s, s)
        assert img.hasAlphaChannel()
        if s < 64:
            continue
        # the PNG is the SVG rendered (packaging/render_icons.py): re-render and compare
        ref = QImage(s, s, QImage.Format.Format_ARGB32_Premultiplied)
        ref.fill(Qt.GlobalColor.transparent)
        p = QPainter(ref)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        renderer.render(p)
        p.end()
        a = img.convertToFormat(QImage.Format.Format_ARGB32)
        b = ref.convertToFormat(QImage.Format.Format_ARGB32)
        step = max(1, s // 32)
        diff = [abs(a.pixelColor(x, y).red() - b.pixelColor(x, y).red())
                + abs(a.pixelColor(x, y).alpha() - b.pixelColor(x, y).alpha())
                for x in range(0, s, step) for y in range(0, s, step)]
        assert sum(diff) / len(diff) < 8, f"prvgui-{s}.png is stale: run packaging/render_icons.py"


# ------------------------------------------------------------------ About dialog
@pytest.mark.gui
def test_about_dialog_shows_version_licence_and_references(qtbot):
    from prvgui.gui.about import AboutDialog, app_icon

    icon = app_icon()
    assert not icon.isNull()
    assert {q.width() for q in icon.availableSizes()} >= set(ICON_SIZES)
    d = AboutDialog()
    qtbot.addWidget(d)
    text = d.title.text() + d.body.text()
    assert f"prvgui {prvgui.__version__}" in text
    assert "MIT" in text
    for name in ("Gopi", "Numerical Composition of Differential Privacy", "Mironov", "Talwar",
                 "Dong", "Roth", "Su", "Bu", "Dwork", "Rothblum", "Vadhan", "Kairouz", "Viswanath"):
        assert name in text, name
    assert not d.icon_label.pixmap().isNull()
    d.show()
    qtbot.waitExposed(d)
    d.reject()


# ------------------------------------------------------------------ --version
def test_version_flag_prints_the_version():
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    r = subprocess.run([sys.executable, "-m", "prvgui", "--version"], capture_output=True, text=True,
                       env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == f"prvgui {prvgui.__version__}"
    script = Path(sys.executable).parent / "prvgui"
    if script.is_file():  # the console entry point of an installed prvgui
        r = subprocess.run([str(script), "--version"], capture_output=True, text=True, timeout=120)
        assert r.stdout.strip() == f"prvgui {prvgui.__version__}"


def test_packaging_scripts_parse():
    for script in ("build.sh", "install-desktop-entry.sh"):
        r = subprocess.run(["bash", "-n", str(ROOT / "packaging" / script)], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr


# ------------------------------------------------------------------ the bundle (slow)
def _clean_env(home: Path) -> dict[str, str]:
    """No Python of ours: no PATH entry of a venv, no PYTHONPATH/PYTHONHOME, no VIRTUAL_ENV."""
    return {"HOME": str(home), "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "QT_QPA_PLATFORM": "offscreen"}


def _gui_importable() -> bool:
    r = subprocess.run([sys.executable, "-c", "import prvgui.gui.app, prvgui.gui.main_window"],
                       capture_output=True, env=dict(os.environ, PYTHONPATH=str(ROOT),
                                                     QT_QPA_PLATFORM="offscreen"), timeout=300)
    return r.returncode == 0


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the bundle test runs on Linux")
def test_build_and_run_the_bundle(tmp_path):
    build, dist, home = tmp_path / "build", tmp_path / "dist", tmp_path / "home"
    home.mkdir()
    env = dict(os.environ, PYTHON=sys.executable, PRVGUI_BUILD_DIR=str(build), PRVGUI_DIST_DIR=str(dist))
    env.pop("PYTHONPATH", None)
    r = subprocess.run(["bash", str(ROOT / "packaging" / "build.sh")], capture_output=True, text=True,
                       env=env, cwd=tmp_path, timeout=1500)
    assert r.returncode == 0, (r.stdout + r.stderr)[-6000:]
    exe = dist / "prvgui" / "prvgui"
    assert exe.is_file() and os.access(exe, os.X_OK)
    assert (dist / "prvgui" / "install-desktop-entry.sh").is_file()

    def run(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
        return subprocess.run([str(exe), *args], capture_output=True, text=True, env=_clean_env(home),
                              cwd=home, timeout=timeout)

    v = run("--version")
    assert v.returncode == 0, v.stderr
    assert v.stdout.strip() == f"prvgui {prvgui.__version__}"

    example = str(EXAMPLES / "dpsgd_mnist.json")
    c = run("epsilon", example, "--delta", "1e-5", "--json")
    assert c.returncode == 0, c.stderr
    got = json.loads(c.stdout)
    eps = got["epsilon"]
    assert 0 < eps["lower"] <= eps["estimate"] <= eps["upper"] < float("inf")
    assert eps["upper"] - eps["lower"] <= 2 * 0.01 + 1e-9
    ref = subprocess.run([sys.executable, "-m", "prvgui", "epsilon", example, "--delta", "1e-5", "--json"],
                         capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=str(ROOT)), timeout=300)
    assert ref.returncode == 0, ref.stderr
    want = json.loads(ref.stdout)["epsilon"]
    for k in ("lower", "estimate", "upper"):
        assert eps[k] == pytest.approx(want[k], rel=1e-6, abs=1e-9)

    bad = run("delta", str(tmp_path / "missing.json"), "--epsilon", "1")
    assert bad.returncode == 2 and bad.stderr.startswith("prvgui: error:")

    if not _gui_importable():
        pytest.skip("prvgui.gui is not importable here: screenshot part not run")
    shot = tmp_path / "shot.png"
    s = run("--screenshot", str(shot), str(EXAMPLES / "mixed.json"), timeout=180)
    assert s.returncode == 0, s.stderr
    assert _png_size(shot) == (1280, 800)


def test_every_package_of_the_source_tree_is_listed_for_installation():
    """pyproject.toml lists the packages by name: a new subpackage (e.g. accounting/kinds) that is
    missing there works in a checkout and is absent from an installed prvgui."""
    import tomllib
    root = Path(__file__).resolve().parent.parent
    listed = set(tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {".".join(p.parent.relative_to(root).parts) for p in (root / "prvgui").rglob("__init__.py")}
    assert found <= listed, sorted(found - listed)
