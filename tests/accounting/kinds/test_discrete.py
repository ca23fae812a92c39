"""The discrete Gaussian and discrete Laplace kinds against independent references.

References, none of which uses prvgui's code:
* exact lattice sums in mpmath at 50 digits: the noise pmf on the integers, the loss of the pair
  N_Z(Delta) vs N_Z(0) (Lap_Z(Delta) vs Lap_Z(0)) at every integer, k runs by exact convolution
  of the integer noise sums, delta(eps) = sum (1 - e^{eps - loss})_+ over the composed pmf and
  epsilon(delta) by bisection on it. Discrete Gaussian tails beyond |y| = 14 sigma (relative mass
  below 1e-42) are left out of the reference and their mass is added to the tolerance; pmf
  entries below 1e-60 dropped by the convolutions likewise (``lost``);
* dp-accounting 0.6.0's discrete Gaussian / discrete Laplace PLDs (its Laplace parameter is
  1 / scale), pessimistic and optimistic, which bracket the truth from their side.
"""
import bisect
import functools
import json
import math
import subprocess
import sys

import mpmath as mp
import numpy as np
import pytest

import references as ref
from prvgui.accounting import Accountant, Row, mechanism_from_params
from prvgui.accounting.numerics.discretize import discretize
from prvgui.accounting.pairs.gdp import randomized_response_mu2
from prvgui.accounting.kinds.discrete_gaussian import MAX_SIGMA, DiscreteGaussian, discrete_gaussian_lattice
from prvgui.accounting.kinds.discrete_gaussian import _table as _dg_table
from prvgui.accounting.kinds.discrete_laplace import DiscreteLaplace
from prvgui.accounting.pairs.lattice import Functions, exp_neg_quotient, suffix_sums
from prvgui.accounting.pairs.rdp import ORDERS, rr_rdp
from prvgui.document.fileio import FileFormatError, loads_composition

mp.mp.dps = 50
U = 2.0 ** -53
DROP = mp.mpf(10) ** -60


# ---------------------------------------------------------------- mpmath references
def dg_noise(sigma):
    """(offset, pmf) of N_Z(0, sigma^2) on [-M, M], M = 14 sigma + 2, and the left-out mass."""
    s2 = mp.mpf(sigma) ** 2
    m = int(14 * sigma) + 2
    w = [mp.exp(-mp.mpf(y) ** 2 / (2 * s2)) for y in range(-m, m + 1)]
    far = mp.fsum(mp.exp(-mp.mpf(y) ** 2 / (2 * s2)) for y in range(m + 1, m + 60))  # the rest is nil
    z = mp.fsum(w) + 2 * far
    return -m, [v / z for v in w], 2 * far / z


def _dg_sum(sigma, start, big_j):
    """sum_{y = start}^{J} e^{-y^2 / (2 sigma^2)} until the terms fall below 1e-55 of the sum."""
    s2, total, y = mp.mpf(sigma) ** 2, mp.mpf(0), start
    while y <= big_j:
        term = mp.exp(-mp.mpf(y) ** 2 / (2 * s2))
        total += term
        if term < mp.mpf(10) ** -55 * total:
            break
        y += 1
    return total


@functools.lru_cache(maxsize=None)
def _dg_norm(sigma, big_j):
    return 1 + 2 * _dg_sum(sigma, 1, big_j)


def dg_tail(sigma, m, big_j):
    """P(y >= m), m >= 0, under N_Z(0, sigma^2) restricted to |y| <= J (the kind's kept lattice)."""
    return _dg_sum(sigma, m, big_j) / _dg_norm(sigma, big_j)


def dl_index(scale, d):
    """pmf of the index I of Lap_Z(Delta, t) vs Lap_Z(0, t): loss e0 - 2 I / t (exact, finite)."""
    x = 1 / mp.mpf(scale)
    r, c = mp.exp(-x), mp.tanh(x / 2)
    p = [c * r ** i for i in range(d + 1)]
    p[0], p[d] = 1 / (1 + r), r ** d / (1 + r)
    return p


def convolve(p, q):
    out = [mp.mpf(0)] * (len(p) + len(q) - 1)
    for i, a in enumerate(p):
        if a > DROP:
            for j, b in enumerate(q):
                out[i + j] += a * b
    return out


def power(p, k):
    """k-fold convolution, entries below DROP dropped: (pmf, offset scale, mass lost)."""
    out = [mp.mpf(1)]
    for _ in range(k):
        out = convolve(out, p)
    lost = 1 - mp.fsum(out)
    return out, lost


def dg_loss(sigma, d, k):
    """(losses, masses, lost) of k runs of the discrete Gaussian pair."""
    off, p, far = dg_noise(sigma)
    pk, lost = power(p, k)
    s2 = mp.mpf(sigma) ** 2
    a, b = mp.mpf(d) ** 2 / (2 * s2), mp.mpf(d) / s2
    return [k * a + b * (k * off + i) for i in range(len(pk))], pk, lost + k * far


