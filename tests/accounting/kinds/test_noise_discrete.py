"""The noise read-out of the discrete kinds (Result.noise_95): the smallest whole m with
P(|X| <= m) >= 95%, against exact sums over the integers in mpmath (discrete Gaussian:
P(x) proportional to exp(-x^2 / (2 sigma^2)); discrete Laplace: exp(-|x| / t))."""
import mpmath as mp
import pytest

from prvgui.accounting.mechanisms import MECHANISM_KINDS

mp.mp.dps = 40


def inside(weight, m: int, reach: int) -> mp.mpf:
    """P(|X| <= m) for the distribution with weights weight(x), summed over |x| <= reach."""
    z = weight(0) + 2 * mp.fsum(weight(x) for x in range(1, reach))
    return (weight(0) + 2 * mp.fsum(weight(x) for x in range(1, m + 1))) / z


@pytest.mark.parametrize("sigma", [0.3, 0.8, 1.0, 3.7, 20.0])
def test_discrete_gaussian_half_width_is_the_exact_95_percent_point(sigma):
    mech = MECHANISM_KINDS["discrete_gaussian"](sigma)
    m, unit = mech.noise_halfwidth(0.95)
    assert m == int(m) and "whole numbers" in unit
    s2 = mp.mpf(sigma) ** 2
    weight = lambda x: mp.exp(-mp.mpf(x) ** 2 / (2 * s2))  # noqa: E731
    reach = int(40 * sigma) + 5
    assert inside(weight, int(m), reach) >= 0.95
    assert m == 0 or inside(weight, int(m) - 1, reach) < 0.95


@pytest.mark.parametrize("scale", [0.2, 1.0, 2.5, 10.0, 333.0])
def test_discrete_laplace_half_width_is_the_exact_95_percent_point(scale):
    mech = MECHANISM_KINDS["discrete_laplace"](scale)
    m, _ = mech.noise_halfwidth(0.95)
    t = mp.mpf(scale)
    weight = lambda x: mp.exp(-abs(mp.mpf(x)) / t)  # noqa: E731
    reach = int(120 * scale) + 5
    assert inside(weight, int(m), reach) >= 0.95
    assert m == 0 or inside(weight, int(m) - 1, reach) < 0.95
