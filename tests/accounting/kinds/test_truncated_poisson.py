"""Truncated Poisson batches (kinds/truncated_poisson.py): the certified pair against every small
dataset written out (brute force, one and two steps), the Poisson case B >= n, the attack lower
bound, dp_accounting's (looser) pair, hostile input, and the revealed mixture it is built from."""
import functools
import itertools
import math
import random

import numpy as np
import pytest
from scipy import integrate
from scipy.special import ndtr
from scipy.stats import binom

import brute_sampling as bs
from prvgui.accounting import Accountant, Row, SubsampledGaussian
from prvgui.accounting.core.values import PLAIN, Relation
from prvgui.accounting.kinds.gaussian import gaussian_prv
from prvgui.accounting.kinds.subsampled_gaussian import subsampled_gaussian_prv
from prvgui.accounting.kinds.truncated_poisson import TruncatedPoisson
from prvgui.accounting.pairs.prv import point_mass
from prvgui.accounting.pairs.rdp import ORDERS
from prvgui.accounting.pairs.revealed_mixture import revealed_mixture
from prvgui.accounting.queries import bracket

EPS = (0.0, 0.3, 1.0, 2.0)
BOTH = ("remove", "add")


def truncated_batches(n: int, q: float, b: int):
    """Every final batch of n indices with its probability: each Poisson selection, and when it
    holds more than b, each b-subset of it equally likely."""
    out = []
    for mask in itertools.product((0, 1), repeat=n):
        sel = [i for i in range(n) if mask[i]]
        p = q ** len(sel) * (1 - q) ** (n - len(sel))
        subsets = list(itertools.combinations(sel, b)) if len(sel) > b else [tuple(sel)]
        out += [(s, p / len(subsets)) for s in subsets]
    return out


def realised(others, q, b, sigma, eps=EPS, steps=1):
    """delta(eps) of D = (the record at +1, others) against D minus the record, both orders; one
    step exactly (exact cell masses), or ``steps`` composed from below."""
    n = len(others) + 1
    lp = bs.sums_law((1.0,) + tuple(others), truncated_batches(n, q, b))
    lq = bs.sums_law(tuple(others), truncated_batches(n - 1, q, b))
    if steps == 1:
        return {"remove": bs.hockey_stick(lp, lq, eps, "gaussian", sigma),
                "add": bs.hockey_stick(lq, lp, eps, "gaussian", sigma)}
    return {"remove": bs.composed_delta(lp, lq, steps, np.array(eps), "gaussian", sigma),
            "add": bs.composed_delta(lq, lp, steps, np.array(eps), "gaussian", sigma)}


@functools.lru_cache(maxsize=None)
def certified(n, q, b, sigma):
    m = TruncatedPoisson(n, q, b, sigma)
    return {o: np.array([m.prv(o).delta(e) for e in EPS]) for o in BOTH}


# ---------------------------------------------------------------- brute force
@pytest.mark.parametrize("q,sigma", [(0.1, 1.0), (0.5, 0.5), (0.5, 2.0), (0.9, 1.0), (0.9, 0.5), (0.3, 2.0)])
def test_every_small_dataset_stays_below_the_certified_pair(q, sigma):
    """n = 2..6, B = 1..n, the others' gradients in {-1, 0, +1} (every dataset up to order for
    n <= 4, three random ones beyond): the exact delta of one step, both orders, is at most the
    certified pair's."""
    rng = random.Random(f"{q}-{sigma}")
    worst = (0.0, None)
    for n in range(2, 7):
        every = bs.value_sets(n - 1)
        for b in range(1, n + 1):
            cert = certified(n, q, b, sigma)
            for others in every if n <= 4 else rng.sample(every, 3):
                real = realised(others, q, b, sigma)
                for o in BOTH:
                    assert np.all(real[o] <= cert[o] * (1 + 1e-9) + 1e-12), (n, b, others, o, real[o], cert[o])
                    ratio = float(np.max(np.where(cert[o] > 1e-9, real[o] / np.maximum(cert[o], 1e-300), 0)))
                    if b < n and ratio > worst[0]:
                        worst = (ratio, (n, b, others, o))
    print(f"q {q} sigma {sigma}: largest realised / certified with truncation {worst}")


