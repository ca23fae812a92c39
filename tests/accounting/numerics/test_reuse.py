"""reuse.py: discretisations kept between queries change no number, are reused when only
another row, a target or nothing changed, stay within their byte budget, and are safe from
callers and threads."""
from __future__ import annotations

import math
import threading

import numpy as np
import pytest

from prvgui.accounting.numerics import reuse
from prvgui.accounting.queries.accountant import Accountant
from prvgui.accounting.mechanisms import Row, mechanism_from_params
from prvgui.engine.view_model import CURVES, Request, compute


def mech(kind: str, **params):
    return mechanism_from_params(kind, params)


COMPOSITIONS = {
    "dpsgd+laplace": [Row(mech("subsampled_gaussian", sigma=0.9, sampling_rate=0.01), 500),
                      Row(mech("laplace", scale=10.0), 3)],
    "mixed": [Row(mech("subsampled_gaussian", sigma=0.8, sampling_rate=0.01), 300),
              Row(mech("gaussian", sigma=20.0), 5), Row(mech("randomized_response", epsilon=0.1), 1),
              Row(mech("approx_dp", epsilon=0.05, delta=1e-8), 2)],
    "laplace+rr": [Row(mech("laplace", scale=20.0), 40), Row(mech("randomized_response", epsilon=0.2), 3)],
}


@pytest.fixture(autouse=True)
def fresh_cache():
    reuse.enabled(True)
    reuse.clear()
    yield
    reuse.enabled(True)
    reuse.clear()


def queries(rows) -> tuple:
    """Every kind of certified answer the accountant gives, on the FFT path."""
    acc = Accountant(rows, 0.05, closed_forms=False, screen=False)
    eps = acc.epsilon(1e-6)
    dlt = acc.delta(1.0)
    curve = acc.delta_curve(np.linspace(0.0, 4.0, 9), level=1e-12)
    cs, sweep = acc.epsilon_vs_count(0, [1, 7, rows[0].count], 1e-6)
    return eps, dlt, curve, cs, sweep, acc.error_budget(1e-6)


