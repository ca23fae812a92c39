"""The band-limited transforms (band.py) against full FFTs, and the two composition paths
against each other."""
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from prvgui.accounting import Gaussian, Laplace, PureDP, RandomizedResponse, SubsampledGaussian, SubsampledLaplace
from prvgui.accounting.numerics import compose as cmp
from prvgui.accounting.core.errors import GridTooLarge
from prvgui.accounting.numerics.band import band_limit, low_dft
from prvgui.accounting.numerics.compose import compose, power, row_spectrum
from prvgui.accounting.numerics.discretize import discretize

CASES = [
    (SubsampledGaussian(0.8, 0.01), "remove", 10000, 3e-5, 1179648),
    (SubsampledGaussian(0.8, 0.01), "add", 3000, 5e-5, 400000),
    (SubsampledGaussian(2.0, 0.2), "remove", 500, 1e-4, 262144),
    (SubsampledLaplace(0.5, 0.05), "remove", 5000, 5e-5, 524288),
    (Gaussian(30.0), "remove", 2000, 1e-4, 200000),
]


#: no coarse tails, and coarse tails 7 cells wide beyond 1e-6 of the mass (discretize.py)
PLANS = [(0.0, 1), (1e-6, 7)]


@pytest.mark.parametrize("plan", PLANS)
@pytest.mark.parametrize("mech,order,k,h,n", CASES)
def test_low_dft_matches_the_fft_within_its_bound(mech, order, k, h, n, plan):
    d = discretize(mech.prv(order), h, 1e-16, coarse=plan)
    assert (d.sparse is not None) == (d.coarse_prob > 0)  # (bounded supports have no far tails)
    band = band_limit([(d, k)], n)
    assert band is not None and band < n // 16
    x, base, err = low_dft(d, n, band)
    y, base_fft = row_spectrum(d, n)
    assert base == base_fft
    assert np.all(np.abs(x - y[:band]) <= err)
    assert np.max(err) < 1e-13


@pytest.mark.parametrize("plan", PLANS)
@pytest.mark.parametrize("mech,order,k,h,n", CASES)
def test_band_limit_is_an_upper_bound(mech, order, k, h, n, plan):
    d = discretize(mech.prv(order), h, 1e-16, coarse=plan)
    band = band_limit([(d, k)], n)
    y, _ = row_spectrum(d, n)
    with np.errstate(divide="ignore"):
        logp = k * np.log(np.abs(y))
    # every coefficient from the band on is below e^-700 (up to the FFT's own round-off)
    assert np.all(logp[band:] <= -700 + k * 1e-12)
    assert logp[band - 1] > -700 - 50  # and the band is not wildly loose


def test_rows_with_atoms_only_have_no_band():
    d = discretize(PureDP(0.5).prv(), 1e-3, 1e-16)
    assert band_limit([(d, 1000)], 4096) is None
    # but a smooth companion row makes the product decay
    g = discretize(Gaussian(3.0).prv(), 1e-3, 1e-16)
    assert band_limit([(d, 1000), (g, 100)], 1 << 16) is not None


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(st.floats(0.7, 2.0), st.floats(0.005, 0.08), st.integers(5000, 30000),
       st.sampled_from(["remove", "add"]), st.sampled_from(PLANS))
def test_band_and_fft_paths_agree(sigma, q, k, order, plan):
    mech = SubsampledGaussian(sigma, q)
    h = 0.0092 * math.sqrt(2 / (k * 27))
    rows = [(discretize(mech.prv(order), h, 1e-14 / k, coarse=plan), k)]
    banded = compose(rows, 1e-12, agg_max=6e-4, n_max=1 << 24)
    assume(banded.parts.get("band", 0) > 0)  # small grids take the FFT anyway
    try:
        full = _full_fft(rows, 1e-12, agg_max=6e-4, n_max=1 << 24)
    except GridTooLarge:
        assume(False)  # the reference FFT would be too long for a unit test
    _assert_tail_sums_agree(banded, full, [0.2, 0.5, 0.8, 0.95])


def test_dpsgd_at_ten_thousand_steps_takes_the_band_path():
    h = 0.0092 * math.sqrt(2 / (10000 * 27))
    rows = [(discretize(SubsampledGaussian(0.8, 0.01).prv(o), h, 1e-16), 10000) for o in ("remove",)]
    c = compose(rows, 1e-12, agg_max=6e-4)
    assert 0 < c.parts["band"] < 1000 and c.parts["n"] > 10 ** 6


def test_power_of_band_matches_power_of_fft():
    d = discretize(SubsampledGaussian(1.0, 0.05).prv(), 5e-5, 1e-16)
    n, k = 600000, 4000
    band = band_limit([(d, k)], n)
    x, _, _ = low_dft(d, n, band)
    y, _ = row_spectrum(d, n)
    px, py = power(x, k), power(y, k)
    m = min(px.size, py.size)
    assert np.max(np.abs(px[:m] - py[:m])) < 1e-9


