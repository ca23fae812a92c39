"""``prvgui audit``: the audit's lower bound, its JSON, bad input, and the comparison with a
composition's certified epsilon (main(argv) directly, as tests/test_cli.py does)."""
import json

import pytest

from prvgui.accounting.queries.audit import audit
from prvgui.cli import main

KEYS = {"epsilon_lower", "method", "one_run", "fdp", "canaries", "guesses", "correct", "delta", "confidence"}


def write(tmp_path, mechs, delta=None, name="c.json"):
    doc = {"format": "prvgui.composition", "version": 1, "mechanisms": mechs}
    if delta is not None:
        doc["targets"] = {"delta": delta}
    p = tmp_path / name
    p.write_text(json.dumps(doc))
    return str(p)


def run_json(argv, capsys):
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def test_json_has_the_bounds_and_the_inputs(capsys):
    out = run_json(["audit", "--canaries", "1000", "--guesses", "1000", "--correct", "1000", "--delta", "1e-5",
                    "--json"], capsys)
    assert set(out) == KEYS
    assert out == audit(1000, 1000, 1000, 1e-5).as_dict()
    assert out["method"] == "fdp" and out["epsilon_lower"] == out["fdp"] > out["one_run"] > 5


def test_without_delta_the_refinement_is_null_and_counts_may_be_written_1e3(capsys):
    out = run_json(["audit", "--canaries", "1e3", "--guesses", "300", "--correct", "280", "--json"], capsys)
    assert out["fdp"] is None and out["method"] == "one_run" and out["delta"] == 0.0
    assert out["canaries"] == 1000 and out["epsilon_lower"] == out["one_run"] > 0


def test_text_names_both_methods(capsys):
    assert main(["audit", "--canaries", "100", "--guesses", "50", "--correct", "48"]) == 0
    text = capsys.readouterr().out
    assert "epsilon >=" in text and "Steinke" in text and "n/a" in text and "WARNING" not in text


@pytest.mark.parametrize("args,words", [
    (["--canaries", "100", "--guesses", "12", "--correct", "15"],
     "--correct must be an integer between 0 and --guesses (12); you typed 15"),
    (["--canaries", "100", "--guesses", "12.5", "--correct", "5"],
     "--guesses must be an integer between 0 and --canaries (100); you typed 12.5"),
    (["--canaries", "lots", "--guesses", "12", "--correct", "5"], '--canaries must be an integer'),
    (["--canaries", "100", "--guesses", "-3", "--correct", "0"], "--guesses must be an integer"),
    (["--canaries", "100", "--guesses", "12", "--correct", "nan"], "--correct must be an integer"),
    (["--canaries", "100", "--guesses", "12", "--correct", "5", "--delta", "1"], "--delta must be"),
    (["--canaries", "100", "--guesses", "12", "--correct", "5", "--confidence", "1.5"],
     "--confidence must be greater than 0 and less than 1; you typed 1.5"),
    (["--canaries", "100", "--guesses", "12"], "--correct"),
    (["--canaries", "100", "--guesses", "12", "--correct", "5", "missing.json"], "missing.json"),
])
def test_bad_input_exits_2_naming_the_option(args, words, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["audit", *args]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("prvgui: error:") and words in err


def test_with_a_file_delta_must_be_positive(tmp_path, capsys):
    f = write(tmp_path, [{"kind": "gaussian", "sigma": 10.0, "count": 1}])
    assert main(["audit", "--canaries", "100", "--guesses", "10", "--correct", "10", "--delta", "0", f]) == 2
    assert "--delta must be greater than 0" in capsys.readouterr().err


def test_an_audit_beyond_the_certified_epsilon_warns(tmp_path, capsys):
    # sigma 10, once: epsilon about 0.5 at 1e-6; all 1000 guesses correct proves epsilon > 5
    f = write(tmp_path, [{"kind": "gaussian", "sigma": 10.0, "count": 1}], delta=1e-6)
    args = ["audit", "--canaries", "1000", "--guesses", "1000", "--correct", "1000", f]
    out = run_json([*args, "--json"], capsys)
    assert set(out) >= KEYS | {"certified_upper", "exceeds", "plan", "curve_p_value"}
    assert out["delta"] == 1e-6  # the file's
    assert out["certified_upper"] < 1 and out["exceeds"] is True and out["curve_p_value"] < 0.05
    assert set(out["plan"]) == {"canaries", "epsilon_lower", "guesses", "correct", "alpha"}
    assert out["plan"]["epsilon_lower"] <= out["certified_upper"]
    assert main(args) == 0
    text = capsys.readouterr().out
    assert "WARNING" in text and "do not match the accounting" in text


def test_a_plausible_audit_of_a_gaussian_composition_does_not_warn(tmp_path, capsys):
    # sigma 0.5 (mu 2): epsilon about 10 at 1e-5; 216 of 219 is what the plan expects of 1000 canaries
    f = write(tmp_path, [{"kind": "gaussian", "sigma": 0.5, "count": 1}], delta=1e-5)
    out = run_json(["audit", "--canaries", "1000", "--guesses", "219", "--correct", "216", f, "--json"], capsys)
    assert out["exceeds"] is False and out["curve_p_value"] > 0.05
    assert 0 < out["plan"]["epsilon_lower"] < out["certified_upper"]
    assert out["epsilon_lower"] < out["certified_upper"]


def test_a_non_gaussian_composition_is_judged_by_its_own_curve(tmp_path, capsys):
    # randomized response at epsilon 3 guesses right with probability 0.953: 950 of 1000 is what it
    # does, and the Gaussian-family bound (above 3) is no contradiction
    f = write(tmp_path, [{"kind": "randomized_response", "epsilon": 3.0, "count": 1}], delta=1e-5)
    args = ["audit", "--canaries", "1000", "--guesses", "1000", "--correct", "950", f]
    out = run_json([*args, "--json"], capsys)
    assert out["fdp"] > out["certified_upper"] > out["one_run"]
    assert out["exceeds"] is False
    assert main(args) == 0
    text = capsys.readouterr().out
    assert "WARNING" not in text and "no contradiction" in text and "plan:" in text
