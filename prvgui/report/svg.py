"""A small SVG line-plot writer: axes with ticks (linear or log), lines with gaps, shaded bands,
vertical marker lines, stems on a right-hand axis, a legend. Pure Python, no Qt; the output is
one ``<svg>`` element that links nothing outside itself.

Points that cannot be drawn (not finite, at or below the floor of a log axis) break a line into
pieces rather than being joined across. Numbers are written with a fixed number of decimals, so
the same figure always gives the same text.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from html import escape

import numpy as np

from .numbers import fmt

FONT = "DejaVu Sans, Arial, Helvetica, sans-serif"


@dataclass(frozen=True)
class Series:
    label: str
    x: np.ndarray
    y: np.ndarray
    color: str
    width: float = 1.6
    dash: str = ""  # an SVG stroke-dasharray, e.g. "6 4"


@dataclass(frozen=True)
class Band:
    x: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    color: str
    opacity: float = 0.22


@dataclass(frozen=True)
class Marker:
    """A vertical line at ``x`` with a label at its top, or (``horizontal``) a horizontal line at
    height ``x`` with a label at its right end."""

    x: float
    label: str
    color: str
    horizontal: bool = False


@dataclass(frozen=True)
class Stems:
    """Point masses drawn as stems against a linear right-hand axis."""

    label: str
    x: np.ndarray
    mass: np.ndarray
    color: str
    axis_label: str


@dataclass(frozen=True)
class Figure:
    title: str
    x_label: str
    y_label: str
    series: tuple[Series, ...] = ()
    bands: tuple[Band, ...] = ()
    markers: tuple[Marker, ...] = ()
    stems: Stems | None = None
    log_x: bool = False
    log_y: bool = False
    #: on a log y axis, values below this are not drawn
    floor: float = 0.0
    caption: str = ""


#: the plot's size without its legend, which goes below the axes in two columns (it never
#: covers a curve)
W, H = 640, 400
LEFT, RIGHT, TOP, BOTTOM = 70, 20, 34, 50
LEGEND_ROW = 15


def _legend_items(fig: Figure) -> list[tuple[str, str, str, bool]]:
    items = [(s.label, s.color, s.dash, False) for s in fig.series if s.label]
    return items + ([(fig.stems.label, fig.stems.color, "", True)] if fig.stems is not None else [])


def size(fig: Figure, width: int = W) -> tuple[int, int]:
    """(width, height) of the figure's SVG: the plot and the legend rows below it."""
    rows = math.ceil(len(_legend_items(fig)) / 2)
    return width, H + (rows * LEGEND_ROW + 6 if rows else 0)


def _usable(v: np.ndarray, log: bool, floor: float = 0.0) -> np.ndarray:
    v = np.asarray(v, dtype=float)
    ok = np.isfinite(v)
    if log:
        ok &= v > max(floor, 0.0)
    return ok


def _range(values: list[np.ndarray], log: bool) -> tuple[float, float]:
    parts = [v for v in values if v.size]
    data = np.concatenate(parts) if parts else np.zeros(0)
    if data.size == 0:
        return 0.0, 1.0
    lo, hi = float(data.min()), float(data.max())
    if log:
        lo, hi = math.log10(lo), math.log10(hi)
        if hi - lo < 1e-9:
            lo, hi = lo - 0.5, hi + 0.5
        return lo, hi
    if hi - lo < 1e-12 * max(1.0, abs(hi)):
        lo, hi = lo - 0.5, hi + 0.5
    pad = 0.03 * (hi - lo)
    return (0.0 if lo >= 0 and lo - pad < 0 else lo - pad), hi + pad


def _nice_ticks(lo: float, hi: float, n: int = 6) -> list[float]:
    span = hi - lo
    raw = span / max(n, 1)
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    first = math.ceil(lo / step - 1e-9) * step
    out, t = [], first
    while t <= hi + 1e-9 * step:
        out.append(0.0 if abs(t) < 1e-12 * step else t)
        t += step
    return out


def _log_ticks(lo: float, hi: float) -> list[float]:
    """Decades (exponents) within [lo, hi], thinned to at most 8."""
    first, last = math.ceil(lo - 1e-9), math.floor(hi + 1e-9)
    decades = list(range(first, last + 1))
    every = max(1, math.ceil(len(decades) / 8))
    return [float(d) for d in decades if d % every == 0] or [float(first)]


