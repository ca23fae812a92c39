"""From a training configuration to the rows that account it: ``prvgui from-training CONFIG``.

Most wrong epsilons come from wrong inputs (the issue trackers of Opacus and jax_privacy,
2025-26; jax_privacy's "sharp edges" notes): the sampling rate taken from the wrong length, gradient
accumulation left out, microbatching's doubled sensitivity, adaptive clipping's noise share,
normalisation by the realised batch, batches accounted as Poisson but run shuffled. ``translate``
takes what the practitioner configured, builds the composition of the batches *as run*, writes
every conversion as a line a person can check, and lists the pitfalls it finds (docs/method.md,
"From a training configuration").

The configuration (a JSON object; untrusted: every field is checked and named):

    framework            opacus | jax_privacy | tensorflow_privacy | plain
    dataset_size         N, the records the sampler draws from
    batch_size           the physical batch (records per forward pass)
    accumulation_steps   physical batches per noisy update (default 1)
    epochs | steps       training length: epochs over N, or noisy updates
    noise_multiplier     sigma as configured (noise std / clipping norm)
    sampler              poisson | shuffle | fixed_size | weighted | random_allocation
                         (default: poisson for opacus and jax_privacy, shuffle for
                         tensorflow_privacy; plain must say)
    loss_reduction       sum | mean | expected_batch (default: expected_batch)
    microbatches         microbatches per physical batch (tensorflow_privacy; default none)
    clip_norm            C (the noise is sigma C; the sensitivity is C, so rows use units of C)
    adaptive_clip_sigma  sigma_b of adaptive clipping's noisy count (Andrew et al. 2021)
    neighbouring         add_remove | replace_one (default add_remove)
    delta                target delta (default: min(1e-5, 1 / (10 N)))
    checkpoints_released whether intermediate checkpoints are published (default false)
    claim                all_iterates | final_model: what the published guarantee is stated for
    accounted_as         the sampling the practitioner's own accountant assumed (e.g. poisson)
    sampler_length       the length the sampler or data loader reported, when it is not N
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from ..accounting.kinds.random_allocation import RandomAllocation
from ..accounting.kinds.shuffled_gaussian import ShuffledGaussian
from ..accounting.kinds.subsampled_gaussian import SubsampledGaussian
from .composition import Composition
from .interop_common import shown

FRAMEWORKS = ("opacus", "jax_privacy", "tensorflow_privacy", "plain")
#: (random allocation's sampler has the kind's own name)
ALLOCATION = RandomAllocation.kind
SAMPLERS = ("poisson", "shuffle", "fixed_size", "weighted", ALLOCATION)
REDUCTIONS = ("sum", "mean", "expected_batch")
NEIGHBOURING = ("add_remove", "replace_one")
CLAIMS = ("all_iterates", "final_model")
DEFAULT_SAMPLER = {"opacus": "poisson", "jax_privacy": "poisson", "tensorflow_privacy": "shuffle"}
FIELDS = ("framework", "dataset_size", "batch_size", "accumulation_steps", "epochs", "steps",
          "noise_multiplier", "sampler", "loss_reduction", "microbatches", "clip_norm",
          "adaptive_clip_sigma", "neighbouring", "delta", "checkpoints_released", "claim", "accounted_as",
          "sampler_length")


class ConfigError(ValueError):
    """A configuration that cannot be translated; the message names the field and the value."""


@dataclass(frozen=True)
class Pitfall:
    code: str
    message: str
    severity: str = "warning"  # "warning": accounted, but check; "error": no composition

    def as_dict(self) -> dict:
        return {"code": self.code, "message": self.message, "severity": self.severity}


@dataclass(frozen=True)
class Translation:
    composition: Composition | None
    conversions: tuple[str, ...]
    pitfalls: tuple[Pitfall, ...] = field(default_factory=tuple)

    def as_dict(self) -> dict:
        return {"composition": None if self.composition is None else self.composition.to_dict(),
                "conversions": list(self.conversions), "pitfalls": [p.as_dict() for p in self.pitfalls]}


def _int(cfg: dict, name: str, lo: int = 1, default: int | None = None) -> int | None:
    v = cfg.get(name, default)
    if v is None:
        return None
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    if isinstance(v, bool) or not isinstance(v, int) or v < lo or v > 10 ** 12:
        raise ConfigError(f"{name} must be a whole number from {lo} to 10^12; got {shown(v)}")
    return v


def _num(cfg: dict, name: str, lo: float, hi: float = math.inf, lo_open: bool = True,
         default: float | None = None) -> float | None:
    v = cfg.get(name, default)
    if v is None:
        return None
    bad = isinstance(v, bool) or not isinstance(v, (int, float)) or not _finite(v)
    if bad or v < lo or (lo_open and v == lo) or v > hi:
        where = f"above {lo:g}" if lo_open else f"at least {lo:g}"
        if math.isfinite(hi):
            where += f" and at most {hi:g}"
        raise ConfigError(f"{name} must be a number {where}; got {shown(v)}")
    return float(v)


def _finite(v: int | float) -> bool:
    """v is a finite number a float can hold (an int past 1.8e308 is not)."""
    try:
        return math.isfinite(v)
    except OverflowError:
        return False


def _choice(cfg: dict, name: str, options: tuple[str, ...], default: str | None = None) -> str | None:
    v = cfg.get(name, default)
    if v is None:
        return None
    if not isinstance(v, str) or v not in options:
        raise ConfigError(f"{name} must be one of {', '.join(options)}; got {shown(v)}")
    return v


def _bool(cfg: dict, name: str) -> bool:
    v = cfg.get(name, False)
    if not isinstance(v, bool):
        raise ConfigError(f"{name} must be true or false; got {shown(v)}")
    return v


@dataclass
class _Config:
    framework: str
    n: int
    batch: int
    accumulation: int
    sigma: float
    sampler: str
    reduction: str
    microbatches: int | None
    clip: float | None
    sigma_b: float | None
    neighbouring: str
    delta: float | None
    checkpoints: bool
    claim: str
    accounted_as: str | None
    sampler_length: int | None
    epochs: float | None
    steps: int | None


def read_config(cfg: object) -> _Config:
    """The checked configuration (ConfigError names the first bad field)."""
    if not isinstance(cfg, dict):
        raise ConfigError(f"a training configuration must be a JSON object; got {type(cfg).__name__}")
    unknown = sorted(k for k in cfg if k not in FIELDS)
    if unknown:
        raise ConfigError(f"{unknown[0]}: not a field of a training configuration (its fields: "
                          f"{', '.join(FIELDS)})")
    if cfg.get("framework") is None:
        raise ConfigError(f"framework is missing (one of {', '.join(FRAMEWORKS)})"
                          + (" (got null)" if "framework" in cfg else ""))
    framework = _choice(cfg, "framework", FRAMEWORKS)
    for required in ("dataset_size", "batch_size", "noise_multiplier"):
        if cfg.get(required) is None:  # (null is missing too: never a default noise of 0)
            raise ConfigError(f"{required} is missing" + (" (got null)" if required in cfg else ""))
    if (cfg.get("epochs") is None) == (cfg.get("steps") is None):
        raise ConfigError("give exactly one of epochs and steps" + (
            f"; got epochs {shown(cfg.get('epochs'))} and steps {shown(cfg.get('steps'))}"
            if "epochs" in cfg or "steps" in cfg else ""))
    if framework == "plain" and "sampler" not in cfg:
        raise ConfigError(f"sampler is missing (one of {', '.join(SAMPLERS)}): a plain configuration "
                          "must say how batches were formed")
    n = _int(cfg, "dataset_size")
    batch = _int(cfg, "batch_size")
    assert framework is not None and n is not None and batch is not None
    return _Config(
        framework, n, batch, _int(cfg, "accumulation_steps", default=1) or 1,
        _num(cfg, "noise_multiplier", 0.0) or 0.0,
        _choice(cfg, "sampler", SAMPLERS, DEFAULT_SAMPLER.get(framework)) or "poisson",
        _choice(cfg, "loss_reduction", REDUCTIONS, "expected_batch") or "expected_batch",
        _int(cfg, "microbatches"), _num(cfg, "clip_norm", 0.0), _num(cfg, "adaptive_clip_sigma", 0.0),
        _choice(cfg, "neighbouring", NEIGHBOURING, "add_remove") or "add_remove",
        _num(cfg, "delta", 0.0, 1.0, default=None), _bool(cfg, "checkpoints_released"),
        _choice(cfg, "claim", CLAIMS, "all_iterates") or "all_iterates",
        _choice(cfg, "accounted_as", SAMPLERS), _int(cfg, "sampler_length"),
        _num(cfg, "epochs", 0.0), _int(cfg, "steps"))


def translate(cfg: object) -> Translation:
    """The composition of the configuration's batches as run, the conversions, the pitfalls."""
    c = read_config(cfg)
    lines: list[str] = []
    pits: list[Pitfall] = []
    logical = c.batch * c.accumulation
    if c.accumulation > 1:
        lines.append(f"batch per noisy update B = batch_size × accumulation_steps = {c.batch} × "
                     f"{c.accumulation} = {logical}")
    else:
        lines.append(f"batch per noisy update B = batch_size = {logical}")
    if logical > c.n:
        raise ConfigError(f"batch_size × accumulation_steps ({logical}) exceeds dataset_size ({c.n})")
    if "sampler" not in cfg and c.framework in DEFAULT_SAMPLER:  # type: ignore[operator]
        lines.append(f"sampler not given: {c.framework}'s default, {c.sampler}")
    sigma = c.sigma
    if c.sigma_b is not None:
        # Andrew et al. 2021: the step releases the gradient sum at noise sigma_g and the centred
        # clipped count (sensitivity 1/2) at sigma_b; together one Gaussian at sigma, with
        # sigma^-2 = sigma_g^-2 + (2 sigma_b)^-2. Opacus takes sigma and sets sigma_g from it.
        if sigma >= 2 * c.sigma_b:
            raise ConfigError(f"adaptive_clip_sigma {c.sigma_b:g} is too small for noise_multiplier {sigma:g}: "
                              f"the clipped count's noise alone spends more than σ allows (need σ < 2 σ_b = "
                              f"{2 * c.sigma_b:g}; the gradients' σ_g = (σ⁻² − (2σ_b)⁻²)^(−1/2) is undefined)")
        eff = (sigma ** -2 - (2 * c.sigma_b) ** -2) ** -0.5
        lines.append(f"adaptive clipping: the gradients' noise σ_g = (σ⁻² − (2σ_b)⁻²)^(−1/2) = ({sigma:g}⁻² − "
                     f"(2 × {c.sigma_b:g})⁻²)^(−1/2) = {eff:.6g}; with the clipped count's noise the step is "
                     f"one Gaussian at σ = {sigma:g}, which the rows use")
        pits.append(Pitfall("adaptive_clipping",
                            f"adaptive clipping: an accountant fed the gradients' noise σ_g = {eff:.4g} (as "
                            f"Opacus' optimizer reports it) under-states epsilon; the step costs σ = {sigma:g}"))
    sensitivity = 1.0
    if c.microbatches is not None and c.microbatches < c.batch:
        if c.batch % c.microbatches:
            raise ConfigError(f"microbatches ({c.microbatches}) must divide batch_size ({c.batch})")
        if c.neighbouring == "add_remove":
            sensitivity = 2.0
            lines.append(f"microbatches of {c.batch // c.microbatches} records under add/remove: one "
                         "record changes a whole microbatch's clipped gradient, sensitivity 2 C "
                         f"(tensorflow_privacy halves the noise multiplier: σ/2 = {sigma / 2:.6g})")
            pits.append(Pitfall("microbatching_add_remove",
                                "microbatching doubles the sensitivity under add/remove: accounting with "
                                f"σ = {sigma:g} as configured would understate epsilon; the rows use "
                                "sensitivity 2 (σ/2 per unit of C)"))
    if c.clip is not None:
        lines.append(f"clipping norm C = {c.clip:g}: noise std σ C = {sigma * c.clip:.6g}; rows in units of C")
    steps = _steps(c, logical, lines)
    delta = c.delta
    if delta is None:
        delta = min(1e-5, 0.1 / c.n)
        lines.append(f"delta not given: min(1e-5, 1/(10 N)) = {delta:g}")
    q = logical / c.n
    neighbouring = c.neighbouring
    if c.sampler == "fixed_size" and neighbouring == "add_remove":
        neighbouring = "replace_one"
        lines.append("fixed-size batches are defined under replace-one (the dataset size is public): "
                     "neighbouring replace_one")
        if "neighbouring" in cfg:  # type: ignore[operator]
            pits.append(Pitfall("fixed_size_add_remove",
                                "fixed-size batches have no add/remove guarantee (adding a record changes the "
                                "batch size): the rows are accounted under replace-one"))
    row, more = _row(c, sigma, sensitivity, logical, q, steps, lines)
    pits += more
    pits += _pitfalls(c, q, logical, delta)
    if row is None:
        return Translation(None, tuple(lines), tuple(pits))
    comp = Composition.from_dict({"neighbouring": neighbouring, "targets": {"delta": delta},
                                  "mechanisms": [row]})
    return Translation(comp, tuple(lines), tuple(pits))


