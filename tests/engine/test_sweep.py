"""Sweeps (prvgui/sweep, prvgui/cli_sweep.py): the --vary specs, the grid's order, results equal to
single `prvgui epsilon` queries float for float, resuming a killed sweep without recomputing a
finished chunk, refusing another plan's chunks, and the same file from Dask as from this process."""
import csv
import itertools
import json
import math
import os
import re
import subprocess
import sys

import pytest

from prvgui import api
from prvgui.accounting.core.errors import Cancelled
from prvgui.cli import main as cli_main
from prvgui.sweep import run as sweep_run
from prvgui.sweep.journal import PlanMismatch, out_format
from prvgui.sweep.plan import MAX_POINTS, Axis, make_plan, parse_axis
from prvgui.sweep.run import compute_chunk, point_result, run_sweep

from sweep_case import COMP, VARY, write_comp  # noqa: E402


@pytest.fixture
def comp_file(tmp_path):
    return write_comp(tmp_path)


def plan_of(path, vary=VARY, delta=1e-5, err=0.01):
    return make_plan(api.load(path), list(vary), delta, err)


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


# ------------------------------------------------------------ parsing
def test_specs_by_number_and_label(comp_file):
    comp = api.load(comp_file)
    a = parse_axis("1.sigma=0.5:2:4", comp)
    assert (a.row, a.param, a.values, a.log, a.name) == (0, "sigma", (0.5, 1.0, 1.5, 2.0), False, "1.sigma")
    b = parse_axis("training.count=1:3:10", comp)  # rounded, repeats dropped, order kept
    assert (b.row, b.param, b.values) == (1, "count", (1, 2, 3)) and b.integer
    c = parse_axis("2.sampling_rate=1e-3:1e-1:3:log", comp)
    assert c.log and c.values[0] == 1e-3 and c.values[-1] == 1e-1 and math.isclose(c.values[1], 1e-2)
    assert parse_axis("1.sigma=3:1:3", comp).values == (3.0, 2.0, 1.0)
    assert parse_axis("1.sigma=2:2:1", comp).values == (2.0,)
    assert all(type(v) is float for v in a.values)  # (not numpy floats: their repr differs)


@pytest.mark.parametrize("spec,words", [
    ("3.sigma=0.5:2:10", "--vary 3.sigma=0.5:2:10: the file has 2 rows"),
    ("0.sigma=0.5:2:10", "rows count from 1"),
    ("sigma=1:2:3", "write ROW.PARAM"),
    ("1.sigma", "ROW.PARAM=START:STOP:NUM"),
    ("=1:2:3", "ROW.PARAM=START:STOP:NUM"),
    ("nobody.sigma=1:2:3", "no row is labelled 'nobody'"),
    ("1.nope=1:2:3", "has no parameter 'nope'; it can vary sigma, sensitivity, count"),
    ("2.sampling=1:2:3", "sampling is not a number"),
    ("1.sigma=a:2:3", "START must be a number; got 'a'"),
    ("1.sigma=nan:2:3", "START must be a finite number"),
    ("1.sigma=1:1e400:3", "STOP must be a finite number"),
    ("1.sigma=1:2:x", "NUM must be a whole number"),
    ("1.sigma=1:2:2.5", "NUM must be a whole number"),
    ("1.sigma=1:2:0", "NUM must be from 1"),
    (f"1.sigma=1:2:{MAX_POINTS + 1}", "NUM must be from 1"),
    ("1.sigma=1:2", "START:STOP:NUM or START:STOP:NUM:log"),
    ("1.sigma=1:2:3:lin", "START:STOP:NUM or START:STOP:NUM:log"),
    ("1.sigma=0:2:3:log", "log spacing needs START and STOP above 0"),
    ("1.sigma=-1:2:3", "--vary 1.sigma=-1:2:3: Noise σ must be at least 0; the range holds -1"),
    ("2.sampling_rate=0.5:2:4", "Sampling rate q must be between 0 and 1; the range holds 1.5"),
    ("1.count=0:5:3", "count must be a whole number from 1"),
    ("1.sigma=1:2:1", "one point (NUM 1) needs START = STOP"),
    ("x" * 500 + ".sigma=1:2:3", "…"),
])
def test_hostile_specs_are_refused_with_the_option_and_the_value(comp_file, spec, words):
    with pytest.raises(ValueError) as e:
        make_plan(api.load(comp_file), [spec], 1e-5, 0.01)
    text = str(e.value)
    assert text.startswith("--vary") and words in text
    assert len(text) < 400


