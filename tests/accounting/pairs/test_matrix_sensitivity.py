"""The matrix-mechanism sensitivity (prvgui/accounting/pairs/matrix_sensitivity.py) against brute
force written here: every separated pattern of at most k steps enumerated with itertools, every
sign vector, random unit vectors, an independent dyadic-interval tree and explicit Toeplitz matrices."""
import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from prvgui.accounting.pairs import matrix_sensitivity as ms
from prvgui.accounting.pairs.matrix_sensitivity import (matrix_sensitivity, max_patterns, toeplitz_sensitivity,
                                                        tree_matrix, tree_sensitivity)

REL = 1e-9  # the module rounds up by far less than this


def patterns(n, k, b):
    """Every nonempty set of at most k of range(n) with pairwise gaps >= b."""
    return [S for s in range(1, k + 1) for S in itertools.combinations(range(n), s)
            if all(y - x >= b for x, y in zip(S, S[1:]))]


def brute(C, k, b):
    """(best 0/1 value, best sign value, best sum of |G|) over every pattern: squared norms."""
    G = np.asarray(C, float).T @ np.asarray(C, float)
    ones = signs = absolute = 0.0
    for S in patterns(G.shape[0], k, b):
        sub = G[np.ix_(S, S)]
        ones = max(ones, sub.sum())
        absolute = max(absolute, np.abs(sub).sum())
        for u in itertools.product([-1.0, 1.0], repeat=len(S)):
            signs = max(signs, np.asarray(u) @ sub @ np.asarray(u))
    return ones, signs, absolute


def brute_dp_bound(C, k, b):
    """max over patterns of sum_i (G_ii + the k-1 largest |G_ij|, |i - j| >= b), written out."""
    G = np.asarray(C, float).T @ np.asarray(C, float)
    n = G.shape[0]
    w = [G[i, i] + sum(sorted((abs(G[i, j]) for j in range(n) if abs(i - j) >= b), reverse=True)[: k - 1])
         for i in range(n)]
    return max(sum(w[i] for i in S) for S in patterns(n, k, b))


def realised(C, S, g):
    """||sum_{i in S} C[:, i] g_i^T||_F for the vectors g (rows, norms <= 1)."""
    C = np.asarray(C, float)
    return np.linalg.norm(sum(np.outer(C[:, i], g[a]) for a, i in enumerate(S)))


@st.composite
def cases(draw, signed, max_n=8):
    n = draw(st.integers(1, max_n))
    rows = draw(st.integers(1, 6))
    lo = -3 if signed else 0
    C = np.array(draw(st.lists(st.lists(st.sampled_from(list(range(lo, 4)) + [0.5, 1.25]), min_size=n,
                                        max_size=n), min_size=rows, max_size=rows)), float)
    b = draw(st.integers(1, n + 1))
    k = draw(st.integers(1, max_patterns(n, b)))
    return C, k, b


def banded(n, band, rng, signed):
    C = rng.uniform(-1 if signed else 0, 1, (n + band, n))
    i, j = np.indices(C.shape)
    return np.where((i - j >= 0) & (i - j < band), C, 0.0)


# ---------------------------------------------------------------- published and simple values
def test_jax_privacy_published_case():
    C = np.array([[1, 0, 0, 0], [2, 1, 0, 0], [0, 1, 1, 0], [0, 0, 3, -6]])
    s = matrix_sensitivity(C)
    assert s.value == pytest.approx(6.0, rel=REL) and s.value >= 6.0
    assert s.exact and s.method == "largest column norm"


def test_identity_and_all_ones():
    assert matrix_sensitivity(np.eye(10), 3, 2).value == pytest.approx(math.sqrt(3), rel=REL)
    # the prefix-sum matrix: steps 0..k-1 (b = 1) share the most rows; sum_{i,j<k} (n - max(i,j))
    n, k = 7, 3
    C = np.tril(np.ones((n, n)))
    want = sum(n - max(i, j) for i in range(k) for j in range(k))
    assert matrix_sensitivity(C, k).value == pytest.approx(math.sqrt(want), rel=REL)


def test_max_patterns_is_the_largest_pattern():
    for n in range(1, 12):
        for b in range(1, 13):
            assert max_patterns(n, b) == max(len(S) for S in patterns(n, n, b))


def test_a_short_pattern_can_beat_every_full_one():
    # 201 steps, k = 3, b = 100: {0, 100, 200} is the only 3-step pattern (squared norm 3); step 50
    # lies in none, and {50, 150} has 100 + 1
    w = np.ones(201)
    w[50] = 10.0
    s = matrix_sensitivity(np.diag(w), 3, 100)
    assert s.value == pytest.approx(math.sqrt(101), rel=REL) and s.exact


# ---------------------------------------------------------------- brute force, enumeration path
@settings(max_examples=150, deadline=None)
@given(cases(signed=False))
def test_nonnegative_matrices_are_exact(case):
    C, k, b = case
    s = matrix_sensitivity(C, k, b)
    ones, _, _ = brute(C, k, b)
    assert s.exact
    assert s.value >= math.sqrt(ones)
    assert s.value == pytest.approx(math.sqrt(ones), rel=REL, abs=1e-300)


