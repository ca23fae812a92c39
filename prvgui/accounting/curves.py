"""Curves from the certified profiles: tradeoff function, composed PLD, epsilon vs count.

Tradeoff (f-DP; Dong, Roth, Su 2019): for one order of the pair,
T(alpha) = sup_{eps in R} max(0, 1 - delta(eps) - e^eps alpha). On a finite eps
grid eps_0 < ... < eps_m:

* lower: sup over the grid with delta replaced by its upper bound (a sup over
  a subset of valid lower bounds is a lower bound);
* upper: for eps in [eps_i, eps_{i+1}], 1 - delta(eps) - e^eps alpha <=
  1 - delta_low(eps_{i+1}) - e^{eps_i} alpha; below eps_0 the term is at most
  e^{eps_0} (as delta(eps) >= 1 - e^eps), above eps_m at most 1 - e^{eps_m} alpha.

Under add/remove adjacency the curve shown is the pointwise minimum over the two
orders (both pairs occur among neighbouring datasets).

Epsilon versus the count of one row: the mesh is fixed for the largest count,
each row is transformed once, the other rows' product is formed once, and each
count costs one power of a band-limited spectrum and one (decimated) inverse
transform. Every point carries its own error budget (Hoeffding with its own K,
its own Chernoff window).
"""
from __future__ import annotations

import math
from typing import Callable, Sequence

import numpy as np

from .band import band_logs, low_dft, product_error
from .compose import (
    INTERRUPTIBLE_SIZE,
    MAX_COARSENING,
    Cancelled,
    GridTooLarge,
    PreparedRow,
    choose_band,
    choose_window,
    fft_len,
    fft_rel_error,
    finish,
    grid_exhausted,
    inf_mass_of,
    interruptible,
    row_spectrum,
)
from .discretize import COARSE_SHARE, coarse_plan, coupling_failure, discretize
from .mechanisms import Row
from .profile import Bounds, CertifiedProfile


def tradeoff_bounds(prof: CertifiedProfile, alpha: np.ndarray, n_eps: int = 4001):
    """(lower, estimate, upper) of beta(alpha) for one order of the pair."""
    alpha = np.asarray(alpha, dtype=float)
    top = float(min(max(abs(prof.y[0]), abs(prof.y[-1])) + 2 * prof.t + 1.0, 60.0))
    eps = np.linspace(-top, top, n_eps)
    d_low, d_est, d_up = prof.delta(eps)
    ex = np.exp(eps)
    lower = np.max(1.0 - d_up[:, None] - ex[:, None] * alpha[None, :], axis=0)
    est = np.max(1.0 - d_est[:, None] - ex[:, None] * alpha[None, :], axis=0)
    up_in = np.max(1.0 - d_low[1:, None] - ex[:-1, None] * alpha[None, :], axis=0)
    upper = np.maximum.reduce([up_in, np.full(alpha.shape, math.exp(eps[0])), 1.0 - ex[-1] * alpha])
    cap = 1.0 - alpha
    lower = np.clip(lower, 0.0, cap)
    upper = np.clip(upper, 0.0, cap)
    est = np.clip(est, lower, upper)
    return lower, est, upper


