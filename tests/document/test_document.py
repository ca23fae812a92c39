"""The composition file: loader rejections name row and field; round trip; atomic saves."""
import json
import os

import pytest

from prvgui.document import Document, FileFormatError, RowSpec, Targets, dumps, load, loads, save
from prvgui.document.fileio import curve_csv

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "fixtures")


def doc_text(mechs, **top):
    d = {"format": "prvgui.composition", "version": 1, "neighbouring": "add_remove", "mechanisms": mechs}
    d.update(top)
    return json.dumps(d)


@pytest.mark.parametrize("name", sorted(os.listdir(FIXTURES)))
def test_released_v1_fixtures_keep_loading(name):
    doc = load(os.path.join(FIXTURES, name))
    assert len(doc) >= 1
    doc.engine_rows()


def test_issue_example():
    doc = load(os.path.join(FIXTURES, "v1_minimal.json"))
    r = doc.rows[0]
    assert (r.kind, r.count, r.label) == ("subsampled_gaussian", 10000, "training")
    assert r.params == {"sigma": 0.8, "sampling_rate": 0.01}


BAD = [
    (doc_text([{"kind": "gausian", "sigma": 1}]),
     'row 1, kind: the mechanism must be one of approx_dp, '),
    (doc_text([{"kind": "gausian", "sigma": 1}]), 'gaussian, laplace, '),
    (doc_text([{"kind": "gausian", "sigma": 1}]), 'subsampled_laplace, truncated_poisson, zcdp; the file has "gausian"'),
    (doc_text([{"kind": "gaussian"}]),
     "row 1 (Gaussian), sigma: Noise σ must be a number (at least 0); it is missing"),
    (doc_text([{"kind": "gaussian", "sigma": 1}, {"kind": "gaussian", "sigma": -1}]),
     "row 2 (Gaussian), sigma: Noise σ must be at least 0; the file has -1"),
    (doc_text([{"kind": "gaussian", "sigma": "1"}]),
     'row 1 (Gaussian), sigma: Noise σ must be a number (at least 0), not text; the file has "1"'),
    (doc_text([{"kind": "gaussian", "sigma": 1, "noise": 3}]), "row 1 (Gaussian), noise: not a field"),
    (doc_text([{"kind": "gaussian", "sigma": 1, "count": 0}]),
     "row 1 (Gaussian), count: Count must be a whole number from 1 to 1,000,000,000; the file has 0"),
    (doc_text([{"kind": "gaussian", "sigma": 1, "count": 2.5}]),
     "row 1 (Gaussian), count: Count must be a whole number from 1 to 1,000,000,000; the file has 2.5"),
    (doc_text([{"kind": "gaussian", "sigma": 1, "count": True}]), "the file has true"),
    (doc_text([{"kind": "approx_dp", "epsilon": 1, "delta": 2}]),
     "row 1 (Approximate (ε, δ)-DP), delta: δ must be between 0 and 1; the file has 2"),
    (doc_text([{"kind": "subsampled_gaussian", "sigma": 1, "sampling_rate": 1.5}]),
     "row 1 (Subsampled Gaussian (DP-SGD step)), sampling_rate: Sampling rate q must be between 0 and 1; "
     "the file has 1.5"),
    (doc_text([{"kind": "subsampled_gaussian", "sigma": 1.5, "sampling_rate": 0.1}]).replace("1.5", "1e400"),
     "row 1 (Subsampled Gaussian (DP-SGD step)), sigma: Noise multiplier σ must be at most 1.8e308; "
     "the file has 1e400"),
    (doc_text([{"kind": "gaussian", "sigma": 1, "label": 7}]), "row 1 (Gaussian), label:"),
    (doc_text([["gaussian"]]), "row 1 of mechanisms must be an object; the file has a list"),
    ('{"format": "prvgui.composition", "version": 1, "mechanisms": [{"kind": "gaussian", "sigma": NaN}]}',
     "NaN"),
    ('{"format": "prvgui.composition", "version": 1, "mechanisms": [{"kind": "gaussian", "sigma": Infinity}]}',
     "Infinity"),
    (doc_text([]).replace('"version": 1', '"version": 5'), "version 5"),
    (doc_text([]).replace('"version": 1', '"version": "1"'),
     'version: must be a whole number; the file has "1"'),
    (doc_text([]).replace('"prvgui.composition"', '"other"'), 'format: must be "prvgui.composition"'),
    (doc_text([], neighbouring="replace"), 'neighbouring: must be "add_remove"'),
    (doc_text([], extra=1), "extra: not a field of a composition file"),
    (doc_text({"kind": "gaussian"}), "mechanisms: must be a list of rows; the file has an object"),
    ('{"format": "prvgui.composition", "format": "x"}', "duplicate"),
    ("[1, 2", "not valid JSON"),
    ("[" * 100000 + "]" * 100000, "nested too deeply"),
    (doc_text([], targets={"delta": 0}),
     "targets, delta: Target δ must be greater than 0 and less than 1; the file has 0"),
    (doc_text([], targets={"delta": 1}), "targets, delta: Target δ must be greater than 0 and less than 1; "
                                         "the file has 1"),
    (doc_text([], targets={"eps_error": 1e9}),
     "targets, eps_error: Accuracy (ε error) must be between 1e-6 and 10; the file has 1e9"),
]


