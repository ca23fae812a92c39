"""Compose discretised PRVs by FFT (PRV paper, Algorithm 1), with every error counted.

The sum S~ of the discretised PRVs (row i repeated k_i times) lives on the
mesh: S~ = n h + offset with offset = sum_i k_i s_i. We compute the
distribution of n modulo N with one real FFT per row and a power per row
(``X_i^{k_i}``), then read it on a window [n_lo, n_lo + N).

Errors, each an additive bound on delta(eps) of the finite part:

* ``window``: mass of S~ outside the window, which the circular convolution
  moves into it. Bounded by Chernoff's inequality with the exact cumulant
  generating function of each discrete row (evaluated on blocks, rounding each
  block's values outward, so the bound stays an upper bound).
* ``fp``: float64 round-off of the FFTs and powers, bounded from the observed
  noise floor (the most negative output entry, or 4 ulp of the peak if larger)
  times the window length, plus a relative term 8 ulp * K * (log2 N + 4) for
  the powers (relative errors of Fourier coefficients grow k-fold under ^k).

Frequencies where |X|^k < e^-700 are set to zero (an error below 1e-300).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

from .discretize import DiscretePRV

_ULP = 2.0 ** -52
#: the largest FFT length we allow (8 bytes * 2^26 = 512 MiB per real array)
N_MAX = 2 ** 26


class Cancelled(Exception):
    """Raised when a computation is cancelled through its cancel token."""


def check_cancel(cancel: Callable[[], bool] | None) -> None:
    if cancel is not None and cancel():
        raise Cancelled("computation cancelled")


def fast_len(n: int) -> int:
    """Smallest 2^a 3^b 5^c >= n (lengths pocketfft handles fastest)."""
    best = 1 << max(0, (n - 1).bit_length())
    p5 = 1
    while p5 < best:
        p35 = p5
        while p35 < best:
            m = p35
            while m < n:
                m *= 2
            best = min(best, m)
            p35 *= 3
        p5 *= 5
    return best


@dataclass(frozen=True)
class Composed:
    """Composed discrete PRV on a window. Value of ``pmf[i]`` is (n_start + i) h + offset."""

    pmf: np.ndarray
    n_start: int
    h: float
    offset: float
    #: probability of +inf (composition of the rows' delta parts)
    inf_mass: float
    #: absolute error bound on delta of the finite part from window and float round-off
    err_abs: float
    #: relative error bound on delta of the finite part from float round-off
    err_rel: float
    parts: dict

    @property
    def values(self) -> np.ndarray:
        return (self.n_start + np.arange(self.pmf.size)) * self.h + self.offset


def _cgf_bounds(d: DiscretePRV, lams: np.ndarray, blocks: int = 4096) -> np.ndarray:
    """Upper bounds on log E[exp(lam Y~)] for each lam (positive or negative).

    Values are grouped in blocks; with block mass P_b, block mean m_b and
    |y - m_b| <= w inside a block, e^x <= 1 + x + x^2 e^|x| / 2 gives
    sum_b P_b e^{lam m_b} (1 + (lam w)^2 e^{|lam| w} / 2), the first-order
    terms cancelling by the choice of m_b.
    """
    n = d.pmf.size
    size = max(1, -(-n // blocks))
    pad = (-n) % size
    pm = np.concatenate([d.pmf, np.zeros(pad)]).reshape(-1, size)
    p = pm.sum(axis=1)
    local = np.arange(size, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        mloc = np.where(p > 0, pm @ local / p, 0.0)
        logp = np.log(p)
    centres = (d.start + np.arange(p.size) * size + mloc) * d.h + d.shift
    w = (size - 1) * d.h
    out = np.empty(lams.size)
    for i, lam in enumerate(lams):
        e = logp + lam * centres
        m = e.max()
        x = abs(lam) * w
        out[i] = m + math.log(np.exp(e - m).sum()) + math.log1p(0.5 * x * x * math.exp(x))
    return out


def choose_window(rows: list[tuple[DiscretePRV, int]], mass: float) -> tuple[float, float, float]:
    """An interval [lo, hi] with P(S~ outside) <= returned bound (<= ``mass``)."""
    lo_all = sum(k * (d.start * d.h + d.shift) for d, k in rows)
    hi_all = sum(k * ((d.start + d.pmf.size - 1) * d.h + d.shift) for d, k in rows)
    var = sum(k * d.variance() for d, k in rows)
    h = rows[0][0].h
    sd = math.sqrt(var) + h
    lams = np.geomspace(1e-3, 1e4, 141) / sd
    cgf_pos = sum(k * _cgf_bounds(d, lams) for d, k in rows)
    cgf_neg = sum(k * _cgf_bounds(d, -lams) for d, k in rows)
    log_t = math.log(2.0 / mass)
    hi = float(np.min((cgf_pos + log_t) / lams))
    lo = float(np.max(-(cgf_neg + log_t) / lams))
    out = 0.0
    if hi >= hi_all:
        hi = hi_all
    else:
        out += mass / 2
    if lo <= lo_all:
        lo = lo_all
    else:
        out += mass / 2
    return lo, hi, out


def _fold(x: np.ndarray, n: int) -> np.ndarray:
    if x.size <= n:
        return x
    pad = (-x.size) % n
    return np.concatenate([x, np.zeros(pad)]).reshape(-1, n).sum(axis=0)


def compose(rows: list[tuple[DiscretePRV, int]], window_mass: float,
            cancel: Callable[[], bool] | None = None,
            progress: Callable[[float], None] | None = None,
            n_max: int = N_MAX) -> Composed:
    """Distribution of the sum of ``k`` copies of each discrete row, on a window."""
    rows = [(d, k) for d, k in rows if k > 0]
    if not rows:
        raise ValueError("compose needs at least one row with count > 0")
    h = rows[0][0].h
    log_fin = sum(k * math.log1p(-d.inf_mass) if d.inf_mass < 1 else -math.inf for d, k in rows)
    inf_mass = -math.expm1(log_fin) if log_fin > -math.inf else 1.0
    if inf_mass >= 1.0:
        return Composed(np.zeros(1), 0, h, 0.0, 1.0, 0.0, 0.0, {"window": 0.0, "fp": 0.0})
    offset = math.fsum(k * d.shift for d, k in rows)
    lo, hi, win_err = choose_window(rows, window_mass)
    n_lo = math.floor((lo - offset) / h) - 1
    n_hi = math.ceil((hi - offset) / h) + 1
    n = fast_len(n_hi - n_lo + 1)
    if n > n_max:
        raise MemoryError(f"the composition needs an FFT of {n} points (limit {n_max})")
    check_cancel(cancel)
    spectrum = None
    n0 = 0
    total_k = 0
    for i, (d, k) in enumerate(rows):
        centre = int(round(float(np.dot(d.pmf, np.arange(d.pmf.size)))))
        x = np.zeros(n)
        folded = _fold(d.pmf, n)
        x[:folded.size] = folded
        x = np.roll(x, -centre)
        n0 += k * (d.start + centre)
        total_k += k
        spec = np.fft.rfft(x)
        del x
        check_cancel(cancel)
        logabs = np.log(np.abs(spec))
        logabs *= k
        keep = logabs > -700.0
        powered = np.zeros_like(spec)
        powered[keep] = np.exp(logabs[keep] + 1j * (k * np.angle(spec[keep])))
        del spec, logabs, keep
        spectrum = powered if spectrum is None else spectrum * powered
        del powered
        check_cancel(cancel)
        if progress is not None:
            progress((i + 1) / (len(rows) + 1))
    r = np.fft.irfft(spectrum, n)
    del spectrum
    check_cancel(cancel)
    r = np.roll(r, -((n_lo - n0) % n))
    peak = float(r.max())
    noise = max(float(-r.min()), 4 * _ULP * peak, 0.0)
    total = float(r.sum())
    np.maximum(r, 0.0, out=r)
    fp_abs = 2 * noise * n
    fp_rel = 8 * _ULP * total_k * (math.log2(n) + 4) + abs(total - 1.0)
    parts = {"window": win_err, "fp_abs": fp_abs, "fp_rel": fp_rel, "n": n}
    return Composed(r, n_lo, h, offset, inf_mass, win_err + fp_abs, fp_rel, parts)