def pld_for_plot(prof: CertifiedProfile, max_points: int = 2000):
    """(loss values, density, mass at +inf) of the composed PLD, trimmed and binned."""
    r, y, h = prof.c.pmf, prof.y, prof.c.h
    cdf = np.cumsum(r)
    total = cdf[-1] if cdf.size else 0.0
    if total <= 0:
        return np.zeros(0), np.zeros(0), prof.p_inf
    i0 = int(np.searchsorted(cdf, 1e-9 * total))
    i1 = int(np.searchsorted(cdf, (1 - 1e-9) * total)) + 1
    r, y = r[i0:i1], y[i0:i1]
    b = max(1, -(-r.size // max_points))
    pad = (-r.size) % b
    mass = np.concatenate([r, np.zeros(pad)]).reshape(-1, b).sum(axis=1)
    centres = y[0] + (np.arange(mass.size) * b + 0.5 * (b - 1)) * h
    dens = mass / (b * h) * (1.0 - prof.p_inf)
    return centres, dens, prof.p_inf


def check_counts(counts: Sequence[int], limit: int = 200) -> np.ndarray:
    arr = np.asarray(counts)
    if arr.ndim != 1 or arr.size == 0 or arr.size > limit:
        raise ValueError(f"counts must be a list of 1 to {limit} integers, got {arr.size} values")
    if not np.issubdtype(arr.dtype, np.integer):
        if not np.all(np.isfinite(arr)) or np.any(arr != np.round(arr)):
            raise ValueError("counts must be integers")
        arr = arr.astype(np.int64)
    if np.any(arr < 0):
        raise ValueError(f"counts must be >= 0, got {int(arr.min())}")
    return np.unique(arr)


def epsilon_vs_count(acc, row_index: int, counts: Sequence[int], delta: float,
                     progress: Callable[[float], None] | None = None) -> tuple[np.ndarray, list[Bounds]]:
    """Certified epsilon(delta) for each count of row ``row_index``, others fixed."""
    from .accountant import AGG_FRACTION, T_FRACTION, check_delta

    delta = check_delta(delta)
    if not 0 <= row_index < len(acc.rows):
        raise ValueError(f"row index must be in [0, {len(acc.rows) - 1}], got {row_index}")
    cs = check_counts(counts)
    level = acc._level(delta)
    # counts within a factor of 4 share a mesh (the finest one their largest count needs)
    top = max(int(cs.max()), 1)
    levels = np.minimum(np.floor(np.log(top / np.maximum(cs, 1)) / math.log(4.0)), 12).astype(int)
    groups = [np.flatnonzero(levels == lv) for lv in np.unique(levels)]
    per_order = []
    n_jobs = len(acc.orders) * len(groups)
    for oi, order in enumerate(acc.orders):
        res: list[Bounds] = [Bounds(0.0, 0.0, 0.0)] * cs.size
        for gi, idx in enumerate(groups):
            job = oi * len(groups) + gi
            part = _order_curve(acc, order, row_index, cs[idx], delta, level,
                                T_FRACTION * acc.eps_error, AGG_FRACTION * acc.eps_error,
                                None if progress is None else
                                (lambda f, job=job: progress((job + f) / n_jobs)))
            for i, b in zip(idx, part):
                res[i] = b
        per_order.append(res)
    out = [Bounds(max(p[i].lower for p in per_order), max(p[i].estimate for p in per_order),
                  max(p[i].upper for p in per_order)) for i in range(cs.size)]
    return cs, out


def _order_curve(acc, order, j, cs, delta, level, t, agg_max, progress) -> list[Bounds]:
    """One order of the pair; when the grid would exceed the accountant's limit, the mesh
    coarsens (t and the aggregation grow together) and the brackets widen, as in Accountant."""
    scale = 1.0
    while True:
        try:
            return interruptible(_order_curve_at, acc, order, j, cs, delta, level, scale * t,
                                 scale * agg_max, progress, cancel=acc.cancel,
                                 size=INTERRUPTIBLE_SIZE)
        except GridTooLarge as exc:
            scale *= max(exc.n / (0.9 * acc.n_max), 1.05)
            if scale > MAX_COARSENING:
                raise grid_exhausted(exc.width, scale * acc.eps_error, acc.n_max) from None
            acc.eps_error_used = max(acc.eps_error_used, scale * acc.eps_error)


def _order_curve_at(acc, order, j, cs, delta, level, t, agg_max, progress) -> list[Bounds]:
    rows: list[Row] = acc.rows
    blatant_other = any(r.count > 0 and r.mechanism.is_blatant() for i, r in enumerate(rows) if i != j)
    inf = Bounds(math.inf, math.inf, math.inf)
    if blatant_other:
        return [inf] * cs.size
    mech_j = rows[j].mechanism
    others = [(r.mechanism.prv(order), r.count) for i, r in enumerate(rows)
              if i != j and r.count > 0 and not r.mechanism.is_trivial()]
    j_trivial = mech_j.is_trivial()
    if mech_j.is_blatant():
        base = _order_curve_plain(acc, order, j, delta, level) if others else \
            Bounds(0.0, 0.0, 0.0)
        return [inf if c > 0 else base for c in cs]
    c_max = 0 if j_trivial else int(cs.max())
    k_max = sum(k for _, k in others) + c_max
    if k_max == 0:
        return [Bounds(0.0, 0.0, 0.0)] * cs.size
    e4 = level / 4
    h = (1 - COARSE_SHARE) * t * math.sqrt(2.0 / (k_max * math.log(1.0 / e4)))
    plan = coarse_plan(t, h, k_max, level)
    disc_o = [(discretize(p, h, e4 * p.finite_mass / (2.0 * k_max), acc.n_max, plan), k)
              for p, k in others]
    prep_o = [(PreparedRow(d), k) for d, k in disc_o]
    dj = None
    if not j_trivial:
        pj = mech_j.prv(order)
        dj = discretize(pj, h, e4 * pj.finite_mass / (2.0 * k_max), acc.n_max, plan)
        prep_j = PreparedRow(dj)
    windows = []
    for c in cs:
        rows_c = list(prep_o) + ([(prep_j, int(c))] if dj is not None and c > 0 else [])
        windows.append(choose_window(rows_c, e4) if rows_c else (0.0, 0.0, 0.0))
    width = max(hi - lo for lo, hi, _ in windows)
    n = fft_len(int(math.ceil(width / h)) + 4, h, agg_max)
    # the widest band is that of the smallest count (0: the other rows alone); it serves all
    c_min = int(cs.min()) if dj is not None else 0
    band_rows = disc_o + ([(dj, c_min)] if c_min > 0 else [])
    band = choose_band(band_rows, n, h, agg_max, acc.n_max)
    use_band = band is not None
    if not use_band and n > acc.n_max:
        raise GridTooLarge(n, acc.n_max, width)
    base_spec, n0_o, k_o, up_o, val_o, fp_o = None, 0, 0, 0.0, 0.0, 0.0
    for d, k in disc_o:
        if use_band:
            x, b, e = low_dft(d, n, band)
            up, val, f = band_logs(x, e)
            up_o, val_o, fp_o = up_o + k * up, val_o + k * val, fp_o + k * f
        else:
            x, b = interruptible(row_spectrum, d, n, cancel=acc.cancel, size=n)
        n0_o += k * b
        k_o += k
        p = _power_cached(_polar(x), k)
        base_spec = p if base_spec is None else base_spec * p
        _check(acc)
    polar_j, neg_cstar, up_j, val_j, fp_j = None, None, 0.0, 0.0, 0.0
    if dj is not None:
        if use_band:
            spec_j, base_j, e_j = low_dft(dj, n, band)
            up_j, val_j, fp_j = band_logs(spec_j, e_j)
        else:
            spec_j, base_j = interruptible(row_spectrum, dj, n, cancel=acc.cancel, size=n)
        polar_j = _polar(spec_j)
        del spec_j
        # band of count c: frequencies m with c log|X_j| + log|B| > -700 lie below
        # the first m where the suffix maximum of c*(m) = (-700 - log|B|) / log|X_j| is <= c
        log_b = np.zeros(polar_j[0].size) if base_spec is None else \
            np.log(np.maximum(np.abs(base_spec), 1e-320))
        with np.errstate(divide="ignore", invalid="ignore"):
            cs_m = np.where(polar_j[0] < 0, (-700.0 - log_b) / polar_j[0], np.inf)
        cs_m[log_b <= -700.0] = -np.inf
        neg_cstar = -np.maximum.accumulate(cs_m[::-1])[::-1]  # nondecreasing
    out: list[Bounds] = []
    for idx, c in enumerate(cs):
        _check(acc)
        c = int(c) if dj is not None else 0
        parts = disc_o + ([(dj, c)] if c > 0 else [])
        if not parts:
            out.append(Bounds(0.0, 0.0, 0.0))
            continue
        spec = base_spec
        if c > 0:
            band_c = max(1, int(np.searchsorted(neg_cstar, -c, side="left")))
            pj_c = _power_cached((polar_j[0][:band_c], polar_j[1][:band_c]), c)
            spec = pj_c if spec is None else spec[:band_c] * pj_c
        n0 = n0_o + (c * base_j if c > 0 else 0)
        k_c = k_o + c
        if use_band:
            coef_err = product_error(np.broadcast_to(up_o + c * up_j, (band,)), val_o + c * val_j,
                                     spec, fp_o + c * fp_j)
        else:
            coef_err = fft_rel_error(k_c, n)
        offset = math.fsum(k * d.shift for d, k in parts)
        lo, hi, werr = windows[idx]
        n_lo = math.floor((lo - offset) / h) - 1
        comp = finish(spec, n, n0, n_lo, h, offset, inf_mass_of(parts), coef_err, werr, agg_max)
        comp = comp.trimmed(lo, hi)  # the grid serves the largest count; werr covers the rest
        out.append(CertifiedProfile(comp, t, coupling_failure(parts, t, h)[0], parts).epsilon(delta))
        if progress is not None:
            progress((idx + 1) / cs.size)
    return out


def _order_curve_plain(acc, order, j, delta, level) -> Bounds:
    """Epsilon of the composition without row j (all other rows are not blatant)."""
    from .accountant import Accountant
    sub = Accountant([r for i, r in enumerate(acc.rows) if i != j],
                     acc.eps_error, cancel=acc.cancel, n_max=acc.n_max)
    side = sub._side(order, level)
    return side.profile.epsilon(delta) if side.profile is not None else Bounds(0.0, 0.0, 0.0)


def _polar(spec: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    with np.errstate(divide="ignore"):
        return np.log(np.abs(spec)), np.angle(spec)


def _power_cached(polar: tuple[np.ndarray, np.ndarray], k: int) -> np.ndarray:
    logabs, ang = polar
    scaled = logabs * k
    keep = np.flatnonzero(scaled > -700.0)
    out = np.zeros(logabs.size, dtype=complex)
    out[keep] = np.exp(scaled[keep] + 1j * (k * ang[keep]))
    return out


def _check(acc) -> None:
    if acc.cancel is not None and acc.cancel():
        raise Cancelled("computation cancelled")
