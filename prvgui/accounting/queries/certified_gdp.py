"""Certified mu-GDP: the smallest mu for which the composition is provably mu-GDP, and how well
the Gaussian curve G_mu fits it (docs/method.md, "Certified mu-GDP").

A pair is mu-GDP (Dong, Roth, Su 2022) when its tradeoff function is at least G_mu, which is
equivalent to delta(eps) <= delta_mu(eps) at every eps >= 0 in each order of the pair (both
orders: G_mu is symmetric, and delta at negative eps is the other order's). Three things make
that provable for every eps, not only where the accountant resolves delta:

* on a grid eps_0 = 0 < eps_1 < ... the interval [eps_i, eps_(i+1)] is covered when
  D_i <= delta_mu(eps_(i+1)), with D_i an upper bound on delta(eps_i) (both curves decrease);
  D_i is the smallest of the certified profile's upper end, the RDP accountant's bound
  (comparisons.rdp_delta_curve, valid at every eps) and the zCDP bound below;
* beyond the largest loss the rows can take (Accountant.loss_cap) delta is 0;
* where losses are unbounded, each row's Gaussian tail (Mechanism.tail_rho: D_alpha <= rho alpha
  at every alpha; pure-DP rows eps^2 / 2, Bun and Steinke 2016) gives rho for the composition and
  delta(eps) <= U(eps) = exp(-(eps - rho)^2 / (4 rho)) / alpha* with alpha* = (eps + rho) / (2 rho)
  (the RDP conversion of Canonne, Kamath, Steinke 2020 at alpha*). Mills' ratio gives
  delta_mu(eps) >= L(eps) = phi(a) (a mu - 1) / ((a^2 + 1)(a + mu)), a = eps / mu - mu / 2 > 1 / mu,
  and log L - log U has derivative at least eps kappa - 1 / mu - 1 / mu^2, kappa = 1 / (2 rho)
  - 1 / mu^2: from eps_1 = (1 / mu + 1 / mu^2) / kappa on it increases, so L >= U at eps_1 covers
  the rest. (Such a tail needs mu > sqrt(2 rho): DP-SGD is mu-GDP only at about the unsampled
  Gaussian's mu, because of tests at astronomically small false-positive rates.)

``resolved_mu`` is the mu the grid alone asks for where delta is at least FLOOR (what
gdp-numeric and Gomez et al. 2025 report, from error rates above 1e-10): a description of the
curve, not a guarantee. The regret (Gomez et al.) is the smallest r with f(a + r) - r <= G_mu(a)
at every a, on the optimistic side of the certified tradeoff curve (an upper bound on the
true curve's).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.special import log_ndtr, ndtr, ndtri

from .accountant import Accountant
from .comparisons import rdp_delta_curve
from .curves import tradeoff_bounds
from ..numerics.reuse import prv_of

#: additive error level of the profiles behind the fit (as risk.LEVEL)
LEVEL = 1e-12
#: resolved_mu looks at the grid where delta is at least this
FLOOR = 1e-10
#: a regret above this gets a sentence: G_mu is then a poor summary of the curve
POOR_FIT = 0.01
#: the mu searched (a mu-GDP claim above it says nothing a reader can use)
MU_MAX = 1e4
_REL = 1e-9  # relative margin for the float evaluation of delta_mu
RHO_FLOOR = 1e-200


@dataclass(frozen=True)
class GdpFit:
    """mu: the composition is mu-GDP (certified; inf: at no finite mu; None: the tail could not
    be certified, see ``note``). regret: at most this (None with mu). resolved_mu: the mu asked
    for where delta >= FLOOR (not a guarantee). exact: a closed form. tail: how the tests beyond
    the accountant's resolution were covered."""

    mu: float | None
    regret: float | None
    resolved_mu: float | None
    exact: bool
    tail: str
    note: str = ""
    floor: float = FLOOR

    def as_dict(self) -> dict:
        return {"mu": self.mu, "regret": self.regret, "resolved_mu": self.resolved_mu, "floor": self.floor,
                "exact": self.exact, "tail": self.tail, "note": self.note}


def log_delta_mu(mu: np.ndarray | float, eps: np.ndarray | float) -> np.ndarray:
    """log delta_mu(eps) of mu-GDP: log(Phi(-a) - e^eps Phi(-b)), a, b = eps / mu -+ mu / 2."""
    mu = np.asarray(mu, dtype=float)
    eps = np.asarray(eps, dtype=float)
    a, b = eps / mu - mu / 2, eps / mu + mu / 2
    la, lb = log_ndtr(-a), log_ndtr(-b)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        return la + np.log1p(-np.minimum(np.exp(eps + lb - la), 1.0))


