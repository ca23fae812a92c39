"""Random compositions of the kinds dp-accounting also models, against its PLDs (test extras).

dp-accounting's optimistic PLD (losses rounded down, privacy buckets) gives a delta at or below
the truth, its pessimistic one (losses rounded up) at or above it, up to its truncation (about
1e-15 here). So a certified upper delta below the optimistic delta would be a privacy failure, and
a certified lower delta above the pessimistic one a false claim of tightness. The kinds, relations
and counts are drawn at random (hypothesis); the conventions are mapped as dp-accounting states
them: under replace-one a Gaussian, Laplace or discrete row moves by twice its sensitivity
(dp-accounting's plain mechanisms have no relation: given 2 Delta), and a subsampled Gaussian is
dp-accounting's REPLACE_ONE mixture (tests/accounting/pairs/test_mixture.py checks that pair).
"""
import logging
import math

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from prvgui.accounting import Accountant
from prvgui.accounting.mechanisms import Row, mechanism_from_params

pld = pytest.importorskip("dp_accounting.pld.privacy_loss_distribution")
from dp_accounting.privacy_accountant import NeighboringRelation as NR  # noqa: E402

VDI = 1e-4  # dp-accounting's value discretization interval
REL, ABS = 1e-6, 1e-14  # its rounding of probabilities and its truncation


def _log_uniform(lo, hi):
    return st.floats(math.log(lo), math.log(hi)).map(math.exp)


@st.composite
def rows(draw, relation):
    """(our kind, its parameters, dp-accounting's PLD for a pessimistic flag)."""
    twice = 2 if relation == "replace_one" else 1
    nr = NR.ADD_OR_REMOVE_ONE if relation == "add_remove" else NR.REPLACE_ONE
    kinds = ["gaussian", "laplace", "subsampled_gaussian", "discrete_gaussian", "discrete_laplace",
             "subsampled_laplace" if relation == "add_remove" else "randomized_response"]
    kind = draw(st.sampled_from(kinds))
    if kind == "gaussian":
        s, d = draw(_log_uniform(0.3, 30)), draw(st.sampled_from([0.5, 1.0, 2.0]))
        return kind, {"sigma": s, "sensitivity": d}, lambda pe: pld.from_gaussian_mechanism(
            s, d, pe, VDI, neighboring_relation=nr)
    if kind == "laplace":
        b, d = draw(_log_uniform(0.3, 30)), draw(st.sampled_from([1.0, 2.0]))
        return kind, {"scale": b, "sensitivity": d}, lambda pe: pld.from_laplace_mechanism(b, d * twice, pe, VDI)
    if kind == "subsampled_gaussian":
        s, q = draw(_log_uniform(0.5, 5)), draw(_log_uniform(1e-3, 0.5))
        return kind, {"sigma": s, "sampling_rate": q}, lambda pe: pld.from_gaussian_mechanism(
            s, 1.0, pe, VDI, sampling_prob=q, neighboring_relation=nr)
    if kind == "subsampled_laplace":
        b, q = draw(_log_uniform(0.3, 10)), draw(_log_uniform(1e-3, 0.5))
        return kind, {"scale": b, "sampling_rate": q}, lambda pe: pld.from_laplace_mechanism(
            b, 1.0, pe, VDI, sampling_prob=q)
    if kind == "discrete_gaussian":
        s, d = draw(_log_uniform(0.5, 30)), draw(st.sampled_from([1, 2]))
        return kind, {"sigma": s, "sensitivity": d}, lambda pe: pld.from_discrete_gaussian_mechanism(
            s, d * twice, pessimistic_estimate=pe, value_discretization_interval=VDI)
    if kind == "discrete_laplace":
        b, d = draw(_log_uniform(0.3, 30)), draw(st.sampled_from([1, 3]))
        return kind, {"scale": b, "sensitivity": d}, lambda pe: pld.from_discrete_laplace_mechanism(
            1.0 / b, d * twice, pe, VDI)
    e = draw(_log_uniform(0.01, 4))  # binary randomized response: keep w.p. 1 - p / 2
    return kind, {"epsilon": e}, lambda pe: pld.from_randomized_response(2.0 / (1.0 + math.exp(e)), 2, pe, VDI)


@st.composite
def compositions(draw):
    relation = draw(st.sampled_from(["add_remove", "replace_one"]))
    parts = draw(st.lists(st.tuples(rows(relation), st.sampled_from([1, 3, 10, 50])), min_size=1, max_size=3))
    return relation, parts


def _peer(parts, pessimistic):
    total = None
    for (_, _, make), count in parts:
        one = make(pessimistic)
        one = one.self_compose(count) if count > 1 else one
        total = one if total is None else total.compose(one)
    return total


@pytest.mark.slow
@settings(max_examples=16, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(compositions(), st.floats(0.05, 10.0), st.sampled_from([1e-3, 1e-6, 1e-9]))
def test_the_bracket_agrees_with_dp_accountings_two_plds(comp, eps, delta):
    relation, parts = comp
    logging.disable(logging.WARNING)  # (its note that connect-the-dots has no optimistic mode)
    try:
        hi, lo = _peer(parts, True), _peer(parts, False)
    finally:
        logging.disable(logging.NOTSET)
    acc = Accountant([Row(mechanism_from_params(kind, params), count) for (kind, params, _), count in parts],
                     0.01, relation)
    ours = acc.delta(eps)
    assert ours.upper >= lo.get_delta_for_epsilon(eps) * (1 - REL) - ABS
    assert ours.lower <= hi.get_delta_for_epsilon(eps) * (1 + REL) + ABS
    e = acc.epsilon(delta)
    # (the peers' epsilons are read from their discrete losses: within one interval of theirs)
    assert e.upper >= lo.get_epsilon_for_delta(delta * (1 + REL) + ABS) - VDI
    assert e.lower <= hi.get_epsilon_for_delta(max(delta * (1 - REL) - ABS, 0.0)) + VDI
