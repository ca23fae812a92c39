"""The price of a query, as a value (numerics/pricing.py works it out): seconds, peak bytes, the grid the accuracy
asks for and the reason, in words; and how estimates of parts add up."""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Sequence


@dataclass(frozen=True)
class Cost:
    """The predicted cost of a computation.

    ``seconds`` and ``bytes`` (peak memory) are for an unloaded machine; ``grid`` is the
    number of points of the finest grid the accuracy asks for (before any capping); ``why``
    says in words what drives the cost.
    """

    seconds: float
    bytes: float
    grid: int = 0
    why: str = ""
    #: False when no grid can hold the composition at any accuracy: the work will fail (after
    #: ``seconds``) with a message that says so
    fits: bool = True
    #: seconds to the first answer when the work delivers its answers as they come (the
    #: window's headline, then its other parts); None: only the whole is known (a sum of costs
    #: keeps none)
    first: float | None = None

    def exceeds(self, seconds: float | None = None, memory: float | None = None) -> bool:
        """Whether the estimate is above either limit (None: no limit); never for work that
        will fail (``fits`` False), whose own message says more."""
        return self.fits and ((seconds is not None and self.seconds > seconds)
                              or (memory is not None and self.bytes > memory))

    def asks(self, seconds: float | None, memory: float | None, whole: float | None) -> bool:
        """Whether work that delivers its answers as they come should wait to be asked for: its
        first answer later than ``seconds``, the whole later than ``whole``, or its memory above
        ``memory`` (None: no limit). Without ``first``, as ``exceeds``."""
        if self.first is None:
            return self.exceeds(seconds, memory)
        return self.fits and ((seconds is not None and self.first > seconds)
                              or (whole is not None and self.seconds > whole)
                              or (memory is not None and self.bytes > memory))

    def describe(self) -> str:
        """``about 45 s and 2.1 GB`` (``under a second and 12.0 MB``)."""
        time = format_seconds(self.seconds)
        return f"{time if time.startswith('under') else 'about ' + time} and {format_bytes(self.bytes)}"

    def __add__(self, other: "Cost") -> "Cost":
        why = self.why if self.seconds >= other.seconds else other.why
        return Cost(self.seconds + other.seconds, max(self.bytes, other.bytes),
                        max(self.grid, other.grid), why, self.fits and other.fits)


ZERO = Cost(0.0, 0.0)


def format_seconds(s: float) -> str:
    if s < 1:
        return "under a second"
    if s < 90:
        return f"{s:.0f} s"
    if s < 5400:
        return f"{s / 60:.0f} min"
    return f"{s / 3600:.1f} h"


def format_bytes(b: float) -> str:
    for unit, size in (("GB", 1e9), ("MB", 1e6)):
        if b >= size:
            return f"{b / size:.1f} {unit}"
    return "under 1 MB"


def points(n: float) -> str:
    """A number of grid points in words: 977 million, 4.3 billion."""
    if n >= 1e9:
        return f"{n / 1e9:.1f} billion"
    if n >= 1e6:
        return f"{n / 1e6:.0f} million" if n >= 1e7 else f"{n / 1e6:.1f} million"
    return f"{int(n):,}"


def parallel(parts: Sequence[Cost]) -> Cost:
    """Builds run side by side (the accountant's two orders): their peaks are counted as if
    they coincided; time is counted one after the other (big grids take turns, compose.py)."""
    total = ZERO
    for p in parts:
        total = total + p
    return replace(total, bytes=sum(p.bytes for p in parts))


def summarise(parts: Sequence[Cost], eps_error: float, n_max: int) -> Cost:
    """Parts run one after the other; the reason names the grid the accuracy asks for and what
    else dominates."""
    total = ZERO
    for p in parts:
        total = total + p
    if not total.fits:
        return replace(total, why="no grid can hold this composition's privacy loss at any accuracy")
    if total.grid <= 0:
        return total
    why = f"accuracy {eps_error:g} needs a grid of {points(total.grid)} points"
    if total.grid > n_max:
        why += (f", more than the {points(n_max)} allowed: the grid is coarsened until it fits "
                "and the bracket comes out wider than asked")
    heavy = max(parts, key=lambda p: p.seconds)
    if heavy.why and heavy.seconds > 0.3 * total.seconds:
        why += f"; {heavy.why}"
    return replace(total, why=why)


