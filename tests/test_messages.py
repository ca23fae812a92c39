"""Messages people read (issue 15, "words people use"): every field is named by its label, the value
given is shown as it was written, once, and no internal name (``sampling_rate``, ``approx_dp``,
``eps_error``) appears where a label exists. The GUI half (typing into the forms) is
tests/gui/test_gui_messages.py.
"""
import json
import math

import pytest

from prvgui.accounting.kinds.base import Matrix
from prvgui.accounting.kinds.matrix_mechanism import Amplification

from prvgui.accounting.kinds.base import Choice, Points, Vector

from prvgui.accounting import Accountant, Row
from prvgui.accounting.queries.comparisons import compare_delta, compare_epsilon
from prvgui.accounting.mechanisms import MECHANISM_KINDS, mechanism_from_params
from prvgui.accounting.core.validate import NumberError, check_delta, check_eps_error, check_epsilon, range_text
from prvgui.cli import main
from prvgui.document.fileio import FileFormatError, loads
from prvgui.document.model import RowSpec

#: every parameter of every kind: (kind, parameter name, its label)
FIELDS = [(kind, name, spec.title) for kind, cls in MECHANISM_KINDS.items()
          for name, spec in cls.param_specs().items()]
#: what people type that is not accepted, and how a message must show it
TYPED = [("abc", '"abc"'), ("-1", "-1"), ("inf", "inf"), ("nan", "nan"), ("1e400", "1e400"),
         ("-1e400", "-1e400"), ("1.5", "1.5")]
INTERNAL = {"sampling_rate", "sigma", "scale", "epsilon", "delta", "eps_error", "sensitivity", "got ",
            *MECHANISM_KINDS}


def as_typed(text: str) -> object:
    """What the form passes on for typed text (gui/fmt.parse_number, without importing Qt)."""
    try:
        v = float(text)
    except ValueError:
        return text
    return v if math.isfinite(v) else text


def rejected(spec, text: str) -> bool:
    v = as_typed(text)
    if isinstance(v, str):
        return True
    return not spec.lo <= v <= spec.hi or (spec.lo_open and v == spec.lo)


def no_internal_names(message: str, label: str = "") -> None:
    """No internal name outside the label ("scale" is part of "Noise scale b")."""
    rest = message.replace(label, "") if label else message
    for word in INTERNAL:
        assert word not in rest, (word, message)


@pytest.mark.parametrize("kind,name,label", FIELDS)
def test_every_parameter_message_names_its_label_and_the_value_once(kind, name, label):
    spec = MECHANISM_KINDS[kind].param_specs()[name]
    params = MECHANISM_KINDS[kind].initial_params()
    checked = 0
    for text, shown in TYPED:
        if not rejected(spec, text):
            continue
        with pytest.raises(NumberError) as err:
            mechanism_from_params(kind, {**params, name: as_typed(text)})
        message = str(err.value)
        assert message.startswith(f"{label} must be "), message
        assert message.endswith(f"; you typed {shown}"), message
        assert message.count(label) == 1 and message.count(shown) == 1, message
        assert err.value.field == name
        no_internal_names(message, label)
        checked += 1
    assert checked >= 5  # text, nan, inf, 1e400 and a value out of range at least


@pytest.mark.parametrize("kind,name,label", FIELDS)
def test_the_file_loader_names_the_row_the_key_and_the_label(kind, name, label):
    spec = MECHANISM_KINDS[kind].param_specs()[name]
    bad = -1 if spec.lo >= 0 or isinstance(spec, (Vector, Points)) else 2.0
    row = {"kind": kind, **MECHANISM_KINDS[kind].initial_params(), name: bad}
    text = json.dumps({"format": "prvgui.composition", "version": max(2, MECHANISM_KINDS[kind].since_version),
                       "mechanisms": [{"kind": "gaussian", "sigma": 1}, row]})
    with pytest.raises(FileFormatError) as err:
        loads(text)
    title = MECHANISM_KINDS[kind].title
    if isinstance(spec, Choice):  # a named choice, not a number
        needs = "one of " + " or ".join(f'"{v}"' for v, _ in spec.choices)
    elif isinstance(spec, Matrix):
        needs = "a list of rows of numbers (at most 2000 x 2000)"
    elif isinstance(spec, Amplification):
        needs = ('a list [m, B] of the dataset size m and the expected batch size B ({"dataset_size": m, '
                 '"batch_size": B} in a file), or empty for none')
    elif isinstance(spec, Vector) and not range_text(spec.lo, spec.hi, spec.lo_open):
        needs = f"a list of {spec.entries}"
    elif isinstance(spec, Points):
        needs = "a list of [ε, δ] pairs"
    elif isinstance(spec, Vector):
        needs = f"a list of {spec.entries} ({range_text(spec.lo, spec.hi, spec.lo_open)})"
    else:
        needs = range_text(spec.lo, spec.hi, spec.lo_open)
    assert str(err.value) == f"row 2 ({title}), {name}: {label} must be {needs}; the file has -1"
    # a number too large for a float is shown as the file has it
    with pytest.raises(FileFormatError) as err:
        loads(text.replace(f'"{name}": -1', f'"{name}": 1e400'))
    assert str(err.value).startswith(f"row 2 ({title}), {name}: {label} must be ")
    assert str(err.value).endswith("; the file has 1e400")


