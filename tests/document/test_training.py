"""Training configurations to rows (document/training.py): conversions, pitfalls, refusals."""
import math
import re

import pytest

import references as ref
from prvgui import api
from prvgui.document.training import ConfigError, translate

JAX = {"framework": "jax_privacy", "dataset_size": 1000, "batch_size": 10, "accumulation_steps": 8,
       "steps": 100, "noise_multiplier": 1.0, "delta": 1e-5}


def codes(t):
    return [p.code for p in t.pitfalls]


def test_jax_privacy_accumulation_example():
    """jax_privacy's sharp-edges example: q = 10 x 8 / 1000 = 0.08, not 0.01: epsilon about 5.6,
    not about 0.72."""
    t = translate(JAX)
    (row,) = t.composition.rows
    assert row.kind == "subsampled_gaussian" and row.params["sampling_rate"] == pytest.approx(0.08)
    assert row.count == 100 and any("10 × 8 = 80" in line for line in t.conversions)
    a = api.epsilon(t.composition)
    assert 5.5 <= a.lower <= a.certified_upper.value <= 5.7
    wrong = api.epsilon(translate({**JAX, "accumulation_steps": 1}).composition)
    assert 0.68 <= wrong.certified_upper.value <= 0.76


def test_tensorflow_privacy_statement_once_per_epoch():
    """tensorflow_privacy's statement: microbatching halves the noise multiplier under add/remove,
    and 'each example once per epoch' composes ceil(epochs) Gaussians at sigma / 2."""
    cfg = {"framework": "tensorflow_privacy", "dataset_size": 60000, "batch_size": 256, "epochs": 15,
           "noise_multiplier": 1.1, "microbatches": 32, "delta": 1e-5}
    t = translate(cfg)
    (row,) = t.composition.rows
    assert row.kind == "shuffled_gaussian" and row.count == 15 and row.params["sensitivity"] == 2.0
    assert "microbatching_add_remove" in codes(t)
    a = api.epsilon(t.composition)
    exact = ref.gaussian_epsilon(2 * math.sqrt(15) / 1.1, 1e-5)
    assert a.certified_upper.value == pytest.approx(exact, rel=0.01)
    assert a.poisson is not None and a.poisson.upper < a.certified_upper.value
    one = translate({**cfg, "microbatches": 256})  # microbatches of one record: no doubling
    assert "sensitivity" not in one.composition.rows[0].params


@pytest.mark.parametrize("sampler, kind", [("shuffle", "shuffled_gaussian"), ("fixed_size", "subsampled_gaussian"),
                                           ("random_allocation", "random_allocation")])
def test_batches_are_accounted_as_run(sampler, kind):
    t = translate({"framework": "opacus", "dataset_size": 50000, "batch_size": 500, "epochs": 3,
                   "noise_multiplier": 1.0, "sampler": sampler})
    (row,) = t.composition.rows
    assert row.kind == kind
    assert row.params.get("sampling", "poisson") != "poisson" or kind != "subsampled_gaussian"
    if sampler == "fixed_size":
        assert t.composition.neighbouring == "replace_one"
    assert "accounted_as_poisson" in codes(t)  # Opacus' accountant assumes Poisson


def test_sampler_length_not_n():
    t = translate({"framework": "opacus", "dataset_size": 50000, "batch_size": 500, "epochs": 1,
                   "noise_multiplier": 1.0, "sampler_length": 500})
    (p,) = [p for p in t.pitfalls if p.code == "sampler_length"]
    assert "100× off" in p.message
    assert t.composition.rows[0].params["sampling_rate"] == pytest.approx(0.01)


def test_normalisation_by_the_realised_batch():
    t = translate({**JAX, "loss_reduction": "mean"})
    assert "realised_batch_normalisation" in codes(t)
    assert "realised_batch_normalisation" not in codes(translate({**JAX, "loss_reduction": "sum"}))