def _steps(c: _Config, logical: int, lines: list[str]) -> int:
    if c.steps is not None:
        lines.append(f"noisy updates T = steps = {c.steps}")
        return c.steps
    assert c.epochs is not None
    exact = c.epochs * c.n / logical
    if not exact <= 10 ** 12:
        raise ConfigError(f"epochs {c.epochs:g} make {exact:.3g} noisy updates (epochs × N / B): more than "
                          "the 10^12 a row can count")
    t = math.ceil(exact - 1e-9)
    lines.append(f"noisy updates T = ceil(epochs × N / B) = ceil({c.epochs:g} × {c.n} / {logical}) = {t}")
    return t


def _row(c: _Config, sigma: float, sens: float, logical: int, q: float, steps: int,
         lines: list[str]) -> tuple[dict | None, list[Pitfall]]:
    label = f"{c.framework}: N={c.n}, B={logical}, σ={c.sigma:g}, {c.sampler} batches"
    base = {"sigma": sigma, "label": label}
    if sens != 1.0:
        base["sensitivity"] = sens
    if c.sampler == "poisson":
        lines.append(f"Poisson sampling rate q = B / N = {logical} / {c.n} = {q:.6g}")
        return {"kind": SubsampledGaussian.kind, **base, "sampling_rate": q, "count": steps}, []
    if c.sampler == "fixed_size":
        lines.append(f"fixed-size batches at rate q = B / N = {logical} / {c.n} = {q:.6g}")
        return {"kind": SubsampledGaussian.kind, **base, "sampling_rate": q, "sampling": "fixed_size",
                "count": steps}, []
    per_epoch = math.ceil(c.n / logical)
    epochs = math.ceil(steps / per_epoch - 1e-9)
    lines.append(f"batches per epoch = ceil(N / B) = ceil({c.n} / {logical}) = {per_epoch}; epochs = "
                 f"ceil(T / {per_epoch}) = {epochs}")
    if c.sampler == "shuffle":
        return {"kind": ShuffledGaussian.kind, **base, "batches_per_epoch": per_epoch, "count": epochs}, []
    if c.sampler == ALLOCATION:
        return {"kind": RandomAllocation.kind, **base, "steps_per_epoch": per_epoch, "selected": 1,
                "count": epochs}, []
    return None, [Pitfall("weighted_sampler",
                          "a weighted sampler draws with replacement: a record can appear several times in "
                          "one batch and no subsampling analysis applies, so no composition is given; "
                          "train with Poisson sampling (and weight the loss instead)", "error")]


