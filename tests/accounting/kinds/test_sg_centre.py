"""Where the subsampled Gaussian's tail searches start (its continuous part's ``centre``): in the
bulk of the mass, so that a branch holding less than the tail cut is cut, not kept with every
cell between it and the bulk."""
import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from prvgui.accounting import Accountant, Row, SubsampledGaussian
from prvgui.accounting.kinds.subsampled_gaussian import subsampled_gaussian_prv


@settings(max_examples=200, deadline=None)
@given(st.floats(0.3, 5.0), st.floats(1e-4, 0.999), st.sampled_from(["remove", "add"]))
def test_the_searches_start_in_the_middle_of_the_mass(sigma, q, order):
    """At least a fifth of the mass on each side of the centre (it is the loss at x = 0 or 1,
    the middle of the branch that holds at least half of it: a quarter on each side)."""
    c = subsampled_gaussian_prv(sigma, q, order).cont
    at = np.array([c.centre])
    assert c.lo <= c.centre <= c.hi
    assert float(c.cdf(at)[0]) >= 0.2 and float(c.sf(at)[0]) >= 0.2


def test_a_sampled_branch_below_the_tail_cut_is_cut():
    """q = 1e-30, sigma 0.01, 10^9 steps: the record is drawn with probability at most
    k q = 1e-21, so delta(0) <= 1e-21 and epsilon at delta 1e-5 is 0. The loss when it is drawn
    lies near 4930 nats; the search started there kept every cell down to the bulk, and the
    composition was refused as "far from private". Now the bracket holds 0 and is as narrow as
    asked."""
    b = Accountant([Row(SubsampledGaussian(0.01, 1e-30), 10 ** 9)], 0.01).epsilon(1e-5)
    assert b.lower <= 0.0 <= b.upper <= 0.02
    assert math.isfinite(b.estimate)
