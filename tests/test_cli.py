"""The command line: main(argv) directly, plus subprocess checks that Qt is never imported."""
import csv
import io
import json
import math
import os
import subprocess
import sys

import pytest

from prvgui.cli import main

import references as ref

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MINIMAL = os.path.join(ROOT, "tests", "fixtures", "v1_minimal.json")


def write(tmp_path, mechs, name="c.json"):
    p = tmp_path / name
    p.write_text(json.dumps({"format": "prvgui.composition", "version": 1, "mechanisms": mechs}))
    return str(p)


def test_epsilon_json(tmp_path, capsys):
    f = write(tmp_path, [{"kind": "gaussian", "sigma": 2.0, "count": 10}])
    assert main(["epsilon", f, "--delta", "1e-5", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    exact = ref.gaussian_epsilon(math.sqrt(10) / 2.0, 1e-5)
    assert out["epsilon"]["lower"] <= exact <= out["epsilon"]["upper"]
    assert out["delta"] == 1e-5 and out["eps_error"] == 0.01
    assert {"rdp", "gdp"} <= set(out["comparisons"])
    assert out["comparisons"]["rdp"]["value"] >= out["epsilon"]["lower"]


def test_delta_json(tmp_path, capsys):
    f = write(tmp_path, [{"kind": "gaussian", "sigma": 2.0, "count": 10}])
    assert main(["delta", f, "--epsilon", "1.5", "--eps-error", "0.02", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    exact = ref.gaussian_delta(math.sqrt(10) / 2.0, 1.5)
    assert out["delta"]["lower"] <= exact <= out["delta"]["upper"]
    assert out["epsilon"] == 1.5 and out["eps_error"] == 0.02


def test_readable_table(capsys):
    assert main(["epsilon", MINIMAL, "--delta", "1e-5"]) == 0
    text = capsys.readouterr().out
    assert "PRV upper" in text and "GDP" in text and "approximation" in text


def test_infinite_epsilon_is_reported(tmp_path, capsys):
    f = write(tmp_path, [{"kind": "gaussian", "sigma": 0, "count": 1}])
    assert main(["epsilon", f, "--delta", "1e-5", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["epsilon"]["upper"] == math.inf


@pytest.mark.parametrize("kind,columns", [
    ("profile", ["epsilon", "delta_lower", "delta_estimate", "delta_upper", "delta_rdp", "delta_gdp"]),
    ("tradeoff", ["alpha", "beta_lower", "beta_estimate", "beta_upper", "beta_gdp"]),
    ("steps", ["count", "epsilon_lower", "epsilon_estimate", "epsilon_upper", "epsilon_rdp", "epsilon_gdp"]),
    ("pld", ["loss", "density", "atom_mass"]),
])
def test_curve_csv(tmp_path, kind, columns):
    f = write(tmp_path, [{"kind": "subsampled_gaussian", "sigma": 1.0, "sampling_rate": 0.02, "count": 300}])
    out = tmp_path / f"{kind}.csv"
    assert main(["curve", f, "--kind", kind, "--out", str(out), "--points", "20"]) == 0
    text = out.read_text()
    body = [ln for ln in text.splitlines() if not ln.startswith("#")]
    assert text.startswith("# ") and "composition:" in text
    rows = list(csv.reader(io.StringIO("\n".join(body))))
    assert rows[0] == columns and len(rows) > 5
    if kind == "steps":
        lo = [float(r[1]) for r in rows[1:]]
        up = [float(r[3]) for r in rows[1:]]
        assert all(a <= b for a, b in zip(lo, up))
        assert up == sorted(up)


BAD_ARGS = [
    ["epsilon", "missing.json", "--delta", "1e-5"],
    ["epsilon", MINIMAL, "--delta", "nan"],
    ["epsilon", MINIMAL, "--delta", "2"],
    ["epsilon", MINIMAL, "--delta", "abc"],
    ["epsilon", MINIMAL, "--delta", "1e-5", "--eps-error", "-1"],
    ["delta", MINIMAL, "--epsilon", "-3"],
    ["delta", MINIMAL],
    ["curve", MINIMAL, "--kind", "nope", "--out", "x.csv"],
    ["curve", MINIMAL, "--kind", "steps", "--out", "x.csv", "--row", "5"],
    ["curve", MINIMAL, "--kind", "steps", "--out", "x.csv", "--points", "1000"],
    ["epsilon", MINIMAL, "--delta", "1e-5", "--bogus"],
    ["epsilon", MINIMAL, "--delta", "1e-5", "--max-memory", "lots"],
    ["epsilon", MINIMAL, "--delta", "1e-5", "--max-memory", "-2G"],
    ["epsilon", MINIMAL, "--delta", "1e-5", "--max-seconds", "0"],
    ["delta", MINIMAL, "--epsilon", "1", "--max-seconds", "soon"],
    ["epsilon", MINIMAL, "--delta", "1e-5", "--max-seconds", "nan"],
]


@pytest.mark.parametrize("value", ["nan", "inf", "soon", "0", "-3"])
def test_a_bad_time_limit_is_named_with_its_value(value, capsys):
    assert main(["epsilon", MINIMAL, "--delta", "1e-5", "--max-seconds", value]) == 2
    assert capsys.readouterr().err == (f"prvgui: error: argument --max-seconds: must be a positive number "
                                       f"of seconds, got '{value}'\n")


@pytest.mark.parametrize("argv", BAD_ARGS)
def test_bad_input_exits_2_with_one_line(argv, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("prvgui: error:")
    assert "Traceback" not in err


def test_bad_file_message_names_field(tmp_path, capsys):
    f = write(tmp_path, [{"kind": "gaussian", "sigma": 1}, {"kind": "laplace", "scale": -2}])
    assert main(["epsilon", f, "--delta", "1e-5"]) == 2
    err = capsys.readouterr().err
    assert err == f"prvgui: error: {f}: row 2 (Laplace), scale: Noise scale b must be at least 0; the file has -2\n"


def test_a_loss_range_no_grid_can_hold_gets_an_honest_message(tmp_path, capsys):
    # sigma 1e-4: the privacy loss spans ~5e7 nats; no accuracy setting helps, so none is advised;
    # the comparison accountants still answer (issue 31: valid input answers)
    f = write(tmp_path, [{"kind": "subsampled_gaussian", "sigma": 1e-4, "sampling_rate": 0.01,
                          "count": 1000}])
    assert main(["epsilon", f, "--delta", "1e-5", "--eps-error", "10"]) == 0
    out = capsys.readouterr().out
    line = next(x for x in out.splitlines() if "could not be composed" in x)
    assert "nats" in line and "far from private" in line and "--eps-error" not in line
    assert "certified     epsilon <=" in out
    assert main(["epsilon", f, "--delta", "1e-5", "--eps-error", "10", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert "far from private" in data["failed"]["prv"] and data["certified_upper"]["by"] != "prv"


def test_cli_does_not_import_qt(tmp_path):
    code = ("import sys; from prvgui.cli import main; "
            f"rc = main(['epsilon', {MINIMAL!r}, '--delta', '1e-5', '--json']); "
            "bad = [m for m in sys.modules if m.startswith(('PySide6', 'pyqtgraph', 'shiboken'))]; "
            "sys.exit(rc or (3 if bad else 0))")
    env = dict(os.environ, PYTHONPATH=ROOT)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["epsilon"]["upper"] > 0


def test_core_packages_do_not_import_qt():
    code = ("import sys, prvgui.accounting, prvgui.engine.view_model, prvgui.document, "
            "prvgui.document.export; "
            "sys.exit(any(m.startswith(('PySide6', 'pyqtgraph')) for m in sys.modules))")
    r = subprocess.run([sys.executable, "-c", code], env=dict(os.environ, PYTHONPATH=ROOT), timeout=120)
    assert r.returncode == 0


# ------------------------------------------------------------ cost before work
DPSGD = [{"kind": "subsampled_gaussian", "sigma": 1.1, "sampling_rate": 0.0042667, "count": 14063}]


@pytest.fixture
def nothing_composed(monkeypatch):
    """Composing fails the test: a refusal must come before any work."""
    from prvgui.accounting.queries import accountant
    from prvgui.engine import view_model

    def forbidden(*args, **kwargs):
        raise AssertionError("composed before the cost check")
    monkeypatch.setattr(accountant, "compose_many", forbidden)
    monkeypatch.setattr(view_model, "compute", forbidden)


@pytest.mark.parametrize("limit,named", [(["--max-seconds", "1"], "--max-seconds 1"),
                                         (["--max-memory", "100M"], "--max-memory 100.0 MB")])
def test_a_costly_query_is_refused_over_a_limit(tmp_path, capsys, nothing_composed, limit, named):
    f = write(tmp_path, DPSGD)
    assert main(["epsilon", f, "--delta", "1e-5", "--eps-error", "1e-6", *limit]) == 2
    captured = capsys.readouterr()
    err = captured.err
    assert err.count("\n") == 1 and err.startswith("prvgui: error: this would take about ")
    assert named in err and "accuracy 1e-06 needs a grid of" in err and "--eps-error" in err
    assert captured.out == ""


def test_curves_are_checked_too(tmp_path, capsys, nothing_composed):
    f = write(tmp_path, DPSGD)
    out = tmp_path / "p.csv"
    assert main(["curve", f, "--kind", "profile", "--out", str(out), "--eps-error", "1e-6",
                 "--max-seconds", "5"]) == 2
    assert "over --max-seconds 5" in capsys.readouterr().err and not out.exists()


def test_a_large_estimate_is_printed_before_the_work(monkeypatch, capsys):
    from prvgui.accounting.queries import accountant
    from prvgui.accounting.core.cost import Cost
    big = Cost(45.0, 2.1e9, 2 ** 27, "accuracy 1e-06 needs a grid of 134 million points")
    monkeypatch.setattr(accountant.Accountant, "cost", lambda self, **kw: big)
    assert main(["epsilon", MINIMAL, "--delta", "1e-5", "--json"]) == 0
    captured = capsys.readouterr()
    assert captured.err.startswith("prvgui: this will take about 45 s and 2.1 GB (accuracy 1e-06 needs")
    assert json.loads(captured.out)["epsilon"]["upper"] > 0  # stdout stays one JSON object


def test_a_cheap_query_prints_no_estimate(capsys):
    assert main(["epsilon", MINIMAL, "--delta", "1e-5", "--max-seconds", "600", "--max-memory", "8G"]) == 0
    assert capsys.readouterr().err == ""


def test_help_documents_the_limits(capsys):
    with pytest.raises(SystemExit):
        main(["epsilon", "--help"])
    text = capsys.readouterr().out
    assert "--max-seconds" in text and "--max-memory" in text and "estimated" in text


def test_risk_json_has_the_meaning_of_the_guarantee(tmp_path, capsys):
    f = write(tmp_path, [{"kind": "gaussian", "sigma": 2.0, "count": 4}])
    assert main(["risk", f, "--json", "--prior", "0.5", "--baseline", "0.01"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["gdp"]["mu"] == pytest.approx(1.0) and out["gdp"]["exact"]
    (b,) = out["bayes_risk"]
    assert b["prior"] == 0.5 and b["lower"] <= ref.gdp_bayes_risk(1.0, 0.5) <= b["upper"] + 1e-12
    (r,) = out["reconstruction"]
    from scipy.stats import norm
    assert r["baseline"] == 0.01 and r["lower"] <= norm.cdf(norm.ppf(0.01) + 1.0) <= r["upper"]


@pytest.mark.parametrize("args, words", [(["--prior", "1.5"], "--prior (prior of membership) must be"),
                                         (["--baseline", "x"], "--baseline (baseline success) must be"),
                                         (["--fpr", "0"], "--fpr (false-positive rate) must be")])
def test_risk_bad_rates_name_the_option(tmp_path, capsys, args, words):
    f = write(tmp_path, [{"kind": "gaussian", "sigma": 2.0, "count": 4}])
    assert main(["risk", f] + args) == 2
    assert words in capsys.readouterr().err


def test_calibrate_reconstruction_and_bayes(tmp_path, capsys):
    from scipy.stats import norm
    f = write(tmp_path, [{"kind": "gaussian", "sigma": 2.0, "count": 1}])
    assert main(["calibrate", f, "--row", "0", "--parameter", "sigma", "--reconstruction", "0.01", "0.05",
                 "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    mu = norm.ppf(0.05) - norm.ppf(0.01)
    assert out["value"] == pytest.approx(1 / mu, rel=0.02) and out["tpr"]["upper"] <= 0.05
    assert main(["calibrate", f, "--row", "0", "--parameter", "sigma", "--bayes-risk", "0.1", "0.2"]) == 2
    assert "--bayes-risk R must be below 0.1" in capsys.readouterr().err


@pytest.mark.parametrize("ext", ["md", "json"])
def test_report_markdown_and_json_carry_the_statement(tmp_path, ext):
    f = write(tmp_path, [{"kind": "subsampled_gaussian", "sigma": 1.0, "sampling_rate": 0.01, "count": 100}])
    out = tmp_path / f"r.{ext}"
    assert main(["report", f, "--out", str(out), "--delta", "1e-3"]) == 0
    text = out.read_text()
    if ext == "json":
        d = json.loads(text)
        fields = {x["field"]: x["value"] for x in d["statement"]}
        assert "Unit of privacy" in fields and "Hyperparameter tuning" in fields
        assert any("δ = 0.001 is large" in flag for flag in d["flags"])
    else:
        assert "## Privacy statement" in text and "| Neighbouring relation |" in text


def test_from_training_json_and_epsilon(tmp_path, capsys):
    cfg = tmp_path / "cfg.json"
    cfg.write_text(json.dumps({"framework": "jax_privacy", "dataset_size": 1000, "batch_size": 10,
                               "accumulation_steps": 8, "steps": 100, "noise_multiplier": 1.0, "delta": 1e-5}))
    out = tmp_path / "comp.json"
    assert main(["from-training", str(cfg), "--json", "--epsilon", "--out", str(out)]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["composition"]["mechanisms"][0]["sampling_rate"] == pytest.approx(0.08)
    assert got["pitfalls"] == [] and any("10 × 8 = 80" in c for c in got["conversions"])
    assert 5.5 < got["epsilon"]["certified_upper"]["value"] < 5.7
    assert main(["epsilon", str(out), "--json"]) == 0  # the written file is a composition
    assert json.loads(capsys.readouterr().out)["certified_upper"]["value"] == pytest.approx(
        got["epsilon"]["certified_upper"]["value"])


@pytest.mark.parametrize("cfg, code, words", [
    ({"framework": "opacus", "dataset_size": 100, "batch_size": 10, "epochs": 1, "noise_multiplier": "x"}, 2,
     "noise_multiplier must be"),
    ({"framework": "plain", "sampler": "weighted", "dataset_size": 100, "batch_size": 10, "epochs": 1,
      "noise_multiplier": 1}, 1, "weighted_sampler")])
def test_from_training_refusals(tmp_path, capsys, cfg, code, words):
    f = tmp_path / "cfg.json"
    f.write_text(json.dumps(cfg))
    assert main(["from-training", str(f)]) == code
    captured = capsys.readouterr()
    assert words in captured.out + captured.err


@pytest.mark.parametrize("text, words", [("[" * 100000 + "]" * 100000, "nested too deeply"),
                                         ('{"framework": "opacus", "framework": "plain"}', "duplicate key"),
                                         ('{"framework": "opacus", "dataset_size": NaN}', "NaN is not allowed"),
                                         ('{"framework": \n "opacus",, }', "line 2, column")])
def test_from_training_hostile_json(tmp_path, capsys, text, words):
    f = tmp_path / "cfg.json"
    f.write_text(text)
    assert main(["from-training", str(f)]) == 2
    assert words in capsys.readouterr().err


def test_sweep_and_workload_are_wired(tmp_path, capsys):
    """prvgui sweep and prvgui workload through main(): a two-point sweep equals single queries."""
    f = write(tmp_path, [{"kind": "gaussian", "sigma": 2.0, "count": 4}])
    out = tmp_path / "s.csv"
    assert main(["sweep", f, "--vary", "1.sigma=1:2:2", "--out", str(out), "--workers", "1"]) == 0
    rows = list(csv.DictReader(io.StringIO(out.read_text())))
    assert [float(r["1.sigma"]) for r in rows] == [1.0, 2.0]
    assert float(rows[1]["upper"]) == pytest.approx(ref.gaussian_epsilon(1.0, 1e-5), rel=0.01)
    w = tmp_path / "w.csv"
    w.write_text("label,kind,count,sigma\na,gaussian,1,2\nb,gaussian,1,4\n")
    assert main(["workload", str(w), "--json"]) == 0
    assert main(["sweep", f, "--vary", "3.sigma=1:2:2", "--out", str(out)]) == 2
    assert "--vary" in capsys.readouterr().err


@pytest.mark.parametrize("argv", [
    ["report", "{f}", "--out", "{f}"],
    ["curve", "{f}", "--kind", "profile", "--out", "{f}"],
    ["export", "{f}", "--to", "opacus", "--out", "{f}"],
    ["sweep", "{f}", "--vary", "0.sigma=1:2:2", "--out", "{f}"],
    ["report", "{f}", "--out", "{link}"],
])
def test_an_output_never_replaces_the_commands_own_input(tmp_path, capsys, argv):
    """Found by fuzzing the command line: ``report c.json --out c.json`` wrote the report over
    the composition. Any ``--out`` naming the input file (or a link to it) is refused before any
    work, and the file is left as it was."""
    f = write(tmp_path, [{"kind": "gaussian", "sigma": 2.0, "count": 10}])
    link = tmp_path / "link.json"
    link.symlink_to(f)
    before = open(f).read()
    assert main([a.format(f=f, link=link) for a in argv]) == 2
    err = capsys.readouterr().err
    assert "is the input file" in err and "choose another name" in err
    assert open(f).read() == before


def test_an_output_beside_the_input_is_written(tmp_path):
    f = write(tmp_path, [{"kind": "gaussian", "sigma": 2.0, "count": 10}])
    out = tmp_path / "c.csv"
    assert main(["curve", f, "--kind", "profile", "--out", str(out)]) == 0 and out.stat().st_size > 0
