"""The subsampled Gaussian's mean (a KL divergence, by quadrature) against mpmath at 40 digits:
its error bound (the quadrature's estimate plus the integrand's rounding, MEAN_ROUNDING) must
hold, both orders, over noise 0.3 to 5 and rates 1e-4 to 0.9."""
import math

import mpmath as mp
import pytest

from prvgui.accounting.kinds.subsampled_gaussian import subsampled_gaussian_prv

CASES = [(0.3, 1e-4), (0.34, 1.16e-4), (0.5, 0.3), (0.8, 0.01), (1.0, 0.005), (1.1, 0.9),
         (1.8, 1.17e-3), (2.34, 4.95e-4), (3.4, 0.0138), (5.0, 0.5), (5.0, 1e-4), (0.6, 0.05),
         # (the many-row benchmark's range: noise 0.8 to 1.5, rates 1e-3 to 1e-2)
         (0.8137, 0.00913), (1.2291, 0.001377), (1.4962, 0.00561), (0.9508, 0.002942)]


def _kl(s: float, q: float, order: str):
    with mp.workdps(40):
        s_, q_ = mp.mpf(s), mp.mpf(q)

        def phi(x, m):
            return mp.exp(-(x - m) ** 2 / (2 * s_ * s_)) / (s_ * mp.sqrt(2 * mp.pi))

        def big_p(x):
            return (1 - q_) * phi(x, 0) + q_ * phi(x, 1)
        if order == "remove":
            def f(x):
                return big_p(x) * mp.log(big_p(x) / phi(x, 0))
        else:
            def f(x):
                return phi(x, 0) * mp.log(phi(x, 0) / big_p(x))
        kink = (1 + 2 * s_ * s_ * (mp.log(1 - q_) - mp.log(q_))) / 2
        pts = sorted({-40 * s_, -10 * s_, -3 * s_, mp.mpf(0), mp.mpf(0.5), mp.mpf(1), 3 * s_ + 1,
                      10 * s_ + 1, 40 * s_ + 1} | ({kink - s_, kink, kink + s_} if abs(kink) < 30 * s_ else set()))
        return float(mp.quad(f, pts))


@pytest.mark.parametrize("s,q", CASES)
@pytest.mark.parametrize("order", ["remove", "add"])
def test_the_mean_is_within_its_error_bound(s, q, order):
    prv = subsampled_gaussian_prv(s, q, order)
    exact = _kl(s, q, order)
    assert abs(prv.mean - exact) <= prv.mean_err
    assert prv.mean_err <= 1e-10 * exact + 1e-300  # (a bound, and a tight one)
    assert math.isfinite(prv.mean)
