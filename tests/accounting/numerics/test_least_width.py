"""pipeline.least_width / check_fits: a composition that cannot fit any grid is refused before
its rows are discretised, and the bound never exceeds the window the composition chooses."""
import numpy as np
import pytest

from prvgui.accounting import Accountant, Row
from prvgui.accounting.kinds import KINDS
from prvgui.accounting.kinds.shuffled_gaussian import ShuffleAttack
from prvgui.accounting.mechanisms import mechanism_from_params
from prvgui.accounting.numerics import pipeline
from prvgui.accounting.numerics.compose import prepared_row
from prvgui.accounting.numerics.packed import dense
from prvgui.accounting.numerics.window import choose_window
from prvgui.accounting.queries import accountant as accountant_mod
from prvgui.accounting.queries.accountant import _rows_prvs


def _window(prvs, plan) -> float:
    """The width of the window compose.compose chooses for these rows on the plan's mesh."""
    discs = pipeline.discretize_many(prvs, plan, 24 * 2 ** 20)
    rows = [(dense(d), k) for d, k in discs if k > 0]
    lo, hi, _ = choose_window([(prepared_row(d, None, k), k) for d, k in rows], plan.e_w)
    return hi - lo


def _cases(counts):
    for name, cls in sorted(KINDS.items()):
        for i, mech in enumerate(cls.example_instances()):
            for k in counts:
                for order in ("remove", "add"):
                    yield pytest.param(mech, k, order, id=f"{name}{i}-{k}-{order}")


def _check(mech, k, order, eps_error, delta):
    try:
        prvs = _rows_prvs([Row(mech, k)], order)
    except ValueError:
        pytest.skip("no such order")
    if not prvs or any(p.inf_mass >= 1 for p, _ in prvs):
        pytest.skip("nothing composed")
    plan = pipeline.make_plan(eps_error, 1.0, k, pipeline.error_level(delta), 1)
    got = pipeline.least_width(prvs, plan)
    window = _window(prvs, plan)
    assert 0.0 <= got <= window
    return got, window


@pytest.mark.parametrize("mech, k, order", list(_cases((30,))))
def test_the_bound_is_below_the_window_chosen(mech, k, order):
    _check(mech, k, order, 0.05, 1e-5)


@pytest.mark.slow
@pytest.mark.parametrize("mech, k, order", list(_cases((1, 30, 1000))))
@pytest.mark.parametrize("eps_error, delta", [(0.05, 1e-5), (0.5, 1e-10), (0.01, 1e-3)])
def test_the_bound_is_below_the_window_chosen_more_widely(mech, k, order, eps_error, delta):
    _check(mech, k, order, eps_error, delta)


@pytest.mark.parametrize("sigma", [0.5, 3.0, 40.0])
def test_for_a_gaussian_it_is_most_of_the_window(sigma):
    """Not a bound that cannot fail by being 0: for a Gaussian drawn once, within 40% of it
    (the discretisation's margin, a few cells, is most of the gap at sigma 40)."""
    got, window = _check(KINDS["gaussian"].from_params({"sigma": sigma}), 1, "remove", 0.05, 1e-5)
    assert got >= 0.6 * window


def test_mixed_rows_are_bounded_by_their_window():
    rows = [Row(mechanism_from_params("gaussian", {"sigma": 2.0}), 3),
            Row(mechanism_from_params("laplace", {"scale": 0.7}), 5),
            Row(mechanism_from_params("subsampled_gaussian", {"sigma": 1.1, "sampling_rate": 0.02}), 200)]
    for order in ("remove", "add"):
        prvs = _rows_prvs(rows, order)
        plan = pipeline.make_plan(0.05, 1.0, sum(k for _, k in prvs), pipeline.error_level(1e-6), len(prvs))
        got, window = pipeline.least_width(prvs, plan), _window(prvs, plan)
        assert 0.3 * window <= got <= window


def test_many_rows_are_not_bounded():
    """(from tree.TREE_MIN rows on the composition may be grouped, and each group's window is cut
    before the top one: the argument does not reach that, so nothing is claimed)"""
    prvs = [(KINDS["gaussian"].from_params({"sigma": 1 + i / 10}).prv("remove"), 1) for i in range(16)]
    plan = pipeline.make_plan(0.05, 1.0, 16, 1e-11, 16)
    assert pipeline.least_width(prvs, plan) == 0.0


