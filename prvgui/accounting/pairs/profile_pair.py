"""From finitely many (eps, delta) guarantees to the pair of distributions that realises them.

A mechanism known to be (eps_i, delta_i)-DP for i = 1..m (in both orders of every
neighbouring pair) is f-DP for the tradeoff function those points imply,

    f(a) = max_i max(0, 1 - delta_i - e^{eps_i} a, e^{-eps_i} (1 - delta_i - a)),   a in [0, 1]

(Dong, Roth, Su 2019, "Gaussian differential privacy", Sec. 2: (eps, delta)-DP is
f_{eps, delta}-DP, and satisfying several of them is satisfying their maximum). f is convex,
continuous, non-increasing, at most 1 - a and symmetric (f = f^-1), so it is the tradeoff
function of a pair of distributions (ibid., Sec. 2, the characterisation of tradeoff functions);
because f is piecewise linear with slopes -e^{+-eps_i} (and 0),
that pair is discrete: its privacy loss takes the values +-eps_i, plus +infinity under P with
probability 1 - f(0) = min_i delta_i (Doroshenko, Ghazi, Kamath, Kumar, Manurangsi, "Connect the
dots", PETS 2022, Sec. 3; Zhu, Dong, Wang, "Optimal accounting of differential privacy via
characteristic function", AISTATS 2022, Sec. 3: every tradeoff function has a dominating pair).
Every pair satisfying all the points is a post-processing of it (its tradeoff is >= f), so its
k-fold composition, adaptive or not and with any other rows, is an upper bound on the truth
(Dong, Roth, Su 2019, Sec. 3, their composition theorem). That makes it the least pair one may compose for a mechanism
known only through these points.

Its privacy profile: at each eps_i it is delta_i exactly when the point is not implied by the
others (a point above the profile the other points imply is loose and gets the smaller value);
between two neighbouring points it is linear in e^eps (the chord; every privacy profile is
convex in e^eps, so the chord is the largest profile through the points); beyond the last point
it stays at min_i delta_i (the mass at +infinity).

Construction (exact). The part of f left of its fixed point a* = f(a*) has slopes <= -1 and is
the upper envelope of the lines L_i(a) = 1 - delta_i - x_i a, x_i = e^{eps_i}; the part right of
a* is its mirror image. A segment of L_j over [a_l, a_r] (left of a*) is an outcome with
Q-probability q = a_r - a_l and P-probability x_j q: a loss eps_j; its mirror is an outcome with
P-probability q and loss -eps_j. The envelope, a* and the segment lengths are computed exactly,
in integers (the floats delta_i and x_i times fixed powers of two), where x_i is e^{eps_i} rounded UP (so each
line lies at or below the true one and f at or below the true f: the pair can only be less
private), and each mass is rounded once to the nearest float (half an ulp, well inside the
accuracy ``discretize.mass_rounding`` assumes of atoms). The positive losses are reported at
log(x_i) rounded up, the negative ones at -eps_i >= -log(x_i): every loss at or above the
pair's, so delta can only grow.
"""
from __future__ import annotations

import math
from typing import Any, Iterable, cast

from .prv import PRV, point_mass
from ..core.validate import check_number

__all__ = ["MAX_POINTS", "EPS_MAX", "check_points", "implied_points", "profile_prv", "profile_delta"]

#: the most points a profile may have (the exact construction is linear in them, after a sort)
MAX_POINTS = 20_000
#: the largest epsilon of a point (e^eps must be a float)
EPS_MAX = 700.0


def check_points(points: object, name: str = "points") -> tuple[tuple[float, float], ...]:
    """Untrusted (eps, delta) points, validated, as a tuple sorted by eps.

    Each point is a pair of finite numbers with eps in [0, EPS_MAX] and delta in [0, 1]; the eps values
    are distinct; and delta does not increase with eps (a privacy profile is non-increasing:
    a point that breaks this is most likely a typing error, e.g. the two columns swapped).
    Messages name the field and show the bad value."""
    if isinstance(points, (str, bytes)) or not hasattr(points, "__len__"):
        raise ValueError(f"{name} must be a list of [epsilon, delta] pairs, got {points!r}")
    if len(points) == 0:
        raise ValueError(f"{name} must hold at least one [epsilon, delta] pair")
    if len(points) > MAX_POINTS:
        raise ValueError(f"{name} may hold at most {MAX_POINTS} pairs, got {len(points)}")
    out = []
    # (untrusted: a list of pairs in practice; anything else fails with the messages below)
    for i, p in enumerate(cast(Iterable[Any], points)):
        if isinstance(p, (str, bytes)) or not hasattr(p, "__len__") or len(p) != 2:
            raise ValueError(f"{name}[{i}] must be a pair [epsilon, delta], got {p!r}")
        eps = check_number(f"{name}[{i}] epsilon", p[0], 0.0, EPS_MAX)
        delta = check_number(f"{name}[{i}] delta", p[1], 0.0, 1.0)
        out.append((eps, delta))
    out.sort()
    for (e0, d0), (e1, d1) in zip(out, out[1:]):
        if e0 == e1:
            raise ValueError(f"{name}: epsilon {e0:g} appears twice; give each epsilon once")
        if d1 > d0:
            raise ValueError(f"{name}: delta must not increase with epsilon (a privacy profile is "
                             f"non-increasing), got delta {d0:g} at epsilon {e0:g} but {d1:g} at "
                             f"epsilon {e1:g}")
    return tuple(out)


