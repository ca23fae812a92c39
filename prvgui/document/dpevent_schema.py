"""dp_accounting's DpEvent classes as the importer reads them (interop_dpevent.py): each class's fields
in dp_accounting's order (dp_event.py; the order of the list form ``json.dumps`` makes of a named
tuple), their defaults, the classes refused and why, and ``EventReader``, which reads one event's
class and fields from untrusted input (a JSON object, such a list, or a named tuple), checking its
keys but not their values."""
from __future__ import annotations

from .interop_common import ImportRefused, join, shown

#: each class's fields, in dp_accounting's order (the order of the list form)
FIELDS: dict[str, tuple[str, ...]] = {
    "NoOpDpEvent": (), "NonPrivateDpEvent": (), "UnsupportedDpEvent": (),
    "RandomizedResponseDpEvent": ("noise_parameter", "num_buckets"),
    "EpsilonDeltaDpEvent": ("epsilon", "delta"),
    "GaussianDpEvent": ("noise_multiplier",),
    "LaplaceDpEvent": ("noise_multiplier",),
    "DiscreteLaplaceDpEvent": ("noise_parameter", "sensitivity"),
    "DiscreteGaussianDpEvent": ("sigma", "sensitivity", "dimension"),
    "SelfComposedDpEvent": ("event", "count"),
    "ComposedDpEvent": ("events",),
    "PoissonSampledDpEvent": ("sampling_probability", "event"),
    "SampledWithReplacementDpEvent": ("source_dataset_size", "sample_size", "event"),
    "SampledWithoutReplacementDpEvent": ("source_dataset_size", "sample_size", "event"),
    "SingleEpochTreeAggregationDpEvent": ("noise_multiplier", "step_counts"),
    "RepeatAndSelectDpEvent": ("event", "mean", "shape"),
    "MixtureOfGaussiansDpEvent": ("standard_deviation", "sensitivities", "sampling_probs"),
    "ZCDpEvent": ("rho", "xi"),
    "ExponentialMechanismDpEvent": ("epsilon",),
    "PermuteAndFlipDpEvent": ("epsilon",),
    "TruncatedSubsampledGaussianDpEvent": ("dataset_size", "sampling_probability", "truncated_batch_size",
                                           "noise_multiplier"),
}
DEFAULTS: dict[str, dict[str, object]] = {"ZCDpEvent": {"xi": 0.0},
                                          "DiscreteGaussianDpEvent": {"sensitivity": 1.0, "dimension": None}}
#: known events prvgui refuses, and why
REFUSED = {
    "NonPrivateDpEvent": "is not private (its epsilon is infinite): there is nothing to account",
    "UnsupportedDpEvent": "has no privacy description: no accountant can account it",
    "SampledWithReplacementDpEvent": "samples with replacement (a record may appear several times in a "
                                     "batch); prvgui has no kind for it",
    "SingleEpochTreeAggregationDpEvent": "has no exact prvgui counterpart (dp_accounting accounts it under "
                                         "its REPLACE_SPECIAL relation, which prvgui does not have); enter "
                                         "a matrix_mechanism row with strategy \"tree\" instead",
    "MixtureOfGaussiansDpEvent": "has no prvgui kind (a general mixture of shifted Gaussians)",
}
SUPPORTED = tuple(sorted(set(FIELDS) - set(REFUSED)))
MAX_EVENTS = 100_000


class EventReader:
    """Reads events, counting them (at most MAX_EVENTS in one input)."""

    def __init__(self) -> None:
        self.seen = 0

    def read(self, obj: object, path: str) -> tuple[str, dict]:
        """(class_name, fields with defaults) of one event; checks its keys, not their values."""
        where = path or "the event"
        self.seen += 1
        if self.seen > MAX_EVENTS:
            raise ImportRefused(f"the input has more than {MAX_EVENTS:,} events")
        asdict = getattr(obj, "_asdict", None)
        if callable(asdict):  # a named tuple
            obj = dict(asdict())
        if isinstance(obj, (list, tuple)) and len(obj) >= 2 and all(isinstance(x, str) for x in obj[:2]):
            cls = self._class(obj[1], path)
            names = FIELDS[cls]
            if len(obj) != 2 + len(names):
                raise ImportRefused(f"{where}: a {cls} as a list holds module_name, class_name"
                                    + "".join(f", {n}" for n in names) + f"; this one has {len(obj)} entries")
            return cls, dict(zip(names, obj[2:]))
        if not isinstance(obj, dict):
            raise ImportRefused(f"{where} must be a DpEvent (an object with a class_name); got {shown(obj)}")
        if "class_name" not in obj:
            raise ImportRefused(f"{join(path, 'class_name')} is missing (which DpEvent {where} is)")
        cls = self._class(obj["class_name"], path)
        if not isinstance(obj.get("module_name", ""), str):
            raise ImportRefused(f"{join(path, 'module_name')} must be text; got {shown(obj['module_name'])}")
        names = FIELDS[cls]
        fields = dict(DEFAULTS.get(cls, {}))
        for k, v in obj.items():
            if k in ("class_name", "module_name"):
                continue
            if k not in names:
                its = ", ".join(names) if names else "none"
                raise ImportRefused(f"{join(path, str(k))}: not a field of {cls} (its fields: {its})")
            fields[k] = v
        missing = [n for n in names if n not in fields]
        if missing:
            raise ImportRefused(f"{join(path, missing[0])} is missing ({cls} has {', '.join(names)})")
        return cls, fields

    def _class(self, name: object, path: str) -> str:
        if not isinstance(name, str) or name not in FIELDS:
            raise ImportRefused(f"{join(path, 'class_name')}: {shown(name)} is not a DpEvent prvgui can "
                                f"import (it imports {', '.join(SUPPORTED)})")
        if name in REFUSED:
            raise ImportRefused(f"{path or 'the event'}: {name} {REFUSED[name]}")
        return name