def dl_loss(scale, d, k):
    x = 1 / mp.mpf(scale)
    pk, lost = power(dl_index(scale, d), k)
    return [k * d * x - 2 * x * i for i in range(len(pk))], pk, lost


class Exact:
    """delta(eps) = A(eps) - e^eps B(eps) with A, B the sums of m and m e^{-y} over the losses
    y > eps (suffix sums over the sorted lattice, in mpmath), and epsilon(delta) by bisection."""

    def __init__(self, loss):
        pairs = sorted(zip(loss[0], loss[1]))
        self.y = [y for y, _ in pairs]
        self.a, self.b = [mp.mpf(0)] * (len(pairs) + 1), [mp.mpf(0)] * (len(pairs) + 1)
        for i in range(len(pairs) - 1, -1, -1):
            y, m = pairs[i]
            self.a[i], self.b[i] = self.a[i + 1] + m, self.b[i + 1] + m * mp.exp(-y)
        self.lost = loss[2]

    def delta(self, eps):
        i = bisect.bisect_right(self.y, mp.mpf(eps))
        return max(mp.mpf(0), self.a[i] - mp.exp(mp.mpf(eps)) * self.b[i])

    def epsilon(self, delta):
        lo, hi = mp.mpf(0), self.y[-1]
        if self.delta(0) <= delta:
            return mp.mpf(0)
        for _ in range(70):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if self.delta(mid) > delta else (lo, mid)
        return hi


def check_bracket(mech, k, loss, eps_list, delta_list, relation=("add_remove", 1), closed=True):
    """The certified brackets hold the exact values; returns the largest |estimate - exact|."""
    acc = Accountant([Row(mech, k)], 0.01, relation[0], group_size=relation[1], closed_forms=closed)
    exact = Exact(loss)
    tol, worst = float(loss[2]) + 1e-15, 0.0
    for eps in eps_list:
        ex, b = float(exact.delta(eps)), acc.delta(eps)
        assert b.lower - tol <= ex <= b.upper + tol, (mech, k, eps, b, ex)
        worst = max(worst, abs(b.estimate - ex))
    for delta in delta_list:
        ex, b = float(exact.epsilon(delta)), acc.epsilon(delta)
        assert b.lower - 1e-12 <= ex <= b.upper + 1e-12, (mech, k, delta, b, ex)
        assert b.upper - b.lower <= 2 * 0.01 * (1 + 1e-9)
        worst = max(worst, abs(b.estimate - ex))
    return worst


# ---------------------------------------------------------------- against exact lattice sums
@pytest.mark.parametrize("sigma,d,k", [(0.5, 1, 1), (1.0, 1, 4), (2.0, 3, 6), (3.7, 2, 10), (0.8, 1, 3)])
def test_discrete_gaussian_brackets_hold_the_exact_lattice_sums(sigma, d, k):
    check_bracket(DiscreteGaussian(sigma, d), k, dg_loss(sigma, d, k), [0.0, 0.5, 2.0], [1e-3, 1e-7])


@pytest.mark.parametrize("scale,d,k", [(1.0, 1, 6), (2.0, 3, 4), (0.5, 5, 3), (10.0, 7, 8), (0.3, 2, 5)])
def test_discrete_laplace_brackets_hold_the_exact_lattice_sums(scale, d, k):
    loss = dl_loss(scale, d, k)
    for closed in (True, False):  # Delta = 1 is randomized response: its closed form, and the FFT
        check_bracket(DiscreteLaplace(scale, d), k, loss, [0.0, 0.4, 1.5], [1e-3, 1e-8], closed=closed)


@pytest.mark.parametrize("neighbouring,group,factor", [("replace_one", 1, 2), ("add_remove", 3, 3),
                                                       ("replace_one", 2, 4)])
def test_relations_move_the_integer_query_by_the_factor(neighbouring, group, factor):
    rel = (neighbouring, group)
    check_bracket(DiscreteGaussian(2.0), 3, dg_loss(2.0, factor, 3), [0.5], [1e-6], rel)
    check_bracket(DiscreteLaplace(1.5), 3, dl_loss(1.5, factor, 3), [0.5], [1e-6], rel)
    assert DiscreteGaussian(2.0, 5).under(Accountant([], 0.01, neighbouring, group_size=group).relation) \
        == DiscreteGaussian(2.0, 5 * factor)


def test_a_wide_discrete_gaussian_against_its_exact_sum():
    """sigma = 60: 840 lattice points each side in the reference, a step cdf in the accountant."""
    check_bracket(DiscreteGaussian(60.0, 7), 1, dg_loss(60.0, 7, 1), [0.0, 0.1, 0.5], [1e-5])


