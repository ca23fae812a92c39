"""Hyperparameter tuning: the privacy of releasing the best of several runs of one composition.

One *run* is the whole composition (every row, each ``count`` times); a tuning procedure runs it
K times (each with hyperparameters drawn at random) and releases only the best run. How K is
chosen (``Tuning.runs``):

* ``fixed``: K = k always. Releasing the best of k runs is post-processing of their k-fold
  composition, so the certified PRV epsilon of the rows with every count times k bounds it.
* ``truncated_negative_binomial``: K ~ D_{eta,gamma} of Papernot and Steinke, "Hyperparameter
  tuning with Renyi differential privacy" (ICLR 2022, arXiv 2110.03620 v2), Definition 1 (p. 5):
  for eta > -1 and gamma in (0, 1), P[K = k] = (1-gamma)^k / (gamma^-eta - 1) *
  prod_{l<k} (l+eta)/(l+1) (eta != 0) or (1-gamma)^k / (k log(1/gamma)) (eta = 0, logarithmic);
  eta = 1 is the geometric distribution. E[K] = eta (1-gamma) / (gamma (1 - gamma^eta)), and
  (1/gamma - 1) / log(1/gamma) at eta = 0; with t = log(1/gamma) both read
  E[K] = h(t) / h(-eta t), h(x) = expm1(x) / x, and gamma is solved from the mean given.
  Theorem 2: if a run is (lam, e)-RDP and (lam^, e^)-RDP (lam > 1, lam^ >= 1), the best of K runs
  is (lam, e')-RDP with e' = e + (1+eta)(1 - 1/lam^) e^ + (1+eta) log(1/gamma) / lam^ +
  log E[K] / (lam - 1). Corollary 3 (lam, lam^ -> infinity): an eps-DP run gives a
  (2+eta) eps-DP release; eta = 1 (geometric) is Liu and Talwar's 3 eps (STOC 2019).
* ``poisson``: K ~ Poisson(mu), mu >= 1 (no run: a fixed output). Theorem 6: if a run is (lam, e)-RDP and (e^, d^)-DP with
  exp(e^) <= 1 + 1/(lam - 1), the best of K runs is (lam, e + mu d^ + log(mu) / (lam - 1))-RDP.
  Here e^ = log(1 + 1/(lam-1)) and d^ is the smaller of the PRV accountant's certified delta and
  the RDP conversion's at e^. For an eps-DP run, which is (0, tanh(eps/2))-DP (total variation of
  the worst eps-DP pair), Theorem 6 holds at every lam with e^ = 0, and lam -> infinity gives an
  (eps + mu tanh(eps/2))-DP release.

The RDP bounds are converted to (epsilon, delta) as the RDP comparison accountant converts
(comparisons._rdp_eps, Canonne, Kamath, Steinke 2020), optimising over ``ORDERS`` for lam and
lam^; RDP is nondecreasing in the order, so each order's bound also holds at every lower order.
For a pure-DP run the corollary is applied too and the smaller bound is reported (``method``
``"pure"``, else ``"rdp"``; ``"prv"`` for fixed runs). Rows with delta > 0 and no RDP curve have
no Renyi bound per run: the random-run theorems do not apply and the answer is infinite, with a
note saying so.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np
from scipy.optimize import brentq

from ..core.validate import check_delta
from ..core.values import MAX_COUNT, Relation, as_relation
from ..mechanisms import Neighbouring, Row
from ..pairs.rdp import ORDERS, rr_rdp
from .accountant import DEFAULT_EPS_ERROR, Accountant
from .certified import best_upper
from .comparisons import _rdp_delta, _rdp_eps, _row_rdp, _scan, _titles, compare_epsilon

__all__ = ["RUNS", "Tuning", "TuningResult", "tuned_epsilon", "tnb_mean", "tnb_gamma"]

RUNS = ("fixed", "poisson", "truncated_negative_binomial")
#: the largest mean number of runs (and of the fixed count): a row's count limit
MAX_MEAN = float(MAX_COUNT)
MAX_ETA = 1e6
_REFS = {"truncated_negative_binomial": "Papernot & Steinke 2022, Thm 2",
         "poisson": "Papernot & Steinke 2022, Thm 6"}


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "…"


def _number(name: str, value: object, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ValueError(f"tuning.{name} must be {what}; got {_shown(value)}")
    try:
        v = float(value)
    except OverflowError:
        v = math.inf
    if not math.isfinite(v):
        raise ValueError(f"tuning.{name} must be {what}; got {_shown(value)}")
    return v


@dataclass(frozen=True)
class Tuning:
    """How a composition was tuned: ``runs`` (one of RUNS), the ``mean`` number of runs (the
    number itself for ``fixed``) and, for ``truncated_negative_binomial``, its shape ``eta``.
    Checked on construction; a ValueError names the field and the value."""

    runs: str
    mean: float
    eta: float | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.runs, str) or self.runs not in RUNS:
            raise ValueError(f"tuning.runs must be one of {', '.join(RUNS)}; got {_shown(self.runs)}")
        if self.runs == "fixed":
            what = f"a whole number of runs from 1 to {MAX_COUNT:,}"
            m = _number("mean", self.mean, what)
            if m != int(m) or not 1 <= m <= MAX_COUNT:
                raise ValueError(f"tuning.mean must be {what}; got {_shown(self.mean)}")
            mean: float = int(m)
        else:
            # (Poisson too: below a mean of 1, Thm 6's bound falls below the Renyi divergence of
            # the release's "no run" outcome; dp_accounting's RepeatAndSelect asks for >= 1 as well)
            what = f"a number at least 1 and at most {MAX_MEAN:g} (the mean number of runs)"
            mean = _number("mean", self.mean, what)
            if not 1 <= mean <= MAX_MEAN:
                raise ValueError(f"tuning.mean must be {what}; got {_shown(self.mean)}")
        object.__setattr__(self, "mean", mean)
        if self.runs != "truncated_negative_binomial":
            if self.eta is not None:
                raise ValueError(f"tuning.eta applies to truncated_negative_binomial runs only; "
                                 f"got {_shown(self.eta)} for {self.runs} runs")
            return
        what = f"> -1 and at most {MAX_ETA:g} (the truncated negative binomial's shape; 1: geometric)"
        if self.eta is None:
            raise ValueError(f"tuning.eta must be {what}; it is missing")
        eta = _number("eta", self.eta, what)
        if not -1 < eta <= MAX_ETA:
            raise ValueError(f"tuning.eta must be {what}; got {_shown(self.eta)}")
        object.__setattr__(self, "eta", eta)

    @classmethod
    def from_dict(cls, data: object) -> "Tuning":
        """From the file format's ``tuning`` object (untrusted)."""
        if not isinstance(data, dict):
            raise ValueError(f"tuning must be an object with runs, mean and eta; got {_shown(data)}")
        unknown = sorted(set(data) - {"runs", "mean", "eta"}, key=str)
        if unknown:
            raise ValueError(f"tuning.{unknown[0]}: not a field of tuning (its fields: runs, mean, eta)")
        if "mean" not in data:
            raise ValueError("tuning.mean must be given (the mean number of runs); it is missing")
        return cls(data.get("runs"), data["mean"], data.get("eta"))  # type: ignore[arg-type]

    def as_dict(self) -> dict:
        out: dict = {"runs": self.runs, "mean": self.mean}
        if self.eta is not None:
            out["eta"] = self.eta
        return out

    def describe(self) -> str:
        """In words: ``best of 10 runs``, ``best of Poisson runs, mean 10``, ..."""
        if self.runs == "fixed":
            return f"best of {int(self.mean):,} runs"
        if self.runs == "poisson":
            return f"best of Poisson runs, mean {self.mean:g}"
        return f"best of truncated negative binomial runs, mean {self.mean:g}, η = {self.eta:g}"


