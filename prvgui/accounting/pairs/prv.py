"""Privacy loss random variables (PRVs): the representation every mechanism kind builds.

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

Each kind (kinds/) builds its own PRVs; subsampling.py holds what the Poisson-subsampled
kinds share.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

from .quadrature import integrate

Array = np.ndarray


@dataclass(frozen=True, slots=True)
class Continuous:
    """Absolutely continuous part of a PRV on (lo, hi) with total mass ``mass``."""

    lo: float
    hi: float
    mass: float
    cdf: Callable[[Array], Array]
    sf: Callable[[Array], Array]
    #: a point inside (lo, hi) near the bulk of the mass, used to start searches
    centre: float
    #: the points between which cdf and sf are quick to evaluate (a lattice's whole tail sums
    #: end there: kinds/discrete_gaussian.py); a tail scan stops at them before going on
    quick: tuple[float, float] = (-math.inf, math.inf)
    #: (family, parameters): ``family(which, t, params)`` gives cdf ("cdf") or sf ("sf") at t
    #: with each point's own row's parameters (``params``: one row of them per point), the
    #: same values as this part's own functions; None: no such family (discretize's tail scans
    #: of many rows together, tails_batch.py)
    family: tuple[Callable[[str, Array, tuple[Array, ...]], Array], tuple[float, ...]] | None = None
    #: what one evaluation of cdf or sf costs, in evaluations of a plain kind's (the cost model's
    #: unit: numerics/pricing.py prices a cell edge at that): a mixture's, its parts' and a little
    #: more (pairs/revealed_mixture.py)
    cost: float = 1.0

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
            # (losses up to kinds.base's BLATANT_LOSS, 1e12 nats, are finite, and their tails
            # reach further: a shuffled Gaussian at noise 1e-6 has its mass near 5e11 and a
            # tail to 1e14, whatever the start guess says; such a span then fails as too wide
            # for any grid, with the message that says so)
            if step > 1e16 + abs(start):
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


@dataclass(frozen=True, slots=True)
class PRV:
    """A privacy loss random variable Y (under P)."""

    atoms: tuple[tuple[float, float], ...]
    inf_mass: float
    cont: Continuous | None
    mean: float
    mean_err: float

    @property
    def finite_mass(self) -> float:
        return 1.0 - self.inf_mass

    @property
    def max_loss(self) -> float:
        """The largest value Y takes: the highest atom or the continuous part's upper end
        (inf with mass at +infinity or an unbounded continuous part)."""
        if self.inf_mass > 0:
            return math.inf
        top = max((loc for loc, m in self.atoms if m > 0), default=-math.inf)
        if self.cont is not None and self.cont.mass > 0:
            top = max(top, self.cont.hi)
        return top

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




