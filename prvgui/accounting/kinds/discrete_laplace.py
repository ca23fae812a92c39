"""The discrete Laplace (two-sided geometric) mechanism: an integer-valued query of sensitivity
Delta (a whole number) released with noise P(x) = c0 e^{-|x| / t} on the integers, with
c0 = tanh(1 / (2 t)) (the geometric mechanism of Ghosh, Roughgarden, Sundararajan 2009; used by
Google's and OpenDP's libraries; compared with the discrete Gaussian by Canonne, Kamath, Steinke 2020).

Dominating pair. P = Lap_Z(Delta, t), Q = Lap_Z(0, t); write x = 1 / t, r = e^{-x},
e0 = Delta x. Under P, x' = Delta + y with y ~ Lap_Z(0, t), and the loss is
(|Delta + y| - |y|) x, a lattice clipped at +-e0 (eps0-DP, eps0 = Delta / t):
    y >= 0:             Y = e0                  mass 1 / (1 + r)
    y = -i, 0 < i < D:  Y = e0 - 2 i x          mass c0 r^i
    y <= -Delta:        Y = -e0                 mass r^Delta / (1 + r)
(geometric sums: sum_{y >= 0} c0 r^y = 1 / (1 + r)). With I the index i (0 for the top atom,
Delta for the bottom one), P(I >= i) = r^i / (1 + r) for 1 <= i <= Delta: the cdf and sf below
are these closed forms, the sf is at least 1/2 wherever it is not 0. Delta = 1 is randomized
response at eps0 exactly (``exact_eps_delta``: the Kairouz-Oh-Viswanath closed form applies).
* One order suffices: x' -> Delta - x' swaps P and Q and keeps the loss (as for the discrete
  Gaussian); smaller shifts and groups are dominated by the pair at the largest shift, since
  Lap_Z is log-concave (discrete_gaussian.py gives the argument).
* Mean (the KL divergence) and variance in closed form, E[I] = (1 - r^D) / ((1 + r)(e^x - 1)),
  E[Y] = x (D - (1 - r^D) / sinh x), E[I^2] = sum_{i <= D} (2 i - 1) r^i / (1 + r); evaluated in
  decimal arithmetic with 50 digits plus four per decimal digit of 1 / eps0, for the
  cancellations at small eps0 (E[Y] ~ eps0^2 / 2, and the second moment's sums lose twice that).
Truncation: points with i x > 700 (mass at most e^{-700} in all) go to +infinity (lattice.py).
RDP: exact, sum of three geometric parts in log space (rounding added, never subtracted), and
never above randomized response's (the worst eps0-DP pair). GDP: the central-limit
approximation by moment matching (Dong, Roth, Su 2019, Thm 3.4), an approximation.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Decimal, localcontext
from functools import lru_cache

import numpy as np

from ..pairs import rdp as _rdp
from ..pairs.lattice import E_MAX, Functions, Lattice, exp_neg_quotient, lattice_prv, mass_bound_up
from ..pairs.prv import PRV, point_mass
from .base import INTEGER_SENSITIVITY, Mechanism, Param, Search, group_factor, param
from ..core.values import Relation


@lru_cache(maxsize=64)
def discrete_laplace_moments(scale: float, sensitivity: int) -> tuple[float, float]:
    """(E[Y], Var[Y]) of the pair's loss, by the closed forms (module docstring) in decimal."""
    e0 = sensitivity / scale
    if scale < 1 / 745:  # r = e^{-1/t} < 2^-1074: all mass at e0 to float precision
        return e0, 0.0
    digits = max(0, math.ceil(-math.log10(e0))) if e0 < 1 else 0
    with localcontext() as ctx:
        ctx.prec = 50 + 4 * digits
        x, d = 1 / Decimal(scale), Decimal(sensitivity)
        r, rd, ex = (-x).exp(), (-d * x).exp(), x.exp()
        mean = x * (d - 2 * (1 - rd) / (ex - r))
        e_i = (1 - rd) / ((1 + r) * (ex - 1))
        a = r * (1 - (d + 1) * rd + d * rd * r) / (1 - r) ** 2  # sum_{i <= D} i r^i
        b = r * (1 - rd) / (1 - r)  # sum_{i <= D} r^i
        var = 4 * x * x * ((2 * a - b) / (1 + r) - e_i * e_i)
    return float(mean), float(var)


