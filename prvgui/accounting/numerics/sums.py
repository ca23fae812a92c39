"""Dot products without BLAS.

NumPy hands ``np.dot`` and ``@`` on float64 arrays to its BLAS (OpenBLAS in the wheels), which
splits a product of more than a few thousand terms over its own threads. Those threads then
wait spinning for more work, taking a core from the FFT's threads and from the rest of the
process: on a two-core machine with the other core busy, a dot product of 27,000 terms took
7.7 ms against 0.01 ms on one thread, and 10^4 discrete Gaussians' answer 31 s against 26 s.
The products here are a few per row (a row's centre and block means, a tilted row's mean),
where one pass of numpy's own multiply and pairwise sum costs about as much as BLAS on one
thread and never wakes its threads. The sums are the pairwise sums of the same products: they
can differ from BLAS's in the last bits.
"""
from __future__ import annotations

import numpy as np


def dot(a: np.ndarray, b: np.ndarray) -> float:
    """sum_i a_i b_i (1-D), by numpy's multiply and pairwise sum."""
    return float(np.add.reduce(np.multiply(a, b)))


def row_dots(m: np.ndarray, v: np.ndarray) -> np.ndarray:
    """m @ v for a 2-D m (each row's sum_j m_ij v_j), by numpy's multiply and pairwise sums."""
    return np.add.reduce(np.multiply(m, v), axis=1)
