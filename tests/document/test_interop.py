"""Importing other accountants' descriptions (document/interop.py): every DpEvent class maps to the
rows expected, an import gives exactly the bracket of the same rows typed in, real dp_accounting
events agree with dp_accounting's PLD, refusals name the class, hostile inputs name the path; Opacus
histories and jax_privacy's DpParams reproduce the events their accountants compose."""
import json
import math

import pytest

import prvgui
from prvgui.document import interop
from prvgui.document.composition import Composition


def ev(cls, **fields):
    return {"class_name": cls, **fields}


def G(s):
    return ev("GaussianDpEvent", noise_multiplier=s)


def L(b):
    return ev("LaplaceDpEvent", noise_multiplier=b)


def self_composed(e, n):
    return ev("SelfComposedDpEvent", event=e, count=n)


def composed(*events):
    return ev("ComposedDpEvent", events=list(events))


def rows(comp):
    return [(r.kind, dict(r.params), r.count) for r in comp.rows]


# (event, rows expected as (kind, params, count), neighbouring)
MAPPING = [
    (G(1.5), [("gaussian", {"sigma": 1.5}, 1)], "add_remove"),
    (L(2.0), [("laplace", {"scale": 2.0}, 1)], "add_remove"),
    (ev("PoissonSampledDpEvent", sampling_probability=0.01, event=G(1.1)),
     [("subsampled_gaussian", {"sigma": 1.1, "sampling_rate": 0.01}, 1)], "add_remove"),
    (ev("PoissonSampledDpEvent", sampling_probability=0.01, event=L(3.0)),
     [("subsampled_laplace", {"scale": 3.0, "sampling_rate": 0.01}, 1)], "add_remove"),
    (ev("PoissonSampledDpEvent", sampling_probability=1.0, event=G(2.0)), [("gaussian", {"sigma": 2.0}, 1)],
     "add_remove"),
    # Gaussians on the same batch are one Gaussian: (1/9 + 1/16)^-1/2 = 2.4
    (ev("PoissonSampledDpEvent", sampling_probability=0.1, event=composed(G(3.0), G(4.0))),
     [("subsampled_gaussian", {"sigma": 2.4, "sampling_rate": 0.1}, 1)], "add_remove"),
    (ev("SampledWithoutReplacementDpEvent", source_dataset_size=1000, sample_size=10, event=G(1.0)),
     [("subsampled_gaussian", {"sigma": 1.0, "sampling_rate": 0.01, "sampling": "fixed_size"}, 1)], "replace_one"),
    (self_composed(self_composed(G(2.0), 3), 4), [("gaussian", {"sigma": 2.0}, 12)], "add_remove"),
    (composed(G(2.0), ev("NoOpDpEvent"), L(1.0)), [("gaussian", {"sigma": 2.0}, 1), ("laplace", {"scale": 1.0}, 1)],
     "add_remove"),
    (composed(G(2.0), G(2.0)), [("gaussian", {"sigma": 2.0}, 2)], "add_remove"),  # equal rows merged
    (ev("RandomizedResponseDpEvent", noise_parameter=0.5, num_buckets=2),
     [("randomized_response", {"epsilon": math.log(3.0)}, 1)], "replace_one"),
    (ev("RandomizedResponseDpEvent", noise_parameter=0.5, num_buckets=4),
     [("pmf_pair", {"p": (0.625, 0.125, 0.25), "q": (0.125, 0.625, 0.25), "symmetric": "yes"}, 1)], "replace_one"),
    (composed(ev("RandomizedResponseDpEvent", noise_parameter=0.3, num_buckets=1), G(1.0)),
     [("gaussian", {"sigma": 1.0}, 1)], "add_remove"),
    (ev("EpsilonDeltaDpEvent", epsilon=1.0, delta=0.0), [("pure_dp", {"epsilon": 1.0}, 1)], "add_remove"),
    (ev("EpsilonDeltaDpEvent", epsilon=1.0, delta=1e-6), [("approx_dp", {"epsilon": 1.0, "delta": 1e-6}, 1)],
     "add_remove"),
    (ev("ZCDpEvent", rho=0.5), [("zcdp", {"rho": 0.5}, 1)], "add_remove"),
    (ev("ZCDpEvent", rho=0.5, xi=0.1), [("zcdp", {"rho": 0.5, "xi": 0.1}, 1)], "add_remove"),
    (ev("DiscreteGaussianDpEvent", sigma=3.0, sensitivity=2.0, dimension=1),
     [("discrete_gaussian", {"sigma": 3.0, "sensitivity": 2}, 1)], "add_remove"),
    (ev("DiscreteLaplaceDpEvent", noise_parameter=0.25, sensitivity=2),
     [("discrete_laplace", {"scale": 4.0, "sensitivity": 2}, 1)], "add_remove"),
    (ev("TruncatedSubsampledGaussianDpEvent", dataset_size=1000, sampling_probability=0.01, truncated_batch_size=20,
        noise_multiplier=1.0),
     [("truncated_poisson", {"dataset_size": 1000, "sampling_rate": 0.01, "max_batch": 20, "sigma": 1.0}, 1)],
     "add_remove"),
    (ev("ExponentialMechanismDpEvent", epsilon=0.5), [("exponential_mechanism", {"epsilon": 0.5}, 1)], "add_remove"),
    (ev("PermuteAndFlipDpEvent", epsilon=0.5), [("pure_dp", {"epsilon": 0.5}, 1)], "add_remove"),
]