def discrete_laplace_lattice(scale: float, sensitivity: int) -> tuple[Lattice, float]:
    """The loss lattice Y = -e0 + 2 x k, k = Delta - i in [Delta - i_max, Delta], of the pair
    Lap_Z(Delta, t) vs Lap_Z(0, t), and the bound on the mass left out (i > i_max)."""
    d, x = sensitivity, 1.0 / scale
    i_max = min(d, math.floor(E_MAX * scale))
    r = float(exp_neg_quotient(1.0, scale))
    top, c0 = 1.0 / (1.0 + r), math.tanh(0.5 / scale)
    left_out = mass_bound_up(-(i_max + 1) * x) if i_max < d else 0.0
    g_end = float(exp_neg_quotient(i_max + 1.0, scale)) / (1.0 + r) if i_max < d else 0.0

    def g(i: np.ndarray) -> np.ndarray:  # P(I >= i) for 0 <= i <= Delta + 1
        with np.errstate(under="ignore"):
            p = exp_neg_quotient(np.maximum(i, 0), scale) * top
        return np.where(i <= 0, 1.0, np.where(i > d, 0.0, p))

    def cdf(k: np.ndarray) -> np.ndarray:  # P(K <= k), kept points
        return g(d - k) - g_end

    def sf(k: np.ndarray) -> np.ndarray:  # P(K > k), kept points
        return 1.0 - g(np.minimum(d - k, i_max + 1))

    def pmf(k: np.ndarray) -> np.ndarray:
        i = d - np.asarray(k)
        with np.errstate(under="ignore"):
            ri = exp_neg_quotient(np.clip(i, 0, d), scale)
        mid = np.where(i == d, ri * top, c0 * ri)
        return np.where((i < 0) | (i > i_max), 0.0, np.where(i == 0, top, mid))

    return Lattice(-d * x, 2.0 * x, d - i_max, d, Functions(pmf, cdf, sf), 1.0 - g_end), left_out


@dataclass(frozen=True, slots=True)
class DiscreteLaplace(Mechanism):
    """Discrete Laplace noise added to an integer-valued query."""

    kind = "discrete_laplace"
    examples = ({"scale": 0.5}, {"scale": 4.0, "sensitivity": 3})
    title = "Discrete Laplace"
    menu_order = 22

    scale: float = param(Param("Noise scale t", "integer noise; t in units of the query",
                               "scale t of the discrete Laplace noise, P(x) ∝ exp(−|x|/t) on the "
                               "integers (> 0)", "t", 1.0, lo_open=True, hi=1e12,
                               search=Search(False, 0.01, 1e7)))
    sensitivity: int = param(INTEGER_SENSITIVITY, default=1)

    @property
    def eps0(self) -> float:
        """Delta / t: the mechanism is eps0-DP, and no better."""
        return self.sensitivity / self.scale

    def is_blatant(self) -> bool:
        """No noise at all (a huge finite eps0 keeps randomized response's exact closed form; the
        curves then say the loss is too large for a grid)."""
        return math.isinf(self.eps0)

    def _prv(self, order: str) -> PRV:
        if self.is_blatant():
            return point_mass(math.inf)
        lat, left_out = discrete_laplace_lattice(self.scale, self.sensitivity)
        mean = discrete_laplace_moments(self.scale, self.sensitivity)[0]
        err = 8 * 2.0 ** -53 * mean + self.eps0 * left_out  # rounding; the left-out points
        return lattice_prv(lat, left_out, mean, err, as_atoms=True)

    def under(self, relation: Relation) -> "DiscreteLaplace":
        """Replace-one: the integer query moves by up to 2 Delta; k records: k Delta (add/remove)
        or 2 k Delta (replace-one); the pair at the largest shift dominates (module docstring)."""
        if relation.plain:
            return self
        return DiscreteLaplace(self.scale, self.sensitivity * group_factor(relation))

    def eps_delta(self) -> tuple[float, float]:
        return (self.eps0, 0.0)

    def exact_eps_delta(self) -> tuple[float, float] | None:
        return (self.eps0, 0.0) if self.sensitivity == 1 else None

    def noise_halfwidth(self, level: float = 0.95) -> tuple[float, str]:
        """The smallest whole m with P(|X| <= m) >= level: with r = e^{-1/t},
        P(|X| > m) = 2 r^{m+1} / (1 + r)."""
        r = math.exp(-1.0 / self.scale)
        if r == 0.0:
            return 0.0, "query units (whole numbers)"
        m = max(0, math.ceil(math.log((1.0 - level) * (1.0 + r) / 2.0) / math.log(r)) - 1)
        while m > 0 and 2.0 * r ** m / (1.0 + r) <= 1.0 - level:  # float rounding: one step less
            m -= 1
        while 2.0 * r ** (m + 1) / (1.0 + r) > 1.0 - level:
            m += 1
        return float(m), "query units (whole numbers)"

    def rdp(self, orders: np.ndarray) -> np.ndarray:
        """D_a = log E_P[e^{(a-1) Y}] / (a - 1), the three parts of the lattice summed in log space."""
        a, x, d, e0 = np.asarray(orders, dtype=float), 1.0 / self.scale, self.sensitivity, self.eps0
        if e0 > 1e100:  # any eps0-DP pair has D_a <= eps0 (and the sums below would overflow)
            return np.full(a.shape, e0)
        l1r = math.log1p(math.exp(-x))
        terms = [(a - 1) * e0 - l1r, -a * e0 - l1r]
        if d >= 2:  # c0 sum_{0<i<D} g^i, g = e^{-(2a-1) x}
            gx = (2 * a - 1) * x
            terms.append(math.log(math.tanh(0.5 * x)) + (a - 1) * e0 - gx
                         + np.log(-np.expm1(-(d - 1) * gx)) - np.log(-np.expm1(-gx)))
        exact = _rdp.lse_up(np.stack(terms), axis=0) / (a - 1)
        return np.minimum(exact, _rdp.rr_rdp(e0, a))

    def gdp_mu2(self) -> float:
        if self.is_blatant():
            return math.inf
        mean, var = discrete_laplace_moments(self.scale, self.sensitivity)
        return math.inf if var <= 0 else 4 * mean * mean / var