def _mu_for(d: np.ndarray, eps: np.ndarray) -> np.ndarray:
    """The smallest mu (to a relative 1e-9, rounded up) with delta_mu(eps) >= d, elementwise
    (0 where d <= 0; inf where even MU_MAX falls short)."""
    out = np.zeros(d.shape)
    todo = d > 0
    if not todo.any():
        return out
    need = np.log(d[todo]) + math.log1p(_REL)  # delta_mu must beat d with a margin for its rounding
    e = eps[todo]
    lo, hi = np.full(e.shape, -14.0), np.full(e.shape, math.log(MU_MAX))
    ok_hi = log_delta_mu(np.exp(hi), e) >= need
    for _ in range(44):  # (the log range 23 over 2^44: mu to 1e-12, rounded up)
        mid = 0.5 * (lo + hi)
        good = log_delta_mu(np.exp(mid), e) >= need
        hi = np.where(good, mid, hi)
        lo = np.where(good, lo, mid)
    out[todo] = np.where(ok_hi, np.exp(hi) * (1 + 1e-9), math.inf)
    return out


def _log_zcdp(rho: float, eps: np.ndarray) -> np.ndarray:
    """log of the delta bound of rho-zCDP at alpha* = (eps + rho) / (2 rho) (0 where alpha* <= 1)."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        al = (eps + rho) / (2 * rho)
        v = -(eps - rho) ** 2 / (4 * rho) - np.log(al) + (al - 1) * np.log1p(-1 / al)
    return np.where(al > 1, v, 0.0)


def _log_mills_low(mu: float, eps: float) -> float:
    """log L(eps), the Mills-ratio lower bound on delta_mu(eps) (needs a > 1 / mu)."""
    a = eps / mu - mu / 2
    return (-0.5 * a * a - 0.5 * math.log(2 * math.pi) + math.log(a * mu - 1) - math.log(a * a + 1)
            - math.log(a + mu))


def _row_tails(acc: Accountant) -> tuple[float | None, str]:
    """rho of the composition's Gaussian tail (None: a row has none) and the row lacking one."""
    total = 0.0
    for i, r in enumerate(acc.rows):
        m = r.mechanism
        if r.count == 0 or m.is_trivial():
            continue
        rho = m.tail_rho()
        if rho is None:  # bounded losses: pure eps-DP, eps the larger loss of the two orders
            top = max(prv_of(m, o).max_loss for o in m.orders())
            if not math.isfinite(top):
                return None, f"row {i + 1} ({m.title})"
            rho = 0.5 * top * top
        total += r.count * rho
    # any larger rho is as valid; a floor keeps the tail's arithmetic finite when the rows add
    # (almost) no loss, e.g. noise of 1e300
    return max(total, RHO_FLOOR), ""


def _grid(top: float) -> np.ndarray:
    """eps from 0 to ``top``: steps of 0.002 to 20, then a ratio of 1.0005."""
    fine = np.arange(0.0, min(top, 20.0), 0.002)
    if top <= 20.0:
        return np.append(fine, top)
    far = np.geomspace(20.0, top, max(2, int(math.log(top / 20.0) / math.log(1.0005)) + 2))
    return np.concatenate([fine, far])