@settings(max_examples=150, deadline=None)
@given(cases(signed=True), st.integers(0, 2 ** 32 - 1))
def test_signed_matrices_are_certified(case, seed):
    C, k, b = case
    s = matrix_sensitivity(C, k, b)
    _, signs, absolute = brute(C, k, b)
    assert s.value >= math.sqrt(signs)
    if k > 1:
        assert s.value == pytest.approx(math.sqrt(absolute), rel=REL, abs=1e-300)
    if s.exact:
        assert s.value == pytest.approx(math.sqrt(signs), rel=REL, abs=1e-300)
    rng = np.random.default_rng(seed)  # any vectors of norm <= 1, not only signs
    every = patterns(C.shape[1], k, b)
    for t in rng.choice(len(every), size=min(20, len(every)), replace=False):
        S = every[t]
        g = rng.normal(size=(len(S), 3))
        g /= np.maximum(np.linalg.norm(g, axis=1, keepdims=True), 1.0)
        assert s.value >= realised(C, S, g) * (1 - 1e-12)


def test_balanced_signs_are_found_exact():
    # G_01 < 0 at separation 2: the signs (+, -) attain sum |G|
    C = np.array([[1.0, 0, -1], [0, 1, 0], [2, 0, -1]])
    s = matrix_sensitivity(C, 2, 2)
    _, signs, absolute = brute(C, 2, 2)
    assert signs == absolute and s.exact and s.value == pytest.approx(math.sqrt(signs), rel=REL)


def test_unbalanced_signs_are_not_exact():
    # three columns, pairwise couplings -1, -1, -1: no signs make all three positive
    C = np.array([[1.0, -1, 0], [0, 1, -1], [-1, 0, 1]])
    s = matrix_sensitivity(C, 3, 1)
    _, signs, absolute = brute(C, 3, 1)
    assert signs < absolute and not s.exact
    assert s.value == pytest.approx(math.sqrt(absolute), rel=REL)


# ---------------------------------------------------------------- brute force, DP path (forced)
@settings(max_examples=150, deadline=None)
@given(cases(signed=True))
def test_dp_bound_is_certified_and_as_defined(case):
    C, k, b = case
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(ms, "ENUMERATION_LIMIT", 0)
        s = matrix_sensitivity(C, k, b)
    _, signs, _ = brute(C, k, b)
    assert s.value >= math.sqrt(signs)
    if k > 1:
        assert s.value == pytest.approx(math.sqrt(brute_dp_bound(C, k, b)), rel=REL, abs=1e-300)
    if s.exact:
        assert s.value == pytest.approx(math.sqrt(signs), rel=REL, abs=1e-300)


@pytest.mark.parametrize("signed", [False, True])
@pytest.mark.parametrize("n,band,k,b", [(8, 2, 3, 2), (8, 3, 2, 4), (7, 1, 4, 1), (8, 2, 2, 3)])
def test_dp_bound_is_exact_on_disjoint_bands(monkeypatch, signed, n, band, k, b):
    C = banded(n, band, np.random.default_rng(n * band + k), signed)
    monkeypatch.setattr(ms, "ENUMERATION_LIMIT", 0)
    s = matrix_sensitivity(C, k, b)
    ones, signs, _ = brute(C, k, b)
    assert s.exact and s.method == "disjoint bands"
    assert s.value == pytest.approx(math.sqrt(signs), rel=REL) and signs == pytest.approx(ones)


# ---------------------------------------------------------------- the tree
def dyadic_tree(n):
    """Rows: for each size 1, 2, 4, ... up to the first >= n, the intervals [a, a + size) from a = 0."""
    rows, size = [], 1
    while True:
        for a in range(0, n, size):
            rows.append([1.0 if a <= t < a + size else 0.0 for t in range(n)])
        if size >= n:
            return np.array(rows)
        size *= 2


@pytest.mark.parametrize("n", range(1, 34))
def test_tree_matrix_and_single_participation(n):
    T = tree_matrix(n)
    np.testing.assert_array_equal(T, dyadic_tree(n))
    want = math.sqrt(math.ceil(math.log2(n)) + 1)
    assert tree_sensitivity(n).value == pytest.approx(want, rel=1e-15) and tree_sensitivity(n).value >= want
    assert matrix_sensitivity(T).value == pytest.approx(want, rel=1e-15)


@pytest.mark.parametrize("limit", [ms.ENUMERATION_LIMIT, 0])
@pytest.mark.parametrize("n", [2, 5, 8, 13, 16, 21])
def test_tree_structure_matches_the_matrix(monkeypatch, limit, n):
    monkeypatch.setattr(ms, "ENUMERATION_LIMIT", limit)
    for b in (1, 2, 3, 5):
        for k in range(1, min(max_patterns(n, b), 4) + 1):
            s, d = tree_sensitivity(n, k, b), matrix_sensitivity(tree_matrix(n), k, b)
            assert s.value == pytest.approx(d.value, rel=REL) and (s.exact, s.method) == (d.exact, d.method)
            if n <= 8:
                assert s.value >= math.sqrt(brute(tree_matrix(n), k, b)[0])


