"""dp_accounting's DpEvents (google/differential-privacy, python/dp_accounting, dp_event.py) as prvgui
rows: ``import_dpevent(obj)`` (``interop.from_dpevent``). The input is the event's ``to_named_tuple()``
form, untrusted, as nested JSON objects (``{"class_name": "ComposedDpEvent", "events": [...]}``;
``module_name`` is optional and ignored), as the lists ``json.dumps`` makes of the named tuples
(``["dp_accounting.dp_event", "GaussianDpEvent", 1.1]``), or as the named tuples themselves.
dp_accounting is never imported.

Each event maps to the prvgui kind with the same dominating pair (docs/file-format.md has the table):
noise multipliers are per record (``GaussianDpEvent``: sum of vectors of norm <= C plus N(0, (s C)^2),
noise_multiplier = s), so a row's sensitivity is 1. Events dp_accounting accounts under one
relation only set the composition's: randomized response (a record's bucket changes) and sampling
without replacement (fixed-size batches, the dataset size public) need replace-one; truncated
Poisson batches are certified under add/remove only. Events with no exact counterpart are refused
with the reason, never approximated.
"""
from __future__ import annotations

import math

from .dpevent_schema import EventReader
from .interop_common import (ADD, REPLACE, Found, Imported, ImportRefused, Piece, build, join, number, shown,
                             whole)
from ..accounting.queries.selection import Tuning

MAX_DEPTH = 100
SOURCE = "dp_accounting"
NOT_PRIVATE = "is 0: no noise, so the mechanism is not private"
WOR_WHY = ("fixed-size batches are certified under replace-one only (with add/remove the batch size would "
           "reveal the dataset size)")
WOR_NOTE = ("fixed-size batches (SampledWithoutReplacementDpEvent): a replaced record can move the batch's "
            "sum of clipped vectors by twice the clipping norm, and prvgui accounts that (sensitivity 1 per "
            "record, doubled under replace-one); dp_accounting's RDP accountant, the only one that takes "
            "this event, takes the move to be one noise-multiplier unit, so its epsilon is smaller than "
            "prvgui's and than what two datasets can realise")


def import_dpevent(obj: object, neighbouring: str | None = None, delta: float | None = None) -> Imported:
    """The composition of a DpEvent (``neighbouring``: the relation its accountant used; None: the
    one its events need, add/remove when they need none)."""
    found = Found(SOURCE)
    walker = _Walker(found)
    cls, fields = walker.node(obj, "")
    if cls == "RepeatAndSelectDpEvent":  # the whole composition, run several times, the best kept
        found.tuning = _tuning(fields)
        walker.walk(fields["event"], "event", 1, 1)
        found.note(f"RepeatAndSelectDpEvent: {found.tuning.describe()} (the composition's tuning)")
    else:
        walker.walk(obj, "", 1, 0)
    if not any(p.count for p in found.pieces):
        raise ImportRefused("the event has no private part to account (only no-op events, or counts, rates "
                            "or sizes of 0)")
    return build(found, neighbouring, delta)


def _tuning(fields: dict) -> Tuning:
    mean = number("mean", fields["mean"], 1.0)
    shape = number("shape", fields["shape"], -1.0, lo_open=True, allow_inf=True)
    try:
        if math.isinf(shape):
            return Tuning("poisson", mean)
        return Tuning("truncated_negative_binomial", mean, shape)
    except ValueError as exc:
        raise ImportRefused(str(exc).replace("tuning.eta", "shape").replace("tuning.mean", "mean")) from None


def _describe(cls: str) -> str:
    return cls[:-len("DpEvent")] if cls.endswith("DpEvent") else cls


