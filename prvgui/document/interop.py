"""Import compositions from other accountants' descriptions (issue 29): dp_accounting DpEvents
(``from_dpevent``; interop_dpevent.py), an Opacus accountant's history (``from_opacus``) and
jax_privacy's ``DpParams`` with the number of updates (``from_jax_privacy``); ``import_file`` reads
any of them from a JSON file. Inputs are untrusted: a bad field is a ValueError naming its path and
value. Each row's label says where it came from; ``read``/``convert`` also return notes on what was
assumed (the relation chosen, conventions that differ). The peers' libraries are never imported.

Opacus: ``[[noise_multiplier, sample_rate, steps], ...]`` (``accountant.history``), the same as
objects with those keys, or the accountant's ``state_dict()`` (``{"history": [...], "mechanism":
...}``, and optionally ``"delta"``). Every Opacus accountant takes each entry as ``steps`` Poisson-
subsampled Gaussian steps under add/remove: a subsampled_gaussian row (a gaussian row at rate 1).

jax_privacy (jax_privacy/accounting/analysis.py, ``DpParams`` and ``DpsgdTrainingAccountant``): the
fields of DpParams plus ``num_updates``; the rows are the events their accountant composes (the
noise and batch-size schedules interleaved into segments; q = batch / (num_samples // cycle_length)
and ceil(t / cycle_length) steps per segment). ``FIXED_BATCH_SIZE``: jax_privacy analyses it as
Poisson sampling at twice the sensitivity; prvgui has the kind itself (fixed-size batches under
replace-one, a certified bound at least as large). ``truncated_batch_size``: truncated Poisson
batches. ``examples_per_user`` k > 1: their user-level accountant, i.e. groups of k records.
"""
from __future__ import annotations

import json
import math
import os
from .composition import Composition, FileFormatError
from .fileio import no_duplicates
from .interop_common import (ADD, REPLACE, Found, Imported, ImportRefused, Piece, build, check_keys, join,
                             number, obj, shown, whole)
from .interop_dpevent import import_dpevent

SOURCES = ("dpevent", "opacus", "jax_privacy")
SOURCE_TITLES = {"dpevent": "dp_accounting DpEvent (JSON)", "opacus": "Opacus accountant history (JSON)",
                 "jax_privacy": "jax_privacy DpParams + num_updates (JSON)"}
JAX_FIELDS = ("noise_multipliers", "num_samples", "delta", "batch_size", "batch_size_scale_schedule",
              "is_finite_guarantee", "batch_sizes", "examples_per_user", "cycle_length", "sampling_method",
              "truncated_batch_size", "num_updates")
OPACUS_KEYS = ("noise_multiplier", "sample_rate", "steps")


def from_dpevent(obj: object, neighbouring: str | None = None, delta: float | None = None) -> Composition:
    """A dp_accounting DpEvent (its ``to_named_tuple()`` form as JSON objects) as a composition."""
    return import_dpevent(obj, neighbouring, delta).composition


def from_opacus(obj: object, delta: float | None = None) -> Composition:
    """An Opacus accountant's history as a composition."""
    return convert(obj, "opacus", delta).composition


def from_jax_privacy(obj: object) -> Composition:
    """jax_privacy's DpParams fields plus ``num_updates`` as a composition."""
    return convert(obj, "jax_privacy").composition


def import_file(path: str | os.PathLike, source: str) -> Composition:
    """Read ``path`` (JSON, untrusted) as ``source`` ("dpevent", "opacus" or "jax_privacy")."""
    return read(path, source).composition


def read(path: str | os.PathLike, source: str, delta: float | None = None) -> Imported:
    """``import_file`` with the notes."""
    from .fileio import read_text
    _source(source)
    return convert(parse_json(read_text(path)), source, delta)


def convert(data: object, source: str, delta: float | None = None) -> Imported:
    """Parsed JSON of ``source`` as a composition and its notes."""
    _source(source)
    if source == "dpevent":
        return import_dpevent(data, None, delta)
    return (_opacus if source == "opacus" else _jax_privacy)(data, delta)


