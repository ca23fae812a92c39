"""The round-off bound of the composition holds: float64 tail sums stay within the stated
error of the same composition computed with long-double row transforms."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prvgui.accounting import Accountant, Laplace, PureDP, Row, SubsampledGaussian, SubsampledLaplace
from prvgui.accounting.numerics.compose import compose
from prvgui.accounting.numerics.discretize import discretize


def tail_sums(c, eps):
    y, r = c.values, c.pmf
    return np.array([np.sum(r[y > e] * -np.expm1(e - y[y > e])) for e in eps])


@pytest.mark.parametrize("mech,k,h", [
    (SubsampledGaussian(0.8, 0.01), 10000, 3e-5),
    (SubsampledGaussian(2.0, 0.2), 3000, 1e-4),
    (SubsampledLaplace(0.5, 0.05), 5000, 5e-5),
    (Laplace(30.0), 2000, 1e-4),
    (PureDP(0.02), 4000, 2e-4),
])
def test_power_round_off_is_bounded(mech, k, h):
    rows = [(discretize(mech.prv(), h, 1e-16), k)]
    c64 = compose(rows, 1e-14)
    cld = compose(rows, 1e-14, extended=True)
    assert c64.pmf.size == cld.pmf.size and c64.values[0] == cld.values[0]
    eps = np.quantile(c64.values, np.linspace(0.05, 0.95, 25))
    diff = np.abs(tail_sums(c64, eps) - tail_sums(cld, eps))
    assert np.all(diff <= c64.parts["fp_abs"])


def test_long_double_gain_follows_the_draw_counts():
    """Long double cuts the modelled round-off about k-fold for one row drawn k times, and not at
    all for many rows drawn once, whose complex128 products it cannot refine."""
    from prvgui.accounting.numerics.compose import fft_rel_error, long_double_gain
    n = 1 << 20
    assert long_double_gain([10_000], n) < 1e-3
    assert long_double_gain([100] * 300, n) < 0.01
    assert long_double_gain([1] * 1000, n) > 1.0
    # each complex128 factor of a long-double product counts 4 u, which float64's u log2 n covers
    assert fft_rel_error(1000, n, True, 1000, 1000) >= 1000 * 4 * 2.0 ** -53
    assert fft_rel_error(16, 8) == 16 * 4 * 2.0 ** -53


def test_the_curves_long_double_pass_runs_only_where_it_narrows(monkeypatch):
    """delta_curve redoes its small end in long double when round-off dominates there, unless
    long double cannot cut it (40 distinct rows drawn once); opening the gate (LONG_DOUBLE_GAIN)
    makes the same curve take the long-double pass, so the gate is what decides."""
    from prvgui.accounting.queries import accountant as accountant_mod
    rows = [Row(SubsampledGaussian(0.7 + 0.01 * i, 0.05), 1) for i in range(40)]
    eps = np.linspace(0.0, 12.0, 40)
    calls = []
    at = accountant_mod.Accountant._delta_curve_at

    def spy(self, e, level, progress, extended=False):
        calls.append(extended)
        return at(self, e, level, progress, extended)
    monkeypatch.setattr(accountant_mod.Accountant, "_delta_curve_at", spy)
    lo, est, up = Accountant(rows).delta_curve(eps)
    assert calls and not any(calls) and np.all(lo <= up)
    monkeypatch.setattr(accountant_mod, "LONG_DOUBLE_GAIN", 10.0)
    calls.clear()
    lo2, _, up2 = Accountant(rows).delta_curve(eps)
    assert calls[-1] is True
    assert np.all(lo2 <= up2) and np.all(np.maximum(lo, lo2) <= np.minimum(up, up2) * (1 + 1e-9) + 1e-300)


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 3000), st.integers(-10 ** 6, 10 ** 6), st.integers(0, 2 ** 31))
def test_rolled_is_numpys_roll_in_place(n, shift, seed):
    """compose.rolled, the inverse transform's rotation in place: np.roll's values exactly,
    in the array it was given (both directions of the overlapping copy)."""
    from prvgui.accounting.numerics.compose import rolled
    x = np.random.default_rng(seed).standard_normal(n)
    want = np.roll(x, -shift)
    got = rolled(x, shift)
    assert got is x and np.array_equal(got, want)
