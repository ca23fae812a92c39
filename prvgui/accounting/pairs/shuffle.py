"""A proven lower bound for DP-SGD with shuffled batches: the max-statistic pair.

Setting (Chua, Ghazi, Kamath, Kumar, Manurangsi, Sinha, Zhang, "How Private are DP-SGD
Implementations?", ICML 2024, arXiv:2403.17673): each epoch draws a fresh uniformly random
permutation of the data and cuts it into T batches; every record is in exactly one batch per
epoch; each batch's sum of clipped gradients gets N(0, s^2) noise (units of the clipping norm).
No tight accountant is known (docs/kinds.md, shuffled_gaussian; Chua et al. 2024). The certified upper bound
treats each epoch as one Gaussian without amplification (mu = 1 / s); this module gives the
other side.

The datasets. A linear loss whose clipped gradient is g_o u for every record of D' (u a fixed
unit vector, -1 <= g_o <= 0) and D = D' plus a record z with gradient g_z u, 0 < g_z <= 1
(zero-out adjacency: z's slot in D' holds the null record, gradient 0, so both datasets have T
batches). The gradients do not depend on the model, so after subtracting the known sums b g_o
and projecting on u, one epoch's output is X in R^T with one uniformly random coordinate t*
(z's batch) shifted: Q (from D'): X ~ N(beta_0 e_t*, s^2 I), P (from D): N(beta_1 e_t*, s^2 I),
beta_0 = ``base`` = -g_o, beta_1 = base + ``shift`` with shift = g_z. base = 0 is the pair
"Q = N(0, s^2 I)"; base = shift = 1 (others at -1, z at +1) are Chua et al.'s datasets and
give their numbers (test_shuffle_attack: epsilon >= 6.04 at s = 0.8, T = 1000, delta = 1e-6;
base = 0 proves only 0.43 there). Under add/remove with D' = D minus z the same pair arises if
D' is still cut into T batches, one a record short: M is symmetric in the batches, so where
the short one sits does not matter. The attack's statistic is M = max_t X_t; with x = m/s,
alpha_i = beta_i / s:

    Q(M <= m) = Phi(x - alpha_0) Phi(x)^(T-1),      P(M <= m) = Phi(x - alpha_1) Phi(x)^(T-1).

Why it is a lower bound. Projection and maximum are post-processing, and the hockey-stick
divergence cannot grow under post-processing: delta_true(eps) >= H_{e^eps}(P_M || Q_M) for
every eps. The E epochs use independent permutations and noise, and the gradients ignore the
model, so the per-epoch maxima are independent: E epochs map to (M_1, ..., M_E) ~ P_M^E
against Q_M^E, whose hockey-stick divergence is that of the E-fold composition of the M-pair
(PRV paper, Thm 3.3: the PRVs add up). The certified accountant's LOWER epsilon of that
composition is therefore a proven lower bound on the true epsilon of E epochs. (D', D) is a
neighbouring pair too: "remove" is (P_M, Q_M), "add" is (Q_M, P_M) (PRV -l(M), M ~ Q_M); the
bound is the larger of the two. (Multi-epoch lower bounds for shuffling: also Chua et al.,
"Scalable DP-SGD: Shuffling vs. Poisson Subsampling", NeurIPS 2024, arXiv:2411.04205.)

Monotone loss (0 <= alpha_0 < alpha_1). With lambda = phi/Phi = (log Phi)' (strictly decreasing:
Phi is strictly log-concave) and the densities' common factor Phi(x)^(T-2) cancelled,

    L(x) = p_M/q_M = w A + (1 - w) B,   A = phi(x - alpha_1)/phi(x - alpha_0),
    B = Phi(x - alpha_1)/Phi(x - alpha_0),   w = lambda(x - alpha_0) / (lambda(x - alpha_0) + (T-1) lambda(x)).

A = exp((alpha_1 - alpha_0) x - (alpha_1^2 - alpha_0^2)/2) increases; (log B)' =
lambda(x - alpha_1) - lambda(x - alpha_0) > 0; B <= A because Phi/phi = 1/lambda increases;
and w increases because (log lambda)' = -v with v(y) = y + lambda(y) increasing (v' = 1 -
lambda v = the variance of a truncated normal, > 0), so lambda(x)/lambda(x - alpha_0)
decreases. Then L' = w'(A - B) + w A' + (1 - w) B' > 0: l = log L increases strictly from -inf
to +inf, the Neyman-Pearson tests are {M > c} (Chua et al.'s test; ``single_epoch_delta_lower``)
and the PRV's tails are the Phi-tails above at x_t = l^{-1}(t). As w >= 1/T (its limit at
-inf), log A - log T <= l <= log A: the bracket of the inversion. T = 1 is the Gaussian pair,
l = log A; alpha_0 = 0 gives w = 1/T.

Numerics. log Phi(y - b) - log Phi(y) is -int lambda over [y - b, y] (16-point Gauss-Legendre
for b <= 1, relative precision where log Phi values would cancel) or that difference (b > 1);
log w = -softplus(kappa), kappa = log(T-1) - alpha_0 x + alpha_0^2/2 + log r_{alpha_0}(x);
l = log1p(w (A - 1) + (1 - w)(B - 1)) near 0, logaddexp elsewhere; x_t by Newton's method
guarded by bisection (rtsafe), started from a cubic Hermite spline of x(l) through l on a grid
(slopes 1 / l'; within about 1e-9 of the root) and stopped once |l(x) - t| <= 4 u (1 + |t|)
(about one evaluation of l a point instead of five: the lower bound of 100 epochs at sigma 0.8,
T = 1000 took 1.0 s cold, now 0.45 s). Tails from scipy's log_ndtr
(log1p(-Phi(-x)) for x > -1): cdf = exp(log F), sf = -expm1(log F), never 1 - x. Measured
against mpmath, both tails hold a relative form of discretize's contract: the exact value at a
point within 35 ulps (1 + |t|) of t (s = 0.1, T = 10^6; within 5 elsewhere), to 64 u.
The mean is a KL divergence with a non-negative integrand (subsampling.kl_integrand).
"""
from __future__ import annotations

