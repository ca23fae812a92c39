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


def _spectrum(size: int, seed: int) -> np.ndarray:
    """A decaying complex spectrum of ``size`` coefficients, some exactly zero at the end."""
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(size) + 1j * rng.standard_normal(size)) * np.exp(-np.arange(size) / (1 + size / 4))
    x[size - size // 5:] = 0.0
    return x


@settings(max_examples=150, deadline=None)
@given(st.integers(1, 400), st.integers(1, 64), st.integers(0, 2 ** 31), st.lists(st.integers(0, 500), max_size=6))
def test_tail_sums_are_the_reversed_cumsum_to_every_digit(size, chunk, seed, cuts):
    """compose.tail_sums, the aliasing test's tail sums a chunk at a time: the values of the
    whole array's reversed cumulative sum, bit for bit, whatever the chunk (0 past the end)."""
    from prvgui.accounting.numerics import compose as compose_mod
    x = _spectrum(size, seed)
    tail = np.cumsum(np.abs(x)[::-1])[::-1]
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(compose_mod, "POWER_CHUNK", chunk)
        got = compose_mod.tail_sums(x, cuts)
    assert set(got) == set(cuts)
    for c in cuts:
        assert got[c] == (float(tail[c]) if c < size else 0.0)


@settings(max_examples=150, deadline=None)
@given(st.integers(1, 400), st.integers(1, 64), st.integers(0, 2 ** 31), st.floats(0.0, 1e-10))
def test_power_error_in_chunks_is_the_whole_sum(size, chunk, seed, rel):
    """compose.power_error a chunk at a time: the formula E_0 + 2 sum_m E_m / m summed at once,
    to every digit when one chunk holds the spectrum, within the sums' rounding otherwise."""
    from prvgui.accounting.numerics import compose as compose_mod
    x = _spectrum(size, seed)
    w = np.abs(x) * (rel + 4 * 2.0 ** -52)
    whole = float(w[0]) + 2.0 * float(np.sum(w[1:] / np.arange(1, w.size)))
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(compose_mod, "POWER_CHUNK", chunk)
        got = compose_mod.power_error(x, rel)
    if size <= chunk + 1:
        assert got == whole
    else:
        assert got == pytest.approx(whole, rel=1e-13, abs=0.0)
    assert compose_mod.power_error(x, rel) == whole  # (the default chunk holds these)


@pytest.mark.parametrize("d_max", [0, 3, 9, 40])
@pytest.mark.parametrize("chunk", [7, 1 << 20])
def test_finish_in_chunks_reads_the_same_window(d_max, chunk):
    """compose.finish with its rotation, box kernel and error sums a chunk at a time: the same
    window and decimation as in one go (compose's default chunk), the round-off bound within
    its sums' rounding."""
    from prvgui.accounting.numerics import compose as compose_mod
    n = 1024
    pmf = np.exp(-0.5 * ((np.arange(n) - 500.0) / 40.0) ** 2)
    pmf /= pmf.sum()
    spec = np.fft.rfft(pmf)
    args = (n, 0, 37, 0.01, 0.3, 0.0, 1e-12, 1e-9, d_max * 0.01 / 2)
    want = compose_mod.finish(spec.copy(), *args)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(compose_mod, "POWER_CHUNK", chunk)
        got = compose_mod.finish(spec.copy(), *args)
    assert np.array_equal(got.pmf, want.pmf) and got.h == want.h and got.offset == want.offset
    for key in ("window", "alias", "n", "decimation"):
        assert got.parts[key] == want.parts[key]
    for key in ("fp_power", "fp_abs"):  # (the power term's sum a chunk at a time)
        assert got.parts[key] == pytest.approx(want.parts[key], rel=1e-13, abs=0.0)
    assert got.parts["decimation"] == {0: 1, 3: 4, 9: 8, 40: 16}[d_max]
