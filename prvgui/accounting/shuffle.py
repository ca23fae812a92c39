"""A proven lower bound for DP-SGD with shuffled batches: the max-statistic pair.

Setting (Chua, Ghazi, Kamath, Kumar, Manurangsi, Sinha, Zhang, "How Private are DP-SGD
Implementations?", ICML 2024, arXiv:2403.17673): each epoch draws a fresh uniformly random
permutation of the data and cuts it into T batches; every record is in exactly one batch per
epoch; each batch's sum of clipped gradients gets N(0, s^2) noise (units of the clipping norm).
No tight accountant is known (ACCOUNTING.md, "Shuffled batches"). The certified upper bound
treats each epoch as one Gaussian without amplification (mu = a / s); this module gives the
other side.

The datasets. Take a linear loss whose clipped gradient is 0 for every record of D and a
fixed vector of norm a for one extra record z (a = 1: add/remove, the "zero-out" setting of
Chua et al.); D' = D + z. The gradients do not depend on the model, so each epoch's released
noisy sums, projected on that vector and divided by nothing, are X in R^T with
Q: X ~ N(0, s^2 I) (z absent) and P: X ~ N(a e_t*, s^2 I), t* uniform on the T batches (z's
batch, from the epoch's permutation). The attack's statistic is M = max_t X_t:

    Q(M <= m) = Phi(m/s)^T,      P(M <= m) = Phi((m - a)/s) Phi(m/s)^(T-1).

Why it is a lower bound. Projection and maximum are post-processing of the mechanism's
output, and the hockey-stick divergence cannot grow under post-processing, so for every eps
delta_true(eps) >= H_{e^eps}(P_M || Q_M). The E epochs use independent permutations and
noise and gradients that do not depend on the model, so the per-epoch maxima are independent:
the E-epoch output maps to (M_1, ..., M_E) ~ P_M^E against Q_M^E, whose hockey-stick
divergence is that of the E-fold composition of the M-pair (PRV paper, Thm 3.3: the PRVs add
up). The certified accountant's LOWER epsilon of that composition is therefore a proven lower
bound on the true epsilon of E epochs. (D', D) is a neighbouring pair as well, so both orders
count: "remove" is (P_M, Q_M), "add" is (Q_M, P_M) (PRV Y = -l(M), M ~ Q_M); the bound is the
maximum over the two.

Monotone loss. With x = m/s, alpha = a/s and A = alpha x - alpha^2/2,

    L(x) = p_M / q_M = (e^A + (T - 1) r(x)) / T,   r(x) = Phi(x - alpha) / Phi(x).

e^A = phi(x - alpha)/phi(x) is increasing; d/dx log r = lambda(x - alpha) - lambda(x) > 0 for
the hazard lambda = phi/Phi = (log Phi)', which decreases strictly because Phi is strictly
log-concave. So l = log L increases strictly from -inf to +inf, the Neyman-Pearson tests are
{M > c} (Chua et al.'s test; ``single_epoch_delta_lower``) and the PRV's tails are Phi-tails at
x_t = l^{-1}(t). Also Phi/phi = 1/lambda increases, so r(x) <= e^A and A - log T <= l <= A:
the bracket of the inversion. T = 1 is the Gaussian pair, l = A.

Numerics. log r is -int_{x-alpha}^x lambda (16-point Gauss-Legendre, alpha <= 1: relative
precision where the difference of log Phi values would cancel) or that difference
(alpha > 1); l = log1p(e^A/T - 1/T + (1 - 1/T)(r - 1)) near 0, logaddexp elsewhere; tails from
scipy's log_ndtr (log1p(-Phi(-x)) for x > -1): cdf = exp(log F), sf = -expm1(log F), no 1 - x.
The mean is a KL divergence with a non-negative integrand (subsampling.kl_integrand).
"""
from __future__ import annotations

import math

import numpy as np
from scipy.special import erfcx, log_ndtr, ndtri_exp

from .prv import _GL_W, _GL_X, PRV, TRIVIAL, Continuous, point_mass
from .subsampling import kl_integrand, kl_pair, refined_breaks

Array = np.ndarray
ORDERS = ("remove", "add")
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_LOG_SQRT2PI = 0.5 * math.log(2.0 * math.pi)
#: below this the integrals ignore Q's lower tail: Q(M <= x) = e^-750 = 0 in float64
_LOG_FLOOR = -750.0


def _hazard(y: Array) -> Array:
    """lambda(y) = phi(y) / Phi(y) = sqrt(2/pi) / erfcx(-y/sqrt 2): no overflow, 0 far right."""
    return _SQRT_2_OVER_PI / erfcx(-y * math.sqrt(0.5))


