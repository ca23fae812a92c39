"""Budget view: PRV headroom and the advanced-composition privacy filter."""
import math

import pytest

from prvgui.accounting import Accountant, Laplace, PureDP, Row, SubsampledGaussian
from prvgui.accounting.queries.budget import budget_status, filter_value


def test_prv_headroom_is_exact_count():
    rows = [Row(SubsampledGaussian(1.0, 0.02), 200)]
    st = budget_status(rows, 3.0, 1e-5, row_index=0)
    assert st.decision == "CONTINUE" and 0 < st.used_fraction <= 1
    total = 200 + st.more
    assert Accountant([Row(SubsampledGaussian(1.0, 0.02), total)]).epsilon(1e-5).upper <= 3.0
    assert Accountant([Row(SubsampledGaussian(1.0, 0.02), total + 1)]).epsilon(1e-5).upper > 3.0
    assert st.filter_decision is None and "(ε, δ) guarantee per run" in st.note


def test_filter_formula_by_hand():
    eps_g, delta_g, e, k = 1.0, 1e-6, 0.01, 100
    h = eps_g ** 2 / (28.04 * math.log(1 / delta_g))
    s2 = k * e * e
    expected = k * e * math.expm1(e) / 2 + math.sqrt((s2 + h) * (2 + math.log(s2 / h + 1)) * math.log(2 / delta_g))
    assert filter_value([(k, e, 0.0)], eps_g, delta_g)[0] == pytest.approx(expected, rel=1e-12)


def test_prv_allows_more_than_the_filter():
    rows = [Row(PureDP(0.01), 100), Row(Laplace(50.0), 20)]
    st = budget_status(rows, 2.0, 1e-6, row_index=0)
    assert st.filter_decision == "CONTINUE" and st.decision == "CONTINUE"
    assert st.more >= st.filter_more > 0


def test_over_budget_halts():
    st = budget_status([Row(PureDP(0.5), 10)], 1.0, 1e-6, row_index=0)
    assert st.decision == "HALT" and st.more == 0 and st.filter_decision == "HALT" and st.filter_more == 0


@pytest.mark.parametrize("kw,needle", [
    (dict(eps_budget=0.0), "^ε budget must be greater than 0; you typed 0$"),
    (dict(eps_budget=math.nan), "^ε budget must be a number .*; you typed nan$"),
    (dict(delta_budget=1.5), "^δ budget must be greater than 0 and less than 1; you typed 1.5$"),
    (dict(row_index=4), "row index must be from 0 to 0; got 4")])
def test_bad_input(kw, needle):
    args = dict(rows=[Row(PureDP(0.1), 1)], eps_budget=1.0, delta_budget=1e-6)
    args.update(kw)
    with pytest.raises(ValueError, match=needle):
        budget_status(**args)
