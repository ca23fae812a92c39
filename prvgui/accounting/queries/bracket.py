"""Where the truth lies when a row's pair is only an upper bound (shuffled batches, the
exponential mechanism and zCDP for more than one run).

For the other kinds the dominating pair is realised by two neighbouring datasets, so the
certified bracket holds the true epsilon. An untight row's pair (one Gaussian per shuffled
epoch; the least pair over all eps-bounded-range or all rho-zCDP pairs) is only an upper bound;
its ``attack_pair`` is realised (after post-processing),
so the composition of the rows' attack pairs gives a proven LOWER bound on the true epsilon
of the whole composition: the adversary runs every row's worst case on the same pair of
datasets (the premise of every accountant here: each row's worst case is attainable).
Its certified lower end is the number reported as ``epsilon_at_least``.

``poisson_contrast`` is what Poisson accounting would say for the same training (each shuffled
epoch of T batches as T Poisson-sampled steps at q = 1/T): shown beside the bracket, never as
a guarantee.
"""
from __future__ import annotations

import math
from typing import Callable, Mapping, Sequence

from .accountant import Accountant, rows_under
from .certified import best_upper
from .comparisons import compare_epsilon
from ..core.values import Relation, as_relation
from ..mechanisms import MAX_COUNT, Row
from ..core.values import Bounds
from ..core.validate import check_delta


def has_untight(rows: Sequence[Row]) -> bool:
    """True if a row's pair is only an upper bound (its bracket does not hold the truth)."""
    return any(r.count > 0 and not r.mechanism.tight and not r.mechanism.is_trivial() for r in rows)


def crossed(acc: Accountant, lower: float, comparisons: Mapping, tie: float = 0.0) -> bool:
    """Whether a comparison accountant certifies an epsilon below the PRV bracket's lower end
    (by more than ``tie``) while ``acc``'s rows put mass at +infinity. Pairs realised by datasets
    cannot allow that, so some row's pair was read with a loss of +infinity its mechanism does
    not have (noise below base.NOISELESS read as none, a loss beyond base.BLATANT_LOSS): the
    bracket is then a dominating pair's, and its lower end no bound on the truth
    (``epsilon_at_least`` is). Subsampled Gaussian steps at sigma 1e-8: the bracket said [inf,
    inf] beside RDP's certified 1e19. (Without mass at +infinity a crossing would be a fault,
    not a convention, and is left for everyone to see.)"""
    if not best_upper(math.inf, comparisons).value < lower - tie:
        return False
    return acc.infinite_mass()[0] > 0


def epsilon_at_least(rows: Sequence[Row], delta: float, relation: Relation | str | None = None,
                     eps_error: float = 0.01, cancel: Callable[[], bool] | None = None) -> float:
    """A proven lower bound on the true epsilon(delta) of the composition (see the module):
    the largest over the pairs of datasets the rows offer (``Mechanism.attack_variants``)."""
    delta = check_delta(delta)
    best = 0.0
    certified: list[float] = []  # (the comparison accountants' bound, computed once if needed)
    for attack in attack_rows(rows, relation):
        acc = Accountant(attack, eps_error, cancel=cancel)
        got = acc.epsilon(delta).lower
        if got > 0 and acc.infinite_mass()[0] > 0:  # (without such mass nothing is left out)
            if not certified:
                certified.append(_certified(rows, delta, relation))
            if got > certified[0]:
                got = _without_infinite(acc, delta, eps_error, cancel)
        best = max(best, got)
    return best


def _certified(rows: Sequence[Row], delta: float, relation: Relation | str | None) -> float:
    """The smallest epsilon a comparison accountant certifies for the rows (+inf if none): no
    pair of their datasets has a larger one."""
    comps = compare_epsilon(rows_under(list(rows), as_relation(relation)), delta)
    return best_upper(math.inf, comps).value


