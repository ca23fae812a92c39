"""Reuse between queries: each row's PRV and its discretisation, kept across compositions.

An edit in the GUI changes one thing (a target, a count, one row's parameter) and the
next request recomputes everything else as before. Two caches, shared by every accountant in
the process, make the unchanged parts free:

* ``prv_of(mechanism, order)``: the PRV of one run of a mechanism (kinds are frozen
  dataclasses: equal parameters, equal key), so that equal rows give the *same* PRV object;
* ``discretized(prv, h, tau, max_cells, coarse, tiers)``: ``discretize.discretize`` of that
  PRV on one mesh (h, the tail cut tau, the coarse cells, the wider tiers, the cell limit:
  everything the result depends on is in the key), bounded by bytes, least recently used dropped first;
* ``prepared(d)``: a kept discretisation's ``window.PreparedRow`` (the cumulant bounds behind
  every composition window of it), kept as long as the discretisation is.

A cached discretisation is the very object an uncached call would have produced (the
function is deterministic in its arguments), with its arrays made read-only so that no
caller can change what the next one gets. Both caches are thread-safe (the two orders of a
pair are built in parallel threads); a value computed twice by two threads at once is kept
once. ``enabled(False)`` switches reuse off (tests compare the two paths).
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any, Callable, Sequence

from .discretize import DiscretePRV, discretize
from ..pairs.prv import PRV
from .window import PreparedRow

#: the discretisations kept, in bytes of their arrays
MAX_BYTES = 128 * 2 ** 20
#: one discretisation larger than this share of MAX_BYTES is not kept
MAX_SHARE = 0.25
#: the PRVs kept: at most this many (most are a few hundred bytes: their cdfs close over the
#: mechanism's parameters; enough for both orders of a schedule of thousands of distinct rows)
#: and this many bytes (a discrete Gaussian's holds its tail sums, 12.6 kB at sigma 125: Lattice.held)
MAX_PRVS = 1 << 15
MAX_PRV_BYTES = 256 * 2 ** 20

_lock = threading.Lock()
_prvs: OrderedDict = OrderedDict()
_discs: OrderedDict = OrderedDict()
#: id -> (kept discretisation, its PreparedRow or None until asked for)
_kept: dict[int, list] = {}
_state = {"on": True, "bytes": 0, "hits": 0, "misses": 0, "prv_bytes": 0}


def enabled(on: bool | None = None) -> bool:
    """Whether reuse is on; ``on`` switches it (and, when off, empties the caches)."""
    if on is not None:
        with _lock:
            _state["on"] = bool(on)
        if not on:
            clear()
    return bool(_state["on"])  # (always a bool; the dict holds ints too)


def clear() -> None:
    """Forget everything kept."""
    with _lock:
        _prvs.clear()
        _discs.clear()
        _kept.clear()
        _state.update(bytes=0, hits=0, misses=0, prv_bytes=0)


def stats() -> dict:
    """Counts for tests and benchmarks: discretisations kept, their bytes, hits and misses."""
    with _lock:
        return {"discretizations": len(_discs), "bytes": _state["bytes"], "hits": _state["hits"],
                "misses": _state["misses"], "prvs": len(_prvs), "prv_bytes": _state["prv_bytes"]}


def _hashable(key) -> bool:
    try:
        hash(key)
    except TypeError:
        return False
    return True


def prv_of(mechanism, order: str) -> PRV:
    """``mechanism.prv(order)``, the same object for equal mechanisms while it is kept."""
    key = (type(mechanism), mechanism, order)
    if not _state["on"] or not _hashable(key):
        return mechanism.prv(order)
    with _lock:
        got = _prvs.get(key)
        if got is not None:
            _prvs.move_to_end(key)
            return got
    prv = mechanism.prv(order)
    with _lock:
        prv = _keep(key, prv)
        _trim()
    return prv


def table_bytes(prv: PRV) -> int:
    """The bytes a PRV's functions hold in tables (Lattice.held), which Lattice.release lets go."""
    return int(getattr(getattr(prv, "lattice", None), "held", 0))


def _prv_bytes(prv: PRV) -> int:
    return table_bytes(prv) + 512


def _keep(key, prv: PRV) -> PRV:
    """The PRV kept under ``key`` (``prv`` unless one is kept already), most recent (under _lock)."""
    got = _prvs.get(key)
    if got is None:
        _prvs[key] = got = prv
        _state["prv_bytes"] += _prv_bytes(prv)
    _prvs.move_to_end(key)
    return got


