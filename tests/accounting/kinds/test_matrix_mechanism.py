"""The matrix mechanism (kinds/matrix_mechanism.py: DP-FTRL / DP-MF) against references written
here: mu-GDP's closed form inverted by bisection, sensitivities from the tree's level count, the
Toeplitz band and participation patterns enumerated with itertools, the subsampled Gaussian row
amplified banded MF stands for (Choquette-Choo et al. 2023, Thm 1); the CLI's JSON, the file
format, hostile input and calibration."""
from __future__ import annotations

import itertools
import json
import math
import subprocess
import sys

import numpy as np
import pytest
from references import gaussian_epsilon

from prvgui import api
from prvgui.accounting.mechanisms import MECHANISM_KINDS
from prvgui.accounting.queries.calibrate import calibrate
from prvgui.document.composition import FileFormatError

MM = MECHANISM_KINDS["matrix_mechanism"]
DELTA = 1e-10
JAX = [[1, 0, 0, 0], [2, 1, 0, 0], [0, 1, 1, 0], [0, 0, 3, -6]]  # jax_privacy's example strategy
SIGNED = [[1.0, 0.0, 0.0, 0.0, 0.0], [-0.5, 1.0, 0.0, 0.0, 0.0], [0.25, -0.5, 1.0, 0.0, 0.0],
          [0.0, 2.0, -0.5, 1.0, 0.0], [0.3, 0.0, 0.7, -0.5, 1.0]]


def toeplitz(c, n):
    return np.array([[c[i - j] if 0 <= i - j < len(c) else 0.0 for j in range(n)] for i in range(n)])


def brute_sensitivity(C, k, b):
    """sqrt of max over every pattern S (at most k steps, gaps >= b) of sup_g ||sum C_i g_i||^2:
    sum_{S x S} G for a non-negative block (all g equal), G_ii + G_jj + 2|G_ij| for two steps
    (g_j = +-g_i), G_ii for one. Other blocks are not handled (asserted)."""
    G = np.asarray(C, float).T @ np.asarray(C, float)
    best = 0.0
    for s in range(1, k + 1):
        for S in itertools.combinations(range(G.shape[0]), s):
            if any(y - x < b for x, y in zip(S, S[1:])):
                continue
            block = G[np.ix_(S, S)]
            assert s <= 2 or (block >= 0).all()
            best = max(best, float(np.abs(block).sum()))
    return math.sqrt(best)


def row(count=1, **params):
    return {"kind": "matrix_mechanism", **params, "count": count}


def check_gaussian(answer, mu_total):
    want = gaussian_epsilon(mu_total, DELTA)
    assert answer.lower - 1e-9 <= want <= answer.upper + 1e-9
    assert answer.certified_upper.value == pytest.approx(want, rel=1e-6)


# ---------------------------------------------------------------- 1, 2: the Gaussian mechanism
CASES = [  # (params, count, the sensitivity from the references above)
    ({"strategy": "tree", "steps": 1000, "sigma": 4.0}, 3, math.sqrt(math.ceil(math.log2(1000)) + 1)),
    ({"strategy": "tree", "steps": 1024, "sigma": 2.0}, 1, math.sqrt(11)),
    ({"strategy": "tree", "steps": 1025, "sigma": 2.0}, 5, math.sqrt(12)),
    ({"strategy": "tree", "steps": 1, "sigma": 1.5}, 2, 1.0),
    ({"strategy": "banded_toeplitz", "coefficients": [1.0, 0.5, 0.25], "steps": 100, "sigma": 2.0,
      "participations": 3, "min_separation": 30}, 2, math.sqrt(3 * (1 + 0.25 + 0.0625))),
    ({"strategy": "banded_toeplitz", "coefficients": [1.0, -0.4, 0.2], "steps": 5000, "sigma": 3.0,
      "participations": 4, "min_separation": 1000}, 7, math.sqrt(4 * (1 + 0.16 + 0.04))),
    # the third participation's column is cut off at the end: enumerate the dense matrix
    ({"strategy": "banded_toeplitz", "coefficients": [1.0, 0.5, 0.25], "steps": 61, "sigma": 1.0,
      "participations": 3, "min_separation": 30}, 1, brute_sensitivity(toeplitz([1.0, 0.5, 0.25], 61), 3, 30)),
    ({"strategy": "matrix", "matrix": JAX, "sigma": 10.0}, 2, brute_sensitivity(JAX, 1, 1)),
    ({"strategy": "matrix", "matrix": SIGNED, "sigma": 2.0, "participations": 2}, 3, brute_sensitivity(SIGNED, 2, 1)),
    ({"strategy": "matrix", "matrix": np.abs(SIGNED).tolist(), "sigma": 2.0, "participations": 3}, 1,
     brute_sensitivity(np.abs(SIGNED), 3, 1)),  # (a 3-step pattern: 16.94 against 10.5 for two)
    ({"strategy": "matrix", "matrix": toeplitz([1.0, 0.6], 7).tolist(), "sigma": 1.0, "participations": 2,
      "min_separation": 1}, 4, brute_sensitivity(toeplitz([1.0, 0.6], 7), 2, 1)),
]


