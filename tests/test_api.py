"""The Python interface (prvgui.load, Composition, epsilon, delta) against the engine and files."""
import math
import subprocess
import sys
import warnings

import pytest

import prvgui
from prvgui.accounting import Accountant, Row, SubsampledGaussian
from prvgui.document import FileFormatError
from prvgui.paths import resource_dir

import references as ref

DPSGD = resource_dir() / "examples" / "dpsgd_mnist.json"


def test_load_and_query_an_example_file():
    comp = prvgui.load(DPSGD)
    assert isinstance(comp, prvgui.Composition) and comp.rows[0].count == 14063
    b = prvgui.epsilon(comp, 1e-5)
    row = comp.rows[0]
    direct = Accountant([Row(SubsampledGaussian(row.params["sigma"], row.params["sampling_rate"]), row.count)],
                        comp.targets.eps_error).epsilon(1e-5)
    assert b.bracket == direct and b.certified_upper.by == "prv" and b.upper == direct.upper
    assert prvgui.epsilon(comp).bracket == b.bracket  # the file's own target delta is 1e-5


def test_composition_from_a_plain_dict_and_back():
    d = {"mechanisms": [{"kind": "gaussian", "sigma": 2.0, "count": 5, "label": "queries"}],
         "targets": {"delta": 1e-6, "epsilon": 1.0, "eps_error": 0.005}}
    comp = prvgui.Composition.from_dict(d)
    back = prvgui.Composition.from_dict(comp.to_dict())
    assert back == comp and comp.to_dict()["version"] == 2 and comp.to_dict()["group_size"] == 1
    mu = math.sqrt(5) / 2.0
    b = prvgui.epsilon(comp)
    assert b.lower <= ref.gaussian_epsilon(mu, 1e-6) <= b.upper
    d_b = prvgui.delta(d, 1.0)  # a dict works too
    assert d_b.lower <= ref.gaussian_delta(mu, 1.0) <= d_b.upper


def test_bad_input_names_the_field():
    with pytest.raises(FileFormatError, match=r"^row 1 \(Gaussian\), sigma: Noise σ must be at least 0; "
                                              r"the file has -1$"):
        prvgui.Composition.from_dict({"mechanisms": [{"kind": "gaussian", "sigma": -1}]})
    with pytest.raises(TypeError, match="Composition"):
        prvgui.epsilon([1, 2], 1e-5)
    with pytest.raises(ValueError, match="^Target δ must be greater than 0 and less than 1; you typed 2$"):
        prvgui.epsilon({"mechanisms": [{"kind": "gaussian", "sigma": 1}]}, 2.0)


def test_a_wider_bracket_comes_with_a_warning():
    comp = {"mechanisms": [{"kind": "laplace", "scale": 10.0, "count": 3},
                           {"kind": "gaussian", "sigma": 5.0, "count": 2}]}  # (1e-305: below 1e-300)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        b = prvgui.epsilon(comp, 1e-305)
    assert b.upper - b.lower > 0.02 and any(issubclass(w.category, prvgui.AccuracyWarning) for w in caught)


def test_save_is_atomic_and_round_trips(tmp_path):
    comp = prvgui.load(DPSGD)
    path = tmp_path / "c.json"
    prvgui.save(comp, path)
    assert prvgui.load(path) == comp
    assert [p.name for p in tmp_path.iterdir()] == ["c.json"]  # no temporary file left


def test_importing_prvgui_stays_light():
    code = ("import sys, prvgui; assert prvgui.__version__; "
            "sys.exit(int(any(m.startswith(('numpy', 'prvgui.accounting')) for m in sys.modules)))")
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0


def test_the_api_returns_the_whole_answer_for_shuffled_batches():
    """Issue 26: a notebook user of shuffled batches read only 'lower 6.30' (the pair's), never the
    certified upper, the proven lower bound, the notes or the comparisons the CLI prints."""
    comp = prvgui.load(resource_dir() / "examples" / "dpsgd_shuffled.json")
    a = prvgui.epsilon(comp)
    assert a.epsilon_at_least is not None and 6.0 < a.epsilon_at_least < a.certified_upper.value
    assert a.certified_upper.value <= a.upper and "rdp" in a.comparisons
    assert a.notes and "Shuffled batches" in a.notes[0] and a.poisson.upper < 1.0
    d = a.as_dict()
    assert d["epsilon_at_least"] == a.epsilon_at_least and d["certified_upper"]["by"] == a.certified_upper.by
    assert set(d) >= {"epsilon", "delta", "comparisons", "warnings", "notes", "neighbouring", "group_size"}


def test_the_cli_json_is_the_api_answer(tmp_path, capsys):
    import json
    from prvgui.cli import main
    path = resource_dir() / "examples" / "dpsgd_fixed_size.json"
    assert main(["epsilon", str(path), "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed == json.loads(json.dumps(prvgui.epsilon(prvgui.load(path)).as_dict()))


def test_the_api_gives_the_meaning_of_the_guarantee():
    """risk (mu-GDP, Bayes risk, reconstruction), audit, statement and from_training from Python,
    each what the command line prints."""
    import math
    from scipy.stats import norm
    comp = {"targets": {"delta": 1e-6}, "mechanisms": [{"kind": "gaussian", "sigma": 2.0, "count": 4}]}
    r = prvgui.risk(comp, priors=(0.5,), baselines=(0.01,))
    assert r.gdp.mu == 1.0 and r.gdp.exact
    assert r.bayes[0].risk.lower <= norm.cdf(-0.5) <= r.bayes[0].risk.upper + 1e-12
    a = prvgui.audit(1000, 100, 90)
    assert a.delta == 0 and 0 < a.one_run < math.inf
    s = prvgui.statement(comp)
    assert dict(s.fields)["Beside ε"].startswith("ρ = 0.5")
    t = prvgui.from_training({"framework": "opacus", "dataset_size": 1000, "batch_size": 10, "epochs": 1,
                              "noise_multiplier": 1.0})
    assert t.composition.rows[0].params["sampling_rate"] == 0.01


def test_the_risk_rates_are_checked_whatever_their_python_type():
    """Found by fuzzing the API: ``risk(comp, fprs=0.5)`` raised "'float' object is not
    iterable", and ``fprs=0`` was silently the defaults. A single number is one rate; anything
    else that is not rates in (0, 1) is a ValueError naming it."""
    comp = {"mechanisms": [{"kind": "gaussian", "sigma": 2.0, "count": 10}]}
    one = prvgui.risk(comp, fprs=0.01)
    assert [p["fpr"] for p in one.as_dict()["tpr_at_fpr"]] == [0.01]
    for bad, words in [(0, "false-positive rate must be a number between 0 and 1"), ("0.1", "must be a list"),
                       (10 ** 400, "got 1000"), ([float("nan")], "got nan"), ([], "at least one")]:
        with pytest.raises(ValueError, match=words):
            prvgui.risk(comp, fprs=bad)
    with pytest.raises(ValueError, match="prior must be a number"):
        prvgui.risk(comp, priors=[1.5])
