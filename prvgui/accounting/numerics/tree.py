"""Many rows: compose them in groups, each group on its own short window, then the groups
(docs/method.md, "Many rows").

compose.py transforms every row at the length of the whole composition's window, n points, so
R distinct rows cost R transforms of length n, and n itself grows with R (a schedule of a
thousand distinct DP-SGD steps: n near a million, R = 1000, 25 s). Here the rows are composed in
groups of FAN_IN, each group by compose.compose on the window of that group alone (a few times
a row's width, against n), and the groups' compositions become the rows of the next level,
until few enough are left to compose on the whole window. The cost then grows with the rows'
own widths, not with R times n.

A group's composition r~ differs from the exact distribution r of its sum by a signed measure e
(mass outside the group's window folded into it, the transforms' round-off); compose.compose
bounds |sum_y e(y) w(y)| by its ``err_abs`` for every weight w of the two kinds the
certificate uses, the tail indicators 1[y >= x] and (1 - e^{x - y})_+, and the relative
change of every such sum by its ``err_rel``. Composing further with any measure s >= 0 gives
the error e * s, and sum_y w(y) (e * s)(y) = sum_z s(z) sum_x e(x) w(x + z), where w(. + z) is
again a weight of the same kind: so the error passes through every later convolution with a
factor of at most the total mass of what it is convolved with (1, up to the other groups'
relative errors, which the factor ``grow`` carries). Summing over the groups by telescoping,

    |sum w (r~_1 * ... * r~_m - r_1 * ... * r_m)| <= grow * sum_g err_abs_g,

and the relative errors multiply. The windows' masses: each group's window holds all but
mass / (2 G) of its sum (G the number of groups in the whole tree), the top composition all
but mass / 2, so the windows together cost at most ``mass``, as one window would. The tilted
composition (tilt.py) composes tilted rows the same way: its error bound is of the same two
kinds. The rows' discretisation errors are the leaves' (pipeline.certify sees the rows, not the
groups).
"""
from __future__ import annotations

import math
from dataclasses import replace
from typing import Callable, Iterator, Sequence

import numpy as np

from .compose import N_MAX, Composed, compose, inf_mass_of, prepared_row, release_fft_plans
from .discretize import DiscretePRV
from . import fits_many
from .heap import give_back
from .packed import LazyRow, Row, cells, dense, pack
from .sums import dot
from .window import PreparedRow, choose_window

#: rows per group; with fewer rows than TREE_MIN the rows are composed in one go, from
#: TREE_ALWAYS on always in groups (then the whole window is not worked out for the decision:
#: it would cost one more pass over every row's cumulants)
FAN_IN, TREE_MIN, TREE_ALWAYS = 16, 16, 256
#: rows drawn this often (the median row) are composed on one window: band_counts
BAND_COUNT = 32
#: streamed rows (packed.LazyRow) are folded from this level on: each arriving row is composed
#: with the level's waiting one (compose_many), so that a level holds one row, not up to
#: FAN_IN - 1 (4 x 10^4 discrete Gaussians: peak 0.99 to 0.90 GB, 145 to 150 s; from level 1,
#: 0.86 GB and 170 s: its rows are small and many)
FOLD_FROM = 2
#: grouping pays when the first level's windows, times this (the levels above cost about as
#: much again), are shorter than the whole window: every row is then transformed on a shorter one
TREE_COST = 3.0


def as_row(c: Composed) -> DiscretePRV:
    """A group's composition as a row of the next level (its finite part and its mass at
    +inf; no discretisation error of its own: that is the leaves')."""
    pmf = c.pmf
    # (the first and last nonzero cells from a mask and argmax, and the centre from a float
    # arange: no index array of every nonzero cell, no cast; 0.9 against 7.7 ms at 4e5 cells)
    mask = pmf != 0
    first = int(mask.argmax()) if mask.size else 0  # (argmax of nothing raises)
    if mask.size and mask[first]:
        last = pmf.size - 1 - int(mask[::-1].argmax())
        pmf = pmf[first:last + 1]
        start = c.n_start + first
    else:
        pmf, start = np.zeros(1), c.n_start
    total = float(pmf.sum())
    centre = int(round(dot(pmf, np.arange(pmf.size, dtype=float)) / total)) if total > 0 else 0
    return DiscretePRV(pmf=pmf, start=start, h=c.h, shift=c.offset, inf_mass=c.inf_mass,
                       tail_prob=0.0, bias=0.0, centre=centre)


