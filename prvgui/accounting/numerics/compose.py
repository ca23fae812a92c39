"""Compose discretised PRVs by FFT (PRV paper, Algorithm 1), with every error counted.

The sum S~ of the discretised PRVs (row i repeated k_i times) lives on the
mesh: S~ = n h + offset with offset = sum_i k_i s_i. We compute the
distribution of n modulo N with one real FFT per row and a power per row
(``X_i^{k_i}``), then read it on a window [n_lo, n_lo + N).

Errors, each an additive bound on delta(eps) of the finite part:

* ``window``: mass of S~ outside the window, which the circular convolution
  moves into it (window.py: Chernoff's inequality).
* ``aggregation``: when the composed spectrum is band-limited, the window is
  read on a coarser mesh d h (d a power of two) by an aliasing-free
  decimation of the spectrum: block sums of d cells, placed at block centres.
  The block's values lie within (d - 1) h / 2 of its centre, which widens the
  coupling distance by that much (``agg``); the aliased frequencies' total
  magnitude bounds the extra error on delta.
* ``fp``: round-off. The inverse FFT's own noise is bounded from the observed
  noise floor (the most negative output entry, or 4 ulp of the peak if larger)
  times the window length; the rows' FFT errors, which the power X^k multiplies
  by k, by ``power_error`` (a per-coefficient bound propagated to tail sums).

Frequencies where |X|^k < e^-700 are set to zero (an error below 1e-300).

Band path (band.py): a composition of many steps is band-limited long before the
window's n / 2 frequencies. When a band limit M is proved (total-variation
bounds beyond M_tv, short block-moment FFTs below it) and evaluating the rows on
[0, M) directly is cheaper than a length-n FFT, the rows' transforms are computed
only there, each coefficient with a rigorous absolute error bound, and the
``fp`` term uses those bounds (band.product_error) instead of the FFT error model.
The cost then grows with the rows' cell counts, not with the window.
"""
from __future__ import annotations

import functools
import math
import os
import threading
from itertools import takewhile
from dataclasses import dataclass, replace
from typing import Callable, Sequence

import numpy as np
from scipy import fft as scipy_fft

from .band import (band_limit, band_logs, low_dft, may_pay, product_error, sparse_dft, sparse_worth,
                   tv_band, worth_it)
from .discretize import DiscretePRV
from .packed import Row, cells, dense, stub
from ..core.errors import GridTooLarge, check_cancel
from .window import ONCE_BLOCKS, PreparedRow, choose_window

_ULP = 2.0 ** -52
#: the largest FFT length we allow: about 20 bytes per point at the peak, so ~500 MiB
N_MAX = 24 * 2 ** 20


#: the grid may coarsen by at most this factor (the bracket widens as much) before giving up
MAX_COARSENING = 1e4


#: the band path is used when the proved band is at most n / BAND_FRACTION frequencies
BAND_FRACTION = 16
#: ... and n below this (the phases are reduced exactly in int64)
BAND_N_MAX = 1 << 32

#: grids longer than this are composed one at a time even when callers run in parallel
PARALLEL_N = 1 << 22
_BIG = threading.Lock()

#: numpy calls on arrays longer than this run in a helper thread so that a cancel returns at once
INTERRUPTIBLE_SIZE = 1 << 21


def interruptible(fn: Callable, *args, cancel: Callable[[], bool] | None = None, size: int = 0):
    """Run ``fn(*args)``; when it is big and cancellable, poll ``cancel`` every 20 ms meanwhile.

    A numpy FFT cannot be stopped half-way. On cancel we raise at once and let the helper
    thread finish on its own (its result is dropped), so the caller is free within ~20 ms.
    """
    if cancel is None or size < INTERRUPTIBLE_SIZE:
        return fn(*args)
    box: list = []

    def target() -> None:
        try:
            box.append((True, fn(*args)))
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller
            box.append((False, exc))

    th = threading.Thread(target=target, daemon=True, name="prvgui-fft")
    th.start()
    while th.is_alive():
        th.join(0.02)
        check_cancel(cancel)
    ok, val = box[0]
    if not ok:
        raise val
    return val


