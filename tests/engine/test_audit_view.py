"""The Audit tab's view model (engine/audit_view.py) on a computed Gaussian result: the certified
epsilon at the target delta and at another one (read off the certified profile), the plan and
the composition's own curve."""
import pytest

from prvgui.accounting.mechanisms import Gaussian, Row
from prvgui.engine.audit_view import certified_at, default_delta, evaluate, tradeoff_points
from prvgui.engine.view_model import Request, compute, published

import references as ref


@pytest.fixture(scope="module")
def result():
    # sigma 0.5 once: mu = 2, epsilon about 10 at 1e-5
    return compute(Request((Row(Gaussian(0.5), 1),), 1e-5, None, 0.05, profile_points=200,
                           tradeoff_points=101, want_pld=False))


def test_the_certified_epsilon_at_the_target_and_another_delta(result):
    assert certified_at(result, 1e-5) == (published(result), "")
    upper, note = certified_at(result, 1e-3)
    assert note == "" and ref.gaussian_epsilon(2.0, 1e-3) <= upper <= published(result)
    assert certified_at(result, 0.0)[0] is None
    assert certified_at(None, 1e-5) == (None, "no result yet")
    assert default_delta(result) == 1e-5 and default_delta(None) == 0.0


def test_the_curve_comes_from_the_tradeoff_and_the_risk_read_out(result):
    alpha, tpr = tradeoff_points(result)
    assert alpha.size == 301 + 101 + len(result.risk.fprs) and (tpr >= alpha).all() and (tpr <= 1).all()
    assert tradeoff_points(None) is None


def test_a_plausible_audit_and_an_impossible_one(result):
    fine = evaluate(1000, 219, 216, 1e-5, 0.95, result)
    assert fine.error is None and not fine.exceeds and fine.curve_p_value > 0.05
    assert 0 < fine.plan.epsilon_lower < fine.certified_upper
    # all 1000 right contradicts the certified mu = 2 curve (p about 0.012 under the exact curve)
    # although the one-run bound (5.8) stays below epsilon 10
    bad = evaluate(1000, 1000, 1000, 1e-5, 0.95, result)
    assert bad.audit.one_run < bad.certified_upper and bad.exceeds and bad.curve_p_value <= 0.05


def test_bad_fields_give_a_message_not_an_exception():
    view = evaluate(1000, 10, "x", 1e-5, 0.95)
    assert view.audit is None and view.error.startswith("Correct guesses must be an integer")
