"""DP-SGD rows from how training runs: dataset size N, batch size B, epochs, noise, and how the
batches are formed (no Qt; the DP-SGD helper dialog, dpsgd_helper.py, shows and applies them).

* Poisson: each record joins each step independently with probability q = B / N (B is the
  expected batch size); ``epochs`` passes take ⌈epochs / q⌉ steps. A subsampled Gaussian row.
* Fixed size: each step a uniformly random batch of exactly B records; same q and steps. A
  subsampled Gaussian row with ``sampling = fixed_size``, defined under replace-one
  neighbouring only (``scheme_relation``).
* Shuffled: each epoch a fresh random permutation split into T = ⌈N / B⌉ batches. A shuffled
  Gaussian row with ``batches_per_epoch = T`` and ``count = epochs`` (whole epochs).
* Truncated Poisson: Poisson batches as above, a larger one cut to a random ``max batch`` records
  (jax_privacy's truncated batches). A truncated_poisson row, same q and steps.
* Balls-in-bins (random allocation): each epoch every record lands in one of T = ⌈N / B⌉ steps,
  uniformly and independently (batches of B on average). A random allocation row with
  ``steps_per_epoch = T``, ``selected = 1`` and ``count = epochs``.

Schedule arithmetic only: the privacy numbers come from the engine (``scheme_request`` is the
request the helper sends to ``view_model.compute``). The step-count rounding tolerates
floating-point noise so that 1 epoch at q = 0.1 gives 10 steps, not 11.
"""
from __future__ import annotations

import math

from ..accounting.core.values import Relation
from ..accounting.kinds.random_allocation import RandomAllocation
from ..accounting.kinds.shuffled_gaussian import MAX_BATCHES, ShuffledGaussian
from ..accounting.kinds.truncated_poisson import TruncatedPoisson
from ..accounting.mechanisms import DPSGD_KIND, MAX_COUNT
from ..accounting.core.validate import NumberError, check_number, number_text
from ..engine.view_model import Request
from ..document.model import RowSpec, Targets
from .fmt import fmt, fmt_bound, fmt_value
from .tasks import failure_text

MAX_DATASET = 10**12
SHUFFLED_KIND = ShuffledGaussian.kind
ALLOCATION_KIND = RandomAllocation.kind
TRUNCATED_KIND = TruncatedPoisson.kind
#: the kinds the helper fills in (opened on such a row it starts from it and replaces it)
HELPER_KINDS = (DPSGD_KIND, SHUFFLED_KIND, ALLOCATION_KIND, TRUNCATED_KIND)
SCHEMES = ("poisson", "fixed_size", "shuffled", "balls_in_bins", "truncated")
#: the schemes whose rows count whole epochs of T = ⌈N / B⌉ steps
EPOCH_SCHEMES = ("shuffled", "balls_in_bins")
SCHEME_TITLES = {"poisson": "Poisson", "fixed_size": "Fixed size", "shuffled": "Shuffled",
                 "balls_in_bins": "Balls-in-bins", "truncated": "Truncated Poisson"}
SCHEME_TEXT = {
    "poisson": "Poisson: each record joins each step with probability B / N",
    "fixed_size": "Fixed size: each step a random batch of exactly B records",
    "shuffled": "Shuffled: each epoch a fresh permutation, split into batches of B",
    "balls_in_bins": "Balls-in-bins: each epoch every record joins one random step of ⌈N / B⌉",
    "truncated": "Truncated Poisson: Poisson batches of B on average, cut to at most the max batch",
}
SCHEME_TIPS = {
    "poisson": "Opacus' default and what DP-SGD accounting usually assumes. The row: a subsampled "
               "Gaussian with q = B / N, ⌈epochs / q⌉ steps.",
    "fixed_size": "Sampling without replacement at each step (e.g. a random sampler with a fixed batch "
                  "size). The row: a subsampled Gaussian with fixed-size batches, q = B / N, "
                  "⌈epochs / q⌉ steps. Defined under replace-one neighbouring, one record per person, "
                  "and much costlier than Poisson at the same rate: a replaced record also displaces "
                  "another from the batch.",
    "shuffled": "What most training loops do (shuffle, then iterate over the batches). The row: a "
                "shuffled Gaussian with ⌈N / B⌉ batches per epoch and the epochs as its count. No tight "
                "accountant exists: prvgui reports a proven lower bound and a certified upper bound.",
    "balls_in_bins": "Random allocation with one step per record (Chua et al. 2025; Feldman and Shenfeld "
                     "2025): fixed-shape epochs that amplify about as Poisson does. The row: a random "
                     "allocation Gaussian with ⌈N / B⌉ steps per epoch and the epochs as its count. prvgui "
                     "reports a proven lower bound and a certified upper bound, both from the same "
                     "numerical pair, usually a few hundredths apart.",
    "truncated": "Poisson sampling with a cap on the batch (jax_privacy's truncated batches): a larger batch "
                 "is cut to a random max-batch subset. The row: a truncated Poisson Gaussian with q = B / N, "
                 "⌈epochs / q⌉ steps. Under add/remove only; when truncation can happen a kept record may "
                 "displace another, which prvgui certifies as a shift of twice the clipping norm.",
}


