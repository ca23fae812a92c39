"""Rows of one mechanism compose as one row drawn as often as they are together
(Accountant._merged): k1 draws of M and k2 draws of M are k1 + k2 independent draws of M. The
answers are those of the merged rows to the bit, the cost is one row's, and what is reported per
row (the delta each spends, the steps curve of one row) stays per row."""
import math
import random

import pytest

from prvgui.accounting import Accountant, ApproxDP, Gaussian, Laplace, Row, SubsampledGaussian
from prvgui.accounting.kinds.truncated_poisson import TruncatedPoisson

TP = TruncatedPoisson(dataset_size=200, sampling_rate=0.1, max_batch=15, sigma=0.3, sensitivity=1.0)


def test_many_rows_of_one_mechanism_answer_as_one_row():
    """256 rows of one truncated Poisson step, drawn 1 to 3 times: 202 s and 292 s priced as
    rows (found composing random rows); the same bracket as one row, to the bit, and priced as
    one."""
    rng = random.Random(0)
    counts = [rng.choice([1, 1, 2, 3]) for _ in range(256)]
    many = Accountant([Row(TP, c) for c in counts], 0.01)
    one = Accountant([Row(TP, sum(counts))], 0.01)
    assert many.cost(delta=1e-8).seconds == pytest.approx(one.cost(delta=1e-8).seconds, rel=1e-9)
    assert many.epsilon(1e-8) == one.epsilon(1e-8)
    assert many.delta(5.0) == one.delta(5.0)


@pytest.mark.parametrize("relation", ["add_remove", "replace_one"])
def test_rows_merge_in_order_of_first_appearance(relation):
    a, b, c = SubsampledGaussian(1.0, 0.01), Laplace(2.0), Gaussian(3.0)
    rows = [Row(a, 2), Row(b, 1), Row(a, 1), Row(c, 4), Row(b, 5), Row(a, 0)]
    merged = [Row(a, 3), Row(b, 6), Row(c, 4)]
    for q in (1e-5, 1e-9):
        assert Accountant(rows, 0.01, relation).epsilon(q) == Accountant(merged, 0.01, relation).epsilon(q)


def test_the_delta_spent_is_still_reported_per_row():
    """An approximate-DP mechanism in rows 1 and 3: each row's share is 1 - (1 - delta)^count,
    under its own row number, and the total is theirs together."""
    m = ApproxDP(0.5, 1e-3)
    acc = Accountant([Row(m, 1), Row(Gaussian(2.0), 3), Row(m, 2)], 0.01)
    total, shares = acc.infinite_mass()
    assert [i for i, _ in shares] == [1, 3]
    assert shares[0][1] == pytest.approx(1e-3, rel=1e-12)
    assert shares[1][1] == pytest.approx(1 - (1 - 1e-3) ** 2, rel=1e-12)
    assert total == pytest.approx(1 - (1 - 1e-3) ** 3, rel=1e-12)


def test_a_steps_curve_of_a_row_whose_mechanism_others_share():
    """The varying row stays a row of its own; the others of its mechanism are merged among
    themselves: each point meets the composition made on its own, and the estimate prices it."""
    m = SubsampledGaussian(1.0, 0.01)
    rows = [Row(m, 10), Row(Gaussian(5.0), 2), Row(m, 30)]
    acc = Accountant(rows, 0.01)
    cs, bs = acc.epsilon_vs_count(0, [1, 50, 200], 1e-6)
    for c, b in zip(cs, bs):
        alone = Accountant([Row(m, int(c)), Row(Gaussian(5.0), 2), Row(m, 30)], 0.01).epsilon(1e-6)
        assert b.lower <= alone.upper and alone.lower <= b.upper
        assert b.upper - b.lower <= 0.021
    cost = acc.cost(delta=1e-6, steps=(0, [1, 50, 200]))
    assert cost.seconds > 0 and math.isfinite(cost.seconds) and cost.fits


def test_rows_at_the_most_draws_stay_rows():
    """A row holds at most MAX_COUNT draws: two rows of 10^9 draws of one mechanism stay two rows
    (merged, the count was refused as one the user never typed), and answer as before."""
    from prvgui.accounting.core.values import MAX_COUNT
    m = SubsampledGaussian(1.0, 1e-9)
    b = Accountant([Row(m, MAX_COUNT), Row(m, MAX_COUNT)], 0.01).epsilon(1e-5)
    assert 0 <= b.lower <= b.upper < math.inf
    three = Accountant([Row(m, MAX_COUNT), Row(m, 5), Row(m, MAX_COUNT - 5)], 0.01)
    assert [r.count for r in three._merged()[0]] == [MAX_COUNT, MAX_COUNT]
