"""Every bundled example loads and computes: a bracket in order, certified by some accountant,
and the words of an untight bracket where the rows call for one."""
import math

import pytest

import prvgui
from prvgui.accounting.queries.bracket import has_untight
from prvgui.paths import examples


@pytest.mark.parametrize("path", examples(), ids=lambda p: p.stem)
def test_each_example_loads_and_computes(path):
    comp = prvgui.load(path)
    b = prvgui.epsilon(comp)
    assert b.lower <= b.estimate <= b.upper and math.isfinite(b.upper)
    assert all(r.label for r in comp.rows), "each example's rows say what they show"


def test_the_fixed_size_example_is_an_untight_bracket_above_poisson():
    comp = prvgui.load(next(p for p in examples() if p.stem == "dpsgd_fixed_size"))
    assert has_untight(comp.engine_rows())
    fixed = prvgui.epsilon(comp).lower
    poisson = prvgui.epsilon({**comp.to_dict(), "mechanisms": [
        {**comp.to_dict()["mechanisms"][0], "sampling": "poisson"}]}).upper
    assert fixed > 3 * poisson
