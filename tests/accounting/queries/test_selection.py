"""Hyperparameter tuning (selection.py): Papernot & Steinke's bounds against their closed forms, the
fixed number of runs against the Gaussian closed form, soundness against the exact release of small
pairs, and hostile input."""
import math

import numpy as np
import pytest

import references as ref
from prvgui.accounting.mechanisms import ApproxDP, Gaussian, Laplace, PureDP, RandomizedResponse, Row
from prvgui.accounting.queries.accountant import Accountant
from prvgui.accounting.queries.selection import Tuning, TuningResult, tnb_gamma, tnb_mean, tuned_epsilon

TNB = "truncated_negative_binomial"


def tuned(rows, runs, mean, eta=None, delta=1e-6):
    return tuned_epsilon(rows, "add_remove", delta, Tuning(runs, mean, eta))


# ---------------------------------------------------------------- the parameterisation
@pytest.mark.parametrize("eta", [-0.9, -0.5, 0.0, 0.5, 1.0, 2.0, 7.5])
@pytest.mark.parametrize("gamma", [1e-6, 0.01, 0.3, 0.9, 0.999])
def test_tnb_mean_is_the_papers_formula_and_the_sum_of_the_pmf(eta, gamma):
    # E[K] = eta (1 - gamma) / (gamma (1 - gamma^eta)); (1/gamma - 1) / log(1/gamma) at eta = 0
    paper = (1 / gamma - 1) / math.log(1 / gamma) if eta == 0 else eta * (1 - gamma) / (gamma * (1 - gamma ** eta))
    assert tnb_mean(gamma, eta) == pytest.approx(paper, rel=1e-10)
    if gamma >= 0.3:  # the pmf of D_{eta,gamma} summed directly (Definition 1), where its tail is short
        k = np.arange(1, 20000)
        if eta == 0:
            p = (1 - gamma) ** k / (k * math.log(1 / gamma))
        else:
            ratio = np.cumprod((k - 1 + eta) / k)  # prod_{l<k} (l + eta) / (l + 1)
            p = (1 - gamma) ** k * ratio / (gamma ** -eta - 1)
        assert p.sum() == pytest.approx(1.0, rel=1e-9)
        assert (k * p).sum() == pytest.approx(paper, rel=1e-9)


@pytest.mark.parametrize("eta", [-0.99, -0.5, 0.0, 1.0, 3.0, 1e4])
@pytest.mark.parametrize("mean", [1.0001, 2.0, 10.0, 1e3, 1e9])
def test_gamma_solved_from_the_mean(eta, mean):
    gamma = tnb_gamma(mean, eta)
    if gamma > 0:
        assert tnb_mean(gamma, eta) == pytest.approx(mean, rel=1e-9)
    if eta == 1.0:
        assert gamma == pytest.approx(1 / mean, rel=1e-9)  # geometric


# ---------------------------------------------------------------- pure-DP corollaries
@pytest.mark.parametrize("eta", [-0.5, 0.0, 0.5, 1.0, 2.0])
@pytest.mark.parametrize("row", [Row(PureDP(epsilon=1.0)), Row(Laplace(scale=2.0), 2),
                                 Row(RandomizedResponse(epsilon=0.5), 2)])
def test_truncated_negative_binomial_pure_corollary(eta, row):
    # Papernot & Steinke, Cor. 3: an eps-DP run gives a (2 + eta) eps-DP release, whatever the mean
    # (eta = 1, geometric: Liu & Talwar's 3 eps); here every run is 1-DP. The RDP bound of Thm 2 is
    # reported instead where it is smaller (Laplace and randomized response at low orders)
    for mean in (10.0, 1000.0):
        res = tuned([row], TNB, mean, eta, delta=1e-9)
        assert res.epsilon <= 2 + eta
        if res.method == "pure" or isinstance(row.mechanism, PureDP):
            assert res.method == "pure" and res.epsilon == pytest.approx(2 + eta, rel=1e-12)


def test_geometric_is_three_eps():
    res = tuned([Row(PureDP(epsilon=0.7))], TNB, 100, 1.0, delta=1e-10)
    assert res.method == "pure" and res.epsilon == pytest.approx(2.1, rel=1e-12)
    assert res.as_dict()["epsilon"] == res.epsilon and res.as_dict()["eta"] == 1.0


@pytest.mark.parametrize("eps,mu", [(1.0, 2.0), (0.3, 5.0), (2.0, 1.0)])
def test_poisson_pure(eps, mu):
    # Thm 6 with (eps^, delta^) = (0, tanh(eps/2)) at every order, lam -> infinity
    res = tuned([Row(PureDP(epsilon=eps))], "poisson", mu, delta=1e-9)
    assert res.method == "pure" and res.epsilon == pytest.approx(eps + mu * math.tanh(eps / 2), rel=1e-12)


