"""Independent reference values for the tests (closed forms; no prvgui code).

Each function states how its numbers are computed.
"""
from __future__ import annotations

import math

import numpy as np
from scipy import optimize, special, stats


def gaussian_delta(mu: float, eps: float) -> float:
    """Balle-Wang 2018: delta(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2), in log space."""
    a = special.log_ndtr(-eps / mu + mu / 2)
    b = eps + special.log_ndtr(-eps / mu - mu / 2)
    return float(math.exp(a) * -math.expm1(b - a)) if b < a else 0.0


def gaussian_epsilon(mu: float, delta: float) -> float:
    """Smallest eps >= 0 with gaussian_delta(mu, eps) <= delta (brentq to 1e-13)."""
    if gaussian_delta(mu, 0.0) <= delta:
        return 0.0
    hi = 1.0
    while gaussian_delta(mu, hi) > delta:
        hi *= 2
    return optimize.brentq(lambda e: gaussian_delta(mu, e) - delta, 0.0, hi, xtol=1e-13, rtol=1e-15)


def rr_kfold_delta(eps0: float, k: int, eps: float, delta0: float = 0.0) -> float:
    """Kairouz-Oh-Viswanath 2015 exact k-fold composition of (eps0, delta0)-DP:
    Y = eps0 (k - 2i), i ~ Binomial(k, 1/(1+e^eps0)); delta_RR(eps) = E[(1 - e^{eps - Y})_+];
    delta = 1 - (1-delta0)^k + (1-delta0)^k delta_RR."""
    i = np.arange(k + 1)
    logp = stats.binom.logpmf(i, k, 1.0 / (1.0 + math.exp(eps0)))
    y = eps0 * (k - 2 * i)
    m = y > eps
    d_rr = float(np.sum(np.exp(logp[m]) * -np.expm1(eps - y[m])))
    keep = (1 - delta0) ** k
    return 1 - keep + keep * d_rr


def rr_kfold_epsilon(eps0: float, k: int, delta: float, delta0: float = 0.0) -> float:
    f = lambda e: rr_kfold_delta(eps0, k, e, delta0) - delta  # noqa: E731
    if f(0.0) <= 0:
        return 0.0
    hi = eps0 * k + 1.0
    if f(hi) > 0:
        return math.inf
    return optimize.brentq(f, 0.0, hi, xtol=1e-12)


def laplace_delta(eps0: float, eps: float) -> float:
    """One Laplace mechanism (eps0 = sensitivity/scale): delta(eps) = 1 - e^{(eps - eps0)/2} for
    0 <= eps <= eps0, else 0 (from the PRV's CDF F(t) = e^{(t - eps0)/2} / 2)."""
    return -math.expm1((eps - eps0) / 2) if eps < eps0 else 0.0


def subsampled_gaussian_delta(sigma: float, q: float, eps: float, order: str = "remove") -> float:
    """One Poisson-subsampled Gaussian step, delta(eps) = int (p - e^eps q)_+ dx with
    P = q N(1, s^2) + (1 - q) N(0, s^2), Q = N(0, s^2) (remove) or swapped (add).
    The region where p > e^eps q is a half-line {x > x*}; closed form in Phi."""
    s = sigma
    if order == "remove":
        # q e^{l0} + 1 - q > e^eps  <=>  l0 > log((e^eps - 1 + q)/q)
        if eps <= math.log1p(-q):
            return 1.0 - math.exp(eps)
        x = s * s * math.log((math.expm1(eps) + q) / q) + 0.5
        p_mass = q * stats.norm.sf(x, 1, s) + (1 - q) * stats.norm.sf(x, 0, s)
        q_mass = stats.norm.sf(x, 0, s)
        return float(p_mass - math.exp(eps) * q_mass)
    # add: P' = N(0), Q' = mixture; p' > e^eps q'  <=>  1 > e^eps L(x)  <=>  L(x) < e^-eps
    if -eps <= math.log1p(-q):
        return 0.0
    x = s * s * math.log((math.expm1(-eps) + q) / q) + 0.5
    p_mass = stats.norm.cdf(x, 0, s)
    q_mass = q * stats.norm.cdf(x, 1, s) + (1 - q) * stats.norm.cdf(x, 0, s)
    return float(p_mass - math.exp(eps) * q_mass)