def test_a_huge_discrete_laplace_against_its_geometric_sums():
    """Delta = 10^6 points (the step-cdf form): one run's delta from the closed-form geometric sums."""
    scale, d = 4e5, 10 ** 6
    x = 1 / mp.mpf(scale)
    r, c, e0 = mp.exp(-x), mp.tanh(x / 2), d * x
    acc = Accountant([Row(DiscreteLaplace(scale, d), 1)], 0.01)
    for eps in (0.0, 1.0, 2.2):  # (e0 = 2.5)
        m = int(mp.floor((e0 - eps) / (2 * x)))  # points i <= m have loss > eps (none on eps here)
        above = 1 - r ** (m + 1) / (1 + r)  # P(I <= m)
        # E[e^{-Y}; I <= m]: the top atom and c0 r^i e^{-e0 + 2 i x} = c0 e^{-e0} e^{i x}, i = 1..m
        weighted = mp.exp(-e0) / (1 + r) + c * mp.exp(-e0) * (mp.exp(x * (m + 1)) - mp.exp(x)) / mp.expm1(x)
        ex = float(above - mp.exp(eps) * weighted)
        b = acc.delta(eps)
        assert b.lower <= ex <= b.upper, (eps, b, ex)


# ---------------------------------------------------------------- the PRVs' contract
MECHS = [DiscreteGaussian(0.4), DiscreteGaussian(1.0), DiscreteGaussian(7.5, 3), DiscreteGaussian(300.0, 2),
         DiscreteLaplace(1.0), DiscreteLaplace(0.7, 4), DiscreteLaplace(50.0, 9000), DiscreteLaplace(0.1, 200)]


