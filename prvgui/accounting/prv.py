"""Privacy loss random variables (PRVs) of the standard mechanisms.

For a dominating pair (P, Q) the PRV is Y = log(dP/dQ)(w), w ~ P (Gopi, Lee,
Wutschitz 2021, "Numerical Composition of Differential Privacy", Def. 3.1 and
Thm 3.2; formulas of App. B). A PRV here is split into

* finite atoms ``(location, mass)``,
* a mass at +infinity (the "delta" part of (eps, delta)-DP),
* an absolutely continuous part given by vectorised ``cdf``/``sf`` that carry
  the part's mass (``cdf(hi) == mass``), with ``sf`` computed directly so that
  right tails keep full relative precision.

``mean`` is the first moment of the finite part, E[Y; Y < inf], computed in
closed form or, for subsampled mechanisms, as a Kullback-Leibler divergence
with a non-negative integrand (no cancellation); ``mean_err`` bounds its error.

Subsampled mechanisms (Poisson rate q, base pair (P0, Q0)): the "remove" order
is P = q P0 + (1-q) Q0 against Q = Q0, the "add" order is the swapped pair
(Q, P), whose PRV is -Z with Z = log(dP/dQ) under Q (PRV paper, App. B.2).
"""
from __future__ import annotations

import math
from typing import Callable

import numpy as np

from .record import Record
from .special import ndtr

Array = np.ndarray
_LOG_SQRT2PI = 0.5 * math.log(2 * math.pi)


class Continuous(Record):
    """Absolutely continuous part of a PRV on (lo, hi) with total mass ``mass``."""

    lo: float
    hi: float
    mass: float
    cdf: Callable[[Array], Array]
    sf: Callable[[Array], Array]
    #: a point inside (lo, hi) near the bulk of the mass, used to start searches
    centre: float

    def lower_cut(self, tau: float, tol: float = 0.0) -> float:
        """A point a with cdf(a) <= tau (the support's lower end if tau is tiny enough)."""
        return _search(self.cdf, tau, self.centre, self.lo, -1.0, tol)

    def upper_cut(self, tau: float, tol: float = 0.0) -> float:
        """A point b with sf(b) <= tau."""
        return _search(self.sf, tau, self.centre, self.hi, +1.0, tol)


def _search(tail: Callable[[Array], Array], tau: float, start: float, end: float,
            direction: float, tol: float = 0.0) -> float:
    """Find x between start and end (towards ``direction``) with tail(x) <= tau, within tol of
    the point where the (monotone) tail crosses tau, or as close as floats allow."""
    if math.isfinite(end):
        if float(tail(np.array([end]))[0]) <= tau:
            near, far = start, end
        else:
            return end
    else:
        step = 1.0
        near, far = start, start + direction * step
        while float(tail(np.array([far]))[0]) > tau:
            near, far = far, far + direction * step
            step *= 2.0
            if step > 1e8:
                raise ArithmeticError("PRV tail does not decay; cannot truncate")
    # shrink [near, far] 65-fold per round (64 points at a time), keeping tail(far) <= tau
    while abs(far - near) > tol:
        pts = np.linspace(near, far, 66)[1:-1]
        ok = np.flatnonzero(np.asarray(tail(pts)) <= tau)
        if ok.size:
            new = (pts[ok[0] - 1] if ok[0] > 0 else near, float(pts[ok[0]]))
        else:
            new = (float(pts[-1]), far)
        if new == (near, far):
            break  # float resolution
        near, far = float(new[0]), new[1]
    return far


class PRV(Record):
    """A privacy loss random variable Y (under P)."""

    atoms: tuple[tuple[float, float], ...]
    inf_mass: float
    cont: Continuous | None
    mean: float
    mean_err: float

    @property
    def finite_mass(self) -> float:
        return 1.0 - self.inf_mass

    def delta(self, eps: float) -> float:
        """delta(eps) = E[(1 - e^(eps - Y))_+] by direct quadrature (for tests and checks)."""
        total = self.inf_mass
        for loc, m in self.atoms:
            if loc > eps:
                total += m * -math.expm1(eps - loc)
        if self.cont is not None and self.cont.mass > 0:
            c = self.cont
            a = max(eps, c.lo)
            if a < c.hi:
                # E[(1 - e^{eps-Y}); Y > a] = sf(a) - e^eps * int_a^hi e^{-y} dF(y)
                # and int_a^hi e^{-y} dF = e^{-a} sf(a) - int_a^hi e^{-y} sf(y) dy
                b = c.upper_cut(1e-300) if not math.isfinite(c.hi) else c.hi
                sa = float(c.sf(np.array([a]))[0])
                integ, _ = integrate(lambda y: np.exp(eps - y) * c.sf(y), [a, b], panels=2048)
                total += sa - (math.exp(eps - a) * sa - integ)
        return min(1.0, max(0.0, total))


