"""Render resources/icons/prvgui.svg to the PNG sizes the desktop and the bundle use.

    QT_QPA_PLATFORM=offscreen python packaging/render_icons.py

Writes resources/icons/prvgui-<size>.png for every size in SIZES (square, transparent
background, antialiased). Needs PySide6 (QtSvg); run it again after editing the SVG.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

SIZES = (16, 32, 48, 64, 128, 256)
ICONS = Path(__file__).resolve().parent.parent / "resources" / "icons"


def render(svg: Path = ICONS / "prvgui.svg", out_dir: Path = ICONS, sizes=SIZES) -> list[Path]:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QGuiApplication, QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    _app = QGuiApplication.instance() or QGuiApplication(sys.argv[:1])  # noqa: F841
    renderer = QSvgRenderer(str(svg))
    if not renderer.isValid():
        raise SystemExit(f"cannot read {svg}")
    written = []
    for size in sizes:
        img = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
        img.fill(Qt.GlobalColor.transparent)
        painter = QPainter(img)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
        renderer.render(painter)
        painter.end()
        path = out_dir / f"prvgui-{size}.png"
        if not img.save(str(path)):
            raise SystemExit(f"cannot write {path}")
        written.append(path)
    return written


if __name__ == "__main__":
    for p in render():
        print(p)
