"""A group's rows tilted together (tilt_batch.py): each row is the tilt by its definition (summed
exactly) within its rounding bound, and the same row tilted alone to the bit; its block summary
is window.cgf_blocks' of the tilted row, and a composition tilted a group at a time gives the
bracket of one tilted a row at a time. Packed rows summarised together (window.blocks_many) give each row's own summary,
bit for bit."""
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prvgui.accounting import Accountant, Row, SubsampledGaussian
from prvgui.accounting.kinds.discrete_gaussian import DiscreteGaussian
from prvgui.accounting.numerics import tilt, window
from prvgui.accounting.numerics.discretize import DiscretePRV
from prvgui.accounting.numerics.packed import PackedRow, dense, discretize_packed, nonzero
from prvgui.accounting.numerics.pipeline import make_plan
from prvgui.accounting.numerics.tilt import Tilting, tilt_row
from prvgui.accounting.numerics.tilt_batch import tilt_many


def _rows(seed: int, n: int) -> list:
    """Discretised rows of three shapes: packed discrete Gaussians, dense random rows with gaps
    (some with cells of zero mass at their ends), a row with one cell."""
    rng = np.random.default_rng(seed)
    plan = make_plan(0.01, 1.0, 1000, 1e-16, rows=1000)
    out: list = []
    for i in range(n):
        kind = i % 3
        if kind == 0:
            prv = DiscreteGaussian(float(rng.uniform(20, 200))).prv("remove")
            out.append(discretize_packed(prv, plan.h, plan.tau(prv), 1 << 26, plan.coarse, None, plan.tiers))
        elif kind == 1:
            size = int(rng.integers(2, 3000))
            pmf = rng.random(size) * (rng.random(size) < 0.3) * 10.0 ** -rng.uniform(0, 30, size)
            pmf[int(rng.integers(0, size))] = 1.0
            pmf /= pmf.sum()
            out.append(DiscretePRV(pmf=pmf, start=int(rng.integers(-5000, 100)), h=1e-3, shift=1e-4,
                                  inf_mass=0.0, tail_prob=0.0, bias=0.0))
        else:
            out.append(DiscretePRV(pmf=np.ones(1), start=int(rng.integers(-10, 10)), h=1e-2, shift=0.0,
                                  inf_mass=0.0, tail_prob=0.0, bias=0.0))
    return out


