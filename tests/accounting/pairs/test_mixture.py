"""The mixture pairs (mixture.py, mixture_laplace.py, mixture_rdp.py) against independent references.

References: mpmath at 50 digits straight from the mixture densities (class Pair below; no
prvgui code), the existing Poisson-subsampled kinds at k = 1, dp-accounting 0.6.0 (its exact
MixtureGaussianPrivacyLoss / GaussianPrivacyLoss deltas and its discretised PLDs, whose
pessimistic and optimistic estimates bracket the truth), and the certified pipeline end to end.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import mpmath as mp
import numpy as np
import pytest

from prvgui.accounting import Accountant, Row, SubsampledGaussian, SubsampledLaplace
from prvgui.accounting.pairs import mixture as mx
from prvgui.accounting.pairs import mixture_laplace as ml
from prvgui.accounting.numerics.discretize import CDF_ULPS, discretize
from prvgui.accounting.kinds.base import Mechanism, Param, param
from prvgui.accounting.kinds.subsampled_gaussian import subsampled_gaussian_prv
from prvgui.accounting.kinds.subsampled_laplace import subsampled_laplace_prv
from prvgui.accounting.pairs.mixture_rdp import mixture_rdp
from prvgui.accounting.pairs.prv import TRIVIAL

U = 2.0 ** -53
DPS = 50


# ---------------------------------------------------------------- the mpmath reference
class Pair:
    """(first, second) = (sum_i a_i B(m_i), sum_i b_i B(n_i)), B = N(., s^2) or Lap(., 1/e), at
    50 digits. The PRV is log(first/second)(X), X ~ first."""

    def __init__(self, noise: str, param_: float, q: float, k: int, pair: str):
        mp.mp.dps = DPS
        self.gauss = noise == "gaussian"
        self.sc = mp.mpf(param_)
        qm = mp.mpf(q)
        w = [mp.binomial(k, j) * qm ** j * (1 - qm) ** (k - j) for j in range(k + 1)]
        p = [(w[j], mp.mpf(j)) for j in range(k + 1) if w[j] > 0]
        m = [(mp.mpf(1), mp.mpf(0))] if pair in ("remove", "add") else [(wj, -x) for wj, x in p]
        self.first, self.second = {"remove": (p, m), "add": (m, p), "replace": (p, m),
                                   "replace_swapped": (m, p)}[pair]
        locs = [x for _, x in p + m]
        # the loss is strictly monotone on (lo, hi) (constant beyond it for Laplace): increasing
        # in x when the first distribution is the one shifted to the right
        if self.gauss:
            self.lo, self.hi = min(locs) - 60 * self.sc - 1, max(locs) + 60 * self.sc + 1
        else:
            self.lo, self.hi = min(locs), max(locs)
        self.locs = sorted(set(locs))
        self.inc = pair in ("remove", "replace")

    def _pdf(self, comps, x):
        if self.gauss:
            return mp.fsum(w * mp.npdf(x, m, self.sc) for w, m in comps)
        return mp.fsum(w * self.sc / 2 * mp.exp(-self.sc * abs(x - m)) for w, m in comps)

    def _cdf1(self, m, x):  # P(B(m) <= x)
        if self.gauss:
            return mp.ncdf((x - m) / self.sc)
        return mp.exp(self.sc * (x - m)) / 2 if x <= m else 1 - mp.exp(-self.sc * (x - m)) / 2

    def between(self, a, b, comps=None):
        """P(a < X <= b) for X ~ first, each term without cancellation."""
        if b <= a:
            return mp.mpf(0)
        comps = self.first if comps is None else comps
        return mp.fsum(w * (self._cdf1(m, b) - self._cdf1(m, a) if b <= m else
                            self._cdf1(-m, -a) - self._cdf1(-m, -b)) for w, m in comps)

    def loss(self, x):
        x = mp.mpf(x)
        return mp.log(self._pdf(self.first, x)) - mp.log(self._pdf(self.second, x))

    def x_of(self, t, x0=None):
        """The root of loss(x) = t in [lo, hi] (an end when t is outside the loss's range
        there): bracketed near x0 when given, then regula falsi (Illinois) with bisection."""
        t = mp.mpf(t)
        lo, hi = self.lo, self.hi
        f = (lambda x: self.loss(x) - t) if self.inc else (lambda x: t - self.loss(x))
        if f(lo) >= 0:
            return lo
        if f(hi) <= 0:
            return hi
        if x0 is not None:  # a close start: a narrow bracket
            x0 = mp.mpf(x0)
            for d in (mp.mpf(10) ** -13, mp.mpf(10) ** -9, mp.mpf(10) ** -5, mp.mpf(10) ** -2):
                a, b = max(lo, x0 - d * (1 + abs(x0))), min(hi, x0 + d * (1 + abs(x0)))
                if f(a) < 0 < f(b):
                    lo, hi = a, b
                    break
        # Illinois (regula falsi, halving the weight of an end that stays), bisection every
        # fourth step, to 45 digits
        flo, fhi, side = f(lo), f(hi), 0
        for i in range(400):
            if hi - lo <= mp.mpf(10) ** -45 * (1 + abs(lo)):
                break
            x = (lo + hi) / 2 if i % 4 == 3 else (lo * fhi - hi * flo) / (fhi - flo)
            fx = f(x)
            if fx == 0:
                return x
            if fx < 0:
                lo, flo = x, fx
                fhi, side = (fhi / 2 if side == -1 else fhi), -1
            else:
                hi, fhi = x, fx
                flo, side = (flo / 2 if side == 1 else flo), 1
        return (lo + hi) / 2

    def hockey(self, eps):
        """delta(eps) = int (p1 - e^eps p2)_+ dx by mp.quad over the densities (split where
        the integrand can bend: the crossing point and the components' locations; 20 digits)."""
        ee = mp.exp(eps)
        pts = sorted(set(self.locs) | {self.x_of(eps)})

        def f(x):
            return max(self._pdf(self.first, x) - ee * self._pdf(self.second, x), 0)
        with mp.workdps(20):
            return mp.quad(f, [-mp.inf] + pts + [mp.inf])

    def kl(self):
        """E_first[log(first/second)] by mp.quad."""
        with mp.workdps(20):
            return mp.quad(lambda x: self._pdf(self.first, x) * self.loss(x), [-mp.inf] + self.locs + [mp.inf])

    def renyi_integral(self, a):
        pts = sorted(set(self.locs) | {a * m for _, m in self.first})
        with mp.workdps(30):
            return mp.quad(lambda x: self._pdf(self.first, x) ** a * self._pdf(self.second, x) ** (1 - a),
                           [-mp.inf] + pts + [mp.inf])


def build(noise, param_, q, k, pair):
    if noise == "gaussian":
        return mx.replace_gaussian_prv(param_, q, k) if pair.startswith("replace") else \
            mx.group_gaussian_prv(param_, q, k, pair)
    return ml.replace_laplace_prv(param_, q, k) if pair.startswith("replace") else \
        ml.group_laplace_prv(param_, q, k, pair)


# ---------------------------------------------------------------- the ulp contract
def _x_samples(ref: Pair, n: int) -> list:
    a, b = float(ref.locs[0]), float(ref.locs[-1])
    if ref.gauss:
        s = float(ref.sc)
        xs = np.concatenate([np.linspace(a - 37 * s, b + 37 * s, n), np.linspace(a - 1, b + 1, n // 2)])
    else:
        g = np.geomspace(1e-12, 0.5, n // 4) * (b - a)
        xs = np.concatenate([np.linspace(a, b, n)[1:-1], a + g, b - g])
    return sorted(set(xs.tolist()))


def _split(fast: list, slow: list) -> list:
    """Parameters: ``fast`` run by default, ``slow`` only with -m slow (pytest.ini: not slow)."""
    wrap = (lambda c: pytest.param(*c, marks=pytest.mark.slow)) if fast and isinstance(fast[0], tuple) and \
        not isinstance(fast[0][0], str) else (lambda c: pytest.param(c, marks=pytest.mark.slow))
    return fast + [wrap(c) for c in slow if c not in fast]


#: every (noise, parameter, q, k, pair) of the brief's grid, and a few beyond it
GRID = [("gaussian", s, q, k, o) for s in (0.5, 1.0, 5.0) for q in (0.001, 0.1, 0.9) for k in (1, 2, 5)
        for o in ("remove", "add", "replace")]
GRID += [("laplace", e, q, k, o) for e in (0.1, 1.0, 5.0) for q in (0.001, 0.1, 0.9) for k in (1, 2, 5)
         for o in ("remove", "add", "replace")]
BEYOND = [("gaussian", 0.1, q, k, o) for q in (1e-6, 0.5) for k in (2, 5) for o in ("remove", "add", "replace")]
BEYOND += [("laplace", 20.0, q, k, o) for q in (1e-6, 0.5) for k in (2, 5) for o in ("remove", "add", "replace")]
BEYOND += [("gaussian", 1.0, 0.1, 2, "replace_swapped"), ("laplace", 1.0, 0.1, 3, "replace_swapped"),
           ("gaussian", 0.5, 0.9, 5, "replace_swapped")]
CONTRACT = [("gaussian", 0.5, 0.001, 5, "remove"), ("gaussian", 1.0, 0.1, 2, "add"),
            ("gaussian", 5.0, 0.9, 5, "replace"), ("gaussian", 0.5, 0.9, 2, "replace_swapped"),
            ("laplace", 0.1, 0.001, 5, "remove"), ("laplace", 1.0, 0.1, 2, "add"),
            ("laplace", 5.0, 0.9, 5, "replace"), ("laplace", 1.0, 0.1, 3, "replace_swapped")]


def _check_contract(noise, param_, q, k, pair, n):
    """discretize trusts the cdf to an absolute CDF_ULPS ulps of the part's mass and the sf to a
    relative CDF_ULPS ulps, each at a point within 64 ulps (1 + |t|) of t (test_prv_contract).
    Here the cdf is held to the relative bound as well in the left tail (below half the mass).
    The points: t = fl(l(x)) for x spread over the support, so that both tails are reached."""
    ref, prv = Pair(noise, param_, q, k, pair), build(noise, param_, q, k, pair)
    c = prv.cont
    tol = CDF_ULPS * U
    for x in _x_samples(ref, n):
        t = float(ref.loss(x))
        if not c.lo < t < c.hi:
            continue
        dt = 128 * U * (1 + abs(t))
        xm, xp = ref.x_of(t - dt, x), ref.x_of(t + dt, x)
        # exact tails at t - dt and t + dt: (cdf_a, cdf_b) = (F(t - dt), F(t + dt)),
        # (sf_a, sf_b) = (S(t + dt), S(t - dt)); Y <= t is X <= x_t when the loss increases
        if ref.inc:
            cdf_a, cdf_b = ref.between(ref.lo, xm), ref.between(ref.lo, xp)
            sf_a, sf_b = ref.between(xp, ref.hi), ref.between(xm, ref.hi)
        else:
            cdf_a, cdf_b = ref.between(xm, ref.hi), ref.between(xp, ref.hi)
            sf_a, sf_b = ref.between(ref.lo, xp), ref.between(ref.lo, xm)
        v = float(c.cdf(np.array([t]))[0])
        if cdf_b >= mp.mpf(1e-300):
            if v > c.mass / 2:  # absolute, in units of the part's mass
                assert cdf_a - tol * c.mass <= v <= cdf_b + tol * c.mass, ("cdf", t, v, cdf_a, cdf_b)
            else:  # relative in the left tail
                assert cdf_a * (1 - tol) <= v <= cdf_b * (1 + tol), ("cdf", t, v, cdf_a, cdf_b)
        v = float(c.sf(np.array([t]))[0])
        if sf_b >= mp.mpf(1e-300):
            assert sf_a * (1 - tol) <= v <= sf_b * (1 + tol), ("sf", t, v, sf_a, sf_b)


@pytest.mark.parametrize("case", _split(CONTRACT, GRID + BEYOND), ids=str)
def test_cdf_and_sf_hold_the_accuracy_discretize_assumes(case):
    _check_contract(*case, 16)


@pytest.mark.parametrize("case", [("gaussian", 0.7, 0.05, 3, "remove"), ("gaussian", 0.7, 0.05, 3, "add"),
                                  ("gaussian", 0.7, 0.05, 3, "replace"), ("laplace", 2.0, 0.3, 4, "remove"),
                                  ("laplace", 2.0, 0.3, 4, "add"), ("laplace", 2.0, 0.3, 4, "replace")], ids=str)
def test_long_and_short_arrays_agree_bitwise(case):
    """The same values whatever the array length (the pipeline calls the tails on hundreds of
    thousands of cell edges, and its searches on a few points at a time)."""
    c = build(*case).cont
    lo, hi = c.lower_cut(1e-250), c.upper_cut(1e-250)
    t = np.linspace(lo, hi, 70001)
    pick = np.arange(0, t.size, 97)
    for f in (c.cdf, c.sf):
        long = f(t)
        assert np.array_equal(long[pick], np.concatenate([f(t[pick][i:i + 7]) for i in range(0, pick.size, 7)]))
        assert np.array_equal(long[pick[::10]], np.array([f(np.array([v]))[0] for v in t[pick[::10]]]))
        assert np.all(np.diff(long) * (1 if f is c.cdf else -1) >= 0)


# ---------------------------------------------------------------- delta(eps) and the means
def _delta_of(prv, ref: Pair, eps: float) -> float:
    """delta(eps) = sum over atoms + int_eps^hi e^{eps - y} sf(y) dy from the PRV's own tails,
    integrated adaptively (scipy quad) with the loss's values at the components' locations as
    break points (the PRV's density bends there; Laplace: kinks). PRV.delta's fixed 2048
    panels cannot resolve the nearly vertical steps of some of these PRVs (replace-one at
    small q: Y is nearly 0 with probability (1-q)^k), so it is only checked loosely below."""
    from scipy import integrate
    total = prv.inf_mass + sum(m * -math.expm1(eps - loc) for loc, m in prv.atoms if loc > eps)
    c = prv.cont
    a, b = max(eps, c.lo), (c.hi if math.isfinite(c.hi) else c.upper_cut(1e-300))
    if a >= b:
        return total
    xs = [x + d for x in ref.locs for d in (-0.5, 0.0, 0.5)]
    pts = sorted({float(ref.loss(x)) for x in xs} | {0.0, c.centre})
    pts = [p for p in pts if a < p < b]
    val, _ = integrate.quad(lambda y: math.exp(eps - y) * float(c.sf(np.array([y]))[0]), a, b,
                            points=pts or None, limit=2000, epsabs=1e-17, epsrel=1e-12)
    return total + val


DELTA_CASES = [("gaussian", 0.5, 0.001, 5, "remove"), ("gaussian", 1.0, 0.9, 1, "add"),
               ("gaussian", 0.5, 0.1, 2, "replace"), ("laplace", 5.0, 0.001, 5, "remove"),
               ("laplace", 1.0, 0.5, 2, "add"), ("laplace", 0.1, 0.9, 5, "replace")]


@pytest.mark.parametrize("case", _split(DELTA_CASES, GRID[::2]), ids=str)
def test_delta_is_the_hockey_stick_divergence_of_the_densities(case):
    """Against int (p - e^eps q)_+ dx by mp.quad straight from the densities (which also checks
    that the pairs' likelihood ratios are monotone: the PRVs assume it)."""
    ref, prv = Pair(*case), build(*case)
    mean = float(ref.kl())
    for eps in sorted({0.0, mean, 1.5}):
        exact = float(ref.hockey(eps))
        assert _delta_of(prv, ref, eps) == pytest.approx(exact, rel=1e-9, abs=1e-15), eps
        assert prv.delta(eps) == pytest.approx(exact, rel=1e-3, abs=1e-12), eps


@pytest.mark.parametrize("case", _split(DELTA_CASES, GRID[1::2]), ids=str)
def test_mean_is_the_kl_divergence(case):
    ref, prv = Pair(*case), build(*case)
    exact = float(ref.kl())
    assert abs(prv.mean - exact) <= prv.mean_err + 1e-12 * exact, (prv.mean, exact, prv.mean_err)
    assert 0 < prv.mean_err <= 1e-10 + 1e-9 * exact


@pytest.mark.parametrize("case", DELTA_CASES, ids=str)
def test_masses_add_up_and_discretisation_keeps_the_mean(case):
    prv = build(*case)
    c = prv.cont
    assert abs(prv.inf_mass + sum(m for _, m in prv.atoms) + c.mass - 1) < 1e-13
    t = np.linspace(max(c.lo, -30), min(c.hi, 30), 101)
    assert np.allclose(c.cdf(t) + c.sf(t), c.mass, rtol=0, atol=1e-14)
    d = discretize(prv, 1e-3, 1e-16)
    assert abs(d.mean() - prv.mean) < 1e-9
    # E[e^{-Y}] = 1: the pair's second density is positive wherever the first is
    assert float(np.sum(d.pmf * np.exp(-d.values))) == pytest.approx(1.0, abs=1e-3)


# ---------------------------------------------------------------- k = 1: the subsampled kinds
def _same_tails(mine, theirs, t):
    """Both PRVs' tails agree up to the contract: our value lies in the band their tail spans
    over [t - dt, t + dt] (dt = 64 ulps (1 + |t|) plus the bounds' ulps), widened by 64 ulps
    relative (the sf; the cdf left of the centre) or of the mass (the cdf right of it)."""
    dt = 128 * U * (1 + np.abs(t) + abs(theirs.lo if math.isfinite(theirs.lo) else 0.0)
                    + abs(theirs.hi if math.isfinite(theirs.hi) else 0.0))
    tol = CDF_ULPS * U
    cdf, lo, hi = mine.cdf(t), theirs.cdf(t - dt), theirs.cdf(t + dt)
    slack = np.where(t > theirs.centre, tol * theirs.mass, tol * hi)
    assert np.all((lo - slack <= cdf) & (cdf <= hi + slack))
    sf, lo, hi = mine.sf(t), theirs.sf(t + dt), theirs.sf(t - dt)
    assert np.all((lo * (1 - tol) <= sf) & (sf <= hi * (1 + tol)))


@pytest.mark.parametrize("s,q", [(0.5, 0.001), (1.0, 0.1), (5.0, 0.9), (0.8, 0.01), (2.0, 1e-6)])
@pytest.mark.parametrize("order", ["remove", "add"])
def test_group_of_one_is_the_subsampled_gaussian(s, q, order):
    a, b = mx.group_gaussian_prv(s, q, 1, order), subsampled_gaussian_prv(s, q, order)
    ca, cb = a.cont, b.cont
    assert (ca.lo, ca.hi, ca.mass) == pytest.approx((cb.lo, cb.hi, cb.mass), rel=1e-15)
    assert a.mean == pytest.approx(b.mean, rel=1e-12) and a.atoms == b.atoms == ()
    t = np.linspace(cb.lower_cut(1e-280), cb.upper_cut(1e-280), 5001)
    _same_tails(ca, cb, t[(t > cb.lo) & (t < cb.hi)])
    for eps in (0.0, 0.1, 1.0, 3.0):
        assert a.delta(eps) == pytest.approx(b.delta(eps), rel=1e-10, abs=1e-15)


@pytest.mark.parametrize("e,q", [(0.1, 0.001), (1.0, 0.1), (5.0, 0.9), (1.0, 0.5), (0.01, 0.3)])
@pytest.mark.parametrize("order", ["remove", "add"])
def test_group_of_one_is_the_subsampled_laplace(e, q, order):
    a, b = ml.group_laplace_prv(e, q, 1, order), subsampled_laplace_prv(e, q, order)
    for (la, ma), (lb, mb) in zip(sorted(a.atoms), sorted(b.atoms)):
        assert la == pytest.approx(lb, rel=4 * U) and ma == pytest.approx(mb, rel=8 * U)
    assert a.cont.mass == pytest.approx(b.cont.mass, rel=8 * U)
    assert a.mean == pytest.approx(b.mean, rel=1e-11)
    _same_tails(a.cont, b.cont, np.linspace(b.cont.lo, b.cont.hi, 2001)[1:-1])
    for eps in (0.0, 0.01, 0.1, 1.0):
        assert a.delta(eps) == pytest.approx(b.delta(eps), rel=1e-10, abs=1e-15)


# ---------------------------------------------------------------- dp-accounting 0.6.0
def _weights(q, k):
    return [math.comb(k, j) * q ** j * (1 - q) ** (k - j) for j in range(k + 1)]


@pytest.mark.parametrize("s,q,k", _split([(1.0, 0.1, 2), (1.0, 0.01, 3)], [(0.5, 0.001, 5), (5.0, 0.9, 5)]))
def test_group_gaussian_matches_dp_accounting_mixture_of_gaussians(s, q, k):
    """dp-accounting's MixtureGaussianPrivacyLoss with sensitivities 0..k and the binomial
    probabilities: REMOVE is sum_j w_j N(-j) vs N(0) (ours reflected), ADD is N(0) vs
    sum_j w_j N(j) (ours). Its deltas are exact (inverse loss and cdfs)."""
    plm = pytest.importorskip("dp_accounting.pld.privacy_loss_mechanism")
    eps = [0.0, 0.05, 0.3, 1.0, 2.5]
    for order, adj in (("remove", plm.AdjacencyType.REMOVE), ("add", plm.AdjacencyType.ADD)):
        theirs = plm.MixtureGaussianPrivacyLoss(s, list(range(k + 1)), _weights(q, k),
                                                adjacency_type=adj).get_delta_for_epsilon(eps)
        prv, ref = mx.group_gaussian_prv(s, q, k, order), Pair("gaussian", s, q, k, order)
        for e, d in zip(eps, theirs):
            assert _delta_of(prv, ref, e) == pytest.approx(d, rel=1e-7, abs=1e-13), (order, e)


@pytest.mark.parametrize("s,q", _split([(5.0, 0.9)], [(0.5, 0.001), (1.0, 0.1), (0.8, 0.5)]))
def test_replace_one_matches_dp_accounting_replace_one(s, q):
    """dp-accounting's REPLACE_ONE Gaussian pair is (1-q) N(0) + q N(-1) vs (1-q) N(0) + q N(1)
    (privacy_loss_mechanism.AdditiveNoisePrivacyLoss): ours reflected, the same PLD. Its exact
    delta (GaussianPrivacyLoss, adjacency REPLACE) to 1e-7, and its discretised PLD (interval
    1e-4, connect-the-dots) brackets ours: optimistic <= ours <= pessimistic, and the
    pessimistic value is at most the true delta at eps - 1e-4 (losses rounded up by at most one
    interval; truncation 1e-50)."""
    pld = pytest.importorskip("dp_accounting.pld.privacy_loss_distribution")
    plm = pytest.importorskip("dp_accounting.pld.privacy_loss_mechanism")
    from dp_accounting import NeighboringRelation
    h = 1e-4
    eps = [0.0, 0.1, 0.5, 1.0, 2.0]
    prv, ref = mx.replace_gaussian_prv(s, q, 1), Pair("gaussian", s, q, 1, "replace")
    exact = plm.GaussianPrivacyLoss(s, sampling_prob=q, adjacency_type=plm.AdjacencyType.REPLACE
                                    ).get_delta_for_epsilon(eps)
    kw = dict(standard_deviation=s, sensitivity=1.0, sampling_prob=q,
              neighboring_relation=NeighboringRelation.REPLACE_ONE, value_discretization_interval=h)
    pess = pld.from_gaussian_mechanism(**kw).get_delta_for_epsilon(eps)
    opt = pld.from_gaussian_mechanism(pessimistic_estimate=False, **kw).get_delta_for_epsilon(eps)
    for e, d, hi, lo in zip(eps, exact, pess, opt):
        ours = _delta_of(prv, ref, e)
        assert ours == pytest.approx(d, rel=1e-7, abs=1e-13)
        assert lo - 1e-12 <= ours <= hi + 1e-12
        assert hi <= _delta_of(prv, ref, e - h) + 1e-12


@pytest.mark.parametrize("e,q", [(0.1, 0.001), (1.0, 0.1), (5.0, 0.9)])
def test_laplace_group_of_one_matches_dp_accounting(e, q):
    """dp-accounting's LaplacePrivacyLoss (parameter 1/eps0, sampling_prob q): exact deltas of
    both orders. It has no REPLACE_ONE for Laplace (REPLACE raises NotImplementedError), so the
    replace-one Laplace pair is checked against mpmath only; at q = 1 it is the Laplace pair
    with sensitivity 2 k, which dp-accounting has."""
    plm = pytest.importorskip("dp_accounting.pld.privacy_loss_mechanism")
    eps = [0.0, 0.01, 0.1, 0.5]
    for order, adj in (("remove", plm.AdjacencyType.REMOVE), ("add", plm.AdjacencyType.ADD)):
        theirs = plm.LaplacePrivacyLoss(1 / e, sampling_prob=q, adjacency_type=adj).get_delta_for_epsilon(eps)
        prv, ref = ml.group_laplace_prv(e, q, 1, order), Pair("laplace", e, q, 1, order)
        for x, d in zip(eps, theirs):
            assert _delta_of(prv, ref, x) == pytest.approx(d, rel=1e-9, abs=1e-14)
    with pytest.raises(NotImplementedError):
        plm.LaplacePrivacyLoss(1.0, sampling_prob=0.5, adjacency_type=plm.AdjacencyType.REPLACE)
    k = 3
    full = plm.LaplacePrivacyLoss(1 / e, sensitivity=2 * k).get_delta_for_epsilon(eps)
    for x, d in zip(eps, full):
        assert ml.replace_laplace_prv(e, 1.0, k).delta(x) == pytest.approx(d, rel=1e-9, abs=1e-14)


# ---------------------------------------------------------------- degenerate inputs
def test_edge_cases():
    assert mx.group_gaussian_prv(1.0, 0.0, 3, "remove") is TRIVIAL
    assert ml.replace_laplace_prv(0.0, 0.5, 3) is TRIVIAL
    assert mx.replace_gaussian_prv(1.0, 0.0, 2) is TRIVIAL
    # q = 1: the plain mechanism with k (add/remove) or 2k (replace) times the sensitivity
    for eps in (0.0, 1.0, 4.0):
        mu = 3 / 2.0
        g = mx.group_gaussian_prv(2.0, 1.0, 3, "add")
        ref = float(mp.ncdf(-eps / mu + mu / 2) - mp.exp(eps) * mp.ncdf(-eps / mu - mu / 2))
        assert g.delta(eps) == pytest.approx(ref, abs=1e-12)
        assert mx.replace_gaussian_prv(4.0, 1.0, 3).delta(eps) == pytest.approx(ref, abs=1e-12)
        lap = max(0.0, -math.expm1((eps - 1.2) / 2)) if eps < 1.2 else 0.0
        assert ml.group_laplace_prv(0.4, 1.0, 3, "remove").delta(eps) == pytest.approx(lap, abs=1e-12)
        assert ml.replace_laplace_prv(0.2, 1.0, 3).delta(eps) == pytest.approx(lap, abs=1e-12)
    # no noise: the outputs differ unless no record of the group is sampled
    w0 = 0.9 ** 3
    for prv in (mx.group_gaussian_prv(0.0, 0.1, 3, "remove"), mx.replace_gaussian_prv(0.0, 0.1, 3),
                ml.group_laplace_prv(math.inf, 0.1, 3, "remove"), ml.replace_laplace_prv(math.inf, 0.1, 3)):
        for eps in (0.0, 1.0, 10.0):
            assert prv.delta(eps) == pytest.approx(1 - w0, rel=1e-14)
    for prv in (mx.group_gaussian_prv(0.0, 0.1, 3, "add"), ml.group_laplace_prv(math.inf, 0.1, 3, "add")):
        assert prv.delta(0.0) == pytest.approx(1 - w0, rel=1e-14) and prv.delta(1.0) == 0.0
    for bad in (dict(s=math.nan), dict(s=-1.0), dict(s=math.inf), dict(q=1.5), dict(q=math.nan),
                dict(k=0), dict(k=2.5), dict(k=True)):
        args = dict(s=1.0, q=0.1, k=2) | bad
        with pytest.raises(ValueError):
            mx.group_gaussian_prv(args["s"], args["q"], args["k"], "remove")
        with pytest.raises(ValueError):
            mx.replace_gaussian_prv(args["s"], args["q"], args["k"])
    with pytest.raises(ValueError):
        ml.group_laplace_prv(1.0, 0.1, 2, "replace")
    with pytest.raises(ValueError):
        ml.replace_laplace_prv(math.nan, 0.1, 2)


def test_tails_at_extreme_arguments():
    """Huge |t| and the ends of the supports: no overflow, no warning, the right limits."""
    for prv in (mx.group_gaussian_prv(0.05, 0.3, 4, "remove"), mx.group_gaussian_prv(0.05, 0.3, 4, "add"),
                mx.replace_gaussian_prv(0.05, 0.3, 4), mx.replace_gaussian_prv(100.0, 1e-9, 50)):
        c = prv.cont
        t = np.sort(np.array([-1e300, -1e30, -800.0, c.lo, c.hi, 800.0, 1e30, 1e300, -np.inf, np.inf,
                              np.nextafter(c.lo, np.inf), np.nextafter(c.hi, -np.inf)]))
        cdf, sf = c.cdf(t), c.sf(t)
        assert np.all(np.isfinite(cdf)) and np.all(np.isfinite(sf))
        assert cdf[0] == 0.0 and sf[0] == 1.0 and cdf[-1] == 1.0 and sf[-1] == 0.0
        assert np.all(np.diff(cdf) >= 0) and np.all(np.diff(sf) <= 0)


def test_weights_are_the_binomial_probabilities():
    mp.mp.dps = DPS
    for q, k in [(1e-9, 7), (0.3, 40), (0.999999, 200), (0.1, 1000)]:
        w, lw = mx.binomial_weights(q, k)
        for j in range(0, k + 1, max(1, k // 37)):
            ex = mp.binomial(k, j) * mp.mpf(q) ** j * (1 - mp.mpf(q)) ** (k - j)
            if ex > 1e-300:
                assert abs(w[j] / ex - 1) <= 2 * U
            assert abs(lw[j] - mp.log(ex)) <= 64 * U * max(1, abs(lw[j]))


# ---------------------------------------------------------------- the pipeline
@dataclass(frozen=True, slots=True)
class _Mixture(Mechanism):
    """A throwaway kind for the end-to-end test: one of the mixture pairs."""

    kind = "test_mixture"
    title = "mixture (test)"
    symmetric = False
    noise: float = param(Param("s", "", "", "s", 1.0))
    rate: float = param(Param("q", "", "", "q", 0.1, hi=1.0))
    group: float = param(Param("k", "", "", "k", 1.0))
    laplace: float = param(Param("laplace", "", "", "l", 0.0), default=0.0)
    replace: float = param(Param("replace", "", "", "r", 0.0), default=0.0)

    def orders(self, neighbouring=None):
        return ("remove",) if self.replace else ("remove", "add")

    def _prv(self, order):
        noise, pair = ("laplace" if self.laplace else "gaussian"), ("replace" if self.replace else order)
        return build(noise, self.noise, self.rate, int(self.group), pair)


@pytest.mark.parametrize("mech,eps", [(_Mixture(1.0, 0.1, 3), 0.5), (_Mixture(0.7, 0.2, 1, replace=1), 1.0),
                                      (_Mixture(1.0, 0.3, 2, laplace=1), 0.3),
                                      (_Mixture(2.0, 0.05, 2, laplace=1, replace=1), 0.2)])
def test_one_run_through_the_pipeline_brackets_the_exact_delta(mech, eps):
    """The certified delta bracket of one run contains the exact delta (mpmath; the larger of
    the two orders for add/remove)."""
    noise = "laplace" if mech.laplace else "gaussian"
    pairs = ("replace",) if mech.replace else ("remove", "add")
    exact = max(float(Pair(noise, mech.noise, mech.rate, int(mech.group), p).hockey(eps)) for p in pairs)
    b = Accountant([Row(mech, 1)], eps_error=0.01).delta(eps)
    assert b.lower <= exact <= b.upper, (b, exact)


@pytest.mark.slow
def test_composition_agrees_with_dp_accounting():
    """50 steps: our certified epsilon bracket and dp-accounting's PLD (pessimistic and
    optimistic; interval 1e-3 for the mixture, whose optimistic build is slow, 1e-4 for
    replace-one) both contain the truth, so they overlap; ours is narrow."""
    pld = pytest.importorskip("dp_accounting.pld.privacy_loss_distribution")
    from dp_accounting import NeighboringRelation
    s, q, k, steps, delta = 1.0, 0.05, 2, 50, 1e-6
    ours = Accountant([Row(_Mixture(s, q, k), steps)], eps_error=0.01).epsilon(delta)
    mk = lambda pess: pld.from_mixture_gaussian_mechanism(  # noqa: E731
        s, list(range(k + 1)), _weights(q, k), pessimistic_estimate=pess,
        value_discretization_interval=1e-3).self_compose(steps).get_epsilon_for_delta(delta)
    hi, lo = mk(True), mk(False)
    assert ours.lower <= hi + 1e-9 and lo <= ours.upper + 1e-9, (ours, lo, hi)
    assert ours.upper - ours.lower <= 0.02 + 1e-12
    ours = Accountant([Row(_Mixture(s, q, 1, replace=1), steps)], eps_error=0.01).epsilon(delta)
    kw = dict(standard_deviation=s, sampling_prob=q, neighboring_relation=NeighboringRelation.REPLACE_ONE,
              value_discretization_interval=1e-4)
    hi = pld.from_gaussian_mechanism(**kw).self_compose(steps).get_epsilon_for_delta(delta)
    lo = pld.from_gaussian_mechanism(pessimistic_estimate=False, **kw).self_compose(steps
                                                                                    ).get_epsilon_for_delta(delta)
    assert ours.lower <= hi + 1e-9 and lo <= ours.upper + 1e-9, (ours, lo, hi)


# ---------------------------------------------------------------- RDP
INT_ORDERS = np.array([2.0, 3, 4, 8, 16, 32, 64, 128, 256, 512, 1024])


@pytest.mark.parametrize("s,q", [(1.0, 0.01), (0.8, 0.1), (2.0, 0.5), (5.0, 0.001)])
def test_rdp_group_of_one_is_the_subsampled_gaussians(s, q):
    ours = np.maximum(mixture_rdp("remove", s, q, 1, INT_ORDERS),
                      mixture_rdp("add", s, q, 1, INT_ORDERS))
    theirs = SubsampledGaussian(s, q).rdp(INT_ORDERS)
    assert np.all(ours >= theirs * (1 - 1e-12))  # both upper bounds, close (theirs is tight)
    assert np.all(ours[INT_ORDERS <= 256] <= theirs[INT_ORDERS <= 256] * (1 + 2e-6))


@pytest.mark.parametrize("e,q", [(1.0, 0.1), (0.3, 0.03), (5.0, 0.5)])
def test_rdp_group_of_one_is_the_subsampled_laplaces(e, q):
    ours = np.maximum(mixture_rdp("remove", e, q, 1, INT_ORDERS, laplace=True),
                      mixture_rdp("add", e, q, 1, INT_ORDERS, laplace=True))
    theirs = SubsampledLaplace(1 / e, q).rdp(INT_ORDERS)
    assert np.all(ours >= theirs * (1 - 1e-12)) and np.all(ours <= theirs * (1 + 1e-8))


RDP_CASES = [("gaussian", 1.0, 0.1, 3, p) for p in ("remove", "add", "replace")]
RDP_CASES += [("gaussian", 0.7, 0.01, 2, p) for p in ("remove", "add", "replace")]
RDP_CASES += [("laplace", 1.0, 0.2, 3, p) for p in ("remove", "add", "replace")]
RDP_FAST = [("gaussian", 0.7, 0.01, 2, "add"), ("gaussian", 2.0, 0.3, 2, "replace"),
            ("laplace", 1.0, 0.2, 3, "remove"), ("laplace", 1.0, 0.2, 3, "replace")]


@pytest.mark.parametrize("case", _split(RDP_FAST, RDP_CASES), ids=str)
def test_rdp_against_mpmath(case):
    """D_a = log int p^a q^(1-a) / (a - 1) by mp.quad: ours is above it and close."""
    noise, p_, q, k, pair = case
    ref = Pair(noise, p_, q, k, pair)
    orders = np.array([2.0, 3.0, 8.0])
    ours = mixture_rdp(pair, p_, q, k, orders, laplace=noise == "laplace")
    for a, v in zip(orders, ours):
        exact = float(mp.log(ref.renyi_integral(a)) / (a - 1))
        assert exact * (1 - 1e-12) <= v <= exact * (1 + 1e-8) + 1e-14, (a, v, exact)


def test_rdp_closed_forms_and_degenerate_inputs():
    o = np.array([1.5, 2.0, 10.0, 10.5])
    g = mixture_rdp("remove", 2.0, 1.0, 3, o)
    assert np.isinf(g[[0, 3]]).all() and np.allclose(g[1:3], o[1:3] * 9 / 8, rtol=1e-12)
    assert np.allclose(mixture_rdp("replace", 2.0, 1.0, 3, o)[1:3], o[1:3] * 36 / 8, rtol=1e-12)
    # remove at a = 2, exactly: E_Q L^2 = sum_{j, j'} w_j w_j' e^{j j' / s^2}
    s, q, k = 0.9, 0.2, 3
    w = _weights(q, k)
    i2 = sum(w[i] * w[j] * math.exp(i * j / s ** 2) for i in range(k + 1) for j in range(k + 1))
    assert mixture_rdp("remove", s, q, k, np.array([2.0]))[0] == pytest.approx(math.log(i2), rel=1e-10)
    assert np.all(mixture_rdp("add", 1.0, 0.0, 3, o)[1:3] == 0)
    assert np.all(np.isinf(mixture_rdp("add", 0.0, 0.1, 3, o)))
    assert np.all(np.isinf(mixture_rdp("replace", math.inf, 0.1, 3, o, laplace=True)))
    with pytest.raises(ValueError):
        mixture_rdp("sideways", 1.0, 0.1, 3, o)


def test_rdp_fallback_is_an_upper_bound(monkeypatch):
    """Without quadrature (MAX_PANELS = 0) the joint-convexity bound is used: never below."""
    from prvgui.accounting.pairs import mixture_rdp as mr
    cases = [(p, 1.0, 0.1, 3, lap) for p in ("remove", "add", "replace") for lap in (False, True)]
    full = [mr.mixture_rdp(*c[:4], INT_ORDERS, laplace=c[4]) for c in cases]
    monkeypatch.setattr(mr, "MAX_PANELS", 0)
    for c, f in zip(cases, full):
        assert np.all(mr.mixture_rdp(*c[:4], INT_ORDERS, laplace=c[4]) >= f * (1 - 1e-12)), c


def test_rdp_keeps_components_whose_weight_underflows():
    """q = 1e-5, k = 100: w_100 = 1e-500 is not a float, yet at large orders that component
    dominates. One component alone bounds I_a from below: p >= w_k N(k, s^2), so
    D_a >= (a log w_k + a (a - 1) k^2 / (2 s^2)) / (a - 1)."""
    s, q, k = 1.0, 1e-5, 100
    orders = np.array([2.0, 8.0, 64.0])
    lw_k = k * math.log(q)
    for pair in ("remove", "replace"):
        d = 2 * k if pair == "replace" else k
        ours = mixture_rdp(pair, s, q, k, orders)
        floor = (orders * lw_k + orders * (orders - 1) * d * d / (2 * s * s)) / (orders - 1)
        assert np.all(ours >= floor), (pair, ours, floor)