@pytest.mark.parametrize("event, expected, neighbouring", MAPPING,
                         ids=[f"{i}-{m[0]['class_name']}" for i, m in enumerate(MAPPING)])
def test_each_event_maps_to_the_rows_expected(event, expected, neighbouring):
    comp = interop.from_dpevent(event)
    got = rows(comp)
    assert [(k, c) for k, _, c in got] == [(k, c) for k, _, c in expected]
    for (_, params, _), (_, want, _) in zip(got, expected):
        assert params.keys() == want.keys()
        for name, value in want.items():
            assert params[name] == pytest.approx(value, rel=1e-15) if isinstance(value, float) else \
                params[name] == value
    assert comp.neighbouring == neighbouring
    assert all(r.label.startswith("dp_accounting: ") for r in comp.rows)


def test_labels_say_where_a_row_came_from():
    comp = interop.from_dpevent(self_composed(ev("PoissonSampledDpEvent", sampling_probability=0.01,
                                                 event=G(1.1)), 1000))
    assert comp.rows[0].label == "dp_accounting: PoissonSampled(Gaussian σ=1.1, q=0.01) × 1,000"


def test_repeat_and_select_is_the_compositions_tuning():
    comp = interop.from_dpevent(ev("RepeatAndSelectDpEvent", event=G(2.0), mean=10, shape=1))
    assert (comp.tuning.runs, comp.tuning.mean, comp.tuning.eta) == ("truncated_negative_binomial", 10.0, 1.0)
    poisson = interop.convert(json.loads('{"class_name": "RepeatAndSelectDpEvent", "event": {"class_name": '
                                         '"GaussianDpEvent", "noise_multiplier": 2}, "mean": 5, "shape": Infinity}'),
                              "dpevent")
    assert poisson.composition.tuning.runs == "poisson"
    with pytest.raises(ValueError, match=r"events\[0\]: a RepeatAndSelectDpEvent is imported only as the whole"):
        interop.from_dpevent(composed(ev("RepeatAndSelectDpEvent", event=G(2.0), mean=10, shape=1)))


def test_the_delta_and_the_relation_can_be_given():
    comp = interop.from_dpevent(G(3.0), neighbouring="replace_one", delta=1e-7)
    assert comp.neighbouring == "replace_one" and comp.targets.delta == 1e-7
    fixed = ev("SampledWithoutReplacementDpEvent", source_dataset_size=100, sample_size=10, event=G(1.0))
    with pytest.raises(ValueError, match="needs replace one neighbouring"):
        interop.from_dpevent(fixed, neighbouring="add_remove")


