"""Workload CSVs (document/workload.py): read into a composition and written back unchanged; hostile
files refused with the line, the column and the value named."""
import pytest

from prvgui.document.composition import Composition
from prvgui.document.fileio import MAX_BYTES, FileFormatError
from prvgui.document.model import RowSpec
from prvgui.document.workload import MAX_ROWS, parse_workload, read_workload, write_workload
from prvgui.paths import resource_dir

CENSUS = resource_dir() / "examples" / "census_workload.csv"
HEAD = "label,kind,count,sigma,sensitivity\n"


def test_a_workload_reads_into_rows_with_the_kinds_defaults():
    comp = read_workload("# measurements\nlabel,kind,count,sigma,sensitivity,rho\n"
                         "total,discrete_gaussian,1,8,,\ncounties,discrete_gaussian,50,30,2,\nz,zcdp,,,,0.01\n")
    assert comp.rows == (RowSpec("discrete_gaussian", {"sigma": 8}, 1, "total"),
                         RowSpec("discrete_gaussian", {"sigma": 30, "sensitivity": 2}, 50, "counties"),
                         RowSpec("zcdp", {"rho": 0.01}, 1, "z"))
    assert comp.neighbouring == "add_remove" and comp.targets.delta == 1e-5
    other = read_workload("kind,sigma\ngaussian,1\n", neighbouring="replace_one", delta=1e-9)
    assert other.neighbouring == "replace_one" and other.targets.delta == 1e-9


def test_the_round_trip_keeps_every_kind_of_cell():
    rows = (RowSpec("gaussian", {"sigma": 0.7, "sensitivity": 2.5}, 3, 'a "quoted", comma label'),
            RowSpec("discrete_gaussian", {"sigma": 12.0}, 1, "#1 looks like a comment"),
            RowSpec("subsampled_gaussian", {"sigma": 1.1, "sampling_rate": 0.01, "sampling": "poisson"}, 1000, ""),
            RowSpec("zcdp", {"rho": 1e-5, "xi": 0.25}, 2, "line\nbreak"),
            RowSpec("pmf_pair", {"p": (0.75, 0.25), "q": (0.25, 0.75), "symmetric": "yes"}, 4, "pair"),
            RowSpec("privacy_profile", {"points": ((0.5, 1e-3), (1.0, 1e-6))}, 1, "profile"),
            RowSpec("matrix_mechanism", {"strategy": "banded_toeplitz", "sigma": 2.0, "steps": 8,
                                         "coefficients": (1.0, 0.5), "amplification": (64, 8)}, 1, "mf"))
    comp = Composition(rows)
    text = write_workload(comp)
    assert text.splitlines()[0].startswith("label,kind,count,sigma,sensitivity,")
    assert read_workload(text) == comp
    assert read_workload(write_workload(read_workload(text))) == comp


def test_the_census_example_reads_and_round_trips():
    comp = read_workload(CENSUS)
    assert len(comp.rows) >= 24 and {r.kind for r in comp.rows} == {"discrete_gaussian"}
    assert all(r.label for r in comp.rows)
    assert read_workload(write_workload(comp)) == comp


def test_bom_crlf_comments_and_blank_lines_are_accepted(tmp_path):
    path = tmp_path / "w.csv"
    path.write_bytes("\ufeff# a comment\r\n\r\nlabel,kind,count,sigma\r\n  # indented comment\r\n"
                     "x,gaussian,2,1.5\r\n".encode("utf-8"))
    assert read_workload(path).rows == (RowSpec("gaussian", {"sigma": 1.5}, 2, "x"),)
    assert read_workload(str(path)) == read_workload(path)
    w = parse_workload(path.read_text(encoding="utf-8-sig"))
    assert w.lines == (5,)
    # a quote in a comment opens nothing; a # inside a quoted cell's second line is no comment
    w = parse_workload('# 5" of rain\nlabel,kind,sigma\n"two\n# lines",gaussian,1\nb,gaussian,2\n')
    assert [r.label for r in w.composition.rows] == ["two\n# lines", "b"] and w.lines == (3, 5)


def test_extra_columns_are_kept_as_text_when_asked_for():
    w = parse_workload("label,kind,sigma,Weight\na,gaussian,1,2\nb,gaussian,3,\n", extra=("weight",))
    assert w.extra == {"weight": ("2", "")} and len(w.composition.rows) == 2
    with pytest.raises(FileFormatError, match="line 1, column 4: 'Weight' is not a column"):
        parse_workload("label,kind,sigma,Weight\na,gaussian,1,2\n")
    with pytest.raises(ValueError, match="the weights column 'sigma' is a column of every workload"):
        parse_workload("kind,sigma\ngaussian,1\n", extra=("sigma",))