def _source(source: object) -> None:
    if source not in SOURCES:
        raise ImportRefused(f"the source must be one of {', '.join(SOURCES)}; got {shown(source)}")


def parse_json(text: str) -> object:
    """JSON text, untrusted: a message with the line and column of a syntax error; NaN, -Infinity and
    duplicate keys refused (Infinity is read, for the fields that allow it)."""
    def constant(name: str) -> float:
        if name == "Infinity":
            return math.inf
        raise ImportRefused(f"{name} is not allowed (numbers must be finite)")

    try:
        return json.loads(text, parse_constant=constant, object_pairs_hook=no_duplicates)
    except FileFormatError as exc:  # a duplicate key
        raise ImportRefused(str(exc)) from None
    except json.JSONDecodeError as exc:
        raise ImportRefused(f"not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}") from None
    except RecursionError:
        raise ImportRefused("the input is nested too deeply") from None


# ------------------------------------------------------------ Opacus
def _opacus(data: object, delta: float | None = None) -> Imported:
    found = Found("opacus")
    history = data
    if isinstance(data, dict):
        check_keys("", data, ("history", "mechanism", "delta"), "an Opacus accountant's state")
        if "history" not in data:
            raise ImportRefused("history is missing (the accountant's [noise_multiplier, sample_rate, steps] "
                                "entries)")
        history = data["history"]
        if "mechanism" in data and not isinstance(data["mechanism"], str):
            raise ImportRefused(f"mechanism must be text (rdp, prv, gdp); got {shown(data['mechanism'])}")
        found.delta = data.get("delta")
    if not isinstance(history, list):
        raise ImportRefused("history must be a list of [noise_multiplier, sample_rate, steps]; got "
                            f"{shown(history)}")
    for i, entry in enumerate(history):
        path = f"history[{i}]"
        if isinstance(entry, dict):
            check_keys(path, entry, OPACUS_KEYS, "a history entry")
            missing = [k for k in OPACUS_KEYS if k not in entry]
            if missing:
                raise ImportRefused(f"{join(path, missing[0])} is missing")
            nm, q, steps = (entry[k] for k in OPACUS_KEYS)
        elif isinstance(entry, list) and len(entry) == 3:
            nm, q, steps = entry
        else:
            raise ImportRefused(f"{path} must be [noise_multiplier, sample_rate, steps]; got {shown(entry)}")
        nm = number(join(path, "noise_multiplier"), nm)
        q = number(join(path, "sample_rate"), q, 0.0, 1.0)
        steps = whole(join(path, "steps"), steps)
        if nm == 0 and q > 0 and steps > 0:
            raise ImportRefused(f"{join(path, 'noise_multiplier')} is 0: no noise, so the steps are not "
                                "private")
        if q == 0:
            continue
        desc = f"σ={nm:.6g}, q={q:.6g}"
        if q == 1:
            found.pieces.append(Piece("gaussian", {"sigma": nm}, steps, desc, path))
        else:
            found.pieces.append(Piece("subsampled_gaussian", {"sigma": nm, "sampling_rate": q}, steps, desc,
                                      path))
    if not any(p.count for p in found.pieces):
        raise ImportRefused("the history has no steps to account")
    return build(found, ADD, delta)


