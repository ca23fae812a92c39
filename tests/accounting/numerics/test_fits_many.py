"""fits_many.py: the grids of many rows composed in groups are checked before any is composed,
so that a tree too long for its grid is coarsened once, not group after group."""
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from prvgui.accounting import Accountant, Row, SubsampledGaussian
from prvgui.accounting.core.errors import GridTooLarge
from prvgui.accounting.kinds.discrete_gaussian import DiscreteGaussian
from prvgui.accounting.numerics import compose, fits_many, tree
from prvgui.accounting.numerics.discretize import discretize
from prvgui.accounting.numerics.tilt import tilt_row
from prvgui.accounting.numerics.window import PreparedRow, choose_window


def _sg(n, seed=0, sigma=(0.8, 1.5), q=(0.001, 0.01)):
    rng = np.random.default_rng(seed)
    return [Row(SubsampledGaussian(float(s), float(p)), 1)
            for s, p in zip(rng.uniform(*sigma, n), rng.uniform(*q, n))]


def _failures(monkeypatch):
    """Every composition tree.py starts that raises GridTooLarge."""
    failed = []
    real = tree.compose

    def counting(rows, mass, *a, **k):
        try:
            return real(rows, mass, *a, **k)
        except GridTooLarge as exc:
            failed.append(exc.n)
            raise
    monkeypatch.setattr(tree, "compose", counting)
    return failed


@pytest.mark.parametrize("rows, delta, n_max", [
    (_sg(400), 1e-6, 40_000),
    ([Row(DiscreteGaussian(float(s)), 1) for s in np.random.default_rng(1).uniform(50, 200, 600)], 1e-8, 20_000)])
def test_a_tree_too_long_for_its_grid_is_coarsened_before_composing(monkeypatch, rows, delta, n_max):
    """On a grid of a few 10^4 points these trees need a coarser mesh. Before the check each
    composition too long was found when its turn came (here the top of the first, three groups of
    the second, one after the other; 1000 DP-SGD steps on 10^5 points: ten, 7.4 s against 2.3);
    now none fails, and the bracket is still a certified one: it meets the one on the full grid,
    and is wider."""
    failed = _failures(monkeypatch)
    small = Accountant(rows, 0.01, n_max=n_max)
    coarse = small.epsilon(delta)
    assert failed == []
    assert small.eps_error_used > 0.01  # (it was coarsened)
    fine = Accountant(rows, 0.01).epsilon(delta)
    assert coarse.lower <= fine.upper and fine.lower <= coarse.upper
    assert coarse.upper - coarse.lower >= fine.upper - fine.lower


def _rows(sigmas, q, h):
    return [discretize(SubsampledGaussian(s, q).prv("remove"), h, 1e-12, 1 << 26) for s in sigmas]


@settings(max_examples=25, deadline=None)
@given(st.lists(st.floats(0.5, 3.0), min_size=1, max_size=6), st.floats(1e-3, 0.5),
       st.integers(1, 40), st.floats(-13, -2))
def test_the_summary_window_lies_inside_the_certified_one(sigmas, q, count, log_mass):
    """Untilted, each block's mass at its mean gives cumulants at most the row's (Jensen), so
    Chernoff's window from the summaries lies inside compose's certified one; and not far
    inside (here within 25% of its width)."""
    mass = 10.0 ** log_mass
    rows = _rows(sigmas, q, 2e-3)
    lo, hi = fits_many.summary_window([(fits_many.row_summary(d), count) for d in rows], 0.0, mass)
    c_lo, c_hi, _ = choose_window([(PreparedRow(d), count) for d in rows], mass)
    assert c_lo - 1e-9 <= lo <= hi <= c_hi + 1e-9
    assert hi - lo >= 0.75 * (c_hi - c_lo)


@settings(max_examples=15, deadline=None)
@given(st.lists(st.floats(0.5, 3.0), min_size=1, max_size=6), st.floats(1e-3, 0.2),
       st.integers(1, 40), st.floats(0.05, 3.0))
def test_the_tilted_summary_window_is_near_the_tilted_rows_window(sigmas, q, count, lam):
    """Tilted by lambda (each block's mass times e^{lambda mean}: tilt.py's rows are tilted
    cell by cell), the summary's window is the tilted rows' within 25% of its width, and no
    wider than the certified one by more than a few blocks."""
    mass = 1e-10
    rows = _rows(sigmas, q, 2e-3)
    lo, hi = fits_many.summary_window([(fits_many.row_summary(d), count) for d in rows], lam, mass)
    tilted = [tilt_row(d, lam)[0] for d in rows]
    c_lo, c_hi, _ = choose_window([(PreparedRow(t), count) for t in tilted], mass)
    assert abs((hi - lo) - (c_hi - c_lo)) <= 0.25 * (c_hi - c_lo)
    assert hi - lo <= c_hi - c_lo + 0.05


def test_the_compositions_checked():
    """The widest full group of the first level and the largest group: the first FAN_IN^L rows,
    or d FAN_IN^L of them from the level streamed rows are folded on."""
    f = tree.FAN_IN
    assert fits_many.sets(300, f, None) == [(272, 288), (0, 256)]
    assert fits_many.sets(255, f, None) == [(224, 240)]
    assert fits_many.sets(40_000, f, tree.FOLD_FROM) == [(39_984, 40_000), (0, 9 * 4096)]
    assert fits_many.sets(40_000, f, None) == [(39_984, 40_000), (0, 4096)]
    assert fits_many.sets(15, f, None) == []


def test_a_tree_that_fits_is_let_through_from_its_sample():
    """10^4 narrow rows are passed on their sample of 64, each row's summary not made."""
    h = 0.01
    row = discretize(SubsampledGaussian(1.0, 0.01).prv("remove"), h, 1e-12, 1 << 20)
    made = []
    real = fits_many.row_summary
    try:
        fits_many.row_summary = lambda r, *a: made.append(r) or real(r, *a)
        fits_many.check([(row, 1)] * 10_000, 1e-14, 1e-12, compose.N_MAX, 0.0, tree.FAN_IN, None)
    finally:
        fits_many.row_summary = real
    assert len(made) <= fits_many.SAMPLE


def test_a_tree_too_long_raises_with_the_longest_width():
    """The longest of the compositions checked sets the width the mesh is coarsened for."""
    h = 1e-3
    rows = [(discretize(SubsampledGaussian(s, 0.01).prv("remove"), h, 1e-12, 1 << 22), 1)
            for s in np.linspace(0.6, 1.2, 300)]
    with pytest.raises(GridTooLarge) as got:
        fits_many.check(rows, 1e-14, 1e-12, 2_000, 0.0, tree.FAN_IN, None)
    order = sorted(range(len(rows)), key=lambda i: rows[i][0].pmf.size)  # (the tree's order)

    def width(a, b, mass):
        lo, hi = fits_many.summary_window([(fits_many.row_summary(rows[i][0]), 1) for i in order[a:b]], 0.0, mass)
        return hi - lo
    widths = [width(272, 288, 1e-14), width(0, 256, 1e-14), width(0, 300, 1e-12)]
    assert got.value.width == pytest.approx(max(widths)) and got.value.n > 2_000
    assert math.isfinite(got.value.width)