def same(a, b) -> None:
    """Exactly equal (NaN equal to NaN), through tuples, lists, dicts and arrays."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    elif isinstance(a, (tuple, list)):
        assert type(a) is type(b) and len(a) == len(b)
        for x, y in zip(a, b):
            same(x, y)
    elif isinstance(a, dict):
        assert a.keys() == b.keys()
        for k in a:
            same(a[k], b[k])
    elif isinstance(a, float) and math.isnan(a):
        assert isinstance(b, float) and math.isnan(b)
    else:
        assert a == b


@pytest.mark.parametrize("name", sorted(COMPOSITIONS))
def test_cached_answers_equal_uncached_ones(name):
    rows = COMPOSITIONS[name]
    reuse.enabled(False)
    plain = queries(rows)
    assert reuse.stats()["discretizations"] == 0
    reuse.enabled(True)
    cold = queries(rows)
    warm = queries(rows)
    assert reuse.stats()["hits"] > 0
    same(plain, cold)
    same(plain, warm)


def test_changing_one_row_rediscretises_that_row_only():
    rows = COMPOSITIONS["mixed"]
    acc = Accountant(rows, 0.05, closed_forms=False, screen=False)
    acc.epsilon(1e-6)
    before = reuse.stats()
    changed = list(rows)
    changed[1] = Row(mech("gaussian", sigma=21.0), 5)
    Accountant(changed, 0.05, closed_forms=False, screen=False).epsilon(1e-6)
    after = reuse.stats()
    # the changed row once in each order of the pair; the other rows come from the cache
    assert after["misses"] - before["misses"] == len(acc.orders) == 2
    assert after["hits"] - before["hits"] == (len(rows) - 1) * len(acc.orders)


def test_a_new_target_in_the_same_error_level_reuses_every_row():
    rows = COMPOSITIONS["dpsgd+laplace"]
    Accountant(rows, 0.05, closed_forms=False, screen=False).epsilon(1e-6)
    misses = reuse.stats()["misses"]
    Accountant(rows, 0.05, closed_forms=False, screen=False).epsilon(2e-6)  # same error level
    assert reuse.stats()["misses"] == misses


def test_kept_arrays_are_read_only():
    Accountant(COMPOSITIONS["laplace+rr"], 0.05, closed_forms=False).epsilon(1e-6)
    kept = list(reuse._discs.values())
    assert kept
    with pytest.raises(ValueError):
        kept[0].pmf[0] = 1.0


def test_the_cache_stays_within_its_byte_budget(monkeypatch):
    monkeypatch.setattr(reuse, "MAX_BYTES", 20_000)
    monkeypatch.setattr(reuse, "MAX_SHARE", 1.0)
    for scale in (5.0, 6.0, 7.0, 8.0, 9.0, 10.0):
        Accountant([Row(mech("laplace", scale=scale), 30)], 0.01, closed_forms=False).epsilon(1e-6)
        assert reuse.stats()["bytes"] <= reuse.MAX_BYTES
    sizes = [reuse._nbytes(d) for d in reuse._discs.values()]
    assert sum(sizes) == reuse.stats()["bytes"] and len(sizes) < reuse.stats()["misses"]


def test_the_least_recently_used_goes_first(monkeypatch):
    prv = reuse.prv_of(mech("laplace", scale=5.0), "remove")
    taus = (1e-10, 1e-11, 1e-12, 1e-13)

    def key(tau):
        return (prv, 1e-3, tau, 10**7, (0.0, 1), ())
    for tau in taus[:3]:
        reuse.discretized(prv, 1e-3, tau, 10**7, (0.0, 1))
    reuse.discretized(prv, 1e-3, taus[0], 10**7, (0.0, 1))  # touch the oldest
    assert list(reuse._discs) == [key(taus[1]), key(taus[2]), key(taus[0])]
    monkeypatch.setattr(reuse, "MAX_BYTES", reuse.stats()["bytes"] + 1)
    monkeypatch.setattr(reuse, "MAX_SHARE", 1.0)
    reuse.discretized(prv, 1e-3, taus[3], 10**7, (0.0, 1))
    order = [key(taus[1]), key(taus[2]), key(taus[0]), key(taus[3])]
    left = list(reuse._discs)
    assert key(taus[1]) not in left and left == order[len(order) - len(left):]
    assert reuse.stats()["bytes"] <= reuse.MAX_BYTES


def test_a_kept_discretisation_keeps_its_cumulant_bounds_while_it_is_kept(monkeypatch):
    from prvgui.accounting.numerics.window import LAMBDAS, PreparedRow, _cgf_bounds, cgf_blocks
    prv = reuse.prv_of(mech("laplace", scale=5.0), "remove")
    d = reuse.discretized(prv, 1e-3, 1e-10, 10**7, (0.0, 1))
    p = reuse.prepared(d)
    idx = np.arange(0, LAMBDAS.size, 7)
    got = p.cgf(False, idx)
    assert reuse.prepared(d) is p  # the same bounds serve the next window
    assert np.array_equal(got, _cgf_bounds(cgf_blocks(d), LAMBDAS[idx]))  # and they are d's
    # a discretisation the cache does not hold gets bounds of its own
    other = reuse.discretize(prv, 1e-3, 1e-10, 10**7, (0.0, 1))
    assert reuse.prepared(other) is not reuse.prepared(other)
    assert isinstance(reuse.prepared(other), PreparedRow)
    # evicted (or cleared) with its discretisation
    monkeypatch.setattr(reuse, "MAX_BYTES", reuse.stats()["bytes"] + 1)
    monkeypatch.setattr(reuse, "MAX_SHARE", 1.0)
    reuse.discretized(prv, 1e-3, 1e-12, 10**7, (0.0, 1))
    assert all(v is not d for v in reuse._discs.values()) and reuse.prepared(d) is not p
    reuse.clear()
    assert not reuse._kept


def test_threads_sharing_the_cache_get_the_uncached_answer():
    rows = COMPOSITIONS["dpsgd+laplace"]
    reuse.enabled(False)
    want = Accountant(rows, 0.05, closed_forms=False).epsilon(1e-6)
    reuse.enabled(True)
    got, errors = [], []

    def run():
        try:
            got.append(Accountant(rows, 0.05, closed_forms=False).epsilon(1e-6))
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
    threads = [threading.Thread(target=run) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and got == [want] * 4


def test_equal_mechanisms_share_one_prv():
    a, b = mech("laplace", scale=3.0), mech("laplace", scale=3.0)
    assert a is not b and reuse.prv_of(a, "remove") is reuse.prv_of(b, "remove")
    assert reuse.prv_of(mech("laplace", scale=3.5), "remove") is not reuse.prv_of(a, "remove")


def test_the_windows_answer_is_the_same_with_and_without_reuse():
    rows = tuple(COMPOSITIONS["mixed"])
    request = Request(rows, 1e-6, 1.0, 0.05, profile_points=20, tradeoff_points=21, steps_row=0,
                      steps_points=6)
    reuse.enabled(False)
    plain = compute(request)
    reuse.enabled(True)
    compute(request)
    warm = compute(request)
    for name in ("epsilon", "delta", "comparisons", "comparisons_delta", "budget", "pld_inf_mass",
                 "certified_upper", "certified_upper_delta", "warnings", "pending", "risk"):
        same(getattr(plain, name), getattr(warm, name))
    for name in CURVES + ("pld_atoms",):
        a, b = getattr(plain, name), getattr(warm, name)
        assert (a is None) == (b is None)
        if a is not None:
            same(a.x, b.x)
            same(a.columns, b.columns)


def test_many_prvs_are_made_a_kind_at_a_time_and_kept():
    """prvs_of gives what prv_of gives: the kept PRV where there is one, else a new one made with
    its kind's others (Mechanism.prvs) and kept, equal mechanisms sharing one."""
    reuse.clear()
    dg = [mechanism_from_params("discrete_gaussian", {"sigma": s}) for s in (3.0, 40.5, 41.0, 3.0)]
    lap = mechanism_from_params("laplace", {"scale": 2.0})
    first = reuse.prv_of(dg[1], "remove")
    got = reuse.prvs_of([*dg, lap], "remove")
    assert got[1] is first and got[0] is got[3] and got[4] is reuse.prv_of(lap, "remove")
    assert got[2] is reuse.prv_of(dg[2], "remove") and got[0] is reuse.prv_of(dg[0], "remove")
    assert reuse.stats()["prvs"] == 4
    xs = np.linspace(-0.5, 0.5, 41)
    for m, p in zip(dg, got):
        alone = m.prv("remove")
        assert p.inf_mass == alone.inf_mass and p.mean == alone.mean
        assert np.array_equal(p.cont.cdf(xs), alone.cont.cdf(xs)) and np.array_equal(p.cont.sf(xs), alone.cont.sf(xs))


