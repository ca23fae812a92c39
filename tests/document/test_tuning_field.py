"""The composition file's optional ``tuning`` object (version 4): round trip, the smallest version
written, older versions still read, bad values named."""
import json

import pytest

from prvgui import api
from prvgui.document import fileio
from prvgui.document.composition import Composition, FileFormatError
from prvgui.document.model import Document, Tuning

ROWS = [{"kind": "gaussian", "sigma": 2.0, "count": 3}]


def text(tuning=None, version=4, **extra):
    data = {"format": "prvgui.composition", "version": version, "mechanisms": ROWS, **extra}
    if tuning is not None:
        data["tuning"] = tuning
    return json.dumps(data)


@pytest.mark.parametrize("tuning", [{"runs": "fixed", "mean": 5},
                                    {"runs": "poisson", "mean": 2.5},
                                    {"runs": "truncated_negative_binomial", "mean": 10, "eta": 1},
                                    {"runs": "truncated_negative_binomial", "mean": 1, "eta": -0.5}])
def test_round_trip(tmp_path, tuning):
    comp = fileio.loads_composition(text(tuning))
    assert comp.tuning == Tuning(tuning["runs"], tuning["mean"], tuning.get("eta"))
    path = tmp_path / "c.json"
    api.save(comp, path)
    data = json.loads(path.read_text())
    assert data["version"] == 4 and data["tuning"] == comp.tuning.as_dict()
    assert api.load(path) == comp
    doc = comp.document()
    assert doc.tuning == comp.tuning and Composition.of(doc) == comp


def test_without_tuning_nothing_changes(tmp_path):
    comp = fileio.loads_composition(text(version=2))
    assert comp.tuning is None
    data = comp.to_dict()
    assert "tuning" not in data and data["version"] == 2
    for version in (1, 2, 3, 4):  # older versions still read
        assert fileio.loads_composition(text(version=version)).rows == comp.rows


@pytest.mark.parametrize("version", [1, 2, 3])
def test_older_versions_have_no_tuning(version):
    with pytest.raises(FileFormatError, match=f"tuning: not part of version {version} files"):
        fileio.loads_composition(text({"runs": "fixed", "mean": 2}, version=version))


@pytest.mark.parametrize("tuning,words", [
    ({"runs": "x", "mean": 2}, "tuning.runs must be one of fixed, poisson, truncated_negative_binomial; "
                               "the file has 'x'"),
    ({"mean": 2}, "tuning.runs"),
    ({"runs": "fixed"}, "tuning.mean"),
    ({"runs": "fixed", "mean": 2.5}, "tuning.mean"),
    ({"runs": "fixed", "mean": "2"}, "tuning.mean"),
    ({"runs": "poisson", "mean": 0}, "tuning.mean"),
    ({"runs": "poisson", "mean": 1e300}, "tuning.mean"),
    ({"runs": "poisson", "mean": True}, "tuning.mean"),
    ({"runs": "truncated_negative_binomial", "mean": 0.5, "eta": 1}, "tuning.mean"),
    ({"runs": "truncated_negative_binomial", "mean": 10}, "tuning.eta"),
    ({"runs": "truncated_negative_binomial", "mean": 10, "eta": -1}, "tuning.eta must be > -1"),
    ({"runs": "truncated_negative_binomial", "mean": 10, "eta": None}, "tuning.eta"),
    ({"runs": "poisson", "mean": 3, "eta": 1}, "tuning.eta"),
    ({"runs": "poisson", "mean": 3, "k": 1}, "tuning.k: not a field of tuning"),
    ([1, 2], "tuning must be an object"),
    ("fixed", "tuning must be an object"),
])
def test_bad_values_are_named(tuning, words):
    with pytest.raises(FileFormatError, match=words.replace("(", r"\(")):
        fileio.loads_composition(text(tuning))


def test_json_constants_and_huge_numbers_are_refused():
    bad = text({"runs": "poisson", "mean": 3}).replace('"mean": 3', '"mean": NaN')
    with pytest.raises(FileFormatError, match="NaN"):
        fileio.loads_composition(bad)
    huge = text({"runs": "poisson", "mean": 3}).replace('"mean": 3', '"mean": 1e400')
    with pytest.raises(FileFormatError, match="tuning.mean .*; the file has '1e400'"):
        fileio.loads_composition(huge)


def test_document_tuning_events():
    doc = Document()
    seen = []
    doc.subscribe(lambda what, arg: seen.append(what))
    doc.set_tuning(Tuning("poisson", 4))
    doc.set_tuning(None)
    assert seen == ["tuning", "tuning"] and doc.tuning is None
    with pytest.raises(ValueError):
        doc.set_tuning({"runs": "poisson", "mean": 4})


def test_the_version_4_fixture_keeps_loading():
    import os
    path = os.path.join(os.path.dirname(__file__), "..", "fixtures", "v4_tuning.json")
    comp = api.load(path)
    assert comp.tuning == Tuning("truncated_negative_binomial", 10, 1.0)
    assert comp.rows[0].count == 1000 and comp.to_dict()["version"] == 4
