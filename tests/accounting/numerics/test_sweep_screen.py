"""The steps sweep screens the order that a headline shows to be dominated (sweep._screened):
its brackets still hold the truth, agree with the unscreened sweep, and screening the wrong
order first only costs time."""
from __future__ import annotations

import numpy as np
import pytest

import references as ref
from prvgui.accounting import Accountant, Row
from prvgui.accounting.numerics import sweep as sw
from prvgui.accounting.queries.accountant import _rows_prvs
from prvgui.accounting.mechanisms import Laplace, RandomizedResponse, SubsampledGaussian
from prvgui.accounting.numerics.pipeline import error_level
from prvgui.accounting.numerics.reuse import prv_of


def exact_delta(count: int, eps: float) -> float:
    """One or two Poisson-subsampled Gaussian steps (sigma 1, q 0.5): the max over the orders."""
    one = ref.sgd_step_delta_mp if count == 1 else ref.sgd_two_steps_delta
    return max(float(one(1.0, 0.5, eps, o)) for o in ("remove", "add"))


def test_screened_sweep_brackets_the_exact_epsilon():
    acc = Accountant([Row(SubsampledGaussian(1.0, 0.5), 2)], eps_error=0.01, closed_forms=False)
    acc.epsilon(1e-5)  # the headline: remove decides, far above add
    assert acc._highest_first(1e-5) == (["remove", "add"], True)
    cs, bounds = acc.epsilon_vs_count(0, [1, 2], 1e-5)
    for c, b in zip(cs, bounds):
        assert b.upper - b.lower <= 0.02 + 1e-12
        assert exact_delta(int(c), b.lower) >= 1e-5 >= exact_delta(int(c), b.upper)


def orders_of(rows, j, names):
    others = [r for i, r in enumerate(rows) if i != j]
    return [(_rows_prvs(others, o), prv_of(rows[j].mechanism, o)) for o in names]


ROWS = [Row(SubsampledGaussian(0.9, 0.02), 2000), Row(Laplace(5.0), 4), Row(RandomizedResponse(0.2), 3)]
COUNTS = np.array([1, 3, 10, 40, 150, 600, 1300, 2000])


@pytest.mark.parametrize("names", [("remove", "add"), ("add", "remove")])
def test_screened_and_full_sweeps_agree(names):
    """Both are valid brackets of the same numbers: they overlap at every count, and each is
    within 2 eps_error; with the dominated order first, the screen saves nothing but stays right."""
    orders = orders_of(ROWS, 0, names)
    args = (COUNTS, 1e-6, error_level(1e-6), 0.01, 1 << 22)
    full, _ = sw.sweep(orders, *args)
    screened, _ = sw.sweep(orders, *args, screen=10.0)
    for f, s in zip(full, screened):
        assert s.lower <= f.upper + 1e-12 and f.lower <= s.upper + 1e-12
        assert s.upper - s.lower <= 0.02 + 1e-9
        assert s.lower <= s.estimate <= s.upper


def test_a_screened_count_takes_the_first_orders_bracket(monkeypatch):
    """Where the coarse second order lies below the first's lower end, the first's bracket is
    the answer as it stands; elsewhere the second is swept in full."""
    orders = orders_of(ROWS, 0, ("remove", "add"))
    args = (COUNTS, 1e-6, error_level(1e-6), 0.01, 1 << 22)
    swept = []
    real = sw._one_order

    def spy(order, counts, *rest):
        swept.append((order is orders[1], rest[2], counts.tolist()))
        return real(order, counts, *rest)
    monkeypatch.setattr(sw, "_one_order", spy)
    screened, _ = sw.sweep(orders, *args, screen=10.0)
    first = real(orders[0], *args, None, None)[0]
    coarse = real(orders[1], COUNTS, 1e-6, error_level(1e-6), 0.1, 1 << 22, None, None)[0]
    apart = [c.upper <= f.lower for c, f in zip(coarse, first)]
    assert any(apart)
    fine_second = [s for s in swept if s[0] and s[1] == 0.01]
    assert [c for c, a in zip(COUNTS.tolist(), apart) if not a] == (fine_second[0][2] if fine_second else [])
    for i, a in enumerate(apart):
        if a:
            assert screened[i] == first[i]
