"""Hypothesis properties of the certified accountant."""
import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from prvgui.accounting import (Accountant, ApproxDP, Gaussian, Laplace, PureDP, Row, SubsampledGaussian,
                               SubsampledLaplace)
from prvgui.accounting.numerics.pipeline import error_level

import references as ref

sigmas = st.floats(0.3, 20.0)
rates = st.floats(0.001, 1.0)
counts = st.integers(1, 2000)
deltas = st.sampled_from([1e-3, 1e-5, 1e-7])

mechanisms = st.one_of(
    st.builds(Gaussian, sigmas),
    st.builds(Laplace, st.floats(0.2, 20.0)),
    st.builds(PureDP, st.floats(0.01, 2.0)),
    st.builds(ApproxDP, st.floats(0.0, 1.0), st.floats(0.0, 1e-4)),
    st.builds(SubsampledGaussian, st.floats(0.5, 5.0), rates),
    st.builds(SubsampledLaplace, st.floats(0.3, 5.0), rates),
)


@settings(max_examples=20)
@given(mechanisms, st.integers(1, 300))
def test_delta_decreasing_and_brackets_ordered(mech, k):
    acc = Accountant([Row(mech, k)])
    eps = np.linspace(0.0, 8.0, 41)
    lo, es, up = acc.delta_curve(eps)
    assert np.all(lo <= es) and np.all(es <= up)
    assert np.all(np.diff(es) <= 1e-15) and np.all(np.diff(up) <= 1e-15) and np.all(np.diff(lo) <= 1e-15)
    assert np.all((0 <= lo) & (up <= 1)) and not np.any(np.isnan(up))


@settings(max_examples=15)
@given(sigmas, counts, deltas)
def test_gaussian_contains_exact(sigma, k, delta):
    b = Accountant([Row(Gaussian(sigma), k)], closed_forms=False).epsilon(delta)
    exact = ref.gaussian_epsilon(math.sqrt(k) / sigma, delta)
    assert b.lower <= exact <= b.upper
    assert b.upper - b.lower <= 0.02


@settings(max_examples=10)
@given(st.floats(0.5, 3.0), st.floats(0.001, 0.5), st.floats(0.0, 3.0))
def test_count_one_is_the_mechanism(sigma, q, eps):
    b = Accountant([Row(SubsampledGaussian(sigma, q), 1)]).delta(eps)
    exact = max(ref.subsampled_gaussian_delta(sigma, q, eps, o) for o in ("remove", "add"))
    assert b.lower <= exact <= b.upper


@settings(max_examples=10)
@given(mechanisms, st.integers(2, 400), deltas)
def test_split_row_gives_same_bracket(mech, k, delta):
    whole = Accountant([Row(mech, k)]).epsilon(delta)
    split = Accountant([Row(mech, k // 2), Row(mech, k - k // 2)]).epsilon(delta)
    for a, b in ((whole.lower, split.lower), (whole.upper, split.upper)):
        assert (math.isinf(a) and math.isinf(b)) or abs(a - b) <= 1e-6 * max(1.0, a)


@settings(max_examples=10)
@given(st.floats(0.5, 3.0), st.floats(0.001, 0.3), st.integers(1, 500), deltas)
def test_both_orders_covered(sigma, q, k, delta):
    """The reported bracket is the max over the two orders of the add/remove pair (at the
    error level the answer used); screening may only tighten its upper end."""
    acc = Accountant([Row(SubsampledGaussian(sigma, q), k)])
    b = acc.epsilon(delta)
    per_order = [p.epsilon(delta) for p in acc.profiles_behind(delta)]
    assert len(per_order) == 2
    assert b.lower == max(p.lower for p in per_order)
    assert max(p.lower for p in per_order) <= b.upper <= max(p.upper for p in per_order)
    assert b.upper == per_order[0].upper or b.upper == max(p.upper for p in per_order)


@settings(max_examples=10)
@given(st.floats(0.5, 3.0), st.floats(0.001, 0.3), st.integers(1, 300))
def test_monotone_in_count(sigma, q, k):
    a = Accountant([Row(SubsampledGaussian(sigma, q), k)]).epsilon(1e-5)
    b = Accountant([Row(SubsampledGaussian(sigma, q), 2 * k)]).epsilon(1e-5)
    assert a.lower <= b.upper


@settings(max_examples=20, deadline=None)
@given(mechanisms, st.integers(1, 3000), st.sampled_from([1e-2, 1e-5, 1e-9]))
def test_epsilon_from_the_tail_sums_alone_matches_the_full_sums(mech, k, delta):
    """An epsilon query computes the suffix sums of the composed pmf only above an index
    (profile._start) that no answer lies below; the answer is that of the full sums, exactly."""
    acc = Accountant([Row(mech, k)], closed_forms=False)
    for prof in acc.profiles(error_level(delta)):
        lazy = prof.epsilon(delta)
        start = prof._from
        prof._ensure(0)
        full = prof.epsilon(delta)
        assert lazy == full, (lazy, full, start)  # bit for bit: the sums do not depend on it


def test_epsilon_query_skips_the_bulk_of_the_suffix_sums():
    acc = Accountant([Row(SubsampledGaussian(0.8, 0.01), 10_000)], screen=False)
    for prof in acc.profiles(error_level(1e-5)):
        prof.epsilon(1e-5)
        assert prof._from > prof.y.size // 2


@settings(max_examples=15, deadline=None)
@given(mechanisms, st.integers(1, 300), deltas)
def test_relative_error_terms_stay_negligible(mech, k, delta):
    """The relative terms of the bound (float round-off of the composition, rounding of the
    rows' masses) must not swamp the answer: a 1e-300 mass right of a split once made the
    mass-rounding term 1e291 and every delta upper bound 1."""
    acc = Accountant([Row(mech, k)], closed_forms=False)
    acc.epsilon(delta)
    for b in acc.error_budget(delta):
        assert b.get("total_rel", 0.0) < 1e-6, b


def test_tiny_sampling_rate_keeps_a_useful_delta_bracket():
    acc = Accountant([Row(SubsampledGaussian(1.0, 1e-5), 100_000)])
    eps = acc.epsilon(1e-8)
    d = acc.delta(eps.estimate)
    assert d.lower <= 1e-8 * 1.01 and d.upper < 1e-4