def test_the_certified_pair_is_attained_when_truncation_is_sure():
    """q 0.9, B 1, n 6 (truncation almost sure), the others at -1: the record displaces one of
    them, a shift of 2; the realised delta is the certified one within 0.1%."""
    real, cert = realised((-1.0,) * 5, 0.9, 1, 2.0), certified(6, 0.9, 1, 2.0)
    assert np.all(real["remove"] >= 0.999 * cert["remove"])


def test_two_steps_stay_below_the_accountant_and_not_far_below():
    n, q, b, sigma, eps = 5, 0.6, 2, 0.8, (0.0, 0.5, 1.0)
    acc = Accountant([Row(TruncatedPoisson(n, q, b, sigma), 2)], eps_error=1e-3)
    upper = np.array([acc.delta(e).upper for e in eps])
    for others in [(-1.0,) * 4, (0.0,) * 4, (1.0, -1.0, 0.0, 1.0), (1.0,) * 4]:
        real = realised(others, q, b, sigma, eps, steps=2)
        assert np.all(np.maximum(real["remove"], real["add"]) <= upper + 1e-12), others
    real = realised((-1.0,) * 4, q, b, sigma, eps, steps=2)  # not vacuous: 0.93, 0.85, 0.71 of it
    assert np.all(np.maximum(real["remove"], real["add"]) >= 0.6 * upper)


# ---------------------------------------------------------------- no truncation: the Poisson row
@pytest.mark.parametrize("n,b", [(50, 50), (50, 10**6), (1, 1)])
def test_no_truncation_is_exactly_the_poisson_row(n, b):
    m, p = TruncatedPoisson(n, 0.3, b, 0.8), SubsampledGaussian(0.8, 0.3)
    assert m.tight and m.truncation_probability == 0 and m.inclusion_rate == 0.3
    t = np.linspace(-3.0, 3.0, 61)
    for o in BOTH:
        a, c = m.prv(o), p.prv(o)
        assert (a.atoms, a.inf_mass, a.mean, a.mean_err) == (c.atoms, c.inf_mass, c.mean, c.mean_err)
        assert np.array_equal(a.cont.cdf(t), c.cont.cdf(t)) and np.array_equal(a.cont.sf(t), c.cont.sf(t))
        assert [a.delta(e) for e in EPS] == [c.delta(e) for e in EPS]
    assert Accountant([Row(m, 100)]).epsilon(1e-6) == Accountant([Row(p, 100)]).epsilon(1e-6)
    for rel in (Relation("replace_one"), Relation("add_remove", 2)):
        assert m.under(rel) == p.under(rel) and m.attack_pair(rel) == p.attack_pair(rel)
    assert np.array_equal(m.rdp(ORDERS), p.rdp(ORDERS))


# ---------------------------------------------------------------- the attack lower bound
@pytest.mark.parametrize("n,q,b,sigma", [(4, 0.5, 2, 1.0), (6, 0.9, 1, 2.0), (5, 0.3, 3, 0.5)])
def test_the_attack_pair_is_the_dataset_with_the_others_at_zero(n, q, b, sigma):
    m = TruncatedPoisson(n, q, b, sigma)
    attack = m.attack_pair(PLAIN)
    # the record's inclusion rate, from the batches written out
    assert attack.sampling_rate == pytest.approx(sum(p for s, p in truncated_batches(n, q, b) if 0 in s),
                                                 rel=1e-12)
    real, cert = realised((0.0,) * (n - 1), q, b, sigma), certified(n, q, b, sigma)
    for o in BOTH:
        low = np.array([attack.prv(o).delta(e) for e in EPS])
        assert np.allclose(low, real[o], rtol=1e-6, atol=1e-12) and np.all(low <= cert[o] + 1e-12)