#: the helper's fields: key -> label (messages name a field by it)
LABELS = {"dataset": "Dataset size N", "batch": "Batch size B", "epochs": "Epochs",
          "sigma": "Noise multiplier σ", "max_batch": "Max batch"}


def _whole(key: str, value: object, lo: int, hi: int, why: str = "") -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or value != int(value) or not lo <= value <= hi:
        raise NumberError(LABELS[key], f"a whole number from {lo:,} to {hi:,}{why}", value, key)
    return int(value)


def _sizes(dataset_size: object, batch_size: object) -> tuple[int, int]:
    n = _whole("dataset", dataset_size, 1, MAX_DATASET)
    b = _whole("batch", batch_size, 1, n, " (the dataset size)" if n < MAX_DATASET else "")
    return n, b


def dpsgd_schedule(dataset_size: object, batch_size: object, epochs: object) -> tuple[float, int]:
    """(sampling rate q, number of steps) for DP-SGD with Poisson or fixed-size batches.

    Raises a NumberError naming the bad field by its label (its ``field`` is the key).
    """
    n, b = _sizes(dataset_size, batch_size)
    epochs = check_number(LABELS["epochs"], epochs, 0.0, lo_open=True, field="epochs")
    q = b / n
    exact = epochs / q
    steps = max(1, math.ceil(exact - 1e-9 * max(1.0, exact)))
    if steps > MAX_COUNT:
        most = number_text(float(fmt_bound(MAX_COUNT * q, 6, up=False)))
        raise NumberError(LABELS["epochs"], f"at most {most} with this batch and dataset "
                          f"size (a row counts at most {MAX_COUNT:,} steps)", epochs, "epochs")
    return q, steps


