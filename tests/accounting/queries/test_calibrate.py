"""Calibration never overshoots, is tight to 1% (+1 for counts), and agrees with dp-accounting."""
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prvgui.accounting import Accountant, Gaussian, Laplace, PureDP, Row, SubsampledGaussian
from prvgui.accounting.queries.calibrate import Infeasible, calibrate
from prvgui.cli import main

import references as ref


def upper(rows, delta=1e-5):
    return Accountant(rows).epsilon(delta).upper


@settings(max_examples=8, deadline=None)
@given(st.floats(0.001, 0.1), st.integers(10, 3000), st.floats(0.5, 8.0))
def test_sigma_never_overshoots_and_is_tight(q, k, target):
    c = calibrate([Row(SubsampledGaussian(1.0, q), k)], 0, "sigma", target, 1e-5)
    assert c.epsilon.upper <= target
    assert upper([Row(SubsampledGaussian(c.value, q), k)]) <= target
    if not c.at_bound:
        assert upper([Row(SubsampledGaussian(c.value * 0.99, q), k)]) > target


@pytest.mark.parametrize("k,target", [(1, 1.0), (10, 2.0), (1000, 0.5)])
def test_gaussian_sigma_against_closed_form(k, target):
    c = calibrate([Row(Gaussian(1.0), k)], 0, "sigma", target, 1e-6)
    exact = ref.gaussian_epsilon(math.sqrt(k) / c.value, 1e-6)
    assert exact <= target  # the certified answer is truly private enough
    # ...and not wasteful: the exact epsilon is within two eps_errors of the target
    assert exact >= target - 0.021


@pytest.mark.parametrize("q,k,target", [(0.01, 1000, 2.0), (0.004, 10000, 3.0), (0.05, 500, 8.0)])
def test_agrees_with_dp_accounting(q, k, target):
    from dp_accounting import dp_event, mechanism_calibration
    from dp_accounting.pld import pld_privacy_accountant

    def event(s):
        return dp_event.SelfComposedDpEvent(dp_event.PoissonSampledDpEvent(q, dp_event.GaussianDpEvent(s)), k)
    theirs = mechanism_calibration.calibrate_dp_mechanism(
        lambda: pld_privacy_accountant.PLDAccountant(value_discretization_interval=1e-3), event,
        target, 1e-5, mechanism_calibration.LowerEndpointAndGuess(0.3, 1.0), tol=1e-4)
    ours = calibrate([Row(SubsampledGaussian(1.0, q), k)], 0, "sigma", target, 1e-5).value
    # dp-accounting's calibration uses its (pessimistic) estimate; ours the certified upper bound
    assert ours == pytest.approx(theirs, rel=0.03)


def test_count_is_largest_that_fits():
    rows = [Row(SubsampledGaussian(1.0, 0.02), 100), Row(Gaussian(20.0), 3)]
    c = calibrate(rows, 0, "count", 2.5, 1e-5)
    assert isinstance(c.value, int)
    assert upper([Row(SubsampledGaussian(1.0, 0.02), c.value), Row(Gaussian(20.0), 3)]) <= 2.5
    assert upper([Row(SubsampledGaussian(1.0, 0.02), c.value + 1), Row(Gaussian(20.0), 3)]) > 2.5


@pytest.mark.parametrize("param,mech,inc", [("sampling_rate", SubsampledGaussian(1.0, 0.01), True),
                                            ("epsilon", PureDP(0.1), True),
                                            ("scale", Laplace(1.0), False)])
def test_other_parameters(param, mech, inc):
    k, target = 50, 2.0
    c = calibrate([Row(mech, k)], 0, param, target, 1e-5)
    from dataclasses import replace
    assert upper([Row(replace(mech, **{param: c.value}), k)]) <= target
    if not c.at_bound:
        worse = c.value * 1.01 if inc else c.value / 1.01
        assert upper([Row(replace(mech, **{param: worse}), k)]) > target


def test_infeasible_says_why():
    rows = [Row(Gaussian(0.5), 10), Row(SubsampledGaussian(1.0, 0.01), 10)]
    with pytest.raises(Infeasible, match="other rows alone"):
        calibrate(rows, 1, "sigma", 1.0, 1e-5)
    with pytest.raises(Infeasible, match="one run of the row already gives ε up to"):
        calibrate([Row(Gaussian(0.1), 1)], 0, "count", 1.0, 1e-5)


@pytest.mark.parametrize("kw,needle", [
    (dict(parameter="scale"), "^a Gaussian row can be calibrated for sigma, count; not for 'scale'$"),
    (dict(target_epsilon=-1.0), "^Target ε must be greater than 0; you typed -1$"),
    (dict(target_epsilon=math.nan), "^Target ε must be a number .*; you typed nan$"),
    (dict(delta=2.0), "^δ must be greater than 0 and less than 1; you typed 2$"),
    (dict(row_index=3), "row index must be from 0 to 0; got 3"),
])
def test_bad_input(kw, needle):
    args = dict(rows=[Row(Gaussian(1.0), 1)], row_index=0, parameter="sigma", target_epsilon=1.0,
                delta=1e-5)
    args.update(kw)
    with pytest.raises(ValueError, match=needle):
        calibrate(**args)


def test_cli_calibrate(tmp_path, capsys):
    import json
    f = tmp_path / "c.json"
    f.write_text(json.dumps({"format": "prvgui.composition", "version": 1, "mechanisms": [
        {"kind": "subsampled_gaussian", "sigma": 1.0, "sampling_rate": 0.01, "count": 1000}]}))
    assert main(["calibrate", str(f), "--row", "0", "--parameter", "sigma", "--target-epsilon", "2",
                 "--delta", "1e-5", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["parameter"] == "sigma" and out["epsilon"]["upper"] <= 2.0 and out["target_epsilon"] == 2.0
    assert main(["calibrate", str(f), "--row", "0", "--parameter", "count", "--target-epsilon", "0.001",
                 "--delta", "1e-5"]) == 1
    assert "infeasible" in capsys.readouterr().err
    assert main(["calibrate", str(f), "--row", "9", "--parameter", "sigma", "--target-epsilon", "2"]) == 2


@pytest.mark.parametrize("param,mech,rounding", [("sigma", SubsampledGaussian(1.1, 0.0042666), "up"),
                                                  ("sampling_rate", SubsampledGaussian(1.1, 0.0042666), "down"),
                                                  ("scale", Laplace(1.0), "up")])
def test_the_answer_is_the_number_people_read_and_it_is_certified(param, mech, rounding):
    """Issue 15: the value has at most six significant digits, rounded towards the private side,
    and the certificate returned is the one at exactly that value."""
    from dataclasses import replace
    rows = [Row(mech, 2000)]
    c = calibrate(rows, 0, param, 1.0, 1e-5)
    assert float(f"{c.value:.6g}") == c.value
    again = Accountant([Row(replace(mech, **{param: c.value}), 2000)]).epsilon(1e-5)
    assert again == c.epsilon and again.upper <= 1.0
    from prvgui.accounting.queries.calibrate import round_private
    assert round_private(0.9702555982168302, increasing=False) == 0.970256
    assert round_private(0.004266666666666667, increasing=True) == 0.00426666