@pytest.mark.parametrize("text,shown", [("abc", '"abc"'), ("0", "0"), ("-3", "-3"), ("2.5", "2.5"),
                                        ("1e400", "1e400"), ("2e9", "2e9"), ("12345678901", "12345678901"),
                                        ("", None)])
def test_count_messages(text, shown):
    spec = RowSpec("gaussian", {"sigma": 1.0}, as_typed(text))
    message = spec.error()
    assert message.startswith("Count must be a whole number from 1 to 1,000,000,000; "), message
    assert message.endswith(f"you typed {shown}" if shown else "the field is empty")
    assert message.count("Count") == 1 and spec.problem().field == "count"


@pytest.mark.parametrize("check,label,text,shown,needs", [
    (check_delta, "Target δ", "2", "2", "greater than 0 and less than 1"),
    (check_delta, "Target δ", "0", "0", "greater than 0 and less than 1"),
    (check_delta, "Target δ", "abc", '"abc"', "a number (greater than 0 and less than 1)"),
    (check_delta, "Target δ", "1e400", "1e400", "greater than 0 and less than 1"),
    (check_epsilon, "ε", "-1", "-1", "at least 0"),
    (check_epsilon, "ε", "inf", "inf", "a finite number (at least 0)"),
    (check_epsilon, "ε", "1e400", "1e400", "at most 1.8e308"),
    (check_eps_error, "Accuracy (ε error)", "100", "100", "between 1e-6 and 10"),
    (check_eps_error, "Accuracy (ε error)", "1e-9", "1e-9", "between 1e-6 and 10"),
    (check_eps_error, "Accuracy (ε error)", "nan", "nan", "a number (between 1e-6 and 10)"),
])
def test_target_messages(check, label, text, shown, needs):
    with pytest.raises(NumberError) as err:
        check(as_typed(text))
    assert str(err.value) == f"{label} must be {needs}; you typed {shown}"
    assert err.value.message("the file has").endswith(f"; the file has {shown}")


# ------------------------------------------------------------------ the command line
MINIMAL = {"format": "prvgui.composition", "version": 2,
           "mechanisms": [{"kind": "subsampled_gaussian", "sigma": 1.0, "sampling_rate": 0.01, "count": 10}]}


@pytest.mark.parametrize("argv,expected", [
    (["epsilon", "F", "--delta", "2"], "--delta must be greater than 0 and less than 1; you typed 2"),
    (["epsilon", "F", "--delta", "1e400"], "--delta must be greater than 0 and less than 1; you typed 1e400"),
    (["epsilon", "F", "--delta", "abc"],
     '--delta must be a number (greater than 0 and less than 1); you typed "abc"'),
    (["epsilon", "F", "--eps-error", "100"], "--eps-error must be between 1e-6 and 10; you typed 100"),
    (["delta", "F", "--epsilon", "-1"], "--epsilon must be at least 0; you typed -1"),
    (["calibrate", "F", "--row", "0", "--parameter", "sigma", "--target-epsilon", "0"],
     "--target-epsilon must be greater than 0; you typed 0"),
    (["calibrate", "F", "--row", "0", "--parameter", "scale", "--target-epsilon", "1"],
     "a Subsampled Gaussian (DP-SGD step) row can be calibrated for sigma, sampling_rate, count; "
     "not for 'scale'"),
    (["calibrate", "F", "--row", "3", "--parameter", "sigma", "--target-epsilon", "1"],
     "--row must be a row index from 0 to 0 (rows count from 0; the file has 1 row); you typed 3"),
])
def test_command_line_messages(argv, expected, tmp_path, capsys):
    f = tmp_path / "c.json"
    f.write_text(json.dumps(MINIMAL))
    assert main([str(f) if a == "F" else a for a in argv]) == 2
    assert capsys.readouterr().err == f"prvgui: error: {expected}\n"


