"""`prvgui sweep` (prvgui/cli_sweep.py): the command writes the file and says so, refuses bad
options with the option's name, keeps the chunks on Ctrl-C (exit 130), and prints its progress."""
import argparse
import io

import pytest

from prvgui.cli_sweep import ProgressLine, add_parser, run
from prvgui.sweep import run as sweep_run
from prvgui.sweep.journal import read_results

from sweep_case import VARY, write_comp  # noqa: E402


@pytest.fixture
def comp_file(tmp_path):
    return write_comp(tmp_path)


def parse(argv):
    p = argparse.ArgumentParser(prog="prvgui")
    add_parser(p.add_subparsers(dest="command"), p.error)
    return p.parse_args(argv)


def test_command_writes_the_file_and_says_so(comp_file, tmp_path, capsys):
    out = str(tmp_path / "r.csv")
    assert run(parse(["sweep", comp_file, "--vary", VARY[0], "--vary", VARY[1], "--out", out,
                      "--workers", "1", "--delta", "1e-6"])) == 0
    text = capsys.readouterr()
    assert text.out.startswith(f"wrote {out}: 12 points at delta 1e-06") and "12 / 12 points" in text.err
    cols = read_results(out)
    assert cols["index"] == list(range(12)) and cols["2.count"][:4] == [100, 215, 464, 1000]


@pytest.mark.parametrize("argv,words", [
    (["--vary", "9.sigma=1:2:3"], "the file has 2 rows"),
    (["--vary", VARY[0], "--workers", "0"], "--workers must be a whole number of at least 1"),
    (["--vary", VARY[0], "--workers", "2", "--scheduler", "tcp://h:8786"], "give one of the two"),
    (["--vary", VARY[0], "--delta", "2"], "--delta"),
    (["--vary", VARY[0], "--eps-error", "-1"], "--eps-error"),
])
def test_command_refuses_bad_options(comp_file, tmp_path, argv, words):
    with pytest.raises(ValueError, match=words):
        run(parse(["sweep", comp_file, "--out", str(tmp_path / "r.csv"), *argv]))


def test_ctrl_c_keeps_the_chunks_and_exits_130(comp_file, tmp_path, capsys, monkeypatch):
    def interrupted(*a, **k):
        raise KeyboardInterrupt
    monkeypatch.setattr(sweep_run, "run_sweep", interrupted)
    out = str(tmp_path / "r.csv")
    assert run(parse(["sweep", comp_file, "--vary", VARY[0], "--out", out])) == 130
    assert "the same command goes on from there" in capsys.readouterr().err


def test_progress_line_off_a_terminal_prints_each_tenth():
    stream, now = io.StringIO(), [0.0]
    line = ProgressLine(stream, tty=False, clock=lambda: now[0])
    for done in range(0, 101):
        now[0] = done * 0.5
        line(done, 100)
    lines = stream.getvalue().splitlines()
    assert len(lines) == 11 and lines[0] == "sweep: 0 / 100 points (0%)"
    assert lines[5] == "sweep: 50 / 100 points (50%), 2 points/s, about 25 s left"
    assert lines[-1].endswith("done")


def test_progress_line_on_a_terminal_rewrites_one_line():
    stream, now = io.StringIO(), [0.0]
    line = ProgressLine(stream, tty=True, clock=lambda: now[0])
    line(40, 100)  # a resumed sweep
    now[0] = 10.0
    line(60, 100)
    line.end()
    text = stream.getvalue()
    assert text.count("\r") == 2 and text.endswith("\n") and text.count("\n") == 1
    assert "finished before" in text and "2 points/s, about 20 s left" in text