def test_ambiguous_labels_twice_varied_and_too_many_points(tmp_path, comp_file):
    p = tmp_path / "c.json"
    p.write_text(json.dumps({**COMP, "mechanisms": [dict(COMP["mechanisms"][0]), dict(COMP["mechanisms"][0])]}))
    with pytest.raises(ValueError, match="rows 1, 2 are all labelled 'queries'"):
        parse_axis("queries.sigma=1:2:3", api.load(str(p)))
    comp = api.load(comp_file)
    with pytest.raises(ValueError, match="row 1's sigma is varied already"):
        make_plan(comp, ["1.sigma=1:2:3", "queries.sigma=1:2:3"], 1e-5, 0.01)
    with pytest.raises(ValueError, match="at most 10,000,000"):
        make_plan(comp, ["1.sigma=1:2:10000", "2.count=1:10000:10000"], 1e-5, 0.01)
    with pytest.raises(ValueError, match="at least one"):
        make_plan(comp, [], 1e-5, 0.01)


# ------------------------------------------------------------ the grid
def test_grid_order_is_the_product_with_the_last_axis_fastest(comp_file):
    plan = plan_of(comp_file, ["1.sigma=1:3:3", "2.count=1:4:4", "2.sampling_rate=0.01:0.02:2"])
    assert plan.total == 24 and plan.shape == (3, 4, 2)
    product = list(itertools.product(*(a.values for a in plan.axes)))
    assert [plan.point(i) for i in range(plan.total)] == product
    with pytest.raises(IndexError):
        plan.point(24)
    comp = plan.composition_at(plan.point(23))
    assert comp.rows[0].params["sigma"] == 3.0 and comp.rows[1].count == 4
    assert comp.rows[1].params["sampling_rate"] == 0.02 and comp.rows[1].label == "training"


def test_the_digest_names_the_plan(comp_file):
    a, b = plan_of(comp_file), plan_of(comp_file)
    assert a.digest() == b.digest()
    assert plan_of(comp_file, delta=1e-6).digest() != a.digest()
    assert plan_of(comp_file, err=0.02).digest() != a.digest()
    assert plan_of(comp_file, ["1.sigma=1:3:4", VARY[1]]).digest() != a.digest()


# ------------------------------------------------------------ results
def test_every_point_equals_a_single_epsilon_query(comp_file, tmp_path, capsys):
    """Each point as its own file through `prvgui epsilon --json`: the same floats, exactly."""
    out = str(tmp_path / "r.csv")
    s = run_sweep(plan_of(comp_file), out, workers=1, chunk_size=5)
    assert (s.points, s.computed, s.failed) == (12, 12, 0)
    rows = read_csv(out)
    assert [int(r["index"]) for r in rows] == list(range(12))
    assert not os.path.exists(out + ".parts")
    capsys.readouterr()
    for r in rows:
        doc = json.loads(json.dumps(COMP))
        doc["mechanisms"][0]["sigma"] = float(r["1.sigma"])
        doc["mechanisms"][1]["count"] = int(r["2.count"])
        single = tmp_path / "single.json"
        single.write_text(json.dumps(doc))
        assert cli_main(["epsilon", str(single), "--delta", "1e-5", "--json"]) == 0
        ans = json.loads(capsys.readouterr().out)
        assert [float(r[k]) for k in ("lower", "estimate", "upper")] == \
            [ans["epsilon"][k] for k in ("lower", "estimate", "upper")]
        assert float(r["certified_upper"]) == ans["certified_upper"]["value"]
        assert float(r["proven_lower"]) == ans["epsilon"]["lower"] and "epsilon_at_least" not in ans
        assert r["by"] == ans["certified_upper"]["by"] and r["failed"] == ""