def _pitfalls(c: _Config, q: float, logical: int, delta: float) -> list[Pitfall]:
    out = []
    assumed = c.accounted_as or ("poisson" if c.framework == "opacus" else None)
    if assumed == "poisson" and c.sampler in ("shuffle", "fixed_size", ALLOCATION):
        who = "your accountant" if c.accounted_as else "Opacus' accountant"
        out.append(Pitfall("accounted_as_poisson",
                           f"batches are run as {c.sampler.replace('_', '-')} but {who} assumes Poisson "
                           "sampling: its epsilon is not a guarantee for this training; the rows account "
                           "the batches as run"))
    if c.sampler_length is not None and c.sampler_length != c.n:
        wrong = logical / c.sampler_length
        out.append(Pitfall("sampler_length",
                           f"the sampler reports {c.sampler_length} records but dataset_size is {c.n}: a "
                           f"rate computed from it, {wrong:.4g}, is {max(wrong / q, q / wrong):.3g}× off "
                           f"the true q = {q:.4g} (rows use N)"))
    if c.reduction == "mean" and c.sampler == "poisson":
        out.append(Pitfall("realised_batch_normalisation",
                           "loss_reduction mean divides by the realised Poisson batch size, which depends "
                           "on whether a record is in the batch: the noisy sum's sensitivity analysis does "
                           "not hold; divide by the expected batch size (expected_batch) or sum"))
    if delta >= 1.0 / c.n:
        out.append(Pitfall("delta_vs_n",
                           f"delta {delta:g} is not below 1/N = {1.0 / c.n:g}: a mechanism that publishes "
                           "one random record outright meets it; take delta well below 1/N"))
    if c.checkpoints and c.claim == "final_model":
        out.append(Pitfall("checkpoints_released",
                           "checkpoints are released but the claim is stated for the final model only (a "
                           "last-iterate analysis): the released checkpoints are covered only by the "
                           "all-iterates accounting of these rows; publish that epsilon"))
    return out
