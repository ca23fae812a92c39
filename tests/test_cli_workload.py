"""``prvgui workload`` (cli_workload.py), through a parser built with its ``add_parser`` as cli.py builds
its own: the shares it prints, the split composition it writes, and the exit status and one line that bad
input gets (cli.main: ValueError 2, Infeasible 1; ``main`` below does the same)."""
import argparse
import json

import numpy as np
import pytest

import prvgui
from prvgui import cli
from prvgui.accounting.queries.calibrate import Infeasible
from prvgui.cli_workload import add_parser, run
from prvgui.paths import resource_dir

CENSUS = str(resource_dir() / "examples" / "census_workload.csv")


class Usage(Exception):
    pass


def main(argv):
    p = argparse.ArgumentParser(prog="prvgui")

    def error(message):
        raise Usage(message)
    p.error = error
    add_parser(p.add_subparsers(dest="command"), error)
    try:
        return run(p.parse_args(argv))
    except Infeasible as exc:
        print(f"prvgui: infeasible: {exc}")
        return 1
    except (Usage, ValueError, OSError) as exc:
        print(f"prvgui: error: {exc}")
        return 2


@pytest.fixture
def csv_file(tmp_path):
    def write(text, name="w.csv"):
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        return str(path)
    return write


def test_the_census_shares_dominant_rows_and_certified_epsilon_are_printed(capsys):
    assert main(["workload", CENSUS, "--delta", "1e-10"]) == 0
    out = capsys.readouterr().out
    assert "shares of ρ (zCDP):" in out and "◀ dominant" in out
    assert "dominant (at least 80% of the total): row(s) " in out
    assert "is not a sum of the rows' shares" in out
    assert "epsilon <= " in out and "at delta 1e-10 for the whole composition (certified" in out


def test_many_alike_rows_name_a_few_dominant_rows_and_count_the_rest(capsys, csv_file):
    """300 alike discrete Gaussians: most rows are needed for 80% of the total; the summary line
    names the LISTED largest and counts the others, while every one is marked in the table."""
    from prvgui.engine.workload_view import LISTED
    sigmas = np.random.default_rng(1).uniform(50.0, 60.0, 300)
    path = csv_file("label,kind,count,sigma\n" + "".join(f"m{i},discrete_gaussian,1,{s:.6f}\n"
                                                          for i, s in enumerate(sigmas)))
    assert main(["workload", path, "--delta", "1e-6"]) == 0
    out = capsys.readouterr().out
    line = next(x for x in out.splitlines() if x.startswith("dominant (at least 80% of the total):"))
    marked = out.count("◀ dominant")
    assert marked > LISTED and f"{marked} of 300 rows, the largest " in line
    assert line.endswith(f"and {marked - LISTED} more (marked above)")
    named = line.split("the largest ")[1].split(" and ")[0].split(", ")
    assert len(named) == LISTED
    # (the largest first: the smallest sigma holds the largest share of rho)
    assert int(named[0]) == int(np.argmin(sigmas)) + 1
    # a few are all named, none is said so
    from prvgui.engine.workload_view import dominant_text
    assert dominant_text([3, 1], 5) == "row(s) 3, 1" and dominant_text([], 5) == "none"
    assert dominant_text(list(range(1, LISTED + 1)), 40).startswith("row(s) 1, 2")


def test_json_holds_the_shares_and_the_whole_answer(capsys, tmp_path):
    out_file = tmp_path / "comp.json"
    assert main(["workload", CENSUS, "--json", "--neighbouring", "replace_one", "--out", str(out_file)]) == 0
    got = json.loads(capsys.readouterr().out)
    comp = prvgui.load(out_file)
    assert comp.neighbouring == "replace_one" and len(comp.rows) == len(got["shares"]["rows"])
    assert got["shares"]["currency"] == "rho" and got["epsilon"]["neighbouring"] == "replace_one"
    assert sum(r["share"] for r in got["shares"]["rows"]) == pytest.approx(1.0)