@pytest.mark.parametrize("n,q,b", [(2000, 0.05, 90), (10**12, 1e-6, 10**6 + 3000), (10**12, 1e-12, 1),
                                   (10**6, 0.999, 10)])
def test_rates_for_large_datasets_match_a_direct_sum(n, q, b):
    """pi, p and p_x against sums of the binomial pmf over the bulk of M ~ Binomial(n - 1, q)."""
    m = TruncatedPoisson(n, q, b, 1.0)
    mean, sd = (n - 1) * q, math.sqrt((n - 1) * q * (1 - q))
    k = np.arange(max(0, int(mean - 60 * sd) - 60), min(n - 1, int(mean + 60 * sd) + 60) + 1)
    w = binom.pmf(k, n - 1, q)
    cut = k >= b
    pi = float(w[cut].sum())
    assert m.truncation_probability == pytest.approx(pi, rel=1e-9, abs=1e-300)
    assert m.inclusion_rate == pytest.approx(q * float(np.sum(w * np.minimum(1.0, b / (k + 1.0)))), rel=1e-9)
    if pi > 0:
        assert m.truncated_rate == pytest.approx(q * float(np.sum(w[cut] * b / (k[cut] + 1.0))) / pi, rel=1e-9)


# ---------------------------------------------------------------- dp_accounting's pair
@pytest.mark.parametrize("n,q,b,sigma", [(60000, 0.004, 256, 1.0), (1000, 0.3, 250, 1.5), (100000, 0.001, 90, 1.0)])
def test_dp_accountings_pair_is_looser_and_the_attack_is_below(n, q, b, sigma, record_property):
    """dp_accounting mixes the same two cases but takes replace-one for the truncated one: its
    epsilon (pessimistic PLD, an upper bound of its pair) is at least the truth of ours."""
    dpa = pytest.importorskip("dp_accounting")
    from dp_accounting.pld.pld_privacy_accountant import NeighborRel, PLDAccountant
    pld = PLDAccountant(NeighborRel.ADD_OR_REMOVE_ONE, value_discretization_interval=1e-4)
    pld.compose(dpa.TruncatedSubsampledGaussianDpEvent(n, q, b, sigma), 100)
    theirs = pld.get_epsilon(1e-6)
    rows = [Row(TruncatedPoisson(n, q, b, sigma), 100)]
    ours = Accountant(rows, eps_error=1e-3).epsilon(1e-6)
    at_least = bracket.epsilon_at_least(rows, 1e-6, eps_error=1e-3)
    record_property("epsilons", {"dp_accounting": theirs, "prvgui": ours.as_dict(), "attack": at_least})
    print(f"n {n} q {q} B {b} sigma {sigma}: dp_accounting {theirs:.4f}, prvgui [{ours.lower:.4f}, "
          f"{ours.upper:.4f}], attack >= {at_least:.4f}")
    assert ours.lower <= theirs and ours.upper <= theirs + 2e-3
    assert at_least <= ours.upper


# ---------------------------------------------------------------- hostile input, relations, facts
@pytest.mark.parametrize("bad,field,message", [
    ({"max_batch": 0}, "max_batch", "Max batch B must be between 1 and 1e12; you typed 0"),
    ({"max_batch": 1.5}, "max_batch", "Max batch B must be a whole number; you typed 1.5"),
    ({"sampling_rate": 2}, "sampling_rate", "Sampling rate q must be between 0 and 1; you typed 2"),
    ({"dataset_size": 0}, "dataset_size", "Dataset size n must be between 1 and 1e12; you typed 0"),
    ({"sigma": math.nan}, "sigma", "Noise multiplier σ must be a number (at least 0); you typed nan")])
