"""Random allocation (balls-in-bins): the certified upper bound, the proven lower bound, the
Poisson contrast, against independent references (closed forms, brute force on tiny cases)."""
from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from references import gaussian_epsilon
from scipy.special import ndtr
from scipy.integrate import quad
from scipy.stats import norm

from prvgui.accounting.core.values import Relation
from prvgui.accounting.mechanisms import MECHANISM_KINDS, Row
from prvgui.accounting.pairs.allocation import round_atoms
from prvgui.accounting.queries import bracket
from prvgui.accounting.queries.accountant import Accountant

RA = MECHANISM_KINDS["random_allocation"]


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


def round_delta(sigma: float, eps: float, order: str) -> float:
    """delta(eps) of one 1-of-2 round to about 1e-12: the second output's expectation in closed
    form (a lognormal's call or put price), the first by adaptive quadrature split at the kink.
    With R = exp(mu z - mu^2/2) under Q and S = R1 + R2: remove E[(S/2 - e^eps)_+], add
    E[(1 - e^eps S/2)_+]."""
    mu = 1.0 / sigma
    level = 2 * math.exp(eps if order == "remove" else -eps)

    def inner(z: float) -> float:
        c = level - math.exp(mu * z - mu * mu / 2)
        if c <= 0:
            return 1.0 - c if order == "remove" else 0.0
        d_plus, d_minus = (-math.log(c) + mu * mu / 2) / mu, (-math.log(c) - mu * mu / 2) / mu
        if order == "remove":
            return float(ndtr(d_plus) - c * ndtr(d_minus))
        return float(c * ndtr(-d_minus) - ndtr(-d_plus))

    kink = (math.log(level) + mu * mu / 2) / mu
    total = sum(quad(lambda z: norm.pdf(z) * inner(z), lo, hi, epsabs=1e-15, limit=200)[0]
                for lo, hi in ((-40, kink), (kink, 40)))
    return total / 2 if order == "remove" else math.exp(eps) * total / 2


def atoms_delta(atoms, eps: float) -> float:
    """delta(eps) of a PRV given as (losses, masses, mass at +inf), by a direct sum."""
    loc, mass, inf = atoms
    return inf + float(np.sum(mass * np.maximum(0.0, -np.expm1(eps - loc))))


@pytest.mark.parametrize("sigma", [1.0, 0.7, 2.0])
def test_a_round_brackets_the_realised_pair(sigma):
    """One round of 1-of-2: the upper PRVs at or above the truth, the lower ones at or below it,
    both orders, and close to each other."""
    atoms = round_atoms(1.0 / sigma, 2)
    for eps in (0.0, 0.3, 1.0, 2.0, 4.0):
        for order in ("remove", "add"):
            truth = round_delta(sigma, eps, order)
            assert truth == pytest.approx(brute_delta(sigma, 2, 1, eps, order), rel=0.05, abs=1e-4)  # two refs
            up, low = atoms_delta(atoms[f"{order}_up"], eps), atoms_delta(atoms[f"{order}_low"], eps)
            assert low - 1e-9 <= truth <= up + 1e-9, (eps, order, low, truth, up)
            if eps <= 2:  # (the grids are coarser for little noise; far tails are wider apart)
                assert up - low <= 0.05 * truth + 1e-6


@pytest.mark.parametrize("sigma,t,k", [(1.0, 4, 2), (0.8, 3, 2)])
def test_k_of_t_is_below_its_rounds(sigma, t, k):
    """The k-of-t pair (brute force over every k-subset) is at most the certified composition of
    k rounds of 1-of-floor(t/k) that the kind counts (the random-permutation reduction)."""
    m = RA(sigma, t, k)
    acc = Accountant([Row(m, k)], 1e-3)
    for eps in (0.5, 1.0, 2.0):
        truth = max(brute_delta(sigma, t, k, eps, o) for o in ("remove", "add"))
        assert truth <= acc.delta(eps).upper + 1e-4  # (the quadrature's own error)