@pytest.mark.parametrize("params,count,sens", CASES)
def test_epsilon_is_the_gaussian_closed_form_at_the_independent_sensitivity(params, count, sens):
    a = api.epsilon({"mechanisms": [row(count, **params)]}, DELTA)
    check_gaussian(a, math.sqrt(count) * sens / params["sigma"])
    (facts,) = a.row_facts
    assert facts["sensitivity"] == pytest.approx(sens, rel=1e-12) and facts["sensitivity_exact"] is True
    assert a.rho == pytest.approx(count * (sens / params["sigma"]) ** 2 / 2, rel=1e-12)


def test_jax_privacy_published_sensitivity():
    assert brute_sensitivity(JAX, 1, 1) == 6.0  # the reference itself: column 4 is (0, 0, 0, -6)
    s = MM(strategy="matrix", matrix=JAX, sigma=1.0).l2_sensitivity
    assert s.value == pytest.approx(6.0, rel=1e-14) and s.value >= 6.0 and s.exact


# ---------------------------------------------------------------- 3: the command line's JSON
def cli_json(tmp_path, comp: dict) -> dict:
    path = tmp_path / "comp.json"
    path.write_text(json.dumps({"format": "prvgui.composition", "version": 3, **comp}))
    out = subprocess.run([sys.executable, "-m", "prvgui", "epsilon", str(path), "--delta", "1e-10", "--json"],
                         capture_output=True, text=True, timeout=60, check=True)
    return json.loads(out.stdout)


TREE = {"strategy": "tree", "steps": 1000, "sigma": 4.0}
TREE_RHO = 11 / 4.0 ** 2 / 2  # mu^2 / 2 at sensitivity sqrt(11)


def test_cli_reports_rho_and_the_rows_facts(tmp_path):
    out = cli_json(tmp_path, {"mechanisms": [row(2, **TREE)]})
    assert out["rho"] == pytest.approx(2 * TREE_RHO, rel=1e-12)
    (facts,) = out["rows"]
    assert (facts["row"], facts["kind"], facts["sensitivity_exact"]) == (1, "matrix_mechanism", True)
    assert facts["sensitivity"] == pytest.approx(math.sqrt(11), rel=1e-12)
    assert facts["rho"] == pytest.approx(TREE_RHO, rel=1e-12)
    assert out["certified_upper"]["value"] == pytest.approx(gaussian_epsilon(math.sqrt(2 * 11) / 4.0, DELTA), rel=1e-6)
    # a row that is no Gaussian mechanism: no rho for the whole, the row's facts stay
    sgd = {"kind": "subsampled_gaussian", "sigma": 1.0, "sampling_rate": 0.01, "count": 10}
    out = cli_json(tmp_path, {"mechanisms": [sgd, row(2, **TREE)]})
    assert "rho" not in out and [(f["row"], f["rho"]) for f in out["rows"]] == [(2, pytest.approx(TREE_RHO))]


@pytest.mark.parametrize("neighbouring,group,factor", [("replace_one", 1, 2), ("add_remove", 3, 3),
                                                       ("replace_one", 2, 4)])
def test_replace_one_and_groups_scale_the_sensitivity(neighbouring, group, factor):
    a = api.epsilon({"neighbouring": neighbouring, "group_size": group, "mechanisms": [row(2, **TREE)]}, DELTA)
    assert a.rho == pytest.approx(factor ** 2 * 2 * TREE_RHO, rel=1e-12)
    check_gaussian(a, factor * math.sqrt(2 * 11) / 4.0)