import math

import numpy as np
from scipy.interpolate import CubicHermiteSpline
from scipy.special import erfcx, log_ndtr, ndtri_exp

from .prv import PRV, TRIVIAL, Continuous, point_mass
from .quadrature import GL_W, GL_X
from .subsampling import kl_integrand, kl_pair, refined_breaks

Array = np.ndarray
ORDERS = ("remove", "add")
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_LOG_SQRT2PI = 0.5 * math.log(2.0 * math.pi)
#: Q(M/s <= x) <= Phi(x)^T = e^-750 below ndtri_exp(-750 / T): zero in float64
_LOG_FLOOR = -750.0
#: x_of stops once |l(x) - t| <= _NEAR (1 + |t|)
_NEAR = 4.0 * 2.0 ** -53


def _hazard(y: Array) -> Array:
    """lambda(y) = phi(y) / Phi(y) = sqrt(2/pi) / erfcx(-y/sqrt 2): no overflow, 0 far right."""
    return _SQRT_2_OVER_PI / erfcx(-y * math.sqrt(0.5))


def _log_hazard(y: Array) -> Array:
    """log lambda(y): log phi - log Phi where Phi is near 1 (no cancellation there), through
    erfcx on the left where both are near -y^2 / 2."""
    with np.errstate(divide="ignore"):
        left = math.log(_SQRT_2_OVER_PI) - np.log(erfcx(-np.minimum(y, 0.0) * math.sqrt(0.5)))
    return np.where(y < 0, left, -0.5 * y * y - _LOG_SQRT2PI - log_ndtr(np.maximum(y, 0.0)))


def _log_r(y: Array, b: float) -> Array:
    """log Phi(y - b) - log Phi(y) <= 0 for b >= 0."""
    if b == 0:
        return np.zeros_like(y)
    if b > 1.0:
        return log_ndtr(y - b) - log_ndtr(y)
    nodes = (y - 0.5 * b)[..., None] + (0.5 * b) * GL_X
    return -0.5 * b * (_hazard(nodes) @ GL_W)


def _softplus(k: Array) -> Array:
    return np.logaddexp(0.0, k)