def test_a_rho_split_writes_the_composition_and_reports_the_whole(capsys, tmp_path, csv_file):
    path = csv_file("label,kind,count,sigma,sensitivity,w\na,gaussian,1,1,,1\nb,discrete_gaussian,4,1,2,3\n")
    out_file = tmp_path / "split.json"
    assert main(["workload", path, "--split-rho", "0.5", "--weights-column", "W", "--out", str(out_file)]) == 0
    out = capsys.readouterr().out
    comp = prvgui.load(out_file)
    assert [r.label for r in comp.rows] == ["a", "b"] and "wrote " in out and "0.5-zCDP" in out
    assert comp.rows[0].params["sigma"] == pytest.approx(2.0, rel=1e-15)  # rho 0.125 = 1 / (2 sigma^2)
    path = csv_file("label,kind,count,sigma,sensitivity\na,gaussian,1,1,\nb,discrete_gaussian,4,1,2\n")
    assert main(["workload", path, "--split-rho", "0.5", "--weights", "1,3", "--out", str(out_file),
                 "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert [r["share"] for r in got["split"]["rows"]] == pytest.approx([0.125, 0.375])


def test_an_epsilon_split_is_certified_within_the_total(capsys, tmp_path, csv_file):
    path = csv_file("label,kind,count,sigma,scale\na,gaussian,2,1,\nb,laplace,1,,1\n")
    out_file = tmp_path / "split.json"
    assert main(["workload", path, "--split-epsilon", "2", "--delta", "1e-6", "--eps-error", "0.05",
                 "--out", str(out_file), "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["epsilon"]["certified_upper"]["value"] <= 2.0
    assert prvgui.load(out_file).rows[1].params["scale"] == got["split"]["rows"][1]["value"]


@pytest.mark.parametrize("text,argv,status,message", [
    ("label,kind,sigma\na,gaussian,abc\n", [], 2,
     'w.csv: line 2, column sigma: Noise σ must be a number (at least 0); the file has "abc"'),
    ("label,kind,sigma,colour\na,gaussian,1,red\n", [], 2, "w.csv: line 1, column 4: 'colour' is not a column"),
    ("label,kind,scale\na,laplace,1\n", ["--split-rho", "1", "--out", "{out}"], 2,
     "row 1 (a, Laplace): a ρ split sets the noise"),
    ("label,kind,sigma\na,gaussian,1\n", ["--split-rho", "1"], 2, "a split writes the composition: give --out"),
    ("label,kind,sigma\na,gaussian,1\n", ["--weights", "1"], 2, "--weights and --weights-column are for a split"),
    ("label,kind,sigma\na,gaussian,1\nb,gaussian,2\n", ["--split-rho", "1", "--weights", "1,x", "--out", "{out}"],
     2, '--weights entry 2 must be a number (greater than 0); you typed "x"'),
    ("label,kind,sigma\na,gaussian,1\nb,gaussian,2\n", ["--split-rho", "1", "--weights", "1", "--out", "{out}"],
     2, "the weights must be one per row: 2 rows, 1 weights"),
    ("label,kind,sigma,w\na,gaussian,1,2\nb,gaussian,2,-1\n",
     ["--split-rho", "1", "--weights-column", "w", "--out", "{out}"], 2,
     "w.csv: line 3, column w: Weight must be greater than 0; the file has -1"),
    ("label,kind,sigma\na,gaussian,1\n", ["--split-rho", "1", "--weights-column", "w", "--out", "{out}"], 2,
     "w.csv: line 1: the header has no column 'w'"),
    ("label,kind,sigma\na,gaussian,1\n", ["--delta", "2"], 2, "--delta must be greater than 0 and less than 1"),
    ("label,kind,sigma\na,gaussian,1\n", ["--split-rho", "1", "--split-epsilon", "1"], 2, "not allowed with"),
    ("label,kind,epsilon,delta\na,approx_dp,1,1e-3\n", ["--split-epsilon", "1", "--eps-error", "0.05",
                                                       "--out", "{out}"], 1, "row 1 (a, Approximate (ε, δ)-DP): "),
])
def test_bad_input_exits_with_one_line_naming_it(text, argv, status, message, csv_file, tmp_path, capsys):
    path = csv_file(text)
    argv = [a.replace("{out}", str(tmp_path / "out.json")) for a in argv]
    assert main(["workload", path, *argv]) == status
    out = capsys.readouterr().out
    assert message in out and out.count("\n") == 1, out
    assert not (tmp_path / "out.json").exists()


def test_a_missing_file_and_a_column_name_taken_exit_2(capsys, csv_file, tmp_path):
    assert main(["workload", str(tmp_path / "missing.csv")]) == 2
    assert f"cannot read {tmp_path / 'missing.csv'}" in capsys.readouterr().out
    path = csv_file("label,kind,sigma\na,gaussian,1\n")
    assert main(["workload", path, "--split-rho", "1", "--weights-column", "sigma", "--out", str(tmp_path / "o.json")]) == 2
    assert capsys.readouterr().out == ("prvgui: error: the weights column 'sigma' is a column of every workload (a "
                                       "row's own or a parameter); name a column of its own\n")


def test_a_file_that_is_not_text_and_an_out_that_cannot_be_written_are_named(capsys, csv_file, tmp_path,
                                                                            monkeypatch):
    """Not UTF-8: the message names the file. --out a folder or in a missing folder: refused before
    the work (its result would have nowhere to go)."""
    bad = tmp_path / "bin.csv"
    bad.write_bytes(b"\xff\xfe label,kind")
    assert main(["workload", str(bad)]) == 2
    assert capsys.readouterr().out == f"prvgui: error: {bad}: file is not UTF-8 text\n"
    path = csv_file("label,kind,sigma\na,gaussian,1\n")
    import prvgui.cli_workload as cw
    monkeypatch.setattr(cw, "_whole", lambda *a, **k: pytest.fail("composed before checking --out"))
    for out, why in ((tmp_path, "it is a folder, not a file name"),
                     (tmp_path / "no" / "o.json", f"the folder {tmp_path / 'no'} does not exist")):
        assert main(["workload", path, "--out", str(out)]) == 2
        assert capsys.readouterr().out == f"prvgui: error: cannot write {out}: {why}\n"


@pytest.mark.skipif("workload" not in cli.SUBCOMMANDS, reason="cli.py does not register workload yet")
def test_the_command_line_runs_it(capsys):
    assert cli.main(["workload", CENSUS, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["shares"]["currency"] == "rho"


def test_the_cost_limits_refuse_before_the_whole_composition(capsys, tmp_path, monkeypatch):
    """--max-seconds and --max-memory hold for the whole composition's epsilon, as for ``prvgui
    epsilon``: over a limit, one line naming it and exit status 2, before any composing and
    before the table is printed; under it, the answer as without."""
    from prvgui import api
    composed = []
    real = api.epsilon
    monkeypatch.setattr(api, "epsilon", lambda *a, **k: composed.append(1) or real(*a, **k))
    assert cli.main(["workload", CENSUS, "--max-memory", "1K"]) == 2
    err = capsys.readouterr()
    assert "over --max-memory" in err.err and err.out == "" and not composed
    assert cli.main(["workload", CENSUS, "--max-seconds", "1e-6", "--split-rho", "0.5",
                     "--out", str(tmp_path / "s.json")]) == 2
    assert "over --max-seconds" in capsys.readouterr().err
    assert cli.main(["workload", CENSUS, "--json", "--max-memory", "100G"]) == 0
    assert json.loads(capsys.readouterr().out)["shares"]["currency"] == "rho" and composed