def point_mass(loc: float) -> PRV:
    if math.isinf(loc):
        return PRV((), 1.0, None, 0.0, 0.0)
    return PRV(((loc, 1.0),), 0.0, None, loc, 0.0)


TRIVIAL = point_mass(0.0)


def gaussian(mu: float) -> PRV:
    """Gaussian mechanism with mu = sensitivity / sigma: Y ~ N(mu^2/2, mu^2)."""
    if mu == 0:
        return TRIVIAL
    if math.isinf(mu):
        return point_mass(math.inf)
    m, s = 0.5 * mu * mu, mu
    cont = Continuous(-math.inf, math.inf, 1.0,
                      lambda t: ndtr((np.asarray(t) - m) / s),
                      lambda t: ndtr((m - np.asarray(t)) / s), m)
    return PRV((), 0.0, cont, m, 1e-15 * m)


def randomized_response(eps0: float) -> PRV:
    """Pure eps0-DP / binary randomized response: Y = +-eps0."""
    if eps0 == 0:
        return TRIVIAL
    p = 1.0 / (1.0 + math.exp(-eps0))
    return PRV(((eps0, p), (-eps0, 1.0 - p)), 0.0, None, eps0 * math.tanh(eps0 / 2),
               1e-15 * eps0 * math.tanh(eps0 / 2))


def approx_dp(eps0: float, delta0: float) -> PRV:
    """(eps0, delta0)-DP: randomized response with an extra mass delta0 at +infinity."""
    if delta0 == 1:
        return point_mass(math.inf)
    rr = randomized_response(eps0)
    atoms = tuple((loc, m * (1.0 - delta0)) for loc, m in rr.atoms)
    return PRV(atoms, delta0, None, rr.mean * (1.0 - delta0), rr.mean_err)


def laplace(eps0: float) -> PRV:
    """Laplace mechanism with eps0 = sensitivity / scale (PRV paper App. B)."""
    if eps0 == 0:
        return TRIVIAL
    if math.isinf(eps0):
        return point_mass(math.inf)
    e = eps0
    lo_mass = 0.5 * math.exp(-e)
    mass = 0.5 * -math.expm1(-e)

    def cdf(t: Array) -> Array:  # (e^{(t-e)/2} - e^{-e}) / 2 without cancellation (tiny eps0)
        t = np.clip(np.asarray(t, dtype=float), -e, e)
        u = (t + e) / 2
        return np.where(u < 1.0, lo_mass * np.expm1(np.minimum(u, 1.0)), 0.5 * np.exp((t - e) / 2) - lo_mass)

    def sf(t: Array) -> Array:
        t = np.clip(np.asarray(t, dtype=float), -e, e)
        return -0.5 * np.expm1((t - e) / 2)

    cont = Continuous(-e, e, mass, cdf, sf, 0.0)
    mean = _e_plus_expm1(e)
    return PRV(((e, 0.5), (-e, lo_mass)), 0.0, cont, mean, 1e-14 * mean)


def _e_plus_expm1(e: float) -> float:
    """e + e^{-e} - 1 >= 0 (the Laplace loss's mean) to a few ulps: the series
    e^2/2 - e^3/6 + ... where the closed form would cancel."""
    if e >= 0.5:
        return e + math.expm1(-e)  # cancels at most ~3 bits
    term, total = e * e / 2, 0.0
    for j in range(3, 40):  # e < 1/2: terms fall by at least 1/6 each
        total += term
        term *= -e / j
        if abs(term) <= 1e-18 * total:
            break
    return total


# ---------------------------------------------------------------- subsampling
def _psi(log_l: Array) -> Array:
    """psi(L) = L log L - L + 1 >= 0, from log L, without cancellation."""
    u = np.expm1(log_l)
    small = np.abs(u) < 1e-3
    out = np.empty_like(log_l)
    us = u[small]
    out[small] = us * us * (0.5 - us / 6 + us * us / 12 - us ** 3 / 20)
    lb = log_l[~small]
    out[~small] = np.exp(lb) * (lb - 1.0) + 1.0
    return out