class _MaxPair:
    """The loss l(x) of the max-statistic pair in x = m/s, its slope and its inverse."""

    def __init__(self, alpha0: float, alpha1: float, batches: int) -> None:
        self.a0, self.a1, self.n = alpha0, alpha1, batches - 1
        self.d = alpha1 - alpha0
        self.c = 0.5 * self.d * (alpha0 + alpha1)  # (alpha_1^2 - alpha_0^2) / 2
        self.log_t = math.log(batches)
        if self.n > 0:  # l on a grid over the mass of P and Q: starting points for x_of
            gx = np.linspace(float(ndtri_exp(_LOG_FLOOR / batches)) - 2.0, alpha1 + 42.0, 2049)
            parts = self.parts(gx)
            gl, dl = parts[0], self.slope(gx, parts)
            # x(l) as a cubic Hermite spline through the grid's points with slopes 1 / l'(x):
            # Newton then starts within about 1e-8 of the root and needs two steps, not five
            with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
                dx = 1.0 / dl  # (+inf where l is flat to float64: noise 1e306 times the shift)
            ok = np.isfinite(gl) & np.isfinite(dx) & (dl > 0)
            ok[ok] &= np.concatenate(([True], np.diff(gl[ok]) > 0))
            self.grid_x, self.grid_l = gx[ok], gl[ok]
            self._spline = CubicHermiteSpline(gl[ok], gx[ok], dx[ok], extrapolate=False) if ok.sum() > 1 else None

    def kappa(self, x: Array) -> Array:
        """log((T-1) lambda(x) / lambda(x - alpha_0)); w = 1 / (1 + e^kappa)."""
        a0 = self.a0
        k = np.full_like(x, math.log(self.n))
        return k - a0 * x + 0.5 * a0 * a0 + _log_r(x, a0) if a0 > 0 else k

    def parts(self, x: Array) -> tuple[Array, ...]:
        """(l, log A, log B, log w, log(1 - w)) at x."""
        la = self.d * x - self.c
        lb = _log_r(x - self.a0, self.d)
        if self.n == 0:
            return la, la, lb, np.zeros_like(x), np.full_like(x, -np.inf)
        k = self.kappa(x)
        lw, lw1 = -_softplus(k), -_softplus(-k)
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            u = np.exp(lw) * np.expm1(np.minimum(la, 700.0)) + np.exp(lw1) * np.expm1(lb)
            far = np.logaddexp(lw + la, lw1 + lb)
            return np.where(np.abs(u) < 0.5, np.log1p(u), far), la, lb, lw, lw1

    def loss(self, x: Array) -> Array:
        return self.parts(x)[0]

    def slope(self, x: Array, parts: tuple[Array, ...]) -> Array:
        """l' = p_A d + p_B (lambda(x - alpha_1) - lambda(x - alpha_0)) + w' (A - B) / L with the
        posterior weights p_A = w A / L, p_B = (1 - w) B / L (module docstring)."""
        loss, la, lb, lw, lw1 = parts
        if self.n == 0:
            return np.full_like(x, self.d)
        with np.errstate(over="ignore", invalid="ignore"):
            pa = np.exp(np.minimum(lw + la - loss, 0.0))
            pb = np.exp(np.minimum(lw1 + lb - loss, 0.0))
            h0 = _hazard(x - self.a0)
            db = np.maximum(_hazard(x - self.a1) - h0, 0.0)
            dv = np.maximum(self.a0 + _hazard(x) - h0, 0.0)
            w = np.exp(lw)
            return pa * self.d + pb * db + dv * np.maximum((1.0 - w) * pa - w * pb, 0.0)

    def x_of(self, t: Array) -> Array:
        """l^{-1}(t): vectorised Newton, safeguarded by bisection in log A - log T <= l <= log A."""
        t = np.asarray(t, dtype=float)
        with np.errstate(over="ignore", invalid="ignore"):
            lo = (t + self.c) / self.d
            if self.n == 0:
                return lo
            hi = (t + self.log_t + self.c) / self.d
            # a start: interpolation in the grid, or outside it l with B = 1 and w = 1/T
            guess = (np.log((self.n + 1) * np.expm1(t) + 1.0) + self.c) / self.d
            if self._spline is not None:
                inside = (t > self.grid_l[0]) & (t < self.grid_l[-1])
                guess = np.where(inside, self._spline(np.where(inside, t, self.grid_l[0])), guess)
        x = np.where(np.isfinite(guess), np.clip(guess, lo, hi), 0.5 * (lo + hi)).ravel()
        lo, hi, tf = lo.ravel().copy(), hi.ravel().copy(), t.ravel()
        x[~np.isfinite(tf)] = tf[~np.isfinite(tf)]
        act = np.flatnonzero(np.isfinite(tf))
        dx = hi - lo  # the last step and the one before (rtsafe, Numerical Recipes 9.4)
        dx_old = dx.copy()
        for _ in range(400):
            if act.size == 0:
                break
            xa = x[act]
            parts = self.parts(xa)
            f = parts[0] - tf[act]
            la_, ha = np.where(f < 0, xa, lo[act]), np.where(f > 0, xa, hi[act])
            lo[act], hi[act] = la_, ha
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                nx = xa - f / self.slope(xa, parts)
            # bisect when Newton leaves the bracket or does not halve the step before last
            bis = ~((nx > la_) & (nx < ha) & (np.abs(nx - xa) <= 0.5 * dx_old[act]))
            nx = np.where(bis, 0.5 * (la_ + ha), nx)
            dx_old[act], dx[act] = dx[act], np.abs(nx - xa)
            tol = np.spacing(np.maximum(np.abs(xa), 1e-300))
            # l(x) within 4 u (1 + |t|) of t: the loss's own rounding is larger (docstring), and
            # Newton's steps from there only wander by ulps (most points: the spline's start)
            near = np.abs(f) <= _NEAR * (1.0 + np.abs(tf[act]))
            done = (f == 0) | near | (np.abs(nx - xa) <= tol) | (ha - la_ <= 2 * tol)
            x[act] = np.where((f == 0) | (near & bis), xa, nx)
            act = act[~done]
        return x.reshape(t.shape)

    def log_cdf(self, x: Array, alpha: float) -> Array:
        """log Pr(M/s <= x) with the shifted batch at alpha: log Phi(x - alpha) + (T-1) log Phi(x)."""
        out = log_ndtr(x - alpha)
        return out + self.n * log_ndtr(x) if self.n > 0 else out

    def log_q_density(self, x: Array) -> Array:
        """log of Q's density of M/s: phi(x - alpha_0) Phi(x)^(T-1) (1 + e^kappa)."""
        out = -0.5 * (x - self.a0) ** 2 - _LOG_SQRT2PI
        return out + self.n * log_ndtr(x) + _softplus(self.kappa(x)) if self.n > 0 else out

    def log_p_density(self, x: Array) -> Array:
        """log of P's density of M/s, from its own closed form (not log q + l, whose two terms
        cancel to rounding of their size, about 1e-9 relative at alpha_1 ~ 6000):
        phi(x - alpha_1) Phi(x)^(T-1) (1 + (T-1) lambda(x) / lambda(x - alpha_1))."""
        out = -0.5 * (x - self.a1) ** 2 - _LOG_SQRT2PI
        if self.n == 0:
            return out
        k = math.log(self.n) + _log_hazard(x) - _log_hazard(x - self.a1)
        return out + self.n * log_ndtr(x) + _softplus(k)