@pytest.mark.parametrize("text,message", [
    (HEAD + "a,gaussian,1,1,1\nb,gaussian,1,abc,1\n",
     'line 3, column sigma: Noise σ must be a number (at least 0); the file has "abc"'),
    (HEAD + "a,gaussian,1,-1,1\n", "line 2, column sigma: Noise σ must be at least 0; the file has -1"),
    (HEAD + "a,gaussian,1,1e400,1\n", "line 2, column sigma: Noise σ must be at most 1.8e308; the file has 1e400"),
    (HEAD + "a,gaussian,1,nan,1\n", "line 2, column sigma: Noise σ must be a number (at least 0); the file has nan"),
    (HEAD + "a,discrete_gaussian,1,2,1.5\n",
     "line 2, column sensitivity: Sensitivity Δ must be a whole number; the file has 1.5"),
    (HEAD + "a,gaussian,0,1,1\n",
     "line 2, column count: Count must be a whole number from 1 to 1,000,000,000; the file has 0"),
    (HEAD + "a,gaussian,two,1,1\n",
     'line 2, column count: Count must be a whole number from 1 to 1,000,000,000; the file has "two"'),
    (HEAD + "a,gausian,1,1,1\n", 'line 2, column kind: the kind must be one of approx_dp, '),
    (HEAD + "a,,1,1,1\n", 'line 2, column kind: the kind must be one of approx_dp, '),
    ("label,kind,scale\na,gaussian,1\n", "line 2, column scale: a Gaussian row has no parameter scale "
     "(its parameters: sigma, sensitivity); leave the cell empty"),
    ("label,kind,sigma\na,gaussian,\n", "line 2, column sigma: a Gaussian row needs Noise σ (there is no "
     "default); the cell is empty"),
    ("label,kind,count,noise\n", "line 1, column 4: 'noise' is not a column of a workload"),
    ("label,kind,,sigma\n", "line 1, column 3: the header's column has no name"),
    ("label,kind,sigma,SIGMA\n", "line 1, column 4: the header names 'SIGMA' twice"),
    ("label,count,sigma\na,1,1\n", "line 1: the header has no column 'kind'"),
    (HEAD + "a,gaussian,1,1\n", "line 2: 4 cells, but the header (line 1) has 5 columns"),
    (HEAD + "a,gaussian,1,1,1,9\n", "line 2: 6 cells, but the header (line 1) has 5 columns"),
    (HEAD + '"a,gaussian,1,1,1\n', "line 2: not a CSV line"),
    (HEAD + 'a"b",gaussian,1,1,1\n', None),
    (HEAD + "a\0,gaussian,1,1,1\n", "line 2: not a CSV line"),
    ("", "the file is empty"),
    ("# only a comment\n\n", "the file is empty"),
    (HEAD, "the file has a header (line 1) but no rows"),
    ("kind,sigma,sampling_rate,sampling\nsubsampled_gaussian,1,0.1,fixed_size\n",
     "line 2, column sampling: Fixed-size batches"),
    ("kind,sigma,sampling_rate,sampling\nsubsampled_gaussian,1,0.1,sometimes\n",
     'line 2, column sampling: Batches must be one of "poisson" or "fixed_size"; the file has "sometimes"'),
    ("kind,p,q\npmf_pair,0.5 0.6,0.5 0.5\n", "line 2, column p: Probabilities p must sum to 1"),
    ("label,kind,sigma\n" + "x" * 201 + ",gaussian,1\n",
     "line 2, column label: the label must be at most 200 characters; it has 201"),
])
def test_hostile_files_are_refused_naming_line_column_and_value(text, message):
    if message is None:  # a stray quote inside a cell is text (the csv module's rule), never a crash
        assert read_workload("\n" + text).rows[0].label == 'a"b"'
        return
    with pytest.raises(FileFormatError) as err:
        parse_workload(text)
    assert str(err.value).startswith(message), str(err.value)


def test_more_than_the_row_limit_is_refused_and_the_limit_itself_is_read():
    body = "".join(f"m{i},gaussian,1,{1 + i % 5},\n" for i in range(MAX_ROWS))
    assert len(parse_workload(HEAD + body).composition.rows) == MAX_ROWS
    with pytest.raises(FileFormatError, match=f"line {MAX_ROWS + 2}: the file has more than 100,000 rows"):
        parse_workload(HEAD + body + "one more,gaussian,1,1,\n")


def test_files_over_the_size_limit_and_not_utf8_are_refused(tmp_path):
    with pytest.raises(FileFormatError, match="larger than"):
        read_workload(HEAD + "#" * MAX_BYTES + "\n")
    path = tmp_path / "latin1.csv"
    path.write_bytes((HEAD + "caf\xe9,gaussian,1,1,1\n").encode("latin-1"))
    with pytest.raises(FileFormatError, match="not UTF-8"):
        read_workload(path)
    with pytest.raises(FileFormatError, match="cannot read"):
        read_workload(tmp_path / "missing.csv")


def test_the_neighbouring_and_delta_come_from_the_caller_checked():
    with pytest.raises(ValueError, match="--neighbouring must be one of"):
        read_workload(HEAD + "a,gaussian,1,1,1\n", neighbouring="swap")
    with pytest.raises(ValueError, match="Target δ must be"):
        read_workload(HEAD + "a,gaussian,1,1,1\n", delta=2)
