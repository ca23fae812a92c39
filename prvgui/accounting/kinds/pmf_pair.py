"""Bring your own pair: two probability vectors p and q over the same finitely many outcomes.

The user states that (P, Q) = (p, q) is a dominating pair of ONE run of the mechanism for one
neighbouring step under the relation the composition declares (add/remove or replace-one): for
every pair of neighbouring datasets the mechanism's output distributions are a post-processing
of (P, Q) (and, under add/remove, of (Q, P) for the other direction). Its privacy loss under P is

    Y = log(p_i / q_i)   with probability p_i,

with q_i = 0 < p_i giving Y = +infinity (that mass is the pair's delta floor) and outcomes with
p_i = 0 carrying no P-mass (Gopi, Lee, Wutschitz 2021, Def. 3.1). Under add/remove both orders
(P, Q) and (Q, P) are composed, unless the user says the pair is symmetric (``symmetric`` "yes":
P vs Q is Q vs P, so one order is enough); under replace-one the relation is symmetric and the
user's pair is still composed in both orders unless marked symmetric (never less private).

Group privacy (a person with several records) is not derivable from a pair alone, so a group
size above 1 is refused: give the pair for the whole group instead.

Numbers. p and q are divided by their sums (each must be within 1e-9 of 1 already), so that they
are distributions exactly. Each loss is computed as log p_i - log q_i + log S_q - log S_p and
raised by a bound on its rounding error, so every loss is at or above the pair's and delta can
only grow (raising a loss is a valid pessimism: delta of any composition is increasing in
every loss). Equal losses are merged into one atom.

Closed forms for the comparison accountants: an (eps, delta) guarantee of one run, exact for
the pair (eps = the largest finite loss over both orders, delta = the larger mass at +infinity:
delta(eps) is exactly that mass, since no finite loss exceeds eps), and its Renyi divergence,
D_a(P || Q) = log(sum_i p_i^a q_i^{1 - a}) / (a - 1), the larger over both orders, rounded up
(none when an order has mass at +infinity: the comparisons then use the (eps, delta) guarantee).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ..pairs.prv import PRV, TRIVIAL, point_mass
from .base import Choice, Mechanism, Vector, VectorError, param
from ..core.values import Relation, as_relation

_U = 2.0 ** -52

_P = Vector("Probabilities p", "sum to 1",
            "the mechanism's output distribution P on one dataset: one probability per outcome, summing "
            "to 1 (within 1e-9); typed as numbers separated by commas or spaces", "p", (0.75, 0.25), hi=1.0,
            total=1.0, entries="probabilities")
_Q = Vector("Probabilities q", "sum to 1",
            "the output distribution Q on the neighbouring dataset, over the same outcomes in the same "
            "order as p", "q", (0.25, 0.75), hi=1.0, total=1.0, entries="probabilities")
_SYMMETRIC = Choice("Pair is symmetric", "", "whether P vs Q is the same as Q vs P: \"no\" composes both "
                    "orders (safe for any pair); \"yes\" is your statement that the pair is symmetric, "
                    "and only P vs Q is composed", "", "no",
                    choices=(("no", "Both orders: no statement about symmetry"),
                             ("yes", "Symmetric: I state that P vs Q equals Q vs P")))


@lru_cache(maxsize=256)
def pair_prv(p: tuple[float, ...], q: tuple[float, ...]) -> PRV:
    """The privacy loss log(dP/dQ) under P of two probability vectors (each summing to 1 within
    1e-9; normalised here), every loss rounded up."""
    sp, sq = math.fsum(p), math.fsum(q)
    pa, qa = np.asarray(p, dtype=float), np.asarray(q, dtype=float)
    inf = min(1.0, math.fsum((pa[(pa > 0) & (qa == 0)] / sp).tolist()))
    if inf >= 1.0:
        return point_mass(math.inf)
    both = (pa > 0) & (qa > 0)
    pb, qb = pa[both], qa[both]
    lp, lq = np.log(pb), np.log(qb)
    lsq, lsp = math.log(sq), math.log(sp)
    y = lp - lq + (lsq - lsp)
    # each log within a few ulps of its size, a few roundings of the sum: raise y past them
    err = 4 * _U * (np.abs(lp) + np.abs(lq) + 2 * abs(lsq) + 2 * abs(lsp) + np.abs(y))
    y = np.nextafter(y + err, math.inf)
    y[(pb == qb) & (sp == sq)] = 0.0  # the same probability on both sides: no loss, exactly
    locs, where = np.unique(y, return_inverse=True)
    mass = np.bincount(where, weights=pb / sp, minlength=locs.size)
    keep = mass > 0
    atoms = tuple(zip(locs[keep].tolist(), mass[keep].tolist()))
    if not atoms or (len(atoms) == 1 and atoms[0][0] == 0.0 and inf == 0):
        return TRIVIAL
    mean = math.fsum((locs[keep] * mass[keep]).tolist())
    size = math.fsum((np.abs(locs[keep]) * mass[keep]).tolist())
    return PRV(atoms, inf, None, mean, 8 * _U * size * (1 + len(atoms) * _U) + 1e-300)


def atoms_rdp(prv: PRV, orders: np.ndarray) -> np.ndarray:
    """Renyi divergence at each order a > 1 of a pair given by its discrete privacy loss under P
    (atoms (y, m)): log(sum m e^{(a-1) y}) / (a - 1), rounded up; inf with mass at +infinity."""
    a = np.asarray(orders, dtype=float)
    if prv.inf_mass > 0 or prv.cont is not None:
        return np.full(a.shape, math.inf)
    if not prv.atoms:
        return np.zeros(a.shape)
    y = np.array([loc for loc, _ in prv.atoms])
    lm = np.log(np.array([m for _, m in prv.atoms]))
    t = lm[None, :] + (a[:, None] - 1.0) * y[None, :]
    top = t.max(axis=1)
    s = np.log(np.exp(t - top[:, None]).sum(axis=1)) + top
    # exp/log/sum each within a few ulps relative; the terms' sizes bound the absolute error
    err = 8 * _U * (np.abs(t).max(axis=1) + y.size + np.abs(s))
    out = np.maximum((s + err) / (a - 1.0), 0.0)
    return np.where(a > 1, out, math.inf)


@dataclass(frozen=True, slots=True)
class PmfPair(Mechanism):
    """Your own pair of output distributions p and q over finitely many outcomes."""

    kind = "pmf_pair"
    examples = ({"p": (0.5, 0.3, 0.2), "q": (0.2, 0.3, 0.5)}, {"p": (0.9, 0.1, 0.0), "q": (0.5, 0.25, 0.25)},
                {"p": (0.6, 0.4), "q": (0.4, 0.6), "symmetric": "yes"})
    title = "Pair of distributions (p, q)"
    summary = ("A mechanism given by its two output distributions p and q over the same outcomes, "
               "for one neighbouring step (one record).")
    menu_order = 90

    p: tuple[float, ...] = param(_P)
    q: tuple[float, ...] = param(_Q)
    # (a "yes"/"no" field in place of Mechanism's bool class constant ``symmetric``, which this
    # kind's ``orders`` reads instead; mypy allows no field over a ClassVar of another type)
    symmetric: str = param(_SYMMETRIC, default="no", kw_only=True)  # type: ignore[assignment, misc]

    def __post_init__(self) -> None:
        Mechanism.__post_init__(self)
        if len(self.p) != len(self.q):
            raise VectorError(_Q.title, f"a list of as many probabilities as p ({len(self.p)})", None,
                              field="q", plain=f"it has {len(self.q)}")

    def orders(self, relation=None) -> tuple[str, ...]:
        """Both orders, unless the user states the pair is symmetric (the ``symmetric`` field)."""
        self.under(as_relation(relation))
        return ("remove",) if self.symmetric == "yes" else ("remove", "add")

    def _prv(self, order: str) -> PRV:
        return pair_prv(self.p, self.q) if order == "remove" else pair_prv(self.q, self.p)

    def under(self, relation: Relation) -> "PmfPair":
        """The pair is stated for one neighbouring step under the relation chosen: the same pair.
        Groups of several records are refused (not derivable from the pair alone)."""
        if relation.group_size == 1:
            return self
        raise ValueError(f"{self.title} is stated for one record; group privacy of a pair cannot be "
                         "derived from the pair alone: set Records per person to 1, or enter the pair "
                         "of distributions for the whole group")

    def is_trivial(self) -> bool:
        return all(self._prv(o) is TRIVIAL for o in self.orders())

    def is_blatant(self) -> bool:
        return any(self._prv(o).inf_mass >= 1 for o in self.orders())

    def eps_delta(self) -> tuple[float, float]:
        prvs = [self._prv(o) for o in ("remove", "add")]
        eps = max([0.0] + [loc for prv in prvs for loc, _ in prv.atoms if loc > 0])
        return (eps, max(prv.inf_mass for prv in prvs))

    def rdp(self, orders: np.ndarray) -> np.ndarray | None:
        """The larger Renyi divergence of the two orders; None when an order has mass at +infinity
        (RDP does not describe the pair: the comparisons then use ``eps_delta``, as for approx_dp)."""
        prvs = [self._prv("remove"), self._prv("add")]
        if any(prv.inf_mass > 0 for prv in prvs):
            return None
        return np.maximum(atoms_rdp(prvs[0], orders), atoms_rdp(prvs[1], orders))

    def gdp_mu2(self) -> float | None:
        """None with mass at +infinity (GDP does not describe it, as for approx_dp)."""
        if any(self._prv(o).inf_mass > 0 for o in ("remove", "add")):
            return None
        return Mechanism.gdp_mu2(self)