def _check(s: float, batches: int, shift: float, base: float) -> None:
    if not (isinstance(s, (int, float)) and s >= 0 and not math.isnan(s)):
        raise ValueError(f"noise multiplier s must be a number >= 0, got {s!r}")
    if isinstance(batches, bool) or not isinstance(batches, (int, np.integer)) or batches < 1:
        raise ValueError(f"batches must be an integer >= 1, got {batches!r}")
    if not (isinstance(shift, (int, float)) and 0 <= shift < math.inf):
        raise ValueError(f"shift must be a finite number >= 0, got {shift!r}")
    if not (isinstance(base, (int, float)) and 0 <= base < math.inf):
        raise ValueError(f"base must be a finite number >= 0, got {base!r}")


def max_statistic_prv(s: float, batches: int, order: str, shift: float = 1.0,
                      base: float = 0.0) -> PRV:
    """PRV of one epoch's max-statistic pair (module docstring), one order.

    s: noise multiplier; batches: T; shift: the differing record's gradient g_z (a); base: the
    differing batch's mean under Q, -g_o (0: Q = N(0, s^2 I); 1 with shift 1: Chua et al.).
    remove: Y = l(M), M ~ P_M; F_Y(t) = P(M/s <= x_t).  add: Y = -l(M), M ~ Q_M;
    F_Y(t) = 1 - Q(M/s <= x_{-t}). Here x_t = l^{-1}(t). The mean is KL(P_M || Q_M)
    (remove) or KL(Q_M || P_M) (add); ``centre`` is the mean.
    """
    if order not in ORDERS:
        raise ValueError(f"order must be one of {ORDERS}, got {order!r}")
    _check(s, batches, shift, base)
    if shift == 0 or math.isinf(s):
        return TRIVIAL
    if s == 0:
        return point_mass(math.inf)
    pair = _MaxPair(base / s, (base + shift) / s, int(batches))
    remove = order == "remove"
    alpha = pair.a1 if remove else pair.a0

    def log_f(t: Array) -> Array:
        """log F_Y(t) (remove) or log(1 - F_Y(t)) (add), limits included at t = +-inf."""
        t = np.asarray(t, dtype=float)
        with np.errstate(invalid="ignore", over="ignore"):
            return pair.log_cdf(pair.x_of(t if remove else -t), alpha)

    def lower(t: Array) -> Array:
        return np.exp(log_f(t))

    def upper(t: Array) -> Array:
        return -np.expm1(log_f(t))

    def integrand(x: Array) -> Array:
        """Q's density times psi(L) (remove) or phi(L) (add), both >= 0."""
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            return kl_integrand("psi" if remove else "phi", pair.loss(x), pair.log_q_density(x),
                                pair.log_p_density(x))

    x_lo = float(ndtri_exp(_LOG_FLOOR / batches))
    x_med = float(ndtri_exp(-math.log(2.0) / batches))
    width = 0.25 / math.sqrt(1.0 + 2.0 * math.log(batches))
    breaks = refined_breaks(x_lo, pair.a1 + 40.0, [x_med, pair.a0, pair.a1, x_med + pair.d], width)
    mean, err = kl_pair(integrand, breaks)
    # rounding: l carries a few u absolutely, so psi(L) ~ l^2 / 2 near l = 0 a larger relative
    # error; measured against mpmath up to 1.1e-14 of the mean (test_shuffle_attack)
    err += 1e-13 * abs(mean)
    # remove: cdf = F, sf = 1 - F; add: cdf = 1 - F_Q, sf = F_Q (each tail computed directly)
    cdf, sf = (lower, upper) if remove else (upper, lower)
    return PRV((), 0.0, Continuous(-math.inf, math.inf, 1.0, cdf, sf, mean), mean, err)


