"""window.choose_windows (a steps curve's windows at once) against choose_window count by count."""
from __future__ import annotations

import math

import numpy as np
import pytest

from prvgui.accounting.numerics.discretize import discretize
from prvgui.accounting.mechanisms import Laplace, RandomizedResponse, SubsampledGaussian
from prvgui.accounting.numerics.window import PreparedRow, choose_window, choose_windows


def rows(h: float = 2e-3):
    sg = discretize(SubsampledGaussian(0.9, 0.05).prv("remove"), h, 1e-14)
    lap = discretize(Laplace(3.0).prv("remove"), h, 1e-14)
    rr = discretize(RandomizedResponse(0.4).prv("remove"), h, 1e-14)
    return sg, lap, rr


@pytest.mark.parametrize("mass", [1e-6, 1e-12])
@pytest.mark.parametrize("with_fixed", [True, False])
def test_each_window_is_at_least_as_tight_and_as_sure(mass, with_fixed):
    sg, lap, rr = rows()
    fixed = [(PreparedRow(lap), 4), (PreparedRow(rr), 3)] if with_fixed else []
    row = PreparedRow(sg)
    counts = np.array([0, 1, 2, 7, 30, 120, 500, 2000])
    got = choose_windows(fixed, row, counts, mass)
    for c, (lo, hi, err) in zip(counts, got):
        rows_c = fixed + ([(PreparedRow(sg), int(c))] if c > 0 else [])
        if not rows_c:
            assert (lo, hi, err) == (0.0, 0.0, 0.0)
            continue
        lo1, hi1, err1 = choose_window(rows_c, mass)
        assert lo >= lo1 - 1e-12 * max(1.0, abs(lo1)) and hi <= hi1 + 1e-12 * max(1.0, abs(hi1))
        assert err <= mass and err == pytest.approx(err1) or (err <= err1)
        assert (hi - lo) >= 0.98 * (hi1 - lo1)  # the same search: at most the grid's 1-2% apart


def test_mass_outside_is_within_the_bound():
    """The exact composed pmf of few draws (numpy convolution) has at most ``err`` outside."""
    sg, lap, rr = rows(h=0.02)
    mass = 1e-3
    for c, (lo, hi, err) in zip([1, 3, 6], choose_windows([(PreparedRow(rr), 2)], PreparedRow(sg), np.array([1, 3, 6]), mass)):
        pmf, start = rr.pmf, rr.start
        pmf = np.convolve(pmf, rr.pmf)
        start = 2 * rr.start
        for _ in range(c):
            pmf = np.convolve(pmf, sg.pmf)
            start += sg.start
        h = sg.h
        x = (start + np.arange(pmf.size)) * h + 2 * rr.shift + c * sg.shift
        outside = pmf[(x < lo - 1e-12) | (x > hi + 1e-12)].sum()
        assert outside <= err + 1e-12
        assert math.isfinite(lo) and math.isfinite(hi)


@pytest.mark.parametrize("mass", [1e-4, 1e-14])
def test_a_warm_start_finds_the_same_window(mass):
    """choose_window with a hint (tree.py's groups of one level): from an empty hint it finds the
    full search's window and records the best lambdas; from those, or a few indices off, the
    same window again; from any start at all a window whose mass bound holds (exact convolution)
    and lies within the support."""
    sg, lap, rr = rows(h=0.02)
    for parts in ([(sg, 1)], [(sg, 6), (lap, 3)], [(rr, 20), (lap, 1), (sg, 2)]):
        prepared = [(PreparedRow(d), k) for d, k in parts]
        full = choose_window(prepared, mass)
        hint: dict[bool, int] = {}
        assert choose_window(prepared, mass, hint) == pytest.approx(full, rel=1e-12, abs=1e-15)
        assert set(hint) == {False, True}
        found = dict(hint)
        for off in (-3, 0, 2):
            near = {side: j + off for side, j in found.items()}
            assert choose_window(prepared, mass, near) == pytest.approx(full, rel=1e-12, abs=1e-15)
        pmf, start = np.ones(1), 0
        for d, k in parts:
            for _ in range(k):
                pmf, start = np.convolve(pmf, d.pmf), start + d.start
        x = (start + np.arange(pmf.size)) * sg.h + sum(k * d.shift for d, k in parts)
        for begin in (0, 17, 45, 90):
            lo, hi, err = choose_window(prepared, mass, {False: begin, True: begin})
            assert err <= mass and x[0] - 1e-12 <= lo <= hi <= x[-1] + 1e-12
            assert pmf[(x < lo - 1e-12) | (x > hi + 1e-12)].sum() <= err + 1e-12
