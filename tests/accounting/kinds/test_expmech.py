"""The exponential mechanism (any eps-bounded-range selection) against independent references.

References, all computed here in mpmath (40 digits) from the definitions, never from prvgui:

* the t-pair of Dong, Durfee, Rogers 2020: losses eps - t (probability p = (1 - e^-t) / (1 - e^-eps)
  under P) and -t; k runs compose EXACTLY by the binomial sum over the number j of losses eps - t,
  delta(e) = sum_j C(k, j) p^j (1 - p)^(k - j) (1 - e^{e - (j eps - k t)})_+;
* randomized response at eps (Kairouz, Oh, Viswanath: references.rr_kfold_epsilon);
* one run's worst case, max over t of the t-pair's delta, by a golden-section search over t.

DDR20's tables were not available to us, so their published numbers are not checked here; the
best t-pair composition is the lower bound their non-adaptive optimum is the maximum of.
"""
import json
import math
import subprocess
import sys

import mpmath as mp
import numpy as np
import pytest

import references as ref
from prvgui.accounting import Accountant, RandomizedResponse, Row
from prvgui.accounting.queries.bracket import epsilon_at_least, poisson_contrast
from prvgui.accounting.core.values import Relation
from prvgui.accounting.kinds.exponential_mechanism import (ExponentialMechanism, bounded_range_mean,
                                                           bounded_range_prv)
from prvgui.engine.view_model import untight_note
from prvgui.document import Document, RowSpec, dumps

mp.mp.dps = 40


class TPair:
    """k runs of the t-pair, composed exactly: the binomial weights of j losses eps - t (and k - j
    losses -t) in mpmath, delta(e) = sum_j w_j (1 - e^{e - s_j})_+ with s_j = j eps - k t."""

    def __init__(self, eps, t, k):
        eps, t = mp.mpf(eps), mp.mpf(t)
        p = -mp.expm1(-t) / -mp.expm1(-eps)
        self.terms = [(j * eps - k * t, mp.binomial(k, j) * p ** j * (1 - p) ** (k - j))
                      for j in range(k + 1)]
        self.top = k * eps

    def delta(self, e):
        e = mp.mpf(e)
        return mp.fsum(w * -mp.expm1(e - s) for s, w in self.terms if s > e)

    def epsilon(self, delta):
        """Smallest e >= 0 with delta(e) <= delta (bisection to 1e-12)."""
        if self.delta(0) <= delta:
            return 0.0
        lo, hi = mp.mpf(0), mp.mpf(self.top)
        while hi - lo > 1e-12:
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if self.delta(mid) > delta else (lo, mid)
        return float(hi)


def t_pair_delta(eps, t, k, e):
    return TPair(eps, t, k).delta(e)


def t_pair_epsilon(eps, t, k, delta):
    return TPair(eps, t, k).epsilon(delta)


def worst_one_run(eps, e):
    """max over t in [0, eps] of the t-pair's delta(e) for one run, by golden section (the
    function of t is unimodal: a product of an increasing and a decreasing factor)."""
    f = lambda t: t_pair_delta(eps, t, 1, e)  # noqa: E731
    a, b = mp.mpf(0), mp.mpf(eps)
    g = (mp.sqrt(5) - 1) / 2
    for _ in range(120):
        c, d = b - g * (b - a), a + g * (b - a)
        a, b = (a, d) if f(c) >= f(d) else (c, b)
    return f((a + b) / 2)


@pytest.mark.parametrize("eps", [0.05, 0.5, 1.0, 3.0])
def test_one_run_is_the_worst_t_pair_at_every_epsilon(eps):
    """The pair's profile (quadrature of its PRV) is max_t delta_t, found by a search over t,
    and the closed form (1 - e^{-(eps - e)/2})^2 / (1 - e^-eps) with t* = (eps - e) / 2."""
    prv = bounded_range_prv(eps)
    for e in np.linspace(0, eps, 7):
        worst = worst_one_run(eps, e)
        closed = (-mp.expm1(-(mp.mpf(eps) - e) / 2)) ** 2 / -mp.expm1(-mp.mpf(eps))
        assert float(worst) == pytest.approx(float(closed), rel=1e-12, abs=1e-30)
        assert prv.delta(float(e)) == pytest.approx(float(closed), rel=1e-9, abs=1e-15)
        b = Accountant([Row(ExponentialMechanism(eps), 1)], closed_forms=False).delta(float(e))
        assert b.lower <= float(closed) <= b.upper