def single_epoch_delta_lower(s: float, T: int, eps: float, shift: float = 1.0, base: float = 0.0,
                             order: str = "remove") -> float:
    """Chua et al.'s bound for one epoch, directly: sup_c P(M > c) - e^eps Q(M > c) (remove) or
    sup_c Q(M <= c) - e^eps P(M <= c) (add), by a grid over c and a bounded Brent step.

    Valid without the monotone loss (any threshold test is a post-processing), and independent
    of the PRV path (no loss, no inversion): a cross-check of ``max_statistic_prv`` for one
    epoch. The tails are the closed forms of the module docstring.
    """
    from scipy.optimize import minimize_scalar

    if order not in ORDERS:
        raise ValueError(f"order must be one of {ORDERS}, got {order!r}")
    _check(s, T, shift, base)
    if not math.isfinite(eps):
        raise ValueError(f"eps must be finite, got {eps!r}")
    if shift == 0 or math.isinf(s):
        return max(0.0, -math.expm1(eps))
    if s == 0:
        return 1.0
    a0, a1, n = base / s, (base + shift) / s, int(T)

    def gain(z: Array) -> Array:
        """The test's advantage at threshold c = s z."""
        log_phi = (n - 1) * log_ndtr(z) if n > 1 else 0.0 * z
        log_p, log_q = log_ndtr(z - a1) + log_phi, log_ndtr(z - a0) + log_phi
        if order == "remove":
            return -np.expm1(log_p) + math.exp(eps) * np.expm1(log_q)
        return np.exp(log_q) - math.exp(eps) * np.exp(log_p)

    z_lo = float(ndtri_exp(_LOG_FLOOR / n)) - 1.0
    z_hi = max(a1 + 40.0, (abs(eps) + math.log(n) + a1 * a1) / (a1 - a0) + 1.0)
    z = np.linspace(z_lo, z_hi, 20001)
    with np.errstate(over="ignore", invalid="ignore"):
        g = gain(z)
        i = int(np.nanargmax(g))
        lo, hi = z[max(i - 1, 0)], z[min(i + 1, z.size - 1)]
        res = minimize_scalar(lambda v: -float(gain(np.array([v]))[0]), bounds=(lo, hi),
                              method="bounded", options={"xatol": 1e-13 * max(1.0, abs(z[i]))})
    return min(1.0, max(0.0, float(g[i]), -float(res.fun)))