def test_an_import_gives_the_bracket_of_the_same_rows_typed_in():
    event = composed(self_composed(ev("PoissonSampledDpEvent", sampling_probability=0.02, event=G(1.1)), 200),
                     self_composed(L(20.0), 3), ev("ZCDpEvent", rho=0.01))
    typed = Composition.from_dict({"mechanisms": [
        {"kind": "subsampled_gaussian", "sigma": 1.1, "sampling_rate": 0.02, "count": 200},
        {"kind": "laplace", "scale": 20.0, "count": 3}, {"kind": "zcdp", "rho": 0.01}]})
    a, b = prvgui.epsilon(interop.from_dpevent(event), 1e-5), prvgui.epsilon(typed, 1e-5)
    assert a.bracket == b.bracket
    assert a.certified_upper == b.certified_upper


def test_relations_that_clash_are_refused_naming_both_events():
    event = composed(ev("TruncatedSubsampledGaussianDpEvent", dataset_size=1000, sampling_probability=0.01,
                        truncated_batch_size=20, noise_multiplier=1.0),
                     ev("RandomizedResponseDpEvent", noise_parameter=0.5, num_buckets=2))
    with pytest.raises(ValueError, match=r"events\[0\] .*add/remove only, but events\[1\] .*replace-one"):
        interop.from_dpevent(event)


@pytest.mark.parametrize("cls", ["NonPrivateDpEvent", "UnsupportedDpEvent", "SampledWithReplacementDpEvent",
                                 "SingleEpochTreeAggregationDpEvent", "MixtureOfGaussiansDpEvent"])
def test_events_without_an_exact_counterpart_are_refused_naming_the_class(cls):
    with pytest.raises(ValueError, match=rf"events\[1\]: {cls} "):
        interop.from_dpevent(composed(G(1.0), ev(cls)))


def test_unknown_classes_are_refused_with_the_list_of_those_imported():
    with pytest.raises(ValueError, match=r"events\[0\]\.class_name: \"FancyDpEvent\" is not a DpEvent prvgui "
                                         r"can import \(it imports ComposedDpEvent, .*ZCDpEvent\)"):
        interop.from_dpevent(composed(ev("FancyDpEvent")))


@pytest.mark.parametrize("event, message", [
    (composed(G(1.0), G(1.0), G(-1)), r"events\[2\]\.noise_multiplier must be a number >= 0; got -1"),
    (G(float("nan")), r"noise_multiplier must be a number >= 0; got nan"),
    (G(True), r"noise_multiplier must be a number >= 0; got true"),
    (G("1.0"), r"noise_multiplier must be a number >= 0; got \"1.0\""),
    (G(10 ** 400), r"noise_multiplier must be a number >= 0; got 1000"),
    (G(0.0), r"noise_multiplier is 0: no noise, so the mechanism is not private"),
    (self_composed(G(1.0), -3), r"count must be a whole number from 0 to .*; got -3"),
    (self_composed(G(1.0), 2.5), r"count must be a whole number"),
    (self_composed(self_composed(G(1.0), 10 ** 5), 10 ** 5), r"event\.event: 10,000,000,000 runs in all"),
    (ev("GaussianDpEvent"), r"noise_multiplier is missing \(GaussianDpEvent has noise_multiplier\)"),
    (ev("GaussianDpEvent", noise_multiplier=1, sigma=2), r"sigma: not a field of GaussianDpEvent"),
    ({"noise_multiplier": 1}, r"class_name is missing"),
    ([1, 2], r"the event must be a DpEvent \(an object with a class_name\); got \[1, 2\]"),
    (composed(G(1.0), "x"), r"events\[1\] must be a DpEvent"),
    (ev("ComposedDpEvent", events={"a": 1}), r"events must be a list of events"),
    (ev("PoissonSampledDpEvent", sampling_probability=1.5, event=G(1.0)),
     r"sampling_probability must be a number >= 0 and <= 1; got 1.5"),
    (ev("PoissonSampledDpEvent", sampling_probability=0.1, event=composed(L(1.0), L(2.0))),
     r"event\.events\[0\]: Laplace mechanisms composed on the same batch are not one Laplace"),
    (ev("PoissonSampledDpEvent", sampling_probability=0.1, event=ev("ZCDpEvent", rho=1.0)),
     r"event: ZCDpEvent inside PoissonSampledDpEvent cannot be imported"),
    (ev("SampledWithoutReplacementDpEvent", source_dataset_size=10, sample_size=11, event=G(1.0)),
     r"sample_size must be a whole number from 0 to 10; got 11"),
    (ev("DiscreteGaussianDpEvent", sigma=1.0), r"dimension: prvgui's discrete Gaussian is one-dimensional"),
    (ev("RandomizedResponseDpEvent", noise_parameter=0.0, num_buckets=3), r"noise_parameter is 0: no noise"),
    (ev("ZCDpEvent", rho=0.0, xi=0.5), r"rho: prvgui's zCDP kind needs rho > 0"),
    (ev("NoOpDpEvent"), r"the event has no private part to account"),
    (ev("GaussianDpEvent", noise_multiplier=1, module_name=3), r"module_name must be text"),
    (["dp_accounting.dp_event", "GaussianDpEvent"], r"a GaussianDpEvent as a list holds module_name, class_name, "
                                                    r"noise_multiplier; this one has 2 entries"),
])
def test_hostile_inputs_name_the_path(event, message):
    with pytest.raises(ValueError, match=message):
        interop.from_dpevent(event)


