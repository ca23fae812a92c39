"""The numpy-only special functions against the C library's erfc and scipy.special."""
import math

import numpy as np
import pytest
import scipy.special as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from prvgui.accounting.special import SHORT, erfc, expit, gammaln, log_ndtr, logsumexp, ndtr, ndtri


def _libm(x: np.ndarray) -> np.ndarray:
    return np.array([math.erfc(v) for v in x.ravel()]).reshape(x.shape)


def _rel(a: np.ndarray, b: np.ndarray) -> float:
    ok = b > 1e-300  # below, both are subnormal and carry few digits
    return float(np.max(np.abs(a[ok] / b[ok] - 1.0)))


GRID = np.concatenate([np.linspace(-30, 30, 60001), np.geomspace(1e-12, 0.5, 300),
                       -np.geomspace(1e-12, 0.5, 300), [0.0, 0.5, -0.5, 4.0, -4.0]])


@pytest.mark.parametrize("order", ["shuffled", "ascending", "descending"])
def test_erfc_relative_error_on_every_piece(order):
    x = np.random.default_rng(0).permutation(GRID)
    if order == "ascending":
        x = np.sort(x)
    elif order == "descending":
        x = np.sort(x)[::-1].copy()
    assert _rel(erfc(x), _libm(x)) < 2e-15


def test_ndtr_matches_scipy_down_to_1e_300():
    z = np.linspace(-37.5, 38, 150001)
    assert _rel(ndtr(z), sp.ndtr(z)) < 1e-13  # scipy itself is off by 6e-14 near z = -34
    assert np.max(np.abs(ndtr(z) - sp.ndtr(z))) < 3e-16


def test_special_values_and_shapes():
    x = np.array([np.nan, np.inf, -np.inf, 0.0, 1e300, -1e300] * 200)  # long: the array path
    assert x.size > SHORT
    out = erfc(x)
    assert np.isnan(out[0]) and out[1] == 0.0 and out[2] == 2.0 and out[3] == 1.0
    assert out[4] == 0.0 and out[5] == 2.0
    assert np.array_equal(np.isnan(erfc(x[:6])), np.isnan(out[:6]))  # the short path agrees
    assert erfc(np.zeros((3, 40))).shape == (3, 40)
    assert erfc(np.array([])).shape == (0,)
    assert float(ndtr(0.0)) == 0.5
    sorted_with_nan = np.array(list(np.linspace(-5, 5, 2 * SHORT)) + [np.nan, np.nan])
    got = ndtr(sorted_with_nan)
    assert np.isnan(got[-2:]).all() and _rel(got[:-2], sp.ndtr(sorted_with_nan[:-2])) < 1e-14


@settings(max_examples=200)
@given(st.floats(-38, 38), st.floats(1e-9, 5))
def test_ndtr_symmetric_and_increasing(z, step):
    a, b, c = ndtr(np.array([z, -z, z + step] * (SHORT // 3 + 1)))[:3]  # the vectorised path
    assert abs(a + b - 1.0) <= 4e-16
    assert 0 <= a <= c <= 1
    # one ulp in z / sqrt(2) moves erfc by a relative z^2 ulp: allow for it
    assert a == pytest.approx(math.erfc(-z / math.sqrt(2)) / 2, rel=5e-16 * (4 + z * z), abs=1e-300)


# ------------------------------------------- the functions the comparison accountants use


def test_log_ndtr_matches_scipy_into_the_far_tail():
    z = np.concatenate([np.linspace(-1e3, 40, 100001), -np.geomspace(1, 1e150, 300)])
    got, ref = log_ndtr(z), sp.log_ndtr(z)
    assert np.max(np.abs(got - ref) / np.maximum(1.0, np.abs(ref))) < 4e-15
    assert log_ndtr(np.array([-np.inf, np.inf]))[0] == -np.inf and log_ndtr(np.array([np.inf]))[0] == 0


def test_ndtri_inverts_ndtr_in_both_tails():
    p = np.concatenate([np.geomspace(1e-300, 0.5, 2000), 1 - np.geomspace(1e-16, 0.5, 2000)])
    got, ref = ndtri(p), sp.ndtri(p)
    assert np.max(np.abs(got - ref) / np.maximum(1.0, np.abs(ref))) < 1e-13
    assert list(ndtri(np.array([0.0, 0.5, 1.0]))) == [-np.inf, 0.0, np.inf]


def test_gammaln_matches_scipy():
    x = np.concatenate([np.geomspace(1e-5, 1e7, 4000), np.arange(1.0, 3000.0), [19.999, 20.0, 20.001]])
    got, ref = gammaln(x), sp.gammaln(x)
    assert np.max(np.abs(got - ref) / np.maximum(1.0, np.abs(ref))) < 4e-15


def test_logsumexp_and_expit_match_scipy():
    t = np.random.default_rng(3).normal(scale=300, size=(6, 9))
    assert np.allclose(logsumexp(t, axis=1), sp.logsumexp(t, axis=1), rtol=1e-15, atol=0)
    assert np.allclose(logsumexp(t, axis=-1), sp.logsumexp(t, axis=-1), rtol=1e-15, atol=0)
    assert logsumexp(t) == pytest.approx(float(sp.logsumexp(t)), rel=1e-15)
    assert logsumexp(np.array([-np.inf, -np.inf])) == -np.inf
    x = np.linspace(-800, 800, 10001)
    assert np.max(np.abs(expit(x) - sp.expit(x))) < 1e-16
