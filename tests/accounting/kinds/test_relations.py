"""Replace-one neighbouring and group privacy: the derived pairs against closed forms, and the
file format's version 2 fields with their errors."""
import json
import math
import os
import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

import references as ref
from prvgui.accounting import Accountant, ApproxDP, Gaussian, Laplace, PureDP, Row, SubsampledGaussian
from prvgui.accounting.kinds.approx_dp import group_delta
from prvgui.accounting.core.values import Relation
from prvgui.document.fileio import FileFormatError, loads_composition

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


@pytest.mark.parametrize("neighbouring,k,factor", [("replace_one", 1, 2), ("add_remove", 3, 3),
                                                   ("replace_one", 4, 8)])
def test_gaussian_under_a_relation_is_the_closed_form_with_the_moved_sensitivity(neighbouring, k, factor):
    sigma, count, delta = 3.0, 7, 1e-6
    mu = factor * math.sqrt(count) / sigma  # outputs move by factor x the clipping norm
    for closed in (True, False):
        b = Accountant([Row(Gaussian(sigma), count)], 0.01, neighbouring, group_size=k,
                       closed_forms=closed).epsilon(delta)
        assert b.lower <= ref.gaussian_epsilon(mu, delta) <= b.upper
        assert b.upper - b.lower <= 0.02 + 1e-12


def test_laplace_group_is_laplace_with_k_times_the_sensitivity():
    scale, k, eps = 2.0, 3, 1.0
    b = Accountant([Row(Laplace(scale), 1)], 0.01, "add_remove", group_size=k).delta(eps)
    assert b.lower <= ref.laplace_delta(k / scale, eps) <= b.upper
    b = Accountant([Row(Laplace(scale), 1)], 0.01, "replace_one").delta(eps)
    assert b.lower <= ref.laplace_delta(2 / scale, eps) <= b.upper


@given(st.floats(0.0, 3.0), st.floats(1e-12, 1e-3), st.integers(1, 40))
def test_group_delta_is_the_group_privacy_formula(eps, delta, k):
    # delta (1 + e^eps + ... + e^{(k-1) eps}), summed directly
    direct = min(1.0, math.fsum(delta * math.exp(i * eps) for i in range(k)))
    assert group_delta(eps, delta, k) == pytest.approx(direct, rel=1e-12)


def test_pure_and_approximate_dp_groups_by_the_kov_closed_form():
    # k eps0-DP, composed 5 times: randomized response at k eps0 (Kairouz, Oh, Viswanath)
    b = Accountant([Row(PureDP(0.2), 5)], 0.01, group_size=3).epsilon(1e-5)
    assert b.lower <= ref.rr_kfold_epsilon(0.6, 5, 1e-5) <= b.upper
    d0 = 0.1 * (1 + math.exp(0.05))  # delta (e^{2 eps} - 1) / (e^eps - 1) at eps 0.05, k 2
    b = Accountant([Row(ApproxDP(0.05, 0.1), 3)], 0.01, group_size=2).epsilon(0.9)
    assert b.lower <= ref.rr_kfold_epsilon(0.1, 3, 0.9, d0 * 1e0) <= b.upper
    # replace-one: the guarantee is stated for the relation: the same numbers
    same = Accountant([Row(PureDP(0.2), 5)], 0.01, "replace_one").epsilon(1e-5)
    assert same == Accountant([Row(PureDP(0.2), 5)], 0.01).epsilon(1e-5)


def test_fixed_size_sampling_is_only_defined_under_replace_one():
    m = SubsampledGaussian(1.0, 0.01, sampling="fixed_size")
    with pytest.raises(ValueError, match="replace-one"):
        Accountant([Row(m, 10)])
    with pytest.raises(ValueError, match="replace-one"):
        m.prv("remove")
    # under replace-one it is NOT Poisson's pair (issue 25: the replaced record displaces another
    # from the batch): it certifies more at every delta
    fixed = Accountant([Row(m, 10)], 0.01, "replace_one").epsilon(1e-5)
    poisson = Accountant([Row(SubsampledGaussian(1.0, 0.01), 10)], 0.01, "replace_one").epsilon(1e-5)
    assert fixed.lower > 2 * poisson.upper
    with pytest.raises(ValueError, match='Batches must be one of "poisson" or "fixed_size"; you typed "bernoulli"'):
        SubsampledGaussian(1.0, 0.01, sampling="bernoulli")