class _MaxPair:
    """The loss l(x) of the max-statistic pair in x = m/s, its slope and its inverse."""

    def __init__(self, alpha: float, batches: int) -> None:
        self.alpha, self.batches = alpha, batches
        self.w = 1.0 / batches
        self.log_t = math.log(batches)
        self.log_1mw = math.log1p(-self.w) if batches > 1 else -math.inf

    def log_ratio(self, x: Array) -> Array:
        """log r(x) = log Phi(x - alpha) - log Phi(x) <= 0."""
        a = self.alpha
        if a > 1.0:
            return log_ndtr(x - a) - log_ndtr(x)
        nodes = (x - 0.5 * a)[..., None] + (0.5 * a) * _GL_X
        return -0.5 * a * (_hazard(nodes) @ _GL_W)

    def loss(self, x: Array) -> tuple[Array, Array]:
        """(l(x), log r(x))."""
        a = self.alpha
        big_a = a * x - 0.5 * a * a
        if self.batches == 1:
            return big_a, np.zeros_like(big_a)
        lr = self.log_ratio(x)
        with np.errstate(over="ignore", invalid="ignore"):
            u = self.w * np.expm1(np.minimum(big_a, 700.0)) + (1.0 - self.w) * np.expm1(lr)
            far = np.logaddexp(big_a - self.log_t, self.log_1mw + lr)
            return np.where(np.abs(u) < 0.5, np.log1p(u), far), lr

    def slope(self, x: Array, loss: Array, lr: Array) -> Array:
        """l'(x): the posterior weights of the two terms times their slopes."""
        a = self.alpha
        if self.batches == 1:
            return np.full_like(x, a)
        with np.errstate(over="ignore", invalid="ignore"):
            p1 = np.exp(np.minimum(a * x - 0.5 * a * a - self.log_t - loss, 0.0))
            p2 = np.exp(np.minimum(self.log_1mw + lr - loss, 0.0))
            d = np.maximum(_hazard(x - a) - _hazard(x), 0.0)
        return p1 * a + p2 * d

    def x_of(self, t: Array) -> Array:
        """l^{-1}(t), vectorised safeguarded Newton in the bracket A - log T <= l <= A."""
        t = np.asarray(t, dtype=float)
        a, c = self.alpha, 0.5 * self.alpha ** 2
        with np.errstate(over="ignore", invalid="ignore"):
            lo = (t + c) / a
            if self.batches == 1:
                return lo
            hi = (t + self.log_t + c) / a
            # r <= 1 gives e^l <= e^A / T + 1 - 1/T: where e^t > 1 - 1/T a sharper lower end
            sharp = (np.log(self.batches * np.expm1(t) + 1.0) + c) / a
        lo = np.where(np.isfinite(sharp) & (sharp > lo), np.minimum(sharp, hi), lo)
        x = lo.ravel().copy()
        lo, hi, tf = lo.ravel().copy(), hi.ravel().copy(), t.ravel()
        act = np.flatnonzero(np.isfinite(tf) & (hi > lo))
        for _ in range(200):
            if act.size == 0:
                break
            xa = x[act]
            la, lra = self.loss(xa)
            f = la - tf[act]
            lo[act] = np.where(f < 0, xa, lo[act])
            hi[act] = np.where(f > 0, xa, hi[act])
            with np.errstate(divide="ignore", invalid="ignore"):
                nx = xa - f / self.slope(xa, la, lra)
            la_, ha = lo[act], hi[act]
            bad = ~((nx > la_) & (nx < ha))
            nx = np.where(bad, 0.5 * (la_ + ha), nx)
            step = np.abs(nx - xa)
            x[act] = nx
            tol = 4.0 * np.spacing(np.maximum(np.abs(nx), 1e-300))
            done = (f == 0) | (step <= tol) | (ha - la_ <= tol)
            x[act[f == 0]] = xa[f == 0]
            act = act[~done]
        return x.reshape(t.shape)

    def log_cdf_p(self, x: Array) -> Array:
        """log P(M/s <= x) = log Phi(x - alpha) + (T - 1) log Phi(x)."""
        out = log_ndtr(x - self.alpha)
        return out + (self.batches - 1) * log_ndtr(x) if self.batches > 1 else out

    def log_cdf_q(self, x: Array) -> Array:
        """log Q(M/s <= x) = T log Phi(x)."""
        return self.batches * log_ndtr(x)

    def log_q_density(self, x: Array) -> Array:
        """log of Q's density of M/s: T phi(x) Phi(x)^(T-1)."""
        out = self.log_t - 0.5 * x * x - _LOG_SQRT2PI
        return out + (self.batches - 1) * log_ndtr(x) if self.batches > 1 else out


def _check(s: float, batches: int, shift: float) -> None:
    if not (isinstance(s, (int, float)) and s >= 0 and not math.isnan(s)):
        raise ValueError(f"noise multiplier s must be a number >= 0, got {s!r}")
    if isinstance(batches, bool) or not isinstance(batches, (int, np.integer)) or batches < 1:
        raise ValueError(f"batches must be an integer >= 1, got {batches!r}")
    if not (isinstance(shift, (int, float)) and 0 <= shift < math.inf):
        raise ValueError(f"shift must be a finite number >= 0, got {shift!r}")


