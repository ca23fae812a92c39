"""The structured privacy statement (report/statement.py): fields and flags."""
from prvgui.api import _composition
from prvgui.engine.view_model import compute
from prvgui.report.model import request_for
from prvgui.report.statement import statement


def _statement(comp_dict):
    comp = _composition(comp_dict)
    return statement(compute(request_for(comp)), comp)


def comp(mechs, delta=1e-6, **extra):
    return {"format": "prvgui.composition", "version": 3, "targets": {"delta": delta}, "mechanisms": mechs,
            **extra}


def test_delta_against_one_over_n_is_flagged():
    tp = {"kind": "truncated_poisson", "dataset_size": 1000, "sampling_rate": 0.01, "max_batch": 2000,
          "sigma": 1.0, "count": 10}
    s = _statement(comp([tp], delta=1e-3))
    fields = dict(s.fields)
    assert "n = 1,000" in fields["δ against 1/n"]
    assert any("not below 1/n" in f for f in s.flags)
    ok = _statement(comp([tp], delta=1e-6))
    assert not any("1/n" in f for f in ok.flags)


def test_tiers_and_weak_guarantee_flag():
    weak = _statement(comp([{"kind": "laplace", "scale": 0.05, "count": 1}]))
    assert "Tier 3" in dict(weak.fields)["Guarantee"] and any("tier 3" in f for f in weak.flags)
    strong = _statement(comp([{"kind": "gaussian", "sigma": 10.0, "count": 1}]))
    assert "Tier 1" in dict(strong.fields)["Guarantee"]
    assert "μ = 0.1" in dict(strong.fields)["Beside ε"] and "ρ = 0.005" in dict(strong.fields)["Beside ε"]


def test_shuffled_batches_say_what_poisson_would_claim():
    s = _statement(comp([{"kind": "shuffled_gaussian", "sigma": 0.8, "batches_per_epoch": 1000, "count": 1}]))
    fields = dict(s.fields)
    assert fields["Sampling as run"] == "shuffled batches"
    assert "Poisson accounting would claim" in fields["Sampling as accounted"]
    assert any("under-state" in f for f in s.flags)
    assert "proven" in fields["Where the truth lies"]


def test_replace_one_and_groups():
    s = _statement(comp([{"kind": "gaussian", "sigma": 3.0, "count": 1}], neighbouring="replace_one",
                        group_size=3))
    fields = dict(s.fields)
    assert "replace one record" in fields["Neighbouring relation"] and "any 3 records" in fields["Unit of privacy"]


def test_tuning_accounted_sets_the_guarantee():
    """With tuning stated, the released model is the best of the runs: the guarantee is the tuned
    epsilon, and one run's is shown beside it."""
    import json
    import os
    path = os.path.join(os.path.dirname(os.path.dirname(__file__)), "fixtures", "v4_tuning.json")
    with open(path) as f:
        s = _statement(json.load(f))
    fields = dict(s.fields)
    assert "accounted: Hyperparameter tuning" in fields["Hyperparameter tuning"]
    one = float(fields["One training run"].split("(ε, δ) = (")[1].split(",")[0])
    tuned = float(fields["Guarantee"].split("(ε, δ) = (")[1].split(",")[0])
    assert tuned > one and not any("tuning is not accounted" in f for f in s.flags)


def test_a_noiseless_full_batch_step_claims_no_finite_rho():
    """(the input-space sweep's find: sigma 0 at rate 1 read mu as 1 / noise, the noise ratio
    being inf for "no noise", and the statement said rho = 0 of a release with no noise at all)"""
    s = _statement(comp([{"kind": "subsampled_gaussian", "sigma": 0.0, "sampling_rate": 1.0, "count": 3}]))
    beside = dict(s.fields)["Beside ε"]
    assert "no finite ρ" in beside and "ρ = 0" not in beside


def test_a_step_without_sensitivity_gets_a_statement():
    """(the sweep's other find: a truncated Poisson step at sensitivity 0, beside another row,
    divided by zero on the way to its rho)"""
    tp = {"kind": "truncated_poisson", "dataset_size": 464, "sampling_rate": 1.0, "max_batch": 464,
          "sigma": 1.0, "sensitivity": 0.0, "count": 5}
    g = {"kind": "gaussian", "sigma": 2.0, "count": 1}
    fields = dict(_statement(comp([tp, g])).fields)
    assert "ρ = 0.125" in fields["Beside ε"]  # (the Gaussian's mu^2 / 2; the other row adds 0)
