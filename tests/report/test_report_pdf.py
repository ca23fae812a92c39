"""The PDF report (report/pdf.py, Qt's QPdfWriter): a PDF with pages, plots at 200 dpi or more,
the same bytes for the same input apart from the file's date stamps, written atomically by
``prvgui report FILE --out X.pdf``, also with no Qt platform named (a server)."""
from __future__ import annotations

import datetime as dt
import json
import os
import re
import subprocess
import sys

import pytest

pytest.importorskip("PySide6.QtGui")

from prvgui.engine.view_model import compute  # noqa: E402
from prvgui.document.composition import Composition  # noqa: E402
from prvgui.report import pdf, svg  # noqa: E402
from prvgui.report.model import gather, request_for  # noqa: E402

#: the Qt application of the whole test session (pytest-qt's QApplication): pdf.ensure_app would
#: otherwise make a QGuiApplication, on which later widget tests cannot run
pytestmark = pytest.mark.usefixtures("qapp")
WHEN = dt.datetime(2026, 1, 2, 3, 4, tzinfo=dt.timezone.utc)
COMP = {"targets": {"delta": 1e-5, "epsilon": 1.0, "eps_error": 0.05},
        "mechanisms": [{"kind": "subsampled_gaussian", "sigma": 1.0, "sampling_rate": 0.01, "count": 200,
                        "label": "training"},
                       {"kind": "laplace", "scale": 10.0, "count": 2, "label": "counts"}]}


@pytest.fixture(scope="module")
def report():
    comp = Composition.from_dict(COMP)
    res = compute(request_for(comp))
    return gather(comp, res, created=WHEN)


def _pages(data: bytes) -> int:
    return len(re.findall(rb"/Type\s*/Page(?!s)", data))


def _mask(data: bytes) -> bytes:
    """The date stamps Qt writes (/CreationDate, /ModDate and the XMP dates) masked."""
    data = re.sub(rb"\((D:\d+[^)]*)\)", b"(D:DATE)", data)
    return re.sub(rb"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(Z|[+-]\d\d:\d\d)", b"DATE", data)


def test_pdf_has_pages_and_is_deterministic(report):
    a = pdf.pdf_bytes(report)
    assert a.startswith(b"%PDF-") and a.rstrip().endswith(b"%%EOF")
    assert _pages(a) >= 3
    b = pdf.pdf_bytes(report)
    assert _mask(a) == _mask(b)


def test_page_images_show_every_page_with_ink(report):
    images = pdf.page_images(report, dpi=40)
    assert len(images) == _pages(pdf.pdf_bytes(report))
    for img in images:
        assert img.width() == round(210 / 25.4 * 40)  # A4 portrait
        small = img.scaled(40, 56)
        dark = sum(1 for x in range(small.width()) for y in range(small.height())
                   if small.pixelColor(x, y).lightness() < 200)
        assert dark > 0


def test_plots_are_drawn_at_200_dpi_or_more(report):
    fig = report.figures[0]
    page_w_in = (210 - 2 * pdf.MARGIN_MM) / 25.4
    img = pdf._plot_image(fig, 0, round(page_w_in * 0.9 * pdf.PLOT_DPI))
    assert img.width() / (page_w_in * 0.9) >= 199
    w, h = svg.size(fig)
    assert img.height() == round(img.width() * h / w)


def test_cli_pdf_without_a_named_platform(tmp_path):
    f = tmp_path / "comp.json"
    f.write_text(json.dumps(Composition.from_dict(COMP).to_dict()))
    out = tmp_path / "report.pdf"
    env = {k: v for k, v in os.environ.items() if k not in ("QT_QPA_PLATFORM", "DISPLAY", "WAYLAND_DISPLAY")}
    r = subprocess.run([sys.executable, "-m", "prvgui", "report", str(f), "--out", str(out)],
                       capture_output=True, text=True, timeout=600, env=env)
    assert r.returncode == 0, r.stderr
    data = out.read_bytes()
    assert data.startswith(b"%PDF-") and _pages(data) >= 3
    assert sorted(p.name for p in tmp_path.iterdir()) == ["comp.json", "report.pdf"]