def _phi(log_l: Array) -> Array:
    """phi(L) = L - 1 - log L >= 0, from log L."""
    u = np.expm1(log_l)
    small = np.abs(u) < 1e-3
    out = np.empty_like(log_l)
    us = u[small]
    out[small] = us * us * (0.5 - us / 3 + us * us / 4 - us ** 3 / 5)
    lb = log_l[~small]
    out[~small] = u[~small] - lb
    return out


def _log_mix(q: float, l0: Array) -> Array:
    """log(q e^{l0} + 1 - q), the subsampled privacy loss."""
    return np.logaddexp(math.log(q) + l0, math.log1p(-q))


def _l0_of_t(q: float, t: Array) -> Array:
    """Inverse of t = log(q e^{l0} + 1 - q): l0 = log((e^t - 1 + q) / q), t > log(1-q)."""
    t = np.asarray(t, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if t.ndim == 1 and t.size > 16 and t[0] <= t[-1] and np.all(t[1:] >= t[:-1]):
            # sorted cell edges: each branch on its own slice
            i = int(np.searchsorted(t, 1.0, side="right"))
            out = np.empty_like(t)
            out[:i] = np.log1p(np.expm1(t[:i]) / q)
            out[i:] = t[i:] + np.log1p(-(1.0 - q) * np.exp(-t[i:])) - math.log(q)
            return out
        small = np.log1p(np.expm1(t) / q)
        big = t + np.log1p(-(1.0 - q) * np.exp(-np.maximum(t, 1.0))) - math.log(q)
    return np.where(t > 1.0, big, small)


def _kl_integrand(which: str, lb: Array, log_dens: Array) -> Array:
    """psi(L) or phi(L) times a density, in log space so that huge L cannot overflow."""
    lb = np.asarray(lb, dtype=float)
    log_dens = np.asarray(log_dens, dtype=float)
    dens = np.exp(log_dens)
    fun = _psi if which == "psi" else _phi
    out = fun(np.clip(lb, -700.0, 1.0)) * dens
    big = lb > 1.0
    lbb, ldb = lb[big], log_dens[big]
    if which == "psi":  # L (log L - 1) + 1
        out[big] = np.exp(lbb + np.log(lbb - 1.0) + ldb) + dens[big]
    else:  # L - 1 - log L
        out[big] = np.exp(np.minimum(lbb + ldb, 700.0)) - (1.0 + lbb) * dens[big]
    return out


# 16-point Gauss-Legendre rule on [-1, 1] (numpy.polynomial.legendre.leggauss(16), written out:
# importing numpy.polynomial costs 3 ms per process; tests check the two agree)
_GL_HALF_X = (0.09501250983763744, 0.2816035507792589, 0.45801677765722737, 0.6178762444026438,
              0.755404408355003, 0.8656312023878318, 0.9445750230732326, 0.9894009349916499)
_GL_HALF_W = (0.18945061045506864, 0.18260341504492364, 0.16915651939500265, 0.1495959888165767,
              0.12462897125553407, 0.0951585116824926, 0.062253523938647456, 0.027152459411754176)
_GL_X = np.array([-v for v in _GL_HALF_X[::-1]] + list(_GL_HALF_X))
_GL_W = np.array(list(_GL_HALF_W[::-1]) + list(_GL_HALF_W))


def integrate(f: Callable[[Array], Array], breaks: list[float], panels: int = 64
              ) -> tuple[float, float]:
    """Composite 16-point Gauss-Legendre over consecutive breaks, with an error estimate.

    The estimate is the difference to the rule with half as many panels (an
    overestimate for smooth integrands, whose error falls like panels^-32).
    """
    br = np.asarray(breaks, dtype=float)
    a, b = br[:-1, None], br[1:, None]

    def rule(m: int) -> float:
        # every interval's m panels at once: one call of f
        t = np.linspace(0.0, 1.0, m + 1)[None, :]
        edges = a + (b - a) * t
        edges[:, -1] = br[1:]
        half = 0.5 * np.diff(edges, axis=1)
        mid = 0.5 * (edges[:, :-1] + edges[:, 1:])
        x = mid[:, :, None] + half[:, :, None] * _GL_X[None, None, :]
        vals = f(x.ravel()).reshape(x.shape) @ _GL_W
        return math.fsum((vals * half).sum(axis=1))

    fine, coarse = rule(panels), rule(panels // 2)
    return fine, abs(fine - coarse)


def _refined(lo: float, hi: float, centres: list[float], width: float) -> list[float]:
    """Breakpoints on [lo, hi] refined geometrically (width * 4^j) around each centre."""
    pts = {lo, hi}
    for c in centres:
        for j in range(24):
            for p in (c - width * 4.0 ** j, c + width * 4.0 ** j):
                if lo < p < hi:
                    pts.add(p)
        if lo < c < hi:
            pts.add(c)
    return sorted(pts)


def _kl_pair(f: Callable[[Array], Array], breaks: list[float]) -> tuple[float, float]:
    val, err = integrate(f, sorted(breaks))
    return val, err + 1e-14 * abs(val)


def _blind_subsample(q: float, order: str) -> PRV:
    """A subsampled mechanism without noise: P0 and Q0 are disjoint."""
    if order == "remove":
        if q == 1:
            return point_mass(math.inf)
        loc = math.log1p(-q)
        return PRV(((loc, 1.0 - q),), q, None, (1.0 - q) * loc, 0.0)
    loc = -math.log1p(-q) if q < 1 else math.inf
    return point_mass(loc)


def subsampled_gaussian(s: float, q: float, order: str = "remove") -> PRV:
    """Poisson-subsampled Gaussian (noise multiplier s, rate q), one order of the pair.

    Base pair P0 = N(1, s^2), Q0 = N(0, s^2); l0(x) = (2x - 1) / (2 s^2).
    remove: F_Y(t) = q Phi((x_t - 1)/s) + (1-q) Phi(x_t/s), x_t = s^2 l0(t) + 1/2.
    add:    Y = -l(X), X ~ Q0, so F_Y(t) = Phi(-x_{-t}/s) for t < -log(1-q).
    """
    _check_order(order)
    if q == 0:
        return TRIVIAL
    if math.isinf(s):
        return _blind_subsample(q, order)
    if q == 1:
        return gaussian(1.0 / s)
    s2 = s * s
    cut = math.log1p(-q)

    def x_of(t: Array) -> Array:
        return s2 * _l0_of_t(q, t) + 0.5

    def integrand(which: str) -> Callable[[Array], Array]:
        def f(z: Array) -> Array:  # psi or phi of L at x = s z, times the N(0, 1) density
            lb = _log_mix(q, (2 * s * z - 1.0) / (2 * s2))
            return _kl_integrand(which, lb, -0.5 * z * z - _LOG_SQRT2PI)
        return f

    zlo, zhi = -40.0, 40.0 + 1.0 / s
    # where q e^{l0} crosses 1 - q: the loss bends there on a z-scale of s
    zkink = (1.0 + 2.0 * s2 * (math.log1p(-q) - math.log(q))) / (2.0 * s)
    if order == "remove":
        def cdf(t: Array) -> Array:
            t = np.asarray(t, dtype=float)
            with np.errstate(invalid="ignore"):
                x = x_of(t)
                v = q * ndtr((x - 1.0) / s) + (1.0 - q) * ndtr(x / s)
            return np.where(t <= cut, 0.0, v)

        def sf(t: Array) -> Array:
            t = np.asarray(t, dtype=float)
            with np.errstate(invalid="ignore"):
                x = x_of(t)
                v = q * ndtr((1.0 - x) / s) + (1.0 - q) * ndtr(-x / s)
            return np.where(t <= cut, 1.0, v)

        mean, err = _kl_pair(integrand("psi"), _refined(zlo, zhi, [0.0, 1.0 / s, zkink], s))
        centre = float(_log_mix(q, np.array([0.5 / s2]))[0])
        cont = Continuous(cut, math.inf, 1.0, cdf, sf, centre)
    else:
        def cdf(t: Array) -> Array:
            t = np.asarray(t, dtype=float)
            with np.errstate(invalid="ignore"):
                v = ndtr(-x_of(-t) / s)
            return np.where(t >= -cut, 1.0, v)

        def sf(t: Array) -> Array:
            t = np.asarray(t, dtype=float)
            with np.errstate(invalid="ignore"):
                v = ndtr(x_of(-t) / s)
            return np.where(t >= -cut, 0.0, v)

        mean, err = _kl_pair(integrand("phi"), _refined(zlo, zhi, [0.0, 1.0 / s, zkink], s))
        centre = -float(_log_mix(q, np.array([-0.5 / s2]))[0])
        cont = Continuous(-math.inf, -cut, 1.0, cdf, sf, centre)
    return PRV((), 0.0, cont, mean, err)


def subsampled_laplace(eps0: float, q: float, order: str = "remove") -> PRV:
    """Poisson-subsampled Laplace (eps0 = sensitivity/scale, rate q), one order of the pair.

    In units of the sensitivity: P0 = Lap(1, 1/eps0), Q0 = Lap(0, 1/eps0),
    l0(x) = eps0 (|x| - |x - 1|) in [-eps0, eps0]; atoms where l0 is constant.
    """
    _check_order(order)
    if q == 0 or eps0 == 0:
        return TRIVIAL
    if math.isinf(eps0):
        return _blind_subsample(q, order)
    if q == 1:
        return laplace(eps0)
    e = eps0
    t_minus = math.log1p(q * math.expm1(-e))
    t_plus = float(np.logaddexp(math.log(q) + e, math.log1p(-q)))  # no overflow for huge e
    em = math.exp(-e)

    def x_of(t: Array) -> Array:  # in (0, 1) for t in (t_minus, t_plus); 0 below, 1 above
        x = (_l0_of_t(q, t) / e + 1.0) / 2.0
        return np.clip(np.nan_to_num(x, nan=0.0), 0.0, 1.0)

    # KL integrals over X ~ Q0: constant pieces plus the middle segment
    def middle(which: str) -> tuple[float, float]:
        def g(x: Array) -> Array:
            lb = _log_mix(q, e * (2 * x - 1))
            return _kl_integrand(which, lb, math.log(0.5 * e) - e * x)
        return _kl_pair(g, _refined(0.0, 1.0, [0.0, 0.5, 1.0], 1.0 / e))

    if order == "remove":
        m_lo = 0.5 * q * em + 0.5 * (1.0 - q)
        m_hi = 0.5 * q + 0.5 * (1.0 - q) * em

        def cdf(t: Array) -> Array:
            x = x_of(t)
            ex = e * x  # q/2 (e^{e (x-1)} - e^{-e}) without cancellation or overflow
            head_p0 = np.where(ex < 1.0, em * np.expm1(np.minimum(ex, 1.0)), np.exp(e * (x - 1.0)) - em)
            return 0.5 * q * head_p0 + 0.5 * (1.0 - q) * -np.expm1(-ex)

        def sf(t: Array) -> Array:
            x = x_of(t)
            u = e * (1.0 - x)  # (1-q)/2 (e^{-e x} - e^{-e}) without overflow or cancellation
            tail_q0 = np.where(u < 1.0, em * np.expm1(np.minimum(u, 1.0)), np.exp(-e * x) - em)
            return -0.5 * q * np.expm1(e * (x - 1.0)) + 0.5 * (1.0 - q) * tail_q0

        mid, err = middle("psi")
        consts = _constant_pieces("psi", t_minus, t_plus, e)
        atoms = ((t_minus, m_lo), (t_plus, m_hi))
        cont = Continuous(t_minus, t_plus, 0.5 * -math.expm1(-e), cdf, sf,
                          0.5 * (t_minus + t_plus))
    else:
        def cdf(t: Array) -> Array:  # (e^{-e x} - e^{-e}) / 2 without cancellation
            x = x_of(-np.asarray(t, dtype=float))
            return -0.5 * np.exp(-e * x) * np.expm1(-e * (1.0 - x))

        def sf(t: Array) -> Array:
            x = x_of(-np.asarray(t, dtype=float))
            return -0.5 * np.expm1(-e * x)

        mid, err = middle("phi")
        consts = _constant_pieces("phi", t_minus, t_plus, e)
        atoms = ((-t_plus, 0.5 * em), (-t_minus, 0.5))
        cont = Continuous(-t_plus, -t_minus, 0.5 * -math.expm1(-e), cdf, sf,
                          -0.5 * (t_minus + t_plus))
    return PRV(atoms, 0.0, cont, float(consts) + mid, err + 1e-15 * abs(consts))


def _constant_pieces(which: str, t_minus: float, t_plus: float, e: float) -> float:
    """KL contributions of the two half-lines where the subsampled Laplace loss is constant:
    Q0(x <= 0) = 1/2 with log L = t_minus, Q0(x >= 1) = e^-e / 2 with log L = t_plus."""
    half = math.log(0.5)
    return float(_kl_integrand(which, np.array([t_minus]), np.array([half]))[0]
                 + _kl_integrand(which, np.array([t_plus]), np.array([half - e]))[0])


def _check_order(order: str) -> None:
    if order not in ("remove", "add"):
        raise ValueError(f"order must be 'remove' or 'add', got {order!r}")