@pytest.mark.parametrize("text,needle", BAD)
def test_bad_files_are_rejected_with_place(text, needle):
    with pytest.raises(FileFormatError) as err:
        loads(text)
    assert needle in str(err.value)


def test_binary_and_missing_files(tmp_path):
    p = tmp_path / "bin.json"
    p.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(FileFormatError, match="UTF-8"):
        load(p)
    with pytest.raises(FileFormatError, match="cannot read"):
        load(tmp_path / "nope.json")


def test_round_trip(tmp_path):
    doc = Document([RowSpec("gaussian", {"sigma": 2.0, "sensitivity": 1.0}, 3, "q1"),
                    RowSpec("approx_dp", {"epsilon": 0.1, "delta": 1e-7}, 10, "")],
                   targets=Targets(1e-6, 0.5, 0.02))
    p = tmp_path / "c.json"
    save(doc, p)
    back = load(p)
    assert back.rows == doc.rows and back.targets == doc.targets
    assert dumps(back) == dumps(doc)


def test_hand_written_file(tmp_path):
    p = tmp_path / "hand.json"
    p.write_text('\ufeff{"format":"prvgui.composition","version":1,\n "mechanisms":[\n'
                 '  {"kind":"laplace","scale":2,"count":5},\n  {"kind":"pure_dp","epsilon":0.5}]}\n',
                 encoding="utf-8")
    doc = load(p)
    rows = doc.engine_rows()
    assert [r.count for r in rows] == [5, 1]


def test_save_is_atomic(tmp_path, monkeypatch):
    p = tmp_path / "keep.json"
    good = Document([RowSpec.default("gaussian")])
    save(good, p)
    before = p.read_text()

    def boom(*a, **k):
        raise OSError("disk full")
    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError):
        save(Document([RowSpec.default("laplace")]), p)
    assert p.read_text() == before
    assert [f.name for f in tmp_path.iterdir()] == ["keep.json"]


def test_document_events_and_validation():
    doc = Document()
    seen = []
    doc.subscribe(lambda what, arg: seen.append((what, arg)))
    doc.insert(0, RowSpec.default("gaussian"))
    doc.insert(1, RowSpec.default("laplace"))
    doc.replace(0, doc.row(0).with_param("sigma", -3))
    doc.move(1, 0)
    assert seen == [("insert", 0), ("insert", 1), ("change", 0), ("move", (1, 0))]
    assert doc.errors() == [(1, "Noise σ must be at least 0; you typed -3")]
    with pytest.raises(ValueError, match=r"^row 2 \(Gaussian\): Noise σ must be at least 0; you typed -3$"):
        doc.engine_rows()


def test_csv_has_comments_header_and_columns():
    import numpy as np
    text = curve_csv(["a", "b"], [np.array([1.0, 2.0]), np.array([np.inf, np.nan])], ["hello"])
    lines = text.splitlines()
    assert lines[0] == "# hello" and lines[1] == "a,b"
    assert lines[2:] == ["1.0,inf", "2.0,"]