def _tick_text(v: float, log: bool) -> str:
    if log:
        e = int(round(v))
        return {0: "1", 1: "10"}.get(e, f"1e{e}")
    return fmt(v, 4)


def _n(v: float) -> str:
    return f"{v:.2f}"


class _Frame:
    def __init__(self, fig: Figure, width: int, height: int, right: int) -> None:
        self.fig = fig
        self.x0, self.x1 = LEFT, width - right
        self.y0, self.y1 = TOP, height - BOTTOM
        xs, ys = [], []
        for s in fig.series:
            ok = _usable(s.x, fig.log_x) & _usable(s.y, fig.log_y, fig.floor)
            xs.append(np.asarray(s.x, float)[ok])
            ys.append(np.asarray(s.y, float)[ok])
        for b in fig.bands:
            ok = _usable(b.x, fig.log_x) & _usable(b.upper, fig.log_y, fig.floor)
            xs.append(np.asarray(b.x, float)[ok])
        if fig.stems is not None:
            xs.append(np.asarray(fig.stems.x, float))
        self.xr = _range(xs, fig.log_x)
        if not fig.log_x and any(x.size for x in xs):  # the x axis spans the data, no padding
            lo, hi = min(x.min() for x in xs if x.size), max(x.max() for x in xs if x.size)
            if hi > lo:
                self.xr = (float(lo), float(hi))
        self.yr = _range(ys, fig.log_y)
        #: nothing finite to draw (e.g. an unbounded ε): the plot says so
        self.empty = not any(y.size for y in ys) and fig.stems is None

    def px(self, x: np.ndarray) -> np.ndarray:
        x = np.log10(np.maximum(x, 1e-300)) if self.fig.log_x else np.asarray(x, float)
        return self.x0 + (x - self.xr[0]) / (self.xr[1] - self.xr[0]) * (self.x1 - self.x0)

    def py(self, y: np.ndarray) -> np.ndarray:
        y = np.log10(np.maximum(y, 1e-300)) if self.fig.log_y else np.asarray(y, float)
        return self.y1 - (y - self.yr[0]) / (self.yr[1] - self.yr[0]) * (self.y1 - self.y0)


def _polyline(xp: np.ndarray, yp: np.ndarray, ok: np.ndarray) -> list[str]:
    """One ``points`` string per run of drawable points."""
    out, run = [], []
    for x, y, good in zip(xp, yp, ok):
        if good:
            run.append(f"{_n(x)},{_n(y)}")
        elif run:
            out.append(" ".join(run))
            run = []
    if run:
        out.append(" ".join(run))
    return out


