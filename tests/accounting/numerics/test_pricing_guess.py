"""The estimate's guess of epsilon(delta) (pricing_guess.py), which foresees the orders an
epsilon query composes tilted: against the Gaussian's closed form, on the safe side where it
cannot read delta, and against what the accountant then does."""
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import references as ref
from prvgui.accounting import Accountant, Row, SubsampledGaussian
from prvgui.accounting.kinds.gaussian import gaussian_prv
from prvgui.accounting.numerics.discretize import discretize
from prvgui.accounting.numerics.pricing import CostModel
from prvgui.accounting.numerics.pricing_guess import SETTLED, deciding, epsilon_guess, floor
from prvgui.accounting.numerics.pricing_many import counts_of


def _gaussian_rows(mus_counts, h):
    return [(discretize(gaussian_prv(mu), h, 1e-14), k) for mu, k in mus_counts]


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.floats(0.05, 2.0), st.integers(1, 50)), min_size=1, max_size=4),
       st.sampled_from([1e-3, 1e-5, 1e-8]))
def test_the_guess_is_near_the_gaussian_closed_form(mus_counts, delta):
    """Gaussian rows compose to mu = sqrt(sum k mu^2): the guess lands within a few meshes and 2%."""
    mu = math.sqrt(sum(k * m * m for m, k in mus_counts))
    mean, sd = mu * mu / 2, mu
    lo, hi = mean - 12 * sd, mean + 12 * sd
    h = (hi - lo) / 4096
    got = epsilon_guess(_gaussian_rows(mus_counts, h), lo, hi, delta)
    want = ref.gaussian_epsilon(mu, delta)
    assert got is not None
    assert abs(got - want) <= 0.02 * want + 8 * h


def test_no_guess_below_the_round_off_floor():
    rows = _gaussian_rows([(1.0, 1)], 0.01)
    n_small = epsilon_guess(rows, -8.0, 8.0, 1e-9)
    assert n_small is not None
    assert epsilon_guess(rows, -8.0, 8.0, floor(2048) / 2) is None  # (n is about 2048 here)
    assert floor(1 << 12) < 1e-10 < floor(1 << 20)


def test_deciding_keeps_orders_near_the_largest_and_all_when_unsure():
    assert deciding({"remove": 3.3, "add": 1.1}) == ["remove"]
    assert deciding({"remove": 3.3, "add": SETTLED * 3.3}) == ["remove", "add"]
    assert deciding({"remove": 1.0, "add": 3.0}) == ["add"]
    assert deciding({"remove": 3.3, "add": None}) == ["remove", "add"]
    assert deciding({"remove": math.inf, "add": 1.0}) == ["remove", "add"]


def _schedule(n, seed=0):
    rng = np.random.default_rng(seed)
    return [Row(SubsampledGaussian(float(s), float(q)), 1)
            for s, q in zip(rng.uniform(0.8, 1.5, n), rng.uniform(0.001, 0.01, n))]


@pytest.mark.parametrize("rows, delta, rel", [
    (_schedule(1000), 1e-10, 0.1),  # the add order (about 1.06) is settled by its screen
    ([Row(SubsampledGaussian(1.0, 0.01), 1000)], 1e-10, 0.01),  # add 2.1 against remove 3.3
    ([Row(SubsampledGaussian(1.1, 0.0043), 14063)], 1e-10, 0.01),  # add 3.46 against 3.77: both tilted
])
def test_the_orders_priced_tilted_are_those_the_accountant_tilts(rows, delta, rel):
    """(The guess of 1000 distinct rows composes 64 of them, each drawn for its share.)"""
    acc = Accountant(rows, 0.01)
    model = CostModel({o: acc._priced_rows(o) for o in acc.orders}, 0.01, acc.n_max)
    foreseen = model.deciding(acc.orders, delta)
    guesses = {o: model.picture(o).guess(counts_of(model.orders[o]), delta) for o in acc.orders}
    got = acc.epsilon(delta)
    assert {o for o, _, _ in acc._tilted} == set(foreseen)
    assert guesses["remove"] == pytest.approx(got.estimate, rel=rel)  # (the deciding order's)
