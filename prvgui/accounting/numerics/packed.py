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


Row = DiscretePRV | PackedRow


def _packed(d: DiscretePRV, nz: np.ndarray, mass: np.ndarray, size: int) -> Row:
    """The row whose ``size`` cells hold ``mass`` at ``nz`` (its other fields ``d``'s): packed when
    at most PACK_DENSITY of its cells hold mass, else with its array of cells."""
    if nz.size > PACK_DENSITY * size:
        if d.pmf.size == size:
            return d
        pmf = np.zeros(size)
        pmf[nz] = mass
        return replace(d, pmf=pmf)
    return PackedRow(replace(d, pmf=_EMPTY), nz.astype(np.int32) if size < 2 ** 31 else nz, mass, size)


def pack(d: DiscretePRV) -> Row:
    """The row packed when at most PACK_DENSITY of its cells hold mass, else itself."""
    nz = np.flatnonzero(d.pmf)
    return _packed(d, nz, d.pmf[nz], int(d.pmf.size))


def discretize_packed(prv, h: float, tau: float, max_cells: int = 2 ** 26, coarse=(0.0, 1),
                      progress=None, tiers=()) -> Row:
    """discretize.discretize packed as ``pack`` would, without making the array of every cell
    first."""
    return _packed(*discretize_cells(prv, h, tau, max_cells, coarse, progress, tiers))


def dense(d: Row) -> DiscretePRV:
    """The row with its array of cells (the same values as before packing)."""
    if isinstance(d, DiscretePRV):
        return d
    pmf = np.zeros(d.cells)
    pmf[d.idx] = d.vals
    return replace(d.stub, pmf=pmf)


def stub(d: Row) -> DiscretePRV:
    """The row's fields for the certificate (its masses may be left out)."""
    return d if isinstance(d, DiscretePRV) else d.stub


def cells(d: Row) -> int:
    return d.pmf.size if isinstance(d, DiscretePRV) else d.cells
