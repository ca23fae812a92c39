"""Certified epsilon against the count of one row, the others fixed (the steps curve, and
calibration of a count).

The mesh is planned for the largest count (pipeline.py), each row is discretised and
transformed once, the other rows' product is formed once, and each count costs one power of a
band-limited spectrum and one (decimated) inverse transform. Every point is certified on its
own: its own Hoeffding term with its own K, its own Chernoff window (pipeline.certify). Counts
within a factor of 4 share a mesh (16 in a coarse screen: SPREAD, SCREEN_SPREAD), the finest one
their largest count needs. With two orders, the one a caller knows to be dominated is screened
by a coarse sweep first (``sweep``).
"""
from __future__ import annotations

import math
from typing import Callable, Sequence, cast

import numpy as np

from .band import band_logs, product_error
from .compose import (INTERRUPTIBLE_SIZE, band_dft, choose_band, fft_len, fft_rel_error, finish,
                      inf_mass_of, interruptible, row_spectrum)
from ..core.errors import GridTooLarge, check_cancel
from .discretize import DiscretePRV
from .packed import dense
from .pipeline import Plan, certify, coarsened, discretize_many, discretize_rows, make_plan, row_terms, unclassed
from ..core.values import Bounds
from ..pairs.prv import PRV
from .reuse import prepared
from .tree import TREE_MIN, as_row, band_counts, carried, compose_many
from .window import choose_windows

#: at most this many counts per sweep
MAX_COUNTS = 200


def check_counts(counts: Sequence[int], limit: int = MAX_COUNTS) -> np.ndarray:
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


#: counts within this factor of each other share a mesh (SCREEN_SPREAD in a coarse screen, whose
#: meshes cost little, so that fewer groups pay their fixed work: the rows' transforms, windows
#: and band proofs; a steps sweep of mixed.json and of dpsgd_mnist.json 19-28% faster)
SPREAD, SCREEN_SPREAD = 4.0, 16.0


def count_groups(counts: np.ndarray, spread: float = SPREAD, fixed: int = 0) -> list[np.ndarray]:
    """Indices of the counts that share a mesh: those whose totals (the count plus ``fixed``, the
    other rows' draws: the mesh is planned for the total, pipeline.make_plan) lie within a factor
    of ``spread`` of each other, counted down from the largest (at most 13 groups). (Grouped by
    the row's count alone, the window's steps curve of one row among 10^4 drawn once composed
    the 10^4 rows twice, for counts 1 to 2 and 3 to 10, on meshes 0.04% apart.)"""
    totals = np.maximum(counts + fixed, 1)
    top = int(totals.max())
    levels = np.minimum(np.floor(np.log(top / totals) / math.log(spread)), 12).astype(int)
    return [np.flatnonzero(levels == lv) for lv in np.unique(levels)]


def sweep(orders: Sequence[tuple[list[tuple[PRV, int]], PRV | None]], counts: np.ndarray, delta: float,
          level: float, eps_error: float, n_max: int, cancel: Callable[[], bool] | None = None,
          progress: Callable[[float], None] | None = None, screen: float = 0.0
          ) -> tuple[list[Bounds], float]:
    """Bounds on epsilon(delta) at each count (sorted, unique), the max over the orders of the
    pair; each order is (the other rows' PRVs with their counts, the varying row's PRV or None
    when it is trivial). Also returns the largest eps_error actually used (coarsened grids).

    ``screen`` > 1 with two orders: the second order is first swept ``screen`` times coarser,
    and swept in full only at the counts where its coarse upper end exceeds the first's lower
    end. Elsewhere the first order's bracket holds the max: e_2 <= coarse upper_2 <= lower_1 <= e_1."""
    if screen > 1 and len(orders) == 2:
        return _screened(orders, counts, delta, level, eps_error, n_max, cancel, progress, screen)
    per_order, used = [], eps_error
    for oi, order in enumerate(orders):
        part = None if progress is None else (lambda f, oi=oi: progress((oi + f) / len(orders)))
        res, u = _one_order(order, counts, delta, level, eps_error, n_max, cancel, part)
        per_order.append(res)
        used = max(used, u)
    return _max_over(per_order), used


def _max_over(per_order: list[list[Bounds]]) -> list[Bounds]:
    return [Bounds(max(p[i].lower for p in per_order), max(p[i].estimate for p in per_order),
                   max(p[i].upper for p in per_order)) for i in range(len(per_order[0]))]