def test_delta_against_one_over_n():
    assert "delta_vs_n" in codes(translate({**JAX, "delta": 1e-3}))
    t = translate({k: v for k, v in JAX.items() if k != "delta"})
    assert t.composition.targets.delta == pytest.approx(1e-5) and "delta_vs_n" not in codes(t)
    big = translate({**{k: v for k, v in JAX.items() if k != "delta"}, "dataset_size": 10 ** 7})
    assert big.composition.targets.delta == pytest.approx(1e-8)


def test_checkpoints_with_a_final_model_claim():
    assert "checkpoints_released" in codes(translate({**JAX, "checkpoints_released": True, "claim": "final_model"}))
    assert "checkpoints_released" not in codes(translate({**JAX, "checkpoints_released": True}))


def test_adaptive_clipping():
    """Andrew et al.: sigma^-2 = sigma_g^-2 + (2 sigma_b)^-2; the step is one Gaussian at sigma."""
    t = translate({**JAX, "noise_multiplier": 2.0, "adaptive_clip_sigma": 5.0})
    assert t.composition.rows[0].params["sigma"] == 2.0
    g = (2.0 ** -2 - 10.0 ** -2) ** -0.5
    assert any(f"{g:.6g}" in line for line in t.conversions) and "adaptive_clipping" in codes(t)
    with pytest.raises(ConfigError, match="adaptive_clip_sigma 0.2 is too small"):
        translate({**JAX, "noise_multiplier": 0.4, "adaptive_clip_sigma": 0.2})


def test_weighted_sampler_has_no_composition():
    t = translate({**JAX, "sampler": "weighted"})
    assert t.composition is None and t.pitfalls[0].severity == "error"


@pytest.mark.parametrize("cfg, words", [
    ({**JAX, "noise_multipler": 1.0}, "noise_multipler: not a field"),
    ({k: v for k, v in JAX.items() if k != "framework"}, "framework is missing"),
    ({**JAX, "framework": "pytorch"}, "framework must be one of"),
    ({**JAX, "noise_multiplier": float("nan")}, "noise_multiplier must be a number"),
    ({**JAX, "noise_multiplier": -1}, "noise_multiplier must be a number above 0"),
    ({**JAX, "batch_size": 2.5}, "batch_size must be a whole number"),
    ({**JAX, "batch_size": True}, "batch_size must be a whole number"),
    ({**JAX, "epochs": 2}, "exactly one of epochs and steps"),
    ({**JAX, "batch_size": 1000}, "exceeds dataset_size"),
    ({**JAX, "sampler": "random"}, "sampler must be one of"),
    ({**JAX, "microbatches": 3}, "must divide batch_size"),
    ({**JAX, "checkpoints_released": "yes"}, "checkpoints_released must be true or false"),
    ({**JAX, "framework": "plain"}, "sampler is missing"),
    ([1, 2], "must be a JSON object"),
    # found by mutation fuzzing: null is missing (never a noise of 0), huge numbers are refused
    ({**JAX, "framework": None}, "framework is missing (one of"),
    ({**JAX, "batch_size": None}, "batch_size is missing (got null)"),
    ({**JAX, "noise_multiplier": None}, "noise_multiplier is missing (got null)"),
    ({**JAX, "steps": None}, "exactly one of epochs and steps; got epochs null and steps null"),
    ({**JAX, "noise_multiplier": -10 ** 400}, "got -1" + "0" * 22 + "... (an integer of 401 digits)"),
    ({**{k: v for k, v in JAX.items() if k != "steps"}, "epochs": 1e308}, "epochs 1e+308 make inf noisy updates"),
    ({**{k: v for k, v in JAX.items() if k != "steps"}, "epochs": 1e11}, "more than the 10^12 a row can count"),
])
def test_hostile_configurations_name_the_field(cfg, words):
    with pytest.raises(ConfigError, match=re.escape(words)):
        translate(cfg)