def test_huge_nesting_and_too_many_events_are_refused():
    deep = G(1.0)
    for _ in range(150):
        deep = self_composed(deep, 1)
    with pytest.raises(ValueError, match="nested more than 100 deep"):
        interop.from_dpevent(deep)
    with pytest.raises(ValueError, match="more than 100,000 events"):
        interop.from_dpevent(composed(*[G(1.0)] * 100_001))
    text = '{"class_name": "ComposedDpEvent", "events": ' + "[" * 100_000 + "]" * 100_000 + "}"
    with pytest.raises(ValueError, match="nested too deeply"):
        interop.parse_json(text)


def test_bad_json_names_the_line_and_column(tmp_path):
    path = tmp_path / "event.json"
    path.write_text('{"class_name": "GaussianDpEvent",\n "noise_multiplier": 1,,}', encoding="utf-8")
    with pytest.raises(ValueError, match="not valid JSON: .* at line 2, column 24"):
        interop.import_file(path, "dpevent")
    path.write_text('{"class_name": "GaussianDpEvent", "noise_multiplier": NaN}', encoding="utf-8")
    with pytest.raises(ValueError, match="NaN is not allowed"):
        interop.import_file(path, "dpevent")
    path.write_text('{"class_name": "GaussianDpEvent", "noise_multiplier": 1, "noise_multiplier": 2}')
    with pytest.raises(ValueError, match="duplicate key 'noise_multiplier'"):
        interop.import_file(path, "dpevent")
    with pytest.raises(ValueError, match="the source must be one of dpevent, opacus, jax_privacy"):
        interop.import_file(path, "tensorflow")
    with pytest.raises(ValueError, match="cannot read"):
        interop.import_file(tmp_path / "missing.json", "dpevent")


# ------------------------------------------------------------ real DpEvents
def _as_json(event):
    def conv(x):
        if hasattr(x, "_asdict"):
            return {k: conv(v) for k, v in x._asdict().items()}
        if isinstance(x, (list, tuple)):
            return [conv(v) for v in x]
        return x
    return json.loads(json.dumps(conv(event.to_named_tuple())))


def test_real_dpevents_agree_with_dp_accountings_pld():
    dpa = pytest.importorskip("dp_accounting")
    E = dpa.dp_event
    event = E.ComposedDpEvent([E.SelfComposedDpEvent(E.PoissonSampledDpEvent(0.02, E.GaussianDpEvent(1.1)), 300),
                               E.SelfComposedDpEvent(E.GaussianDpEvent(10.0), 5),
                               E.SelfComposedDpEvent(E.LaplaceDpEvent(20.0), 3), E.NoOpDpEvent()])
    comp = interop.from_dpevent(_as_json(event))
    # the other forms: the list json.dumps makes of the named tuple, and the named tuple itself
    assert interop.from_dpevent(json.loads(json.dumps(event.to_named_tuple()))).rows == comp.rows
    assert interop.from_dpevent(event.to_named_tuple()).rows == comp.rows
    pld = dpa.pld.PLDAccountant()
    pld.compose(event)
    theirs = pld.get_epsilon(1e-5)
    ours = prvgui.epsilon(comp, 1e-5)
    # the PLD accountant is pessimistic by its discretisation: the values agree within a few percent
    assert ours.lower * 0.97 <= theirs <= ours.upper * 1.03