def _one_order(order, counts: np.ndarray, delta: float, level: float, eps_error: float, n_max: int,
               cancel, progress, spread: float = SPREAD) -> tuple[list[Bounds], float]:
    """One order of the pair at every count, group by group (count_groups)."""
    others, prv_j = order
    groups = count_groups(counts, spread, sum(k for _, k in others))
    res: list[Bounds] = [Bounds(0.0, 0.0, 0.0)] * counts.size
    used = eps_error
    for gi, idx in enumerate(groups):
        part_progress = None if progress is None else (lambda f, gi=gi: progress((gi + f) / len(groups)))
        part, scale = _order_sweep(others, prv_j, counts[idx], delta, level, eps_error, n_max,
                                   cancel, part_progress)
        used = max(used, scale * eps_error)
        for i, b in zip(idx, part):
            res[i] = b
    return res, used


def _screened(orders, counts, delta, level, eps_error, n_max, cancel, progress, screen
              ) -> tuple[list[Bounds], float]:
    """``sweep`` with the second order screened (see there). One thread: a second one beside
    the first order's sweep saved little (both spend much of their time holding the GIL) and
    starved the GUI's thread of it."""
    def part(lo: float, hi: float):
        return None if progress is None else (lambda f: progress(lo + (hi - lo) * f))
    coarse, _ = _one_order(orders[1], counts, delta, level, screen * eps_error, n_max, cancel, part(0.0, 0.25),
                           SCREEN_SPREAD)
    first, used = _one_order(orders[0], counts, delta, level, eps_error, n_max, cancel, part(0.25, 0.9))
    need = np.flatnonzero([not c.upper <= f.lower for c, f in zip(coarse, first)])
    out = list(first)
    if need.size:
        second, used_2 = _one_order(orders[1], counts[need], delta, level, eps_error, n_max, cancel,
                                    part(0.9, 1.0))
        used = max(used, used_2)
        for i, b in zip(need, second):
            out[i] = _max_over([[out[i]], [b]])[0]
    if progress is not None:
        progress(1.0)
    return out, used


def _order_sweep(others, prv_j, cs, delta, level, eps_error, n_max, cancel, progress
                 ) -> tuple[list[Bounds], float]:
    """One order of the pair, one group of counts, coarsened as pipeline.coarsened says."""
    k_max = sum(k for _, k in others) + (int(cs.max()) if prv_j is not None else 0)
    if k_max == 0:
        return [Bounds(0.0, 0.0, 0.0)] * cs.size, 1.0
    return coarsened(lambda scale: interruptible(_order_sweep_at, others, prv_j, cs, delta, level,
                                                 eps_error, scale, n_max, cancel, progress,
                                                 cancel=cancel, size=INTERRUPTIBLE_SIZE),
                     eps_error, k_max, level, n_max, rows=len(others) + 1)