def test_a_shuffled_point_reports_the_proven_lower_bound_not_the_dominating_pairs_lower_end(tmp_path):
    """Shuffled batches: the PRV bracket is the dominating pair's (one Gaussian an epoch), its lower
    end above the truth's proven one; proven_lower is the answer's epsilon_at_least."""
    path = tmp_path / "shuffled.json"
    path.write_text(json.dumps({"format": "prvgui.composition", "version": 2, "mechanisms": [
        {"kind": "shuffled_gaussian", "sigma": 0.8, "batches_per_epoch": 1000, "count": 1}]}))
    plan = make_plan(api.load(str(path)), ["1.count=1:5:2"], 1e-6, 0.01)
    for i in range(plan.total):
        row = dict(zip(("index", *plan.names, "lower", "estimate", "upper", "proven_lower", "certified_upper",
                        "by", "failed"), point_result(plan, i)))
        ans = api.query(plan.composition_at(plan.point(i)), True, 1e-6, 0.01)
        assert ans.epsilon_at_least is not None and row["proven_lower"] == ans.epsilon_at_least
        assert row["proven_lower"] < row["lower"] <= row["certified_upper"]
    # Chua et al.'s one epoch: at least 6.04 (tests/accounting/pairs/test_shuffle_attack.py)
    assert point_result(plan, 0)[5] > 6.0


def test_a_point_whose_rows_are_invalid_says_why(comp_file):
    plan = plan_of(comp_file)
    bad = plan.__class__(plan.composition, (Axis(0, "sigma", (-1.0,)),), 1e-5, 0.01)
    row = point_result(bad, 0)
    assert row[0] == 0 and row[1] == -1.0 and all(math.isnan(v) for v in row[2:7])
    assert row[7] == "" and "row 1" in row[8] and "Noise σ" in row[8]


def test_parquet_holds_the_same_values(comp_file, tmp_path):
    pq = pytest.importorskip("pyarrow.parquet")
    run_sweep(plan_of(comp_file), str(tmp_path / "r.csv"), workers=1)
    run_sweep(plan_of(comp_file), str(tmp_path / "r.parquet"), workers=1)
    table = pq.read_table(str(tmp_path / "r.parquet")).to_pylist()
    rows = read_csv(str(tmp_path / "r.csv"))
    assert [t["index"] for t in table] == list(range(12)) and isinstance(table[0]["2.count"], int)
    for t, r in zip(table, rows):
        assert t["upper"] == float(r["upper"]) and t["by"] == r["by"] and t["failed"] == r["failed"]


def test_out_names_are_checked_first(tmp_path):
    with pytest.raises(ValueError, match=r"--out .*r\.txt: the name must end in \.csv or \.parquet"):
        out_format(str(tmp_path / "r.txt"))
    with pytest.raises(ValueError, match="does not exist"):
        out_format(str(tmp_path / "no" / "r.csv"))


# ------------------------------------------------------------ resuming
class Counting:
    """compute_chunk, counting its calls; raises KeyboardInterrupt (a kill) on call ``fail_at``."""

    def __init__(self, fail_at=None):
        self.starts, self.fail_at = [], fail_at

    def __call__(self, plan, start, stop):
        if self.fail_at is not None and len(self.starts) == self.fail_at:
            raise KeyboardInterrupt
        self.starts.append(start)
        return compute_chunk(plan, start, stop)


