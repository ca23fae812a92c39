"""Older accountants shown beside the certified PRV accountant, each labelled.

* RDP / moments accountant, a *bound*: each kind's RDP curve (rdp.py; ``Mechanism.rdp``)
  added over the rows and converted to (eps, delta) (Canonne, Kamath, Steinke 2020, Prop. 12).
  Rows without an RDP curve (approximate DP with delta > 0) join by basic composition.
* GDP / CLT, an *approximation* (may under-report): mu^2 adds up over the rows (gdp.py;
  ``Mechanism.gdp_mu2``). *Exact* when every row is a Gaussian mechanism.
* Basic and advanced composition, *bounds*: Dwork, Rothblum, Vadhan 2010, Thm III.3;
  heterogeneous by the same Azuma argument (Dwork, Roth 2014, Thm 3.20).
* Optimal composition of one homogeneous (eps0, delta0)-DP pair, *exact*: Kairouz, Oh,
  Viswanath 2015, Thm 3.3, via the binomial privacy loss Y = eps0 (k - 2i).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Sequence, cast

import numpy as np
from scipy.special import expit, gammaln, logsumexp, ndtr, ndtri

from ..pairs import gdp
from ..mechanisms import MAX_COUNT, Mechanism, Row
from ..pairs.rdp import ORDERS
from ..core.validate import check_delta, check_epsilon, check_number

__all__ = ["Comparison", "compare_epsilon", "compare_delta", "rdp_delta_curve", "gdp_mu",
           "gdp_delta_curve", "gdp_tradeoff", "epsilon_vs_count", "ORDERS"]

_LABELS = {"rdp": ("RDP (moments accountant)", "bound"), "gdp": ("GDP / CLT", "approximation"),
           "basic": ("Basic composition", "bound"), "advanced": ("Advanced composition", "bound"),
           "exact": ("Exact (KOV optimal composition)", "exact")}


@dataclass(frozen=True)
class Comparison:
    """One accountant's answer.

    Attributes
    ----------
    name, label : str
        Key (``rdp``, ``gdp``, ``basic``, ``advanced``, ``exact``) and display name.
    kind : str
        ``"bound"``, ``"approximation"`` or ``"exact"``.
    value : float or None
        Epsilon (or delta); None when the accountant does not apply.
    note : str
        Why it does not apply, or what was assumed; ``""`` otherwise.
    """

    name: str
    label: str
    kind: str
    value: float | None
    note: str

    def as_dict(self) -> dict:
        """JSON-friendly dict; None stays None and infinity stays ``float('inf')``."""
        return {"name": self.name, "label": self.label, "kind": self.kind,
                "value": None if self.value is None else float(self.value), "note": self.note}


def _array(name: str, x: object, lo: float = 0.0, hi: float = math.inf) -> np.ndarray:
    try:
        a = np.asarray(x, dtype=float)
    except (TypeError, ValueError):
        a = np.array([math.nan])
    if a.ndim > 1 or not np.all(np.isfinite(a)) or np.any(a < lo) or np.any(a > hi):
        raise ValueError(f"{name} must be a 1-d array of finite numbers in [{lo}, {hi}], got {x!r}")
    return np.atleast_1d(a)


def _scan(rows: Sequence[Row]) -> tuple[list[Row], bool]:
    """Validate; return the rows that leak something and whether one of them is blatant."""
    for i, row in enumerate(rows):
        if not isinstance(row, Row):
            raise ValueError(f"rows[{i}] must be a Row, got {row!r}")
    active = [r for r in rows if r.count > 0 and not r.mechanism.is_trivial()]
    return active, any(r.mechanism.is_blatant() for r in active)


#: rows whose RDP curve (100-odd floats) and mu^2 are kept: a window of thousands of distinct
#: rows asks for each several times (the headline, the curves, the risk), and an LRU cache
#: smaller than the rows misses every time
ROW_CACHE = 1 << 14
_RDP: dict = {}
_MISSING = object()


# ------------------------------------------------------------------ RDP (a bound)
@np.errstate(all="ignore")
def _row_rdp(mech: Mechanism) -> np.ndarray | None:
    """RDP of one run at ORDERS (inf where not computed); None if RDP does not apply. Kept for
    ROW_CACHE mechanisms (then forgotten all at once)."""
    out = _RDP.get(mech, _MISSING)
    if out is not _MISSING:
        return cast("np.ndarray | None", out)
    out = mech.rdp(ORDERS)
    if out is not None:
        out = np.array(out, dtype=float)
        out.setflags(write=False)
    if len(_RDP) >= ROW_CACHE:
        _RDP.clear()
    _RDP[mech] = out
    return cast("np.ndarray | None", out)


def rdp_seconds(rows: Sequence[Row]) -> float:
    """About how long the RDP curves of ``rows`` not worked out yet will take (each kind's
    ``Mechanism.rdp_seconds``, once per distinct mechanism): the comparison accountants' part of
    a window's request."""
    return sum(m.rdp_seconds for m in {r.mechanism for r in rows if r.count > 0} if m not in _RDP)


