"""Bayes risk at a prior and reconstruction success (risk.py), calibration to them."""
import math

import pytest
from scipy.stats import norm

import references as ref
from prvgui.accounting.kinds.gaussian import Gaussian
from prvgui.accounting.kinds.randomized_response import RandomizedResponse
from prvgui.accounting.mechanisms import Row
from prvgui.accounting.queries.risk import risk
from prvgui.accounting.queries.risk_calibrate import calibrate_bayes, check_bayes_target


@pytest.mark.parametrize("mu", [0.3, 1.0, 2.5])
@pytest.mark.parametrize("prior", [0.5, 0.2, 0.9, 0.01])
def test_gaussian_bayes_risk_is_bracketed(mu, prior):
    r = risk([Row(Gaussian(1.0 / mu), 1)], priors=(prior,), baselines=(0.01,), gdp=False)
    truth = ref.gdp_bayes_risk(mu, prior)
    b = r.bayes[0]
    assert b.risk.lower - 1e-12 <= truth <= b.risk.upper + 1e-12
    assert b.risk.upper - b.risk.lower <= 1e-6 + 0.02 * truth
    if prior == 0.5:
        assert b.risk.lower <= norm.cdf(-mu / 2) <= b.risk.upper + 1e-12
    d = b.as_dict()
    assert d["accuracy"]["upper"] == pytest.approx(1 - b.risk.lower)


def test_bayes_risk_of_randomized_response():
    """eps-DP randomized response at prior 1/2: the best guess is right with e^eps/(1+e^eps)."""
    r = risk([Row(RandomizedResponse(1.2), 1)], priors=(0.5,), gdp=False)
    truth = 1 / (1 + math.exp(1.2))
    assert r.bayes[0].risk.lower <= truth + 1e-9 and truth <= r.bayes[0].risk.upper + 1e-9


@pytest.mark.parametrize("kappa", [0.001, 0.01, 0.2])
def test_gaussian_reconstruction(kappa):
    mu = 1.3
    r = risk([Row(Gaussian(1.0 / mu), 1)], baselines=(kappa,), gdp=False)
    truth = norm.cdf(norm.ppf(kappa) + mu)
    t = r.reconstruction[0]
    assert t.lower - 1e-12 <= truth <= t.upper + 1e-12
    assert t.upper <= truth * 1.03


def test_calibrate_bayes_gaussian():
    """At prior 1/2, mu-GDP has Bayes risk Phi(-mu/2): a target R needs mu = -2 Phi^-1(R)."""
    target = 0.4
    mu = -2 * norm.ppf(target)
    c = calibrate_bayes([Row(Gaussian(1.0), 4)], 0, "sigma", 0.5, target, eps_error=0.005)
    assert c.value == pytest.approx(2.0 / mu, rel=0.02)
    assert c.value >= 2.0 / mu * (1 - 1e-9)  # never less noise than needed
    d = c.as_dict()
    assert d["bayes_risk"]["lower"] >= target - 1e-12 and d["prior"] == 0.5


@pytest.mark.parametrize("prior, r, words", [(0.5, 0.6, "below 0.5"), (1.5, 0.1, "Prior"),
                                             ("x", 0.1, "Prior"), (0.1, float("nan"), "Target Bayes risk")])
def test_bad_bayes_targets(prior, r, words):
    with pytest.raises(ValueError, match=words):
        check_bayes_target(prior, r)


@pytest.mark.parametrize("bad", [0.0, 1.0, -0.1, float("nan"), "a", True])
def test_bad_priors_name_the_field(bad):
    with pytest.raises(ValueError, match="prior"):
        risk([Row(Gaussian(1.0), 1)], priors=(bad,))


def test_far_priors_read_delta_from_the_profiles_without_a_tilted_composition():
    """At a prior whose delta is below SMALL_DELTA the read-out takes the profiles' bracket (no
    tilted composition of its own), and that bracket still holds the Bayes risk worked out from
    the delta query's own, tilted bracket; at the even prior it is the query's bracket."""
    from prvgui.accounting.kinds.subsampled_gaussian import SubsampledGaussian
    from prvgui.accounting.queries.accountant import Accountant
    from prvgui.accounting.queries.risk import SMALL_DELTA, risk_of
    rows = [Row(SubsampledGaussian(1.0 + 0.05 * i, 0.02), 50) for i in range(4)]
    priors = (0.5, 1e-5)
    acc = Accountant(rows, 0.01, screen=False)
    got = risk_of(acc, (0.01,), priors=priors, baselines=(), gdp=False)
    assert not acc._tilted  # (nothing composed tilted for the far prior)
    x = math.log((1 - 1e-5) / 1e-5)
    far = Accountant(rows, 0.01).delta(x)
    assert far.upper < SMALL_DELTA
    want_lo, want_hi = 1e-5 * (1 - far.upper), 1e-5 * (1 - far.lower)
    b = got.bayes[1].risk
    assert b.lower <= want_lo and want_hi <= b.upper and b.upper - b.lower < 1e-5 * 1e-9
    even = Accountant(rows, 0.01).delta(0.0)
    assert got.advantage.lower == pytest.approx(even.lower) and got.advantage.upper == pytest.approx(even.upper)
