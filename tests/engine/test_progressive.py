"""view_model.compute's progressive answers: the headline first, then one answer per part in a
fixed order, each holding exactly the parts done so far, and the last one equal to what
compute returns without ``partial``."""
from __future__ import annotations

import numpy as np
import pytest

from prvgui.accounting.numerics import reuse
from prvgui.accounting.core.errors import Cancelled
from prvgui.accounting.mechanisms import Row, mechanism_from_params
from prvgui.engine.view_model import CURVES, PARTS, Request, compute

ROWS = (Row(mechanism_from_params("subsampled_gaussian", {"sigma": 0.9, "sampling_rate": 0.01}), 200),
        Row(mechanism_from_params("laplace", {"scale": 10.0}), 3))
REQUEST = Request(ROWS, 1e-6, 1.0, 0.05, profile_points=20, tradeoff_points=21, steps_row=0, steps_points=6)
FIELDS = {"tradeoff": "tradeoff", "pld": "pld", "profile": "profile", "steps": "steps", "delta": "delta",
          "risk": "risk"}


def collect(request):
    seen = []
    final = compute(request, partial=seen.append)
    return seen, final


def test_the_headline_comes_first_then_each_part_in_order():
    seen, final = collect(REQUEST)
    parts = PARTS
    assert REQUEST.risk_fprs and "risk" in PARTS
    assert [r.pending for r in seen] == [parts[i:] for i in range(len(parts))]
    first = seen[0]
    # the headline alone: the certified bracket, its upper bound published until the comparison
    # accountants arrive (which may only lower it)
    assert first.epsilon == final.epsilon and first.comparisons == {}
    assert first.certified_upper.value == final.epsilon.upper
    assert final.certified_upper.value <= first.certified_upper.value
    assert seen[1].comparisons == final.comparisons and seen[1].certified_upper == final.certified_upper
    for r in seen:  # exactly the parts done so far are there
        for part, name in FIELDS.items():
            assert (getattr(r, name) is None) == (part in r.pending), (part, r.pending)
    assert final.pending == ()
    # the profile before its refinement: the same grid, bounds that hold (they bracket the final
    # estimate) and are no tighter than the refined ones
    quick, fine = seen[-1].profile, final.profile
    np.testing.assert_array_equal(quick.x, fine.x)
    assert np.all(quick.columns["upper"] >= fine.columns["estimate"])
    assert np.all(quick.columns["lower"] <= fine.columns["estimate"])


def test_without_an_epsilon_target_delta_is_not_waited_for():
    seen, final = collect(Request(ROWS, 1e-6, None, 0.05, profile_points=20, tradeoff_points=0,
                                  want_pld=False, risk_fprs=()))
    assert [r.pending for r in seen] == [("comparisons", "profile", "refine"), ("profile", "refine"),
                                         ("refine",)]
    assert final.delta is None and final.profile is not None and final.tradeoff is None


def test_the_progressive_answer_is_the_plain_one():
    reuse.clear()
    _, progressive = collect(REQUEST)
    reuse.enabled(False)
    try:
        plain = compute(REQUEST)
    finally:
        reuse.enabled(True)
    assert progressive.epsilon == plain.epsilon and progressive.delta == plain.delta
    assert progressive.budget == plain.budget and progressive.warnings == plain.warnings
    assert progressive.risk == plain.risk
    for name in CURVES:
        a, b = getattr(progressive, name), getattr(plain, name)
        np.testing.assert_array_equal(a.x, b.x)
        for col in a.columns:
            if a.columns[col] is None:
                assert b.columns[col] is None
            else:
                np.testing.assert_array_equal(a.columns[col], b.columns[col])


def test_a_cancel_after_the_headline_stops_before_the_curves():
    seen = []
    flag = []

    def partial(result):
        seen.append(result)
        flag.append(True)  # cancel as soon as the headline is out
    with pytest.raises(Cancelled):
        compute(REQUEST, partial=partial, cancel=lambda: bool(flag))
    assert len(seen) == 1 and seen[0].pending[0] == "comparisons"
