"""Hyperparameter tuning through the API, the command line and the report: ``Answer.tuning``,
``epsilon --json``'s "tuning", the text line, the report's sentence."""
import json
import math

import pytest

from prvgui import api
from prvgui.cli import main

import references as ref

GAUSS = [{"kind": "gaussian", "sigma": 2.0, "count": 3}]


def write(tmp_path, tuning, mechs=GAUSS):
    p = tmp_path / "c.json"
    p.write_text(json.dumps({"format": "prvgui.composition", "version": 4, "mechanisms": mechs,
                             "tuning": tuning}))
    return str(p)


def test_api_answer_has_tuning_for_epsilon_only():
    comp = api.Composition.from_dict({"mechanisms": GAUSS, "tuning": {"runs": "fixed", "mean": 4}})
    a = api.epsilon(comp, delta=1e-5)
    exact = ref.gaussian_epsilon(math.sqrt(12) / 2.0, 1e-5)  # 4 runs of 3 x mu = 1/2
    assert a.tuning["method"] == "prv" and exact <= a.tuning["epsilon"] <= exact + 0.02
    assert a.as_dict()["tuning"] == a.tuning
    assert api.delta(comp, epsilon=1.0).tuning is None
    plain = api.epsilon(api.Composition.from_dict({"mechanisms": GAUSS}), delta=1e-5)
    assert plain.tuning is None and "tuning" not in plain.as_dict()


def test_epsilon_json_has_tuning(tmp_path, capsys):
    f = write(tmp_path, {"runs": "truncated_negative_binomial", "mean": 10, "eta": 1},
              [{"kind": "pure_dp", "epsilon": 0.5, "count": 1}])
    assert main(["epsilon", f, "--delta", "1e-6", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    t = out["tuning"]
    assert set(t) == {"epsilon", "method", "runs", "mean", "eta", "delta", "note"}
    assert t["method"] == "pure" and t["epsilon"] == pytest.approx(1.5)  # (2 + eta) eps
    assert t["runs"] == "truncated_negative_binomial" and t["eta"] == 1.0 and t["delta"] == 1e-6


def test_epsilon_text_prints_one_tuning_line(tmp_path, capsys):
    f = write(tmp_path, {"runs": "poisson", "mean": 5})
    assert main(["epsilon", f, "--delta", "1e-6"]) == 0
    lines = [line for line in capsys.readouterr().out.splitlines() if "tuning" in line.lower()]
    assert len(lines) == 1 and "Poisson" in lines[0] and "RDP bound" in lines[0]


def test_bad_tuning_in_a_file_is_named(tmp_path, capsys):
    f = write(tmp_path, {"runs": "poisson", "mean": -1})
    assert main(["epsilon", f]) != 0
    assert "tuning.mean" in capsys.readouterr().err


def test_report_says_the_tuning_line():
    from prvgui.engine.view_model import compute
    from prvgui.report.model import gather, request_for
    comp = api.Composition.from_dict({"mechanisms": GAUSS, "tuning": {"runs": "poisson", "mean": 3}})
    req = request_for(comp, eps_error=0.05)
    assert req.tuning == comp.tuning
    res = compute(req.__class__(req.rows, req.delta, None, req.eps_error, profile_points=0, tradeoff_points=0,
                                want_pld=False, risk_fprs=(), tuning=req.tuning))
    assert res.tuning is not None and res.tuning["method"] == "rdp"
    report = gather(comp, res, risk=None)
    assert any(f.startswith("Hyperparameter tuning (best of Poisson runs") for f in report.headline.facts)


def test_engine_delivers_tuning_after_delta():
    from prvgui.accounting.queries.selection import Tuning
    from prvgui.engine.view_model import PARTS, Request, compute
    comp = api.Composition.from_dict({"mechanisms": GAUSS})
    seen = []
    req = Request(tuple(comp.engine_rows()), 1e-5, 1.0, 0.05, profile_points=10, tradeoff_points=11,
                  want_pld=False, risk_fprs=(), tuning=Tuning("fixed", 2))
    res = compute(req, partial=lambda r: seen.append(r.pending))
    assert seen[0] == ("comparisons", "delta", "tuning", "tradeoff", "profile", "refine")
    assert "tuning" not in PARTS and res.pending == () and res.tuning["runs"] == "fixed"
    assert all((r.tuning is None) for r in [compute(Request(req.rows, 1e-5, None, 0.05, profile_points=0,
                                                            tradeoff_points=0, want_pld=False, risk_fprs=()))])
