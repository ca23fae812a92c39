"""One answer, said once, and parts that fail alone (issue 31)."""
import math

import pytest

import prvgui
from prvgui.engine import view_model
from prvgui.accounting.queries.accountant import Accountant
from prvgui.accounting.queries.certified import best_upper
from prvgui.accounting.mechanisms import Row, mechanism_from_params
from prvgui.engine.view_model import Request, bracket_shown, compute, failure, failure_notes, published
from prvgui.document.export import setting_text

DPSGD = Row(mechanism_from_params("subsampled_gaussian", {"sigma": 1.0, "sampling_rate": 0.01}), 100)


def test_a_part_that_fails_leaves_the_others_standing(monkeypatch):
    def broken(*a, **k):
        raise ArithmeticError("the plot's numbers broke")
    monkeypatch.setattr(view_model, "pld_for_plot", broken)
    res = compute(Request((DPSGD,), 1e-5, 1.0, 0.01, steps_row=0, steps_points=5))
    assert failure(res, "pld") == "the plot's numbers broke"
    assert res.pld is None and not res.pending
    assert res.profile is not None and res.tradeoff is not None and res.steps is not None
    assert res.risk is not None and res.delta is not None and math.isfinite(res.epsilon.upper)
    assert failure_notes(res) == ["Not computed: the privacy loss distribution (the plot's numbers broke)."]


def test_a_headline_no_grid_holds_is_certified_by_the_other_accountants():
    row = Row(mechanism_from_params("subsampled_gaussian", {"sigma": 1e-4, "sampling_rate": 0.01}), 1000)
    res = compute(Request((row,), 1e-5, 1.0, 0.01))
    assert "far from private" in failure(res, "headline")
    assert res.epsilon.lower == 0 and math.isinf(res.epsilon.upper)
    assert res.certified_upper.by != "prv" and math.isfinite(res.certified_upper.value)
    for part in ("tradeoff", "pld", "profile", "risk", "delta"):
        assert failure(res, part) is not None
    assert not res.pending


def test_ties_within_the_accuracy_go_to_the_prv():
    comps = {"basic": {"kind": "bound", "value": 1.0}}
    assert best_upper(1.0 + 1e-9, comps, tie=0.01).by == "prv"
    assert best_upper(1.02, comps, tie=0.01).by == "basic"
    assert best_upper(math.inf, comps, tie=0.01).by == "basic"
    one = compute(Request((Row(mechanism_from_params("laplace", {"scale": 1.0}), 1),), 1e-5, 1.0, 0.01))
    assert one.certified_upper.by == "prv"


def test_the_estimate_shown_is_never_above_the_published_bound_and_the_accuracy_is_achieved():
    res = compute(Request((DPSGD,), 1e-5, 1.0, 0.01, profile_points=0, tradeoff_points=0, want_pld=False,
                          risk_fprs=()))
    name, lower, est, half = bracket_shown(res)
    assert name == "PRV bracket" and lower <= est <= published(res)
    assert half == pytest.approx(0.5 * (res.epsilon.upper - res.epsilon.lower))
    z = compute(Request((Row(mechanism_from_params("zcdp", {"rho": 1.0}), 2),), 1e-5, 1.0, 0.01,
                        profile_points=0, tradeoff_points=0, want_pld=False, risk_fprs=()))
    name, lower, est, _ = bracket_shown(z)
    assert name == "Bracket of the dominating pair"  # its lower end is not a bound on the truth
    assert z.epsilon_at_least <= published(z) <= z.epsilon.upper


def test_a_delta_below_what_the_rows_spend_is_infinite_at_once(monkeypatch):
    comp = prvgui.load("resources/examples/mixed.json")
    acc = Accountant(comp.engine_rows(), 0.01)

    def no_composing(*a, **k):
        raise AssertionError("composed an answer known before any work")
    monkeypatch.setattr(acc, "_epsilon_parts", no_composing)
    monkeypatch.setattr(acc, "_unresolved_parts", no_composing)
    b = acc.epsilon(1e-300)
    assert b.lower == b.upper == math.inf
    note = acc.warnings[-1]
    assert "row 5" in note and "2e-08" in note and "whatever ε is" in note
    monkeypatch.undo()
    assert math.isfinite(Accountant(comp.engine_rows(), 0.01).epsilon(3e-8).upper)  # just above: finite


@pytest.mark.parametrize("kind, params", [("zcdp", {"rho": 0.5}), ("exponential_mechanism", {"epsilon": 0.5}),
                                          ("shuffle_model", {"epsilon0": 1.0, "n": 1000})])
def test_rows_without_batches_are_not_called_shuffled(kind, params):
    req = Request((Row(mechanism_from_params(kind, params), 1),), 1e-5, None, 0.01, "replace_one")
    assert "batches" not in setting_text(req)
