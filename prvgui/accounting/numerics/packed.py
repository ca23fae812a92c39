"""Many discretised rows held as their nonzero cells only, until each is composed.

A composition of thousands of distinct rows holds them all between their discretisation and
their group's composition (tree.py). Most of a row's cells are empty where its tails have wide
cells, and a lattice loss (a discrete Gaussian's) fills one cell in five to twenty: 10^4
discrete Gaussians hold 800 MB as arrays of cells and 200 MB as their nonzero cells. A packed
row keeps every field of the discretisation but the masses (``stub``, whose scalars are all the
certificate needs) and the masses at their indices; ``dense`` gives back the very row.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable

import numpy as np

from .discretize import _EMPTY, DiscretePRV, discretize_cells

#: rows whose share of nonzero cells is above this stay as they are
PACK_DENSITY = 0.5


@dataclass(frozen=True, slots=True)
class PackedRow:
    """A discretised row as (its fields without the masses, the nonzero cells' indices and
    masses, the number of cells)."""

    stub: DiscretePRV
    idx: np.ndarray
    vals: np.ndarray
    cells: int

    @property
    def inf_mass(self) -> float:
        return self.stub.inf_mass


@dataclass(frozen=True, slots=True)
class LazyRow:
    """A discretised row held as what the composition needs before its cells (streaming, in
    pipeline.discretize_many): its certificate fields (``stub``, without the tails' cell
    indices), its number of cells, a block summary for choosing a tilt (``blocks``, kept in a
    Store until the tilt is chosen: ``let_go_summaries``), and ``remake``, which discretises it
    again when its group takes it: the same cells, as discretisation is deterministic
    (``dense`` checks the fields the certificate read)."""

    stub: DiscretePRV
    cells: int
    summary: "Summary | None"
    remake: Callable[[], "DiscretePRV | PackedRow"]

    @property
    def inf_mass(self) -> float:
        return self.stub.inf_mass

    @property
    def blocks(self) -> tuple[np.ndarray, np.ndarray, float] | None:
        """window.cgf_blocks of the row (log masses, means, half-width); None: no finite mass."""
        return None if self.summary is None else self.summary.blocks()


Row = DiscretePRV | PackedRow | LazyRow


#: a Store's arrays hold this many numbers (1 MB)
STORE_CHUNK = 1 << 17


class Store:
    """Many small arrays kept for long, copied side by side into a few large ones. Streamed rows
    keep their block summaries until the tilt is chosen, two arrays of up to 64 numbers a row,
    and their width classes to the end; each made on its own would be a small block of glibc's
    heap among the short-lived arrays discretised around it, and a page holding one cannot go
    back to the system when everything else on it is freed (heap.py). ``release`` lets the
    store's arrays go at once (a view ``put`` gave keeps its own)."""

    __slots__ = ("_chunk", "_chunks", "_used")

    def __init__(self, chunk: int = STORE_CHUNK) -> None:
        self._chunk = chunk
        self._chunks: list[np.ndarray] | None = []
        self._used = 0

    def _place(self, size: int) -> tuple[int, int]:
        chunks = self._arrays()
        if not chunks or size > chunks[-1].size - self._used:
            chunks.append(np.empty(max(self._chunk, size)))
            self._used = 0
        at, self._used = self._used, self._used + size
        return len(chunks) - 1, at

    def _arrays(self) -> list[np.ndarray]:
        if self._chunks is None:
            raise RuntimeError("a streamed row's block summary was read after it was let go")
        return self._chunks

    def put(self, a: np.ndarray) -> np.ndarray:
        """A float64 view, in this store's arrays, of a copy of ``a`` (1-D)."""
        i, at = self._place(a.size)
        v = self._arrays()[i][at:at + a.size]
        v[...] = a
        return v

    def summary(self, logp: np.ndarray, centres: np.ndarray, w: float) -> "Summary":
        """The block summary (logp, centres, w) kept here (logp and centres of one length)."""
        i, at = self._place(2 * logp.size)
        chunk = self._arrays()[i]
        chunk[at:at + logp.size] = logp
        chunk[at + logp.size:at + 2 * logp.size] = centres
        return Summary(self, i, at, logp.size, w)

    def view(self, i: int, at: int, size: int) -> np.ndarray:
        return self._arrays()[i][at:at + size]

    def release(self) -> None:
        self._chunks = None


class Summary:
    """A streamed row's block summary in a Store: 72 bytes a row (tracemalloc) where two arrays
    of their own and a tuple were 0.3 kB of objects beside their numbers."""

    __slots__ = ("store", "_chunk", "_at", "_size", "_w")

    def __init__(self, store: Store, chunk: int, at: int, size: int, w: float) -> None:
        self.store, self._chunk, self._at, self._size, self._w = store, chunk, at, size, w

    def blocks(self) -> tuple[np.ndarray, np.ndarray, float]:
        both = self.store.view(self._chunk, self._at, 2 * self._size)
        return both[:self._size], both[self._size:], self._w


