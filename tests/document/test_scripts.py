"""Scripts for other libraries (document/scripts.py): valid Python for every kind under every relation,
numbers written with repr, what cannot be expressed said in the script; run with the library installed,
the dp_accounting and prv_accountant scripts agree with prvgui's certified bracket. prvgui itself never
imports the peers."""
import ast
import os
import re
import subprocess
import sys

import pytest

import prvgui
from prvgui.accounting.core.values import Relation
from prvgui.accounting.mechanisms import MECHANISM_KINDS
from prvgui.document.composition import Composition
from prvgui.document.model import RowSpec
from prvgui.document.scripts import TARGETS, export_script, script

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def every_kind(neighbouring: str, group: int) -> Composition:
    """One row per example of every kind that is valid under the relation."""
    relation = Relation(neighbouring, group)
    rows = [RowSpec(kind, dict(params), 3, f"{kind} example")
            for kind, cls in MECHANISM_KINDS.items() for params in cls.examples]
    rows = [r.normalised() for r in rows if r.problem(relation) is None]
    rows.append(RowSpec("gaussian", {"sigma": 0.1 + 0.2}, 7, ""))
    return Composition(tuple(rows), neighbouring, group_size=group)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("neighbouring, group", [("add_remove", 1), ("replace_one", 1), ("add_remove", 3)])
def test_scripts_are_valid_python_with_the_numbers_written_exactly(target, neighbouring, group):
    comp = every_kind(neighbouring, group)
    assert len(comp.rows) > 10
    s = script(comp, target)
    compile(s.text, f"<{target} script>", "exec")
    assert repr(0.1 + 0.2) in s.text  # 0.30000000000000004, not 0.3
    assert f"DELTA = {comp.targets.delta!r}" in s.text
    for note in s.notes:
        assert repr(note) in s.text  # each note is printed by the script
    for i in range(len(comp.rows)):
        assert f"# row {i + 1} (" in s.text  # each row is there, as code or as the reason it is not


def test_what_a_library_cannot_express_is_said():
    comp = Composition.from_dict({"mechanisms": [
        {"kind": "shuffled_gaussian", "sigma": 1.0, "batches_per_epoch": 10, "count": 2},
        {"kind": "pmf_pair", "p": [0.5, 0.5], "q": [0.25, 0.75]},
        {"kind": "laplace", "scale": 2.0}]})
    text = export_script(comp, "opacus")
    assert "row 1 (Shuffled Gaussian (DP-SGD epoch)); NOT a certified bound" in text
    assert "(1.0, 0.1, 20)," in text  # the Poisson counterpart: 10 steps an epoch at rate 1/10
    assert "row 2 (Pair of distributions (p, q)): NOT EXPRESSED" in text
    assert "row 3 (Laplace): NOT EXPRESSED: Opacus' accountants take Poisson-subsampled Gaussian steps only" in text
    replace = Composition.from_dict({"neighbouring": "replace_one", "mechanisms": [
        {"kind": "subsampled_gaussian", "sigma": 1.0, "sampling_rate": 0.01, "sampling": "fixed_size"},
        {"kind": "gaussian", "sigma": 3.0}]})
    s = script(replace, "prv_accountant")
    assert any("assumes add/remove neighbouring" in n for n in s.notes)
    assert any("fixed-size batches" in n and "NOT EXPRESSED" in n for n in s.notes)
    assert "GaussianMechanism(noise_multiplier=3.0, l2_sensitivity=2.0)" in s.text  # twice the sensitivity
    assert "RELATION = dp_accounting.NeighboringRelation.REPLACE_ONE" in export_script(replace, "dp_accounting")
    with pytest.raises(ValueError, match="the target must be one of dp_accounting, opacus, prv_accountant"):
        export_script(replace, "tensorflow_privacy")


def test_prvgui_never_imports_the_peers():
    peers = {"dp_accounting", "prv_accountant", "opacus", "jax_privacy", "tensorflow_privacy"}
    for folder, _, files in os.walk(os.path.join(ROOT, "prvgui")):
        for name in files:
            if not name.endswith(".py"):
                continue
            path = os.path.join(folder, name)
            with open(path, encoding="utf-8") as f:
                tree = ast.parse(f.read())
            for node in ast.walk(tree):
                names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                    [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else []
                assert not any(n.split(".")[0] in peers for n in names), f"{path} imports {names}"


def _run(text: str, tmp_path) -> str:
    path = tmp_path / "script.py"
    path.write_text(text, encoding="utf-8")
    r = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    return r.stdout


DPSGD = Composition.from_dict({"targets": {"delta": 1e-5}, "mechanisms": [
    {"kind": "subsampled_gaussian", "sigma": 1.1, "sampling_rate": 0.02, "count": 300},
    {"kind": "gaussian", "sigma": 10.0, "count": 5}]})


@pytest.mark.parametrize("target, module, line", [
    ("dp_accounting", "dp_accounting", r"epsilon \(dp_accounting PLD\) = (\S+)"),
    ("prv_accountant", "prv_accountant", r"epsilon \(prv_accountant upper\) = (\S+)")])
def test_running_the_script_gives_prvguis_epsilon_within_a_few_percent(target, module, line, tmp_path):
    pytest.importorskip(module)
    out = _run(export_script(DPSGD, target), tmp_path)
    theirs = float(re.search(line, out).group(1))
    ours = prvgui.epsilon(DPSGD)
    assert ours.lower * 0.97 <= theirs <= ours.upper * 1.03, out


def test_a_replace_one_group_free_script_keeps_dp_accountings_relation(tmp_path):
    pytest.importorskip("dp_accounting")
    comp = Composition.from_dict({"neighbouring": "replace_one", "mechanisms": [
        {"kind": "subsampled_gaussian", "sigma": 1.1, "sampling_rate": 0.02, "count": 100}]})
    out = _run(export_script(comp, "dp_accounting"), tmp_path)
    theirs = float(re.search(r"epsilon \(dp_accounting PLD\) = (\S+)", out).group(1))
    ours = prvgui.epsilon(comp)
    assert ours.lower * 0.97 <= theirs <= ours.upper * 1.03, out