class _Walker:
    def __init__(self, found: Found) -> None:
        self.found = found
        self.node = EventReader().read

    def add(self, kind: str, params: dict, count: int, desc: str, path: str, needs: str | None = None,
            why: str = "") -> None:
        self.found.pieces.append(Piece(kind, params, count, desc, path or "the event", needs, why))

    def walk(self, obj: object, path: str, count: int, depth: int) -> None:
        if depth > MAX_DEPTH:
            raise ImportRefused(f"{path}: events are nested more than {MAX_DEPTH} deep")
        cls, f = self.node(obj, path)
        at = lambda name: join(path, name)  # noqa: E731
        if cls == "NoOpDpEvent":
            return
        if cls == "ComposedDpEvent":
            events = f["events"]
            if not isinstance(events, (list, tuple)):
                raise ImportRefused(f"{at('events')} must be a list of events; got {shown(events)}")
            for i, e in enumerate(events):
                self.walk(e, f"{at('events')}[{i}]", count, depth + 1)
            return
        if cls == "SelfComposedDpEvent":
            n = whole(at("count"), f["count"], 0, 10**18)
            self.walk(f["event"], at("event"), count * n, depth + 1)
            return
        if cls == "RepeatAndSelectDpEvent":
            raise ImportRefused(f"{path}: a RepeatAndSelectDpEvent is imported only as the whole event "
                                "(prvgui's tuning is of the whole composition); here it is inside another "
                                "event")
        if cls in ("PoissonSampledDpEvent", "SampledWithoutReplacementDpEvent"):
            self._sampled(cls, f, path, count, depth)
            return
        self._leaf(cls, f, path, count)

    def _leaf(self, cls: str, f: dict, path: str, count: int) -> None:
        at = lambda name: join(path, name)  # noqa: E731
        if cls in ("GaussianDpEvent", "LaplaceDpEvent"):
            s = _noise(at("noise_multiplier"), f["noise_multiplier"])
            kind, name = ("gaussian", "sigma") if cls == "GaussianDpEvent" else ("laplace", "scale")
            sym = "σ" if kind == "gaussian" else "b"
            self.add(kind, {name: s}, count, f"{_describe(cls)} {sym}={s:.6g}", path)
        elif cls == "DiscreteLaplaceDpEvent":
            a = number(at("noise_parameter"), f["noise_parameter"], 0.0)
            if a == 0:
                raise ImportRefused(f"{at('noise_parameter')} {NOT_PRIVATE}")
            sens = whole(at("sensitivity"), f["sensitivity"])
            if sens:
                self.add("discrete_laplace", {"scale": 1.0 / a, "sensitivity": sens}, count,
                         f"DiscreteLaplace a={a:.6g}, Δ={sens}", path)
        elif cls == "DiscreteGaussianDpEvent":
            sigma = number(at("sigma"), f["sigma"], 0.0)
            sens = whole(at("sensitivity"), f["sensitivity"])
            if f["dimension"] != 1:
                raise ImportRefused(f"{at('dimension')}: prvgui's discrete Gaussian is one-dimensional (an "
                                    "integer query); set dimension to 1 if it is; got "
                                    f"{shown(f['dimension'])}")
            if sigma == 0 and sens:
                raise ImportRefused(f"{at('sigma')} {NOT_PRIVATE}")
            if sens:
                self.add("discrete_gaussian", {"sigma": sigma, "sensitivity": sens}, count,
                         f"DiscreteGaussian σ={sigma:.6g}, Δ={sens}", path)
        elif cls == "RandomizedResponseDpEvent":
            self._randomized_response(f, path, count)
        elif cls == "EpsilonDeltaDpEvent":
            eps = number(at("epsilon"), f["epsilon"])
            d = number(at("delta"), f["delta"], 0.0, 1.0)
            if d == 0:
                self.add("pure_dp", {"epsilon": eps}, count, f"EpsilonDelta ε={eps:.6g}, δ=0", path)
            else:
                self.add("approx_dp", {"epsilon": eps, "delta": d}, count,
                         f"EpsilonDelta ε={eps:.6g}, δ={d:.6g}", path)
        elif cls == "ZCDpEvent":
            rho, xi = number(at("rho"), f["rho"]), number(at("xi"), f["xi"])
            if rho == 0 and xi > 0:
                raise ImportRefused(f"{at('rho')}: prvgui's zCDP kind needs rho > 0 (here xi = {xi:g} with "
                                    "rho 0)")
            if rho:
                params = {"rho": rho, **({"xi": xi} if xi else {})}
                self.add("zcdp", params, count, f"zCDP ρ={rho:.6g}" + (f", ξ={xi:.6g}" if xi else ""), path)
        elif cls in ("ExponentialMechanismDpEvent", "PermuteAndFlipDpEvent"):
            eps = number(at("epsilon"), f["epsilon"])
            if cls == "ExponentialMechanismDpEvent":  # an eps-DP exponential mechanism is eps-bounded-range
                self.add("exponential_mechanism", {"epsilon": eps}, count,
                         f"ExponentialMechanism ε={eps:.6g}", path)
            elif eps:
                self.add("pure_dp", {"epsilon": eps}, count, f"PermuteAndFlip ε={eps:.6g}, as any ε-DP", path)
                self.found.note("PermuteAndFlipDpEvent: accounted as any ε-DP mechanism (permute-and-flip is "
                                "ε-DP); dp_accounting uses the Laplace pair at 1/ε instead, which prvgui "
                                "does not assume")
        else:  # TruncatedSubsampledGaussianDpEvent
            n = whole(at("dataset_size"), f["dataset_size"])
            q = number(at("sampling_probability"), f["sampling_probability"], 0.0, 1.0)
            b = whole(at("truncated_batch_size"), f["truncated_batch_size"])
            s = number(at("noise_multiplier"), f["noise_multiplier"])
            if n == 0 or q == 0 or b == 0:
                return
            if s == 0:
                raise ImportRefused(f"{at('noise_multiplier')} {NOT_PRIVATE}")
            self.add("truncated_poisson", {"dataset_size": n, "sampling_rate": q, "max_batch": b, "sigma": s},
                     count, f"TruncatedSubsampledGaussian σ={s:.6g}, q={q:.6g}, n={n}, B={b}", path,
                     ADD if b < n else None)

    def _randomized_response(self, f: dict, path: str, count: int) -> None:
        p = number(join(path, "noise_parameter"), f["noise_parameter"], 0.0, 1.0)
        k = whole(join(path, "num_buckets"), f["num_buckets"], 1)
        if k == 1:
            return  # one bucket: the output says nothing (dp_accounting: a no-op)
        if p == 0:
            raise ImportRefused(f"{join(path, 'noise_parameter')} {NOT_PRIVATE}")
        why = "randomized response is defined for a record whose value changes (dp_accounting: REPLACE_ONE)"
        desc = f"RandomizedResponse p={p:.6g}, k={k}"
        if k == 2:  # the true bucket with probability 1 - p/2: binary RR at eps = log((2 - p) / p)
            self.add("randomized_response", {"epsilon": math.log1p(2.0 * (1.0 - p) / p)}, count, desc, path,
                     REPLACE, why)
            return
        # k buckets: the record's bucket x -> x'. Outputs x, x', any other: P = (a, b, (k-2) b) against
        # Q = (b, a, (k-2) b), a = 1 - p + p/k, b = p/k; symmetric (swapping x and x' swaps P and Q)
        a, b = 1.0 - p + p / k, p / k
        self.add("pmf_pair", {"p": [a, b, (k - 2) * b], "q": [b, a, (k - 2) * b], "symmetric": "yes"}, count,
                 desc, path, REPLACE, why)

    def _sampled(self, cls: str, f: dict, path: str, count: int, depth: int) -> None:
        at = lambda name: join(path, name)  # noqa: E731
        if cls == "PoissonSampledDpEvent":
            q = number(at("sampling_probability"), f["sampling_probability"], 0.0, 1.0)
            sampling, short = "poisson", "PoissonSampled"
        else:
            n = whole(at("source_dataset_size"), f["source_dataset_size"], 1)
            m = whole(at("sample_size"), f["sample_size"], 0, n)
            q = m / n
            sampling, short = "fixed_size", "SampledWithoutReplacement"
        inner = self._inner(f["event"], at("event"), cls, depth + 1)
        if inner is None or q == 0:
            return
        kind, s, combined = inner
        sym, name = ("σ", "sigma") if kind == "gaussian" else ("b", "scale")
        what = f"{kind.capitalize()} {sym}={s:.6g}{' combined' if combined else ''}"
        rate = f"q={q:.6g}" if sampling == "poisson" else f"{m} of {n}"
        desc = f"{short}({what}, {rate})"
        if q == 1:  # every record, every time: the mechanism itself
            self.add(kind, {name: s}, count, desc, path)
            return
        params = {name: s, "sampling_rate": q, **({"sampling": sampling} if sampling != "poisson" else {})}
        if sampling == "fixed_size":
            self.found.note(WOR_NOTE)
        fixed = sampling == "fixed_size"
        self.add(f"subsampled_{kind}", params, count, desc, path, REPLACE if fixed else None,
                 WOR_WHY if fixed else "")

    def _inner(self, obj: object, path: str, outer: str, depth: int) -> tuple[str, float, bool] | None:
        """What a sampled event applies to each batch: ("gaussian", noise multiplier, combined) for one
        Gaussian or several on the same batch (k queries with multipliers s_i are one with
        (sum s_i^-2)^-1/2: the record moves every query at once), ("laplace", b, False) for one Laplace,
        None for nothing."""
        if depth > MAX_DEPTH:
            raise ImportRefused(f"{path}: events are nested more than {MAX_DEPTH} deep")
        cls, f = self.node(obj, path)
        if cls == "NoOpDpEvent":
            return None
        if cls in ("GaussianDpEvent", "LaplaceDpEvent"):
            s = _noise(join(path, "noise_multiplier"), f["noise_multiplier"])
            return ("gaussian" if cls == "GaussianDpEvent" else "laplace"), s, False
        parts: list[tuple[tuple[str, float, bool] | None, int, str]] = []
        if cls == "SelfComposedDpEvent":
            n = whole(join(path, "count"), f["count"], 0, 10**18)
            parts.append((self._inner(f["event"], join(path, "event"), outer, depth + 1), n, path))
        elif cls == "ComposedDpEvent":
            events = f["events"]
            if not isinstance(events, (list, tuple)):
                raise ImportRefused(f"{join(path, 'events')} must be a list of events; got {shown(events)}")
            for i, e in enumerate(events):
                p = f"{join(path, 'events')}[{i}]"
                parts.append((self._inner(e, p, outer, depth + 1), 1, p))
        else:
            raise ImportRefused(f"{path}: {cls} inside {outer} cannot be imported: prvgui accounts a sampled "
                                "Gaussian or Laplace mechanism (or Gaussians composed on the same batch)")
        inv2 = 0.0
        for part, n, p in parts:
            if part is None or n == 0:
                continue
            if part[0] != "gaussian":
                raise ImportRefused(f"{p}: Laplace mechanisms composed on the same batch are not one Laplace "
                                    f"mechanism; prvgui cannot import them inside {outer}")
            inv2 += n / part[1] / part[1]
        return None if inv2 == 0 else ("gaussian", inv2 ** -0.5, True)


def _noise(path: str, v: object) -> float:
    s = number(path, v)
    if s == 0:
        raise ImportRefused(f"{path} {NOT_PRIVATE}")
    return s
