"""The composed loss's largest value caps epsilon (accountant.loss_cap): a composition of
bounded losses has delta(eps) = 0 from their sum on, so its epsilon(delta) is at most that sum
at every delta, however small (float64's error terms cannot resolve delta = 1e-200; the upper
end was infinite there)."""
import math

import numpy as np
import pytest

from prvgui.accounting import (Accountant, ApproxDP, PureDP, RandomizedResponse, Row, SubsampledGaussian,
                               SubsampledLaplace)
from prvgui.accounting.mechanisms import Gaussian, Laplace


def test_fifty_laplace_draws_at_a_tiny_delta_are_bracketed_at_their_largest_loss():
    # 50 draws of Laplace(b = 10): the loss is at most 5, and the atom at 5 (mass
    # (e^{-0.1}/2)^50 ~ 6e-18) puts epsilon(1e-200) within 2e-183 of it
    acc = Accountant([Row(Laplace(10.0), 50)], 0.01)
    for delta in (1e-200, 1e-300):
        b = acc.epsilon(delta)
        assert b.lower <= 5.0 <= b.upper <= 5.0 + 1e-6
    assert acc.loss_cap() == pytest.approx(5.0, abs=1e-6)


def test_delta_is_zero_beyond_the_largest_loss_and_positive_below_it():
    acc = Accountant([Row(Laplace(10.0), 50), Row(Laplace(5.0), 2)], 0.01)
    cap = acc.loss_cap()
    assert 5.4 <= cap <= 5.4 + 1e-6
    b = acc.delta(cap)
    assert (b.lower, b.estimate, b.upper) == (0.0, 0.0, 0.0)
    assert acc.delta(5.3).upper > 0
    eps = np.array([1.0, 5.3, cap, 7.0])
    lo, est, up = acc.delta_curve(eps)
    assert list(up[2:]) == [0.0, 0.0] and up[1] > 0 and np.all(lo <= up)


def test_the_steps_curve_is_capped_count_by_count():
    acc = Accountant([Row(Laplace(10.0), 50), Row(Laplace(5.0), 2)], 0.01)
    cs, bounds = acc.epsilon_vs_count(0, [0, 10, 50, 100], 1e-200)
    for c, b in zip(cs, bounds):
        top = c / 10.0 + 2 / 5.0
        assert b.lower <= top + 1e-6 and b.upper <= top + 1e-6 and math.isfinite(b.upper)


@pytest.mark.parametrize("rows", [[Row(Gaussian(2.0), 3)], [Row(SubsampledGaussian(1.0, 0.01), 100)],
                                  [Row(Laplace(10.0), 5), Row(Gaussian(20.0), 1)]])
def test_an_unbounded_loss_has_no_cap(rows):
    acc = Accountant(rows, 0.01)
    assert acc.loss_cap() == math.inf


@pytest.mark.parametrize("mech,order,top", [
    (Laplace(2.0), "remove", 0.5), (Laplace(1.0, 3.0), "add", 3.0),
    (RandomizedResponse(2.0), "remove", 2.0), (PureDP(0.5), "add", 0.5),
    # Poisson subsampling: log(1 - q + q e^{+-eps0}) at the extremes of the base loss
    (SubsampledLaplace(1.0, 0.1), "remove", math.log1p(0.1 * math.expm1(1.0))),
    (SubsampledLaplace(1.0, 0.1), "add", -math.log1p(0.1 * math.expm1(-1.0))),
    (SubsampledLaplace(0.3, 0.03), "remove", math.log1p(0.03 * math.expm1(1 / 0.3))),
    (SubsampledGaussian(1.0, 0.1), "add", -math.log1p(-0.1)),
    (SubsampledGaussian(1.0, 0.1), "remove", math.inf), (ApproxDP(0.3, 1e-3), "remove", math.inf),
], ids=str)
def test_the_largest_loss_of_a_run_is_the_closed_form(mech, order, top):
    got = mech.prv(order).max_loss
    assert got == top if math.isinf(top) else got == pytest.approx(top, rel=1e-12)