def test_a_killed_sweep_resumes_without_recomputing(comp_file, tmp_path):
    whole = str(tmp_path / "whole.csv")
    run_sweep(plan_of(comp_file), whole, workers=1, chunk_size=2)
    out = str(tmp_path / "r.csv")
    first = Counting(fail_at=3)
    with pytest.raises(KeyboardInterrupt):
        run_sweep(plan_of(comp_file), out, workers=1, chunk_size=2, compute=first)
    assert first.starts == [0, 2, 4] and not os.path.exists(out)
    parts = sorted(os.listdir(out + ".parts"))
    assert parts == ["chunk-000000.csv", "chunk-000001.csv", "chunk-000002.csv", "plan.json"]
    # a chunk cut short by a crash below the rename cannot exist; a damaged one is recomputed
    with open(os.path.join(out + ".parts", "chunk-000002.csv"), "a") as f:
        f.write("999,1.0\n")
    again = Counting()
    seen = []
    s = run_sweep(plan_of(comp_file), out, workers=1, chunk_size=7, compute=again,
                  progress=lambda d, t: seen.append(d))
    assert again.starts == [4, 6, 8, 10]  # the kept chunk size (2), only the chunks not finished
    assert s.computed == 8 and seen[0] == 4 and seen[-1] == 12
    assert not os.path.exists(out + ".parts")
    with open(out, "rb") as a, open(whole, "rb") as b:
        assert a.read() == b.read()


def _damaged(text: str, column: str | None, value: str) -> str:
    """The chunk's text with its first point's ``column`` set to ``value`` (None: the row cut
    after three cells; "axis": the first varied value)."""
    lines = text.split("\n")
    cells = lines[1].split(",")
    if column is None:
        cells = cells[:3]
    else:
        cells[1 if column == "axis" else lines[0].split(",").index(column)] = value
    lines[1] = ",".join(cells)
    return "\n".join(lines)


@pytest.mark.parametrize("column, value", [("lower", "nan"), ("upper", "twelve"), (None, ""), ("axis", "123.5")])
def test_a_damaged_chunk_is_computed_again(comp_file, tmp_path, column, value):
    """Found by damaging a killed sweep's folder by hand: a chunk with the right indices but a
    NaN (or words) for a number, a row without all its cells, or another value than the plan's,
    was taken as finished and went into the results. A chunk now counts as finished only with each point's plan values
    and numbers in its numeric columns."""
    out = str(tmp_path / "r.csv")
    with pytest.raises(KeyboardInterrupt):
        run_sweep(plan_of(comp_file), out, workers=1, chunk_size=2, compute=Counting(fail_at=3))
    chunk = os.path.join(out + ".parts", "chunk-000001.csv")
    with open(chunk) as f:
        text = f.read()
    with open(chunk, "w") as f:
        f.write(_damaged(text, column, value))
    again = Counting()
    run_sweep(plan_of(comp_file), out, workers=1, compute=again)
    assert again.starts[0] == 2  # the damaged chunk first, then those not finished
    rows = read_csv(out)
    whole = str(tmp_path / "whole.csv")
    run_sweep(plan_of(comp_file), whole, workers=1)
    assert rows == read_csv(whole)


def test_another_plan_is_refused_unless_restart(comp_file, tmp_path):
    out = str(tmp_path / "r.csv")
    with pytest.raises(KeyboardInterrupt):
        run_sweep(plan_of(comp_file), out, workers=1, chunk_size=2, compute=Counting(fail_at=2))
    with pytest.raises(PlanMismatch, match="--restart"):
        run_sweep(plan_of(comp_file, delta=1e-6), out, workers=1)
    assert len(os.listdir(out + ".parts")) == 3  # nothing was lost by the refusal
    counting = Counting()
    run_sweep(plan_of(comp_file, delta=1e-6), out, workers=1, chunk_size=4, restart=True, compute=counting)
    assert counting.starts == [0, 4, 8]
    assert read_csv(out)[0]["upper"] != ""


@pytest.mark.parametrize("address, words", [("garbage", "missing port"), ("http://x", "unknown address scheme")])
def test_a_bad_scheduler_address_is_named(comp_file, tmp_path, address, words):
    """dask's own message, with the option and the address it is about."""
    pytest.importorskip("dask.distributed")
    with pytest.raises(ValueError, match=f"^--scheduler '{re.escape(address)}': .*{words}"):
        run_sweep(plan_of(comp_file), str(tmp_path / "r.csv"), scheduler=address)


