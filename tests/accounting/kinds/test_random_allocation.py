"""Random allocation (balls-in-bins): the certified upper bound, the proven lower bound, the
Poisson contrast, against independent references (closed forms, brute force on tiny cases)."""
from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy.special import ndtr
from scipy.stats import norm

from prvgui.accounting.core.values import Relation
from prvgui.accounting.mechanisms import MECHANISM_KINDS, Row
from prvgui.accounting.queries import bracket
from prvgui.accounting.queries.accountant import Accountant

RA = MECHANISM_KINDS["random_allocation"]


def gaussian_eps(mu: float, delta: float) -> float:
    """epsilon(delta) of mu-GDP (Balle and Wang 2018), by bisection on the closed form."""
    def d(eps):
        return ndtr(-eps / mu + mu / 2) - math.exp(eps) * ndtr(-eps / mu - mu / 2)
    lo, hi = 0.0, 100.0
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if d(mid) > delta else (lo, mid)
    return hi


def brute_delta(sigma: float, t: int, k: int, eps: float, order: str) -> float:
    """delta(eps) of the realised pair (others at 0, the record at +1 in a uniformly random k-subset
    of t steps) by product Gauss-Hermite quadrature over the t outputs: P = mean over subsets of
    N(1_S, sigma^2 I), Q = N(0, sigma^2 I)."""
    x, w = np.polynomial.hermite_e.hermegauss(60)
    w = w / w.sum()
    grids = np.meshgrid(*([x * sigma] * t), indexing="ij")
    weight = np.ones_like(grids[0])
    for g in np.meshgrid(*([w] * t), indexing="ij"):
        weight = weight * g
    subsets = list(itertools.combinations(range(t), k))
    # likelihood ratio dP/dQ at the point (points drawn from Q)
    ratio = sum(np.exp(sum((grids[j] - 0.5) / sigma**2 for j in s)) for s in subsets) / len(subsets)
    if order == "remove":
        return float(np.sum(weight * np.maximum(ratio - math.exp(eps), 0.0)))
    return float(np.sum(weight * np.maximum(1.0 - math.exp(eps) * ratio, 0.0)))


@pytest.mark.parametrize("sigma,t,k", [(1.0, 2, 1), (0.7, 3, 1), (1.0, 3, 2), (0.8, 4, 2)])
def test_both_sides_hold_the_realised_pair(sigma, t, k):
    m = RA(sigma, t, k)
    attack = m.attack_pair(Relation())
    for eps in (0.0, 0.3, 1.0, 2.0):
        for order in ("remove", "add"):
            truth = brute_delta(sigma, t, k, eps, order)
            assert m.prv(order).delta(eps) >= truth - 1e-9
            # the attack pair is a post-processing of the realised pair: below it
            assert attack.prv(order).delta(eps) <= truth + 1e-6


def test_upper_is_the_non_amplified_gaussian():
    for sigma, t, k in [(1.0, 100, 1), (2.0, 100, 10), (0.8, 1000, 3)]:
        acc = Accountant([Row(RA(sigma, t, k), 3)], 1e-3)
        want = gaussian_eps(math.sqrt(3 * k) / sigma, 1e-5)
        b = acc.epsilon(1e-5)
        assert b.lower - 1e-3 <= want <= b.upper + 1e-3


def test_k_equal_t_is_tight_and_exact():
    m = RA(1.5, 4, 4)
    assert m.tight
    rows = [Row(m, 2)]
    assert not bracket.has_untight(rows)
    b = Accountant(rows, 1e-3).epsilon(1e-6)
    want = gaussian_eps(math.sqrt(8) / 1.5, 1e-6)
    assert b.lower - 1e-3 <= want <= b.upper + 1e-3


def test_bracket_lies_around_the_published_value():
    """google/differential-privacy PR 414 (random allocation PLD): sigma 2, 10 of 100 steps, one
    epoch, delta 1e-6: epsilon 2.4265. prvgui's lower bound must be below it and its upper bound
    above it (a gap the window states)."""
    rows = [Row(RA(2.0, 100, 10), 1)]
    lower = bracket.epsilon_at_least(rows, 1e-6)
    upper = Accountant(rows, 1e-2).epsilon(1e-6).upper
    assert lower < 2.4265 < upper
    assert lower > 1.5  # the attack is not vacuous


def test_balls_in_bins_lower_bound_against_the_max_statistic_closed_form():
    """k = 1, one epoch: the attack's delta at eps = 0 is the total variation of the max
    statistic, sup_c [P(max > c) - Q(max > c)], computed here from the CDFs directly."""
    sigma, t = 1.0, 50
    c = np.linspace(-5, 10, 20001)
    q_cdf = norm.cdf(c / sigma) ** t
    p_cdf = norm.cdf((c - 1) / sigma) * norm.cdf(c / sigma) ** (t - 1)
    tv = float(np.max(q_cdf - p_cdf))
    got = RA(sigma, t, 1).attack_pair(Relation()).prv("remove").delta(0.0)
    assert got == pytest.approx(tv, rel=1e-3)


def test_poisson_contrast_and_sentences():
    rows = [Row(RA(1.0, 100, 1), 2)]
    poisson = bracket.poisson_contrast(rows, 1e-5)
    direct = Accountant([Row(MECHANISM_KINDS["subsampled_gaussian"](1.0, 0.01), 200)], 0.01).epsilon(1e-5)
    assert poisson.upper == pytest.approx(direct.upper, rel=1e-9)
    from prvgui.engine.view_model import untight_sentences
    text = " ".join(untight_sentences(rows, 0.5, 6.0, poisson))
    assert "Random allocation" in text and "no amplification" in text and "Poisson accounting" in text


@pytest.mark.parametrize("params,field", [
    ({"sigma": 1.0, "steps_per_epoch": 10, "selected": 11}, "selected"),
    ({"sigma": 1.0, "steps_per_epoch": 0}, "steps_per_epoch"),
    ({"sigma": 1.0, "steps_per_epoch": 10, "selected": 1.5}, "selected"),
    ({"sigma": float("nan"), "steps_per_epoch": 10}, "sigma"),
])
def test_hostile_parameters_name_the_field(params, field):
    with pytest.raises(ValueError) as info:
        RA.from_params(params)
    assert getattr(info.value, "field", None) == field


def test_groups_and_replace_one_scale_the_sensitivity():
    m = RA(2.0, 10, 2)
    g = m.under(Relation("replace_one", 3))
    assert g.mu == pytest.approx(6 * m.mu)
