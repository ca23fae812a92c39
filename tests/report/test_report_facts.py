"""The report and the copied tables say rho-zCDP and a matrix mechanism's sensitivity beside
epsilon (issue 27), from the engine's own sentences; a composition with a non-Gaussian row says
no rho."""
import math

from prvgui.document.composition import Composition
from prvgui.engine.view_model import Request, compute
from prvgui.report import html
from prvgui.report.model import gather
from prvgui.report.tables import markdown_table


def _result(rows, neighbouring="add_remove"):
    comp = Composition.from_dict({"neighbouring": neighbouring, "targets": {"delta": 1e-10}, "mechanisms": rows})
    req = Request(tuple(comp.engine_rows()), 1e-10, None, 0.01, neighbouring, 1, profile_points=0,
                  tradeoff_points=0, steps_row=None, want_pld=False)
    return comp, compute(req)


TREE = {"kind": "matrix_mechanism", "strategy": "tree", "steps": 1000, "sigma": 4.0, "count": 2}


def test_rho_and_the_sensitivity_in_the_report_and_the_table():
    comp, result = _result([TREE], "replace_one")
    rho = 2 * 0.5 * (2 * math.sqrt(11) / 4.0) ** 2  # two runs, replace-one doubles the sensitivity
    page = html.render(gather(comp, result))
    assert f"ρ = {rho:.6g}" in page and "L2 sensitivity 3.31662 per record (exact; largest column norm)" in page
    table = markdown_table(result)
    assert f"ρ = {rho:.6g}" in table and "Gaussian facts" in table


def test_no_rho_when_a_row_is_not_gaussian():
    comp, result = _result([TREE, {"kind": "subsampled_gaussian", "sigma": 1.0, "sampling_rate": 0.01, "count": 10}])
    page = html.render(gather(comp, result))
    assert "ρ-zCDP" not in page and "L2 sensitivity" in page
