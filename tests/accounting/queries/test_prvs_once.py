"""An accountant makes its rows' PRVs once per order, whatever the reuse cache holds: the
infinite mass it reports first and the compositions after it share them (10^5 discrete
Gaussians, more than reuse.MAX_PRVS, made them twice: 25 s)."""
from __future__ import annotations

import math

import pytest

from prvgui.accounting import Accountant, Row
from prvgui.accounting.kinds.discrete_gaussian import DiscreteGaussian
from prvgui.accounting.mechanisms import ApproxDP, SubsampledGaussian
from prvgui.accounting.numerics import reuse


@pytest.fixture
def small_cache(monkeypatch):
    """A reuse cache of four PRVs: the accountant's rows are far more."""
    reuse.clear()
    monkeypatch.setattr(reuse, "MAX_PRVS", 4)
    yield
    reuse.clear()


def test_infinite_mass_and_the_composition_make_the_prvs_once(small_cache, monkeypatch):
    made: list[tuple[str, int]] = []
    real = DiscreteGaussian.prvs.__func__

    def counting(cls, mechanisms, order="remove"):
        made.append((order, len(mechanisms)))
        return real(cls, mechanisms, order)
    monkeypatch.setattr(DiscreteGaussian, "prvs", classmethod(counting))
    rows = [Row(DiscreteGaussian(40.0 + 3.0 * i), 1) for i in range(30)]
    rows += [Row(ApproxDP(0.1, 1e-7), 3), Row(SubsampledGaussian(1.0, 0.01), 20)]
    acc = Accountant(rows, 0.05)
    total, shares = acc.infinite_mass()
    acc.epsilon(1e-6)
    assert made == [(o, 30) for o in acc.orders]
    # the reported masses are the rows' own (each PRV made afresh here), the approximate-DP
    # row's 1 - (1 - delta)^3 among them
    want = {}
    for i, r in enumerate(acc.rows, 1):
        for o in r.mechanism.orders():
            p = r.mechanism.prv(o).inf_mass
            if p > 0:
                want[i] = max(want.get(i, 0.0), -math.expm1(r.count * math.log1p(-p)))
    assert dict(shares) == pytest.approx(want, rel=1e-12)
    assert want[31] == pytest.approx(-math.expm1(3 * math.log1p(-1e-7)), rel=1e-12)
    assert total == pytest.approx(-math.expm1(sum(math.log1p(-p) for p in want.values())), rel=1e-12)
