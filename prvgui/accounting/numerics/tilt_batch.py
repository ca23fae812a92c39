"""Rows tilted by lambda (tilt.py), a group at a time (tree.compose_many's leaves at a small
delta), each with the block summary its group's window reads; tilt.tilt_row is one row alone.

For a row with masses p_j at values y_j (its nonzero cells) the tilted masses are
q_j = e^{log p_j + lam y_j - m} / s, with m the largest exponent and s = sum_j e^{... - m} >= 1,
and log M = m + log s. The computed s cancels exactly, whichever way it is added (here in
sequence), since the same s divides the masses and enters L = sum k log M. Each mass's rounding
(log p, lam y, the shift by m, exp and the division: a few ulps each, the exponent's rounding
scaled by its size) is bounded by ``rel``; a mass below the smallest normal may round to 0
(``lost``). The tilted mean that picks the row's centre (where its transform is centred: a
choice, not a bound) is a sum too.

One row at a time this was about twenty NumPy calls on a thousand nonzero cells (a discrete
Gaussian among 10^4), and window.cgf_blocks then summarised the tilted row's eight thousand
cells again for its group's Chernoff window: 10^4 discrete Gaussians at delta 1e-10 spent 0.55 s
in the first and 0.66 s in the second, mostly in the calls' own cost. Here a group's rows are
tilted side by side in one array, each row's sums and extremes over its own segment, and
summarised from their nonzero cells in the same pass (window.blocks_many, as a packed row's:
empty cells add nothing), so each row's answer is the same alone or among others.
Test: tests/accounting/numerics/test_tilt_batch.py (against the definition, summed exactly).
"""
from __future__ import annotations

from typing import NamedTuple, Sequence

import numpy as np

from .discretize import DiscretePRV
from .packed import Row, dense, nonzero
from .window import blocks_many

_U = 2.0 ** -53


class Tilted(NamedTuple):
    """tilt.tilt_row's answer (the tilted row, log M, the masses' relative rounding, the mass
    lost to underflow) and the tilted row's window.cgf_blocks (None: no mass to summarise)."""

    row: DiscretePRV
    log_m: float
    rel: float
    lost: float
    summary: tuple[np.ndarray, np.ndarray, float] | None


def tilt_many(rows: Sequence[Row], lam: float, blocks: Sequence[int] | None) -> list[Tilted]:
    """Each row tilted by ``lam`` with its summary on ``blocks[i]`` blocks (None: no summaries):
    q_j = p_j e^{lam y_j} / M over its nonzero cells (module docstring)."""
    parts = [nonzero(r) for r in rows]
    out: list[Tilted | None] = [None] * len(rows)
    live = [i for i, p in enumerate(parts) if p[1].size]
    for i, p in enumerate(parts):
        if not p[1].size:
            out[i] = Tilted(dense(rows[i]), 0.0, 0.0, 0.0, None)
    if live:
        for i, t in zip(live, _tilt([parts[i] for i in live], lam, None if blocks is None else [blocks[i] for i in live])):
            out[i] = t
    return out  # type: ignore[return-value]


def _tilt(parts: list[tuple[DiscretePRV, np.ndarray, np.ndarray, int]], lam: float,
          blocks: list[int] | None) -> list[Tilted]:
    stubs = [p[0] for p in parts]
    counts = np.array([p[1].size for p in parts], dtype=np.int64)
    first = np.cumsum(counts) - counts
    last = first + counts - 1
    nz = np.concatenate([p[1] for p in parts])
    p = np.concatenate([p[2] for p in parts])
    start = np.repeat(np.array([s.start for s in stubs], dtype=np.int64), counts)
    h = np.repeat(np.array([s.h for s in stubs]), counts)
    shift = np.repeat(np.array([s.shift for s in stubs]), counts)
    y = (start + nz) * h + shift  # (tilt_row's values, element by element)
    logp = np.log(p)
    logw = logp + lam * y
    m = np.maximum.reduceat(logw, first)
    with np.errstate(under="ignore"):
        w = np.exp(logw - np.repeat(m, counts))
    s = np.add.reduceat(w, first)  # >= 1 each: a row's largest term is e^0
    w /= np.repeat(s, counts)
    mean_idx = np.add.reduceat(w * nz, first)
    y_abs = np.maximum(np.abs(y[first]), np.abs(y[last]))
    log_p = -np.minimum.reduceat(logp, first)
    rel = _U * (8.0 + 4.0 * log_p + 4.0 * abs(lam) * y_abs + 4.0 * np.abs(m))
    log_m = m + np.log(s)
    summaries: list = [None] * len(parts) if blocks is None else blocks_many(stubs, [p[3] for p in parts], blocks, nz, w, counts)
    out = []
    ends = (first + counts).tolist()
    for st, part, a, b, centre, lm, re, summary in zip(stubs, parts, first.tolist(), ends, mean_idx.tolist(),
                                                      log_m.tolist(), rel.tolist(), summaries):
        pmf = np.zeros(part[3])
        pmf[nz[a:b]] = w[a:b]
        out.append(Tilted(st.with_pmf(pmf, int(round(centre))), lm, re, (b - a) * 2.0 ** -1022, summary))
    return out
