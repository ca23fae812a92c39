"""scipy.special.ndtr, the normal distribution function under the Gaussian PRVs' cdf and sf,
against mpmath at 40 digits: the accuracy that discretize.CDF_ULPS certifies, with a margin."""
import mpmath as mp
import numpy as np
import pytest
from scipy.special import ndtr

from prvgui.accounting.numerics.discretize import CDF_ULPS

U = 2.0 ** -53
#: the certificate's constant must exceed the measured error at least this many times
MARGIN = 4
#: backward part of the relative error: the computed ndtr(z) is compared with the exact one
#: at points within SHIFT u |z| of z (at most SHIFT ulps of z)
SHIFT = 3.0
#: below this the values are subnormal or nearly so; the engine cuts its tails far above it
TINY = mp.mpf(1e-300)


def _arguments() -> np.ndarray:
    """z in [-40, 40] (beyond it ndtr is 0 to below 1e-300, or 1 to half an ulp): uniform,
    dense near 0 on a log scale on both sides, dense in the lower tail, and random."""
    near0 = np.geomspace(1e-15, 2.0, 1500)
    rng = np.random.default_rng(10)
    return np.unique(np.concatenate([np.linspace(-40.0, 40.0, 8001), near0, -near0,
                                     -np.linspace(5.0, 38.5, 6701), rng.uniform(-40.0, 40.0, 8000),
                                     [0.0]]))


def _chunked(z: np.ndarray, n: int) -> np.ndarray:
    return np.concatenate([ndtr(z[i:i + n]) for i in range(0, z.size, n)])


@pytest.fixture(scope="module")
def measured() -> dict[str, float]:
    """The largest errors of ndtr on _arguments(), in units of u = 2^-53, for one long array,
    arrays of 7 and single values (the engine calls it on cell edges by the hundred thousand
    and on a few points at a time in its searches)."""
    mp.mp.dps = 40
    z = _arguments()
    out = ndtr(z)
    for other in (_chunked(z, 7), np.array([ndtr(float(v)) for v in z])):
        assert np.array_equal(out, other)  # one scalar kernel whatever the length
    worst = {"abs": 0.0, "rel": 0.0, "rel_unshifted": 0.0}
    for zi, v in zip(z.tolist(), out.tolist()):
        exact = mp.ncdf(zi)
        worst["abs"] = max(worst["abs"], float(abs(v - exact)) / U)
        if zi > 0 or exact < TINY:
            continue
        worst["rel_unshifted"] = max(worst["rel_unshifted"], float(abs(v / exact - 1)) / U)
        shift = mp.mpf(SHIFT * U * abs(zi))  # exact (a power of two times zi)
        lo, hi = mp.ncdf(zi - shift), mp.ncdf(zi + shift)
        worst["rel"] = max(worst["rel"], float(max(0, v / hi - 1, 1 - v / lo)) / U)
    return worst


def test_ndtr_absolute_error_is_within_the_certified_cdf_accuracy(measured):
    """The cdf side (left of the split) trusts the cdf to an absolute CDF_ULPS u of the part's
    mass, and there ndtr's arguments take either sign. Measured (scipy 1.17.1, on this grid and
    on a denser one of 120 000 points): at most 1.4 u over [-40, 40]."""
    assert MARGIN * measured["abs"] <= CDF_ULPS, measured


def test_ndtr_lower_tail_relative_error_is_within_the_certified_sf_accuracy(measured):
    """The sf side trusts the sf to a relative CDF_ULPS u at a point within 64 ulps (1 + |t|) of
    the edge; the PRVs compute the sf as ndtr(-z) so that ndtr only sees z <= 0 there (ndtr(z)
    for z > 0 is close to 1 and accurate only in absolute terms).

    Measured (scipy 1.17.1, on this grid and on a denser one of 120 000 points), for z <= 0 with
    ndtr(z) >= 1e-300: the computed value is the exact one at a point within 3 u |z| of z, times
    (1 +- 3.9 u); the residual is largest for z in [-5, -1] and 0 below -5. The shift is the
    rounding of 1/sqrt(2) (0.62 u), of z / sqrt(2) and of the square in exp(-x^2) (measured
    between -2.1 and +0.8 u |z| below z = -5); each is a relative error of x that the slope
    2 x^2 of log erfc amplifies, so without the shift the relative error grows like z^2 (at
    most 2.2 z^2 u; 2140 u near z = -37). In a PRV the shift moves the point at which the sf is
    evaluated by a few u times |t| plus a constant of the mechanism (|log q| for a subsampled
    one), inside discretize's allowance of 64 ulps (1 + |t|), which test_prv_contract checks
    mechanism by mechanism."""
    assert MARGIN * measured["rel"] <= CDF_ULPS, measured


def test_ndtr_edge_values():
    assert list(ndtr(np.array([-np.inf, 0.0, np.inf]))) == [0.0, 0.5, 1.0]
    assert np.isnan(ndtr(np.nan)) and ndtr(-40.0) == 0.0 and ndtr(9.0) == 1.0
    assert ndtr(np.zeros((3, 4))).shape == (3, 4) and ndtr(np.array([])).shape == (0,)