def test_the_prvs_kept_stay_within_their_byte_budget(monkeypatch):
    """PRVs that hold tables (discrete Gaussians: Lattice.held) count their bytes: past
    MAX_PRV_BYTES the least recently used go, one by one or made many at a time."""
    reuse.clear()
    one = reuse.prv_of(mechanism_from_params("discrete_gaussian", {"sigma": 100.0}), "remove")
    size = one.lattice.held + 512
    assert reuse.stats()["prv_bytes"] == size and size > 8000
    monkeypatch.setattr(reuse, "MAX_PRV_BYTES", int(3.5 * size))
    ms = [mechanism_from_params("discrete_gaussian", {"sigma": 100.0 + 1e-9 * i}) for i in range(1, 8)]
    reuse.prvs_of(ms[:5], "remove")
    assert reuse.stats()["prvs"] == 3 and reuse.stats()["prv_bytes"] <= 3.5 * size
    for m in ms[5:]:
        reuse.prv_of(m, "remove")
    kept = reuse.prvs_of(ms[4:], "remove")  # (the three most recent: the same objects again)
    assert [reuse.prv_of(m, "remove") for m in ms[4:]] == kept and reuse.stats()["prvs"] == 3
    reuse.clear()
    assert reuse.stats()["prv_bytes"] == 0
