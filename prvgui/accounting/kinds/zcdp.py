"""A mechanism known only to be (xi, rho)-zCDP, through its (eps, delta) profile and the least
pair that realises it.

(xi, rho)-zCDP (Bun, Steinke 2016, "Concentrated differential privacy: simplifications,
extensions, and lower bounds") bounds every Renyi divergence between the outputs on
neighbouring datasets, D_a <= xi + rho a for all a > 1 (so its RDP curve is exactly that; rho-zCDP
is xi = 0). The best (eps, delta) it implies from one order a is (Canonne, Kamath, Steinke 2020,
"The discrete Gaussian for differential privacy", Prop. 12 / Cor. 13)

    delta(eps) = inf_{a > 1} exp((a - 1)(a rho + xi - eps)) / a * (1 - 1/a)^(a - 1).

The log of the bracket is convex in a (its second derivative is 1 / (a (a - 1)) + 2 rho), its
derivative (2a - 1) rho + xi - eps + log(1 - 1/a) increases from -inf to +inf, and we bisect for
its root. Any a gives a valid delta, so the search only decides how tight the value is; the value
at the a found is evaluated with its rounding error added (never less than the true bracket).

A rho-zCDP mechanism is NOT always dominated by the Gaussian with the same rho (the Gaussian
realises D_a = rho a at every order, but other rho-zCDP pairs have larger hockey-stick
divergences at some eps: randomized response at sqrt(2 rho) is rho-zCDP, since eps-DP is
eps^2/2-zCDP, Bun, Steinke 2016, and its delta(0) = tanh(sqrt(rho / 2)) exceeds the Gaussian's), so we do not use the
Gaussian. We sample the profile above at points
eps_i, refined until the chord (linear in e^eps) between neighbours is within a relative 1e-3 of
the profile at the midpoint, and compose the least pair satisfying all the points
(``profile_pair.profile_prv``; Doroshenko et al. 2022, Zhu, Dong, Wang 2022). Every (xi, rho)-
zCDP pair satisfies every sampled point (each delta_i is at least the bound), hence is a
post-processing of that pair; so under adaptive composition, and with any other rows, the
composition of these pairs is at least the truth for EVERY (xi, rho)-zCDP mechanism, worst case
included (Dong, Roth, Su 2019, Sec. 3, composition). For one run its delta is the conversion at every point
that binds, the chord between them, and a little below the conversion near eps = 0 (the first
few points are implied by the others: for a symmetric pair, (eps, delta) at eps > 0 bounds the
total variation below the conversion's delta(0); tighter, and valid). For k >= 2 runs the
composed pairs came out ABOVE the conversion of the composed guarantee k rho (zCDP composes by
adding rho and xi; Bun, Steinke 2016) in every case we measured (rho 0.1, two runs,
delta 1e-6: 3.26 against 3.13; rho 0.01, ten runs: 2.53 against 2.14): a pair per run cannot
carry the zCDP structure across runs. Both are valid upper bounds; the RDP comparison (``rdp``)
reports the latter and the certified number is the smaller one. The profile's points stop where
delta < 1e-40 (or at eps = 700); the rest is a mass at +infinity, i.e. added to delta everywhere
(a rho so large that delta(700) is not small comes out as hardly private at all: safe, and the
RDP comparison then gives the number). rho below 1e-12 is accounted as 1e-12 (a larger rho is a
weaker guarantee: never less private).

Neighbouring relations: rho and xi are stated for the relation chosen (the same pair). A group
of k records: rho-zCDP gives k^2 rho-zCDP (Bun, Steinke 2016, group privacy); with xi > 0 we have no
group bound and say so. The pair is an upper bound only (``tight`` False): for a proven lower
bound, ``attack_pair`` is the Gaussian mechanism with rho = mu^2 / 2, which is rho-zCDP.
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ..pairs.prv import PRV
from ..pairs.profile_pair import profile_prv
from .base import Mechanism, Param, Search, param
from ..core.values import Relation
from .gaussian import Gaussian

_U = 2.0 ** -53
#: the profile's points stop where delta falls below this (the rest joins the mass at +infinity)
DELTA_FLOOR = 1e-40
#: the largest eps sampled (profile_pair's limit)
EPS_CAP = 700.0
#: the chord between neighbouring points is within this relative distance of the profile
CHORD_TOL = 1e-3
#: the smallest rho the profile is computed for (a smaller one is accounted as this)
RHO_FLOOR = 1e-12


def cks_delta(rho: float, xi: float, eps: np.ndarray) -> np.ndarray:
    """The CKS conversion of (xi, rho)-zCDP at each eps, rounded up (an upper bound on it)."""
    u = np.asarray(eps, dtype=float) - xi  # the bracket depends on eps - xi only
    # s = log(a - 1): bisect the increasing derivative (2a - 1) rho - u + log(1 - 1/a)
    lo = np.full(u.shape, -700.0)
    hi = np.log(np.maximum(1.0, (np.abs(u) + 1.0) / rho))  # there the derivative is > 0

    def slope(s: np.ndarray) -> np.ndarray:  # log(1 - 1/a) = -log1p(1 / (a - 1))
        return (2.0 * np.exp(s) + 1.0) * rho - u - np.log1p(np.exp(-s))

    at_one = slope(lo) >= 0  # the infimum is the limit a -> 1: delta = 1
    for _ in range(80):
        mid = 0.5 * (lo + hi)
        neg = slope(mid) < 0
        lo, hi = np.where(neg, mid, lo), np.where(neg, hi, mid)
    a1 = np.exp(hi)  # a - 1
    # log of the bracket: (a - 1)(a rho - u) - log a + (a - 1) log(1 - 1/a), each term accurate
    terms = np.stack([a1 * (1.0 + a1) * rho, -a1 * u, -np.log1p(a1), -a1 * np.log1p(np.exp(-hi))])
    log_d = terms.sum(axis=0)
    log_d += 32 * _U * np.abs(terms).sum(axis=0)  # each term to a few ulps, and the sum
    # (below 1e-300 the value is 1e-300: still an upper bound, never an underflow to 0)
    d = np.clip(np.exp(np.minimum(log_d, 0.0)) * (1 + 8 * _U), 1e-300, 1.0)
    return np.where(at_one, 1.0, d)


def _chord_error(e: np.ndarray, d: np.ndarray, mid: np.ndarray, dm: np.ndarray) -> np.ndarray:
    """Relative excess of the chord (linear in e^eps) over the profile at each midpoint."""
    frac = np.expm1(mid - e[:-1]) / np.expm1(e[1:] - e[:-1])
    chord = d[:-1] + (d[1:] - d[:-1]) * frac
    return (chord - dm) / np.maximum(dm, 1e-300)


def profile_points(rho: float, xi: float) -> tuple[tuple[float, float], ...]:
    """(eps_i, delta_i) on [0, eps_max], refined where the chord is too far above the profile."""
    r = max(rho, RHO_FLOOR)
    top = min(EPS_CAP, xi + r + 2.0 * math.sqrt(r * math.log(1 / DELTA_FLOOR)) + 1.0)
    e = np.linspace(0.0, top, 65)
    d = cks_delta(r, xi, e)
    for _ in range(40):
        mid = 0.5 * (e[:-1] + e[1:])
        dm = cks_delta(r, xi, mid)
        split = _chord_error(e, d, mid, dm) > CHORD_TOL
        if not split.any():
            break
        e = np.concatenate([e, mid[split]])
        d = np.concatenate([d, dm[split]])
        order = np.argsort(e)
        e, d = e[order], d[order]
    d = np.maximum.accumulate(d[::-1])[::-1]  # non-increasing; values only ever raised
    cut = np.flatnonzero(d <= DELTA_FLOOR)
    stop = int(cut[0]) + 1 if cut.size else d.size
    return tuple(zip(e[:stop].tolist(), d[:stop].tolist()))


@lru_cache(maxsize=64)
def zcdp_prv(rho: float, xi: float) -> PRV:
    """The privacy loss of the least pair satisfying the (xi, rho)-zCDP profile's points."""
    return profile_prv(profile_points(rho, xi))