@pytest.mark.parametrize("eps", [0.3, 2.0])
def test_the_pair_dominates_every_t_pair_on_the_whole_line(eps):
    """delta of the pair >= delta of each t-pair at every e, negative ones too (the tradeoff
    functions are ordered), and the swapped order of a t-pair is the (eps - t)-pair."""
    prv = bounded_range_prv(eps)
    for t in np.linspace(0, eps, 9):
        for e in np.linspace(-eps - 0.2, eps + 0.2, 17):
            assert prv.delta(float(e)) >= float(t_pair_delta(eps, t, 1, e)) - 1e-13


@pytest.mark.parametrize("eps,k,delta", [(0.1, 100, 1e-6), (0.5, 10, 1e-6), (1.0, 10, 1e-6),
                                         (2.0, 5, 1e-5), (0.05, 400, 1e-8)])
def test_never_below_a_concrete_bounded_range_pair_and_below_randomized_response(eps, k, delta):
    """upper >= the exact composition of k t-pairs for every t tried (each is a two-candidate
    exponential mechanism); and below eps randomized response's exact composition (KOV)."""
    b = Accountant([Row(ExponentialMechanism(eps), k)], 0.01, closed_forms=False).epsilon(delta)
    best_t = max(t_pair_epsilon(eps, t, k, delta) for t in np.linspace(0.1, 0.9, 5) * eps)
    rr = ref.rr_kfold_epsilon(eps, k, delta)
    assert best_t <= b.upper
    assert b.upper < rr
    assert best_t < b.lower  # the slack of a pair per run: the pair is not a t-pair


@pytest.mark.parametrize("eps,k", [(0.1, 100), (1.0, 10), (3.0, 3)])
def test_delta_at_epsilon_lies_between_a_t_pair_and_randomized_response(eps, k):
    e = 0.4 * k * eps
    b = Accountant([Row(ExponentialMechanism(eps), k)], 0.01, closed_forms=False).delta(e)
    t_pair = max(float(t_pair_delta(eps, t, k, e)) for t in np.linspace(0.05, 0.95, 10) * eps)
    assert t_pair <= b.upper <= ref.rr_kfold_delta(eps, k, e)


def test_one_run_at_small_delta_stays_within_the_bracket_of_randomized_response():
    """One run at delta 1e-6: the pair's epsilon is eps - 2 sqrt(delta (1 - e^-eps)) (closed form),
    below eps; the bracket's upper end may pass the RR value by at most its own width."""
    eps, delta = 1.0, 1e-6
    exact = eps - 2 * math.log(1 / (1 - math.sqrt(delta * -math.expm1(-eps))))
    b = Accountant([Row(ExponentialMechanism(eps), 1)], 0.01).epsilon(delta)
    assert b.lower <= exact <= b.upper < ref.rr_kfold_epsilon(eps, 1, delta) + (b.upper - b.lower)


@pytest.mark.parametrize("eps", [1e-9, 1e-4, 0.2, 0.49, 0.5, 0.51, 3.0, 40.0])
def test_mean_is_the_kl_divergence(eps):
    """E[Y] = int y e^{(y - eps)/2} dy / (2 (1 - e^-eps)) by mpmath quadrature."""
    e = mp.mpf(eps)
    kl = mp.quad(lambda y: y * mp.exp((y - e) / 2), [-e, 0, e]) / (2 * -mp.expm1(-e))
    assert bounded_range_mean(eps) == pytest.approx(float(kl), rel=1e-13)
    prv = bounded_range_prv(eps)
    assert prv.cont.mass == 1.0 and prv.inf_mass == 0.0 and not prv.atoms
    t = np.linspace(-eps, eps, 101)
    assert np.allclose(prv.cont.cdf(t) + prv.cont.sf(t), 1.0, rtol=0, atol=1e-14)
    assert float(prv.cont.cdf(np.array([prv.cont.centre]))[0]) == pytest.approx(0.5, rel=1e-12)


