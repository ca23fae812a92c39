"""numerics/sums.py: dot products without BLAS, against exact sums."""
import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from prvgui.accounting.numerics.sums import dot, row_dots


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 40000), st.integers(0, 2 ** 31))
def test_dot_is_the_sum_of_products_to_its_rounding(n, seed):
    """Nonnegative weights times values of either sign (a pmf's mean): within n u of the exact
    sum of the products' magnitudes (math.fsum of the rounded products is the exact sum of them)."""
    rng = np.random.default_rng(seed)
    w, y = rng.random(n), rng.standard_normal(n) * 10.0 ** rng.integers(-5, 5)
    got = dot(w, y)
    assert isinstance(got, float)
    exact = math.fsum((w * y).tolist())
    assert abs(got - exact) <= 2.0 ** -52 * max(math.log2(max(n, 2)), 1.0) * math.fsum(np.abs(w * y).tolist())
    assert dot(w, np.arange(n)) == dot(w, np.arange(n, dtype=float))  # (an index array as floats)


@settings(max_examples=50, deadline=None)
@given(st.integers(1, 300), st.integers(0, 3000), st.integers(0, 2 ** 31))
def test_row_dots_are_each_rows_dot(rows, cols, seed):
    rng = np.random.default_rng(seed)
    m, v = rng.random((rows, cols)), rng.random(cols)
    got = row_dots(m, v)
    assert got.shape == (rows,)
    assert all(got[i] == dot(m[i], v) for i in range(rows))
    assert np.allclose(got, m @ v, rtol=1e-13, atol=0.0)