#: PLD_accounting 2.0 (Feldman, Shenfeld et al.'s random-allocation PLD, run 2026-11-27 as a peer;
#: not a test dependency): (sigma, t, k, epochs, delta) -> its (lower, upper); the first case's
#: published value (google/differential-privacy PR 414) is 2.4265
PEER = {(2.0, 100, 10, 1, 1e-6): (2.3803, 2.4661), (1.0, 100, 1, 1, 1e-5): (0.6085, 0.6357),
        (0.8, 1000, 1, 1, 1e-5): (0.2786, 0.2909), (0.7, 100, 1, 5, 1e-5): (3.2697, 3.3465)}


@pytest.mark.parametrize("case", list(PEER))
def test_certified_upper_is_within_a_few_percent_of_the_peer(case):
    sigma, t, k, epochs, delta = case
    peer_low, peer_up = PEER[case]
    m = RA(sigma, t, k)
    rows = [Row(m, epochs * m.runs_per_count())]
    upper = Accountant(rows, 1e-2).epsilon(delta).upper
    lower = bracket.epsilon_at_least(rows, delta)
    assert upper >= peer_low and lower <= peer_up  # the two brackets agree
    assert upper <= 1.03 * peer_up


def test_k_equal_t_is_tight_and_exact():
    m = RA(1.5, 4, 4)
    assert m.tight
    rows = [Row(m, 2 * m.runs_per_count())]  # two epochs of four rounds
    assert not bracket.has_untight(rows)
    b = Accountant(rows, 1e-3).epsilon(1e-6)
    want = gaussian_epsilon(math.sqrt(8) / 1.5, 1e-6)
    assert b.lower - 1e-3 <= want <= b.upper + 1e-3


def test_balls_in_bins_lower_bound_against_the_max_statistic_closed_form():
    """k = 1, one epoch: the attack's delta at eps = 0 is the total variation of the max
    statistic, sup_c [P(max > c) - Q(max > c)], computed here from the CDFs directly."""
    sigma, t = 1.0, 50
    c = np.linspace(-5, 10, 20001)
    q_cdf = norm.cdf(c / sigma) ** t
    p_cdf = norm.cdf((c - 1) / sigma) * norm.cdf(c / sigma) ** (t - 1)
    tv = float(np.max(q_cdf - p_cdf))
    atoms = round_atoms(1.0 / sigma, t)
    # the max is a post-processing of the round's pair: below its lower side, which is below the upper
    assert tv - 1e-9 <= atoms_delta(atoms["remove_low"], 0.0) <= atoms_delta(atoms["remove_up"], 0.0)


def test_poisson_contrast_and_sentences():
    rows = [Row(RA(1.0, 100, 1), 2)]
    poisson = bracket.poisson_contrast(rows, 1e-5)
    direct = Accountant([Row(MECHANISM_KINDS["subsampled_gaussian"](1.0, 0.01), 200)], 0.01).epsilon(1e-5)
    assert poisson.upper == pytest.approx(direct.upper, rel=1e-9)
    from prvgui.engine.view_model import untight_sentences
    text = " ".join(untight_sentences(rows, 0.5, 6.0, poisson))
    assert "Random allocation" in text and "computed numerically" in text and "Poisson accounting" in text


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
    assert g.gaussian_mu() == pytest.approx(6 * m.mu)


def test_shuffled_contrast_is_the_shuffled_rows_bracket():
    rows = [Row(RA(1.0, 100, 1), 2)]
    got = bracket.shuffled_contrast(rows, 1e-5)
    shuffled = [Row(MECHANISM_KINDS["shuffled_gaussian"](1.0, 100), 2)]
    assert got.upper == pytest.approx(Accountant(shuffled, 0.01).epsilon(1e-5).upper, rel=1e-9)
    assert got.lower == pytest.approx(bracket.epsilon_at_least(shuffled, 1e-5), rel=1e-9)
    assert got.lower > 2 * Accountant(rows, 0.01).epsilon(1e-5).upper  # shuffling costs more here
    from prvgui.engine.view_model import untight_sentences
    text = " ".join(untight_sentences(rows, 0.9, 1.0, None, shuffled=got))
    assert "Shuffled batches for the same training" in text
    assert bracket.shuffled_contrast([Row(RA(1.0, 100, 2), 2)], 1e-5) is None  # (k > 1: no shuffled twin)