def test_cancel_stops_between_chunks(comp_file, tmp_path):
    out = str(tmp_path / "r.csv")
    calls = Counting()
    with pytest.raises(Cancelled):
        run_sweep(plan_of(comp_file), out, workers=1, chunk_size=3, compute=calls, cancel=lambda: len(calls.starts) == 2)
    assert calls.starts == [0, 3] and len(os.listdir(out + ".parts")) == 3


# ------------------------------------------------------------ Dask
def test_a_local_cluster_gives_the_same_file(comp_file, tmp_path):
    dd = pytest.importorskip("dask.distributed")
    local = str(tmp_path / "local.csv")
    run_sweep(plan_of(comp_file), local, workers=1)
    out = str(tmp_path / "dask.csv")
    with dd.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address="127.0.0.1:0") as c, \
            dd.Client(c) as client:
        s = run_sweep(plan_of(comp_file), out, client=client, chunk_size=3)
    assert s.where == "a Dask client" and s.computed == 12
    with open(out, "rb") as a, open(local, "rb") as b:
        assert a.read() == b.read()


def _no_prvgui(plan, start, stop):
    raise ModuleNotFoundError("No module named 'prvgui'")


def test_workers_without_prvgui_or_with_another_are_refused(comp_file, tmp_path):
    dd = pytest.importorskip("dask.distributed")
    out = str(tmp_path / "r.csv")
    with dd.LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address="127.0.0.1:0") as c, \
            dd.Client(c) as client:
        with pytest.raises(ValueError, match="cannot import prvgui .*install prvgui"):
            run_sweep(plan_of(comp_file), out, client=client, compute=_no_prvgui)
    with pytest.raises(ValueError, match="the workers run prvgui 0.0.1, this is prvgui"):
        run_sweep(plan_of(comp_file), out, workers=1, compute=lambda p, a, b: ("0.0.1", []))
    assert os.listdir(out + ".parts") == ["plan.json"]


def test_without_dask_the_message_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "dask.distributed", None)
    with pytest.raises(ValueError, match=r'prvgui\[sweep\].*--workers 1'):
        sweep_run._dask()


def test_importing_prvgui_and_the_cli_imports_no_dask():
    code = ("import sys, prvgui, prvgui.cli, prvgui.cli_sweep, prvgui.sweep.run, prvgui.sweep.plan; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('dask', 'distributed', 'pyarrow')))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.strip() == "[]", r.stderr


# ------------------------------------------------------------ at scale
@pytest.mark.slow
def test_ten_thousand_points_on_local_workers_and_a_cluster_equal_single_queries(tmp_path):
    """10^4 Gaussian points (closed form): 2 local worker processes, a LocalCluster of threads and
    one query per point in this process give the same floats."""
    dd = pytest.importorskip("dask.distributed")
    path = tmp_path / "g.json"
    path.write_text(json.dumps({**COMP, "mechanisms": [COMP["mechanisms"][0]]}))
    plan = make_plan(api.load(str(path)), ["1.sigma=0.5:5:100", "1.count=100:10000:100"], 1e-5, 0.01)
    n = plan.total
    assert n == 10_000
    local = str(tmp_path / "local.csv")
    s = run_sweep(plan, local, workers=2)
    assert s.where == "2 local worker processes (Dask)" and s.computed == n
    out = str(tmp_path / "dask.csv")
    with dd.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address="127.0.0.1:0") as c, \
            dd.Client(c) as client:
        run_sweep(plan, out, client=client)
    with open(out, "rb") as a, open(local, "rb") as b:
        assert a.read() == b.read()
    for r in read_csv(local):
        ans = api.query(plan.composition_at(plan.point(int(r["index"]))), True, 1e-5, 0.01)
        assert (float(r["lower"]), float(r["estimate"]), float(r["upper"]), float(r["proven_lower"]),
                float(r["certified_upper"])) == (ans.lower, ans.estimate, ans.upper, ans.lower,
                                                 ans.certified_upper.value)
