"""Bring your own guarantees: a list of (epsilon, delta) points the mechanism is known to satisfy.

Each point is an (eps, delta)-DP guarantee of one run on its own (in both directions of every
neighbouring pair, for the relation the composition declares), so any list is a valid set of
guarantees: no order or monotonicity is needed. Together they say the mechanism is f-DP for the
largest of the points' tradeoff functions (Dong, Roth, Su 2019, Sec. 2), and the least pair with
that tradeoff function is what we compose (Doroshenko, Ghazi, Kamath, Kumar, Manurangsi, "Connect
the dots", PETS 2022; ``profile_pair.py`` builds it exactly, rounding only towards less privacy).
Every mechanism satisfying the points is a post-processing of that pair, so compositions of it,
adaptive or not and with any other rows, are upper bounds; and the pair itself satisfies every
point, so for a mechanism known only through them nothing smaller can be certified.

Points implied by another point (a smaller or equal epsilon with a smaller or equal delta) change
nothing and are dropped; points with delta = 1 say nothing. A list of only such points means no
privacy at all: the row is reported as not private, never as an error. A point with epsilon above
700 (e^epsilon is no float) is dropped: fewer points can only make the pair less private.

Groups of k records: each point (eps, delta) gives (k eps, delta (e^{k eps} - 1) / (e^eps - 1))
(Vadhan 2017, Lemma 2.2), and the pair of those points is composed.

Comparison accountants: RDP of the discrete pair (its atoms; when the smallest delta is above 0
RDP does not describe it and the comparisons use the point with the smallest delta, as for
approx_dp) and, for basic and advanced composition, that point.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ..pairs.prv import PRV, point_mass
from ..pairs.profile_pair import implied_points, profile_prv
from .approx_dp import group_delta
from .base import Mechanism, Points, param
from ..core.values import Relation
from .pmf_pair import atoms_rdp

_POINTS = Points("Profile points", "[ε, δ] pairs",
                 "(ε, δ) guarantees the mechanism is known to satisfy, each one on its own (any order; "
                 "typed as “ε δ” pairs separated by semicolons or new lines)", "(ε, δ)",
                 ((0.5, 1e-3), (1.0, 1e-5), (2.0, 1e-8)))


@lru_cache(maxsize=64)
def points_prv(points: tuple[tuple[float, float], ...]) -> PRV:
    """The privacy loss of the least pair satisfying every point (no privacy when none says
    anything)."""
    kept = implied_points(points)
    return profile_prv(kept) if kept else point_mass(math.inf)


@dataclass(frozen=True, slots=True)
class PrivacyProfile(Mechanism):
    """Any mechanism known to satisfy a list of (ε, δ) guarantees (its privacy profile's points)."""

    kind = "privacy_profile"
    examples = ({"points": ((0.1, 0.1), (1.0, 1e-3))},)
    title = "Privacy profile (ε, δ points)"
    summary = ("A mechanism known only through (ε, δ) guarantees it satisfies, accounted for by the "
               "least pair that satisfies them all.")
    menu_order = 92

    points: tuple[tuple[float, float], ...] = param(_POINTS)

    def _prv(self, order: str) -> PRV:
        return points_prv(self.points)

    def under(self, relation: Relation) -> "PrivacyProfile":
        """The points are stated for the relation chosen: the same pair. A group of k records:
        every point (eps, delta) becomes (k eps, delta (e^{k eps} - 1) / (e^eps - 1))."""
        k = relation.group_size
        if k == 1:
            return self
        return PrivacyProfile(tuple((e * k, group_delta(e, d, k)) for e, d in self.points))

    def is_trivial(self) -> bool:
        return any(e == 0 and d == 0 for e, d in self.points)

    def is_blatant(self) -> bool:
        return not implied_points(self.points)

    def eps_delta(self) -> tuple[float, float]:
        kept = implied_points(self.points)
        return min(kept, key=lambda p: (p[1], p[0])) if kept else (0.0, 1.0)

    def rdp(self, orders: np.ndarray) -> np.ndarray | None:
        """RDP of the pair; None when it has mass at +infinity (RDP does not describe it: the
        comparisons then add the row's (eps, delta) by basic composition, as for approx_dp)."""
        prv = self._prv("remove")
        return None if prv.inf_mass > 0 else atoms_rdp(prv, orders)

    def gdp_mu2(self) -> float | None:
        """None with mass at +infinity (GDP does not describe it, as for approx_dp)."""
        return None if self._prv("remove").inf_mass > 0 else Mechanism.gdp_mu2(self)
