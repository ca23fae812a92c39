"""Exceptions shared by the pipeline's stages: a grid that would be too large, and cancellation.

They live apart from compose.py so that discretize.py (below compose) can raise them without
importing compose; compose still re-exports them under their old names.
"""
from __future__ import annotations

from typing import Callable


class GridTooLarge(MemoryError):
    """The window needs more FFT points than allowed; ``width`` is its length in loss units."""

    def __init__(self, n: int, n_max: int, width: float) -> None:
        super().__init__(f"the composition needs an FFT of {n:,} points, more than the limit of {n_max:,}")
        self.n = n
        self.width = width


def grid_exhausted(width: float, eps_error_needed: float, n_max: int) -> MemoryError:
    """The error for a composition whose loss range no allowed grid can hold. Its advice names
    the setting as the form does, "accuracy (ε error)" (the command line puts its option's name
    in its place), and is only ever one piece of advice."""
    msg = (f"the privacy loss of this composition spans {width:.3g} nats, more than "
           f"{n_max:,} grid points can hold at this accuracy")
    if eps_error_needed <= 10:
        msg += f"; an accuracy (ε error) of about {eps_error_needed:.2g} would fit"
    else:
        msg += ("; no accuracy setting is coarse enough: the composition is far from private "
                "at these parameters (for example a very small noise scale)")
    return MemoryError(msg)


class Cancelled(Exception):
    """Raised when a computation is cancelled through its cancel token."""


def check_cancel(cancel: Callable[[], bool] | None) -> None:
    if cancel is not None and cancel():
        raise Cancelled("computation cancelled")
