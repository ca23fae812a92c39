"""Certified membership-inference risk against exact values: the mu-GDP Gaussian
(TPR at FPR a is Phi(Phi^-1(a) + mu), advantage 2 Phi(mu/2) - 1) and the pure eps-DP pair
(tradeoff max(0, 1 - e^eps a, e^-eps (1 - a)), advantage tanh(eps/2))."""
import json
import math
import subprocess
import sys

import pytest
from scipy.stats import norm

from prvgui.accounting import Gaussian, PureDP, Row
from prvgui.accounting.queries.risk import risk

FPRS = (0.001, 0.01, 0.05, 0.1, 0.5)


@pytest.mark.parametrize("sigma,count,neighbouring", [(1.0, 1, "add_remove"), (4.0, 9, "add_remove"),
                                                      (2.0, 1, "replace_one")])
def test_gaussian_risk_is_the_gdp_closed_form(sigma, count, neighbouring):
    mu = math.sqrt(count) / sigma * (2 if neighbouring == "replace_one" else 1)
    r = risk([Row(Gaussian(sigma), count)], FPRS, neighbouring)
    for a, t in zip(r.fprs, r.tpr):
        exact = norm.cdf(norm.ppf(a) + mu)
        assert t.lower <= exact <= t.upper
        assert t.upper - t.lower <= 0.03 * exact + 1e-4  # a bracket that says something
    adv = 2 * norm.cdf(mu / 2) - 1
    assert r.advantage.lower <= adv <= r.advantage.upper
    assert r.advantage.upper - r.advantage.lower < 1e-3


@pytest.mark.parametrize("eps,k", [(0.5, 1), (1.0, 1), (2.0, 1)])
def test_pure_dp_risk_is_one_minus_its_tradeoff_function(eps, k):
    r = risk([Row(PureDP(eps), k)], FPRS)
    for a, t in zip(r.fprs, r.tpr):
        exact = 1 - max(0.0, 1 - math.exp(eps) * a, math.exp(-eps) * (1 - a))
        assert t.lower <= exact <= t.upper
    assert r.advantage.lower <= math.tanh(eps / 2) <= r.advantage.upper


def test_no_mechanism_means_no_advantage_and_bad_rates_are_named():
    r = risk([], (0.01,))
    assert r.tpr[0].lower == r.tpr[0].upper == 0.01 and r.advantage.upper == 0
    for bad in (0.0, 1.0, 1.5, math.nan, "x"):
        with pytest.raises(ValueError, match="false-positive rate"):
            risk([Row(Gaussian(1.0), 1)], (bad,))


def test_the_command_line_prints_the_documented_json(tmp_path):
    path = tmp_path / "g.json"
    path.write_text(json.dumps({"format": "prvgui.composition", "version": 2,
                                "mechanisms": [{"kind": "gaussian", "sigma": 2.0, "count": 4}]}))
    out = subprocess.run([sys.executable, "-m", "prvgui", "risk", str(path), "--fpr", "0.01", "--fpr", "0.1",
                          "--json"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    assert [x["fpr"] for x in got["tpr_at_fpr"]] == [0.01, 0.1]
    for x in got["tpr_at_fpr"]:
        assert x["lower"] <= norm.cdf(norm.ppf(x["fpr"]) + 1.0) <= x["upper"]
    assert set(got["advantage"]) == {"lower", "upper"}
    bad = subprocess.run([sys.executable, "-m", "prvgui", "risk", str(path), "--fpr", "2"],
                         capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "false-positive rate" in bad.stderr and "2" in bad.stderr


def test_the_noise_read_out_is_the_95_percent_interval_of_the_noise():
    from scipy.stats import laplace

    from prvgui.accounting import Laplace, RandomizedResponse, SubsampledGaussian
    from prvgui.engine.view_model import Request, compute
    assert Gaussian(2.5).noise_halfwidth(0.95)[0] == pytest.approx(norm.interval(0.95, scale=2.5)[1], rel=1e-12)
    assert Laplace(0.7).noise_halfwidth(0.9)[0] == pytest.approx(laplace.interval(0.9, scale=0.7)[1], rel=1e-12)
    assert RandomizedResponse(1.0).noise_halfwidth() is None
    res = compute(Request((Row(Gaussian(2.0), 1), Row(SubsampledGaussian(0.8, 0.01), 10)),
                          profile_points=0, tradeoff_points=0, want_pld=False))
    assert res.noise_95[0][0] == pytest.approx(1.959964 * 2.0, rel=1e-6)
    assert res.noise_95[1][0] == pytest.approx(1.959964 * 0.8, rel=1e-6) and "clipping" in res.noise_95[1][1]