def test_a_bad_file_on_the_command_line(tmp_path, capsys):
    f = tmp_path / "c.json"
    bad = json.loads(json.dumps(MINIMAL))
    bad["mechanisms"][0]["sampling_rate"] = 1.5
    f.write_text(json.dumps(bad))
    assert main(["epsilon", str(f)]) == 2
    assert capsys.readouterr().err == (f"prvgui: error: {f}: row 1 (Subsampled Gaussian (DP-SGD step)), "
                                       "sampling_rate: Sampling rate q must be between 0 and 1; "
                                       "the file has 1.5\n")


# ------------------------------------------------------------------ notes beside the results
def _rows(*specs):
    return [Row(mechanism_from_params(kind, params), count) for kind, params, count in specs]


COMPOSITIONS = {
    "subsampled Gaussian without noise": _rows(("subsampled_gaussian",
                                                {"sigma": 0.0, "sampling_rate": 0.01}, 10)),
    "subsampled Laplace without noise": _rows(("subsampled_laplace",
                                               {"scale": 0.0, "sampling_rate": 0.1}, 2)),
    "Gaussian without noise": _rows(("gaussian", {"sigma": 0.0}, 1)),
    "Gaussian and approximate DP": _rows(("gaussian", {"sigma": 1.0}, 1),
                                         ("approx_dp", {"epsilon": 1.0, "delta": 1e-7}, 2)),
    "approximate DP alone": _rows(("approx_dp", {"epsilon": 1.0, "delta": 1e-7}, 2)),
    "approximate DP above the target": _rows(("approx_dp", {"epsilon": 0.1, "delta": 1e-3}, 10)),
    "two pure DP rows": _rows(("pure_dp", {"epsilon": 0.1}, 2), ("pure_dp", {"epsilon": 0.2}, 2)),
    "Gaussians only": _rows(("gaussian", {"sigma": 2.0}, 3), ("gaussian", {"sigma": 1.0}, 1)),
    "DP-SGD and Laplace": _rows(("subsampled_gaussian", {"sigma": 1.0, "sampling_rate": 0.01}, 100),
                                ("laplace", {"scale": 10.0}, 3)),
    "nothing leaks": _rows(("gaussian", {"sigma": 1.0, "sensitivity": 0.0}, 3)),
}


@pytest.mark.parametrize("name", COMPOSITIONS)
def test_notes_speak_of_the_rows_there_are_in_their_names(name):
    rows = COMPOSITIONS[name]
    present = {r.mechanism.title for r in rows}
    absent = {cls.title for cls in MECHANISM_KINDS.values()} - present
    for out in (compare_epsilon(rows, 1e-5), compare_delta(rows, 1.0)):
        for c in out.values():
            no_internal_names(c.note)
            for title in absent:
                if not any(title in t for t in present):  # "Gaussian" is part of "Subsampled Gaussian"
                    assert title not in c.note, (c.name, c.note)
            if not any(r.mechanism.eps_delta() is not None and r.mechanism.eps_delta()[1] > 0 for r in rows):
                # no row has a delta of its own: no note may speak of the rows' deltas
                assert "rows' total δ" not in c.note and "δ > 0" not in c.note, (c.name, c.note)


def test_rdp_at_sigma_zero_says_why_it_is_infinite():
    rows = COMPOSITIONS["subsampled Gaussian without noise"]
    rdp = compare_epsilon(rows, 1e-5)["rdp"]
    assert rdp.value == math.inf
    assert rdp.note == ("the Rényi divergence of Subsampled Gaussian (DP-SGD step) with these parameters "
                        "is infinite")


def test_the_accountants_warnings_use_words_people_use():
    acc = Accountant(_rows(("laplace", {"scale": 10.0}, 3), ("gaussian", {"sigma": 5.0}, 2)))
    acc.epsilon(1e-305)  # below the smallest error level (1e-300): the bracket is unbounded
    assert acc.warnings
    for w in acc.warnings:
        no_internal_names(w)
        assert "accuracy" in w or "δ" in w