# ------------------------------------------------------------ jax_privacy
def _jax_privacy(data: object, delta: float | None = None) -> Imported:
    d = obj("", data, "an object with jax_privacy's DpParams fields and num_updates")
    check_keys("", d, JAX_FIELDS, "jax_privacy's DpParams (with num_updates)")
    for required in ("noise_multipliers", "num_samples", "delta", "batch_size", "num_updates"):
        if required not in d:
            raise ImportRefused(f"{required} is missing")
    found = Found("jax_privacy")
    found.delta = number("delta", d["delta"], 0.0, 1.0, lo_open=True)
    n = whole("num_samples", d["num_samples"], 1)
    updates = whole("num_updates", d["num_updates"], 1, 10**12)
    if d.get("is_finite_guarantee", True) is not True:
        if d["is_finite_guarantee"] is False:
            raise ImportRefused("is_finite_guarantee is false: jax_privacy reports epsilon = inf (e.g. no "
                                "clipping), there is nothing to account")
        raise ImportRefused("is_finite_guarantee must be true or false; got "
                            f"{shown(d['is_finite_guarantee'])}")
    method = d.get("sampling_method", "POISSON")
    name = method.upper().removeprefix("SAMPLINGMETHOD.") if isinstance(method, str) else None
    if name not in ("POISSON", "FIXED_BATCH_SIZE"):
        raise ImportRefused(f"sampling_method must be POISSON or FIXED_BATCH_SIZE; got {shown(method)}")
    fixed = name == "FIXED_BATCH_SIZE"
    users = d.get("examples_per_user")
    k = 1 if users is None else whole("examples_per_user", users, 1, 1000)
    cycle = 1 if d.get("cycle_length") is None else whole("cycle_length", d["cycle_length"], 1)
    trunc = d.get("truncated_batch_size")
    trunc = None if trunc is None else whole("truncated_batch_size", trunc, 1)
    nms = _schedule_nm(d["noise_multipliers"])
    batches = _batch_sizes(d)
    if k > 1:
        if cycle != 1 or trunc is not None:
            raise ImportRefused("examples_per_user > 1 (jax_privacy's user-level accountant) takes neither "
                                "cycle_length nor truncated_batch_size")
        if fixed:
            raise ImportRefused("examples_per_user > 1 with FIXED_BATCH_SIZE: prvgui certifies fixed-size "
                                "batches for one record per person only")
        found.group_size = k
        found.note(f"examples_per_user {k}: groups of {k} records (jax_privacy's user-level accountant)")
    if cycle != 1 and (len(nms) > 1 or len(batches) > 1):
        raise ImportRefused("cycle_length > 1 needs one noise multiplier and one batch size (as jax_privacy)")
    if trunc is not None and fixed:
        raise ImportRefused("truncated_batch_size needs sampling_method POISSON (as jax_privacy)")
    group = n // cycle
    for start, t, (nm, nm_path), bs in _segments(nms, batches, updates):
        where = f"updates {start} to {start + t - 1}"
        if t == 0 or bs == 0:
            continue
        if nm == 0:
            raise ImportRefused(f"{nm_path} is 0: no noise, so the updates are not private")
        q = bs / group
        if q > 1:
            raise ImportRefused(f"the batch size {bs:g} exceeds num_samples // cycle_length = {group}")
        count = -(-t // cycle)
        desc = f"σ={nm:.6g}, q={q:.6g}"
        if trunc is not None:
            found.pieces.append(Piece("truncated_poisson", {"dataset_size": group, "sampling_rate": q,
                                                            "max_batch": trunc, "sigma": nm}, count,
                                      f"{desc}, truncated at {trunc}", where,
                                      ADD if trunc < group else None))
        elif fixed:
            params = {"sigma": nm, "sampling_rate": q, "sampling": "fixed_size"}
            found.pieces.append(Piece("subsampled_gaussian", params, count, f"{desc}, fixed-size batches",
                                      where, REPLACE, "fixed-size batches are certified under replace-one "
                                      "only"))
            found.note("FIXED_BATCH_SIZE: jax_privacy analyses fixed-size batches as Poisson sampling at "
                       "twice the sensitivity; prvgui accounts them as they are (fixed-size batches, "
                       "replace-one), a certified bound at least jax_privacy's number, which is the proven "
                       "lower bound beside it")
        elif q == 1:
            found.pieces.append(Piece("gaussian", {"sigma": nm}, count, desc, where))
        else:
            found.pieces.append(Piece("subsampled_gaussian", {"sigma": nm, "sampling_rate": q}, count, desc,
                                      where))
    return build(found, None, delta)


def _schedule_nm(v: object) -> list[tuple[int, tuple[float, str]]]:
    """noise_multipliers: one number, or [[t, nm], ...] starting at step 0 (sorted by t)."""
    if not isinstance(v, list):
        return [(0, (number("noise_multipliers", v), "noise_multipliers"))]
    out = []
    for i, pair in enumerate(v):
        path = f"noise_multipliers[{i}]"
        if not isinstance(pair, list) or len(pair) != 2:
            raise ImportRefused(f"{path} must be [step, noise_multiplier]; got {shown(pair)}")
        out.append((whole(f"{path}[0]", pair[0]), (number(f"{path}[1]", pair[1]), f"{path}[1]")))
    return _starts_at_zero(out, "noise_multipliers")


def _starts_at_zero(items: list, name: str) -> list:
    items = sorted(items, key=lambda x: x[0])
    if not items or items[0][0] != 0:
        raise ImportRefused(f"{name} must start at step 0 (as jax_privacy asserts); got steps "
                            f"{shown([x[0] for x in items])}")
    if len({x[0] for x in items}) != len(items):
        raise ImportRefused(f"{name} gives two values for one step")
    return items


def _batch_sizes(d: dict) -> list[tuple[int, float]]:
    """[(step, batch size)]: as DpParams' batch_sizes, from batch_size and batch_size_scale_schedule. The
    size from a step t on is batch_size times every scale whose step is at most t + 1 (optax's
    piecewise-constant schedule read at t + 1, as jax_privacy does)."""
    bs = whole("batch_size", d["batch_size"], 1)
    sched = d.get("batch_size_scale_schedule")
    out: list[tuple[int, float]] = [(0, float(bs))]
    if sched:
        scales = []
        for key, scale in obj("batch_size_scale_schedule", sched, "an object {step: scale}").items():
            path = f"batch_size_scale_schedule[{key!r}]"
            try:
                step = int(key)
            except (TypeError, ValueError):
                step = -1
            if step < 0:
                raise ImportRefused(f"{path}: the key must be a step (a whole number >= 0)")
            scales.append((step, number(path, scale)))
        out += [(b, bs * math.prod(f for c, f in scales if c <= b + 1)) for b, _ in scales]
        out = list(dict(sorted(out, key=lambda x: x[0])).items())  # (a later value for a step wins)
    elif sched not in (None, {}):
        raise ImportRefused("batch_size_scale_schedule must be an object {step: scale}; got "
                            f"{shown(sched)}")
    given = d.get("batch_sizes")
    if given is not None:
        mine: object = out[0][1] if len(out) == 1 else [[b, s] for b, s in out]
        ok = given == mine if not isinstance(given, list) else \
            all(isinstance(x, list) and len(x) == 2 for x in given) and [[b, s] for b, s in given] == mine
        if not ok:
            raise ImportRefused(f"batch_sizes (read-only in DpParams) does not match batch_size and "
                                f"batch_size_scale_schedule: {shown(given)} against {shown(mine)}")
    return out


def _segments(nms: list, batches: list, updates: int) -> list[tuple[int, int, tuple[float, str], float]]:
    """(first step, steps, noise multiplier, batch size) per segment, as jax_privacy's
    _interleave_nm_and_bs: the union of the change points up to num_updates, each segment running to
    the next."""
    nms = [x for x in nms if x[0] <= updates]
    batches = [x for x in batches if x[0] <= updates]
    ts = sorted({t for t, _ in nms} | {t for t, _ in batches})
    out = []
    for i, t in enumerate(ts):
        end = ts[i + 1] if i + 1 < len(ts) else updates
        nm = [v for s, v in nms if s <= t][-1]
        bs = [v for s, v in batches if s <= t][-1]
        out.append((t, end - t, nm, bs))
    return out
