"""The registry of mechanism kinds: every kind goes through the file format, the command line and
calibration from its own declarations, and a kind added as one module is picked up everywhere."""
import copy
import dataclasses
import json
import math
import pickle
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from prvgui.accounting.kinds.matrix_mechanism import Amplification

from prvgui.accounting import Accountant, Gaussian, Row, SubsampledGaussian
from prvgui.accounting import kinds as kinds_pkg
from prvgui.accounting.queries.calibrate import parameters_for, search_spec
from prvgui.accounting.kinds.base import Choice, Points, Vector
from prvgui.accounting.core.values import Neighbouring
from prvgui.accounting.core.validate import check_number
from prvgui.accounting.mechanisms import MECHANISM_KINDS, mechanism_from_params
from prvgui.document import KIND_TITLES, RowSpec, dumps, loads
from prvgui.document.model import Document, Targets

KINDS = list(MECHANISM_KINDS)


def relation_of(mech) -> str:
    """'add_remove', or 'replace_one' for a kind whose guarantee exists only there (the shuffle
    model: its error under add/remove is tested in test_shuffle_model.py)."""
    try:
        mech.check_relation("add_remove")
        return "add_remove"
    except ValueError:
        mech.check_relation("replace_one")
        return "replace_one"


def test_the_registry_holds_the_kinds_in_menu_order():
    assert KINDS == ["gaussian", "discrete_gaussian", "laplace", "discrete_laplace", "randomized_response",
                     "pure_dp", "approx_dp", "subsampled_gaussian", "truncated_poisson", "shuffled_gaussian",
                     "random_allocation", "matrix_mechanism", "subsampled_laplace",
                     "shuffle_model", "exponential_mechanism", "zcdp", "pmf_pair", "privacy_profile"]
    assert list(KIND_TITLES) == KINDS and KIND_TITLES["pure_dp"] == "Pure ε-DP"


@pytest.mark.parametrize("kind", KINDS)
def test_every_kind_declares_its_parameters(kind):
    cls = MECHANISM_KINDS[kind]
    specs = cls.param_specs()
    assert specs and cls.title and cls.kind == kind
    for name, p in specs.items():
        assert p.title and p.help, name
        if isinstance(p, Choice):
            assert len(p.choices) >= 2 and p.initial in dict(p.choices)
            with pytest.raises(ValueError, match=p.title) as err:
                p.check(name, "nonsense")
            assert err.value.field == name
            continue
        assert p.unit and p.symbol, name
        p.check(name, p.initial)  # a new row is valid
        if isinstance(p, (Vector, Points)):  # a list: a bare number is not one
            # (an optional list, e.g. a matrix mechanism's amplification, may be empty: none)
            for bad in (math.nan, 0.5, [math.nan]) if isinstance(p, Amplification) else (math.nan, 0.5, [], [math.nan]):
                with pytest.raises(ValueError) as err:
                    p.check(name, bad)
                assert str(err.value).startswith(p.title + " must be a list") and err.value.field == name
            continue
        with pytest.raises(ValueError) as err:
            p.check(name, math.nan)
        assert str(err.value).startswith(p.title + " must be a number") and err.value.field == name
    mech = cls(**cls.initial_params())
    assert mechanism_from_params(kind, mech.params()) == mech
    rel = relation_of(mech)
    for order in mech.orders(rel):
        prv = mech.prv(order, rel)
        assert 0 <= prv.inf_mass <= 1
    assert set(parameters_for(kind)) >= {"count"}
    for name in parameters_for(kind):
        assert search_spec(kind, name).lo < search_spec(kind, name).hi


@pytest.mark.parametrize("kind", KINDS)
def test_every_kind_round_trips_through_the_file_format(kind):
    spec = RowSpec.default(kind)
    doc = Document([RowSpec(kind, spec.params, 7, f"a {kind} row")], relation_of(spec.to_row().mechanism),
                   targets=Targets(1e-6, 0.5, 0.02))
    back = loads(dumps(doc))
    assert back.rows == doc.rows and back.targets == doc.targets