class TwoPointSum:
    """S = k a + (b - a) J with J ~ Binomial(k, p): the sum of k independent losses, each b with
    probability p and a otherwise. Its delta(eps) = E[(1 - e^{eps - S})_+] is exact (scipy's
    binomial pmf, the lattice summed over +-40 standard deviations around the mean).

    Bounded losses give rigorous brackets: delta(eps) is nondecreasing in every loss, so
    rounding each loss of a composition up (down) to b (a) bounds its delta from above (below)
    (issue 16: a Laplace loss in [-eps0, eps0] has an atom 1/2 at eps0 and e^-eps0 / 2 at -eps0)."""

    def __init__(self, k: int, a: float, b: float, p: float) -> None:
        sd = math.sqrt(k * p * (1 - p))
        j = np.arange(max(0, math.floor(k * p - 40 * sd - 10)), min(k, math.ceil(k * p + 40 * sd + 10)) + 1,
                      dtype=float)
        self.s = k * a + (b - a) * j
        self.w = np.exp(stats.binom.logpmf(j, k, p))

    def delta(self, eps: float) -> float:
        m = self.s > eps
        return float(np.sum(self.w[m] * -np.expm1(eps - self.s[m])))

    def epsilon(self, delta: float) -> float:
        """Smallest eps >= 0 with delta(eps) <= delta."""
        if self.delta(0.0) <= delta:
            return 0.0
        hi = float(self.s[-1])
        return optimize.brentq(lambda e: self.delta(e) - delta, 0.0, hi, xtol=1e-12, rtol=1e-12)


def bounded_loss_bracket(k: int, a: float, b: float, p_up: float, p_down: float):
    """(lower, upper) TwoPointSum pair for k draws of a loss in [a, b]: P(loss = b) >= p_down
    (keep only the atom at b, round the rest down) and P(loss > a) <= p_up (round up)."""
    return TwoPointSum(k, a, b, p_down), TwoPointSum(k, a, b, p_up)


def laplace_bracket(scale: float, k: int):
    """Bracket pair for k Laplace mechanisms (sensitivity 1): loss in [-1/scale, 1/scale]."""
    e = 1.0 / scale
    return bounded_loss_bracket(k, -e, e, -0.5 * math.expm1(-e) + 0.5, 0.5)


# ------------------------------------------------------------------ deep tails (mpmath)
def _mp():
    import mpmath
    mpmath.mp.dps = 40
    return mpmath


def gaussian_delta_mp(mu, x):
    """Balle-Wang's delta of N(mu^2/2, mu^2) at x (any real x), in mpmath (40 digits): no
    float64 floor, so it holds down to 1e-300 and below."""
    mp = _mp()
    x, mu = mp.mpf(x), mp.mpf(mu)
    return mp.ncdf(-x / mu + mu / 2) - mp.exp(x) * mp.ncdf(-x / mu - mu / 2)


def gaussian_rr_delta(mu: float, eps0: float, k: int, eps: float):
    """A Gaussian mechanism (mu) composed with k randomized responses (eps0), exactly: given the
    responses' summed loss l (eps0 (k - 2i) with i ~ Binomial(k, 1/(1 + e^eps0)), Kairouz-Oh-
    Viswanath), delta(eps) = E[(1 - e^{eps - l - G})_+] = E_l[delta_G(eps - l)]. An mpmath number."""
    mp = _mp()
    p = 1 / (1 + mp.exp(eps0))
    return mp.fsum(mp.binomial(k, i) * p ** i * (1 - p) ** (k - i) * gaussian_delta_mp(mu, eps - eps0 * (k - 2 * i))
                   for i in range(k + 1))


def sgd_step_delta_mp(sigma, q, x, order: str = "remove"):
    """One Poisson-subsampled Gaussian step's delta at any real x, in mpmath (the half-line
    closed form of subsampled_gaussian_delta, without its float64 floor)."""
    mp = _mp()
    s, q, x = mp.mpf(sigma), mp.mpf(q), mp.mpf(x)
    if order == "remove":
        if mp.exp(x) <= 1 - q:
            return 1 - mp.exp(x)
        c = s * s * mp.log((mp.exp(x) - 1 + q) / q) + mp.mpf(1) / 2
        return q * mp.ncdf((1 - c) / s) + (1 - q) * mp.ncdf(-c / s) - mp.exp(x) * mp.ncdf(-c / s)
    if mp.exp(-x) <= 1 - q:
        return mp.mpf(0)
    c = s * s * mp.log((mp.exp(-x) - 1 + q) / q) + mp.mpf(1) / 2
    return mp.ncdf(c / s) - mp.exp(x) * (q * mp.ncdf((c - 1) / s) + (1 - q) * mp.ncdf(c / s))


def sgd_two_steps_delta(sigma: float, q: float, eps: float, order: str = "remove"):
    """Two Poisson-subsampled Gaussian steps: delta(eps) = E_{Y1}[delta_1(eps - Y1)] (condition on
    the first step's loss), the expectation an mpmath quadrature over the first step's output
    x ~ P (remove: the mixture; add: N(0, sigma^2))."""
    mp = _mp()
    s, qq = mp.mpf(sigma), mp.mpf(q)

    def loss(x):
        l = mp.log(1 - qq + qq * mp.exp((2 * x - 1) / (2 * s * s)))
        return l if order == "remove" else -l

    def density(x):
        g0 = mp.npdf(x, 0, s)
        return (1 - qq) * g0 + qq * mp.npdf(x, 1, s) if order == "remove" else g0

    f = lambda x: density(x) * sgd_step_delta_mp(sigma, q, eps - loss(x), order)  # noqa: E731
    lim = 40 * s + 2
    return mp.quad(f, mp.linspace(-lim, lim + 1, 41))


