"""A quick guess of epsilon(delta) from the cost model's coarse picture of an order (pricing.py),
to foresee which orders an epsilon query composes tilted (``deciding``).

The accountant composes the order with the largest bracket tilted first; a later order is left
at its plain or screened bracket when that lies below the first's lower end
(Accountant._epsilon_tilted). The estimate priced every order tilted: for 1000 distinct DP-SGD
steps at delta 1e-10 it said 4.9 s for a query of 1.75 to 2.5 s, whose add order (epsilon about
1.06) never reaches the remove order's 3.31.

The guess composes the pictured rows, each raised to its count times the rows it stands for,
on GUESS_POINTS points over the order's Chernoff window, and reads epsilon(delta) from that.
It is an estimate, never a bound: it only steers the price. A later order is taken as settled
when its guess is below SETTLED times the largest; where float64's round-off over the guess's
points could reach delta (``floor``), or a guess is not finite, every order is priced tilted
(the safe side: more work priced, not less).
"""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from .compose import Composed, fast_len
from .discretize import DiscretePRV
from .profile import CertifiedProfile

#: points of a guess's composition, and the most pictured rows it composes (each for its share
#: of them): 64 rows discretised on 4096 points and transformed, 0.1 s for both orders
GUESS_POINTS, GUESS_ROWS = 1 << 12, 64
#: a later order whose guess is below this share of the largest is left at its screen
SETTLED = 0.8


def floor(n: int) -> float:
    """The smallest delta a composition on n points reads above its round-off: 8 n u (the
    inverse transform's error is a few u per point, at most that much summed over a tail)."""
    return 8.0 * n * 2.0 ** -53


def epsilon_guess(rows: Sequence[tuple[DiscretePRV, int]], lo: float, hi: float,
                  delta: float) -> float | None:
    """epsilon(delta) of the composition of ``rows`` (discretised on one mesh, each with its
    count), on a circle that holds [lo, hi] (where about all its mass lies); None where delta
    is below the composition's ``floor``."""
    rows = [(d, k) for d, k in rows if k > 0]
    if not rows:
        return 0.0
    h = rows[0][0].h
    widest = max(d.pmf.size for d, _ in rows)
    n = fast_len(math.ceil((hi - lo) / h) + widest + 2)
    if not delta > floor(n):
        return None
    spectrum = np.ones(n // 2 + 1, dtype=complex)
    first = 0  # the composed pmf's first grid index, as the rows' starts add up
    shift = 0.0
    for d, k in rows:
        spectrum *= np.fft.rfft(d.pmf, n) ** k
        first += k * d.start
        shift += k * d.shift
    pmf = np.maximum(np.fft.irfft(spectrum, n), 0.0)
    # on the circle index j holds the grid index first + j, taken into [base, base + n) (the
    # value of grid index i is i h + shift)
    base = math.floor((lo - shift) / h) - widest
    pmf = np.roll(pmf, (first - base) % n)
    # (read as the accountant reads a composition, with no error terms: its estimate)
    composed = Composed(pmf, base, h, shift, 0.0, 0.0, 0.0, 0.0, {})
    return CertifiedProfile(composed, 0.0, 0.0, factors=(1.0, 1.0)).epsilon(delta).estimate


def deciding(guesses: dict[str, float | None]) -> list[str]:
    """The orders a tilted epsilon query composes, from each order's guess: all of them when
    one is unknown or not finite, else those whose guess is at least SETTLED times the largest."""
    if any(g is None or not math.isfinite(g) for g in guesses.values()):
        return list(guesses)
    top = max(guesses.values(), default=0.0)  # type: ignore[type-var]
    return [o for o, g in guesses.items() if g >= SETTLED * top]  # type: ignore[operator]
