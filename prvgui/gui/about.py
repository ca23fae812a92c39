"""Help ▸ About: the icon, the version, what prvgui does, its licence and the methods it uses.

``app_icon()`` is the application icon (PNG sizes from ``resources/icons``, the SVG if the
PNGs are missing); ``show_about(parent)`` opens the dialog modally.
"""
from __future__ import annotations

import html
import importlib
import platform

from PySide6.QtCore import QSize, Qt, qVersion
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from .. import __version__
from ..paths import resource_dir

ICON_SIZES = (16, 32, 48, 64, 128, 256)
LICENSE = "MIT"

# (shown name, module, licence): the libraries prvgui imports when it runs, i.e. the
# ``dependencies`` of pyproject.toml; test-only packages (the peer accountants, mpmath) are not here
RUNTIME_LIBRARIES: tuple[tuple[str, str, str], ...] = (
    ("NumPy", "numpy", "BSD"),
    ("SciPy", "scipy", "BSD"),
    ("PySide6", "PySide6", "LGPLv3"),
    ("pyqtgraph", "pyqtgraph", "MIT"),
)

SUMMARY = (
    "prvgui is a calculator for differential-privacy accounting. Build a composition of "
    "mechanisms (Gaussian, Laplace, randomized response, pure and approximate DP, the "
    "Poisson-subsampled Gaussian step of DP-SGD, subsampled Laplace) and it reports epsilon at "
    "your delta, and delta at your epsilon, as a <b>certified</b> lower and upper bound: the true "
    "value lies between them, so the upper one is safe to publish. The older accountants (RDP, "
    "GDP, basic, advanced and optimal composition) are shown beside it for comparison."
)

# (what it is used for, citation, link)
REFERENCES: tuple[tuple[str, str, str], ...] = (
    ("PRV accountant: the certified bounds",
     "S. Gopi, Y. T. Lee, L. Wutschitz. Numerical Composition of Differential Privacy. "
     "NeurIPS 2021.", "https://arxiv.org/abs/2106.02848"),
    ("Rényi DP",
     "I. Mironov. Rényi Differential Privacy. IEEE CSF 2017.",
     "https://arxiv.org/abs/1702.07476"),
    ("RDP of the sampled Gaussian",
     "I. Mironov, K. Talwar, L. Zhang. Rényi Differential Privacy of the Sampled Gaussian "
     "Mechanism. 2019.", "https://arxiv.org/abs/1908.10530"),
    ("Gaussian DP",
     "J. Dong, A. Roth, W. J. Su. Gaussian Differential Privacy. Journal of the Royal "
     "Statistical Society, Series B, 2022 (arXiv 2019).", "https://arxiv.org/abs/1905.02383"),
    ("GDP central limit theorem for DP-SGD",
     "Z. Bu, J. Dong, Q. Long, W. J. Su. Deep Learning with Gaussian Differential Privacy. "
     "Harvard Data Science Review, 2020.", "https://arxiv.org/abs/1911.11607"),
    ("Advanced composition",
     "C. Dwork, G. N. Rothblum, S. Vadhan. Boosting and Differential Privacy. IEEE FOCS 2010.",
     "https://doi.org/10.1109/FOCS.2010.12"),
    ("Optimal composition",
     "P. Kairouz, S. Oh, P. Viswanath. The Composition Theorem for Differential Privacy. "
     "ICML 2015.", "https://arxiv.org/abs/1311.0776"),
)


def icon_files() -> list:
    """The PNG icon files that exist, smallest first."""
    icons = resource_dir() / "icons"
    return [p for p in (icons / f"prvgui-{s}.png" for s in ICON_SIZES) if p.is_file()]


def app_icon() -> QIcon:
    """The application icon; a null QIcon if no icon file is found."""
    pngs = icon_files()
    if pngs:
        icon = QIcon()
        for p in pngs:
            s = int(p.stem.rsplit("-", 1)[1])
            icon.addFile(str(p), QSize(s, s))
        return icon
    svg = resource_dir() / "icons" / "prvgui.svg"
    return QIcon(str(svg)) if svg.is_file() else QIcon()


def library_versions() -> list[tuple[str, str, str]]:
    """(name, version, licence) of each runtime library; "version unknown" if it cannot be read."""
    out = []
    for name, module, licence in RUNTIME_LIBRARIES:
        try:
            version = str(getattr(importlib.import_module(module), "__version__", "") or "version unknown")
        except ImportError:  # cannot happen in a working install; the About box still opens
            version = "not found"
        out.append((name, version, licence))
    return out


def about_html() -> str:
    refs = "".join(
        f"<li><i>{html.escape(use)}</i>: {html.escape(cite)} "
        f"<a href=\"{html.escape(url)}\">{html.escape(url.split('//', 1)[1])}</a></li>"
        for use, cite, url in REFERENCES)
    return (
        f"<p>{SUMMARY}</p>"
        f"<p><b>Licence:</b> {LICENSE}. Free to use, copy, modify and distribute, without warranty.</p>"
        f"<p><b>Methods</b> (please cite the ones behind the numbers you publish):</p><ul>{refs}</ul>")


def libraries_text() -> str:
    """One sentence: the Python and Qt versions and each runtime library with its version."""
    libs = ", ".join(f"{name} {version} ({licence})" for name, version, licence in library_versions())
    return f"Runs on Python {platform.python_version()} and Qt {qVersion()}, with these libraries: {libs}."


class AboutDialog(QDialog):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("about")
        self.setWindowTitle("About prvgui")
        icon = app_icon()
        if not icon.isNull():
            self.setWindowIcon(icon)
        self.icon_label = QLabel()
        self.icon_label.setAlignment(Qt.AlignmentFlag.AlignTop)
        if not icon.isNull():
            self.icon_label.setPixmap(icon.pixmap(QSize(96, 96)))
        self.title = QLabel(f"<h2>prvgui {html.escape(__version__)}</h2>"
                            "<p>Certified differential-privacy accounting</p>")
        self.title.setTextFormat(Qt.TextFormat.RichText)
        head = QHBoxLayout()
        head.addWidget(self.icon_label)
        head.addWidget(self.title, 1)
        self.body = QLabel(about_html())
        self.body.setObjectName("about_body")
        self.body.setTextFormat(Qt.TextFormat.RichText)
        self.body.setWordWrap(True)
        self.body.setOpenExternalLinks(True)
        self.body.setTextInteractionFlags(Qt.TextInteractionFlag.TextBrowserInteraction)
        self.libraries = QLabel(libraries_text())
        self.libraries.setObjectName("about_libraries")
        self.libraries.setTextFormat(Qt.TextFormat.PlainText)
        self.libraries.setWordWrap(True)
        self.libraries.setStyleSheet("color: gray;")
        self.libraries.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        buttons.accepted.connect(self.accept)
        layout = QVBoxLayout(self)
        layout.addLayout(head)
        layout.addWidget(self.body)
        layout.addWidget(self.libraries)
        layout.addWidget(buttons)
        self.setMinimumWidth(600)


def show_about(parent: QWidget | None = None) -> int:
    """Open the About dialog modally; returns the dialog's result."""
    return AboutDialog(parent).exec()