def test_k_ary_randomized_response_is_dp_accountings_pair():
    dpa = pytest.importorskip("dp_accounting")
    E = dpa.dp_event
    # (20 events, not one self-composed 20 times: dp_accounting's PLD accountant leaves out the count of a
    # self-composed RandomizedResponseDpEvent, 0.6.0 and later)
    event = E.ComposedDpEvent([E.RandomizedResponseDpEvent(0.9, 5)] * 20)
    comp = interop.from_dpevent(_as_json(event))
    pld = dpa.pld.PLDAccountant(neighboring_relation=dpa.NeighboringRelation.REPLACE_ONE)
    pld.compose(event)
    ours = prvgui.epsilon(comp, 1e-6)
    assert ours.lower * 0.97 <= pld.get_epsilon(1e-6) <= ours.upper * 1.03


# ------------------------------------------------------------ Opacus
def test_opacus_histories_in_each_form():
    want = [("subsampled_gaussian", {"sigma": 1.0, "sampling_rate": 0.01}, 100), ("gaussian", {"sigma": 2.0}, 3)]
    assert rows(interop.from_opacus([[1.0, 0.01, 100], [2.0, 1.0, 3], [5.0, 0.0, 10]])) == want
    objects = [{"noise_multiplier": 1.0, "sample_rate": 0.01, "steps": 100},
               {"noise_multiplier": 2.0, "sample_rate": 1, "steps": 3}]
    assert rows(interop.from_opacus(objects)) == want
    state = interop.from_opacus({"history": objects, "mechanism": "prv", "delta": 1e-6})
    assert rows(state) == want and state.targets.delta == 1e-6 and state.neighbouring == "add_remove"
    assert state.rows[0].label == "opacus: σ=1, q=0.01 × 100"


@pytest.mark.parametrize("data, message", [
    ([[1.0, 0.01]], r"history\[0\] must be \[noise_multiplier, sample_rate, steps\]"),
    ([[1.0, 0.01, -1]], r"history\[0\]\.steps must be a whole number"),
    ([[1.0, 2.0, 5]], r"history\[0\]\.sample_rate must be a number >= 0 and <= 1; got 2.0"),
    ([{"noise_multiplier": 1.0, "sample_rate": 0.1}], r"history\[0\]\.steps is missing"),
    ([{"noise_multiplier": 1.0, "sample_rate": 0.1, "steps": 1, "lr": 3}], r"history\[0\]\.lr: not a field"),
    ([[0.0, 0.1, 5]], r"history\[0\]\.noise_multiplier is 0: no noise"),
    ({"steps": []}, r"steps: not a field of an Opacus accountant's state"),
    ([], r"the history has no steps to account"),
])
def test_bad_opacus_histories_name_the_entry(data, message):
    with pytest.raises(ValueError, match=message):
        interop.from_opacus(data)


# ------------------------------------------------------------ jax_privacy
BASE = {"noise_multipliers": 1.0, "batch_size": 80, "num_samples": 1000, "num_updates": 100, "delta": 1e-5}


def test_jax_privacy_accumulation_example():
    # batch 80 (10 x 8 gradient accumulation) of 1000, noise 1.0, 100 updates: q = 0.08
    comp = interop.from_jax_privacy(BASE)
    assert rows(comp) == [("subsampled_gaussian", {"sigma": 1.0, "sampling_rate": 0.08}, 100)]
    assert comp.targets.delta == 1e-5
    # dp_accounting's PLD gives 5.6 for these events; prvgui certifies 5.62 (bracket [5.60, 5.62])
    assert prvgui.epsilon(comp).certified_upper.value == pytest.approx(5.6, abs=0.1)