def test_steps_curve_with_a_zero_count_matches_the_accountant():
    from prvgui.accounting import Accountant, Row
    rows = [Row(SubsampledGaussian(1.0, 0.02), 3000), Row(Laplace(2.0), 20)]
    acc = Accountant(rows, eps_error=0.01)
    cs, bounds = acc.epsilon_vs_count(0, [0, 1500, 3000], 1e-5)
    alone = Accountant([rows[1]], eps_error=0.01).epsilon(1e-5)
    full = Accountant(rows, eps_error=0.01).epsilon(1e-5)
    assert bounds[0].lower <= alone.upper and alone.lower <= bounds[0].upper
    assert bounds[2].lower <= full.upper and full.lower <= bounds[2].upper


def test_mixed_rows_band_and_fft_paths_agree():
    # a smooth row that decays, a Laplace row and a pure-DP row with atoms: the band proof
    # rests on the smooth row alone, the transforms of the others are evaluated on it
    k_total = 6000 + 40 + 30
    h = 0.0092 * math.sqrt(2 / (k_total * 27))
    rows = [(discretize(SubsampledGaussian(1.0, 0.02).prv(), h, 1e-16), 6000),
            (discretize(Laplace(20.0).prv(), h, 1e-16), 40),
            (discretize(PureDP(0.05).prv(), h, 1e-16), 30)]
    banded = compose(rows, 1e-12, agg_max=6e-4)
    assert banded.parts.get("band", 0) > 0
    _assert_tail_sums_agree(banded, _full_fft(rows, 1e-12, agg_max=6e-4), [0.3, 0.6, 0.9, 0.99])


def _full_fft(rows, mass, **kw):
    """compose() with the band path switched off (the reference)."""
    old = cmp.BAND_FRACTION
    cmp.BAND_FRACTION = 1 << 62
    try:
        full = compose(rows, mass, **kw)
    finally:
        cmp.BAND_FRACTION = old
    assert "band" not in full.parts
    return full


def _assert_tail_sums_agree(banded, full, quantiles):
    """Same grid, and delta-like tail sums within the two stated round-off bounds."""
    assert banded.pmf.size == full.pmf.size and banded.values[0] == full.values[0]
    tol = banded.parts["fp_abs"] + full.parts["fp_abs"]
    for eps in np.quantile(banded.values, quantiles):
        sel = banded.values > eps
        a = np.sum(banded.pmf[sel] * -np.expm1(eps - banded.values[sel]))
        b = np.sum(full.pmf[sel] * -np.expm1(eps - full.values[sel]))
        assert abs(a - b) <= tol


def test_a_row_not_worth_low_dft_joins_the_band_path_through_its_fft():
    """The mixed example at sigma 0.76: its DP-SGD row (144k cells) is cheaper to transform in
    full than by low_dft, the other rows are not; the band path then slices that row's FFT
    (compose.band_dft) instead of giving up the band (5x slower before), and agrees with the
    full FFT path."""
    from prvgui.accounting import RandomizedResponse, ApproxDP
    from prvgui.accounting.numerics.band import worth_it
    k_total = 3000 + 5 + 3 + 1 + 2
    h = 0.0088 * 0.96 * math.sqrt(2 / (k_total * math.log(4e11)))
    rows = [(discretize(SubsampledGaussian(0.7619, 0.01).prv(), h, 1e-16), 3000),
            (discretize(Gaussian(20.0).prv(), h, 1e-16), 5), (discretize(Laplace(10.0).prv(), h, 1e-16), 3),
            (discretize(RandomizedResponse(0.1).prv(), h, 1e-16), 1),
            (discretize(ApproxDP(0.05, 1e-8).prv(), h, 1e-16), 2)]
    banded = compose(rows, 1e-12, agg_max=6e-4)
    band, n = banded.parts.get("band", 0), banded.parts["n"]
    assert band > 0 and not worth_it(n, band, rows[0][0].pmf.size)
    assert any(worth_it(n, band, d.pmf.size) for d, _ in rows[1:])
    _assert_tail_sums_agree(banded, _full_fft(rows, 1e-12, agg_max=6e-4), [0.3, 0.6, 0.9, 0.99])
    # the sliced FFT's error model against the rigorous low_dft, coefficient by coefficient
    x, _, err = cmp.band_dft(rows[0][0], n, band)
    y, _, err_low = low_dft(rows[0][0], n, band)
    assert np.all(np.abs(x - y) <= err + err_low)


@pytest.mark.parametrize("c,n", [(1500, 1 << 19), (240, 120000), (60, 46656), (800, 432000), (20, 1 << 16)])
def test_the_band_screen_loses_nothing(c, n):
    """band.may_pay says False only where band_limit's proof would find no band the band path
    can use (none below n / 16 at which some row is worth low_dft)."""
    from prvgui.accounting.numerics.band import may_pay, tv_band, worth_it
    k_total = c + 5 + 3 + 1
    h = 0.0092 * math.sqrt(2 / (k_total * 27))
    rows = [(discretize(SubsampledGaussian(0.8, 0.01).prv(), h, 1e-16), c),
            (discretize(Gaussian(20.0).prv(), h, 1e-16), 5),
            (discretize(Laplace(10.0).prv(), h, 1e-16), 3),
            (discretize(RandomizedResponse(0.1).prv(), h, 1e-16), 1)]
    m_tv = tv_band(rows, n)
    if m_tv is None:
        return
    if not may_pay(rows, n, n // 16, m_tv):
        band = band_limit(rows, n)
        assert band is None or band > n // 16 or not any(worth_it(n, band, d.pmf.size) for d, _ in rows)


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 5000), st.integers(1, 12), st.sampled_from([4320, 43200, 432000]),
       st.integers(1, 2000), st.integers(0, 2 ** 31))
