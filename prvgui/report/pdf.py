"""A Report as PDF, with Qt's own PDF writer (QPdfWriter; no other dependency).

The page is the HTML report (html.py) laid out by Qt's rich-text engine (QTextDocument) on A4
pages; each plot is the report's SVG drawn by QSvgRenderer into an image of at least
``PLOT_DPI`` dots per inch at its printed size. A footer names prvgui, its version and the page.

Needs a QGuiApplication for fonts: ``ensure_app`` makes one when none exists, on the offscreen
platform (the command line, on a server without a display too). ``page_images`` draws
the same pages into images, to look at them.
"""
from __future__ import annotations

import os
import uuid

from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QMarginsF, QRectF, QSizeF, Qt, QUrl, QUuid
from PySide6.QtGui import (QColor, QFont, QGuiApplication, QImage, QPageLayout, QPageSize, QPainter,
                           QPdfWriter, QTextDocument)
from PySide6.QtSvg import QSvgRenderer

from . import html, svg
from .model import Report

#: the resolution of the PDF's coordinate system, and the least resolution of a plot's image
DPI, PLOT_DPI = 300, 200
MARGIN_MM = 16.0
_APP = None


def ensure_app() -> QGuiApplication:
    """The running Qt application, or a new QGuiApplication on the offscreen platform (a report
    shows no window, and a display named in DISPLAY may not answer) unless QT_QPA_PLATFORM
    names one."""
    global _APP
    app = QGuiApplication.instance()
    if app is not None:
        return app
    argv = ["prvgui"]
    if not os.environ.get("QT_QPA_PLATFORM"):
        argv += ["-platform", "offscreen"]
    _APP = QGuiApplication(argv)
    return _APP


def _plot_image(fig: svg.Figure, index: int, width_px: int) -> QImage:
    """The figure drawn at ``width_px`` pixels wide (its aspect kept), on white."""
    r = QSvgRenderer(QByteArray(svg.render(fig, uid=f"fig{index}").encode("utf-8")))
    w, h = svg.size(fig)
    height_px = round(width_px * h / w)
    img = QImage(width_px, height_px, QImage.Format.Format_RGB32)
    img.setDotsPerMeterX(round(PLOT_DPI / 0.0254))
    img.setDotsPerMeterY(round(PLOT_DPI / 0.0254))
    img.fill(QColor("white"))
    p = QPainter(img)
    p.setRenderHint(QPainter.RenderHint.Antialiasing)
    p.setRenderHint(QPainter.RenderHint.TextAntialiasing)
    r.render(p)
    p.end()
    return img


def _writer(target) -> QPdfWriter:
    w = QPdfWriter(target)
    w.setResolution(DPI)
    w.setPageLayout(QPageLayout(QPageSize(QPageSize.PageSizeId.A4), QPageLayout.Orientation.Portrait,
                                QMarginsF(MARGIN_MM, MARGIN_MM, MARGIN_MM, MARGIN_MM + 4),
                                QPageLayout.Unit.Millimeter))
    return w


def _document(report: Report, writer: QPdfWriter) -> tuple[QTextDocument, float, float]:
    """The report laid out for ``writer``'s pages: (document, page width, page height) in its
    device pixels."""
    page_w, page_h = float(writer.width()), float(writer.height())
    doc = QTextDocument()
    doc.documentLayout().setPaintDevice(writer)
    font = QFont("DejaVu Sans")
    font.setPointSizeF(9.0)
    doc.setDefaultFont(font)
    doc.setPageSize(QSizeF(page_w, page_h))
    # the rich-text engine reads an image's width in pixels of 96 per inch and scales them to the
    # device; the image itself holds PLOT_DPI pixels per inch of its printed size
    inches = page_w * 0.9 / DPI
    img_w = round(inches * 96)
    pixels = max(round(inches * PLOT_DPI), 1)

    def plot(fig: svg.Figure, index: int) -> str:
        w, h = svg.size(fig)
        img_h = round(img_w * h / w)
        name = f"prvgui-figure-{index}.png"
        doc.addResource(QTextDocument.ResourceType.ImageResource, QUrl(name), _plot_image(fig, index, pixels))
        return f'<img src="{name}" width="{img_w}" height="{img_h}">'

    doc.setHtml(html.render(report, plot=plot, css=html.CSS))
    return doc, page_w, page_h


def _paint(report: Report, doc: QTextDocument, painter: QPainter, page_w: float, page_h: float, index: int,
           pages: int) -> None:
    painter.save()
    painter.translate(0, -index * page_h)
    doc.drawContents(painter, QRectF(0, index * page_h, page_w, page_h))
    painter.restore()
    painter.save()
    font = QFont("DejaVu Sans")
    font.setPixelSize(round(7.5 / 72 * DPI))  # 7.5 pt in the page's units, whatever the device
    painter.setFont(font)
    painter.setPen(QColor("#666"))
    foot = QRectF(0, page_h + DPI * 0.04, page_w, DPI * 0.2)
    painter.drawText(foot, int(Qt.AlignmentFlag.AlignLeft), f"prvgui {report.version} · {report.created}")
    painter.drawText(foot, int(Qt.AlignmentFlag.AlignRight), f"page {index + 1} of {pages}")
    painter.restore()


def pdf_bytes(report: Report) -> bytes:
    """The report as a PDF file's bytes."""
    ensure_app()
    buf = QBuffer()
    buf.open(QIODevice.OpenModeFlag.WriteOnly)
    writer = _writer(buf)
    writer.setTitle(report.title)
    writer.setCreator(f"prvgui {report.version}")
    # the file's id from its content (Qt draws a random one): the same report, the same bytes
    # apart from the date stamps Qt writes
    writer.setDocumentId(QUuid(str(uuid.uuid5(uuid.NAMESPACE_URL, "prvgui-report:" + html.render(report)))))
    doc, page_w, page_h = _document(report, writer)
    pages = doc.pageCount()
    painter = QPainter(writer)
    try:
        for i in range(pages):
            if i:
                writer.newPage()
            _paint(report, doc, painter, page_w, page_h, i, pages)
    finally:
        painter.end()
    buf.close()
    return bytes(buf.data().data())


def page_images(report: Report, dpi: int = 100) -> list[QImage]:
    """The PDF's pages drawn into images at ``dpi`` (to look at them; same layout)."""
    ensure_app()
    buf = QBuffer()
    buf.open(QIODevice.OpenModeFlag.WriteOnly)
    writer = _writer(buf)
    doc, page_w, page_h = _document(report, writer)
    pages = doc.pageCount()
    layout = writer.pageLayout()
    full = layout.fullRectPixels(DPI)
    paint = layout.paintRectPixels(DPI)
    scale = dpi / DPI
    out = []
    for i in range(pages):
        img = QImage(round(full.width() * scale), round(full.height() * scale), QImage.Format.Format_RGB32)
        img.fill(QColor("white"))
        p = QPainter(img)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        p.scale(scale, scale)
        p.translate(paint.left(), paint.top())
        _paint(report, doc, p, page_w, page_h, i, pages)
        p.end()
        out.append(img)
    return out
