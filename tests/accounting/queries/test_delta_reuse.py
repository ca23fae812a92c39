"""delta(epsilon) after epsilon(delta) reads the headline's compositions when their additive
error is small against the answer (Accountant._composed_level), and composes anew when not."""
from __future__ import annotations

import math

import pytest

import references as ref
from prvgui.accounting import Accountant, Row
from prvgui.accounting.mechanisms import Gaussian, RandomizedResponse, SubsampledGaussian
from prvgui.accounting.numerics.pipeline import error_level


def gaussian_rr(mu: float, eps0: float, k: int):
    return [Row(Gaussian(1.0 / mu), 1), Row(RandomizedResponse(eps0), k)]


@pytest.mark.parametrize("mu,eps0,k,delta", [(0.8, 0.3, 5, 1e-5), (1.5, 0.1, 12, 1e-6), (0.3, 1.0, 3, 1e-3)])
@pytest.mark.parametrize("at", [0.0, 0.5, 1.0, 1.6])
def test_delta_after_the_headline_holds_the_exact_value(mu, eps0, k, delta, at):
    acc = Accountant(gaussian_rr(mu, eps0, k), eps_error=0.01, closed_forms=False)
    eps = acc.epsilon(delta)
    composed = set(acc._cache)
    x = at * eps.estimate
    got = acc.delta(x)
    exact = float(ref.gaussian_rr_delta(mu, eps0, k, x))
    assert got.lower <= exact <= got.upper
    # as tight as eps_error asks: within the exact delta at x -+ eps_error (2% slack)
    lo = float(ref.gaussian_rr_delta(mu, eps0, k, x + 0.01))
    hi = float(ref.gaussian_rr_delta(mu, eps0, k, max(x - 0.01, 0.0)))
    assert got.lower >= lo * 0.98 and got.upper <= hi * 1.02
    if exact > 1e3 * 1e-6 * delta * 10:  # far above the headline's error level: nothing new composed
        assert {key for key in acc._cache if key not in composed} <= {k_ for k_ in acc._cache if k_[3] is False}
        assert all(key[1] == acc._composed_level() for key in set(acc._cache) - composed)


def test_a_small_delta_is_composed_at_a_finer_level():
    rows = [Row(SubsampledGaussian(1.0, 0.01), 3000)]
    acc = Accountant(rows, eps_error=0.01, closed_forms=False)
    eps = acc.epsilon(1e-5)
    headline = acc._composed_level()
    got = acc.delta(eps.upper + 1.5)  # about 1e-8: the headline's level 1e-11 is too coarse for it
    assert got.upper < 1e-6
    # (in long double here: the headline's round-off is already above 1e-3 of delta, so no
    # finer plain level comes first: Accountant._round_off_bound)
    assert min(lvl for _, lvl, _, _ in acc._cache) < headline
    fresh = Accountant(rows, eps_error=0.01, closed_forms=False).delta(eps.upper + 1.5)
    assert got.lower <= fresh.upper and fresh.lower <= got.upper
    assert got.upper - got.lower <= 1.1 * (fresh.upper - fresh.lower)
    assert math.isfinite(got.upper)


def test_a_delta_held_back_by_round_off_skips_the_finer_plain_levels(monkeypatch):
    """delta far out (~1e-14 for 40 distinct DP-SGD rows): the plain levels' round-off is above
    1e-3 of it, so the query goes from the headline's level straight to its tilted step at the
    level the answer asks for, with the bracket it had when the finer plain levels came first."""
    from prvgui.accounting.queries import accountant as accountant_mod
    rows = [Row(SubsampledGaussian(0.8 + 0.01 * i, 0.02), 5) for i in range(40)]
    acc = Accountant(rows, eps_error=0.01)
    eps = acc.epsilon(1e-5)
    got = acc.delta(eps.upper + 4.0)
    plain = {lvl for _, lvl, ext, _ in acc._cache if not ext}
    assert plain == {error_level(1e-5)} and acc._tilted
    monkeypatch.setattr(accountant_mod, "_round_off_bound", lambda *a: False)
    before = Accountant(rows, eps_error=0.01)
    before.epsilon(1e-5)
    want = before.delta(eps.upper + 4.0)
    assert len({lvl for _, lvl, ext, _ in before._cache if not ext}) > 1
    assert got.lower <= want.upper and want.lower <= got.upper
    assert got.upper - got.lower <= 1.05 * (want.upper - want.lower)
