"""A total budget split over a workload's rows (document/workload_split.py): the composition's rows
keep their labels and counts, get their noise, and a row that cannot be split is named by its label."""
import math

import pytest

import prvgui
from prvgui.accounting.core.values import PLAIN
from prvgui.accounting.queries.workload import row_rho
from prvgui.document.workload import read_workload
from prvgui.document.workload_split import split_budget
from prvgui.paths import resource_dir

CENSUS = resource_dir() / "examples" / "census_workload.csv"


def test_the_census_split_in_rho_meets_the_total_and_follows_the_weights():
    comp = read_workload(CENSUS, delta=1e-10)
    weights = [1.0 + (i % 4) for i in range(len(comp.rows))]
    split = split_budget(comp, 2.0, "rho", weights)
    new = split.composition
    assert [(r.label, r.count, r.kind) for r in new.rows] == [(r.label, r.count, r.kind) for r in comp.rows]
    rho = [row_rho(r, PLAIN) for r in new.engine_rows()]
    assert math.fsum(rho) == pytest.approx(2.0, rel=1e-13)
    assert [x / weights[i] for i, x in enumerate(rho)] == pytest.approx([2.0 / sum(weights)] * len(rho), rel=1e-13)
    assert split.parameters == ("sigma",) * len(rho) and split.as_dict()["rows"][0]["parameter"] == "sigma"
    assert "2-zCDP" in split.note()
    assert new.to_dict()["mechanisms"][0]["sigma"] == new.rows[0].params["sigma"]  # a file can hold it


def test_an_epsilon_split_is_certified_within_the_total():
    comp = read_workload("label,kind,count,sigma,scale\na,gaussian,3,1,\nb,laplace,1,,1\n", delta=1e-6)
    split = split_budget(comp, 2.0, "epsilon", [3, 1], eps_error=0.05)
    assert split.targets == (1.5, 0.5)
    assert prvgui.epsilon(split.composition, eps_error=0.05).certified_upper.value <= 2.0
    assert "basic composition" in split.note()


def test_a_row_that_cannot_be_split_is_named_by_its_label():
    comp = read_workload("label,kind,count,sigma,scale\ncounts,gaussian,3,1,\nmedian,laplace,1,,1\n")
    with pytest.raises(ValueError, match=r"^row 2 \(median, Laplace\): a ρ split"):
        split_budget(comp, 1.0, "rho")
    with pytest.raises(ValueError, match="the currency must be rho or epsilon"):
        split_budget(comp, 1.0, "dollars")


@pytest.mark.parametrize("scale", [1e308, 5e-324, 1.0])
def test_weights_at_a_floats_ends_split_as_their_ratios(scale):
    """Found by hostile command lines: weights of 1e308 each raised "intermediate overflow in
    fsum"; only their ratios count, at any scale a float holds."""
    comp = read_workload(CENSUS, delta=1e-10)
    n = len(comp.rows)
    weights = [scale] * (n - 1) + [scale / 2 if scale > 1e-300 else scale]
    split = split_budget(comp, 2.0, "rho", weights)
    rho = [row_rho(r, PLAIN) for r in split.composition.engine_rows()]
    last = 0.5 if scale > 1e-300 else 1.0
    assert math.fsum(rho) == pytest.approx(2.0, rel=1e-13)
    assert rho[-1] / rho[0] == pytest.approx(last, rel=1e-12)
    assert split.targets == pytest.approx([2.0 / (n - 1 + last)] * (n - 1) + [2.0 * last / (n - 1 + last)], rel=1e-13)