def render(fig: Figure, uid: str, width: int = W) -> str:
    """The figure as one ``<svg>`` element; ``uid`` makes its clip-path id unique in a page."""
    right = 64 if fig.stems is not None else RIGHT
    height = size(fig, width)[1]
    f = _Frame(fig, width, H, right)
    clip = f"clip-{uid}"
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" font-family="{FONT}" font-size="11">',
           f'<title>{escape(fig.title)}</title>',
           f'<defs><clipPath id="{clip}"><rect x="{f.x0}" y="{f.y0}" width="{f.x1 - f.x0}" '
           f'height="{f.y1 - f.y0}"/></clipPath></defs>',
           f'<rect x="0" y="0" width="{width}" height="{height}" fill="white"/>',
           f'<text x="{width / 2:.1f}" y="16" text-anchor="middle" font-size="13" font-weight="bold">'
           f'{escape(fig.title)}</text>']
    if fig.caption:
        out.append(f'<text x="{width / 2:.1f}" y="29" text-anchor="middle" fill="#555" font-size="10">'
                   f'{escape(fig.caption)}</text>')
    out += _axes(f)
    out.append(f'<g clip-path="url(#{clip})">')
    for b in fig.bands:
        out += _band(f, b)
    if fig.stems is not None:
        out += _stems(f, fig.stems)
    for s in fig.series:
        ok = _usable(s.x, fig.log_x) & _usable(s.y, fig.log_y, fig.floor)
        xp, yp = f.px(np.asarray(s.x, float)), f.py(np.asarray(s.y, float))
        dash = f' stroke-dasharray="{s.dash}"' if s.dash else ""
        for pts in _polyline(xp, yp, ok):
            out.append(f'<polyline fill="none" stroke="{s.color}" stroke-width="{s.width}"{dash} '
                       f'stroke-linejoin="round" points="{pts}"/>')
    labels = []
    for m in fig.markers:
        if m.x is None or not math.isfinite(m.x) or (m.x <= 0 and (fig.log_y if m.horizontal else fig.log_x)):
            continue
        if m.horizontal:
            y = float(f.py(np.array([m.x]))[0])
            if f.y0 <= y <= f.y1:
                out.append(f'<line x1="{f.x0}" y1="{_n(y)}" x2="{f.x1}" y2="{_n(y)}" stroke="{m.color}" '
                           f'stroke-width="1.2" stroke-dasharray="4 3"/>')
                labels.append(f'<text x="{f.x1 - 4}" y="{_n(y - 4)}" text-anchor="end" fill="{m.color}" '
                              f'font-size="10">{escape(m.label)}</text>')
            continue
        x = float(f.px(np.array([m.x]))[0])
        if f.x0 <= x <= f.x1:
            out.append(f'<line x1="{_n(x)}" y1="{f.y0}" x2="{_n(x)}" y2="{f.y1}" stroke="{m.color}" '
                       f'stroke-width="1.2" stroke-dasharray="4 3"/>')
            anchor = "end" if x > (f.x0 + f.x1) / 2 else "start"
            dx = -4 if anchor == "end" else 4
            labels.append(f'<text x="{_n(x + dx)}" y="{f.y0 + 12}" text-anchor="{anchor}" fill="{m.color}" '
                          f'font-size="10">{escape(m.label)}</text>')
    out.append("</g>")
    out += labels
    if f.empty:
        out.append(f'<text x="{(f.x0 + f.x1) / 2:.1f}" y="{(f.y0 + f.y1) / 2:.1f}" text-anchor="middle" '
                   'font-size="12" fill="#555">No finite values to draw</text>')
    out += _legend(f)
    out.append("</svg>")
    return "\n".join(out)


def _axes(f: _Frame) -> list[str]:
    fig = f.fig
    out = []
    xt = _log_ticks(*f.xr) if fig.log_x else _nice_ticks(*f.xr)
    yt = _log_ticks(*f.yr) if fig.log_y else _nice_ticks(*f.yr)
    for t in xt:
        x = f.x0 + (t - f.xr[0]) / (f.xr[1] - f.xr[0]) * (f.x1 - f.x0)
        out.append(f'<line x1="{_n(x)}" y1="{f.y0}" x2="{_n(x)}" y2="{f.y1}" stroke="#e4e4e4"/>')
        out.append(f'<line x1="{_n(x)}" y1="{f.y1}" x2="{_n(x)}" y2="{f.y1 + 4}" stroke="#333"/>')
        out.append(f'<text x="{_n(x)}" y="{f.y1 + 16}" text-anchor="middle">{escape(_tick_text(t, fig.log_x))}</text>')
    for t in yt:
        y = f.y1 - (t - f.yr[0]) / (f.yr[1] - f.yr[0]) * (f.y1 - f.y0)
        out.append(f'<line x1="{f.x0}" y1="{_n(y)}" x2="{f.x1}" y2="{_n(y)}" stroke="#e4e4e4"/>')
        out.append(f'<line x1="{f.x0 - 4}" y1="{_n(y)}" x2="{f.x0}" y2="{_n(y)}" stroke="#333"/>')
        out.append(f'<text x="{f.x0 - 6}" y="{_n(y + 4)}" text-anchor="end">{escape(_tick_text(t, fig.log_y))}</text>')
    out.append(f'<text x="{(f.x0 + f.x1) / 2:.1f}" y="{f.y1 + 36}" text-anchor="middle" font-size="12">'
               f'{escape(fig.x_label)}</text>')
    cy = (f.y0 + f.y1) / 2
    out.append(f'<text x="16" y="{cy:.1f}" text-anchor="middle" font-size="12" '
               f'transform="rotate(-90 16 {cy:.1f})">{escape(fig.y_label)}</text>')
    out.append(f'<rect x="{f.x0}" y="{f.y0}" width="{f.x1 - f.x0}" height="{f.y1 - f.y0}" fill="none" '
               f'stroke="#333" stroke-width="1"/>')  # over the grid lines at the edges
    return out


