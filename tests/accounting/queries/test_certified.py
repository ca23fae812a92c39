"""The best certified bound (issue 15): the smallest valid upper bound among the PRV accountant
and the comparison bounds, named by source, in the engine, the view model and the CLI."""
import json
import math

from prvgui.accounting import Accountant, Gaussian, Laplace, PureDP, Row, SubsampledGaussian
from prvgui.accounting.queries.certified import best_upper
from prvgui.accounting.queries.comparisons import compare_delta, compare_epsilon
from prvgui.engine.view_model import Request, compute
from prvgui.cli import main
from prvgui.document import RowSpec, dumps
from prvgui.document.model import Document, Targets

import references as ref

MIXED = [Row(SubsampledGaussian(0.8, 0.01), 3000), Row(Laplace(10.0), 3)]
#: at delta 1e-305 (below the smallest error level, 1e-300) the PRV bracket is unbounded above, RDP's is finite
SMALL = [Row(Laplace(10.0), 3), Row(Gaussian(5.0), 2)]


def test_in_ordinary_cases_the_prv_upper_is_the_best():
    b = Accountant(MIXED).epsilon(1e-5)
    best = best_upper(b.upper, compare_epsilon(MIXED, 1e-5))
    assert best.by == "prv" and best.value == b.upper


def test_where_float64_gives_up_rdp_is_published_and_it_is_a_valid_bound():
    b = Accountant(SMALL, 0.05).epsilon(1e-305)
    comps = compare_epsilon(SMALL, 1e-305)
    best = best_upper(b.upper, comps)
    assert math.isinf(b.upper) and best.by == "rdp" and best.value == comps["rdp"].value
    assert b.lower <= best.value < math.inf


def test_the_best_is_never_above_any_candidate_and_approximations_never_compete():
    rows = [Row(Laplace(2.0), 30)]
    comps = compare_epsilon(rows, 1e-6)
    best = best_upper(math.inf, comps)  # as if the PRV bracket were useless
    bounds = [c.value for n, c in comps.items() if n in ("rdp", "basic", "advanced") and c.value is not None]
    assert best.value == min(bounds) and best.by in ("rdp", "basic", "advanced")
    fake = {"gdp": {"kind": "approximation", "value": 1e-9}}
    assert best_upper(5.0, fake).by == "prv"


def test_an_exact_value_competes_widened_by_its_rounding():
    rows = [Row(PureDP(0.1), 200)]
    exact = ref.rr_kfold_epsilon(0.1, 200, 1e-6)
    best = best_upper(math.inf, compare_epsilon(rows, 1e-6))
    assert best.by == "exact" and exact <= best.value <= exact * (1 + 2e-6) + 1e-12


def test_delta_queries_too():
    rows = [Row(Gaussian(3.0), 5), Row(Laplace(20.0), 2)]
    d = Accountant(rows).delta(1.0)
    best = best_upper(d.upper, compare_delta(rows, 1.0), want_eps=False)
    assert best.value <= d.upper and 0 <= best.value <= 1


def test_the_view_model_carries_the_best_bound_and_the_warnings():
    res = compute(Request(tuple(SMALL), delta=1e-305, epsilon=2.0, eps_error=0.05, profile_points=0,
                          tradeoff_points=0, want_pld=False))
    assert res.certified_upper.by == "rdp" and res.warnings
    assert res.certified_upper_delta is not None and res.certified_upper_delta.value <= res.delta.upper


def test_cli_json_names_the_source(tmp_path, capsys):
    doc = Document([RowSpec("laplace", {"scale": 10.0}, 3), RowSpec("gaussian", {"sigma": 5.0}, 2)],
                   targets=Targets(1e-5, 1.0, 0.05))
    f = tmp_path / "c.json"
    f.write_text(dumps(doc))
    for delta, by in (("1e-5", "prv"), ("1e-305", "rdp")):
        assert main(["epsilon", str(f), "--delta", delta, "--json"]) == 0
        out = json.loads(capsys.readouterr().out)
        assert out["certified_upper"]["by"] == by
        assert out["certified_upper"]["value"] <= out["epsilon"]["upper"]
    assert main(["epsilon", str(f), "--delta", "1e-305"]) == 0
    text = capsys.readouterr().out
    assert "publish this one (RDP" in text and "n/a (the bracket is unbounded)" in text