def test_tree_at_large_n_bounds_a_realised_pattern():
    n, k, b = 2 ** 16, 4, 2 ** 13
    L = 17
    S = [0, 3 * b + 5, 5 * b + 1, 7 * b + 2]
    common = sum(1 for i in S for j in S for lv in range(L) if i >> lv == j >> lv)
    s = tree_sensitivity(n, k, b)
    assert not s.exact and s.value >= math.sqrt(common)
    assert s.value <= math.sqrt(k * k * L)  # no more than every pair sharing every level


# ---------------------------------------------------------------- Toeplitz
def toeplitz(c, n):
    return np.array([[c[i - j] if 0 <= i - j < len(c) else 0.0 for j in range(n)] for i in range(n)])


COEFFICIENTS = [[1.0], [1.0, 0.5], [1.0, -0.7, 0.3], [2.0, 1.0, 0.5, 0.25, 0.0, 0.0], [1.0, -1.0, 1.0, -1.0, 1.0],
                [0.5, 0.0, 0.0, -2.0], list(np.random.default_rng(3).normal(size=9))]


@pytest.mark.parametrize("c", COEFFICIENTS)
@pytest.mark.parametrize("n", [1, 4, 7, 10])
def test_toeplitz_matches_the_built_matrix(c, n):
    for b in (1, 2, 3, 4):
        for k in range(1, min(max_patterns(n, b), 3) + 1):
            s, d = toeplitz_sensitivity(c, n, k, b), matrix_sensitivity(toeplitz(c, n), k, b)
            assert s.value == pytest.approx(d.value, rel=REL, abs=1e-300)
            assert s.exact == d.exact
            if n <= 7:
                _, signs, _ = brute(toeplitz(c, n), k, b)
                assert s.value >= math.sqrt(signs)


@pytest.mark.parametrize("c", COEFFICIENTS)
@pytest.mark.parametrize("n", [5, 8])
def test_toeplitz_structured_bound_is_certified(monkeypatch, c, n):
    monkeypatch.setattr(ms, "DENSE_LIMIT", 0)
    for b in (1, 2, 3):
        for k in range(1, min(max_patterns(n, b), 3) + 1):
            s = toeplitz_sensitivity(c, n, k, b)
            _, signs, _ = brute(toeplitz(c, n), k, b)
            assert s.value >= math.sqrt(signs)
            if s.exact:
                assert s.value == pytest.approx(math.sqrt(signs), rel=REL, abs=1e-300)


def test_toeplitz_nonnegative_structured_bound_keeps_cut_columns():
    # c = ones over n steps (prefix sums), k = 2, b > n/2: the best pattern is {0, b}, exactly
    # n + (n - b) + 2 (n - b), and the bound with cut-off columns and couplings R(b) = n - b finds it
    n, b = 3000, 2000
    s = toeplitz_sensitivity(np.ones(n), n, 2, b)
    assert s.value == pytest.approx(math.sqrt(n + 3 * (n - b)), rel=REL) and not s.exact


def test_toeplitz_disjoint_bands_at_large_n():
    c = np.array([1.0, 0.6, 0.3])
    s = toeplitz_sensitivity(c, 10 ** 6, 10, 5)
    assert s.exact and s.method == "disjoint bands"
    assert s.value == pytest.approx(math.sqrt(10 * (c @ c)), rel=REL)


# ---------------------------------------------------------------- messages
def test_messages():
    with pytest.raises(ValueError, match=r"participations: 5 participations at least 100 steps apart "
                                         r"do not fit in 300 steps \(at most 3\)"):
        matrix_sensitivity(np.eye(300), 5, 100)
    with pytest.raises(ValueError, match=r"participations: 4 participations do not fit in 3 steps"):
        tree_sensitivity(3, 4)
    with pytest.raises(ValueError, match="participations: a record takes part at least once"):
        toeplitz_sensitivity([1.0], 5, 0)
    with pytest.raises(ValueError, match="min_separation"):
        tree_sensitivity(5, 1, 0)
    with pytest.raises(ValueError, match="at least 1 step"):
        toeplitz_sensitivity([1.0], 0)
    with pytest.raises(ValueError, match="at least 1 step"):
        matrix_sensitivity(np.zeros((3, 0)))
    with pytest.raises(ValueError, match="not a finite number"):
        matrix_sensitivity(np.array([[1.0, np.nan]]))
    with pytest.raises(ValueError, match="not a finite number"):
        toeplitz_sensitivity([1.0, np.inf], 4)
    with pytest.raises(ValueError, match="two dimensions"):
        matrix_sensitivity(np.ones(3))