@pytest.mark.parametrize("eps", [1e-5, 0.3, 5.0, 60.0])
def test_tails_hold_the_accuracy_discretize_assumes(eps):
    """As test_prv_contract for the other kinds: the cdf left of the centre to an absolute
    CDF_ULPS ulps, the sf right of it to a relative CDF_ULPS ulps, each at a point within 64 ulps
    (1 + |t|) of t; references (e^{(t - eps)/2} - e^-eps) / (1 - e^-eps) and its complement."""
    from prvgui.accounting.numerics.discretize import CDF_ULPS
    c, e, u = bounded_range_prv(eps).cont, mp.mpf(eps), 2.0 ** -53
    ref_cdf = lambda t: (mp.exp((mp.mpf(t) - e) / 2) - mp.exp(-e)) / -mp.expm1(-e)  # noqa: E731
    ref_sf = lambda t: -mp.expm1((mp.mpf(t) - e) / 2) / -mp.expm1(-e)  # noqa: E731
    t = np.linspace(-eps, eps, 301)[1:-1]
    for ti, v in zip(t, c.cdf(t)):
        if ti <= c.centre:
            dt = 64 * 2 * u * (1 + abs(ti))
            assert ref_cdf(ti - dt) - CDF_ULPS * u <= v <= ref_cdf(ti + dt) + CDF_ULPS * u
    for ti, v in zip(t, c.sf(t)):
        if ti >= c.centre:
            dt = 64 * 2 * u * (1 + abs(ti))
            assert ref_sf(ti + dt) * (1 - CDF_ULPS * u) <= v <= ref_sf(ti - dt) * (1 + CDF_ULPS * u)


def test_rdp_is_the_smaller_of_the_bounded_range_zcdp_and_pure_dp_curves():
    """eps-BR is eps^2/8-zCDP: every t-pair's Renyi divergence (mpmath) is at most a eps^2 / 8, and
    the kind's curve is at most RR's and at most a eps^2 / 8, and at least every t-pair's."""
    orders = np.array([1.5, 2.0, 4.0, 16.0, 64.0])
    for eps in (0.1, 1.0, 4.0):
        r = ExponentialMechanism(eps).rdp(orders)
        assert np.all(r <= RandomizedResponse(eps).rdp(orders) + 1e-15)
        assert np.all(r <= orders * eps * eps / 8 * (1 + 1e-12))
        e = mp.mpf(eps)
        for t in np.linspace(0.05, 0.95, 7) * eps:
            p = -mp.expm1(-mp.mpf(t)) / -mp.expm1(-e)
            qp, qn = p * mp.exp(-(e - t)), (1 - p) * mp.exp(t)  # Q's masses
            for a, got in zip(orders, r):
                a = mp.mpf(a)
                d = mp.log(p ** a * qp ** (1 - a) + (1 - p) ** a * qn ** (1 - a)) / (a - 1)
                assert float(d) <= got * (1 + 1e-12)


def test_relations_groups_and_the_attack_pair():
    m = ExponentialMechanism(0.4)
    assert m.under(Relation("replace_one")) == m  # eps is stated for the relation given
    assert m.under(Relation("add_remove", 3)) == ExponentialMechanism(1.2000000000000002)
    assert m.attack_pair(Relation("replace_one", 2)) == RandomizedResponse(0.4)
    assert m.orders() == ("remove",) and not m.tight and m.eps_delta() == (0.4, 0.0)
    assert ExponentialMechanism(0.0).is_trivial() and m.poisson_counterpart() is None
    for bad in (-1, math.nan, math.inf, "1", None, True):
        with pytest.raises(ValueError, match="ε must be") as err:
            ExponentialMechanism(bad)
        assert err.value.field == "epsilon"