def test_subsampled_at_rate_one_is_the_gaussian_with_the_moved_sensitivity():
    m = SubsampledGaussian(2.0, 1.0)
    assert m.under(Relation("replace_one", 3)) == Gaussian(2.0, 6.0)
    assert m.under(Relation("add_remove", 3)) == Gaussian(2.0, 3.0)


def _v2(**top):
    mech = top.pop("mech", {"kind": "subsampled_gaussian", "sigma": 1.0, "sampling_rate": 0.01})
    return json.dumps({"format": "prvgui.composition", "version": 2, "mechanisms": [mech], **top})


@pytest.mark.parametrize("text,where", [
    (_v2(mech={"kind": "subsampled_gaussian", "sigma": 1.0, "sampling_rate": 0.01, "sampling": "fixed_size"}),
     "row 1 (Subsampled"),
    (_v2(mech={"kind": "subsampled_laplace", "scale": 1.0, "sampling_rate": 0.01, "sampling": "fixed"}),
     "row 1 (Subsampled"),
    (_v2(group_size=0), "group_size"), (_v2(group_size=2.5), "group_size"),
    (_v2(group_size=10**9), "group_size"), (_v2(group_size="3"), "group_size"),
    (_v2(group_size=True), "group_size"),
    (_v2(neighbouring="swap"), "neighbouring"),
    (_v2(mech={"kind": "shuffled_gaussian", "sigma": 1.0, "batches_per_epoch": 0.5}),
     "row 1 (Shuffled"),
    (_v2(mech={"kind": "shuffled_gaussian", "sigma": 1.0, "batches_per_epoch": 2.5}),
     "row 1 (Shuffled"),
    (_v2(mech={"kind": "shuffled_gaussian", "sigma": 1.0, "batches_per_epoch": 0}),
     "row 1 (Shuffled"),
    (_v2(mech={"kind": "shuffled_gaussian", "sigma": 1.0}), "row 1 (Shuffled"),
    # version 1 files cannot hold what version 2 added
    (_v2(neighbouring="replace_one").replace('"version": 2', '"version": 1'), "neighbouring"),
    (_v2(group_size=2).replace('"version": 2', '"version": 1'), "group_size"),
])
def test_bad_version_2_fields_are_named(text, where):
    with pytest.raises(FileFormatError) as err:
        loads_composition(text)
    msg = str(err.value)
    assert msg.startswith(where), msg
    field = {"row 1 (Subsampled": "sampling", "row 1 (Shuffled": "batches_per_epoch"}.get(where)
    assert field is None or f"), {field}: " in msg, msg
    assert "\n" not in msg and "got " not in msg


def test_version_2_round_trips_and_version_1_still_loads():
    comp = loads_composition(_v2(neighbouring="replace_one", group_size=1,
                                 mech={"kind": "subsampled_gaussian", "sigma": 1.0, "sampling_rate": 0.01,
                                       "sampling": "fixed_size", "count": 5}))
    assert comp.relation == Relation("replace_one", 1) and comp.rows[0].params["sampling"] == "fixed_size"
    back = loads_composition(json.dumps(comp.to_dict()))
    assert back == comp and comp.to_dict()["version"] == 2
    v1 = loads_composition(open(os.path.join(ROOT, "tests", "fixtures", "v1_minimal.json")).read())
    assert v1.relation == Relation() and v1.engine_rows() == [Row(SubsampledGaussian(0.8, 0.01), 10000)]


def test_the_command_line_reports_the_relation(tmp_path):
    path = tmp_path / "g.json"
    path.write_text(json.dumps({"format": "prvgui.composition", "version": 2, "neighbouring": "replace_one",
                                "group_size": 2, "mechanisms": [{"kind": "gaussian", "sigma": 4.0, "count": 3}]}))
    out = subprocess.run([sys.executable, "-m", "prvgui", "epsilon", str(path), "--delta", "1e-6", "--json"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    assert got["neighbouring"] == "replace_one" and got["group_size"] == 2
    mu = 4 * math.sqrt(3) / 4.0
    assert got["epsilon"]["lower"] <= ref.gaussian_epsilon(mu, 1e-6) <= got["epsilon"]["upper"]
    assert "epsilon_at_least" not in got
