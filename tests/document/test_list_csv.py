"""List parameters from CSV files (untrusted: every bad line named) and from typed text."""
import pytest

from prvgui.document.fileio import FileFormatError
from prvgui.document.list_csv import columns_for, list_text, parse_csv, parse_list, read_csv
from prvgui.document.model import RowSpec


def test_pairs_and_points_are_read_with_or_without_a_header():
    assert parse_csv("p,q\n0.5,0.25\n0.5,0.75\n", "pmf_pair") == {"p": (0.5, 0.5), "q": (0.25, 0.75)}
    assert parse_csv("# from my notebook\n\nq , p\n0.5,0.25\n0.5,0.75\n", "pmf_pair") == \
        {"p": (0.25, 0.75), "q": (0.5, 0.5)}
    assert parse_csv("0.5,1e-3\n1,1e-5\n", "privacy_profile") == {"points": ((0.5, 1e-3), (1.0, 1e-5))}
    assert parse_csv("δ,ε,note\n1e-3,0.5,x\n", "privacy_profile") == {"points": ((0.5, 1e-3),)}
    assert [c[0] for c in columns_for("pmf_pair")] == ["p", "q"]
    assert [c[0] for c in columns_for("privacy_profile")] == ["epsilon", "delta"]


@pytest.mark.parametrize("text,kind,message", [
    ("p,q\n0.5,0.5\n0.5,abc\n", "pmf_pair",
     'line 3, q: Probabilities q must be a number (between 0 and 1); the file has "abc"'),
    ("p,q\n0.5\n", "pmf_pair", "line 2, q: Probabilities q is missing (the line has 1 column)"),
    ("x,y\n1,2\n", "pmf_pair", "line 1: the header has no column 'p' (it has 'x', 'y'; expected p, q)"),
    ("0.5,-1\n", "pmf_pair", "line 1, q: Probabilities q must be between 0 and 1; the file has -1"),
    ("eps,delta\n1,0.1\n2,2\n", "privacy_profile",
     "line 3, delta: δ must be between 0 and 1; the file has 2"),
    ("eps,delta\n-1,0.1\n", "privacy_profile", "line 2, epsilon: ε must be at least 0; the file has -1"),
    ("eps,delta\n1e400,0.1\n", "privacy_profile",
     "line 2, epsilon: ε must be at most 1.8e308; the file has 1e400"),
    ("eps,delta\nnan,0.1\n", "privacy_profile",
     "line 2, epsilon: ε must be a number (at least 0); the file has nan"),
    ("# nothing\n", "privacy_profile", "the file has no rows of numbers"),
    ("p,q\n1,0\n", "gaussian", "Gaussian has no list to fill from a file"),
])
def test_bad_files_are_named_by_line_and_column(text, kind, message):
    with pytest.raises(FileFormatError) as err:
        parse_csv(text, kind)
    assert str(err.value) == message


def test_files_that_cannot_be_read(tmp_path):
    with pytest.raises(FileFormatError, match="cannot read"):
        read_csv(tmp_path / "missing.csv", "pmf_pair")
    bad = tmp_path / "bad.csv"
    bad.write_bytes(b"p,q\n\xff\xfe,1\n")
    with pytest.raises(FileFormatError, match="not UTF-8"):
        read_csv(bad, "pmf_pair")
    many = tmp_path / "many.csv"
    many.write_text("p,q\n" + "0,0\n" * 100_001)
    with pytest.raises(FileFormatError, match="line 100002: the file has more than 100,000 rows"):
        read_csv(many, "pmf_pair")
    ok = tmp_path / "ok.csv"
    ok.write_text("\ufeffp,q\r\n0.75,0.25\r\n0.25,0.75\r\n")  # a spreadsheet's BOM and line ends
    row = RowSpec("pmf_pair", {**read_csv(ok, "pmf_pair"), "symmetric": "no"})
    assert row.error() is None


def test_the_sums_are_the_kinds_check_not_the_readers():
    values = parse_csv("p,q\n0.5,0.5\n0.6,0.5\n", "pmf_pair")
    assert RowSpec("pmf_pair", values).error() == \
        "Probabilities p must sum to 1 (within 1e-9); they sum to 1.1"


@pytest.mark.parametrize("text,points,value", [
    ("0.5, 0.25 0.25", False, (0.5, 0.25, 0.25)),
    ("0.5,0.5,", False, (0.5, 0.5)),
    ("a, 1e400", False, ("a", "1e400")),
    ("1 1e-5; 2, 1e-8\n3 0", True, ((1.0, 1e-5), (2.0, 1e-8), (3.0, 0.0))),
    ("abc", True, ("abc",)),
    ("-2", True, (-2.0,)),
    ("  ", False, "  "),
])
def test_typed_text(text, points, value):
    assert parse_list(text, points) == value


def test_shown_text_reads_back():
    for value, points in (((0.75, 0.25), False), (((0.5, 1e-3), (1.0, 1e-5)), True),
                          ((0.1 + 0.2, 1 - 0.1 - 0.2), False)):
        assert parse_list(list_text(value, points), points) == value