def test_hostile_parameters_name_the_field(bad, field, message):
    with pytest.raises(ValueError) as err:
        TruncatedPoisson(**{"dataset_size": 100, "sampling_rate": 0.1, "max_batch": 5, "sigma": 1.0, **bad})
    assert str(err.value) == message and err.value.field == field


@pytest.mark.parametrize("rel", [Relation("replace_one"), Relation("add_remove", 2), Relation("replace_one", 3)])
def test_truncation_under_other_relations_is_refused_in_words(rel):
    m = TruncatedPoisson(100, 0.1, 5, 1.0)
    for call in (m.under, m.attack_pair, m.check_relation):
        with pytest.raises(ValueError, match="no certified pair") as err:
            call(rel)
        assert err.value.field == "max_batch" and "add/remove" in str(err.value)
        assert "max batch B of at least the dataset size n" in str(err.value)
    with pytest.raises(ValueError, match=r"^row 1 \(Truncated Poisson Gaussian"):
        Accountant([Row(m, 1)], neighbouring=rel)


def test_facts_mirror_the_subsampled_gaussian():
    m = TruncatedPoisson(1000, 0.1, 50, 1.0)
    assert not m.tight and m.poisson_counterpart() == (SubsampledGaussian(1.0, 0.1), 1)
    assert m.noise_halfwidth() == SubsampledGaussian(1.0, 0.1).noise_halfwidth()
    assert TruncatedPoisson(1000, 0.0, 50, 1.0).is_trivial() and TruncatedPoisson(1000, 0.1, 50, 1.0, 0.0).is_trivial()
    assert TruncatedPoisson(10, 1.0, 10, 0.0).is_blatant() and not TruncatedPoisson(10, 1.0, 5, 0.0).is_blatant()
    assert not TruncatedPoisson(10, 0.5, 10, 0.0).is_blatant()  # the loss is infinite with probability q
    # RDP of the revealed mixture: above the realised pair's Renyi divergence, finite or inf, no overflow
    rdp = m.rdp(ORDERS)
    a = np.array([2.0, 8.0, 32.0])
    assert np.all(np.isinf(rdp[ORDERS != np.round(ORDERS)]))
    assert np.all(np.isfinite(rdp[np.isin(ORDERS, a)])) and np.all(np.diff(rdp[np.isin(ORDERS, a)]) > 0)
    with np.errstate(over="raise", invalid="raise", divide="raise"):
        huge = TruncatedPoisson(1000, 0.5, 50, 0.01).rdp(ORDERS)
    assert np.all(huge > 1e3)


# ---------------------------------------------------------------- the revealed mixture
def _gauss_delta(mu: float, eps: float) -> float:
    return float(ndtr(-eps / mu + mu / 2) - math.exp(eps) * ndtr(-eps / mu - mu / 2))


def _quad_delta(prv, eps: float, points=()) -> float:
    """delta(eps) of a PRV without atoms by scipy's quad of e^(eps - y) sf(y) (integration by
    parts), split at ``points`` (the parts' ends, where the mixture's sf bends)."""
    c = prv.cont
    lo, top = max(eps, c.lo), c.upper_cut(1e-17)
    pts = [p for p in points if lo < p < top] or None
    return prv.inf_mass + integrate.quad(lambda y: math.exp(eps - y) * float(c.sf(np.array([y]))[0]), lo, top,
                                         points=pts, limit=1000, epsabs=1e-16, epsrel=1e-12)[0]


def test_revealed_mixture_weights():
    g = gaussian_prv(1.0)
    assert revealed_mixture([(1.0, g)]) is g and revealed_mixture([(0.0, point_mass(3.0)), (1.0, g)]) is g
    for bad in ([(0.5, g), (0.6, g)], [(-0.1, g), (1.1, g)], [(math.nan, g)], []):
        with pytest.raises(ValueError):
            revealed_mixture(bad)