@dataclass(frozen=True)
class TuningResult:
    """The epsilon (at ``delta``) of releasing the best run, and how it was bounded."""

    epsilon: float
    method: str  # "prv" (fixed runs), "rdp" (Papernot-Steinke's RDP bound) or "pure" (a corollary)
    runs: str
    mean: float
    eta: float | None
    delta: float
    note: str

    def as_dict(self) -> dict:
        return {"epsilon": self.epsilon, "method": self.method, "runs": self.runs, "mean": self.mean,
                "eta": self.eta, "delta": self.delta, "note": self.note}


# ------------------------------------------------------------ the truncated negative binomial
def _log_h(x: float) -> float:
    """log(expm1(x) / x), 0 at x = 0."""
    if abs(x) < 1e-5:
        return x / 2 + x * x / 24
    if x > 0:
        return x + math.log(-math.expm1(-x)) - math.log(x)
    return math.log(-math.expm1(x)) - math.log(-x)


def _log_mean(t: float, eta: float) -> float:
    """log E[K] of D_{eta, gamma} with t = log(1/gamma) > 0: log h(t) - log h(-eta t)."""
    return _log_h(t) - _log_h(-eta * t)


def tnb_mean(gamma: float, eta: float) -> float:
    """E[K] of D_{eta,gamma}: eta (1-gamma) / (gamma (1 - gamma^eta)), or (1/gamma - 1) / log(1/gamma)
    at eta = 0 (gamma in (0, 1), eta > -1)."""
    if not (0 < gamma < 1 and eta > -1):
        raise ValueError(f"gamma must be in (0, 1) and eta > -1; got gamma={gamma!r}, eta={eta!r}")
    return math.exp(_log_mean(-math.log(gamma), eta))