def implied_points(points: "tuple[tuple[float, float], ...]") -> tuple[tuple[float, float], ...]:
    """The points of a list of (eps, delta) guarantees (each finite, eps >= 0, delta in [0, 1], in
    any order) that are not implied by another, sorted by eps: what :func:`check_points` accepts
    and :func:`profile_prv` turns into the same pair as the whole list.

    (eps0, delta0) implies (eps1, delta1) when eps0 <= eps1 and delta0 <= delta1 (its tradeoff
    function is at least as large), so dropping (eps1, delta1) leaves the maximum of the tradeoff
    functions unchanged. Points with delta = 1 say nothing and are dropped. A point with eps above
    EPS_MAX (e^eps is no float) is dropped too: fewer points can only make the pair less private.
    An empty result means no privacy at all."""
    best: list[tuple[float, float]] = []
    for eps, delta in sorted(points):
        if delta >= 1.0 or eps > EPS_MAX:
            continue
        if best and delta >= best[-1][1]:
            continue  # implied by the last kept point (smaller or equal eps, smaller or equal delta)
        best.append((eps, delta))
    return tuple(best)


def _x_up(eps: float) -> float:
    """e^eps rounded up: libm's exp is within an ulp, two steps up cover it (1 exactly at 0)."""
    if eps == 0:
        return 1.0
    return math.nextafter(math.nextafter(math.exp(eps), math.inf), math.inf)


def _envelope(lines: list[tuple[int, int, int]]) -> list[tuple[int, int, int]]:
    """The lines (x, c, index) of c - x a that form the upper envelope on a >= 0, left to right.

    x and c are integers (the floats times fixed powers of two: every test below is homogeneous
    in each, so exact). ``lines`` are sorted by x, steepest first, with distinct x. A line is
    dropped when the next one is at least as high at a = 0 (and not steeper), or overtakes the
    line before it no later than it does."""
    hull: list[tuple[int, int, int]] = []
    for x, c, i in lines:
        while hull:
            xt, ct, _ = hull[-1]
            if c >= ct:
                hull.pop()
                continue
            if len(hull) >= 2:
                x2, c2, _ = hull[-2]
                # crossing of hull[-2] with the new line <= its crossing with the top line
                if (c2 - c) * (x2 - xt) <= (c2 - ct) * (x2 - x):
                    hull.pop()
                    continue
            break
        hull.append((x, c, i))
    return hull


#: the floats as integers: x >= 1 times 2^52, c = 1 - delta in [0, 1] times 2^1074 (both exact)
_X_BITS, _C_BITS = 52, 1074


def profile_prv(points: object) -> PRV:
    """The privacy loss (under P) of the least pair satisfying every (eps, delta) point.

    The pair is symmetric (its two orders have the same PRV), so this one PRV serves both
    orders. See the module docstring for the construction and its guarantees."""
    pts = check_points(points)
    d_min = min(d for _, d in pts)
    if d_min >= 1.0:
        return point_mass(math.inf)  # no point says anything: not private
    by_x: dict[int, tuple[int, int]] = {}
    for i, (eps, delta) in enumerate(pts):
        xn, xd = _x_up(eps).as_integer_ratio()  # denominators are powers of two: exact
        dn, dd = delta.as_integer_ratio()
        x, c = xn * (2 ** _X_BITS // xd), 2 ** _C_BITS - dn * (2 ** _C_BITS // dd)
        if x not in by_x or c > by_x[x][0]:
            by_x[x] = (c, i)
    hull = _envelope(sorted(((x, c, i) for x, (c, i) in by_x.items()), reverse=True))
    # breakpoints a_0 = 0 < a_1 < ...; the fixed point a* lies on the first segment whose line
    # meets the diagonal before the next breakpoint (f(a) - a decreases strictly). As fractions
    # (numerator, denominator) in units of 2^(X_BITS - C_BITS): a breakpoint is
    # (c - c1) / (x - x1) and a* = c / (2^X_BITS + x). A segment's Q-mass is q = its length, its
    # P-mass x q; int / int rounds correctly, so each mass is within half an ulp.
    masses: dict[float, float] = {}
    ln, ld = 0, 1
    for n, (x, c, i) in enumerate(hull):
        en, ed = c, 2 ** _X_BITS + x
        done = n + 1 == len(hull)
        if not done:
            x1, c1, _ = hull[n + 1]
            rn, rd = c - c1, x - x1
            done = en * rd <= rn * ed
            if not done:
                en, ed = rn, rd
        qn, qd = en * ld - ln * ed, (ed * ld) << (_C_BITS - _X_BITS)
        eps = pts[i][0]
        if eps == 0:
            masses[0.0] = masses.get(0.0, 0.0) + 2 * qn / qd
        else:
            up = math.nextafter(math.log(x / 2 ** _X_BITS), math.inf)
            masses[up] = masses.get(up, 0.0) + qn * x / (qd << _X_BITS)
            masses[-eps] = masses.get(-eps, 0.0) + qn / qd
        if done:
            break
        ln, ld = en, ed
    atoms = tuple(sorted((loc, m) for loc, m in masses.items() if m > 0))
    mean = math.fsum(loc * m for loc, m in atoms)
    size = math.fsum(abs(loc) * m for loc, m in atoms)
    return PRV(atoms, d_min, None, mean, 8 * 2.0 ** -52 * size + 1e-300)


def profile_delta(points: object, eps: float) -> float:
    """delta(eps) of the pair :func:`profile_prv` builds (its PRV's E[(1 - e^{eps - Y})_+])."""
    return profile_prv(points).delta(eps)