def _band(f: _Frame, b: Band) -> list[str]:
    fig = f.fig
    x, lo, up = (np.asarray(v, float) for v in (b.x, b.lower, b.upper))
    ok = _usable(x, fig.log_x) & _usable(up, fig.log_y, fig.floor) & np.isfinite(lo)
    if fig.log_y:  # a lower end below the floor is drawn at the bottom of the axis
        lo = np.where(_usable(lo, True, fig.floor), lo, 10 ** f.yr[0])
    out = []
    idx = np.flatnonzero(ok)
    if idx.size < 2:
        return out
    runs = np.split(idx, np.flatnonzero(np.diff(idx) > 1) + 1)
    for r in runs:
        if r.size < 2:
            continue
        xp = f.px(x[r])
        top = [f"{_n(a)},{_n(c)}" for a, c in zip(xp, f.py(up[r]))]
        bottom = [f"{_n(a)},{_n(c)}" for a, c in zip(xp[::-1], f.py(lo[r])[::-1])]
        out.append(f'<polygon fill="{b.color}" fill-opacity="{b.opacity}" stroke="none" '
                   f'points="{" ".join(top + bottom)}"/>')
    return out


def _stems(f: _Frame, s: Stems) -> list[str]:
    x, m = np.asarray(s.x, float), np.asarray(s.mass, float)
    top = float(m.max()) * 1.08 if m.size and m.max() > 0 else 1.0
    xp = f.px(x)
    out = []
    for a, mass in zip(xp, m):
        y = f.y1 - mass / top * (f.y1 - f.y0)
        out.append(f'<line x1="{_n(a)}" y1="{f.y1}" x2="{_n(a)}" y2="{_n(y)}" stroke="{s.color}" stroke-width="2"/>')
        out.append(f'<circle cx="{_n(a)}" cy="{_n(y)}" r="3" fill="{s.color}"/>')
    # the right-hand axis for the masses (drawn outside the clip by the caller's order: fine inside)
    for t in _nice_ticks(0.0, top, 5):
        y = f.y1 - t / top * (f.y1 - f.y0)
        out.append(f'<text x="{f.x1 + 6}" y="{_n(y + 4)}" fill="{s.color}">{escape(fmt(t, 3))}</text>')
    return out


def _legend(f: _Frame) -> list[str]:
    """The legend below the axes, two entries a row."""
    fig = f.fig
    items = _legend_items(fig)
    out = ['<g font-size="10">'] if items else []
    half = (f.x1 - f.x0) / 2
    for i, (text, color, dash, stem) in enumerate(items):
        x = f.x0 + (i % 2) * half
        yy = H + 4 + LEGEND_ROW * (i // 2)
        if stem:
            out.append(f'<line x1="{_n(x + 11)}" y1="{_n(yy + 4)}" x2="{_n(x + 11)}" y2="{_n(yy - 5)}" '
                       f'stroke="{color}" stroke-width="2"/>')
        else:
            d = f' stroke-dasharray="{dash}"' if dash else ""
            out.append(f'<line x1="{_n(x)}" y1="{_n(yy)}" x2="{_n(x + 22)}" y2="{_n(yy)}" stroke="{color}" '
                       f'stroke-width="2"{d}/>')
        out.append(f'<text x="{_n(x + 28)}" y="{_n(yy + 4)}">{escape(text)}</text>')
    if items:
        out.append("</g>")
    if fig.stems is not None:
        cy = (f.y0 + f.y1) / 2
        xr = f.x1 + 50
        out.append(f'<text x="{xr}" y="{cy:.1f}" text-anchor="middle" font-size="11" fill="{fig.stems.color}" '
                   f'transform="rotate(90 {xr} {cy:.1f})">{escape(fig.stems.axis_label)}</text>')
    return out