def test_jax_privacy_schedules_are_interleaved_into_segments():
    params = {**BASE, "noise_multipliers": [[0, 1.0], [50, 2.0]], "batch_size": 16,
              "batch_size_scale_schedule": {"30": 2, "60": 3}}
    # batch sizes: 16, then 16 x 2 from step 30, then 16 x 2 x 3 from step 60 (optax's cumulative scales)
    assert rows(interop.from_jax_privacy(params)) == [
        ("subsampled_gaussian", {"sigma": 1.0, "sampling_rate": 0.016}, 30),
        ("subsampled_gaussian", {"sigma": 1.0, "sampling_rate": 0.032}, 20),
        ("subsampled_gaussian", {"sigma": 2.0, "sampling_rate": 0.032}, 10),
        ("subsampled_gaussian", {"sigma": 2.0, "sampling_rate": 0.096}, 40)]


def test_jax_privacy_cycles_truncation_fixed_batches_and_users():
    cyc = interop.from_jax_privacy({**BASE, "cycle_length": 4})  # q = 80 / (1000 // 4), ceil(100 / 4) steps
    assert rows(cyc) == [("subsampled_gaussian", {"sigma": 1.0, "sampling_rate": 0.32}, 25)]
    trunc = interop.from_jax_privacy({**BASE, "truncated_batch_size": 100})
    assert rows(trunc) == [("truncated_poisson", {"dataset_size": 1000, "sampling_rate": 0.08, "max_batch": 100,
                                                  "sigma": 1.0}, 100)]
    fixed = interop.convert({**BASE, "sampling_method": "FIXED_BATCH_SIZE"}, "jax_privacy")
    assert rows(fixed.composition) == [("subsampled_gaussian", {"sigma": 1.0, "sampling_rate": 0.08,
                                                                "sampling": "fixed_size"}, 100)]
    assert fixed.composition.neighbouring == "replace_one"
    assert any("twice the sensitivity" in n for n in fixed.notes)
    users = interop.from_jax_privacy({**BASE, "examples_per_user": 3})
    assert users.group_size == 3 and rows(users) == rows(interop.from_jax_privacy(BASE))


@pytest.mark.parametrize("change, message", [
    ({"learning_rate": 0.1}, r"learning_rate: not a field of jax_privacy's DpParams"),
    ({"num_updates": None}, r"num_updates is missing"),
    ({"num_updates": 0.5}, r"num_updates must be a whole number from 1"),
    ({"is_finite_guarantee": False}, r"is_finite_guarantee is false"),
    ({"noise_multipliers": [[10, 1.0]]}, r"noise_multipliers must start at step 0"),
    ({"noise_multipliers": [[0, 1.0], [0, 2.0]]}, r"noise_multipliers gives two values for one step"),
    ({"noise_multipliers": [[0, 0.0]]}, r"noise_multipliers\[0\]\[1\] is 0: no noise"),
    ({"sampling_method": "SHUFFLE"}, r"sampling_method must be POISSON or FIXED_BATCH_SIZE"),
    ({"batch_size": 2000}, r"the batch size 2000 exceeds num_samples // cycle_length = 1000"),
    ({"batch_size_scale_schedule": {"x": 2}}, r"batch_size_scale_schedule\['x'\]: the key must be a step"),
    ({"examples_per_user": 2, "sampling_method": "FIXED_BATCH_SIZE"}, r"one record per person only"),
    ({"truncated_batch_size": 10, "sampling_method": "FIXED_BATCH_SIZE"}, r"truncated_batch_size needs"),
    ({"batch_sizes": 64}, r"batch_sizes \(read-only in DpParams\) does not match"),
])
def test_bad_jax_privacy_parameters_are_named(change, message):
    params = {**BASE, **change}
    params = {k: v for k, v in params.items() if v is not None}
    with pytest.raises(ValueError, match=message):
        interop.from_jax_privacy(params)
    assert interop.from_jax_privacy({**BASE, "batch_sizes": 80}).rows == interop.from_jax_privacy(BASE).rows