def test_a_hopeless_shuffled_gaussian_is_refused_before_discretising(monkeypatch):
    """(the property sweep's input: sigma 1 at sensitivity 1e6 under replace-one in groups of 5;
    each order discretised 2.3 x 10^7 cells in 15 s before the composition found its window too
    wide for any grid)"""
    def refuse(*args, **kwargs):
        raise AssertionError("discretised a composition that cannot fit")
    monkeypatch.setattr(accountant_mod, "discretize_many", refuse)
    # (the attack pair that input's lower bound composes: engine/view_model.py)
    acc = Accountant([Row(ShuffleAttack(noise=1e-6, batches=238, shift=1.0, base=1.0), 1153)], 0.05)
    with pytest.raises(MemoryError, match="far from private"):
        acc.epsilon(1e-5)


def test_a_composition_that_fits_is_not_refused():
    row = Row(mechanism_from_params("subsampled_gaussian", {"sigma": 0.8, "sampling_rate": 0.01}), 30)
    prvs = _rows_prvs([row], "remove")
    plan = pipeline.make_plan(0.05, 1.0, 30, 1e-11, 1)
    cells = pipeline.least_width(prvs, plan) / plan.h
    assert cells > 100
    pipeline.check_fits(prvs, plan, int(cells) + 1)
    # (a window of ``cells`` cells read at the aggregation's coarsest decimation)
    decimated = int(cells) // (int(2 * plan.agg_max / plan.h) + 2)
    with pytest.raises(MemoryError):
        pipeline.check_fits(prvs, plan, decimated)


def test_tails_that_fail_claim_nothing():
    """A kind whose tail functions overflow or give NaN far out: no bound, and no error (the
    query goes on to discretise, which says what it says)."""
    from prvgui.accounting.pairs.prv import PRV, Continuous

    def overflowing(x):
        raise OverflowError("far out")

    def nan(x):
        return np.full(np.shape(x), np.nan)
    plan = pipeline.make_plan(0.05, 1.0, 10, 1e-11, 1)
    for f in (overflowing, nan):
        prv = PRV((), 0.0, Continuous(-1.0, 1.0, 1.0, f, f, 0.0), 0.0, 0.0)
        assert pipeline.least_width([(prv, 10)], plan) == 0.0
        pipeline.check_fits([(prv, 10)], plan, 16)


def test_rows_kept_from_an_earlier_query_are_not_checked_again(monkeypatch):
    """(an edit in the window recomposes rows whose discretisations are kept: nothing to save)"""
    row = Row(mechanism_from_params("gaussian", {"sigma": 1.7071}), 7)
    Accountant([row], 0.05, closed_forms=False).epsilon(1e-6)
    calls = []
    real = pipeline.least_width
    monkeypatch.setattr(pipeline, "least_width", lambda *a: calls.append(a) or real(*a))
    again = Accountant([row], 0.05, closed_forms=False).epsilon(1e-6)
    assert calls == [] and again.lower <= again.upper
    Accountant([Row(mechanism_from_params("gaussian", {"sigma": 1.9137}), 7)], 0.05, closed_forms=False).epsilon(1e-6)
    assert calls  # (a row not seen before is)


@pytest.mark.slow
def test_a_composition_refused_at_first_is_coarsened_and_still_brackets_the_truth(monkeypatch):
    """sigma 3e-4, 30 draws: the loss spans about 10^5 nats, more than n_max cells at the accuracy
    asked. The check refuses the first mesh without discretising; ``coarsened`` widens; the
    bracket holds the Gaussian's exact epsilon (Balle and Wang's delta(epsilon), mu = sqrt(30) / sigma)."""
    import math
    from scipy.optimize import brentq
    from scipy.stats import norm
    refused = []
    real = pipeline.check_fits

    def spy(prvs, plan, n_max):
        try:
            real(prvs, plan, n_max)
        except MemoryError:
            refused.append(plan.h)
            raise
    monkeypatch.setattr(accountant_mod, "check_fits", spy)
    sigma, k = 3e-4, 30
    acc = Accountant([Row(mechanism_from_params("gaussian", {"sigma": sigma}), k)], 0.01, closed_forms=False)
    got = acc.epsilon(1e-6)
    mu = math.sqrt(k) / sigma
    exact = brentq(lambda e: norm.cdf(-e / mu + mu / 2) - math.exp(e + norm.logcdf(-e / mu - mu / 2)) - 1e-6,
                   0.0, mu * mu)
    assert refused and acc.eps_error_used > 0.01
    assert got.lower <= exact <= got.upper
    assert got.upper - got.lower <= 2 * acc.eps_error_used * (1 + 1e-9)