def _groups(rows: list[tuple[DiscretePRV, int]]) -> list[list[tuple[DiscretePRV, int]]]:
    """Rows of similar width together (their group windows are then the narrowest)."""
    order = sorted(range(len(rows)), key=lambda i: rows[i][0].pmf.size)
    return [[rows[i] for i in order[j:j + FAN_IN]] for j in range(0, len(order), FAN_IN)]


def band_counts(rows: Sequence[tuple[object, int]]) -> bool:
    """Whether the rows are drawn so often that their composed transform ends long before the
    window's length (compose.py's band path: each row's transform on the band only, cheaper
    than any grouping): half of them BAND_COUNT times or more. (Measured: 300 distinct DP-SGD
    rows of 100 steps each, 12 s on one window against 23 s in groups; 1000 rows of 5 steps,
    45 s and 5.4 GB on one window against 21 s and 0.9 GB in groups.)"""
    counts = sorted(k for _, k in rows)
    return bool(counts) and counts[len(counts) // 2] >= BAND_COUNT


def _node_count(n_rows: int, fold_from: int | None = None) -> int:
    """How many compositions the tree over ``n_rows`` rows makes: FAN_IN rows of each level make
    one row of the next (compose_many's counter), floor(R / FAN_IN^L) of level L; from level
    ``fold_from`` on, each arriving row is folded into the level's one waiting row (FAN_IN - 1
    compositions a row of the next level, and one fewer than the rows left over)."""
    total, arrived, level = 0, n_rows, 0
    while arrived >= (FAN_IN if fold_from is None or level < fold_from else 2):
        up, left = divmod(arrived, FAN_IN)
        if fold_from is not None and level >= fold_from:
            total += (FAN_IN - 1) * up + max(left - 1, 0)
        else:
            total += up
        arrived, level = up, level + 1
    return total


def pays(rows: list[tuple[DiscretePRV, int]], window_mass: float, kept: dict[int, PreparedRow]) -> bool:
    """Whether grouping is worth it below TREE_ALWAYS rows: enough rows, and the first level's
    windows (the mean over a sample of groups) TREE_COST times shorter than the whole window
    (measured on 1000 distinct DP-SGD steps: 25% slower than one window where the groups'
    windows are half the whole one, 3 times faster where the tilted whole window is eight
    groups' wide). ``kept``: the rows' PreparedRow by id."""
    live = [(d, k) for d, k in rows if k > 0]
    if len(live) < TREE_MIN:
        return False
    groups = _groups(live)
    whole = choose_window([(prepared_row(d, kept, k), k) for d, k in live], window_mass)
    sample = groups[::max(1, len(groups) // 8)]
    widths = [choose_window([(prepared_row(d, kept, k), k) for d, k in g], window_mass)[:2] for g in sample]
    mean = sum(hi - lo for lo, hi in widths) / len(widths)
    return TREE_COST * mean <= whole[1] - whole[0]


def many(rows: Sequence[tuple[Row, int]]) -> bool:
    """Whether compose_many may take these rows in groups: TREE_MIN or more drawn, not so often
    that one window serves (band_counts), none all at +inf. (Below TREE_ALWAYS it asks ``pays``;
    where it does not, the one window holds every row, wider than their groups': a group found
    too long for the grid means that window is too.)"""
    live = [(d, k) for d, k in rows if k > 0]
    return len(live) >= TREE_MIN and not band_counts(live) and not any(d.inf_mass >= 1.0 for d, _ in live)


def check_grids(rows: Sequence[tuple[Row, int]], window_mass: float, n_max: int = N_MAX,
                agg_max: float = 0.0, lam: float = 0.0, summaries: Sequence | None = None) -> None:
    """Raises GridTooLarge before composing when compose_many's groups or top would not fit
    ``n_max`` points (fits_many.py), the groups on its share of ``window_mass``, the top on
    half of it; ``lam``: the tilt the rows will be composed at (tilt.compose_tilted's, whose
    leaves tilt them); ``summaries``: the rows' block summaries in order, when the caller has
    them (tilt.row_summaries)."""
    keep = [i for i, (_, k) in enumerate(rows) if k > 0]
    live = [rows[i] for i in keep]
    fold_from = FOLD_FROM if any(isinstance(d, LazyRow) for d, _ in live[:1]) else None
    share = 0.5 * window_mass / max(_node_count(len(live), fold_from), 1)
    fits_many.check(live, share, 0.5 * window_mass, n_max, agg_max, FAN_IN, fold_from, lam,
                    None if summaries is None else [summaries[i] for i in keep])


def compose_many(rows: list[tuple[Row, int]], window_mass: float,
                 cancel: Callable[[], bool] | None = None,
                 progress: Callable[[float], None] | None = None,
                 leaf: Callable[[list[tuple[Row, int]]], list[tuple[DiscretePRV, int, PreparedRow | None]]]
                 | None = None,
                 consume: bool = False, checked: bool = False, **kwargs) -> Composed:
    """compose.compose of ``rows``, in groups when that pays (module docstring); the same
    keyword arguments. The result's ``parts`` say how many groups were composed ("groups").

    ``rows`` may be packed (packed.py). ``leaf`` maps a few rows (FAN_IN at most) to the rows
    that are composed in their place (tilt.py's tilted copies), each with its PreparedRow when
    its maker has its summary; in groups it is applied a group at a time, as the rows are
    unpacked, so that only a few groups' copies are held. ``consume``: ``rows`` is a list
    the caller gives up (it is emptied at once); in groups each row is let go as soon as it
    joins its group, so that the top of the tree no longer holds every row's cells (2 x 10^4
    discrete Gaussians: 0.37 GB of packed cells). ``checked``: the caller has run check_grids on
    ``rows`` as they will be composed (tilt.compose_tilted, before its leaves tilt them); else
    it is run here once the rows are known to go in groups (as given, or as ``leaf`` made them
    when few enough to be made first: then after ``pays``, which the tilted rows answer)."""
    given = rows
    rows = [(d, k) for d, k in rows if k > 0]
    if consume and isinstance(given, list):
        given.clear()

    kept: dict[int, PreparedRow] = {}

    def steps(rs: list[tuple[Row, int]]) -> list[tuple[DiscretePRV, int]]:
        if leaf is None:
            return [(dense(d), k) for d, k in rs]
        out = []
        for t, k, prep in leaf(rs):
            if prep is not None:  # (for its group's window: compose.prepared_row finds it there)
                kept[id(t)] = prep
            out.append((t, k))
        return out

    def chunks(rs: list) -> Iterator[list]:
        return (rs[j:j + FAN_IN] for j in range(0, len(rs), FAN_IN))
    if len(rows) >= TREE_ALWAYS and band_counts(rows):
        # one window (band_counts), the rows kept packed: compose.py makes each dense in turn
        ready = rows if leaf is None else [(pack(t), k) for part in chunks(rows) for t, k, _ in leaf(part)]
        return compose(ready, window_mass, cancel=cancel, progress=progress, **kwargs)
    lazy = len(rows) >= TREE_ALWAYS  # (then rows are made dense, and tilted, a group at a time)
    made: list[tuple[DiscretePRV, int]] = []
    if not lazy:
        made = [r for part in chunks(rows) for r in steps(part)]
        if not made or band_counts(made) or not pays(made, window_mass, kept) or inf_mass_of(made) >= 1.0:
            return compose(made, window_mass, cancel=cancel, progress=progress, prepared=kept, **kwargs)
        if not checked:
            check_grids(made, window_mass, kwargs.get("n_max", N_MAX), kwargs.get("agg_max", 0.0))
    elif any(d.inf_mass >= 1.0 for d, _ in rows):  # (nothing to compose: compose says so)
        return compose(steps(rows), window_mass, cancel=cancel, progress=progress, **kwargs)
    elif not checked and leaf is None:
        check_grids(rows, window_mass, kwargs.get("n_max", N_MAX), kwargs.get("agg_max", 0.0))
    # (streamed rows: memory is what matters, so from FOLD_FROM on a level holds one row, the
    # rows so far folded together, not up to FAN_IN - 1 of them waiting)
    fold_from = FOLD_FROM if any(isinstance(d, LazyRow) for d, _ in rows[:1]) else None
    nodes = _node_count(len(rows), fold_from)
    share = 0.5 * window_mass / max(nodes, 1)
    group_kw = {**kwargs, "agg_max": 0.0}  # (a group is read cell by cell: it is a row again)
    totals = {"err_abs": 0.0, "log_rel": 0.0, "done": 0}

    hints: dict[int, dict[bool, int]] = {}  # (each level's groups are alike: window.choose_window)

    def merge(g: list[tuple[DiscretePRV, int]], level: int) -> tuple[DiscretePRV, int]:
        # (consume: ``g``, a pending list of ours, is emptied, the rows' entries in ``kept`` go
        # once the window is chosen, and each row once transformed: at 10^5 discrete Gaussians
        # the largest folds' two rows, 70 MB, are not held beside their inverse transforms)
        c = compose(g, share, cancel=cancel, prepared=kept, window_hint=hints.setdefault(level, {}),
                    consume=True, **group_kw)
        totals["err_abs"] += c.err_abs
        totals["log_rel"] += math.log1p(c.err_rel) if c.err_rel < 1 else math.inf
        totals["done"] += 1
        if fold_from is not None:  # (streamed: hand the heap's freed pages back, heap.py)
            give_back()
        if progress is not None:
            progress(0.8 * totals["done"] / max(nodes, 1))
        return as_row(c), 1

    # depth first, as a counter in base FAN_IN: a level's FAN_IN rows become one row of the
    # next as soon as they are there, so that at most FAN_IN - 1 wait on each level (memory
    # for a few groups, not for all rows at once), and one from fold_from on (each arriving row
    # composed with the one waiting); the rows come narrowest first
    pending: list[list[tuple[DiscretePRV, int]]] = [[]]
    arrived = [0]  # (rows arrived at each level since its last row went up)
    # (the order as an array, not a list of ints: made after the rows, 10^5 int objects would sit
    # in the small-object arenas among the rows' own and keep every arena from going back as the
    # rows are let go: at 10^5 discrete Gaussians 202 arenas, 0.21 GB, held 57 MB of objects)
    order = np.argsort(np.fromiter((cells(d) for d, _ in rows), dtype=np.int64, count=len(rows)),
                       kind="stable")
    waiting: list[tuple[Row, int] | None] = list(rows)
    del rows  # (consume: ``waiting`` holds each row only until it joins its group)
    def arrive(row: tuple[DiscretePRV, int]) -> None:
        level = 0
        while True:
            folding = fold_from is not None and level >= fold_from
            pending[level].append(row)
            del row  # (the pending list alone holds it: a merge lets it go)
            arrived[level] += 1
            if folding and len(pending[level]) == 2:
                pending[level] = [merge(pending[level], level)]
            if arrived[level] < FAN_IN:
                return
            row = pending[level][0] if folding else merge(pending[level], level)
            pending[level], arrived[level] = [], 0
            if level + 1 == len(pending):
                pending.append([])
                arrived.append(0)
            level += 1

    for j in range(0, order.size, FAN_IN):
        part = order[j:j + FAN_IN].tolist()
        if lazy:  # (FAN_IN rows made dense, or tilted, together: a group's worth at a time)
            given_rows = [waiting[i] for i in part]
            if consume:
                for i in part:
                    waiting[i] = None
            stepped = steps(given_rows)  # type: ignore[arg-type]
            del given_rows  # (a dense row is its own step: held here, it would outlive its group)
        else:
            stepped = [made[i] for i in part]
        stepped.reverse()
        while stepped:  # (popped: each row is held by its level's pending list alone)
            arrive(stepped.pop())
    left = [r for lv in pending for r in lv]
    kept.clear()  # (the rows left over at the top are summarised there again, on its window)
    if consume:  # (then ``left`` alone holds the top's rows, and compose lets each go once transformed)
        pending.clear()
    release_fft_plans()  # (the groups' lengths' plans: the top's transforms are longer)
    if fold_from is not None:
        give_back(force=True)
    top = compose(left, 0.5 * window_mass, cancel=cancel, consume=consume,
                  progress=None if progress is None else (lambda f: progress(0.8 + 0.2 * f)), **kwargs)
    err_abs, log_rel = totals["err_abs"], totals["log_rel"]
    return _with_errors(top, math.exp(log_rel) * err_abs, log_rel, nodes)


def _with_errors(c: Composed, err: float, log_rel: float, groups: int) -> Composed:
    """``c`` with groups' errors carried into it: ``err`` (already times the masses it passes
    through) added to its err_abs, the relative factor e^log_rel multiplied into its err_rel."""
    rel = math.expm1(math.log1p(c.err_rel) + log_rel) if c.err_rel < 1 else c.err_rel
    parts = {**c.parts, "groups": c.parts.get("groups", 0) + groups,
             "group_err": c.parts.get("group_err", 0.0) + err}
    return replace(c, err_abs=c.err_abs + err, err_rel=rel, parts=parts)


def carried(c: Composed, group: Composed) -> Composed:
    """``c``, a composition one of whose rows was ``group`` (as_row), with ``group``'s errors
    carried into it (module docstring: the error passes through with a factor of at most the
    other rows' mass, 1 up to c's own relative error)."""
    log_rel = math.log1p(group.err_rel) if group.err_rel < 1 else math.inf
    grow = 1.0 + c.err_rel if c.err_rel < 1 else math.inf
    return _with_errors(c, grow * group.err_abs, log_rel, group.parts.get("groups", 0))