def gdp_mu_of_breakpoints(alpha: np.ndarray, beta: np.ndarray) -> float:
    """Tight mu-GDP of a piecewise-linear tradeoff curve with breakpoints (alpha, beta): G_mu is
    convex, so G_mu <= f everywhere iff at every breakpoint, i.e. mu = max over the breakpoints
    inside (0, 1)^2 of Phi^-1(1 - alpha) + Phi^-1(1 - beta) (Dong, Roth, Su 2022)."""
    ok = (alpha > 0) & (alpha < 1) & (beta > 0) & (beta < 1)
    return float(np.max(stats.norm.isf(alpha[ok]) + stats.norm.isf(beta[ok])))


def rr_kfold_tradeoff(eps0: float, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Breakpoints of the tradeoff curve of k-fold randomized response (eps0): the loss is
    eps0 (k - 2i) with i ~ Binomial(k, p) under P and Binomial(k, 1 - p) under Q, p = 1/(1+e^eps0);
    the Neyman-Pearson tests reject on the largest losses: alpha = P(L >= l), beta = Q(L < l)."""
    p = 1.0 / (1.0 + math.exp(eps0))
    i = np.arange(k + 1)  # i flips; the loss decreases with i
    pp = stats.binom.pmf(i, k, 1 - p)  # Q rejects... (loss = log P/Q is largest at i = 0 under P)
    qq = stats.binom.pmf(i, k, p)
    # rejecting "P" for the j outcomes with the largest log Q/P: alpha under P, beta under Q
    alpha = np.concatenate([[0.0], np.cumsum(pp)])
    beta = 1.0 - np.concatenate([[0.0], np.cumsum(qq)])
    return alpha, np.clip(beta, 0.0, 1.0)


def laplace_tradeoff(eps0: float, alpha: np.ndarray) -> np.ndarray:
    """T(Lap(0, 1), Lap(eps0, 1)) (Dong, Roth, Su 2022, Prop. A.6): 1 - e^eps0 a below e^-eps0 / 2,
    e^-eps0 / (4 a) up to 1/2, e^-eps0 (1 - a) above."""
    e = math.exp(eps0)
    return np.where(alpha < 0.5 / e, 1 - e * alpha, np.where(alpha <= 0.5, 1 / (4 * e * alpha), (1 - alpha) / e))


def gdp_bayes_risk(mu: float, prior: float) -> float:
    """min over alpha of (1 - prior) alpha + prior G_mu(alpha), on a fine alpha grid refined by
    scipy's bounded minimiser (G_mu(a) = Phi(Phi^-1(1 - a) - mu))."""
    def err(a: float) -> float:
        return (1 - prior) * a + prior * float(stats.norm.cdf(stats.norm.isf(a) - mu))
    grid = np.geomspace(1e-15, 1 - 1e-12, 20001)
    vals = (1 - prior) * grid + prior * stats.norm.cdf(stats.norm.isf(grid) - mu)
    k = int(np.argmin(vals))
    lo, hi = grid[max(k - 1, 0)], grid[min(k + 1, grid.size - 1)]
    res = optimize.minimize_scalar(err, bounds=(lo, hi), method="bounded", options={"xatol": 1e-15})
    return float(min(res.fun, vals[k], prior, 1 - prior))


def closure_arrays(fn, seen: set | None = None) -> list:
    """The numpy arrays a function holds through its closure, and its closures' closures, or
    through the object of a bound method (``seen``: ids already counted, shared across calls)."""
    seen = set() if seen is None else seen
    out: list = []

    def held_by(v) -> None:  # (a holder object with __slots__: its arrays)
        for name in getattr(type(v), "__slots__", ()):
            a = getattr(v, name, None)
            if isinstance(a, np.ndarray) and id(a) not in seen:
                seen.add(id(a))
                out.append(a)
    owner = getattr(fn, "__self__", None)
    if owner is not None and id(owner) not in seen:
        seen.add(id(owner))
        held_by(owner)
    for cell in getattr(fn, "__closure__", None) or ():
        v = cell.cell_contents
        if id(v) in seen:
            continue
        seen.add(id(v))
        if isinstance(v, np.ndarray):
            out.append(v)
        elif callable(v):
            out += closure_arrays(v, seen)
        elif hasattr(type(v), "__slots__"):
            held_by(v)
    return out