def _without_infinite(acc: Accountant, delta: float, eps_error: float, cancel) -> float:
    """The lower end for ``acc``'s rows without those the engine takes as +infinity (blatant, or
    noise below base.NOISELESS read as none, a mass at +infinity): such a row's pair dominates
    its true one, so its bracket's lower end is no bound, while leaving rows out only lowers
    epsilon (the adversary may ignore their outputs). 0 when no row is left. (The input-space
    sweep's find: truncated Poisson steps at sigma 4e-58 gave a proven epsilon of +infinity
    beside RDP's certified 9.3e118.)"""
    _, shares = acc.infinite_mass()
    spent = {i for i, p in shares if p > 0}
    kept = [r for i, r in enumerate(acc.rows, 1) if i not in spent and not r.mechanism.is_blatant()]
    if not any(r.count > 0 and not r.mechanism.is_trivial() for r in kept):
        return 0.0
    got = Accountant(kept, eps_error, cancel=cancel).epsilon(delta).lower
    return got if math.isfinite(got) else 0.0


def attack_rows(rows: Sequence[Row], relation: Relation | str | None = None) -> list[list[Row]]:
    """For each pair of datasets the rows offer, every row replaced by its realised pair."""
    rel = as_relation(relation)
    variants = max((r.mechanism.attack_variants for r in rows), default=1)
    out = []
    for v in range(variants):
        attack = []
        for i, r in enumerate(rows):
            try:
                attack.append(Row(r.mechanism.attack_pair(rel, min(v, r.mechanism.attack_variants - 1)),
                                  r.count))
            except ValueError as exc:
                raise ValueError(f"row {i + 1} ({r.mechanism.title}): {exc}") from None
        out.append(attack)
    return out


def poisson_rows(rows: Sequence[Row]) -> list[Row] | None:
    """The rows with each shuffled row replaced by its Poisson counterpart; None if a count
    would exceed the limit or no row has a counterpart (untight kinds that are not DP-SGD
    training, e.g. the exponential mechanism, stay as they are)."""
    out, replaced = [], False
    for r in rows:
        counterpart = None if r.mechanism.tight else r.mechanism.poisson_counterpart()
        if counterpart is None:
            out.append(r)
            continue
        mech, per_epoch = counterpart
        if r.count * per_epoch > MAX_COUNT:
            return None
        out.append(Row(mech, r.count * per_epoch))
        replaced = True
    return out if replaced else None


def poisson_contrast(rows: Sequence[Row], delta: float, relation: Relation | str | None = None,
                     eps_error: float = 0.01, cancel: Callable[[], bool] | None = None) -> Bounds | None:
    """What Poisson accounting would certify for the same training (not a guarantee for
    shuffled batches); None when there is nothing to contrast or the steps are too many."""
    if not has_untight(rows):
        return None
    prows = poisson_rows(rows)
    if prows is None:
        return None
    return Accountant(prows, eps_error, as_relation(relation),
                      cancel=cancel).epsilon(delta)


def shuffled_contrast(rows: Sequence[Row], delta: float, relation: Relation | str | None = None,
                      eps_error: float = 0.01, cancel: Callable[[], bool] | None = None) -> Bounds | None:
    """What the same training with shuffled batches would get, for rows that have a shuffled
    counterpart (balls-in-bins: ``Mechanism.shuffled_counterpart``): Bounds(proven lower,
    certified upper, certified upper) of the shuffled rows; None when no row has one."""
    if not has_untight(rows):
        return None
    out, replaced = [], False
    for r in rows:
        twin = getattr(r.mechanism, "shuffled_counterpart", lambda: None)()
        if twin is None:
            out.append(r)
            continue
        mech, per_count = twin
        out.append(Row(mech, r.count // per_count))
        replaced = True
    if not replaced:
        return None
    rel = as_relation(relation)
    upper = Accountant(out, eps_error, rel, cancel=cancel).epsilon(delta).upper
    lower = epsilon_at_least(out, delta, rel, eps_error, cancel) if has_untight(out) else upper
    return Bounds(lower, upper, upper)
