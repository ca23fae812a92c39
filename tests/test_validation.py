"""Every bad input raises ValueError naming the field (engine)."""
import math

import pytest

from prvgui.accounting import (Accountant, ApproxDP, Gaussian, Laplace, PureDP, Row, SubsampledGaussian,
                               mechanism_from_params)

BAD = [
    (Gaussian, {"sigma": -1.0}, "sigma"), (Gaussian, {"sigma": math.nan}, "sigma"),
    (Gaussian, {"sigma": math.inf}, "sigma"), (Gaussian, {"sigma": "1"}, "sigma"),
    (Gaussian, {"sigma": True}, "sigma"), (Gaussian, {"sigma": 1.0, "sensitivity": -2}, "sensitivity"),
    (Laplace, {"scale": -0.1}, "scale"), (PureDP, {"epsilon": math.nan}, "epsilon"),
    (ApproxDP, {"epsilon": 1.0, "delta": 1.5}, "delta"), (ApproxDP, {"epsilon": 1.0, "delta": -1e-9}, "delta"),
    (SubsampledGaussian, {"sigma": 1.0, "sampling_rate": 1.01}, "sampling_rate"),
    (SubsampledGaussian, {"sigma": 1.0, "sampling_rate": math.nan}, "sampling_rate"),
]


@pytest.mark.parametrize("cls,kw,field", BAD)
def test_bad_parameters(cls, kw, field):
    with pytest.raises(ValueError, match=field):
        cls(**kw)


@pytest.mark.parametrize("count", [-1, 1.5, math.nan, "3", None, 10**10])
def test_bad_count(count):
    with pytest.raises(ValueError, match="count"):
        Row(Gaussian(1.0), count)


def test_kind_and_params_from_untrusted_dicts():
    with pytest.raises(ValueError, match="kind"):
        mechanism_from_params("gausian", {"sigma": 1.0})
    with pytest.raises(ValueError, match="'noise'"):
        mechanism_from_params("gaussian", {"sigma": 1.0, "noise": 2})
    with pytest.raises(ValueError, match="'sigma'"):
        mechanism_from_params("gaussian", {})


@pytest.mark.parametrize("delta", [0.0, 1.0, -1e-5, math.nan, math.inf, "1e-5"])
def test_bad_delta(delta):
    with pytest.raises(ValueError, match="delta"):
        Accountant([Row(Gaussian(1.0), 1)]).epsilon(delta)


@pytest.mark.parametrize("eps", [-0.1, math.nan, math.inf])
def test_bad_epsilon(eps):
    with pytest.raises(ValueError, match="epsilon"):
        Accountant([Row(Gaussian(1.0), 1)]).delta(eps)


@pytest.mark.parametrize("err", [0.0, -0.01, math.nan, 100.0])
def test_bad_eps_error(err):
    with pytest.raises(ValueError, match="eps_error"):
        Accountant([Row(Gaussian(1.0), 1)], eps_error=err)


def test_bad_neighbouring():
    with pytest.raises(ValueError, match="neighbouring"):
        Accountant([], neighbouring="replace_everything")