def _rdp_split(active: list[Row]) -> tuple[np.ndarray, float, float]:
    """RDP of the rows it applies to, plus (sum count eps_i, sum count delta_i) of the
    approx_dp rows with delta > 0, which join by basic composition:
    (eps_R(delta'), delta') then (sum eps_i, sum delta_i) gives
    (eps_R(delta') + sum eps_i, delta' + sum delta_i)."""
    total, e_sum, d_sum = np.zeros(ORDERS.shape), [], []
    for row in active:
        r = _row_rdp(row.mechanism)
        if r is None:  # approximate DP with delta > 0: no RDP curve
            e, d = row.mechanism.eps_delta()
            e_sum.append(row.count * e)
            d_sum.append(row.count * d)
        else:
            with np.errstate(over="ignore"):  # a huge order's RDP times 10^9 runs: inf, a bound
                total = total + row.count * r
    return total, math.fsum(e_sum), math.fsum(d_sum)


def _rdp_eps_split(r: np.ndarray, e_sum: float, d_sum: float, delta: float) -> float:
    if d_sum >= delta:
        return math.inf
    return float(_rdp_eps(r, delta - d_sum)) + e_sum


def _rdp_delta_split(r: np.ndarray, e_sum: float, d_sum: float, eps: np.ndarray) -> np.ndarray:
    out = np.ones(eps.shape)
    ok = eps >= e_sum
    if np.any(ok):
        out[ok] = np.minimum(_rdp_delta(r, eps[ok] - e_sum) + d_sum, 1.0)
    return out


def _rdp_eps(r: np.ndarray, delta: float) -> np.ndarray:
    """min over orders of R + log((a-1)/a) - (log delta + log a)/(a-1), >= 0 (R = 0 gives 0)."""
    a = ORDERS
    with np.errstate(invalid="ignore"):
        e = r + np.log1p(-1 / a) - (math.log(delta) + np.log(a)) / (a - 1)
    e = np.where(np.isnan(e), math.inf, e).min(axis=-1)
    return np.where(np.all(r == 0, axis=-1), 0.0, np.maximum(e, 0.0))


def _rdp_delta(r: np.ndarray, eps: np.ndarray) -> np.ndarray:
    """min over orders of exp((a-1)(R - eps)) (1 - 1/a)^(a-1) / a, capped at 1."""
    if np.all(r == 0):
        return np.zeros(eps.shape)
    a = ORDERS
    with np.errstate(invalid="ignore", over="ignore"):
        ld = (a - 1) * (r - eps[:, None]) - np.log(a) + (a - 1) * np.log1p(-1 / a)
        return np.minimum(np.exp(np.where(np.isnan(ld), math.inf, ld).min(axis=1)), 1.0)


# ------------------------------------------------------------------ GDP / CLT (approximation)
@lru_cache(maxsize=ROW_CACHE)
@np.errstate(all="ignore")
def _row_mu2(mech: Mechanism) -> float | None:
    """mu^2 of one run (the larger of the two orders); None if GDP does not apply."""
    return mech.gdp_mu2()


def _gdp_total(active: list[Row]) -> tuple[float | None, bool]:
    """Total mu^2 = sum count mu_i^2, and whether it is exact (every row Gaussian)."""
    mu2 = [r.count * m if (m := _row_mu2(r.mechanism)) is not None else None for r in active]
    exact = all(r.mechanism.gaussian_mu() is not None for r in active)
    return (None if None in mu2 else math.fsum(cast(list[float], mu2))), exact  # (no None in it)


