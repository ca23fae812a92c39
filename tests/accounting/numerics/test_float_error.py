"""The round-off bound of the composition holds: float64 tail sums stay within the stated
error of the same composition computed with long-double row transforms."""
import numpy as np
import pytest

from prvgui.accounting import Laplace, PureDP, SubsampledGaussian, SubsampledLaplace
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