def shuffled_schedule(dataset_size: object, batch_size: object, epochs: object,
                      what: str = "shuffled batches") -> tuple[int, int]:
    """(batches per epoch T = ⌈N / B⌉, epochs) for DP-SGD with shuffled batches (or balls-in-bins:
    ``what`` names them in messages); the epochs are the row's count, so they must be whole.
    Raises a NumberError naming the bad field."""
    n, b = _sizes(dataset_size, batch_size)
    check_number(LABELS["epochs"], epochs, 0.0, lo_open=True, field="epochs")
    e = _whole("epochs", epochs, 1, MAX_COUNT, f" with {what} (the row counts epochs)")
    t = -(-n // b)
    if t > MAX_BATCHES:
        raise NumberError(LABELS["batch"], f"at least {-(-n // MAX_BATCHES):,} with {what} "
                          f"(at most {MAX_BATCHES:,} batches per epoch)", batch_size, "batch")
    return t, e


def dpsgd_row(scheme: str, values: dict, sensitivity: object = 1.0) -> RowSpec:
    """The row for one way of forming batches; raises ValueError naming the bad field."""
    n, b, epochs, sigma = (values.get(k) for k in ("dataset", "batch", "epochs", "sigma"))
    what = "" if scheme == "poisson" else f", {SCHEME_TITLES[scheme].lower()}"
    label = f"DP-SGD{what}: N={fmt_value(n)}, batch {fmt_value(b)}, {fmt(epochs, 6)} epochs"
    if scheme == "shuffled":
        t, e = shuffled_schedule(n, b, epochs)
        row = RowSpec(SHUFFLED_KIND, {"sigma": sigma, "batches_per_epoch": t, "sensitivity": sensitivity},
                      e, label)
    elif scheme == "balls_in_bins":
        t, e = shuffled_schedule(n, b, epochs, "balls-in-bins batches")
        row = RowSpec(ALLOCATION_KIND, {"sigma": sigma, "steps_per_epoch": t, "selected": 1,
                                        "sensitivity": sensitivity}, e, label)
    elif scheme == "truncated":
        q, steps = dpsgd_schedule(n, b, epochs)
        cap = _whole("max_batch", values.get("max_batch"), 1, int(n), " (the dataset size)")
        row = RowSpec(TRUNCATED_KIND, {"dataset_size": int(n), "sampling_rate": q, "max_batch": cap, "sigma": sigma,
                                       "sensitivity": sensitivity}, steps, label)
    elif scheme in ("poisson", "fixed_size"):
        q, steps = dpsgd_schedule(n, b, epochs)
        params = {"sigma": sigma, "sampling_rate": q, "sensitivity": sensitivity}
        if scheme == "fixed_size":
            params["sampling"] = "fixed_size"
        row = RowSpec(DPSGD_KIND, params, steps, label)
    else:
        raise ValueError(f"batches must be one of {', '.join(SCHEMES)}, got {scheme!r}")
    err = row.error()
    if err:
        raise ValueError(err)
    return row


def scheme_relation(scheme: str, neighbouring: str, group_size: int) -> Relation:
    """The relation a row of ``scheme`` is accounted under once applied: fixed-size batches
    need replace-one; the others keep the document's neighbouring."""
    return Relation("replace_one" if scheme == "fixed_size" else neighbouring, group_size)


def scheme_request(row: RowSpec, relation: Relation, targets: Targets) -> Request:
    """The engine request for the ε of one training row alone (no curves)."""
    return Request((row.to_row(),), targets.delta, None, targets.eps_error, relation.neighbouring.value,
                   relation.group_size, profile_points=0, tradeoff_points=0, steps_row=None,
                   want_pld=False)


def _gives(values: dict, q: float, count: int) -> bool:
    try:
        return dpsgd_schedule(values.get("dataset"), values.get("batch"), values.get("epochs")) == (q, count)
    except (ValueError, TypeError):
        return False


def settings_for_row(q: object, count: object, remembered: dict) -> dict | None:
    """Dataset size, batch size and epochs for the row's sampling rate ``q`` and ``count``: the
    remembered ones if they give them exactly, else the remembered dataset size with the batch
    size that gives q, each with the roundest epochs that give ``count``. Nothing is invented: when
    no remembered dataset size gives q (a rate is not a dataset: q = 0.01 says nothing of N), N and
    B are None (the helper asks for them) and epochs is count x q, what the row says. None if q or
    count is invalid."""
    if isinstance(q, bool) or not isinstance(q, (int, float)) or not 0 < q <= 1 \
            or isinstance(count, bool) or not isinstance(count, int) or count < 1:
        return None
    q = float(q)
    if _gives(remembered, q, count):
        return {k: remembered[k] for k in ("dataset", "batch", "epochs")}
    n = remembered.get("dataset")
    if isinstance(n, (int, float)) and math.isfinite(n) and 1 <= n <= MAX_DATASET and n == int(n):
        n, b = int(n), round(n * q)
        if 1 <= b <= n and b / n == q:
            exact = count * b / n
            for digits in range(16):  # the roundest epochs that still give count steps
                values = {"dataset": n, "batch": b, "epochs": round(exact, digits)}
                if _gives(values, q, count):
                    return values
    return {"dataset": None, "batch": None, "epochs": float(f"{count * q:.12g}")}


def settings_for_shuffled(batches: object, count: object, remembered: dict) -> dict | None:
    """Dataset size, batch size and epochs that give a shuffled row's batches per epoch and
    count (= epochs): the remembered ones if they do, else the remembered dataset size with
    the batch size that gives T batches, else T batches of the remembered (or 256) records."""
    if isinstance(batches, bool) or not isinstance(batches, int) or not 1 <= batches <= MAX_BATCHES \
            or isinstance(count, bool) or not isinstance(count, int) or count < 1:
        return None

    def gives(n, b) -> bool:
        try:
            return shuffled_schedule(n, b, count) == (batches, count)
        except (ValueError, TypeError):
            return False

    n, b = remembered.get("dataset"), remembered.get("batch")
    if gives(n, b):
        return {"dataset": n, "batch": b, "epochs": count}
    if isinstance(n, (int, float)) and math.isfinite(n) and 1 <= n <= MAX_DATASET and n == int(n):
        b2 = -(-int(n) // batches)
        if gives(int(n), b2):
            return {"dataset": int(n), "batch": b2, "epochs": count}
    b = b if isinstance(b, (int, float)) and math.isfinite(b) and 1 <= b == int(b) else 256
    if gives(int(b) * batches, int(b)):
        return {"dataset": int(b) * batches, "batch": int(b), "epochs": count}
    return None


def initial_for_row(row: RowSpec | None, remembered: dict, group_size: int = 1) -> dict:
    """The helper's starting values: the remembered ones, overridden by what the row says (its
    scheme, N / B / epochs that give its schedule, its σ and sensitivity)."""
    initial = {k: v for k, v in remembered.items() if v is not None}
    if group_size > 1:
        initial["group_size"] = group_size
    if row is None or row.kind not in HELPER_KINDS:
        return initial
    p = row.params
    if row.kind == SHUFFLED_KIND:
        initial["scheme"] = "shuffled"
        initial.update(settings_for_shuffled(p.get("batches_per_epoch"), row.count, initial) or {})
    elif row.kind == TRUNCATED_KIND:
        initial["scheme"] = "truncated"
        if isinstance(p.get("dataset_size"), (int, float)):
            initial["dataset"] = p["dataset_size"]
        if isinstance(p.get("max_batch"), (int, float)):
            initial["max_batch"] = p["max_batch"]
        initial.update(settings_for_row(p.get("sampling_rate"), row.count, initial) or {})
    elif row.kind == ALLOCATION_KIND:
        initial["scheme"] = "balls_in_bins"
        initial.update(settings_for_shuffled(p.get("steps_per_epoch"), row.count, initial) or {})
    else:
        initial["scheme"] = "fixed_size" if p.get("sampling") == "fixed_size" else "poisson"
        initial.update(settings_for_row(p.get("sampling_rate"), row.count, initial) or {})
    if isinstance(p.get("sigma"), (int, float)):
        initial["sigma"] = p["sigma"]
    if isinstance(p.get("sensitivity"), (int, float)):
        initial["sensitivity"] = p["sensitivity"]
    return initial


def merged_row(old: RowSpec, new: RowSpec) -> RowSpec:
    """The helper's row put into an existing helper row: the row's clipping norm (sensitivity)
    and its own label stay; a label the helper wrote is replaced."""
    label = new.label if not old.label or old.label.startswith("DP-SGD") else old.label
    params = dict(new.params)
    if "sensitivity" in old.params:
        params["sensitivity"] = old.params["sensitivity"]
    if old.kind == new.kind and "sampling" in old.params and "sampling" not in params:
        params["sampling"] = "poisson"  # the row said so explicitly: keep saying it
    return RowSpec(new.kind, params, new.count, label)


def outcome_text(scheme: str, result) -> str:
    """A scheme's cell: the certified upper bound on ε (Shuffled: between the proven lower bound
    and it)."""
    best = getattr(result, "certified_upper", None)
    upper = best.value if best is not None else result.epsilon.upper
    at_least = getattr(result, "epsilon_at_least", None)
    if at_least is not None:
        return f"between {fmt_bound(at_least, up=False)} and {fmt_bound(upper)}"
    return f"≤ {fmt_bound(upper)}"


def unavailable_text(exc: object) -> tuple[str, str]:
    """(cell text, tooltip) for a scheme the engine could not compute."""
    if isinstance(exc, ImportError):  # an engine module this build lacks (e.g. mixture, shuffle)
        return "not available in this version of prvgui", f"The engine could not load a module: {exc}"
    text = failure_text(exc)
    return f"could not compute: {text}", text