def let_go_summaries(rows) -> None:
    """Release the stores of the streamed rows' block summaries (tilt.compose_tilted, once its
    tilt is chosen: 10^5 rows, 0.1 GB); reading one afterwards raises."""
    stores = {id(r.summary.store): r.summary.store for r, _ in rows
              if isinstance(r, LazyRow) and r.summary is not None}
    for st in stores.values():
        st.release()


def lazy(d: "DiscretePRV | PackedRow", summary: Summary | None, remake: Callable[[], "DiscretePRV | PackedRow"],
         store: Store | None = None) -> LazyRow:
    """``d`` as a LazyRow (its cells let go; ``summary`` its block summary, ``remake`` makes it
    again). With a ``store``, its width classes are kept there as a k x 2 array (the same
    numbers; a tuple of k pairs of floats is 2k + k + 1 objects, 0.7 kB a row)."""
    s = stub(d)
    classes = s.classes
    if store is not None and len(classes):
        classes = store.put(np.array(classes, dtype=float).ravel()).reshape(-1, 2)
    return LazyRow(replace(s, sparse=None, classes=classes), cells(d), summary, remake)


def _packed(d: DiscretePRV, nz: np.ndarray, mass: np.ndarray, size: int) -> DiscretePRV | PackedRow:
    """The row whose ``size`` cells hold ``mass`` at ``nz`` (its other fields ``d``'s): packed when
    at most PACK_DENSITY of its cells hold mass, else with its array of cells."""
    if nz.size > PACK_DENSITY * size:
        if d.pmf.size == size:
            return d
        pmf = np.zeros(size)
        pmf[nz] = mass
        return d.with_pmf(pmf)
    return PackedRow(d if d.pmf.size == 0 else d.with_pmf(_EMPTY), nz.astype(np.int32) if size < 2 ** 31 else nz, mass, size)


def from_cells(d: DiscretePRV, nz: np.ndarray, mass: np.ndarray, size: int) -> DiscretePRV | PackedRow:
    """The row of discretize_cells' answer (its fields, the nonzero cells' indices and masses,
    its number of cells), packed as ``discretize_packed`` packs it."""
    return _packed(d, nz, mass, size)


def pack(d: DiscretePRV) -> DiscretePRV | PackedRow:
    """The row packed when at most PACK_DENSITY of its cells hold mass, else itself."""
    nz = np.flatnonzero(d.pmf)
    return _packed(d, nz, d.pmf[nz], int(d.pmf.size))


def discretize_packed(prv, h: float, tau: float, max_cells: int = 2 ** 26, coarse=(0.0, 1),
                      progress=None, tiers=(), scan=None) -> DiscretePRV | PackedRow:
    """discretize.discretize packed as ``pack`` would, without making the array of every cell
    first (``scan`` as discretize_cells')."""
    return _packed(*discretize_cells(prv, h, tau, max_cells, coarse, progress, tiers, scan))


def dense(d: Row) -> DiscretePRV:
    """The row with its array of cells (the same values as before packing; a lazy row made
    again)."""
    if isinstance(d, DiscretePRV):
        return d
    if isinstance(d, LazyRow):
        return dense(_remade(d))
    pmf = np.zeros(d.cells)
    pmf[d.idx] = d.vals
    return d.stub.with_pmf(pmf)


def nonzero(d: Row) -> tuple[DiscretePRV, np.ndarray, np.ndarray, int]:
    """(the row's fields, the indices of its nonzero cells in order, their masses, its number of
    cells), without making the array of cells of a packed row (a lazy row is made again)."""
    if isinstance(d, LazyRow):
        return nonzero(_remade(d))
    if isinstance(d, PackedRow):
        return d.stub, d.idx.astype(np.int64), d.vals, d.cells
    nz = np.flatnonzero(d.pmf)
    return d, nz, d.pmf[nz], d.pmf.size


def _remade(d: LazyRow) -> "DiscretePRV | PackedRow":
    """The lazy row made again, checked against the fields the certificate was given: a row
    that came out different would be composed under another row's error terms."""
    got = d.remake()
    if cells(got) != d.cells or _fields(stub(got)) != _fields(d.stub):
        raise RuntimeError("a streamed row was discretised again with other cells than the first "
                           "time; the composition is refused (please report this)")
    return got


def _fields(s: DiscretePRV) -> tuple:
    """Every field of a row but its masses and its tails' cell indices."""
    return (s.start, s.h, s.shift, s.inf_mass, s.tail_prob, s.bias, s.coarse_prob, s.coarse_half, s.fine,
            s.centre, s.mass_rel, s.spread, s.width_max,
            tuple(map(tuple, np.asarray(s.classes, dtype=float).reshape(-1, 2).tolist())))


def stub(d: Row) -> DiscretePRV:
    """The row's fields for the certificate (its masses may be left out)."""
    return d if isinstance(d, DiscretePRV) else d.stub


def cells(d: Row) -> int:
    return d.pmf.size if isinstance(d, DiscretePRV) else d.cells
