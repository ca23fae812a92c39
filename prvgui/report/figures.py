"""The window's four plots as report figures (svg.Figure), from a computed Result, with an
optional pinned result overlaid. No Qt.

As in the window: the privacy profile δ(ε) on a log δ axis (values below 1e-15 not drawn), the
certified band between the PRV lower and upper bounds with RDP and GDP beside them, the target
δ and the certified ε marked; the tradeoff function β(α) on linear axes with the (ε, δ)-DP
boundary at the target and perfect privacy; ε at the target δ against the count of one row on
a log count axis; the composed privacy-loss distribution (density of its continuous part, point
masses as stems on a right-hand axis). A pinned result adds its certified curve to each plot
in its own colour, named by its label ("A: PRV upper").
"""
from __future__ import annotations

import numpy as np

from ..engine.view_model import published
from ..document.export import setting_text
from .numbers import fmt, fmt_bound
from .svg import Band, Figure, Marker, Series, Stems

BLUE, ORANGE, GREEN, RED, GREY, PURPLE = "#1f5fbf", "#e07b00", "#2e8b3e", "#c62828", "#888888", "#7b3fa0"
STEM, PINNED = "#b0306a", "#00838f"
DASH, DOT, PIN_DASH = "6 4", "2 3", "8 3 2 3"
#: on the log δ axis of the profile, values below this are not drawn (as in the window)
PROFILE_FLOOR = 1e-15


def _col(curve, name: str):
    v = curve.columns.get(name) if curve is not None else None
    return None if v is None else np.asarray(v, dtype=float)


def _prv(curve, certified: str) -> tuple[list[Series], list[Band]]:
    x = np.asarray(curve.x, dtype=float)
    lo, es, up = _col(curve, "lower"), _col(curve, "estimate"), _col(curve, "upper")
    series = [Series("PRV upper" + (" (certified)" if certified == "upper" else ""), x, up, BLUE,
                     2.4 if certified == "upper" else 1.2),
              Series("PRV estimate", x, es, BLUE, 1.2, DASH),
              Series("PRV lower" + (" (certified)" if certified == "lower" else ""), x, lo, BLUE,
                     2.4 if certified == "lower" else 1.2)]
    return series, [Band(x, lo, up, BLUE)]


def _others(curve, names=("rdp", "gdp")) -> list[Series]:
    out = []
    x = np.asarray(curve.x, dtype=float)
    if "rdp" in names and _col(curve, "rdp") is not None:
        out.append(Series("RDP (upper bound)", x, _col(curve, "rdp"), ORANGE, 1.8))
    if "gdp" in names and _col(curve, "gdp") is not None:
        out.append(Series("GDP (approximation)", x, _col(curve, "gdp"), GREEN, 1.8, DASH))
    return out


def _pinned(pinned, attr: str, column: str, what: str) -> list[Series]:
    """The pinned result's certified curve, if it has this plot."""
    if pinned is None:
        return []
    label, res = pinned
    c = getattr(res, attr, None)
    if c is None or _col(c, column) is None:
        return []
    return [Series(f"{label}: {what}", np.asarray(c.x, float), _col(c, column), PINNED, 2.0, PIN_DASH)]


def profile_figure(result, pinned=None) -> Figure | None:
    c = result.profile
    if c is None:
        return None
    series, bands = _prv(c, "upper")
    series += _others(c) + _pinned(pinned, "profile", "upper", "PRV upper")
    delta = result.request.delta
    markers = [Marker(published(result), f"ε ≤ {fmt_bound(published(result))}", RED),
               Marker(delta, f"target δ = {fmt(delta)}", RED, horizontal=True)]
    return Figure("Privacy profile δ(ε)", "ε (nats)", "δ(ε)", tuple(series), tuple(bands), tuple(markers),
                  log_y=True, floor=PROFILE_FLOOR, caption=f"Guarantee for: {setting_text(result.request)}")


def tradeoff_figure(result, pinned=None) -> Figure | None:
    c = result.tradeoff
    if c is None:
        return None
    series, bands = _prv(c, "lower")
    series += _others(c, ("gdp",))
    region = _col(c, "region")
    if region is not None:
        series.append(Series(f"(ε = {fmt_bound(published(result))}, δ = {fmt(result.request.delta)})-DP "
                             "boundary", np.asarray(c.x, float), region, RED, 1.5, DASH))
    series.append(Series("perfect privacy (β = 1 − α)", np.array([0.0, 1.0]), np.array([1.0, 0.0]), GREY,
                         1.0, DOT))
    series += _pinned(pinned, "tradeoff", "lower", "PRV lower")
    return Figure("Tradeoff function β(α)", "α (false positive rate)", "β (false negative rate)",
                  tuple(series), tuple(bands), caption=f"Guarantee for: {setting_text(result.request)}")


def steps_figure(result, pinned=None) -> Figure | None:
    c = result.steps
    if c is None:
        return None
    series, bands = _prv(c, "upper")
    series += _others(c) + _pinned(pinned, "steps", "upper", "PRV upper")
    req = result.request
    j = req.steps_row
    count = req.rows[j].count if j is not None else None
    markers = [Marker(float(count), "this composition", RED)] if count else []
    return Figure(f"ε at δ = {fmt(req.delta)} versus steps", f"count of row {j + 1}" if j is not None else "count",
                  f"ε at δ = {fmt(req.delta)}", tuple(series), tuple(bands), tuple(markers), log_x=True,
                  caption=f"Guarantee for: {setting_text(req)}; the other rows fixed")


def pld_figure(result, pinned=None) -> Figure | None:
    c, atoms = result.pld, getattr(result, "pld_atoms", None)
    if c is None and atoms is None:
        return None
    series = []
    if c is not None and _col(c, "density") is not None:
        series.append(Series("density of the continuous part (left axis)", np.asarray(c.x, float),
                             _col(c, "density"), PURPLE, 1.8))
    series += _pinned(pinned, "pld", "density", "density")
    stems = None
    if atoms is not None:
        stems = Stems("point masses (right axis)", np.asarray(atoms.x, float),
                      np.asarray(atoms.columns["mass"], float), STEM, "probability mass (point masses)")
    markers = (Marker(published(result), f"ε ≤ {fmt_bound(published(result))}", RED),)
    note = f"P(L = ∞) = {fmt(result.pld_inf_mass)}"
    return Figure("Privacy loss distribution", "privacy loss L (nats)", "density (continuous part)",
                  tuple(series), (), markers, stems,
                  caption=f"Guarantee for: {setting_text(result.request)}; {note}")


def figures(result, pinned=None) -> list[Figure]:
    """The plots the window shows, in its tab order; ``pinned`` is (label, Result) or None."""
    out = [f(result, pinned) for f in (profile_figure, tradeoff_figure, steps_figure, pld_figure)]
    return [f for f in out if f is not None]
