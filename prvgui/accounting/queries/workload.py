"""A workload's rows: each row's share of the privacy cost, and a total budget split over the rows.

Shares are taken in an additive currency, the first that every row has:

* rho-zCDP: zCDP composes by adding rho (Bun, Steinke 2016, Lemma 2.3). A row's rho is
  ``count x rho`` of one run under the relation: the exact Gaussian's mu^2 / 2
  (``Mechanism.zcdp_rho``), the discrete Gaussian's Delta^2 / (2 sigma^2) (Canonne, Kamath,
  Steinke 2020, Sec. 2) and a zCDP row's rho (xi = 0).
* RDP at one order: RDP curves add up over a composition (Mironov 2017, Prop. 1); the order is
  the one where the whole curve gives the smallest epsilon at the target delta (the conversion of
  comparisons.py, Canonne, Kamath, Steinke 2020, Prop. 12), and each row's share is its part of
  the whole curve at that order.
* Otherwise each row's certified epsilon alone at the target delta: not additive (the shares of
  these numbers say which rows cost most, not how the whole adds up).

In no currency is the certified epsilon of the whole composition the sum of the rows' shares of
anything: the PRV accountant composes the rows' privacy loss distributions, and is tighter.

Splitting a total budget: in rho, each row i gets rho_i = R w_i / sum w, and its noise is solved
exactly (Gaussian and discrete Gaussian: sigma = Delta_rel sqrt(count / (2 rho_i)); zCDP rows:
rho = rho_i / count), then stepped towards privacy until the computed rho is at most rho_i. In
epsilon, each row alone is calibrated (calibrate.py) to epsilon_i = E w_i / sum w at delta / n, so
that basic composition (Dwork, Roth 2014, Thm 3.16) certifies (E, delta) for the whole; the PRV
accountant's answer for the whole is then at most that, up to its bracket.
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from .accountant import Accountant
from .calibrate import Infeasible, calibrate, rows_with
from .comparisons import _row_rdp
from ..core.validate import check_delta, check_number
from ..core.values import Relation, Row, as_relation
from ..pairs.rdp import ORDERS

#: the dominant rows make up at least this fraction of the total
DOMINANT = 0.8
#: the kinds whose rho the split sets exactly, and the parameter it sets
RHO_KINDS = {"gaussian": "sigma", "discrete_gaussian": "sigma", "zcdp": "rho"}
#: the parameter an epsilon split calibrates, the first of these the kind can search
NOISE_PARAMETERS = ("sigma", "scale", "epsilon", "epsilon0", "rho")


@dataclass(frozen=True)
class Shares:
    """Each row's part of the privacy cost. ``currency``: "rho", "rdp" or "epsilon" (the last is
    not additive); ``order``: the RDP order (currency "rdp"); ``values``: each row's rho, RDP at
    the order or epsilon alone; ``shares``: each value over ``total``; ``dominant``: the indices
    (from 0, largest share first) of the fewest rows making up ``threshold`` of the total."""

    currency: str
    order: float | None
    values: tuple[float, ...]
    shares: tuple[float, ...]
    total: float
    dominant: tuple[int, ...]
    threshold: float = DOMINANT

    @property
    def additive(self) -> bool:
        return self.currency != "epsilon"


def row_rho(row: Row, relation: Relation) -> float | None:
    """rho-zCDP of ``row`` (count runs) under ``relation`` when its kind has an exact one, else None."""
    mech = row.mechanism.under(relation)
    rho = mech.zcdp_rho()
    if rho is None and mech.kind in ("discrete_gaussian", "zcdp"):
        rho = mech.tail_rho()  # Delta^2 / (2 sigma^2); a zCDP row's rho (None when xi > 0)
    if rho is None:
        return None
    return 0.0 if row.count == 0 else row.count * rho


def dominant_rows(shares: Sequence[float], threshold: float = DOMINANT) -> tuple[int, ...]:
    """The fewest rows (largest share first; ties: the earlier row) whose shares reach
    ``threshold``, and every other row whose share equals the last of those (to 1e-12): rows
    alike are marked alike. (Five rows of one share each were four dominant and one not; 40
    Laplace rows of six shapes marked some rows of a share and not others.)"""
    order = sorted(range(len(shares)), key=lambda i: (-shares[i], i))
    out: list[int] = []
    total = 0.0
    for i in order:
        if total >= threshold * (1 - 1e-12) or shares[i] <= 0:
            if out and shares[i] > 0 and shares[i] >= shares[out[-1]] * (1 - 1e-12):
                out.append(i)  # (a tie with the last one taken)
                continue
            break
        out.append(i)
        total += shares[i]
    return tuple(out)


def _fractions(values: Sequence[float]) -> tuple[tuple[float, ...], float]:
    """Each value over the sum (infinite values share the whole equally), and the sum."""
    total = math.fsum(values)
    if math.isinf(total):
        n = sum(math.isinf(v) for v in values)
        return tuple(1.0 / n if math.isinf(v) else 0.0 for v in values), math.inf
    return tuple(v / total if total > 0 else 0.0 for v in values), total


def best_order(curve: np.ndarray, delta: float) -> int:
    """The index of the order where the RDP ``curve`` converts to the smallest epsilon at ``delta``
    (the conversion of comparisons._rdp_eps)."""
    a = ORDERS
    with np.errstate(invalid="ignore", over="ignore"):
        e = curve + np.log1p(-1 / a) - (math.log(delta) + np.log(a)) / (a - 1)
    return int(np.argmin(np.where(np.isnan(e), math.inf, e)))


def row_shares(rows: Sequence[Row], relation: Relation | None = None, delta: float = 1e-5,
               eps_error: float = 0.01, cancel: Callable[[], bool] | None = None) -> Shares:
    """Each row's share of the composition's privacy cost (see the module docstring)."""
    rel = as_relation(relation)
    delta = check_delta(delta)
    rhos = [row_rho(r, rel) for r in rows]
    if all(v is not None for v in rhos):
        values = [float(v) for v in rhos if v is not None]
        shares, total = _fractions(values)
        return Shares("rho", None, tuple(values), shares, total, dominant_rows(shares))
    curves = [None if r.count == 0 else _row_rdp(r.mechanism.under(rel)) for r in rows]
    if all(c is not None or r.count == 0 for c, r in zip(curves, rows)):
        whole = np.zeros(ORDERS.shape)
        with np.errstate(over="ignore", invalid="ignore"):
            for c, r in zip(curves, rows):
                if c is not None:
                    whole = whole + r.count * c
            k = best_order(whole, delta)
            values = [0.0 if c is None else float(r.count * c[k]) for c, r in zip(curves, rows)]
        if all(math.isfinite(v) for v in values):
            shares, total = _fractions(values)
            return Shares("rdp", float(ORDERS[k]), tuple(values), shares, total, dominant_rows(shares))
    alone: dict[Row, float] = {}  # (equal rows are composed once)
    for r in rows:
        if r.count and r not in alone:
            alone[r] = Accountant([r], eps_error, rel, cancel=cancel).epsilon(delta).upper
    values = [alone.get(r, 0.0) for r in rows]
    shares, total = _fractions(values)
    return Shares("epsilon", None, tuple(values), shares, total, dominant_rows(shares))

def check_weights(weights: Sequence[object] | None, n: int) -> tuple[float, ...]:
    """``n`` weights, each a finite number > 0 (None: equal weights); a ValueError names the bad one."""
    if weights is None:
        return (1.0,) * n
    weights = list(weights)
    if len(weights) != n:
        raise ValueError(f"the weights must be one per row: {n} rows, {len(weights)} weights")
    return tuple(check_number(f"Weight {i + 1}", w, 0.0, lo_open=True, field="weights")
                 for i, w in enumerate(weights))


def shares_of(total: float, weights: Sequence[float]) -> list[float]:
    """total w_i / sum w for each weight; weights whose sum is past a float's range are first
    divided by the largest (the same ratios)."""
    try:
        wsum = math.fsum(weights)
    except OverflowError:  # (fsum's intermediate overflow)
        wsum = math.inf
    if not math.isfinite(wsum):
        top = max(weights)
        weights = [x / top for x in weights]
        wsum = math.fsum(weights)
    return [total * x / wsum for x in weights]


def noise_parameter(kind: str) -> str | None:
    """The parameter an epsilon split calibrates for a ``kind`` row (None: it cannot be split)."""
    from ..mechanisms import kind_class
    specs = kind_class(kind).param_specs()
    return next((p for p in NOISE_PARAMETERS if p in specs and specs[p].search is not None), None)


def _refuse(i: int, row: Row, why: str) -> ValueError:
    return ValueError(f"row {i + 1} ({row.mechanism.title}): {why}")


def split_rho(rows: Sequence[Row], total: float, weights: Sequence[object] | None = None,
              relation: Relation | None = None) -> list[Row]:
    """The rows with their noise set so that row i has rho_i = total w_i / sum w exactly (never
    more: the noise is stepped up by a few ulps where the rounded rho came out above)."""
    rel = as_relation(relation)
    total = check_number("Total ρ", total, 0.0, lo_open=True, field="rho")
    w = check_weights(weights, len(rows))
    shares = shares_of(total, w)
    out = []
    for i, row in enumerate(rows):
        name = RHO_KINDS.get(row.mechanism.kind)
        if name is None:
            raise _refuse(i, row, "a ρ split sets the noise of Gaussian, discrete Gaussian and zCDP rows only "
                                  "(their ρ is exact); split ε instead")
        if name == "rho" and getattr(row.mechanism, "xi", 0.0) > 0:
            raise _refuse(i, row, "ξ > 0: the row is not ρ-zCDP; split ε instead")
        target = shares[i]
        unit = row_rho(Row(dataclasses.replace(row.mechanism, **{name: 1.0}), row.count), rel)
        if not unit:
            raise _refuse(i, row, "it leaks nothing at any noise (sensitivity 0 or count 0); remove it")
        # rho is unit / sigma^2 for the Gaussians, unit x rho for zCDP rows
        value = math.sqrt(unit / target) if name == "sigma" else target / unit
        try:
            for _ in range(16):
                new = Row(dataclasses.replace(row.mechanism, **{name: value}), row.count)
                got = row_rho(new, rel)
                if got is not None and got <= target:
                    break
                value = math.nextafter(value, math.inf if name == "sigma" else 0.0)
        except ValueError as exc:  # (the kind's range: a discrete Gaussian's sigma is at most 1e5)
            raise _refuse(i, row, f"its share ρ = {target:.6g} needs {name} = {value:.6g}: {exc}") from None
        out.append(new)
    return out


def split_epsilon(rows: Sequence[Row], total: float, delta: float, weights: Sequence[object] | None = None,
                  relation: Relation | None = None, eps_error: float = 0.01,
                  progress: Callable[[float, str], None] | None = None,
                  cancel: Callable[[], bool] | None = None) -> list[Row]:
    """The rows with their noise calibrated so that row i alone is (total w_i / sum w, delta / n)-DP
    (certified); rows equal in mechanism, count and weight are calibrated once."""
    rel = as_relation(relation)
    total = check_number("Total ε", total, 0.0, lo_open=True, field="epsilon")
    delta = check_delta(delta)
    w = check_weights(weights, len(rows))
    shares, n = shares_of(total, w), len(rows)
    done: dict[tuple, Row] = {}
    out = []
    for i, (row, wi) in enumerate(zip(rows, w)):
        key = (row.mechanism, row.count, wi)
        if key not in done:
            name = noise_parameter(row.mechanism.kind)
            if name is None:
                raise _refuse(i, row, "it has no noise parameter to calibrate; an ε split needs one "
                                      f"of {', '.join(NOISE_PARAMETERS)}")
            if progress is not None:
                progress(i / max(n, 1), f"calibrating row {i + 1} of {n}")
            try:
                cal = calibrate([row], 0, name, shares[i], delta / n, eps_error, cancel=cancel,
                                relation=rel)
            except Infeasible as exc:
                raise Infeasible(f"row {i + 1} ({row.mechanism.title}): {exc}") from None
            done[key] = rows_with([row], 0, name, cal.value)[0]
        out.append(done[key])
    return out
