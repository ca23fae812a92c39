"""Calibration to an attack-risk target against the closed form of the Gaussian mechanism.

A composition of k Gaussians of sensitivity D and noise sigma is mu-GDP with mu = D sqrt(k) /
sigma (2 D sqrt(k) / sigma under replace-one), and the best attack's TPR at FPR a is
Phi(Phi^-1(a) + mu) (Dong, Roth, Su 2019, Def. 2.1 and Cor. 3.3). So "TPR at a at most t" holds
exactly when mu <= Phi^-1(t) - Phi^-1(a): the smallest sigma is D sqrt(k) / mu*, the largest
count floor((mu* sigma / D)^2). The calibrated answer must never be on the wrong side of these
(a certified upper TPR <= t implies the truth is) and lie within the bracket's resolution."""
import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import norm

from prvgui.accounting import Gaussian, Row, SubsampledGaussian
from prvgui.accounting.queries.calibrate import Infeasible
from prvgui.accounting.queries.risk import risk
from prvgui.accounting.queries.risk_calibrate import calibrate_risk
from prvgui.cli import main


def mu_star(a: float, t: float) -> float:
    return norm.ppf(t) - norm.ppf(a)


@pytest.mark.parametrize("a,t,k,sens,relation", [(0.01, 0.05, 1, 1.0, "add_remove"),
                                                 (0.001, 0.05, 10, 2.0, "add_remove"),
                                                 (0.1, 0.3, 100, 1.0, "add_remove"),
                                                 (0.01, 0.2, 4, 1.0, "replace_one")])
def test_the_calibrated_sigma_is_the_closed_form_from_the_safe_side(a, t, k, sens, relation):
    factor = 2 if relation == "replace_one" else 1
    exact = factor * sens * math.sqrt(k) / mu_star(a, t)
    cal = calibrate_risk([Row(Gaussian(1.0, sens), k)], 0, "sigma", a, t, relation=relation)
    assert cal.tpr.upper <= t
    assert exact <= cal.value <= exact * 1.03  # never less noise than the truth allows; close to it
    # tight: 1% less noise is certified to exceed the target
    r = risk([Row(Gaussian(cal.value / 1.01, sens), k)], (a,), relation)
    assert r.tpr[0].upper > t
    assert cal.tpr.lower <= norm.cdf(norm.ppf(a) + factor * sens * math.sqrt(k) / cal.value) <= cal.tpr.upper


@settings(max_examples=8, deadline=None)
@given(a=st.sampled_from([1e-3, 1e-2, 0.05]), ratio=st.floats(1.5, 20.0), k=st.integers(1, 50))
def test_never_on_the_wrong_side_of_the_closed_form(a, ratio, k):
    t = min(a * ratio, 0.95)
    cal = calibrate_risk([Row(Gaussian(1.0), k)], 0, "sigma", a, t)
    assert cal.value >= math.sqrt(k) / mu_star(a, t)
    assert cal.tpr.upper <= t


@pytest.mark.parametrize("sigma,a,t", [(3.0, 0.01, 0.05), (10.0, 0.001, 0.1)])
def test_the_calibrated_count_is_the_largest_that_fits(sigma, a, t):
    largest = math.floor((mu_star(a, t) * sigma) ** 2)
    cal = calibrate_risk([Row(Gaussian(sigma), 1)], 0, "count", a, t)
    assert cal.value <= largest  # never more runs than the truth allows
    assert cal.value >= 0.97 * largest - 1
    # one more run does not fit
    assert risk([Row(Gaussian(sigma), int(cal.value) + 1)], (a,)).tpr[0].upper > t


def test_a_subsampled_gaussian_count_is_certified_and_tight():
    row = Row(SubsampledGaussian(1.0, 0.01), 1000)
    cal = calibrate_risk([row], 0, "count", 0.01, 0.05)
    assert cal.tpr.upper <= 0.05
    assert risk([Row(row.mechanism, int(cal.value))], (0.01,)).tpr[0].upper <= 0.05
    assert risk([Row(row.mechanism, int(cal.value) + 1)], (0.01,)).tpr[0].upper > 0.05


@pytest.mark.parametrize("a,t,field,words", [
    (0.01, 0.005, "Target true-positive rate", "above the false-positive rate 0.01"),
    (0.01, 0.01, "Target true-positive rate", "above the false-positive rate"),
    (0.01, 1.0, "Target true-positive rate", "less than 1"),
    (0.0, 0.5, "False-positive rate", "greater than 0"),
    (1.0, 0.5, "False-positive rate", "less than 1"),
    (-0.1, 0.5, "False-positive rate", "you typed -0.1"),
    (math.nan, 0.5, "False-positive rate", "a number"),
    (0.01, "abc", "Target true-positive rate", '"abc"'),
])
def test_bad_targets_are_named(a, t, field, words):
    with pytest.raises(ValueError) as err:
        calibrate_risk([Row(Gaussian(1.0), 1)], 0, "sigma", a, t)
    assert str(err.value).startswith(field) and words in str(err.value)


def test_an_unreachable_target_says_why():
    rows = [Row(Gaussian(0.5), 1), Row(Gaussian(1.0), 1)]  # the first row alone: TPR ~0.5 at 1%
    with pytest.raises(Infeasible, match="the other rows alone give a true-positive rate up to"):
        calibrate_risk(rows, 1, "sigma", 0.01, 0.05)


def test_the_command_line_calibrates_to_a_risk_target(tmp_path, capsys):
    path = tmp_path / "g.json"
    path.write_text(json.dumps({"format": "prvgui.composition", "version": 2,
                                "mechanisms": [{"kind": "gaussian", "sigma": 1.0, "count": 4}]}))
    assert main(["calibrate", str(path), "--row", "0", "--parameter", "sigma", "--tpr-at-fpr", "0.01", "0.05",
                 "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert set(got) == {"parameter", "value", "tpr", "fpr", "target_tpr", "at_bound"}
    assert got["fpr"] == 0.01 and got["target_tpr"] == 0.05 and got["tpr"]["upper"] <= 0.05
    assert 2 / mu_star(0.01, 0.05) <= got["value"] <= 1.03 * 2 / mu_star(0.01, 0.05)
    assert main(["calibrate", str(path), "--row", "0", "--parameter", "sigma", "--tpr-at-fpr", "0.01",
                 "0.005"]) == 2
    err = capsys.readouterr().err
    assert "--tpr-at-fpr T must be above the false-positive rate 0.01" in err and "5e-3" in err
    assert main(["calibrate", str(path), "--row", "0", "--parameter", "sigma", "--tpr-at-fpr", "2",
                 "0.5"]) == 2
    assert "--tpr-at-fpr A must be greater than 0 and less than 1; you typed 2" in capsys.readouterr().err
    assert main(["calibrate", str(path), "--row", "0", "--parameter", "sigma"]) == 2  # one target needed
    assert "--target-epsilon" in capsys.readouterr().err