def _order_sweep_at(others, prv_j, cs, delta, level, eps_error, scale, n_max, cancel, progress
                    ) -> list[Bounds]:
    k_max = sum(k for _, k in others) + (int(cs.max()) if prv_j is not None else 0)
    plan = make_plan(eps_error, scale, k_max, level, len(others) + 1)

    def rows_on(plan: Plan) -> tuple[list, DiscretePRV | None]:
        dj = discretize_rows([(prv_j, 1)], plan, n_max)[0][0] if prv_j is not None else None
        return discretize_many(others, plan, n_max, cancel), cast(DiscretePRV | None, dj)
    leaves, dj = rows_on(plan)
    biggest = [(dj, int(cs.max()))] if dj is not None else []
    plain = unclassed(plan, row_terms(leaves + biggest, plan).fail, eps_error, scale, len(others) + 1)
    if plain is not None:  # (the class plan's bound failed for these rows: pipeline.unclassed)
        plan = plain
        leaves, dj = rows_on(plan)
    h, agg_max = plan.h, plan.agg_max
    # many distinct other rows: composed once, in groups (tree.py), and then one row of the
    # curve's compositions, whose error terms each point carries; the window's mass is split
    # between that composition and each point's window
    grouped, e_w = None, plan.e_w
    if len(leaves) >= TREE_MIN and not band_counts(leaves):
        e_w = plan.e_w / 2
        grouped = compose_many(leaves, e_w, cancel=cancel, n_max=n_max)
        disc_o = [(as_row(grouped), 1)]
    else:
        disc_o = [(dense(d), k) for d, k in leaves]
    prep_o = [(prepared(d), k) for d, k in disc_o]
    if dj is not None:
        prep_j = prepared(dj)
    windows = choose_windows(prep_o, prep_j if dj is not None else None, cs, e_w)
    width = max(hi - lo for lo, hi, _ in windows)
    n = fft_len(int(math.ceil(width / h)) + 4, h, agg_max)
    # the widest band is that of the smallest count (0: the other rows alone); it serves all
    c_min = int(cs.min()) if dj is not None else 0
    band_rows = disc_o + ([(cast(DiscretePRV, dj), c_min)] if c_min > 0 else [])  # (c_min > 0: dj given)
    band = choose_band(band_rows, n, h, agg_max, n_max)
    if band is None and n > n_max:
        raise GridTooLarge(n, n_max, width)
    # band_logs sums (arrays on the band path, else unused)
    up_o: np.ndarray | float
    val_o: np.ndarray | float
    fp_o: np.ndarray | float
    base_spec, n0_o, k_o, up_o, val_o, fp_o = None, 0, 0, 0.0, 0.0, 0.0
    for d, k in disc_o:
        if band is not None:
            x, b, e = band_dft(d, n, band)
            up, val, f = band_logs(x, e)
            up_o, val_o, fp_o = up_o + k * up, val_o + k * val, fp_o + k * f
        else:
            x, b = interruptible(row_spectrum, d, n, cancel=cancel, size=n)
        n0_o += k * b
        k_o += k
        p = _power_cached(_polar(x), k)
        base_spec = p if base_spec is None else base_spec * p
        check_cancel(cancel)
    up_j: np.ndarray | float
    val_j: np.ndarray | float
    fp_j: np.ndarray | float
    polar_j, neg_cstar, up_j, val_j, fp_j = None, None, 0.0, 0.0, 0.0
    if dj is not None:
        if band is not None:
            spec_j, base_j, e_j = band_dft(dj, n, band)
            up_j, val_j, fp_j = band_logs(spec_j, e_j)
        else:
            spec_j, base_j = interruptible(row_spectrum, dj, n, cancel=cancel, size=n)
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
        check_cancel(cancel)
        c = int(c) if dj is not None else 0
        parts = disc_o + ([(cast(DiscretePRV, dj), c)] if c > 0 else [])  # (c > 0: dj given)
        if not parts:
            out.append(Bounds(0.0, 0.0, 0.0))
            continue
        spec = base_spec
        if c > 0:
            assert neg_cstar is not None and polar_j is not None  # set above, as dj is given
            band_c = max(1, int(np.searchsorted(neg_cstar, -c, side="left")))
            pj_c = _power_cached((polar_j[0][:band_c], polar_j[1][:band_c]), c)
            spec = pj_c if spec is None else spec[:band_c] * pj_c
        assert spec is not None  # parts is not empty: the other rows' product or row j's power
        n0 = n0_o + (c * base_j if c > 0 else 0)
        k_c = k_o + c
        coef_err: np.ndarray | float
        if band is not None:
            coef_err = product_error(np.broadcast_to(up_o + c * up_j, (band,)), val_o + c * val_j,
                                     spec, fp_o + c * fp_j)
        else:
            coef_err = fft_rel_error(k_c, n)
        offset = math.fsum(k * d.shift for d, k in parts)
        lo, hi, werr = windows[idx]
        n_lo = math.floor((lo - offset) / h) - 1
        comp = finish(spec, n, n0, n_lo, h, offset, inf_mass_of(parts), coef_err, werr, agg_max)
        comp = comp.trimmed(lo, hi)  # the grid serves the largest count; werr covers the rest
        if grouped is not None:  # (tree.py: the other rows' composition's own errors)
            comp = carried(comp, grouped)
        rows_c = (leaves if grouped is not None else disc_o) + ([(cast(DiscretePRV, dj), c)] if c > 0 else [])
        out.append(certify(comp, rows_c, plan)[0].epsilon(delta))
        if progress is not None:
            progress((idx + 1) / cs.size)
    return out


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