@pytest.mark.parametrize("mech", MECHS, ids=repr)
def test_lattice_prvs_keep_the_accuracy_the_discretiser_trusts(mech):
    """Masses add up; at points between lattice values the sf has relative and the cdf absolute
    error below 8 units of 2^-53 (discretize trusts 64); the mean is the KL divergence."""
    prv = mech.prv()
    lat = prv.lattice
    total = prv.inf_mass + sum(m for _, m in prv.atoms) + (prv.cont.mass if prv.cont else 0.0)
    assert abs(total - 1) < 1e-12 and 0 <= prv.inf_mass < 1e-290
    rng = np.random.default_rng(7)
    ks = np.unique(np.concatenate([rng.integers(lat.lo, lat.hi + 1, 25), [lat.lo, lat.hi, (lat.lo + lat.hi) // 2]]))
    ks = ks[::3] if lat.hi - lat.lo > 1000 else ks
    t = lat.values(ks) + 0.5 * lat.step  # between two lattice points
    cdf, sf = lat.y_cdf(t), lat.y_sf(t)
    assert np.allclose(cdf + sf, lat.mass, rtol=0, atol=1e-15)
    if isinstance(mech, DiscreteGaussian):  # y the index: P(y' <= y), P(y' > y) from tail sums
        tail = lambda m: dg_tail(mech.sigma, m, lat.hi)  # noqa: E731
        ref_cdf = lambda j: tail(-j) if j < 0 else 1 - tail(j + 1)  # noqa: E731
        ref_sf = lambda j: tail(j + 1) if j >= 0 else 1 - tail(-j)  # noqa: E731
    else:  # k = Delta - I: P(K <= k) = P(I >= Delta - k) = r^(Delta - k) / (1 + r) for k < Delta
        d, r = mech.sensitivity, mp.exp(-1 / mp.mpf(mech.scale))
        ref_cdf = lambda j: r ** (d - j) / (1 + r) if j < d else mp.mpf(1)  # noqa: E731
        ref_sf = lambda j: 1 - ref_cdf(j)  # noqa: E731  (at least 1/2, or 0)
    for j, c, s in zip(ks, cdf, sf):
        want_c, want_s = ref_cdf(int(j)), ref_sf(int(j))
        assert abs(c - want_c) <= 8 * U, (j, c, want_c)
        assert abs(s - want_s) <= 8 * U * want_s, (j, s, want_s)
    d_ = discretize(prv, 1e-3, 1e-16)
    assert abs(d_.mean() - prv.mean / prv.finite_mass) < 1e-9


@pytest.mark.parametrize("sigma", [0.6, 3.0, 47.3, 812.5])
def test_the_held_tail_sums_are_the_whole_tables(sigma):
    """A PRV holds its tail sums only near the centre (built from the weights out to where the
    rest is below 2^-60 of them) and reads the far ones from the whole table; at every index (or
    a sample of 4000 with both ends), asked near and far apart and together, they are the whole
    table's to 4 units of 2^-53 (the table the mpmath check above vouches for), and a wide
    lattice's PRV holds under half of the table's numbers."""
    lat, _ = discrete_gaussian_lattice(sigma, 1)
    t = _dg_table(sigma)
    big_j = t.s.size - 2
    ys = np.arange(-big_j - 1, big_j + 1)
    if ys.size > 4000:
        ys = np.unique(np.concatenate([np.random.default_rng(5).choice(ys, 4000), [-big_j - 1, -big_j, 0, big_j]]))
    ref_tail = lambda m: t.s[np.minimum(m, big_j + 1)] / t.z  # noqa: E731
    lo, hi = lat.quick
    assert -big_j <= lo < 0 < hi <= big_j
    inner = (ys >= lo) & (ys <= hi)
    for part in (ys[inner], ys[~inner], ys):
        want_cdf = np.where(part < 0, ref_tail(np.abs(part)), 1.0 - ref_tail(np.maximum(part, -1) + 1))
        want_sf = np.where(part >= 0, ref_tail(np.maximum(part, -1) + 1), 1.0 - ref_tail(np.abs(part)))
        assert np.all(np.abs(lat.cdf(part) - want_cdf) <= 4 * U * np.maximum(want_cdf, 1e-300))
        assert np.all(np.abs(lat.sf(part) - want_sf) <= 4 * U * np.maximum(want_sf, 1e-300))
    assert lat.sf(ys[-1:])[0] == 0.0 and lat.cdf(ys[:1])[0] == 0.0  # beyond the kept lattice
    held = sum(a.size for a in ref.closure_arrays(lat.cdf))
    if sigma > 40:
        assert held < 0.45 * t.s.size, (held, t.s.size)


def test_a_tail_cut_beyond_the_quick_part_is_found_and_holds():
    """At delta 1e-34 the cuts lie where the PRV sums its tail on demand (beyond Continuous.quick):
    the scan finds the same cut as a search over the whole table, and the bracket holds the exact
    lattice sum (the reference keeps the lattice to 14 sigma, relative mass 1e-42)."""
    from prvgui.accounting.numerics.discretize import Tails
    mech = DiscreteGaussian(3.0)
    c = mech.prv().cont
    tails = Tails(c, 1e-3, 1e-36)
    b = tails.upper_cut(1e-36)
    assert b > c.quick[1] and float(c.sf(np.array([b]))[0]) <= 1e-36
    assert float(c.sf(np.array([b - mech.prv().lattice.step]))[0]) > 1e-36  # (a lattice step in)
    check_bracket(mech, 2, dg_loss(3.0, 1, 2), [], [1e-34, 1e-30])


@pytest.mark.parametrize("sigma,d", [(0.3, 1), (0.6, 2), (3.0, 1), (47.3, 3), (812.5, 1)])
def test_the_lattice_cut_is_the_exact_crossing(sigma, d):
    """Lattice.cut(tau) names the largest index with cdf <= tau and the smallest with sf <= tau
    (each neighbour one step in is above tau), near the centre, beyond the held tail sums (tau
    below e^-80) and past the kept lattice; the discretiser's cut points read from it hold at
    most tau in each tail whatever the rounding of the lattice values."""
    from prvgui.accounting.numerics.discretize import LatticeTails
    lat, _ = discrete_gaussian_lattice(sigma, d)
    prv = DiscreteGaussian(sigma, d).prv()
    assert prv.lattice.cut is not None
    taus = (0.5, 0.2, 1e-3, 1e-12, 1e-30, 1e-40, 1e-200, 1e-320)
    tails = LatticeTails.of(prv, 1e-3, 1e-12, taus[::2])  # (half read at once, half asked later)
    assert not lat.cut(np.array([0.9]))[2][0]  # (no cut holds 0.9: the scan answers)
    for tau in taus:
        lo, hi, ok = lat.cut(np.array([tau]))
        lo, hi = int(lo[0]), int(hi[0])
        assert ok[0] and lat.lo - 1 <= lo and hi <= lat.hi
        assert lat.cdf(np.array([lo]))[0] <= tau and lat.sf(np.array([hi]))[0] <= tau
        if lo + 1 <= lat.hi:
            assert lat.cdf(np.array([lo + 1]))[0] > tau
        if hi - 1 >= lat.lo - 1:
            assert lat.sf(np.array([hi - 1]))[0] > tau
        a, b = tails.lower_cut(tau), tails.upper_cut(tau)
        assert prv.cont.cdf(np.array([a]))[0] <= tau and prv.cont.sf(np.array([b]))[0] <= tau
        # (one lattice step in, the tails hold more than tau: the points are the crossings)
        if lo + 1 <= lat.hi:
            assert prv.cont.cdf(np.array([a + lat.step]))[0] > tau


def test_lattice_cut_points_and_scanned_ones_give_the_same_bracket():
    """The discretiser reads a discrete Gaussian's cut points from its tables, or scans its
    tails (the lattice's cut taken away): both rows cut at most tau from each tail, keep their
    mass and agree in mean to 1e-12; the accountant (which reads them) brackets the exact lattice
    sum of 40 draws."""
    import dataclasses
    from prvgui.accounting.numerics import discretize as D
    mech = DiscreteGaussian(4.5)
    prv = mech.prv()
    lat = prv.lattice
    scanned = dataclasses.replace(prv, lattice=dataclasses.replace(lat, fns=Functions(lat.pmf, lat.cdf, lat.sf)))
    assert D.LatticeTails.of(scanned, 1e-3, 1e-12) is None and D.LatticeTails.of(prv, 1e-3, 1e-12) is not None
    tiers = ((1e-3, 3), (1e-6, 5))
    for h, tau in ((2e-3, 1e-14), (7e-4, 1e-25)):
        read = D.discretize(prv, h, tau, tiers=tiers)
        scan = D.discretize(scanned, h, tau, tiers=tiers)
        for row in (read, scan):
            assert row.tail_prob <= 2 * tau
            assert row.pmf.sum() == pytest.approx(1.0, abs=1e-12)
        assert read.mean() == pytest.approx(scan.mean(), abs=1e-12)
    check_bracket(mech, 40, dg_loss(4.5, 1, 40), [], [1e-3, 1e-8])


def test_tables_built_together_are_the_tables_built_alone(monkeypatch):
    """_near_tables (many sigmas' weights as the rows of one array, in chunks of alike sigmas)
    gives bit for bit the tables _near_table builds one at a time, for sigmas whose tables stop
    short of J and those that take the whole table, repeated ones, and chunks cut by the array
    budget; DiscreteGaussian.prvs gives the PRVs prv() gives (the same cdf, sf, pmf and masses)."""
    from prvgui.accounting.kinds import discrete_gaussian as dg
    monkeypatch.setattr(dg, "BATCH_WEIGHTS", 4000)
    sigmas = [0.02, 0.3, 2.0, 9.5, 9.5, 10.1, 57.0, 60.0, 61.5, 140.0, 3.0e3, 7.7]
    together = dict(dg._near_tables(sigmas))
    assert sorted(together) == list(range(len(sigmas)))
    for sigma, (t, m_near) in zip(sigmas, (together[i] for i in range(len(sigmas)))):
        alone, m_alone = dg._near_table(sigma)
        assert m_near == m_alone and t.z == alone.z and t.left_out == alone.left_out
        assert t.sigma2 == alone.sigma2 and np.array_equal(t.s, alone.s)
    mechs = [DiscreteGaussian(s, d) for s, d in zip(sigmas, [1, 2, 1, 1, 3, 1, 1, 2, 1, 1, 1, 5])]
    mechs.append(DiscreteGaussian(1e-9))  # (blatant: a point mass at +inf)
    for m, p in zip(mechs, DiscreteGaussian.prvs(mechs, "add")):
        q = m.prv("add")
        assert (p.inf_mass, p.mean, p.mean_err, p.atoms) == (q.inf_mass, q.mean, q.mean_err, q.atoms)
        if q.cont is not None:
            i = np.arange(q.lattice.lo - 2, q.lattice.hi + 2)[::max(1, (q.lattice.hi - q.lattice.lo) // 500)]
            for f in ("cdf", "sf", "pmf"):
                assert np.array_equal(getattr(p.lattice, f)(i), getattr(q.lattice, f)(i)), (m, f)
    with pytest.raises(ValueError, match="order"):
        DiscreteGaussian.prvs(mechs[:2], "sideways")


@pytest.mark.parametrize("mech", MECHS[:2] + MECHS[4:6], ids=repr)
def test_the_prv_delta_is_the_lattice_sum(mech):
    loss = dg_loss(mech.sigma, mech.sensitivity, 1) if isinstance(mech, DiscreteGaussian) \
        else dl_loss(mech.scale, mech.sensitivity, 1)
    for eps in (0.0, 0.3, 1.7):
        assert mech.prv().delta(eps) == pytest.approx(float(Exact(loss).delta(eps)), rel=1e-13, abs=1e-300)


def test_exact_exponentials_and_tail_sums():
    rng = np.random.default_rng(3)
    j = rng.integers(0, 3000, 200).astype(float)
    sigma = 81.37
    from prvgui.accounting.pairs.lattice import two_prod
    hi, lo = two_prod(sigma, sigma)
    got = exp_neg_quotient(j * j, 2 * hi, 2 * lo)
    for jj, g in zip(j, got):
        want = mp.exp(-mp.mpf(jj) ** 2 / (2 * mp.mpf(sigma) ** 2))
        assert abs(g / want - 1) <= 4 * U
    w = 10.0 ** rng.uniform(-300, 0, 5000)
    s_hi, _ = suffix_sums(w)
    exact = [mp.mpf(0)] * (w.size + 1)
    for i in range(w.size - 1, -1, -1):
        exact[i] = exact[i + 1] + mp.mpf(w[i])
    assert s_hi[-1] == 0 and max(abs(s_hi[i] / exact[i] - 1) for i in range(w.size)) <= U


# ---------------------------------------------------------------- comparison accountants
def renyi(loss, a):
    """D_a = log E_P[e^{(a-1) Y}] / (a - 1) from the one-run lattice."""
    losses, masses, _ = loss
    return mp.log(mp.fsum(m * mp.exp((a - 1) * y) for y, m in zip(losses, masses))) / (a - 1)


def test_rdp_bounds_hold_and_the_discrete_laplace_one_is_exact():
    orders = np.array([1.5, 2.0, 5.0, 20.0, 64.0])
    for sigma, d in [(0.7, 1), (2.0, 3)]:
        got, loss = DiscreteGaussian(sigma, d).rdp(orders), dg_loss(sigma, d, 1)
        for a, g in zip(orders, got):
            assert g >= float(renyi(loss, mp.mpf(a)))  # the zCDP bound of CKS 2020
            assert g == pytest.approx(a * d * d / (2 * sigma * sigma), rel=1e-15)
    for scale, d in [(1.0, 1), (2.0, 3), (0.4, 6), (30.0, 5)]:
        mech, loss = DiscreteLaplace(scale, d), dl_loss(scale, d, 1)
        got = mech.rdp(orders)
        assert np.all(got <= rr_rdp(d / scale, orders))
        for a, g in zip(orders, got):
            ex = float(renyi(loss, mp.mpf(a)))
            assert ex <= g <= ex * (1 + 1e-9) + 1e-15, (scale, d, a, g, ex)
    assert np.all(np.isfinite(DiscreteLaplace(3.0, 4).rdp(ORDERS)))


def test_gdp_is_the_moment_matching_approximation():
    for sigma, d in [(0.6, 1), (1.5, 2)]:
        off, p, _ = dg_noise(sigma)
        var = mp.fsum(v * (y + off) ** 2 for y, v in enumerate(p))
        assert DiscreteGaussian(sigma, d).gdp_mu2() == pytest.approx(float(d * d / var), rel=1e-12)
        assert DiscreteGaussian(sigma, d).gdp_mu2() > (d / sigma) ** 2  # not the Gaussian's mu
    assert DiscreteLaplace(0.8).gdp_mu2() == pytest.approx(randomized_response_mu2(1.25), rel=1e-12)
    for scale, d in [(3.0, 5), (1e9, 1), (1e6, 3)]:  # eps0 = 1e-9: the closed forms' cancellation
        losses, masses, _ = dl_loss(scale, d, 1)
        mean = mp.fsum(m * y for y, m in zip(losses, masses))
        var = mp.fsum(m * (y - mean) ** 2 for y, m in zip(losses, masses))
        mech = DiscreteLaplace(scale, d)
        assert mech.prv().mean == pytest.approx(float(mean), rel=1e-14)
        assert mech.gdp_mu2() == pytest.approx(float(4 * mean ** 2 / var), rel=1e-12)
    assert DiscreteLaplace(2.0, 3).eps_delta() == (1.5, 0.0) and DiscreteGaussian(1.0).eps_delta() is None
    assert DiscreteGaussian(1.0).gaussian_mu() is None  # never the continuous Gaussian's closed form


def test_calibration_never_overshoots_the_exact_epsilon():
    """The noise calibration returns for a target epsilon keeps the exact epsilon (lattice sums)
    below the target."""
    from prvgui.accounting.queries.calibrate import calibrate
    cal = calibrate([Row(DiscreteGaussian(1.0), 5)], 0, "sigma", 2.0, 1e-6)
    assert cal.epsilon.upper <= 2.0 and not cal.at_bound
    assert float(Exact(dg_loss(cal.value, 1, 5)).epsilon(1e-6)) <= 2.0
    cal = calibrate([Row(DiscreteLaplace(1.0, 2), 5)], 0, "scale", 2.0, 1e-6)
    assert cal.epsilon.upper <= 2.0 and float(Exact(dl_loss(cal.value, 2, 5)).epsilon(1e-6)) <= 2.0


# ---------------------------------------------------------------- dp-accounting's PLDs
def dpa_pair(make, k):
    """dp-accounting's (optimistic, pessimistic) PLDs of k runs."""
    out = []
    for pessimistic in (False, True):
        p = make(pessimistic)
        out.append(p.self_compose(k) if k > 1 else p)
    return out


def check_against_dpa(mech, k, make, vdi, eps_list, delta_list):
    """dp-accounting's optimistic and pessimistic values bracket the truth from their side (its
    losses rounded down / up to a grid of width vdi), ours from ours: the two brackets must meet.
    Its pessimistic epsilon lies within k * vdi of the truth (each run's loss moves by at most
    vdi), so our estimate is within our bracket's width plus k * vdi of it. Returns the largest
    |our estimate - its pessimistic value|."""
    opt, pess = dpa_pair(make, k)
    acc, worst = Accountant([Row(mech, k)], 0.01, closed_forms=False), 0.0
    for eps in eps_list:
        b, lo, hi = acc.delta(eps), opt.get_delta_for_epsilon(eps), pess.get_delta_for_epsilon(eps)
        assert b.lower <= hi + 1e-12 and lo <= b.upper + 1e-12, (eps, b, lo, hi)
        worst = max(worst, abs(b.estimate - hi))
    for delta in delta_list:
        b, lo, hi = acc.epsilon(delta), opt.get_epsilon_for_delta(delta), pess.get_epsilon_for_delta(delta)
        assert b.lower <= hi + 1e-12 and lo <= b.upper + 1e-12, (delta, b, lo, hi)
        assert abs(b.estimate - hi) <= (b.upper - b.lower) + k * vdi + 1e-9
        worst = max(worst, abs(b.estimate - hi))
    return worst


@pytest.mark.parametrize("sigma,d,k,vdi", [(1.0, 1, 1, 1e-4), (3.0, 2, 4, 1e-4),
                                           pytest.param(2.0, 1, 10, 1e-4, marks=pytest.mark.slow),
                                           pytest.param(0.7, 2, 5, 1e-4, marks=pytest.mark.slow)])
def test_discrete_gaussian_meets_dp_accounting(sigma, d, k, vdi):
    from dp_accounting.pld import privacy_loss_distribution as pld
    make = lambda pess: pld.from_discrete_gaussian_mechanism(  # noqa: E731
        sigma, sensitivity=d, pessimistic_estimate=pess, value_discretization_interval=vdi)
    check_against_dpa(DiscreteGaussian(sigma, d), k, make, vdi, [0.0, 0.5, 2.0], [1e-3, 1e-6, 1e-9])


@pytest.mark.parametrize("scale,d,k,vdi", [(1.0, 1, 5, 1e-4), (2.0, 3, 10, 1e-4), (10.0, 7, 20, 1e-4),
                                           (0.5, 5, 3, 1e-4)])
def test_discrete_laplace_meets_dp_accounting(scale, d, k, vdi):
    from dp_accounting.pld import privacy_loss_distribution as pld
    make = lambda pess: pld.from_discrete_laplace_mechanism(  # noqa: E731
        1.0 / scale, sensitivity=d, pessimistic_estimate=pess, value_discretization_interval=vdi)
    check_against_dpa(DiscreteLaplace(scale, d), k, make, vdi, [0.0, 1.0, 3.0], [1e-3, 1e-6])


# ---------------------------------------------------------------- input, files, command line
@pytest.mark.parametrize("kind,params,message", [
    ("discrete_gaussian", {"sigma": 0.0}, "Noise σ must be greater than 0 and at most 100000; you typed 0"),
    ("discrete_gaussian", {"sigma": -1.0}, "Noise σ must be greater than 0 and at most 100000; you typed -1"),
    ("discrete_gaussian", {"sigma": 2 * MAX_SIGMA}, "Noise σ must be greater than 0 and at most 100000"),
    ("discrete_gaussian", {"sigma": "1"}, 'Noise σ must be a number (greater than 0 and at most 100000), not text'),
    ("discrete_gaussian", {"sigma": math.nan}, "you typed nan"),
    ("discrete_gaussian", {"sigma": 1.0, "sensitivity": 1.5}, "Sensitivity Δ must be a whole number; you typed 1.5"),
    ("discrete_gaussian", {"sigma": 1.0, "sensitivity": 0}, "Sensitivity Δ must be between 1 and 1e12; you typed 0"),
    ("discrete_gaussian", {"sigma": 1.0, "sensitivity": "two"}, 'Sensitivity Δ must be a number (between 1 and 1e12)'),
    ("discrete_laplace", {"scale": 0.0}, "Noise scale t must be greater than 0 and at most 1e12; you typed 0"),
    ("discrete_laplace", {"scale": -2.0}, "Noise scale t must be greater than 0 and at most 1e12; you typed -2"),
    ("discrete_laplace", {"scale": 1.0, "sensitivity": 2.5}, "Sensitivity Δ must be a whole number; you typed 2.5"),
    ("discrete_laplace", {"scale": 1.0, "sensitivity": -1}, "Sensitivity Δ must be between 1 and 1e12; you typed -1"),
    ("discrete_laplace", {"scale": "x"}, 'Noise scale t must be a number (greater than 0 and at most 1e12)'),
    ("discrete_laplace", {"sensitivity": 2}, "Noise scale t must be a number (greater than 0 and at most 1e12); it is missing"),
])
def test_bad_parameters_are_named(kind, params, message):
    with pytest.raises(ValueError) as err:
        mechanism_from_params(kind, params)
    assert message in str(err.value)
    text = json.dumps({"format": "prvgui.composition", "version": 2,
                       "mechanisms": [{"kind": kind, **params, "count": 2}]}) if isinstance(
        params.get("sigma", params.get("scale", 1.0)), (int, float)) and not any(
        isinstance(v, float) and math.isnan(v) for v in params.values()) else None
    if text is not None:
        with pytest.raises(FileFormatError) as err:
            loads_composition(text)
        assert str(err.value).startswith("row 1 (") and message.split(";")[0] in str(err.value)


def test_integral_floats_are_whole_numbers_and_stay_integers():
    m = mechanism_from_params("discrete_gaussian", {"sigma": 2.0, "sensitivity": 3.0})
    assert m == DiscreteGaussian(2.0, 3) and isinstance(m.sensitivity, int)


def test_the_command_line_takes_both_kinds_with_a_relation(tmp_path):
    path = tmp_path / "discrete.json"
    path.write_text(json.dumps({
        "format": "prvgui.composition", "version": 2, "neighbouring": "replace_one", "group_size": 2,
        "mechanisms": [{"kind": "discrete_gaussian", "sigma": 4.0, "count": 3, "label": "counts"},
                       {"kind": "discrete_laplace", "scale": 8.0, "sensitivity": 2, "count": 2}]}))
    out = subprocess.run([sys.executable, "-m", "prvgui", "epsilon", str(path), "--delta", "1e-6", "--json"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)["epsilon"]
    rows = [Row(DiscreteGaussian(4.0), 3), Row(DiscreteLaplace(8.0, 2), 2)]
    assert got == Accountant(rows, neighbouring="replace_one", group_size=2).epsilon(1e-6).as_dict()
    # the relation moves the sensitivities by 4: the exact sum of the two lattices
    g, lap = dg_loss(4.0, 4, 3), dl_loss(8.0, 8, 2)
    losses = [y1 + y2 for y1 in g[0] for y2 in lap[0]]
    masses = [m1 * m2 for m1 in g[1] for m2 in lap[1]]
    ex = float(Exact((losses, masses, 0)).epsilon(1e-6))
    assert got["lower"] <= ex <= got["upper"]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"format": "prvgui.composition", "version": 2,
                               "mechanisms": [{"kind": "discrete_laplace", "scale": 1.0, "sensitivity": 1.5}]}))
    out = subprocess.run([sys.executable, "-m", "prvgui", "epsilon", str(bad), "--json"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode != 0 and "Sensitivity Δ must be a whole number" in out.stderr


@pytest.mark.slow
def test_the_largest_sigma_builds_and_brackets_the_continuous_limit():
    """sigma = 1e5 (3.7 million lattice points): the bracket holds the exact single-run delta,
    which for Delta / sigma^2 = 1e-7 agrees with the continuous Gaussian's to ~1e-12."""
    from references import gaussian_delta
    b = Accountant([Row(DiscreteGaussian(MAX_SIGMA, 30000), 1)], 0.01).delta(0.5)
    assert b.lower - 1e-9 <= gaussian_delta(0.3, 0.5) <= b.upper + 1e-9


def test_extreme_parameters_give_sound_answers():
    """Noise so small that the loss is one huge value (or overflows): no crash, sound brackets."""
    dead = DiscreteGaussian(1e-200)  # Delta^2 / (2 sigma^2) overflows: not private at all
    assert dead.is_blatant() and Accountant([Row(dead, 2)]).epsilon(1e-6).lower == math.inf
    # sigma = 0.01: Y = 5000 but with probability 2e^-5000; three runs: epsilon = 15000 + log(1 - delta)
    b = Accountant([Row(DiscreteGaussian(0.01), 3)]).epsilon(1e-6)
    assert b.lower <= 15000 + math.log1p(-1e-6) <= b.upper
    m = DiscreteLaplace(1e-305)  # eps0 = 1e305: randomized response's closed form
    b = Accountant([Row(m, 2)]).epsilon(1e-6)
    assert b.lower <= 2e305 <= b.upper
    assert np.all(m.rdp(ORDERS) == 1e305) and m.gdp_mu2() == math.inf
    assert DiscreteLaplace(1e-3, 5).prv().inf_mass > 0  # e^-1000 left out, at +infinity
