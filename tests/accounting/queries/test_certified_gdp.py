"""Certified mu-GDP (certified_gdp.py): never below the true mu, close to it where it is known."""
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy.stats import norm

import references as ref
from prvgui.accounting.kinds.approx_dp import ApproxDP
from prvgui.accounting.kinds.gaussian import Gaussian
from prvgui.accounting.kinds.laplace import Laplace
from prvgui.accounting.kinds.randomized_response import RandomizedResponse
from prvgui.accounting.kinds.subsampled_gaussian import SubsampledGaussian
from prvgui.accounting.mechanisms import Row
from prvgui.accounting.queries.accountant import Accountant
from prvgui.accounting.queries.certified_gdp import LEVEL, gdp_fit, log_delta_mu
from prvgui.accounting.queries.curves import tradeoff_bounds


def fit(rows, eps_error=0.003, relation="add_remove"):
    return gdp_fit(Accountant(rows, eps_error, relation))


@pytest.mark.parametrize("sigma, count, rel, factor", [(2.0, 3, "add_remove", 1), (0.7, 1, "add_remove", 1),
                                                        (5.0, 100, "replace_one", 2)])
def test_gaussian_is_exact(sigma, count, rel, factor):
    f = fit([Row(Gaussian(sigma), count)], relation=rel)
    assert f.exact and f.regret == 0
    assert f.mu == pytest.approx(factor * math.sqrt(count) / sigma, rel=1e-12)


def test_delta_mu_matches_the_closed_form():
    for mu, eps in [(0.5, 0.1), (1.0, 2.0), (3.0, 10.0), (0.1, 0.5)]:
        assert math.exp(float(log_delta_mu(mu, eps))) == pytest.approx(ref.gaussian_delta(mu, eps), rel=1e-9)


@pytest.mark.parametrize("eps0, k", [(1.0, 1), (0.5, 4), (2.0, 3), (0.2, 20)])
def test_randomized_response_never_below_and_close(eps0, k):
    truth = ref.gdp_mu_of_breakpoints(*ref.rr_kfold_tradeoff(eps0, k))
    f = fit([Row(RandomizedResponse(eps0), k)])
    assert truth <= f.mu <= truth * 1.02
    assert f.tail == "bounded loss" and not f.exact


@pytest.mark.parametrize("scale", [1.0, 0.5, 3.0])
def test_laplace_never_below_and_close(scale):
    a = np.geomspace(1e-14, 0.5, 400001)
    truth = float(np.max(norm.isf(a) + norm.isf(ref.laplace_tradeoff(1.0 / scale, a))))
    f = fit([Row(Laplace(scale), 1)])
    assert truth <= f.mu <= truth * 1.02


@pytest.mark.parametrize("sigma, q", [(1.0, 0.5), (2.0, 0.1), (0.8, 0.01)])
def test_subsampled_gaussian_is_the_unsampled_gaussians_mu(sigma, q):
    """One Poisson-subsampled Gaussian step is exactly (1/sigma)-GDP: subsampling is a
    post-processing of the Gaussian pair (so at most 1/sigma), and as alpha -> 0 the mu needed
    at alpha tends to 1/sigma (the q-weighted tail is the Gaussian's). The certified mu lies at
    or above it; where delta >= 1e-10 far less suffices (resolved_mu)."""
    f = fit([Row(SubsampledGaussian(sigma, q), 1)])
    assert 1 / sigma <= f.mu <= 1.001 / sigma
    assert f.tail == "gaussian tail" and f.resolved_mu < f.mu
    if q <= 0.1:
        assert f.regret > 0.01 and "poorly" in f.note


def test_approximate_dp_has_no_finite_mu():
    f = fit([Row(ApproxDP(1.0, 1e-6), 2), Row(Gaussian(1.0), 1)])
    assert f.mu == math.inf and "row 1" in f.note


MECHS = st.one_of(
    st.builds(Gaussian, st.floats(0.5, 5.0)),
    st.builds(Laplace, st.floats(0.3, 5.0)),
    st.builds(RandomizedResponse, st.floats(0.05, 3.0)),
    st.builds(SubsampledGaussian, st.floats(0.6, 3.0), st.floats(0.01, 1.0)))


@settings(max_examples=15, deadline=None)
@given(st.lists(st.tuples(MECHS, st.integers(1, 20)), min_size=1, max_size=3))
def test_never_below_what_the_curve_itself_demands(rows):
    """Whatever mu is certified, G_mu must lie below the optimistic side of the certified
    tradeoff curve at every alpha (else the composition would not be mu-GDP)."""
    rows = [Row(m, c) for m, c in rows]
    acc = Accountant(rows, 0.01)
    f = gdp_fit(acc)
    alpha = np.geomspace(1e-9, 0.999, 300)
    upper = np.minimum.reduce([tradeoff_bounds(p, alpha)[2] for p in acc.profiles(LEVEL)])
    ok = (upper > 1e-12) & (upper < 1)
    demanded = np.max(norm.isf(alpha[ok]) + norm.isf(upper[ok])) if ok.any() else 0.0
    assert f.mu >= demanded - 1e-9
    assert f.resolved_mu is None or f.resolved_mu <= f.mu * (1 + 1e-9)


@pytest.mark.parametrize("kind, params, relation, group", [
    ("subsampled_gaussian", {"sigma": 0.9, "sampling_rate": 0.3}, "add_remove", 1),
    ("subsampled_gaussian", {"sigma": 0.9, "sampling_rate": 0.3}, "replace_one", 1),
    ("subsampled_gaussian", {"sigma": 1.5, "sampling_rate": 0.05}, "add_remove", 3),
    ("subsampled_gaussian", {"sigma": 1.2, "sampling_rate": 0.1, "sampling": "fixed_size"}, "replace_one", 1),
    ("discrete_gaussian", {"sigma": 2.0}, "add_remove", 1),
    ("shuffled_gaussian", {"sigma": 1.0, "batches_per_epoch": 10}, "add_remove", 1),
    ("truncated_poisson", {"dataset_size": 50, "sampling_rate": 0.2, "max_batch": 8, "sigma": 1.0}, "add_remove", 1),
    ("zcdp", {"rho": 0.3}, "add_remove", 1)])
def test_tail_rho_is_never_beaten_by_the_kinds_own_renyi_curve(kind, params, relation, group):
    """Mechanism.tail_rho claims D_alpha <= rho alpha at every order; each kind's RDP curve (an
    upper bound on the truth, computed independently) must then stay below rho alpha wherever it
    is finite and tight enough to say so: a tail_rho below the true divergence would show here."""
    from prvgui.accounting.core.values import Relation
    from prvgui.accounting.mechanisms import mechanism_from_params
    from prvgui.accounting.pairs.rdp import ORDERS
    mech = mechanism_from_params(kind, params).under(Relation(relation, group))
    rho = mech.tail_rho()
    assert rho is not None and rho > 0
    rdp = mech.rdp(ORDERS)
    # the RDP curve may be looser than rho alpha (then nothing is learned); where it is tighter
    # than the truth can be, it must be consistent: its value at the largest orders is close to
    # the divergence's, which rho alpha must dominate
    big = ORDERS >= 64
    finite = np.isfinite(rdp) & big
    assert np.all(rdp[finite] <= rho * ORDERS[finite] * (1 + 1e-9) + 1e-12)