def _trim() -> None:
    """Let the least recently used PRVs go past MAX_PRVS or MAX_PRV_BYTES (under _lock)."""
    while len(_prvs) > MAX_PRVS or (_state["prv_bytes"] > MAX_PRV_BYTES and len(_prvs) > 1):
        _, old = _prvs.popitem(last=False)
        _state["prv_bytes"] -= _prv_bytes(old)


def prvs_of(mechanisms: Sequence, order: str) -> list[PRV]:
    """``prv_of`` of each; those not kept are made a kind at a time (Mechanism.prvs: a kind may
    make many together) and kept as ``prv_of`` keeps them, unless there are more than MAX_PRVS:
    so many would only push each other out (the next such list finds none of its first rows),
    and holding them would keep a streamed composition's PRVs beside it (Accountant._let_prvs_go)."""
    keep = len(mechanisms) <= MAX_PRVS
    out: list[PRV | None] = [None] * len(mechanisms)
    todo: dict[Any, list[int]] = {}  # (by kind: a Mechanism subclass)
    with _lock:
        for i, m in enumerate(mechanisms):
            key = (type(m), m, order)
            got = _prvs.get(key) if _state["on"] and _hashable(key) else None
            if got is not None:
                _prvs.move_to_end(key)
                out[i] = got
            else:
                todo.setdefault(type(m), []).append(i)
    for kind, idx in todo.items():
        if len(idx) == 1:
            out[idx[0]] = prv_of(mechanisms[idx[0]], order)
            continue
        made = kind.prvs([mechanisms[i] for i in idx], order)
        with _lock:
            for i, prv in zip(idx, made):
                key = (kind, mechanisms[i], order)
                out[i] = _keep(key, prv) if keep and _state["on"] and _hashable(key) else prv
            _trim()
    return out  # type: ignore[return-value]


def _nbytes(d: DiscretePRV) -> int:
    return int(d.pmf.nbytes + (d.sparse.nbytes if d.sparse is not None else 0)) + 200


def _freeze(d: DiscretePRV) -> DiscretePRV:
    d.pmf.flags.writeable = False
    if d.sparse is not None:
        d.sparse.flags.writeable = False
    return d


def discretized(prv: PRV, h: float, tau: float, max_cells: int, coarse: tuple[float, int],
                progress: Callable[[float], None] | None = None,
                tiers: tuple[tuple[float, int], ...] = ()) -> DiscretePRV:
    """``discretize(prv, h, tau, max_cells, coarse, progress, tiers)``, reused when the same PRV
    was discretised on the same mesh before (``progress`` then hears 1.0 at once)."""
    key = (prv, float(h), float(tau), int(max_cells), tuple(coarse), tuple(tiers))
    if not _state["on"] or not _hashable(key):
        return discretize(prv, h, tau, max_cells, coarse, progress, tiers)
    with _lock:
        got = _discs.get(key)
        if got is not None:
            _discs.move_to_end(key)
            _state["hits"] += 1
    if got is not None:
        if progress is not None:
            progress(1.0)
        return got
    d = discretize(prv, h, tau, max_cells, coarse, progress, tiers)
    size = _nbytes(d)
    with _lock:
        _state["misses"] += 1
        if size > MAX_SHARE * MAX_BYTES or not _state["on"]:
            return d
        if key in _discs:  # another thread was quicker: keep one
            return _discs[key]
        _discs[key] = _freeze(d)
        _kept[id(d)] = [d, None]
        _state["bytes"] += size
        while _state["bytes"] > MAX_BYTES and _discs:
            _, old = _discs.popitem(last=False)
            _kept.pop(id(old), None)
            _state["bytes"] -= _nbytes(old)
    return d


def is_kept(prv: PRV, h: float, tau: float, max_cells: int, coarse: tuple[float, int],
            tiers: tuple[tuple[float, int], ...] = ()) -> bool:
    """Whether ``discretized`` with these arguments would be answered from what is kept."""
    key = (prv, float(h), float(tau), int(max_cells), tuple(coarse), tuple(tiers))
    if not _state["on"] or not _hashable(key):
        return False
    with _lock:
        return key in _discs


def prepared(d: DiscretePRV) -> PreparedRow:
    """``PreparedRow(d)``, the same object for a kept discretisation while it is kept (its
    cumulant bounds, worked out on demand, then serve every later window: a steps curve's
    other rows, the next edit's unchanged rows; the steps curve asks, compose.py lies beneath
    reuse in the layers)."""
    with _lock:
        entry = _kept.get(id(d))
        if entry is None or entry[0] is not d:
            return PreparedRow(d)
        if entry[1] is None:
            entry[1] = PreparedRow(d)
        return entry[1]