def test_the_proven_lower_bound_is_the_t_pair_at_half_epsilon():
    """epsilon_at_least composes randomized response at eps/2 (the t = eps/2 pair): it brackets
    KOV's exact value at eps/2, lies below the pair's upper end, and there is no Poisson
    contrast for a selection mechanism."""
    rows = [Row(ExponentialMechanism(0.5), 20)]
    low = epsilon_at_least(rows, 1e-6)
    assert low <= ref.rr_kfold_epsilon(0.25, 20, 1e-6) <= low + 0.02
    assert low < Accountant(rows).epsilon(1e-6).upper
    assert poisson_contrast(rows, 1e-6) is None
    note = untight_note(rows, low, 3.0, None)
    assert "Exponential mechanism" in note and "Shuffled" not in note


def test_command_line_reports_the_proven_lower_bound(tmp_path):
    doc = Document([RowSpec("exponential_mechanism", {"epsilon": 0.5}, 20, "selection")])
    path = tmp_path / "em.json"
    path.write_text(dumps(doc))
    out = subprocess.run([sys.executable, "-m", "prvgui", "epsilon", str(path), "--delta", "1e-6", "--json"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    # the truth lies between the attack and the certified number (here eps^2/8-zCDP's, below the
    # pair's bracket: k eps^2 = 5)
    assert got["epsilon_at_least"] <= got["certified_upper"]["value"] <= got["epsilon"]["upper"]
    text = subprocess.run([sys.executable, "-m", "prvgui", "epsilon", str(path), "--delta", "1e-6"],
                          capture_output=True, text=True, timeout=120).stdout
    assert "proven lower" in text and "Exponential mechanism" in text and "shuffled" not in text.lower()


def test_large_counts_the_zcdp_bound_takes_over_in_the_certified_number():
    """k eps^2 large: eps^2/8-zCDP (the RDP comparison) beats the pair's composition, and the best
    certified bound is the smaller of the two; both stay above the best t-pair composition."""
    from prvgui.accounting.queries.certified import best_upper
    from prvgui.accounting.queries.comparisons import compare_epsilon
    rows = [Row(ExponentialMechanism(0.1), 1000)]
    b = Accountant(rows).epsilon(1e-6)
    comps = compare_epsilon(rows, 1e-6)
    best = best_upper(b.upper, comps)
    assert best.by == "rdp" and best.value < b.upper
    assert best.value >= t_pair_epsilon(0.1, 0.05, 1000, 1e-6)


@pytest.mark.parametrize("eps", [0.1, 1.0])
@pytest.mark.parametrize("k", [1, 10, 100])
def test_the_certified_number_is_at_most_randomized_response(eps, k):
    """The number to publish (the smallest valid bound: the pair's upper end, RDP, basic
    composition's k eps) against KOV's exact epsilon for eps randomized response. Above one run
    it is well below; for one run the pair's exact epsilon is below RR's but the certificate's
    width (0.02) is larger than the gap (2e-6 at delta 1e-6), so the number is basic
    composition's eps, RR's value up to that gap."""
    from prvgui.accounting.queries.certified import best_upper
    from prvgui.accounting.queries.comparisons import compare_epsilon
    rows = [Row(ExponentialMechanism(eps), k)]
    best = best_upper(Accountant(rows).epsilon(1e-6).upper, compare_epsilon(rows, 1e-6))
    rr = ref.rr_kfold_epsilon(eps, k, 1e-6)
    if k == 1:
        exact = eps - 2 * math.log(1 / (1 - math.sqrt(1e-6 * -math.expm1(-eps))))
        assert exact < rr and best.value == eps and best.value - rr < 3e-6
    else:
        assert best.value < 0.92 * rr
