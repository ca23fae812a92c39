"""``prvgui import`` and ``prvgui export`` (cli_interop.py), through a parser built with its
``add_parsers`` as cli.py builds its own: what they write and print, and the messages that bad input
gets (cli.main turns a ValueError into exit status 2 and one line; ``main`` below does the same)."""
import argparse
import json

import pytest

import prvgui
from prvgui.cli_interop import COMMANDS, add_parsers
from prvgui.document.composition import Composition

EVENT = {"class_name": "ComposedDpEvent", "events": [
    {"class_name": "SelfComposedDpEvent", "count": 100,
     "event": {"class_name": "PoissonSampledDpEvent", "sampling_probability": 0.01,
               "event": {"class_name": "GaussianDpEvent", "noise_multiplier": 1.1}}},
    {"class_name": "RandomizedResponseDpEvent", "noise_parameter": 0.5, "num_buckets": 2}]}


class Usage(Exception):
    pass


def parser():
    p = argparse.ArgumentParser(prog="prvgui")

    def error(message):
        raise Usage(message)
    p.error = error
    add_parsers(p.add_subparsers(dest="command"), error)
    return p


def main(argv):
    """As cli.main: the command's status; bad usage and ValueError exit 2 with one line."""
    try:
        args = parser().parse_args(argv)
        return COMMANDS[args.command](args)
    except Usage as exc:
        print(f"prvgui: error: {exc}")
        return 2
    except ValueError as exc:
        print(f"prvgui: error: {exc}")
        return 2


@pytest.fixture
def event_file(tmp_path):
    path = tmp_path / "event.json"
    path.write_text(json.dumps(EVENT), encoding="utf-8")
    return path


def test_import_writes_the_composition_and_prints_rows_and_notes(event_file, tmp_path, capsys):
    out = tmp_path / "comp.json"
    assert main(["import", str(event_file), "--from", "dpevent", "--out", str(out), "--delta", "1e-6"]) == 0
    text = capsys.readouterr().out
    comp = prvgui.load(out)
    assert [r.kind for r in comp.rows] == ["subsampled_gaussian", "randomized_response"]
    assert comp.neighbouring == "replace_one" and comp.targets.delta == 1e-6
    assert "2 row(s), replace one record, target delta 1e-06:" in text
    assert "subsampled_gaussian (sigma = 1.1, sampling_rate = 0.01) × 100" in text
    assert "note: neighbouring: replace_one" in text and f"wrote {out}" in text


def test_import_json_prints_the_composition_file(event_file, capsys):
    assert main(["import", str(event_file), "--from", "dpevent", "--json"]) == 0
    comp = Composition.from_dict(json.loads(capsys.readouterr().out))
    assert comp.rows[0].count == 100


def test_import_without_out_writes_nothing_and_says_so(event_file, tmp_path, capsys):
    assert main(["import", str(event_file), "--from", "dpevent"]) == 0
    assert "nothing written" in capsys.readouterr().out
    assert sorted(p.name for p in tmp_path.iterdir()) == ["event.json"]


@pytest.mark.parametrize("argv, message", [
    (["import", "FILE", "--from", "dpevent", "--delta", "2"], "--delta"),
    (["import", "FILE", "--from", "tensorflow"], "argument --from: invalid choice: 'tensorflow'"),
    (["import", "FILE"], "the following arguments are required: --from"),
    (["import", "FILE", "--from", "opacus"], "FILE: class_name: not a field of an Opacus accountant's state"),
    (["export", "FILE", "--to", "jax"], "argument --to: invalid choice: 'jax'"),
    (["export", "FILE", "--to", "opacus"], "class_name: not a field of a composition file"),
])
def test_bad_input_exits_2_with_one_line_naming_the_field(argv, message, event_file, capsys):
    argv = [str(event_file) if a == "FILE" else a for a in argv]
    message = message.replace("FILE", str(event_file))
    assert main(argv) == 2
    out = capsys.readouterr().out
    assert out.count("\n") == 1 and out.startswith("prvgui: error: ") and message in out


def test_an_unreadable_import_names_the_problem(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text('{"class_name": "GaussianDpEvent", "noise_multiplier": -1}', encoding="utf-8")
    assert main(["import", str(bad), "--from", "dpevent"]) == 2
    assert capsys.readouterr().out == (f"prvgui: error: {bad}: noise_multiplier must be a number >= 0; "
                                       "got -1\n")
    assert main(["import", str(tmp_path / "missing.json"), "--from", "dpevent"]) == 2
    assert "cannot read" in capsys.readouterr().out


def test_export_to_stdout_and_to_a_file(tmp_path, capsys):
    comp = tmp_path / "comp.json"
    prvgui.save(Composition.from_dict({"mechanisms": [
        {"kind": "subsampled_gaussian", "sigma": 1.1, "sampling_rate": 0.01, "count": 100},
        {"kind": "laplace", "scale": 2.0}]}), comp)
    assert main(["export", str(comp), "--to", "opacus"]) == 0
    captured = capsys.readouterr()
    compile(captured.out, "script", "exec")
    assert "(1.1, 0.01, 100)," in captured.out
    assert "prvgui: note: row 2 (Laplace): NOT EXPRESSED" in captured.err
    script = tmp_path / "script.py"
    assert main(["export", str(comp), "--to", "dp_accounting", "--out", str(script)]) == 0
    captured = capsys.readouterr()
    assert captured.out == "" and f"wrote {script}" in captured.err
    assert "E.LaplaceDpEvent(noise_multiplier=2.0)" in script.read_text(encoding="utf-8")