# ---------------------------------------------------------------- fixed runs: composition
@pytest.mark.parametrize("k", [1, 4, 25])
def test_fixed_runs_compose(k):
    res = tuned([Row(Gaussian(sigma=2.0), 3)], "fixed", k, delta=1e-5)
    exact = ref.gaussian_epsilon(math.sqrt(3 * k) / 2.0, 1e-5)  # k runs of mu: mu sqrt(k)
    assert res.method == "prv" and exact <= res.epsilon <= exact + 0.02


def test_fixed_runs_equal_the_k_fold_accountant():
    rows = [Row(Laplace(scale=3.0), 2), Row(Gaussian(sigma=4.0), 5)]
    res = tuned(rows, "fixed", 3, delta=1e-6)
    acc = Accountant([Row(r.mechanism, 3 * r.count) for r in rows], 0.01, "add_remove")
    assert res.epsilon == acc.epsilon(1e-6).upper


# ---------------------------------------------------------------- the RDP bounds
@pytest.mark.parametrize("runs,eta", [(TNB, 1.0), (TNB, 0.0), (TNB, -0.5), ("poisson", None)])
def test_rdp_bound_above_one_run_and_growing_with_the_mean(runs, eta):
    rows = [Row(Gaussian(sigma=3.0), 4)]
    one = Accountant(rows, 0.01, "add_remove").epsilon(1e-6).lower
    values = [tuned(rows, runs, m, eta).epsilon for m in (1.5, 3, 10, 100, 1e4)]
    assert all(v >= one for v in values)
    assert values == sorted(values) and values[-1] > values[0]
    assert all(tuned(rows, runs, 10, eta).method == "rdp" for _ in [0])


def test_larger_eta_costs_more_for_a_pure_run():
    values = [tuned([Row(PureDP(epsilon=1.0))], TNB, 50, eta).epsilon for eta in (-0.5, 0.0, 1.0, 3.0)]
    assert values == sorted(values)


def _exact_release(p, q, runs, mean, eta):
    """pmfs of the best of K runs of a pair on ordered outputs 0 < 1 < ... (Poisson: an atom for no
    run first): P[best <= y] = f(F(y)), f the generating function of K, written with the survival
    function S = 1 - F (1 - (1 - gamma) F = S + gamma F keeps its digits when gamma is tiny)."""
    out = []
    for pmf in (p, q):
        cdf = np.concatenate([[0.0], np.cumsum(pmf)])
        sf = np.concatenate([np.cumsum(pmf[::-1])[::-1], [0.0]])
        if runs == "poisson":
            f = np.exp(-mean * sf)
        else:
            t = -math.log(tnb_gamma(mean, eta))
            log_base = np.log(sf + math.exp(-t) * cdf)  # log(1 - (1 - gamma) F)
            f = -log_base / t if eta == 0 else np.expm1(-eta * log_base) / np.expm1(eta * t)
        out.append(np.concatenate([[f[0]], np.diff(f)]))
    return out


@pytest.mark.parametrize("runs,mean,eta", [(TNB, 2.0, 1.0), (TNB, 20.0, 1.0), (TNB, 5.0, 0.0),
                                           (TNB, 5.0, -0.5), (TNB, 100.0, -0.9), ("poisson", 1.0, None),
                                           ("poisson", 3.0, None), ("poisson", 30.0, None)])
@pytest.mark.parametrize("delta", [1e-3, 1e-6])
def test_bounds_hold_for_exact_releases_of_one_dp_pairs(runs, mean, eta, delta):
    # every 1-DP pair is dominated by the PureDP row; the exact best-of-K release of a few of them
    # must meet the reported (epsilon, delta)
    e = math.e
    pairs = [([e / (1 + e), 1 / (1 + e)], [1 / (1 + e), e / (1 + e)]),
             ([e / (e + 2), 1 / (e + 2), 1 / (e + 2)], [1 / (e + 2), 1 / (e + 2), e / (e + 2)]),
             ([0.5, 0.5 * (1 - 1 / e), 0.5 / e], [0.5 / e, 0.5 * (1 - 1 / e), 0.5])]
    res = tuned([Row(PureDP(epsilon=1.0))], runs, mean, eta, delta=delta)
    for p, q in pairs:
        a, b = _exact_release(np.array(p), np.array(q), runs, mean, eta)
        for x, y in ((a, b), (b, a)):
            assert np.sum(np.maximum(x - math.exp(res.epsilon) * y, 0.0)) <= delta * (1 + 1e-9)
            if res.method == "pure":
                keep = y > 0  # (no atom for "no run" when K >= 1)
                assert np.max(np.log(x[keep] / y[keep])) <= res.epsilon + 1e-12