@dataclass(frozen=True, slots=True)
class ZCDP(Mechanism):
    """Any (xi, rho)-zCDP mechanism, via the pair of its (eps, delta) profile."""

    kind = "zcdp"
    examples = ({"rho": 0.01}, {"rho": 2.0, "xi": 0.1})
    title = "zCDP (ρ)"
    menu_order = 85
    tight = False

    rho: float = param(Param("ρ", "nats", "zero-concentrated DP parameter rho (> 0): Renyi divergence "
                             "at order a at most ξ + ρ a", "ρ", 0.1, lo_open=True, hi=1e4,
                             search=Search(True, 1e-8, 1e4)))
    xi: float = param(Param("ξ", "nats", "optional zCDP offset xi (default 0): (ξ, ρ)-zCDP", "ξ", 0.0),
                      default=0.0)

    def _prv(self, order: str) -> PRV:
        return zcdp_prv(self.rho, self.xi)

    def under(self, relation: Relation) -> "ZCDP":
        """rho and xi are stated for the relation chosen: the same pair. A group of k records:
        k^2 rho-zCDP (Bun, Steinke 2016, group privacy), for xi = 0 only."""
        k = relation.group_size
        if k == 1:
            return self
        if self.xi > 0:
            raise ValueError(f"{self.title} with ξ > 0 has no group bound here; set group_size to 1 "
                             "or give a ρ-zCDP guarantee (ξ = 0) for the group")
        return dataclasses.replace(self, rho=self.rho * k * k)

    def attack_pair(self, relation: Relation, variant: int = 0) -> Mechanism:
        """The Gaussian mechanism with mu^2 / 2 = rho: it is rho-zCDP (and (xi, rho)-zCDP)."""
        return Gaussian(1.0, math.sqrt(2.0 * self.under(relation).rho))

    def rdp(self, orders: np.ndarray) -> np.ndarray:
        return self.xi + self.rho * orders

    def tail_rho(self) -> float | None:
        return self.rho if self.xi == 0 else None