@pytest.mark.parametrize("kind", KINDS)
def test_every_kind_runs_through_the_command_line(kind, tmp_path):
    spec = RowSpec.default(kind)
    doc = Document([RowSpec(kind, spec.params, 3, "")], relation_of(spec.to_row().mechanism))
    path = tmp_path / f"{kind}.json"
    path.write_text(dumps(doc))
    out = subprocess.run([sys.executable, "-m", "prvgui", "epsilon", str(path), "--delta", "1e-5", "--json"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)["epsilon"]
    direct = Accountant(doc.engine_rows(), neighbouring=doc.relation).epsilon(1e-5)
    assert got == direct.as_dict()


def test_mechanisms_and_rows_are_frozen_values():
    row = Row(SubsampledGaussian(0.8, 0.01), 100)
    for clone in (copy.deepcopy(row), pickle.loads(pickle.dumps(row))):
        assert clone == row and hash(clone) == hash(row)
    assert Gaussian(2.0).params() == {"sigma": 2.0, "sensitivity": 1.0}
    assert dataclasses.replace(Gaussian(2.0), sigma=3.0) == Gaussian(3.0)
    with pytest.raises(ValueError, match="^Noise σ must be at least 0; you typed -3$"):
        dataclasses.replace(Gaussian(2.0), sigma=-3.0)  # validated again
    with pytest.raises(dataclasses.FrozenInstanceError):
        Gaussian(2.0).sigma = 1.0  # type: ignore[misc]


def test_one_validator_names_the_field_and_the_value():
    assert check_number("q", 0.5, 0, 1) == 0.5
    for bad, text in [("x", 'q must be a number (between 0 and 1); you typed "x"'),
                      (math.inf, "q must be between 0 and 1; you typed inf"),
                      (2, "q must be between 0 and 1; you typed 2"),
                      (True, "q must be a number (between 0 and 1); you typed true")]:
        with pytest.raises(ValueError) as err:
            check_number("q", bad, 0, 1)
        assert str(err.value) == text
    with pytest.raises(ValueError) as err:
        check_number("Noise scale b", 0.0, 0, lo_open=True)
    assert str(err.value) == "Noise scale b must be greater than 0; you typed 0"


def test_neighbouring_relation_is_a_value():
    assert Neighbouring.parse("add_remove") is Neighbouring.ADD_REMOVE
    with pytest.raises(ValueError, match="neighbouring must be one of"):
        Neighbouring.parse("swap")
    # replace-one: the Gaussian's outputs can differ by twice the sensitivity
    replaced, doubled = Gaussian(1.0).prv("remove", Neighbouring.REPLACE_ONE), Gaussian(1.0, 2.0).prv("remove")
    t = np.linspace(-5, 9, 15)
    assert replaced.mean == doubled.mean == 2.0 and np.array_equal(replaced.cont.sf(t), doubled.cont.sf(t))
    acc = Accountant([Row(Gaussian(1.0), 1)], neighbouring="replace_one")
    assert acc.rows == [Row(Gaussian(1.0, 2.0), 1)] and acc.given_rows == [Row(Gaussian(1.0), 1)]


TOY = '''
"""A toy kind for the plug-in test: randomized response at 2 eps (a test fixture)."""
import dataclasses
from dataclasses import dataclass

from prvgui.accounting.kinds.base import EPSILON, Mechanism, param
from prvgui.accounting.kinds.randomized_response import randomized_response_prv


@dataclass(frozen=True, slots=True)
class Doubled(Mechanism):
    """Randomized response at twice its epsilon."""

    kind = "doubled_rr"
    title = "Doubled randomized response"
    menu_order = 999

    epsilon: float = param(dataclasses.replace(EPSILON, initial=0.25))

    def _prv(self, order):
        return randomized_response_prv(2 * self.epsilon)

    def exact_eps_delta(self):
        return (2 * self.epsilon, 0.0)
'''


def test_a_kind_added_as_one_module_works_everywhere(tmp_path, monkeypatch):
    """Drop a module into the kinds package's search path: the registry, documents, files,
    calibration and the accountant all take it, with no edit anywhere else."""
    (tmp_path / "doubled_rr_kind.py").write_text(textwrap.dedent(TOY))
    monkeypatch.setattr(kinds_pkg, "__path__", [*kinds_pkg.__path__, str(tmp_path)])
    found = kinds_pkg.discover()
    assert "doubled_rr" in found and list(found)[-1] == "doubled_rr"
    monkeypatch.setitem(MECHANISM_KINDS, "doubled_rr", found["doubled_rr"])
    monkeypatch.delitem(sys.modules, "prvgui.accounting.kinds.doubled_rr_kind", raising=False)
    spec = RowSpec.default("doubled_rr")
    assert spec.params == {"epsilon": 0.25} and KIND_TITLES["doubled_rr"] == "Doubled randomized response"
    doc = loads(dumps(Document([RowSpec("doubled_rr", {"epsilon": 0.3}, 4, "toy")])))
    rows = doc.engine_rows()
    b = Accountant(rows, closed_forms=False).epsilon(1e-3)
    same = Accountant([Row(mechanism_from_params("randomized_response", {"epsilon": 0.6}), 4)],
                      closed_forms=False).epsilon(1e-3)
    assert b == same
    assert parameters_for("doubled_rr") == ["epsilon", "count"]
    with pytest.raises(ValueError, match="^ε must be at least 0; you typed -1$"):
        RowSpec("doubled_rr", {"epsilon": -1}, 1).to_row()


#: the translators to and from other libraries' descriptions (dp_accounting's DpEvents, Opacus,
#: jax_privacy, the exported scripts) name the kinds they map, as the file format does
TRANSLATORS = ("interop.py", "interop_dpevent.py", "script_rows.py", "scripts.py")


def test_no_module_spells_out_a_kind_outside_its_own():
    """A kind's name appears in its own module and in at most one other module of prvgui/ (the
    file format's documentation shows one), apart from the translators (TRANSLATORS)."""
    import pathlib
    root = pathlib.Path(__file__).resolve().parents[3] / "prvgui"
    for kind in KINDS:
        own = root / "accounting" / "kinds" / f"{kind}.py"
        hits = [p for p in root.rglob("*.py") if p != own and
                not (p.parent.name == "document" and p.name in TRANSLATORS) and
                (f'"{kind}"' in p.read_text() or f"'{kind}'" in p.read_text())]
        assert len(hits) <= 1, (kind, [str(h.relative_to(root)) for h in hits])


def test_every_kind_has_a_certified_bracket_that_holds_its_own_delta():
    """count = 1: the composition is the mechanism, whose delta the PRV gives by quadrature."""
    for kind in KINDS:
        mech = MECHANISM_KINDS[kind](**MECHANISM_KINDS[kind].initial_params())
        rel = relation_of(mech)
        acc = Accountant([Row(mech, 1)], neighbouring=rel, closed_forms=False)
        for eps in (0.0, 0.3):
            b = acc.delta(eps)
            exact = max(mech.prv(o, rel).delta(eps) for o in mech.orders(rel))
            assert b.lower - 1e-9 <= exact <= b.upper + 1e-9, (kind, eps, b, exact)
    assert np.isfinite(Accountant([Row(Gaussian(1.0), 2)]).epsilon(1e-5).upper)