def fft_len(cells: int, h: float, agg_max: float) -> int:
    """An FFT length >= cells that is fast and divisible by the largest usable decimation."""
    d_cap = 1 << max(0, (max(1, int(2 * agg_max / h) + 1)).bit_length() - 1)
    return fast_len(-(-cells // d_cap)) * d_cap


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


@dataclass(frozen=True, slots=True)
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
    #: half-width of the aggregation blocks (values lie within agg of the grid value)
    agg: float
    parts: dict
    #: a tilted composition read back (tilt.untilt): an extra additive error
    #: e^{tilt_log_a - tilt_lam x} at x, and delta~(x) exact only for x >= valid_from
    tilt_lam: float = 0.0
    tilt_log_a: float = -math.inf
    valid_from: float = -math.inf

    @property
    def values(self) -> np.ndarray:
        return (self.n_start + np.arange(self.pmf.size)) * self.h + self.offset

    def trimmed(self, lo: float, hi: float) -> "Composed":
        """The part with values in [lo - h, hi + h]. The mass dropped must already be counted
        in ``err_abs`` (it is when [lo, hi] is the Chernoff window of this composition)."""
        i0 = max(0, math.floor((lo - self.offset) / self.h) - self.n_start - 1)
        i1 = min(self.pmf.size, math.ceil((hi - self.offset) / self.h) - self.n_start + 2)
        if i0 == 0 and i1 == self.pmf.size or i1 <= i0:
            return self
        return replace(self, pmf=self.pmf[i0:i1], n_start=self.n_start + i0)


def _fold(x: np.ndarray, n: int) -> np.ndarray:
    if x.size <= n:
        return x
    pad = (-x.size) % n
    return np.concatenate([x, np.zeros(pad)]).reshape(-1, n).sum(axis=0)


def _centred(d: DiscretePRV, x: np.ndarray) -> int:
    """Write the row into ``x`` (zeros, length n) circularly, centred on its mean; returns the
    grid index of position 0."""
    n = x.size
    centre = d.centre
    folded = _fold(d.pmf, n)
    c = centre % n
    # x[(j - centre) mod n] = folded[j], written without a rolled copy
    head = folded[c:]
    x[:head.size] = head
    x[n - c:n - c + min(c, folded.size)] = folded[:c]
    return d.start + centre


def padded_spectrum(d: DiscretePRV, n: int) -> tuple[np.ndarray, int]:
    """rfft of the row on length n as it stands (position 0 its first cell, zeros after its
    last), returns (X, grid index of position 0): ``row_spectrum`` without centring, for a row
    drawn once in float64 (its spectrum is a factor as it is: no power turns its phases), and
    without the length-n array it is written into (NumPy pads into the transform's own output:
    at 7 x 10^6 points, 160 against 214 MB)."""
    return np.fft.rfft(d.pmf, n), d.start


def row_spectrum(d: DiscretePRV, n: int, extended: bool = False) -> tuple[np.ndarray, int]:
    """rfft of the row on length n, centred on its mean; returns (X, grid index of position 0).

    ``extended`` computes in long double (x86: 64-bit mantissa), which cuts the round-off that
    the power X^k multiplies by k; it is about six times slower.
    """
    x = np.zeros(n, dtype=np.longdouble if extended else np.float64)
    base = _centred(d, x)
    return np.fft.rfft(x), base


#: rows transformed together (one call, on every core) when the window is at most BATCH_N long
BATCH_ROWS, BATCH_N = 8, 1 << 20


@functools.cache
def _workers() -> int:
    """The FFT's threads: every core (os.cpu_count costs 0.1 ms a call, once per group)."""
    return os.cpu_count() or 1


def row_spectra(rows: Sequence[DiscretePRV], n: int) -> list[tuple[np.ndarray, int]]:
    """row_spectrum of each row (float64), in one call to scipy's FFT (NumPy's pocketfft, the
    same values) over the stacked rows, on all cores."""
    x = np.zeros((len(rows), n))
    bases = [_centred(d, x[i]) for i, d in enumerate(rows)]
    specs = scipy_fft.rfft(x, axis=-1, workers=_workers())
    return [(specs[i], b) for i, b in enumerate(bases)]


#: scipy.fft keeps the plans (twiddle factors, a few bytes a point) of the last lengths it
#: transformed, 16 per kind of transform in SciPy 1.11 to 1.17, with no public way to let them go;
#: transforms of this many tiny lengths push every one of them out (``release_fft_plans``)
PLAN_FLUSH = 64


def release_fft_plans() -> None:
    """Let go of the plans scipy.fft keeps for ``row_spectra``'s lengths, by transforming
    PLAN_FLUSH tiny lengths (about half a millisecond): a tree of many groups leaves its last 16
    lengths' plans, up to 2^20 points each, held to the end (10^5 discrete Gaussians: 0.2 GB
    at the tree's top, whose transforms are NumPy's). A plan made again is the same plan: the
    transforms' values do not change."""
    for k in range(2, 2 + PLAN_FLUSH):
        scipy_fft.rfft(np.zeros(k))


#: power() works through the spectrum this many coefficients at a time (progress, cancel)
POWER_CHUNK = 1 << 20


def power(spec: np.ndarray, k: int, progress: Callable[[float], None] | None = None,
          cancel: Callable[[], bool] | None = None) -> np.ndarray:
    """spec**k via log-polar form (in spec's precision), as complex128, truncated after the
    last coefficient above e^-700 in modulus.

    Works through POWER_CHUNK coefficients at a time (the same values as in one go),
    reporting the fraction done to ``progress`` and checking ``cancel`` between chunks; the
    temporaries are a chunk's, so the peak is the output's 16 bytes per coefficient."""
    if k == 1:  # (the first power is the spectrum itself, rounded to complex128)
        keep = np.flatnonzero(np.abs(spec) > math.exp(-700.0))
        band = int(keep[-1]) + 1 if keep.size else 1
        if progress is not None:
            progress(1.0)
        return spec[:band].astype(np.complex128)
    out = np.zeros(spec.size, dtype=complex)
    band = 1
    for lo in range(0, spec.size, POWER_CHUNK):
        part = spec[lo:lo + POWER_CHUNK]
        with np.errstate(divide="ignore"):
            logabs = np.log(np.abs(part))
        logabs *= k
        keep = np.flatnonzero(logabs > -700.0)
        if keep.size:
            band = lo + int(keep[-1]) + 1
            mag = np.exp(logabs[keep])
            ph = np.angle(part[keep]) * k
            if ph.dtype == np.longdouble:
                ph = np.remainder(ph, 2 * np.pi)
            out.real[lo + keep] = (mag * np.cos(ph)).astype(np.float64)
            out.imag[lo + keep] = (mag * np.sin(ph)).astype(np.float64)
        check_cancel(cancel)
        if progress is not None:
            progress(min(1.0, (lo + POWER_CHUNK) / spec.size))
    return out[:band].copy() if band < out.size else out


def _decimation(spectrum: np.ndarray, n: int, d_max: int, budget: float) -> tuple[int, float]:
    """Largest power of two d <= d_max (d | n) whose aliased tail is within budget."""
    cuts = []  # the first frequency dropped at decimation 2d, for d = 1, 2, 4, ...
    d = 1
    while 2 * d <= d_max and n % (2 * d) == 0:
        cuts.append(n // (4 * d))
        d *= 2
    tails = tail_sums(spectrum, cuts)
    d, err = 1, 0.0
    for cut in cuts:
        e = 4.0 * tails[cut]
        if e > budget:
            break
        d, err = 2 * d, e
    return d, err


def tail_sums(spectrum: np.ndarray, cuts: Sequence[int]) -> dict[int, float]:
    """sum_{k >= c} |spectrum_k| for each c in ``cuts`` (0 at or past the end): the sums of
    ``np.cumsum(|spectrum|[::-1])`` to every digit (the same additions in the same order, from
    the last coefficient down), POWER_CHUNK coefficients at a time, so that no array of the
    spectrum's length is made beside it."""
    out = {c: 0.0 for c in cuts if c >= spectrum.size}
    wanted = sorted((c for c in cuts if c < spectrum.size), reverse=True)
    carry, hi = 0.0, spectrum.size
    while wanted:
        lo = max(wanted[-1], hi - POWER_CHUNK)
        part = np.empty(hi - lo + 1)
        part[0] = carry
        part[1:] = np.abs(spectrum[lo:hi])[::-1]
        sums = np.cumsum(part)  # sums[j] = carry + |X_{hi-1}| + ... + |X_{hi-j}|
        while wanted and wanted[0] >= lo:
            c = wanted.pop(0)
            out[c] = float(sums[hi - c])
        carry, hi = float(sums[-1]), lo
    return out


def fft_rel_error(total_k: int, n: int, extended: bool = False, once: int = 0, factors: int = 0) -> float:
    """K e_x: the relative error per coefficient that the powers give the rows' FFT errors.

    In float64 a draw's e_x = u log2(n) is at least 4 u (n >= 16), which covers the complex128
    product's rounding of its factor (at most (1 + sqrt 5) u: the cast and the multiplication).
    In long double (``extended``) it does not: each of the ``factors`` complex128 factors adds
    2 ulp = 4 u, and the ``once`` rows drawn once, transformed in float64 (a power of 1 does
    not multiply their round-off), count u log2(n) each."""
    log_n = max(math.log2(max(n, 2)), 4.0)
    if not extended:
        return total_k * (_ULP / 2) * log_n
    u = float(np.finfo(np.longdouble).eps) / 2
    return (total_k - once) * u * log_n + once * (_ULP / 2) * log_n + factors * 2 * _ULP


def long_double_gain(counts: Sequence[int], n: int) -> float:
    """How much composing rows drawn ``counts`` times in long double cuts the modelled round-off
    (fft_rel_error's ratio, extended to float64): about 1 / k for one row drawn k times, above
    1 for many rows drawn once (their products stay complex128)."""
    live = [k for k in counts if k > 0]
    if not live:
        return 1.0
    total = sum(live)
    once = sum(1 for k in live if k == 1)
    return fft_rel_error(total, n, True, once, len(live)) / fft_rel_error(total, n)


def power_error(spectrum: np.ndarray, coef_err) -> float:
    """Bound on the error of any tail sum sum_{j >= j0} g_j r_j (0 <= g <= 1 of the form
    1 - e^{eps - y}) caused by errors in the composed transform R.

    A tail sum of the inverse transform weighs frequency m by |G_m| / n <= 1 / m (geometric
    sums), hence |error| <= E_0 + 2 sum_{m >= 1} E_m / m with E_m a bound on |dR_m|.

    ``coef_err`` is either a scalar, the relative error K e_x of ``fft_rel_error`` (each
    coefficient of a row's FFT is taken to carry a relative error of at most
    e_x = u log2(n), which X^k multiplies by k: E_m = (K e_x + 4 u_64) |R_m|), or an array
    of absolute bounds E_m (band.product_error), which may run past the spectrum's end.
    """
    if np.ndim(coef_err) != 0:
        w = np.asarray(coef_err, dtype=float)
        if w.size == 0:
            return 0.0
        return float(w[0]) + 2.0 * float(np.sum(w[1:] / np.arange(1, w.size)))
    if spectrum.size == 0:
        return 0.0
    # (POWER_CHUNK coefficients at a time: no array of the spectrum's length beside it; on a
    # spectrum of at most POWER_CHUNK + 1 coefficients, the one sum of the whole at once)
    scale = float(coef_err) + 4 * _ULP
    total = 0.0
    for lo in range(1, spectrum.size, POWER_CHUNK):
        w = np.abs(spectrum[lo:lo + POWER_CHUNK])
        w *= scale
        w /= np.arange(lo, lo + w.size, dtype=float)
        total += float(np.sum(w))
    return float(np.abs(spectrum[:1])[0] * scale) + 2.0 * total


def finish(spectrum: np.ndarray, n: int, n0: int, n_lo: int, h: float, offset: float,
           inf_mass: float, coef_err, window_err: float, agg_max: float) -> Composed:
    """Inverse transform (decimated if allowed) and read the window; ``coef_err`` as in
    power_error."""
    fp_power = power_error(spectrum, coef_err)
    d_max = max(1, int(2 * agg_max / h) + 1)
    d, alias_err = _decimation(spectrum, n, d_max, budget=window_err * 1e-3 + 1e-300) \
        if d_max > 1 else (1, 0.0)
    # rotate so that position 0 is grid index n_lo, then decimate (a mask for the last nonzero
    # coefficient, not an index array of all of them, and the rotation in place: the largest
    # grids' peak is the spectrum and the inverse transform, 16 bytes a point, not 32)
    nonzero = spectrum != 0
    last = nonzero.size - 1 - int(nonzero[::-1].argmax()) if nonzero.any() else 0
    del nonzero
    spectrum = spectrum[:last + 1]  # band limit
    shift = (n_lo - n0) % n
    size = min(n // (2 * d) + 1, spectrum.size)
    if d > 1:  # (the rotation and the box kernel's factors a chunk at a time)
        rotated = np.empty(size, dtype=complex)
        for lo in range(0, size, POWER_CHUNK):
            m = np.arange(lo, min(size, lo + POWER_CHUNK), dtype=np.int64)
            phase = np.exp(2j * np.pi * ((m * shift) % n) / n)
            rotated[lo:lo + m.size] = spectrum[lo:lo + m.size] * phase * _box_kernel(m, d, n)
        del m, phase
        r = np.fft.irfft(rotated, n // d)
        del rotated
    else:  # (the same rotation, exactly, on the cells)
        r = rolled(np.fft.irfft(spectrum[:size], n), shift)
    # r[J] is the mass of cells n_lo + J d ... n_lo + J d + d - 1
    peak = float(r.max())
    noise = max(float(-r.min()), 4 * _ULP * peak, 0.0)
    total = float(r.sum())
    np.maximum(r, 0.0, out=r)
    fp_abs = 2 * noise * r.size + fp_power
    fp_rel = abs(total - 1.0) + 8 * _ULP * math.log2(n)
    agg = 0.5 * (d - 1) * h
    parts = {"window": window_err, "alias": alias_err, "fp_abs": fp_abs, "fp_power": fp_power, "n": n,
             "decimation": d}
    return Composed(r, 0, h * d, n_lo * h + offset + agg, inf_mass,
                    window_err + alias_err + fp_abs, fp_rel, agg, parts)


def rolled(r: np.ndarray, shift: int) -> np.ndarray:
    """np.roll(r, -shift), in place (1-D): a copy of the shorter part, then numpy's overlapping
    copy of the rest, which runs in the direction that keeps it exact."""
    n = r.size
    shift %= max(n, 1)
    if shift == 0:
        return r
    if shift <= n // 2:
        head = r[:shift].copy()
        r[:n - shift] = r[shift:]
        r[n - shift:] = head
    else:
        tail = r[shift:].copy()
        r[n - shift:] = r[:shift]
        r[:n - shift] = tail
    return r


def _box_kernel(m: np.ndarray, d: int, n: int) -> np.ndarray:
    """(1/d) sum_{u<d} e^{2 pi i m u / n} = e^{i (d-1) th / 2} sin(d th / 2) / (d sin(th / 2))."""
    th = 2 * np.pi * m / n
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = np.sin(0.5 * d * th) / (d * np.sin(0.5 * th))
    ratio[m == 0] = 1.0
    return ratio * np.exp(0.5j * (d - 1) * th)


def inf_mass_of(rows: Sequence[tuple[Row, int]]) -> float:
    log_fin = 0.0
    for d, k in rows:
        if d.inf_mass >= 1:
            return 1.0
        log_fin += k * math.log1p(-d.inf_mass)
    return -math.expm1(log_fin)


def row_blocks(k: int) -> int:
    """The blocks a row drawn ``k`` times is summarised by for its window (PreparedRow)."""
    return ONCE_BLOCKS if k == 1 else 2048


def prepared_row(d: Row, kept: dict[int, PreparedRow] | None, k: int = 2) -> PreparedRow:
    """PreparedRow(d) for a row drawn ``k`` times (window.ONCE_BLOCKS blocks when once), taken
    from (and added to) ``kept`` when given."""
    blocks = row_blocks(k)
    if kept is None:
        return PreparedRow(d, blocks)
    got = kept.get(id(d))
    if got is None or got.d is not d or got.blocks != blocks:
        got = kept[id(d)] = PreparedRow(d, blocks)
    return got


def compose(rows: Sequence[tuple[Row, int]], window_mass: float,
            cancel: Callable[[], bool] | None = None,
            progress: Callable[[float], None] | None = None,
            n_max: int = N_MAX, agg_max: float = 0.0, extended: bool = False,
            prepared: dict[int, PreparedRow] | None = None,
            window_hint: dict[bool, int] | None = None, consume: bool = False) -> Composed:
    """Distribution of the sum of ``k`` copies of each discrete row, on a window. ``prepared``:
    the rows' window.PreparedRow by id(row), kept by a caller that asks again (tree.py);
    ``window_hint``: window.choose_window's, for a caller composing many similar groups;
    ``consume``: ``rows`` is a list the caller gives up (emptied at once), and on the FFT path
    each row is let go once transformed, its entry in ``prepared`` once the window is chosen
    (tree.py's compositions: their rows are not held beside the inverse transform)."""
    given = rows
    rows = [(d, k) for d, k in rows if k > 0]
    if consume and isinstance(given, list):
        given.clear()
    if not rows:
        raise ValueError("compose needs at least one row with count > 0")
    h = stub(rows[0][0]).h
    inf_mass = inf_mass_of(rows)
    if inf_mass >= 1.0:
        return Composed(np.zeros(1), 0, h, 0.0, 1.0, 0.0, 0.0, 0.0, {"window": 0.0})
    prep = [(prepared_row(d, prepared, k), k) for d, k in rows]
    offset = math.fsum(k * stub(d).shift for d, k in rows)
    lo, hi, win_err = choose_window(prep, window_mass, window_hint)
    del prep
    if consume and prepared is not None:  # (their cumulants served this window only)
        for key in [id(d) for d, _ in rows]:
            prepared.pop(key, None)
    n_lo = math.floor((lo - offset) / h) - 1
    n_hi = math.ceil((hi - offset) / h) + 1
    n = fft_len(n_hi - n_lo + 1, h, agg_max)
    check_cancel(cancel)
    banded = _banded(rows, n, h, agg_max, n_max, extended, cancel, progress)
    if banded is not None:
        spectrum, n0, coef_err = banded
        out = finish(spectrum, n, n0, n_lo, h, offset, inf_mass, coef_err, win_err, agg_max)
        out.parts["band"] = int(coef_err.size)
        return out
    if n > n_max:
        raise GridTooLarge(n, n_max, hi - lo)
    if n <= PARALLEL_N:
        return _transform(rows, n, n_lo, h, offset, inf_mass, win_err, cancel, progress, agg_max,
                          extended, consume)
    with _BIG:  # one big grid at a time keeps the peak memory of parallel callers bounded
        return _transform(rows, n, n_lo, h, offset, inf_mass, win_err, cancel, progress, agg_max,
                          extended, consume)


#: the shares of a row's time on the FFT path: its transform, then its power (pricing.py)
_RFFT_SHARE = 0.3


def _transform(rows, n, n_lo, h, offset, inf_mass, win_err, cancel, progress, agg_max,
               extended, consume: bool = False) -> Composed:
    """Rows' spectra, their powers and product, the inverse transform. ``progress`` gets the
    fraction done: each row is one part (its transform, then its power chunk by chunk), the
    inverse transform another. ``consume``: ``rows`` is ours, and each entry is let go once
    its row is transformed (the same products in the same order)."""
    spectrum, n0, total_k, once = None, 0, 0, 0
    parts = len(rows) + 1

    def report(i: int, f: float) -> None:
        if progress is not None:
            progress((i + f) / parts)
    batch: list[tuple[np.ndarray, int]] = []
    if n > BATCH_N:  # (NumPy's long transforms: not beside scipy's plans of the groups' lengths)
        release_fft_plans()
    if consume and n > BATCH_N:
        # widest first: a row is let go once transformed, so the rows still held shrink fastest
        # (with the product's spectrum beside them from the second row on)
        rows.sort(key=lambda r: -cells(r[0]))
    for i, (d, k) in enumerate(rows):
        # (in long double only rows drawn more than once: fft_rel_error)
        wide = extended and k > 1
        if not batch and not wide and n <= BATCH_N:
            ahead = list(takewhile(lambda r: not (extended and r[1] > 1), rows[i:i + BATCH_ROWS]))
            if len(ahead) > 1:
                batch = row_spectra([dense(r) for r, _ in ahead], n)[::-1]
            del ahead
        if batch:
            spec, base = batch.pop()
        elif k == 1 and not wide and cells(d) <= n:
            spec, base = interruptible(padded_spectrum, dense(d), n, cancel=cancel, size=n)
        else:
            spec, base = interruptible(row_spectrum, dense(d), n, wide, cancel=cancel, size=n)
        if consume:
            rows[i] = d = None
        n0 += k * base
        total_k += k
        once += extended and k == 1
        check_cancel(cancel)
        report(i, _RFFT_SHARE)
        if k == 1 and spec.dtype == np.complex128:  # (a first power is the spectrum itself)
            powered = spec
        else:
            powered = interruptible(power, spec, k, lambda f, i=i: report(i, _RFFT_SHARE + (1 - _RFFT_SHARE) * f),
                                    cancel, cancel=cancel, size=n)
        del spec
        if spectrum is None:
            spectrum = powered if powered.flags.owndata or k > 1 else powered.copy()
        else:  # (in place: the product is ours, never a row's spectrum that is kept)
            m = min(spectrum.size, powered.size)
            spectrum = spectrum[:m]
            spectrum *= powered[:m]
        check_cancel(cancel)
        report(i + 1, 0.0)
    out = interruptible(finish, spectrum, n, n0, n_lo, h, offset, inf_mass,
                        fft_rel_error(total_k, n, extended, once, len(rows)), win_err, agg_max,
                        cancel=cancel, size=n)
    check_cancel(cancel)
    report(parts, 0.0)
    return out


def band_dft(d: DiscretePRV, n: int, band: int, extended: bool = False,
             progress: Callable[[float], None] | None = None) -> tuple[np.ndarray, int, np.ndarray]:
    """A row's transform on [0, band), the grid index of position 0 and each coefficient's
    absolute error: summed over the nonzero cells (band.sparse_dft) when the row has few of
    them, by band.low_dft when that is cheaper than a length-n FFT (band.worth_it), else the
    first ``band`` coefficients of the FFT (row_spectrum), each with the FFT path's error model
    (a relative u log2(n) per coefficient, as ``fft_rel_error`` for one draw)."""
    if not extended and sparse_worth(n, band, int(np.count_nonzero(d.pmf)), d.pmf.size):
        if progress is not None:
            progress(1.0)
        return sparse_dft(d, n, band)
    if worth_it(n, band, d.pmf.size):
        return low_dft(d, n, band, extended, progress)
    spec, base = row_spectrum(d, n, extended)
    x = spec[:band]
    u = float(np.finfo(np.longdouble).eps) / 2 if extended else _ULP / 2
    err = np.abs(x).astype(float) * (u * math.log2(max(n, 2)) + 4 * u)
    if progress is not None:
        progress(1.0)
    return x, base, err


def banded_rows(rows: Sequence[tuple[Row, int]], n: int, band: int, extended: bool,
                cancel: Callable[[], bool] | None = None,
                progress: Callable[[float], None] | None = None) -> list[tuple[np.ndarray, int, np.ndarray]]:
    """band_dft of each row: (X on the band, grid index of position 0, absolute error);
    ``progress`` hears the fraction done (each row one part, its band chunk by chunk)."""
    out = []
    for i, (d, _) in enumerate(rows):
        part = None if progress is None else (lambda f, i=i: progress((i + f) / len(rows)))
        out.append(band_dft(dense(d), n, band, extended, part))
        check_cancel(cancel)
    return out


def banded_product(parts: list[tuple[tuple[np.ndarray, int, np.ndarray], int]]
                   ) -> tuple[np.ndarray, int, np.ndarray]:
    """prod X_i^{k_i} on the band, the grid index of position 0 and the per-frequency bound
    on the error of the product (band.product_error)."""
    spectrum, n0 = None, 0
    log_up: np.ndarray | float
    log_val: np.ndarray | float
    fp: np.ndarray | float
    log_up, log_val, fp = 0.0, 0.0, 0.0
    for (x, base, err), k in parts:
        p = power(x, k)
        spectrum = p if spectrum is None else spectrum[:min(spectrum.size, p.size)] * p[:spectrum.size]
        n0 += k * base
        up, val, f = band_logs(x, err)
        # (a long-double factor's cast to complex128 and its product: 4 u, which its own
        # k u_ld (...) does not cover as a float64 factor's k u (... + 4) does)
        cast = 0.0 if x.dtype == np.complex128 else 4 * 2.0 ** -53
        log_up, log_val, fp = log_up + k * up, log_val + k * val, fp + k * f + cast
    assert spectrum is not None  # parts is not empty (choose_band allows no rows)
    return spectrum, n0, product_error(log_up, log_val, spectrum, fp)


def choose_band(rows: Sequence[tuple[Row, int]], n: int, h: float, agg_max: float,
                n_max: int) -> int | None:
    """The proved band limit when the band path applies to these rows on n points: the band
    is small against n, evaluating the rows on it beats a length-n FFT, and the (decimated)
    inverse transform fits in n_max points. None otherwise."""
    m_tv = None if not rows or n > BAND_N_MAX else tv_band(rows, n)
    if m_tv is None or not may_pay(rows, n, n // BAND_FRACTION, m_tv):
        return None  # (tv_band: the cheap first step of band_limit's proof, an upper bound)
    band = band_limit(rows, n)
    if band is None or band > n // BAND_FRACTION \
            or not any(worth_it(n, band, cells(d)) for d, _ in rows):
        return None  # (rows not worth band.low_dft are transformed in full: band_dft)
    d_max = max(1, int(2 * agg_max / h) + 1)
    if n // min(d_max, n) > n_max:
        return None
    return band


def _banded(rows, n: int, h: float, agg_max: float, n_max: int, extended: bool, cancel, progress=None):
    """The composed band-limited spectrum from band.low_dft when choose_band allows, else None."""
    band = choose_band(rows, n, h, agg_max, n_max)
    if band is None:
        return None
    specs = banded_rows(rows, n, band, extended, cancel, progress)
    return banded_product([(sp, k) for sp, (_, k) in zip(specs, rows)])
