"""The one quadrature rule of the pairs: 16-point Gauss-Legendre (``GL_X``, ``GL_W`` on [-1, 1]),
composed over panels two ways: ``integrate`` (a function's integral, with an error estimate)
and ``log_integrate`` (the log of the integral of e^logf, summed in log space, for the RDP
moments whose terms span hundreds of orders of magnitude). The shuffled pair (shuffle.py) and
the mixtures' RDP (mixture_rdp.py) use the nodes directly on their own panels."""
from __future__ import annotations

import math
from typing import Callable

import numpy as np

Array = np.ndarray
#: a float64 ulp and a little more: the rounding lse_up adds per term
_ULP = 4.5e-16

# 16-point Gauss-Legendre rule on [-1, 1] (numpy.polynomial.legendre.leggauss(16), written out,
# so that building a PRV does not import numpy.polynomial; tests check the two agree)
_HALF_X = (0.09501250983763744, 0.2816035507792589, 0.45801677765722737, 0.6178762444026438,
              0.755404408355003, 0.8656312023878318, 0.9445750230732326, 0.9894009349916499)
_HALF_W = (0.18945061045506864, 0.18260341504492364, 0.16915651939500265, 0.1495959888165767,
              0.12462897125553407, 0.0951585116824926, 0.062253523938647456, 0.027152459411754176)
GL_X = np.array([-v for v in _HALF_X[::-1]] + list(_HALF_X))
GL_W = np.array(list(_HALF_W[::-1]) + list(_HALF_W))


def integrate(f: Callable[[Array], Array], breaks: list[float], panels: int = 64
              ) -> tuple[float, float]:
    """Composite 16-point Gauss-Legendre over consecutive breaks, with an error estimate.

    The estimate is the difference to the rule with half as many panels (an
    overestimate for smooth integrands, whose error falls like panels^-32).
    """
    br = np.asarray(breaks, dtype=float)
    a, b = br[:-1, None], br[1:, None]

    def rule(m: int) -> float:
        # every interval's m panels at once: one call of f
        t = np.linspace(0.0, 1.0, m + 1)[None, :]
        edges = a + (b - a) * t
        edges[:, -1] = br[1:]
        half = 0.5 * np.diff(edges, axis=1)
        mid = 0.5 * (edges[:, :-1] + edges[:, 1:])
        x = mid[:, :, None] + half[:, :, None] * GL_X[None, None, :]
        vals = f(x.ravel()).reshape(x.shape) @ GL_W
        return math.fsum((vals * half).sum(axis=1))

    fine, coarse = rule(panels), rule(panels // 2)
    return fine, abs(fine - coarse)


def log_integrate(logf: Callable[[np.ndarray], np.ndarray], a: float, b: float, h: float) -> float:
    """log of int_a^b e^logf: composite 16-point Gauss-Legendre plus its error estimate."""
    n, out = 2 * max(1, math.ceil((b - a) / (2 * h))), []
    for m in (n, n // 2):
        half = (b - a) / (2 * m)
        x = (a + half * (2 * np.arange(m) + 1))[:, None] + half * GL_X
        out.append(float(lse_up(logf(x.ravel()) + np.log(half * np.tile(GL_W, m)))))
    return out[0] + abs(out[0] - out[1])


def lse_up(t: np.ndarray, axis: int = -1) -> np.ndarray:
    """log sum exp(t) plus a few ulps of the terms' size, so that rounding never lowers the
    RDP. (Shifted by the largest term, as scipy's logsumexp, whose array-API dispatch costs
    more than the sum itself on the quadratures' short arrays.)"""
    t = np.asarray(t, dtype=float)
    top = np.max(t, axis=axis, keepdims=True)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        top = np.where(np.isfinite(top), top, 0.0)  # all -inf: the sum is 0; +inf: inf
        e = np.exp(t - top)
        total = np.sum(e, axis=axis, keepdims=True)
        m = np.squeeze(np.log(total) + top, axis=axis)
        # (each term's weight e^{t - m} = e / total: the size of the terms the sum rounds)
        size = np.sum(np.where(e > 0, e * np.abs(t), 0.0), axis=axis) / np.squeeze(total, axis=axis)
        # (m = +-inf stays so: +inf terms make size inf / inf)
        return np.where(np.isinf(m), m, m + 4 * _ULP * (np.log2(t.shape[axis]) + 2 + size + np.abs(m)))