def test_approximate_dp_rows_have_no_random_run_bound():
    res = tuned([Row(ApproxDP(epsilon=1.0, delta=1e-8))], TNB, 10, 1.0)
    assert math.isinf(res.epsilon) and "no Rényi bound" in res.note
    fixed = tuned([Row(ApproxDP(epsilon=1.0, delta=1e-8))], "fixed", 3)
    assert math.isfinite(fixed.epsilon)


def test_nothing_leaks_and_reuse_of_the_accountant():
    assert tuned([Row(Gaussian(sigma=1.0), 0)], "poisson", 5).epsilon == 0.0
    rows = [Row(Gaussian(sigma=2.0), 2)]
    acc = Accountant(rows, 0.01, "add_remove")
    a = tuned_epsilon(rows, "add_remove", 1e-6, Tuning("poisson", 4.0), accountant=acc)
    assert a == tuned(rows, "poisson", 4.0)
    assert isinstance(a, TuningResult) and set(a.as_dict()) == {"epsilon", "method", "runs", "mean", "eta",
                                                                "delta", "note"}


# ---------------------------------------------------------------- hostile input
@pytest.mark.parametrize("spec,words", [
    (("x", 10), "tuning.runs must be one of fixed, poisson, truncated_negative_binomial; got 'x'"),
    ((None, 10), "tuning.runs"), ((True, 10), "tuning.runs"),
    (("fixed", 2.5), "tuning.mean"), (("fixed", 0), "tuning.mean"), (("fixed", True), "tuning.mean"),
    (("fixed", 10**10), "tuning.mean"), (("fixed", "3"), "tuning.mean"),
    (("poisson", 0), "tuning.mean"), (("poisson", -1), "tuning.mean"), (("poisson", 0.5), "tuning.mean must be a number at least 1"), (("poisson", math.nan), "tuning.mean"),
    (("poisson", math.inf), "tuning.mean"), (("poisson", 1e300), "tuning.mean"), (("poisson", 10**400), "tuning.mean"),
    ((TNB, 0.5, 1.0), "tuning.mean"), ((TNB, 10, None), "tuning.eta"), ((TNB, 10, -1), "tuning.eta must be > -1"),
    ((TNB, 10, -2.0), "tuning.eta"), ((TNB, 10, math.nan), "tuning.eta"), ((TNB, 10, math.inf), "tuning.eta"),
    ((TNB, 10, "1"), "tuning.eta"), ((TNB, 10, 1e300), "tuning.eta"), ((TNB, 10, False), "tuning.eta"),
    (("poisson", 10, 1.0), "tuning.eta"), (("fixed", [3]), "tuning.mean"),
])
def test_hostile_specs(spec, words):
    with pytest.raises(ValueError, match=words.replace("(", r"\(")):
        Tuning(*spec)


@pytest.mark.parametrize("data", [None, [], "fixed", {"runs": "fixed"}, {"runs": "fixed", "mean": 2, "k": 1},
                                  {1: 2, "mean": 3}])
def test_hostile_dicts(data):
    with pytest.raises(ValueError, match="tuning"):
        Tuning.from_dict(data)


def test_hostile_queries():
    rows = [Row(Gaussian(sigma=1.0), 10**8)]
    with pytest.raises(ValueError, match="tuning.mean"):
        tuned(rows, "fixed", 100)
    for bad in (0, 1, math.nan, "1e-5", None):
        with pytest.raises(ValueError):
            tuned_epsilon(rows, "add_remove", bad, Tuning("poisson", 2))
    for bad in (None, "poisson", 3):
        with pytest.raises(ValueError):
            tuned_epsilon(rows, "add_remove", 1e-5, bad)
    with pytest.raises(ValueError):
        tuned_epsilon(["not a row"], "add_remove", 1e-5, Tuning("poisson", 2))
    assert Tuning("fixed", 3.0).mean == 3 and isinstance(Tuning("fixed", np.int64(3)).mean, int)


def test_fixed_runs_of_pure_dp_never_exceed_basic_composition():
    """k runs of an eps-DP mechanism: the best of them is k eps-DP (basic composition); the
    certified answer is never above that (the closed form's rounding widening included)."""
    from prvgui.accounting.kinds.pure_dp import PureDP
    from prvgui.accounting.mechanisms import Row
    from prvgui.accounting.queries.selection import Tuning, tuned_epsilon
    for k in (2, 5, 40):
        got = tuned_epsilon([Row(PureDP(1.0), 1)], None, 1e-6, Tuning("fixed", k))
        assert got.epsilon <= k * 1.0