# ------------------------------------------------------------------ exact (KOV)
def _kov_window(e0: float, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Atoms Y_i = e0 (k - 2i) > 0 of k-fold randomized response, i ~ Bin(k, 1/(1+e^e0)).

    Returns Y, log P(i) and log Q(i) = log P(i) - Y_i for i within w = 60 sd + 1200 of the mean;
    by Bernstein's inequality the rest has mass below e^-900. gammaln limits the relative
    accuracy of P to ~1e-9 at k = 1e6.
    """
    p = float(expit(-e0))
    w = 60 * math.sqrt(k * p * (1 - p)) + 1200
    i = np.arange(max(0, math.floor(k * p - w)), min((k - 1) // 2, math.ceil(k * p + w)) + 1.0)
    i = i if e0 > 0 else i[:0]
    lp = gammaln(k + 1) - gammaln(i + 1) - gammaln(k - i + 1) - k * math.log1p(math.exp(-e0)) - i * e0
    return e0 * (k - 2 * i), lp, lp - e0 * (k - 2 * i)


def _kov(e0: float, d0: float, k: int, x: float, want_eps: bool) -> float:
    """delta(eps) = 1 - (1-d0)^k + (1-d0)^k sum_{Y_i > eps} P(i) (1 - e^(eps - Y_i)), or its inverse."""
    keep, lost = math.exp(k * math.log1p(-d0)), -math.expm1(k * math.log1p(-d0))
    if not math.isfinite(e0 * k):  # (e0 past 1e296: P(i = 0) is 1 to a float, and Y_0 = e0 k past one)
        if not want_eps:
            return 1.0  # (delta_RR(eps) = 1 - e^(eps - Y_0) = 1 at every finite eps)
        return 0.0 if (x - lost) >= keep else math.inf
    y, lp, lq = _kov_window(e0, k)
    if not want_eps:
        n = int(np.sum(y > x))
        with np.errstate(divide="ignore"):
            rr = float(np.exp(logsumexp(lp[:n] + np.log(-np.expm1(x - y[:n]))))) if n else 0.0
        return min(1.0, lost + keep * rr)
    t = (x - lost) / keep if keep > 0 else -1.0  # target for delta_RR
    if t < 0 or y.size == 0:
        return math.inf if t < 0 else 0.0
    ca, cb = np.logaddexp.accumulate(lp), np.logaddexp.accumulate(lq)
    left = np.append(y[1:], 0.0)  # segment n: eps in [left[n], y[n]), atoms 0..n exceed eps
    log_l = ca + gdp.log1mexp(np.minimum(left + cb - ca, 0.0))  # delta_RR at each left end
    lt = math.log(t) if t > 0 else -math.inf
    if log_l[-1] <= lt:
        return 0.0
    n = int(np.argmax(log_l > lt))  # there delta_RR(eps) = A_n - e^eps B_n = t
    e = ca[n] + float(gdp.log1mexp(np.array(lt - ca[n]))) - cb[n]
    return float(min(max(e, left[n]), y[n]))


# ------------------------------------------------------------------ the accountants
def _titles(rows: Sequence[Row]) -> str:
    """The kinds of ``rows`` as people read them: ``Gaussian and Laplace``."""
    titles = list(dict.fromkeys(r.mechanism.title for r in rows))
    return titles[0] if len(titles) == 1 else ", ".join(titles[:-1]) + " and " + titles[-1]


def _compute(name: str, active: list[Row], x: float, want_eps: bool) -> tuple[float | None, str]:
    """One accountant: epsilon at delta = x (want_eps) or delta at epsilon = x. The note says
    why it gave no answer (or an infinite one) in words about the rows there are."""
    if name == "rdp":
        r, e_sum, d_sum = _rdp_split(active)
        with_delta = [row for row in active if _row_rdp(row.mechanism) is None]
        note = (f"{_titles(with_delta)} rows with δ > 0 added by basic composition" if with_delta else "")
        unbounded = [row for row in active if (u := _row_rdp(row.mechanism)) is not None
                     and not np.isfinite(u).any()]
        if want_eps:
            v = _rdp_eps_split(r, e_sum, d_sum, x)
            if math.isfinite(v):
                return v, note
            if d_sum >= x:
                return v, f"the target δ is not above the {_titles(with_delta)} rows' total δ"
            if unbounded:
                return v, f"the Rényi divergence of {_titles(unbounded)} with these parameters is infinite"
            return v, note
        return float(_rdp_delta_split(r, e_sum, d_sum, np.array([x]))[0]), note
    if name == "gdp":
        if (mu2 := _gdp_total(active)[0]) is None:
            with_delta = [r for r in active if _row_mu2(r.mechanism) is None]
            return None, f"GDP does not describe {_titles(with_delta)} rows with δ > 0"
        mu = math.sqrt(mu2)
        return (gdp.epsilon(mu, x) if want_eps else float(np.exp(gdp.log_delta(mu, x)))), ""
    if name == "exact":
        pairs = {r.mechanism.exact_eps_delta() for r in active}
        if None in pairs:
            if all(r.mechanism.gaussian_mu() is not None for r in active):
                return None, "every row is Gaussian: the GDP / CLT row is exact"
            other = [r for r in active if r.mechanism.exact_eps_delta() is None]
            return None, f"no exact formula here for {_titles(other)}"
        if len(pairs) > 1:
            return None, "exact only when every row has the same ε and δ"
        (e0, d0), k = pairs.pop(), sum(r.count for r in active)
        return _kov(e0, d0, k, x, want_eps), ""
    params = {r.mechanism.eps_delta() for r in active}
    if None in params:
        other = [r for r in active if r.mechanism.eps_delta() is None]
        verb = "has" if len({r.mechanism.title for r in other}) == 1 else "have"
        return None, f"{_titles(other)} {verb} no single (ε, δ) guarantee per run"
    with np.errstate(over="ignore"):
        terms = [(r.count, *r.mechanism.eps_delta()) for r in active]
        e1, d1 = math.fsum(c * e for c, e, _ in terms), math.fsum(c * d for c, _, d in terms)
        s2 = math.fsum(c * e * e for c, e, _ in terms)
        drift = math.fsum(c * e * float(np.expm1(e)) for c, e, _ in terms)
    if want_eps:
        basic = e1 if d1 <= x else math.inf
        if name == "basic":
            return basic, "" if d1 <= x else f"the rows' total δ ({d1:.3g}) is above the target δ ({x:.3g})"
        if x <= d1:
            return None, f"the target δ is not above the rows' total δ ({d1:.3g})"
        return min(basic, math.sqrt(-2 * math.log(x - d1) * s2) + drift), ""
    basic = min(1.0, d1) if e1 <= x else 1.0
    if name == "basic":
        return basic, "" if e1 <= x else f"ε = {x:.3g} is below the rows' total ε ({e1:.3g})"
    if x > drift:  # advanced: the smallest delta' with sqrt(2 log(1/delta') s2) + drift <= x
        basic = min(basic, 1.0, d1 + (math.exp(-(x - drift) * (x - drift) / (2 * s2)) if s2 > 0 else 0.0))
    return basic, ""


def exact_value(rows: Sequence[Row], x: float, want_eps: bool) -> float | None:
    """The exact epsilon at delta = x (or delta at epsilon = x) when a closed form applies:
    every active row Gaussian (mu composes exactly), or one homogeneous pure/approximate-DP
    row (Kairouz-Oh-Viswanath). None otherwise. Inputs must already be validated."""
    active, blatant = _scan(rows)
    if blatant or not active:
        return None
    mu2, exact = _gdp_total(active)
    if exact and mu2 is not None:
        mu = math.sqrt(mu2)
        return gdp.epsilon(mu, x) if want_eps else float(np.exp(gdp.log_delta(mu, x)))
    value, _ = _compute("exact", active, x, want_eps)
    return value


def _compare(rows: Sequence[Row], x: float, want_eps: bool) -> dict[str, Comparison]:
    active, blatant = _scan(rows)
    out = {}
    value: float | None
    for name, (label, kind) in _LABELS.items():
        if blatant or not active:
            value = (math.inf if want_eps else 1.0) if blatant else 0.0
            open_rows = [r for r in active if r.mechanism.is_blatant()]
            note = (f"{_titles(open_rows)} with these parameters is not private at all" if blatant
                    else "nothing leaks: every row runs 0 times or adds nothing" if rows
                    else "empty composition")
        else:
            value, note = _compute(name, active, x, want_eps)
        if value is not None and math.isnan(value):
            value = math.inf if want_eps else 1.0
        if name == "gdp" and value is not None:
            kind = "exact" if blatant or _gdp_total(active)[1] else kind
            note = note or ("exact: every row is Gaussian" if kind == "exact"
                            else "approximation, may under-report")
        out[name] = Comparison(name, label, kind, value, note)
    return out


def compare_epsilon(rows: Sequence[Row], delta: float) -> dict[str, Comparison]:
    """Epsilon at the given delta from each older accountant.

    Parameters
    ----------
    rows : sequence of Row
        The composition.
    delta : float
        Target delta, in (0, 1).

    Returns
    -------
    dict of str to Comparison
        Keys ``rdp``, ``gdp``, ``basic``, ``advanced``, ``exact``, in that order.
    """
    return _compare(rows, check_delta(delta), True)


def compare_delta(rows: Sequence[Row], epsilon: float) -> dict[str, Comparison]:
    """Delta at the given epsilon (finite, >= 0) from each older accountant.

    Parameters and return value as for :func:`compare_epsilon`, with epsilon in place of delta.
    """
    return _compare(rows, check_epsilon(epsilon), False)


def rdp_delta_curve(rows: Sequence[Row], eps: np.ndarray) -> np.ndarray | None:
    """Upper bound on delta at each eps (>= 0) from RDP; None if RDP does not apply."""
    eps = _array("eps", eps)
    active, blatant = _scan(rows)
    if blatant:
        return np.ones(eps.shape)
    r, e_sum, d_sum = _rdp_split(active)
    return _rdp_delta_split(r, e_sum, d_sum, eps)


def gdp_mu(rows: Sequence[Row]) -> float | None:
    """CLT mu of the whole composition (inf if a row is blatant); None if not applicable."""
    active, blatant = _scan(rows)
    mu2 = math.inf if blatant else _gdp_total(active)[0]
    return None if mu2 is None else math.sqrt(mu2)


def gdp_delta_curve(rows: Sequence[Row], eps: np.ndarray) -> np.ndarray | None:
    """delta at each eps (>= 0) of mu-GDP with mu = gdp_mu(rows) (an approximation); None if N/A."""
    eps = _array("eps", eps)
    mu = gdp_mu(rows)
    return None if mu is None else np.minimum(np.exp(gdp.log_delta(mu, eps)), 1.0)


def gdp_tradeoff(mu: float, alpha: np.ndarray) -> np.ndarray:
    """Tradeoff function of mu-GDP, beta = Phi(Phi^-1(1 - alpha) - mu), for alpha in [0, 1]."""
    mu = mu if mu == math.inf else check_number("mu", mu, 0.0)
    alpha = _array("alpha", alpha, 0.0, 1.0)
    return np.zeros(alpha.shape) if math.isinf(mu) else ndtr(-ndtri(alpha) - mu)


def epsilon_vs_count(rows: Sequence[Row], row_index: int, counts: np.ndarray,
                     delta: float) -> dict[str, np.ndarray | None]:
    """Epsilon from RDP and from GDP as the count of one row varies, the others fixed.

    Parameters
    ----------
    rows : sequence of Row
        The composition.
    row_index : int
        Index of the row whose count varies.
    counts : array of int
        Counts (>= 0) at which to evaluate.
    delta : float
        Target delta, in (0, 1).

    Returns
    -------
    dict
        ``{"rdp": eps array or None, "gdp": eps array or None}`` (None: not applicable).
    """
    delta = check_delta(delta)
    rows = list(rows)
    if isinstance(row_index, bool) or not isinstance(row_index, (int, np.integer)) \
            or not 0 <= row_index < len(rows):
        raise ValueError(f"row_index must be an index into rows, got {row_index!r}")
    c = _array("counts", counts, 0.0, MAX_COUNT)
    if np.any(c != np.round(c)):
        raise ValueError(f"counts must be integers, got {counts!r}")
    _scan(rows)
    active, blatant = _scan(rows[:row_index] + rows[row_index + 1:])
    mech = rows[row_index].mechanism
    if blatant:
        return {"rdp": np.full(c.shape, math.inf), "gdp": np.full(c.shape, math.inf)}
    unit: np.ndarray | None
    unit2: float | None
    if mech.is_trivial() or mech.is_blatant():
        v = math.inf if mech.is_blatant() else 0.0
        unit, unit2 = np.full(ORDERS.shape, v), v
    else:
        unit, unit2 = _row_rdp(mech), _row_mu2(mech)
    (r0, e0, d0), (m0, _) = _rdp_split(active), _gdp_total(active)
    with np.errstate(invalid="ignore", over="ignore"):  # (a huge RDP times the counts: inf, a bound)
        if unit is None:  # the varying row has delta > 0 (no RDP curve)
            e1, d1 = mech.eps_delta()
            rdp = np.array([_rdp_eps_split(r0, e0 + cc * e1, d0 + cc * d1, delta) for cc in c])
        else:
            rdp = (np.full(c.shape, math.inf) if d0 >= delta else _rdp_eps(
                r0 + np.where(c[:, None] > 0, c[:, None] * unit, 0.0), delta - d0) + e0)
        mu2 = None if m0 is None or unit2 is None else m0 + np.where(c > 0, c * unit2, 0.0)
    if mu2 is not None:
        mu2 = np.where(np.isnan(mu2), np.inf, mu2)  # (0 x inf: no GDP value; a NaN key never matches)
        cache = {m: gdp.epsilon(math.sqrt(m), delta) for m in np.unique(mu2)}
        mu2 = np.array([cache[m] for m in mu2])
    return {"rdp": rdp, "gdp": mu2}