def tnb_gamma(mean: float, eta: float) -> float:
    """gamma of the D_{eta,gamma} with E[K] = ``mean`` (> 1; 0.0 where gamma underflows)."""
    return math.exp(-_log_inv_gamma(mean, eta))


def _log_inv_gamma(mean: float, eta: float) -> float:
    """log(1/gamma) of the D_{eta,gamma} with E[K] = ``mean`` (> 1), rounded up (a larger log(1/gamma)
    is a slightly larger mean, and every bound here grows with both)."""
    target = math.log(mean)
    hi = 2 * target / (1 + eta) + 1.0
    while _log_mean(hi, eta) < target:
        hi *= 2
    t = brentq(lambda x: _log_mean(x, eta) - target, 0.0, hi, xtol=1e-300, rtol=4 * np.finfo(float).eps)
    return float(t) * (1 + 1e-12)


# ------------------------------------------------------------ the bounds
def _run_rdp(active: list[Row]) -> tuple[np.ndarray | None, list[Row]]:
    """RDP of one run at ORDERS (a pure-DP row without a curve: randomized response's), and
    the rows that have none."""
    total, without = np.zeros(ORDERS.shape), []
    for row in active:
        r = _row_rdp(row.mechanism)
        if r is None:
            ed = row.mechanism.eps_delta()
            if ed is None or ed[1] > 0 or not math.isfinite(ed[0]):
                without.append(row)
                continue
            r = rr_rdp(ed[0], ORDERS)
        with np.errstate(over="ignore", invalid="ignore"):
            total = total + row.count * np.asarray(r, dtype=float)
    total = np.where(np.isnan(total), math.inf, total)
    return (None if without else total), without


def _pure_eps(active: list[Row]) -> float | None:
    """The pure-DP epsilon of one run (sum of count x eps), None unless every row is pure DP."""
    eds = [r.mechanism.eps_delta() for r in active]
    if any(ed is None or ed[1] > 0 for ed in eds):
        return None
    with np.errstate(over="ignore"):
        return math.fsum(r.count * ed[0] for r, ed in zip(active, eds) if ed is not None)


def _convert(bound: np.ndarray, delta: float) -> float:
    """(eps, delta) from an RDP bound at ORDERS, each order's bound carried down to lower orders."""
    bound = np.maximum(np.minimum.accumulate(bound[::-1])[::-1], 0.0)
    if not np.isfinite(bound).any():
        return math.inf
    return float(_rdp_eps(bound, delta))


def _tnb(r: np.ndarray | None, pure: float | None, tuning: Tuning, delta: float) -> tuple[float, float, str]:
    assert tuning.eta is not None  # (checked: truncated negative binomial runs have eta)
    eta = tuning.eta
    t = _log_inv_gamma(tuning.mean, eta)
    log_mean = max(math.log(tuning.mean), _log_mean(t, eta))
    rdp = math.inf
    if r is not None:
        lam = ORDERS
        hat = [(1 - 1 / lam) * r + t / lam, np.array([t] if np.isfinite(r).any() else [])]
        if pure is not None:
            hat.append(np.array([pure]))
        c = (1 + eta) * float(np.min(np.concatenate(hat)))
        rdp = _convert(r + log_mean / (lam - 1) + c, delta)
    pure_eps = math.inf if pure is None else (2 + eta) * pure
    gamma = math.exp(-t)
    return rdp, pure_eps, f"γ = {gamma:.6g}, log 1/γ = {t:.6g}"


