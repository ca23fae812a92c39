"""Every bad input raises ValueError naming the field by its label, with the value given (engine)."""
import math

import pytest

from prvgui.accounting import (Accountant, ApproxDP, Gaussian, Laplace, PureDP, Row, SubsampledGaussian,
                               mechanism_from_params)
from prvgui.accounting.core.validate import NumberError

BAD = [
    (Gaussian, {"sigma": -1.0}, "sigma", "Noise σ must be at least 0; you typed -1"),
    (Gaussian, {"sigma": math.nan}, "sigma", "Noise σ must be a number (at least 0); you typed nan"),
    (Gaussian, {"sigma": math.inf}, "sigma", "Noise σ must be a finite number (at least 0); you typed inf"),
    (Gaussian, {"sigma": "1"}, "sigma", "Noise σ must be a number (at least 0), not text; you typed \"1\""),
    (Gaussian, {"sigma": True}, "sigma", "Noise σ must be a number (at least 0); you typed true"),
    (Gaussian, {"sigma": 1.0, "sensitivity": -2}, "sensitivity",
     "Sensitivity Δ must be at least 0; you typed -2"),
    (Laplace, {"scale": -0.1}, "scale", "Noise scale b must be at least 0; you typed -0.1"),
    (PureDP, {"epsilon": math.nan}, "epsilon", "ε must be a number (at least 0); you typed nan"),
    (ApproxDP, {"epsilon": 1.0, "delta": 1.5}, "delta", "δ must be between 0 and 1; you typed 1.5"),
    (ApproxDP, {"epsilon": 1.0, "delta": -1e-9}, "delta", "δ must be between 0 and 1; you typed -1e-9"),
    (SubsampledGaussian, {"sigma": 1.0, "sampling_rate": 1.01}, "sampling_rate",
     "Sampling rate q must be between 0 and 1; you typed 1.01"),
    (SubsampledGaussian, {"sigma": 1.0, "sampling_rate": math.nan}, "sampling_rate",
     "Sampling rate q must be a number (between 0 and 1); you typed nan"),
    (SubsampledGaussian, {"sigma": "1e400", "sampling_rate": 0.1}, "sigma",
     "Noise multiplier σ must be at most 1.8e308; you typed 1e400"),
]


@pytest.mark.parametrize("cls,kw,field,message", BAD)
def test_bad_parameters(cls, kw, field, message):
    with pytest.raises(NumberError) as info:
        cls(**kw)
    assert str(info.value) == message and info.value.field == field
    assert info.value.message("the file has").endswith(message.split("; you typed ")[1])


@pytest.mark.parametrize("count,shown", [(-1, "-1"), (1.5, "1.5"), (math.nan, "nan"), ("3", '"3"'),
                                         (None, "null"), (10**10, "10000000000")])
def test_bad_count(count, shown):
    with pytest.raises(NumberError) as info:
        Row(Gaussian(1.0), count)
    assert str(info.value) == f"Count must be a whole number from 0 to 1,000,000,000; you typed {shown}"
    assert info.value.field == "count"


def test_kind_and_params_from_untrusted_dicts():
    with pytest.raises(ValueError, match="kind must be one of .*gaussian.*got 'gausian'"):
        mechanism_from_params("gausian", {"sigma": 1.0})
    with pytest.raises(ValueError, match="^Gaussian has no parameter 'noise'"):
        mechanism_from_params("gaussian", {"sigma": 1.0, "noise": 2})
    with pytest.raises(NumberError, match="^Noise σ must be a number .*; it is missing$") as info:
        mechanism_from_params("gaussian", {})
    assert info.value.field == "sigma"


@pytest.mark.parametrize("delta,shown", [(0.0, "0"), (1.0, "1"), (-1e-5, "-1e-5"), (math.nan, "nan"),
                                         (math.inf, "inf"), ("1e-5", "\"1e-5\"")])
def test_bad_delta(delta, shown):
    with pytest.raises(NumberError) as info:
        Accountant([Row(Gaussian(1.0), 1)]).epsilon(delta)
    assert str(info.value).startswith("Target δ must be ")
    assert str(info.value).endswith(f"; you typed {shown}")
    assert "greater than 0 and less than 1" in str(info.value) and info.value.field == "delta"


@pytest.mark.parametrize("eps,shown", [(-0.1, "-0.1"), (math.nan, "nan"), (math.inf, "inf")])
def test_bad_epsilon(eps, shown):
    with pytest.raises(NumberError) as info:
        Accountant([Row(Gaussian(1.0), 1)]).delta(eps)
    assert str(info.value).startswith("ε must be ") and str(info.value).endswith(f"; you typed {shown}")


@pytest.mark.parametrize("err,shown", [(0.0, "0"), (-0.01, "-0.01"), (math.nan, "nan"), (100.0, "100")])
def test_bad_eps_error(err, shown):
    with pytest.raises(NumberError) as info:
        Accountant([Row(Gaussian(1.0), 1)], eps_error=err)
    assert str(info.value).startswith("Accuracy (ε error) must be ")
    assert str(info.value).endswith(f"; you typed {shown}") and "1e-6 and 10" in str(info.value)


def test_bad_neighbouring():
    with pytest.raises(ValueError, match="neighbouring"):
        Accountant([], neighbouring="replace_everything")