def test_sparse_dft_is_within_its_bound_of_the_exact_sum(cells, nz, n, band, seed):
    # a row whose mass sits in a few cells (atoms), against the sum in 40-digit arithmetic
    import mpmath
    from prvgui.accounting.numerics.band import sparse_dft
    from prvgui.accounting.numerics.discretize import DiscretePRV
    rng = np.random.default_rng(seed)
    band = min(band, n // 2)
    idx = rng.choice(cells, min(nz, cells), replace=False)
    pmf = np.zeros(cells)
    pmf[idx] = rng.random(idx.size) + 1e-3
    pmf /= pmf.sum()
    centre = int(rng.integers(0, cells))
    d = DiscretePRV(pmf, -17, 0.01, 0.0, 0.0, 0.0, 0.0, centre=centre)
    x, base, err = sparse_dft(d, n, band)
    assert base == d.start + centre == row_spectrum(d, n)[1]
    mpmath.mp.dps = 40
    for m in sorted({0, band - 1, *rng.integers(0, band, 8).tolist()}):
        exact = mpmath.fsum(mpmath.mpf(float(pmf[j])) * mpmath.expj(-2 * mpmath.pi * m * (int(j) - centre) / n)
                            for j in idx)
        assert abs(complex(exact) - x[m]) <= err[m]


def test_a_row_of_two_atoms_is_summed_directly_on_the_band():
    # randomized response's two atoms lie thousands of empty cells apart on a fine mesh
    from prvgui.accounting.numerics.band import sparse_worth
    d = discretize(RandomizedResponse(1.0).prv("remove"), 2e-4, 1e-12, 1 << 24)
    nz = int(np.count_nonzero(d.pmf))
    assert nz == 2 and d.pmf.size > 5000 and sparse_worth(432000, 940, nz, d.pmf.size)
    x, base, err = cmp.band_dft(d, 432000, 940)
    spec, base_fft = row_spectrum(d, 432000)
    assert base == base_fft and np.all(np.abs(x - spec[:940]) <= err + 1e-15)


def _log_prod_at_top(rows):
    """band._tv_band's log product at s = 1 (the highest frequency), from the rows' _tv."""
    from prvgui.accounting.numerics.band import _log_bound, _tv
    return sum(k * _log_bound(_tv(d), 1.0) for d, k in rows)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 3000), st.floats(0.3, 400.0), st.integers(1, 40),
                          st.sampled_from(["bell", "comb", "flat", "spike"])), min_size=1, max_size=20),
       st.integers(0, 2 ** 31))
def test_the_floor_screen_fires_only_where_the_tv_bounds_stay_above_the_floor(shapes, seed):
    """band._stays_above_floor says True only where every row's total-variation bound keeps
    the product above e^LOG_FLOOR at s = 1 (so tv_band gives None there either way): rows of
    every shape, smooth wide bells (where the bound is smallest) among them."""
    from prvgui.accounting.numerics.band import LOG_FLOOR, _stays_above_floor
    from prvgui.accounting.numerics.discretize import DiscretePRV
    rng = np.random.default_rng(seed)
    rows = []
    for width, spread, k, shape in shapes:
        j = np.arange(width, dtype=float)
        if shape == "bell":
            p = np.exp(-0.5 * ((j - width / 2) / spread) ** 2)
        elif shape == "comb":
            p = np.where(np.arange(width) % 3 == 0, rng.random(width), 0.0)
        elif shape == "flat":
            p = np.ones(width)
        else:
            p = np.zeros(width)
            p[rng.integers(width)] = 1.0
        if not p.sum() > 0:
            continue
        rows.append((DiscretePRV(p / p.sum(), 0, 1e-3, 0.0, 0.0, 0.0, 0.0), k))
    assume(rows)
    if _stays_above_floor(rows):
        assert _log_prod_at_top(rows) > LOG_FLOOR


def test_the_floor_screen_fires_on_a_group_of_discrete_gaussians():
    """The case it is for: a tree's group of 16 discrete Gaussians on the mesh of 10^4 of them
    (their lattice fills about one cell in one, so the bounds stay near 1), where tv_band
    then gives None as before."""
    from prvgui.accounting.kinds.discrete_gaussian import DiscreteGaussian
    from prvgui.accounting.numerics.band import _stays_above_floor, tv_band
    h = 1.9e-5
    rows = [(discretize(DiscreteGaussian(s).prv(), h, 1e-21), 1) for s in np.linspace(50, 200, 16)]
    assert _stays_above_floor(rows)
    assert tv_band(rows, 1 << 16) is None
    assert _log_prod_at_top(rows) > -700.0
