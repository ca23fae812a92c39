"""DP-SGD cross-checks against prv-accountant 0.2.0 and dp-accounting 0.6.0 (test extras only)."""
import pytest

from prvgui.accounting import Accountant, Row, SubsampledGaussian

CASES = [(0.8, 0.01, 1000), (0.8, 0.01, 10000), (1.1, 0.004, 5000), (2.0, 0.05, 2000)]


@pytest.mark.parametrize("sigma,q,k", CASES)
def test_against_prv_accountant(sigma, q, k):
    from prv_accountant import PoissonSubsampledGaussianMechanism, PRVAccountant
    delta = 1e-5
    ours = Accountant([Row(SubsampledGaussian(sigma, q), k)], eps_error=0.01).epsilon(delta)
    prv = PoissonSubsampledGaussianMechanism(noise_multiplier=sigma, sampling_probability=q)
    acc = PRVAccountant(prvs=prv, max_self_compositions=k, eps_error=0.01, delta_error=delta / 1000)
    lo, est, up = acc.compute_epsilon(delta=delta, num_self_compositions=k)
    # the two brackets must overlap and the estimates agree to within the error
    assert ours.lower <= up and lo <= ours.upper
    assert abs(ours.estimate - est) <= 0.02


@pytest.mark.parametrize("sigma,q,k", CASES)
def test_against_dp_accounting(sigma, q, k):
    from dp_accounting import dp_event
    from dp_accounting.pld import pld_privacy_accountant
    delta = 1e-5
    ours = Accountant([Row(SubsampledGaussian(sigma, q), k)], eps_error=0.01).epsilon(delta)
    acc = pld_privacy_accountant.PLDAccountant(value_discretization_interval=1e-4)
    acc.compose(dp_event.PoissonSampledDpEvent(q, dp_event.GaussianDpEvent(sigma)), k)
    pessimistic = acc.get_epsilon(delta)
    # dp_accounting's pessimistic PLD is an upper bound: our lower bound cannot exceed it
    assert ours.lower <= pessimistic + 1e-9
    # ...and it is close to the truth: our estimate lies within its discretisation bias
    assert ours.estimate <= pessimistic + 1e-9
    assert pessimistic - ours.estimate <= 0.05 + 1e-4 * k