class _Bounds:
    """D(eps): the best upper bound on delta(eps) (max over the orders' profiles, the zCDP tail,
    0 past the largest loss), and its numerical part alone."""

    def __init__(self, acc: Accountant, rho: float | None, cap: float, level: float) -> None:
        self.profiles = acc.profiles(level)
        self.rho, self.cap, self.rows = rho, cap, acc.rows
        #: resolved_mu looks where delta is at least this: FLOOR, or 100 times the profiles'
        #: additive error where float64 could not reach the level asked for
        self.floor = max([FLOOR] + [100 * p.err_abs * p.hi_factor for p in self.profiles])

    def __call__(self, eps: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        num = np.zeros(eps.shape)
        for p in self.profiles:
            num = np.maximum(num, p.delta(eps)[2])
        d = num.copy()
        rdp = rdp_delta_curve(self.rows, eps)
        if rdp is not None:
            d = np.minimum(d, rdp)
        if self.rho is not None and self.rho > 0:
            d = np.minimum(d, np.exp(_log_zcdp(self.rho, eps)))
        d = np.where(eps >= self.cap, 0.0, d)
        return d, num


def _binding(mus: np.ndarray, eps: np.ndarray, bounds: _Bounds) -> tuple[float, float, int]:
    """The grid's mu (the largest over its intervals), the resolved mu, and the binding index."""
    d, num = bounds(eps[:-1])
    mu_i = _mu_for(d, eps[1:])
    res = _mu_for(np.where(num >= bounds.floor, d, 0.0), eps[1:])
    k = int(np.argmax(mu_i))
    return float(mu_i[k]), float(res.max()), k


def _tail_ok(mu: float, rho: float) -> float | None:
    """eps_1 from which the zCDP tail stays below delta_mu, if L >= U holds there, else None."""
    kappa = 1 / (2 * rho) - 1 / (mu * mu)
    if kappa <= 0:
        return None
    e1 = max((1 / mu + 1 / (mu * mu)) / kappa, mu * mu / 2 + 1 + 1e-9, rho * (1 + 1e-9))
    if _log_mills_low(mu, e1) >= float(_log_zcdp(rho, np.array([e1]))[0]):
        return e1
    return None


def _regret(acc: Accountant, mu: float, level: float) -> float:
    """Gomez et al.'s regret of G_mu against the optimistic side of the certified curve."""
    alpha = np.unique(np.concatenate([np.geomspace(1e-12, 1e-3, 200), np.linspace(1e-3, 1.0, 1000)]))
    f = np.minimum.reduce([tradeoff_bounds(p, alpha)[2] for p in acc.profiles(level)])
    g = ndtr(-ndtri(alpha) - mu)
    lo, hi = 0.0, 1.0
    for _ in range(40):
        mid = 0.5 * (lo + hi)
        if np.all(np.interp(np.minimum(alpha + mid, 1.0), alpha, f) - mid <= g + 1e-15):
            hi = mid
        else:
            lo = mid
    return hi


def gdp_fit(acc: Accountant, level: float = LEVEL) -> GdpFit:
    """Certified mu-GDP of the accountant's composition (module docstring), from its profiles at
    additive error ``level``."""
    active = [r for r in acc.rows if r.count > 0 and not r.mechanism.is_trivial()]
    if not active:
        return GdpFit(0.0, 0.0, 0.0, True, "closed form", "")
    if acc.has_blatant():
        return GdpFit(math.inf, None, math.inf, True, "closed form", "a row is not private at all")
    mus = [r.mechanism.gaussian_mu() for r in active]
    if all(m is not None for m in mus):
        mu = math.sqrt(math.fsum(r.count * m * m for r, m in zip(active, mus)))  # type: ignore[operator]
        return GdpFit(mu, 0.0, mu, True, "closed form", "")
    _, shares = acc.infinite_mass()
    # (a row with a Gaussian tail bound may carry a mass at +inf from its discretisation only)
    spent = [i for i, p in shares if p > 0 and acc.rows[i - 1].mechanism.tail_rho() is None]
    if spent:
        which = f"row {spent[0]} spends" if len(spent) == 1 else \
            f"rows {', '.join(str(i) for i in spent)} spend"
        return GdpFit(math.inf, None, None, False, "none",
                      f"{which} delta at every epsilon (a mass at infinite loss): no finite mu holds")
    cap = acc.loss_cap()
    rho, lacking = _row_tails(acc)
    bounds = _Bounds(acc, rho, cap, level)
    if math.isfinite(cap):
        eps = _grid(cap)
        mu, resolved, k = _binding(np.zeros(0), eps, bounds)
        return _answer(acc, mu, resolved, "bounded loss", eps[k + 1], level, bounds.floor)
    if rho is None:
        eps = _grid(60.0)
        _, resolved, _ = _binding(np.zeros(0), eps, bounds)
        return GdpFit(None, None, resolved, False, "none",
                      f"{lacking} has unbounded losses and no Gaussian tail bound here: mu-GDP is "
                      "not certified beyond the profile's resolution", bounds.floor)
    top = 60.0
    mu = resolved = 0.0
    k, eps = 0, _grid(top)
    for _ in range(200):
        eps = _grid(top)
        mu_grid, resolved, k = _binding(np.zeros(0), eps, bounds)
        mu = max(mu_grid, math.sqrt(2 * rho) * (1 + 1e-6))
        while mu < MU_MAX and _tail_ok(mu, rho) is None:
            mu *= 1.001
        e1 = _tail_ok(mu, rho) if mu < MU_MAX else None
        if e1 is None:
            return GdpFit(math.inf, None, resolved, False, "gaussian tail", "no mu below 10^4 can be certified",
                          bounds.floor)
        if e1 <= top:
            break
        top = e1 * 1.01
    where = eps[k + 1] if mu <= mu_grid * (1 + 1e-9) else math.inf
    return _answer(acc, mu, resolved, "gaussian tail", where, level, bounds.floor)


def _up(x: float, digits: int = 4) -> str:
    """``x`` to ``digits`` significant digits, rounded up (an upper bound stays one)."""
    if x <= 0 or not math.isfinite(x):
        return f"{x:g}"
    scale = 10.0 ** (digits - 1 - math.floor(math.log10(x)))
    return f"{math.ceil(x * scale - 1e-9) / scale:.{digits}g}"


def _answer(acc: Accountant, mu: float, resolved: float, tail: str, where: float, level: float,
            floor: float) -> GdpFit:
    if mu > MU_MAX:
        return GdpFit(math.inf, None, resolved, False, tail, "no mu below 10^4 can be certified", floor)
    regret = _regret(acc, mu, level)
    note = ""
    if regret > POOR_FIT:
        fpr = 0.0 if math.isinf(where) else float(ndtr(-(where / mu + mu / 2)))
        at = ("tests at vanishing false-positive rates (the rows' Gaussian tails)" if fpr < 1e-300
              else f"tests at false-positive rates near {fpr:.1g}")
        note = (f"G_mu fits this curve poorly (regret {_up(regret, 3)}): mu = {_up(mu)} is set by {at}; "
                f"where delta >= {floor:.2g} mu = {_up(resolved)} suffices; report the curve or epsilon "
                "at several deltas beside mu")
    return GdpFit(mu, regret, resolved, False, tail, note, floor)