def _poisson(r: np.ndarray | None, pure: float | None, mu: float, delta: float,
             acc: Accountant) -> tuple[float, float, str]:
    rdp = math.inf
    note = ""
    if r is not None and np.isfinite(r).any():
        lam = ORDERS
        eps_hat = np.log1p(1 / (lam - 1))
        d_hat = _rdp_delta(r, eps_hat)
        try:
            d_hat = np.minimum(d_hat, acc.delta_curve(eps_hat)[2])
        except (ArithmeticError, MemoryError) as exc:
            note = f"δ̂ from RDP only (the PRV profile could not be composed: {exc})"
        rdp = _convert(r + mu * d_hat + math.log(mu) / (lam - 1), delta)
    pure_eps = math.inf if pure is None else pure + mu * math.tanh(pure / 2)
    return rdp, pure_eps, note


def tuned_epsilon(rows: Sequence[Row], relation: Relation | Neighbouring | str | None, delta: float,
                  tuning: Tuning, eps_error: float = DEFAULT_EPS_ERROR, accountant: Accountant | None = None,
                  cancel: Callable[[], bool] | None = None) -> TuningResult:
    """Epsilon at ``delta`` of releasing the best of the runs ``tuning`` describes, one run being
    ``rows`` under ``relation``. ``accountant`` (of the same rows, relation and eps_error) is
    reused for the single run's profile when given. Raises ValueError for bad input."""
    delta = check_delta(delta)
    if isinstance(tuning, dict):
        tuning = Tuning.from_dict(tuning)
    if not isinstance(tuning, Tuning):
        raise ValueError(f"tuning must be a Tuning; got {_shown(tuning)}")
    rows = list(rows)
    _scan(rows)
    relation = as_relation(relation)

    def result(eps: float, method: str, note: str) -> TuningResult:
        return TuningResult(float(eps), method, tuning.runs, tuning.mean, tuning.eta, delta, note)

    def single() -> Accountant:
        return accountant if accountant is not None else Accountant(rows, eps_error, relation, cancel=cancel)

    if tuning.runs == "fixed" or (tuning.runs == "truncated_negative_binomial" and tuning.mean == 1):
        k = int(tuning.mean)
        too_many = [i + 1 for i, r in enumerate(rows) if r.count * k > MAX_COUNT]
        if too_many:
            raise ValueError(f"tuning.mean: {k:,} runs of row {too_many[0]} make more than {MAX_COUNT:,} "
                             "runs of one row")
        acc = single() if k == 1 else Accountant([Row(r.mechanism, r.count * k) for r in rows], eps_error,
                                                 relation, cancel=cancel)
        try:
            # the smallest certified upper bound, as the headline's (a closed form widened for its
            # rounding can sit a hair above basic composition's k eps)
            eps = best_upper(acc.epsilon(delta).upper, compare_epsilon(acc.rows, delta)).value
        except (ArithmeticError, MemoryError) as exc:  # (a grid too large: no bound, said why)
            return result(math.inf, "prv", f"the {k:,}-fold composition could not be composed: {exc}")
        return result(eps, "prv", "one run: the composition itself (certified)" if k == 1 else
                      f"best of {k:,} runs: post-processing of their {k:,}-fold composition (certified)")
    acc = single()
    active, blatant = _scan(acc.rows)
    if blatant:
        opened = [r for r in active if r.mechanism.is_blatant()]
        return result(math.inf, "rdp", f"{_titles(opened)} with these parameters is not private at all")
    if not active:
        return result(0.0, "pure", "nothing leaks: every row runs 0 times or adds nothing")
    r, without = _run_rdp(active)
    pure = _pure_eps(active)
    if tuning.runs == "poisson":
        rdp, pure_eps, extra = _poisson(r, pure, tuning.mean, delta, acc)
    else:
        rdp, pure_eps, extra = _tnb(r, pure, tuning, delta)
    ref = _REFS[tuning.runs]
    if pure is not None and pure_eps <= rdp:
        corollary = "Cor. 3: (2 + η)ε" if tuning.runs != "poisson" else "Thm 6 as λ → ∞: ε + μ tanh(ε/2)"
        return result(pure_eps, "pure", "; ".join(filter(None, [
            f"pure ε-DP run (ε = {pure:.6g}); {ref.split(',')[0]}, {corollary}", extra])))
    if math.isinf(rdp) and without:
        return result(rdp, "rdp", f"{_titles(without)} rows have δ > 0 and no Rényi bound per run: "
                                  f"{ref} needs one")
    if math.isinf(rdp):
        return result(rdp, "rdp", "the Rényi divergence of one run is infinite at every order")
    return result(rdp, "rdp", "; ".join(filter(None, [ref, extra])))
