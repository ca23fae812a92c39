"""compute(): one call for everything a view needs; progress and cancel."""
import math
import threading
import time

import numpy as np
import pytest

from prvgui.accounting import Gaussian, Laplace, Row, SubsampledGaussian
from prvgui.engine.view_model import Cancelled, Request, compute, steps_counts

import references as ref


def test_compute_everything():
    rows = (Row(SubsampledGaussian(1.0, 0.02), 500), Row(Gaussian(10.0), 2))
    seen = []
    res = compute(Request(rows, delta=1e-5, epsilon=1.0, steps_row=0, steps_points=20),
                  progress=lambda f, text: seen.append(f))
    assert res.epsilon.lower <= res.epsilon.estimate <= res.epsilon.upper
    assert res.delta.lower <= res.delta.upper
    assert seen == sorted(seen) and seen[-1] == 1.0
    p = res.profile
    assert np.all(p.columns["lower"] <= p.columns["upper"])
    assert np.all(np.diff(p.columns["estimate"]) <= 1e-15)
    t = res.tradeoff
    assert np.all(t.columns["lower"] <= t.columns["estimate"] + 1e-12)
    assert np.all(t.columns["estimate"] <= t.columns["upper"] + 1e-12)
    s = res.steps
    assert s.x[-1] == 500 and np.all(np.diff(s.columns["upper"]) >= -1e-9)
    assert abs(s.columns["upper"][-1] - res.epsilon.upper) < 1e-6
    assert res.pld is not None and res.pld.columns["density"].max() > 0
    assert {"rdp", "gdp", "basic", "advanced", "exact"} <= set(res.comparisons)


def test_tradeoff_contains_gaussian_closed_form():
    from scipy.stats import norm
    sigma, k = 2.0, 8
    mu = math.sqrt(k) / sigma
    res = compute(Request((Row(Gaussian(sigma), k),), profile_points=0, tradeoff_points=101, want_pld=False))
    a = res.tradeoff.x
    exact = norm.cdf(norm.ppf(1 - a) - mu)
    assert np.all(res.tradeoff.columns["lower"] <= exact + 1e-12)
    assert np.all(exact <= res.tradeoff.columns["upper"] + 1e-12)
    assert np.max(res.tradeoff.columns["upper"] - res.tradeoff.columns["lower"]) < 0.05


def test_profile_contains_closed_form():
    res = compute(Request((Row(Gaussian(3.0), 20),), profile_points=50, tradeoff_points=0))
    mu = math.sqrt(20) / 3.0
    for e, lo, up in zip(res.profile.x, res.profile.columns["lower"], res.profile.columns["upper"]):
        assert lo <= ref.gaussian_delta(mu, e) <= up


def test_cancel_is_honoured_quickly():
    ev = threading.Event()
    req = Request((Row(SubsampledGaussian(0.8, 0.01), 1_000_000),), steps_row=0, steps_points=100)
    out = {}

    def run():
        try:
            compute(req, cancel=ev)
            out["r"] = "finished"
        except Cancelled:
            out["r"] = "cancelled"
    th = threading.Thread(target=run)
    th.start()
    time.sleep(0.5)
    ev.set()
    th.join()
    # (no clock: the job runs for minutes, so "cancelled" rather than "finished" is the answer;
    # a wall-clock bound would be a random red on a loaded machine)
    assert out.get("r") == "cancelled"


def test_empty_and_invalid_requests():
    res = compute(Request((), steps_row=None))
    assert (res.epsilon.lower, res.epsilon.upper) == (0.0, 0.0)
    with pytest.raises(ValueError, match="^Target δ must be a number"):
        compute(Request((Row(Laplace(1.0), 1),), delta=math.nan))
    with pytest.raises(ValueError, match="^ε must be at least 0; you typed -1$"):
        compute(Request((Row(Laplace(1.0), 1),), epsilon=-1.0))


def test_steps_counts():
    c = steps_counts(10**5, 200)
    assert c[0] == 1 and c[-1] == 10**5 and len(c) <= 200 and np.all(np.diff(c) > 0)
    assert list(steps_counts(5, 40)) == [1, 2, 3, 4, 5]


def test_the_estimate_says_when_the_headline_comes():
    """view_model.cost carries the headline's own estimate (``first``: epsilon at delta, the
    second order screened, as compute delivers it first), below the whole request's."""
    from prvgui.accounting import Accountant, Row, SubsampledGaussian
    from prvgui.engine.view_model import Request, cost
    rows = (Row(SubsampledGaussian(1.0 + 0.01 * i, 0.01), 200) for i in range(30))
    req = Request(tuple(rows), 1e-5, 1.0, 0.01)
    got = cost(req)
    head = Accountant(list(req.rows), 0.01).cost(delta=1e-5)
    assert got.first == pytest.approx(head.seconds) and got.first < got.seconds
    alone = cost(Request(req.rows, 1e-5, None, 0.01, profile_points=0, tradeoff_points=0, want_pld=False,
                         risk_fprs=()))
    assert alone.first == alone.seconds