def _definition(r, lam: float):
    """The tilt by its definition, summed exactly (mpmath): q_j = p_j e^{lam y_j} / M over the
    row's nonzero cells, log M, and the rounding bound's terms."""
    import mpmath
    d, nz, p, size = nonzero(r)
    y = (d.start + nz) * d.h + d.shift
    terms = [mpmath.mpf(float(a)) * mpmath.exp(mpmath.mpf(float(lam)) * mpmath.mpf(float(b))) for a, b in zip(p, y)]
    big_m = mpmath.fsum(terms)
    q = np.zeros(size)
    q[nz] = [float(t / big_m) for t in terms]
    logw = np.log(p) + lam * y
    rel = 2.0 ** -53 * (8.0 + 4.0 * float(-np.log(p).min()) + 4.0 * abs(lam) * max(abs(y[0]), abs(y[-1]))
                        + 4.0 * abs(float(logw.max())))
    return q, float(mpmath.log(big_m)), rel, nz.size * 2.0 ** -1022


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10 ** 6), n=st.integers(1, 20), lam=st.sampled_from([1e-3, 0.5, 7.0, 300.0]))
def test_each_row_is_the_tilt_by_its_definition_and_its_summary_cgf_blocks(seed, n, lam):
    """Each row of a group (tilt_many) against the definition summed exactly: its masses within
    its own rounding bound ``rel`` (a few ulps for the sum s), log M to a few ulps; alone
    (tilt_row) the same row to the bit; its summary is window.cgf_blocks' of the tilted row."""
    rows = _rows(seed, n)
    blocks = [256 if i % 2 else 2048 for i in range(n)]
    for r, b, got in zip(rows, blocks, tilt_many(rows, lam, blocks)):
        q, log_m, rel, lost = _definition(r, lam)
        t = got.row
        assert t.pmf.size == q.size and t.start == nonzero(r)[0].start
        assert np.all(np.abs(t.pmf - q) <= (rel + (q.size + 8) * 2.0 ** -53) * q + 2.0 ** -1022)  # (s: a sum in sequence)
        assert got.log_m == pytest.approx(log_m, rel=1e-13, abs=1e-13)
        assert got.rel == pytest.approx(rel, rel=1e-12, abs=0) and got.lost == lost
        alone = tilt_row(r, lam)
        assert np.array_equal(alone[0].pmf, t.pmf) and alone[1:] == (got.log_m, got.rel, got.lost)
        assert alone[0].centre == t.centre
        ref = window.cgf_blocks(t, b)
        logp, centres, w = got.summary
        assert w == ref[2] and logp.size == ref[0].size
        np.testing.assert_allclose(logp, ref[0], rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(centres, ref[1], rtol=1e-12, atol=1e-15)


def test_a_row_without_mass_is_given_back_without_a_summary():
    empty = DiscretePRV(pmf=np.zeros(4), start=3, h=1e-2, shift=0.0, inf_mass=0.0, tail_prob=0.0, bias=0.0)
    got = tilt_many([empty, *_rows(3, 2)], 0.5, [256, 256, 256])
    assert got[0].summary is None and got[0].log_m == 0.0 and not got[0].row.pmf.any()
    assert all(g.summary is not None for g in got[1:])


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10 ** 6), n=st.integers(1, 70))
def test_packed_rows_summarised_together_as_each_alone(seed, n):
    packed = [r for r in _rows(seed, 3 * n) if isinstance(r, PackedRow)]
    together = tilt._packed_summaries(packed)
    assert sorted(together) == list(range(len(packed)))
    for i, r in enumerate(packed):
        alone = window.cgf_blocks(r, tilt.STEER_BLOCKS)
        for a, b in zip(together[i][:2], alone[:2]):
            assert np.array_equal(a, b)
        assert together[i][2] == alone[2]
        ref = window.cgf_blocks(dense(r), tilt.STEER_BLOCKS)  # (the array of cells: the same up to rounding)
        np.testing.assert_allclose(together[i][0], ref[0], rtol=1e-12, atol=1e-12)


def test_the_group_tilting_sums_what_untilt_needs_as_row_by_row():
    rows = [(r, k) for r, k in zip(_rows(5, 12), [1, 3, 1, 2] * 3)]
    lam = 0.8
    one, many = Tilting(lam), Tilting(lam)
    for r in rows:
        one.row(r)
    got = many.rows(rows)
    assert one.info() == many.info()  # (each row's terms are its own, alone or in a group)
    for (t, k, prep), (_, k0) in zip(got, rows):
        assert k == k0 and prep is not None and prep.d is t
        assert prep.blocks == (window.ONCE_BLOCKS if k == 1 else 2048)


@pytest.mark.parametrize("case", ["dg", "sg"])
def test_a_composition_tilted_a_group_at_a_time_gives_the_bracket_of_one_row_at_a_time(monkeypatch, case):
    """Over TREE_ALWAYS rows (compose_many's lazy groups) at a delta that needs the tilt, with
    the group's summaries from the batch against each row tilted alone and summarised from its
    array of cells: the brackets agree to rounding, and both hold the same epsilon."""
    rng = np.random.default_rng(2)
    if case == "dg":
        rows = [Row(DiscreteGaussian(s), 1) for s in rng.uniform(50.0, 200.0, 300)]
    else:
        rows = [Row(SubsampledGaussian(s, q), 1) for s, q in zip(rng.uniform(0.8, 1.5, 300), rng.uniform(0.001, 0.01, 300))]
    batched = Accountant(rows, 0.01).epsilon(1e-10)
    group = Tilting.rows  # (one row at a time, each summarised again from its array of cells)
    monkeypatch.setattr(Tilting, "rows", lambda self, rs: [(t, k, None) for r in rs for t, k, _ in group(self, [r])])
    alone = Accountant(rows, 0.01).epsilon(1e-10)
    for a, b in ((batched.lower, alone.lower), (batched.upper, alone.upper)):
        assert math.isclose(a, b, rel_tol=1e-9)
    assert batched.upper - batched.lower <= 0.02 * 1.001