def max_statistic_prv(s: float, batches: int, order: str, shift: float = 1.0) -> PRV:
    """PRV of one epoch's max-statistic pair (module docstring), one order.

    remove: Y = l(M), M ~ P_M; F_Y(t) = P(M/s <= x_t) = Phi(x_t - alpha) Phi(x_t)^(T-1).
    add:    Y = -l(M), M ~ Q_M; F_Y(t) = 1 - Phi(x_{-t})^T.
    Here alpha = shift / s and x_t = l^{-1}(t). The mean is KL(P_M || Q_M) (remove) or
    KL(Q_M || P_M) (add), and ``centre`` is that mean.
    """
    if order not in ORDERS:
        raise ValueError(f"order must be one of {ORDERS}, got {order!r}")
    _check(s, batches, shift)
    batches = int(batches)
    if shift == 0 or math.isinf(s):
        return TRIVIAL
    if s == 0:
        return point_mass(math.inf)
    pair = _MaxPair(shift / s, batches)
    remove = order == "remove"

    def log_f(t: Array) -> Array:
        """log F_Y(t) (remove) or log(1 - F_Y(t)) (add), and at t = +-inf the limits."""
        t = np.asarray(t, dtype=float)
        with np.errstate(invalid="ignore", over="ignore"):
            x = pair.x_of(t if remove else -t)
            return pair.log_cdf_p(x) if remove else pair.log_cdf_q(x)

    def lower(t: Array) -> Array:
        with np.errstate(over="ignore"):
            return np.exp(log_f(t))

    def upper(t: Array) -> Array:
        return -np.expm1(log_f(t))

    # the mean, in x: Q's density times psi(L) (remove) or phi(L) (add), both >= 0
    which = "psi" if remove else "phi"

    def integrand(x: Array) -> Array:
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            return kl_integrand(which, pair.loss(x)[0], pair.log_q_density(x))

    x_lo = float(ndtri_exp(_LOG_FLOOR / batches))
    x_med = float(ndtri_exp(-math.log(2.0) / batches))
    x_hi = pair.alpha + 40.0
    width = 0.25 / math.sqrt(1.0 + 2.0 * math.log(batches))
    mean, err = kl_pair(integrand, refined_breaks(x_lo, x_hi, [x_med, pair.alpha, x_med + pair.alpha],
                                                  width))
    # remove: cdf = F, sf = 1 - F; add: cdf = 1 - Q-cdf, sf = Q-cdf (each tail computed directly)
    cdf, sf = (lower, upper) if remove else (upper, lower)
    cont = Continuous(-math.inf, math.inf, 1.0, cdf, sf, mean)
    return PRV((), 0.0, cont, mean, err)


def single_epoch_delta_lower(s: float, T: int, eps: float, shift: float = 1.0,
                             order: str = "remove") -> float:
    """Chua et al.'s bound for one epoch, directly: sup_c P(M > c) - e^eps Q(M > c) (remove), or
    sup_c Q(M <= c) - e^eps P(M <= c) (add), by a grid over c and a bounded Brent step.

    Independent of the PRV path (no loss, no inversion): a cross-check of ``max_statistic_prv``'s
    delta for one epoch. The closed-form tails are those of the module docstring.
    """
    from scipy.optimize import minimize_scalar

    if order not in ORDERS:
        raise ValueError(f"order must be one of {ORDERS}, got {order!r}")
    _check(s, T, shift)
    if not math.isfinite(eps):
        raise ValueError(f"eps must be finite, got {eps!r}")
    if shift == 0 or math.isinf(s):
        return 0.0
    if s == 0:
        return 1.0
    a, n = shift / s, int(T)

    def gain(z: Array) -> Array:
        """The test's advantage at threshold c = s z."""
        z = np.asarray(z, dtype=float)
        log_phi = log_ndtr(z)
        log_p = log_ndtr(z - a) + (n - 1) * log_phi if n > 1 else log_ndtr(z - a)
        log_q = n * log_phi
        if order == "remove":
            return -np.expm1(log_p) + math.exp(eps) * np.expm1(log_q)
        return np.exp(log_q) - math.exp(eps + 0.0) * np.exp(log_p)

    z_lo = float(ndtri_exp(_LOG_FLOOR / n)) - 1.0
    z_hi = max(a + 40.0, (abs(eps) + math.log(n) + a * a) / a + 1.0)
    z = np.linspace(z_lo, z_hi, 20001)
    with np.errstate(over="ignore", invalid="ignore"):
        g = gain(z)
        i = int(np.nanargmax(g))
        best = float(g[i])
        lo, hi = z[max(i - 1, 0)], z[min(i + 1, z.size - 1)]
        res = minimize_scalar(lambda v: -float(gain(np.array([v]))[0]), bounds=(lo, hi),
                              method="bounded", options={"xatol": 1e-13 * max(1.0, abs(z[i]))})
    return min(1.0, max(0.0, best, -float(res.fun)))