def test_revealed_mixture_sums_the_parts():
    g, s = gaussian_prv(1.0), subsampled_gaussian_prv(1.0, 0.1, "remove")
    mix = revealed_mixture([(0.3, g), (0.7, s)])
    t = np.linspace(-2.0, 3.0, 101)  # below and above s's lower end log(0.9)
    inside = t > s.cont.lo
    s_cdf = np.where(inside, s.cont.cdf(np.where(inside, t, 0.0)), 0.0)
    assert np.allclose(mix.cont.cdf(t), 0.3 * g.cont.cdf(t) + 0.7 * s_cdf, rtol=1e-14, atol=0)
    assert np.allclose(mix.cont.cdf(t) + mix.cont.sf(t), 1.0, rtol=0, atol=1e-15)
    assert mix.mean == pytest.approx(0.3 * 0.5 + 0.7 * s.mean, rel=1e-14)  # mu^2 / 2 for the Gaussian
    assert mix.cont.lo == -math.inf and mix.cont.hi == math.inf


def test_revealed_mixture_with_point_masses_and_its_delta():
    g = gaussian_prv(1.5)
    mix = revealed_mixture([(0.5, g), (0.3, point_mass(0.7)), (0.2, point_mass(math.inf))])
    assert mix.atoms == ((0.7, 0.3),) and mix.inf_mass == 0.2 and mix.cont.mass == 0.5
    assert mix.mean == pytest.approx(0.5 * 1.5 ** 2 / 2 + 0.3 * 0.7)
    for eps in (0.0, 0.3, 1.0, 2.5):
        want = 0.5 * _gauss_delta(1.5, eps) + 0.3 * max(0.0, -math.expm1(eps - 0.7)) + 0.2
        assert mix.delta(eps) == pytest.approx(want, rel=1e-9)
    # the identity delta = sum of w delta, on two subsampled parts of both orders (by quad on the
    # mixture's own sf; PRV.delta's fixed panels see the bend at a part's end to ~1e-9)
    parts = [(0.25, 1.0, 0.1), (0.75, 0.5, 0.02)]
    for o in BOTH:
        comps = [(w, subsampled_gaussian_prv(s, q, o)) for w, s, q in parts]
        mix = revealed_mixture(comps)
        ends = [e for _, c in comps for e in (c.cont.lo, c.cont.hi) if math.isfinite(e)]
        for eps in EPS:
            want = sum(w * _quad_delta(c, eps, ends) for w, c in comps)
            assert _quad_delta(mix, eps, ends) == pytest.approx(want, rel=1e-10, abs=1e-16)
            assert mix.delta(eps) == pytest.approx(want, rel=1e-8, abs=1e-16)


def test_mu_of_a_full_batch_step_reads_noise_and_sensitivity_the_right_way_round():
    import math
    from prvgui.accounting.kinds.subsampled_gaussian import SubsampledGaussian
    assert SubsampledGaussian(0.0, 1.0).gaussian_mu() == math.inf
    assert SubsampledGaussian(1.0, 1.0, 0.0).gaussian_mu() == 0.0
    assert SubsampledGaussian(2.0, 1.0, 3.0).gaussian_mu() == 1.5
    assert SubsampledGaussian(0.0, 1.0).zcdp_rho() == math.inf
    assert SubsampledGaussian(1.0, 1.0, 0.0).rdp(np.array([2.0]))[0] == 0.0


def test_a_truncated_rate_below_the_least_float_is_read_as_one():
    """(the input-space sweep's find: q = 1e-300, n = 10^6, B = 1: the truncated part's rate
    underflowed to 0 while pi did not, and RDP took log(0))"""
    from prvgui.accounting.queries import comparisons as cmp
    m = TruncatedPoisson(dataset_size=1_000_000, sampling_rate=1e-300, max_batch=1, sigma=1.0)
    assert m.truncated_rate == 0.0 and m.truncation_probability > 0
    assert m._truncated().sampling_rate == math.ulp(0.0)
    rdp = cmp.compare_epsilon([Row(m, 10 ** 9)], 1e-5)["rdp"].value
    assert rdp is not None and rdp >= 0
