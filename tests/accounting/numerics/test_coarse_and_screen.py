"""Coarse tail cells (discretize.py) and order screening (Accountant._deciding).

Both are shortcuts with their own argument; these tests check the pieces against direct
computations and the whole against exact references and against the engine without them.
"""
import math
import threading

import numpy as np
import pytest
import references as ref

from prvgui.accounting import Accountant, Gaussian, Row, SubsampledGaussian
from prvgui.accounting.numerics.pipeline import error_level
from prvgui.accounting.queries import accountant as accountant_mod
from prvgui.accounting.numerics import pipeline as pipeline_mod
from prvgui.accounting.numerics.discretize import coarse_plan, coupling_failure, discretize
from prvgui.accounting.kinds.gaussian import gaussian_prv as gaussian
from prvgui.accounting.kinds.subsampled_gaussian import subsampled_gaussian_prv as subsampled_gaussian


@pytest.mark.parametrize("prv", [gaussian(0.05), subsampled_gaussian(0.8, 0.01, "remove"),
                                 subsampled_gaussian(0.8, 0.01, "add")])
def test_coarse_cells_carry_the_mass_of_their_interval_at_their_middle(prv):
    h, tau, p, r = 2e-4, 1e-16, 1e-6, 7
    fine = discretize(prv, h, tau)
    d = discretize(prv, h, tau, coarse=(p, r))
    idx = d.start + np.flatnonzero(d.pmf)
    gaps = np.diff(idx)
    # fine cells, coarse middles r apart, and (r + 1) / 2 from the last fine cell to the first
    assert set(gaps.tolist()) <= {1, r, (r + 1) // 2} and (gaps == r).sum() > 10
    assert 0 < d.coarse_prob <= p * (1 + 1e-9) and d.coarse_half == pytest.approx(r * h / 2)
    # a coarse cell in the upper tail holds sf(left edge) - sf(right edge) at its middle
    j = int(idx[np.flatnonzero(gaps == r)[-1] + 1])  # a cell r past its left neighbour
    lo, hi = (j - r // 2 - 0.5) * h, (j + r // 2 + 0.5) * h
    want = float(prv.cont.sf(np.array([lo]))[0] - prv.cont.sf(np.array([hi]))[0])
    kept = 1.0 - fine.tail_prob  # both keep (nearly) the same mass
    assert d.pmf[j - d.start] * kept == pytest.approx(want, rel=1e-9)
    # same total mean (the shift matches the mean of the truncated variable)
    assert d.mean() == pytest.approx(fine.mean(), abs=1e-12)


def test_coupling_failure_uses_the_best_number_of_coarse_draws():
    d = discretize(gaussian(0.05), 2e-4, 1e-16, coarse=(1e-6, 7))
    t, h = 0.01, 2e-4
    got, terms = coupling_failure([(d, 1000)], t, h)
    lam = 1000 * d.coarse_prob

    def bound(m):
        slack = t - 1000 * d.bias - 1000 * d.coarse_prob * d.coarse_half - m * d.coarse_half
        return math.exp(-2 * slack ** 2 / (1000 * h * h)) + lam ** (m + 1) / math.factorial(m + 1)
    best = min(bound(m) for m in range(7))
    assert got == pytest.approx(best + terms["truncation"], rel=1e-6)
    assert got <= (bound(0) + terms["truncation"]) * (1 + 1e-8)


def test_plan_is_off_for_short_compositions_and_odd_otherwise():
    assert coarse_plan(0.0092, 2.4e-3, 100, 1e-11) == (0.0, 1)
    p, r = coarse_plan(0.0092, 2.4e-5, 10_000, 1e-11)
    assert r % 2 == 1 and r >= 3 and 0 < p < 1e-5


@pytest.mark.parametrize("sigma,k", [(40.0, 50_000), (12.0, 3000), (3.0, 1000)])
def test_coarse_tails_in_use_and_the_bracket_holds(sigma, k):
    acc = Accountant([Row(Gaussian(sigma), k)], closed_forms=False)
    mu = math.sqrt(k) / sigma
    for delta in (1e-3, 1e-6, 1e-9):
        b = acc.epsilon(delta)
        assert b.lower <= ref.gaussian_epsilon(mu, delta) <= b.upper
        assert b.upper - b.lower <= 0.02
    assert acc.error_budget(1e-6)[0]["coarse_cells"] >= 3


def test_coarse_tails_agree_with_fine_tails(monkeypatch):
    rows = [Row(SubsampledGaussian(0.9, 0.02), 3000), Row(Gaussian(20.0), 500)]
    coarse = Accountant(rows).epsilon(1e-6)
    monkeypatch.setattr(pipeline_mod, "coarse_plan", lambda *a: (0.0, 1))
    fine = Accountant(rows).epsilon(1e-6)
    assert coarse.lower <= fine.upper and fine.lower <= coarse.upper
    assert abs(coarse.estimate - fine.estimate) < 1e-3


DPSGD = [(0.8, 0.01, 10_000), (0.5, 0.001, 1000), (1.0, 0.1, 300), (2.0, 0.01, 1000),
         (5.0, 0.01, 100)]


@pytest.mark.parametrize("sigma,q,k", DPSGD)
def test_screening_keeps_the_bracket_of_both_orders(sigma, q, k):
    rows = [Row(SubsampledGaussian(sigma, q), k)]
    both = Accountant(rows, screen=False)
    one = Accountant(rows)
    b_full, b = both.epsilon(1e-5), one.epsilon(1e-5)
    assert b.lower == b_full.lower and b.estimate == b_full.estimate
    assert b_full.lower <= b.upper <= b_full.upper + 1e-12
    eps = b_full.estimate
    d_full, d = both.delta(eps), one.delta(eps)
    assert d.lower == d_full.lower and d.upper <= d_full.upper * (1 + 1e-12)
    screened = [x for x in one.error_budget(1e-5) if x.get("screen")]
    full = next(x for x in both.error_budget(1e-5) if x["order"] == "add")
    if screened:  # the add order was dominated: its coarse bracket lies below the remove order's
        assert screened[0]["order"] == "add" and screened[0]["eps_error_used"] == pytest.approx(0.1)
        add_side = dict(zip(both.orders, both.profiles_behind(1e-5)))["add"].epsilon(1e-5)
        assert add_side.upper <= b.lower
    else:
        assert full["eps_error_used"] == pytest.approx(0.01)


def test_screening_skips_the_dominated_order_for_dpsgd():
    acc = Accountant([Row(SubsampledGaussian(0.8, 0.01), 10_000)])
    acc.epsilon(1e-5)
    assert {(b["order"], b.get("screen", False)) for b in acc.error_budget(1e-5)} == \
        {("remove", False), ("add", True)}
    # asking for curves (both orders) builds the add order in full
    acc.profiles(error_level(1e-5))
    assert not any(b.get("screen") for b in acc.error_budget(1e-5))


@pytest.mark.parametrize("n_rows,serial", [(4, False), (accountant_mod.SERIAL_ROWS, True)])
def test_orders_are_built_side_by_side_only_for_few_rows(monkeypatch, n_rows, serial):
    """Few rows: the second order in its own thread (long FFTs release the GIL); from
    SERIAL_ROWS distinct rows on, both in the caller's thread, one after the other. The
    bracket is the same either way."""
    rows = [Row(SubsampledGaussian(1.0 + 0.01 * i, 0.01), 3) for i in range(n_rows)]
    seen = []
    built = accountant_mod.Accountant._side

    def side(self, order, *args, **kwargs):
        seen.append((order, threading.current_thread() is threading.main_thread()))
        return built(self, order, *args, **kwargs)
    monkeypatch.setattr(accountant_mod.Accountant, "_side", side)
    got = Accountant(rows).epsilon(1e-5)
    assert {o for o, _ in seen} == {"remove", "add"}
    assert all(main for _, main in seen) == serial
    monkeypatch.setattr(accountant_mod, "SERIAL_ROWS", 1 if not serial else 10 ** 9)
    seen.clear()
    assert Accountant(rows).epsilon(1e-5) == got
    assert all(main for _, main in seen) != serial