def test_row_rho_holds_under_replace_one(tmp_path):
    out = cli_json(tmp_path, {"neighbouring": "replace_one", "mechanisms": [row(2, **TREE)]})
    assert out["rows"][0]["rho"] * 2 == pytest.approx(out["rho"], rel=1e-12)


# ---------------------------------------------------------------- 4: amplified banded MF
@pytest.mark.parametrize("c,n,m,batch,count", [([1.0, 0.3], 1000, 60000, 256, 1), ([1.0, -0.5, 0.2], 1001, 10**5, 100, 3),
                                               ([2.0], 50, 1000, 20, 2), ([1.0, 0.5, 0.5, 0.5], 10, 400, 100, 1)])
def test_amplified_banded_mf_is_the_subsampled_gaussian_over_ceil_n_over_b(c, n, m, batch, count):
    b, sigma = len(c), 0.9
    amp = row(count, strategy="banded_toeplitz", coefficients=c, steps=n, sigma=sigma, participations=1,
              amplification={"dataset_size": m, "batch_size": batch})
    # (q = b B / m when b divides m; otherwise the smaller part's rate B / floor(m / b), the larger one)
    dpsgd = {"kind": "subsampled_gaussian", "sigma": sigma, "sampling_rate": min(1.0, batch / (m // b)),
             "sensitivity": math.sqrt(sum(x * x for x in c)), "count": math.ceil(n / b) * count}
    ours, ref = api.epsilon({"mechanisms": [amp]}, 1e-6), api.epsilon({"mechanisms": [dpsgd]}, 1e-6)
    # (the sensitivity is rounded up by an ulp or so: the same bracket to ~1e-8)
    assert ours.upper == pytest.approx(ref.upper, rel=1e-7) and ours.lower == pytest.approx(ref.lower, rel=1e-7)
    assert "rho" not in ours.row_facts[0] and (ours.rho is None) == (ref.rho is None) == (b * batch < m)
    assert ours.rho is None or ours.rho == pytest.approx(ref.rho, rel=1e-12)  # (q = 1: the Gaussian)


def test_amplified_lower_triangular_matrix_uses_its_band():
    C = toeplitz([1.0, 0.5], 6)
    C[5, 4] = 0.0  # band still 2 (3 rounds at q = 2 x 5 / 100); the largest column norm is sqrt(1.25)
    amp = row(1, strategy="matrix", matrix=C.tolist(), sigma=1.0, amplification={"dataset_size": 100, "batch_size": 5})
    ref = {"kind": "subsampled_gaussian", "sigma": 1.0, "sampling_rate": 0.1, "sensitivity": math.sqrt(1.25), "count": 3}
    eps = [api.epsilon({"mechanisms": [r]}, 1e-6).upper for r in (amp, ref)]
    assert eps[0] == pytest.approx(eps[1], rel=1e-7)


@pytest.mark.parametrize("params", [
    {"strategy": "tree", "steps": 100}, {"strategy": "banded_toeplitz", "coefficients": [1.0, 0.5, 0.1], "steps": 100},
    {"strategy": "matrix", "matrix": [[1.0, 1.0], [0.0, 1.0]]}])  # upper-triangular: not banded
def test_amplification_refused_without_a_band_or_with_bB_over_m(params):
    with pytest.raises(ValueError) as err:
        MM(**params, sigma=1.0, amplification={"dataset_size": 1000, "batch_size": 334})
    assert err.value.field == "amplification"


# ---------------------------------------------------------------- 5: the file format
def test_file_round_trip_version_3_and_amplification_as_a_dict(tmp_path):
    comp = api.Composition.from_dict({"targets": {"delta": 1e-8}, "mechanisms": [
        row(2, **TREE), row(1, strategy="banded_toeplitz", coefficients=[1.0, 0.5], steps=100, sigma=2.0,
                            participations=2, min_separation=50),
        row(1, strategy="matrix", matrix=JAX, sigma=20.0, label="jax"),
        row(3, strategy="banded_toeplitz", coefficients=[1.0, 0.3], steps=100, sigma=1.0,
            amplification={"dataset_size": 60000, "batch_size": 256})]})
    path = tmp_path / "mm.json"
    api.save(comp, path)
    data = json.loads(path.read_text())
    assert data["version"] == 3
    assert data["mechanisms"][3]["amplification"] == {"dataset_size": 60000, "batch_size": 256}
    assert data["mechanisms"][2]["matrix"] == JAX and data["mechanisms"][3]["count"] == 3
    back = api.load(path)
    assert back == comp and json.loads(json.dumps(back.to_dict())) == data
    assert api.epsilon(back).upper == api.epsilon(comp).upper
    api.save(back, tmp_path / "again.json")
    assert json.loads((tmp_path / "again.json").read_text()) == data
    # older kinds only: version 2; a matrix mechanism in a version 2 file is refused
    api.save(api.Composition.from_dict({"mechanisms": [{"kind": "gaussian", "sigma": 1.0}]}), tmp_path / "old.json")
    assert json.loads((tmp_path / "old.json").read_text())["version"] == 2
    (tmp_path / "v2.json").write_text(json.dumps({**data, "version": 2}))
    with pytest.raises(FileFormatError, match="version 3"):
        api.load(tmp_path / "v2.json")


# ---------------------------------------------------------------- 6: hostile input
BASE = {"strategy": "banded_toeplitz", "coefficients": [1.0, 0.5], "steps": 300, "sigma": 1.0}
HOSTILE = [("matrix", {"strategy": "matrix", "matrix": bad}) for bad in (
    [[1, 0], [1]], [[1, math.nan], [0, 1]], [[1, "abc"], [0, 1]], [[1, 1e400], [0, 1]],
    [[0.0] * 2001] * 2001, [[0.0] * 2001], [[0.0]] * 2001, [], [[]])] + [
    ("participations", {"participations": 5, "min_separation": 100}),
    ("coefficients", {"coefficients": [1.0] * 301}),
    ("steps", {"strategy": "tree", "steps": 0}),
    ("min_separation", {"min_separation": 0}),
    ("sigma", {"sigma": math.nan}),
    ("amplification", {"amplification": {"dataset_size": 1000, "batch_size": 0}}),
    ("amplification", {"amplification": {"dataset_size": 1000}}),
]


@pytest.mark.parametrize("field,bad", HOSTILE)
def test_hostile_input_names_the_field(tmp_path, field, bad):
    with pytest.raises(ValueError) as err:
        MM(**{**BASE, **bad})
    assert err.value.field == field
    text = json.dumps({"format": "prvgui.composition", "version": 3, "mechanisms": [row(1, **{**BASE, **bad})]})
    path = tmp_path / "bad.json"
    path.write_text(text.replace("Infinity", "1e400"))  # (the file as typed: a number too large)
    # (the loader refuses NaN anywhere and files over 10 MiB before reading a field, as fileio.py says)
    match = ("NaN is not allowed" if "NaN" in text else "larger than" if len(text) > 10 * 2**20
             else rf"^row 1 \(Matrix mechanism \(DP-FTRL / DP-MF\)\), {field}: ")
    with pytest.raises(FileFormatError, match=match):
        api.load(path)


# ---------------------------------------------------------------- 7: calibration
@pytest.mark.parametrize("params,sens", [(TREE, math.sqrt(11)), ({**BASE, "participations": 3, "min_separation": 100},
                                                                 math.sqrt(3 * 1.25)),
                                         ({**BASE, "amplification": {"dataset_size": 60000, "batch_size": 256}}, None)])
def test_calibrated_sigma_meets_the_target(params, sens):
    comp = api.Composition.from_dict({"mechanisms": [row(10, **params)]})
    target, err = 2.0, 0.01
    cal = calibrate(comp.engine_rows(), 0, "sigma", target, 1e-6, eps_error=err)
    assert target - 2 * err <= cal.epsilon.upper <= target and not cal.at_bound
    if sens is not None:  # the Gaussian: sigma from the closed form, within the 1% search step
        lo, hi = 0.05, 1e3
        for _ in range(100):
            mid = math.sqrt(lo * hi)
            lo, hi = (mid, hi) if gaussian_epsilon(math.sqrt(10) * sens / mid, 1e-6) > target else (lo, mid)
        assert hi <= cal.value <= hi * 1.011
