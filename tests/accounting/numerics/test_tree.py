"""Many distinct rows composed in groups (tree.py), against closed forms and the one-window
composition: the certified bracket still holds the exact value, and the grouped and the flat
compositions agree within their stated errors."""
import dataclasses
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import references as ref
from prvgui.accounting import (Accountant, Gaussian, Laplace, RandomizedResponse, Row,
                               SubsampledGaussian)
from prvgui.accounting.kinds.subsampled_gaussian import subsampled_gaussian_prv
from prvgui.accounting.numerics import tree
from prvgui.accounting.numerics.compose import compose
from prvgui.accounting.numerics.discretize import DiscretePRV, discretize
from prvgui.accounting.numerics.tilt import compose_tilted


def _delta_tilde(c, eps):
    """The composition's delta~(eps) of its finite part: sum over y > eps of p (1 - e^{eps - y})."""
    y = c.values
    sel = y > eps
    return float(np.sum(c.pmf[sel] * -np.expm1(eps - y[sel])))


def _rows(mechs, h, k_total):
    return [(discretize(m.prv(), h, 1e-14 / k_total), k) for m, k in mechs]


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2 ** 31), n=st.integers(tree.TREE_MIN, 48))
def test_grouped_and_flat_compositions_agree_within_their_errors(seed, n):
    rng = np.random.default_rng(seed)
    kinds = [lambda: SubsampledGaussian(float(rng.uniform(0.7, 2.0)), float(rng.uniform(0.001, 0.05))),
             lambda: Laplace(float(rng.uniform(5.0, 40.0))),
             lambda: RandomizedResponse(float(rng.uniform(0.01, 0.3))),
             lambda: Gaussian(float(rng.uniform(3.0, 20.0)))]
    mechs = [(kinds[int(rng.integers(4))](), int(rng.integers(1, 4))) for _ in range(n)]
    k_total = sum(k for _, k in mechs)
    h = 0.0088 * math.sqrt(2 / (k_total * 30))
    rows = _rows(mechs, h, k_total)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(tree, "TREE_COST", 0.0)  # grouped whether it pays or not
        grouped = tree.compose_many(rows, 1e-14)
    flat = compose(rows, 1e-14)
    assert grouped.parts["groups"] == tree._node_count(n) and "groups" not in flat.parts
    assert grouped.parts["group_err"] > 0
    for eps in np.quantile(flat.values, [0.3, 0.6, 0.9, 0.99]):
        a, b = _delta_tilde(grouped, eps), _delta_tilde(flat, eps)
        tol = grouped.err_abs + flat.err_abs + (grouped.err_rel + flat.err_rel) * max(a, b)
        assert abs(a - b) <= tol


def test_a_tilted_schedule_is_grouped_and_agrees_with_one_window(monkeypatch):
    """200 distinct DP-SGD steps tilted towards delta = 1e-10 (where the whole window is a few
    times a group's): grouped, and delta~ deep in the tail agrees with the one-window
    composition within both compositions' tilted errors e^{log_a - lam x} and relative ones."""
    rng = np.random.default_rng(1)
    mechs = [(SubsampledGaussian(float(s), float(q)), 1)
             for s, q in zip(rng.uniform(0.8, 1.5, 200), rng.uniform(0.001, 0.01, 200))]
    h = 0.0088 * math.sqrt(2 / (200 * 38))
    rows = _rows(mechs, h, 200)
    grouped = compose_tilted(rows, ("delta", 1e-10), 1e-17)
    levels = [200 // tree.FAN_IN ** j for j in range(1, 5)]
    assert grouped.parts["groups"] == tree._node_count(200) == sum(levels) > 0
    monkeypatch.setattr(tree, "TREE_MIN", 10 ** 9)
    flat = compose_tilted(rows, ("delta", 1e-10), 1e-17)
    assert "groups" not in flat.parts
    for eps in (2.0, 2.5, 3.0, 3.5):
        a, b = _delta_tilde(grouped, eps), _delta_tilde(flat, eps)
        assert 1e-14 < b < 1e-6  # (deep in the tail: below float64's floor without tilting)
        extra = sum(math.exp(c.tilt_log_a - c.tilt_lam * eps) for c in (grouped, flat))
        assert abs(a - b) <= extra + (grouped.err_rel + flat.err_rel) * max(a, b)


@pytest.mark.parametrize("delta", [1e-6, 1e-12, 1e-40])
def test_distinct_gaussians_bracket_the_closed_form(delta, monkeypatch):
    """60 Gaussians of different noise, composed numerically (closed forms off) in groups of
    four (so that there are groups of groups): mu-GDP with mu = sqrt(sum 1 / sigma_i^2) must lie
    inside the bracket, which is at most 2 eps_error."""
    monkeypatch.setattr(tree, "FAN_IN", 4)
    sigmas = np.linspace(4.0, 12.0, 60)
    acc = Accountant([Row(Gaussian(float(s)), 1) for s in sigmas], 0.01, closed_forms=False)
    b = acc.epsilon(delta)
    assert max(part["groups"] for part in acc.error_budget(delta)) > 0
    mu = math.sqrt(float(np.sum(1 / sigmas ** 2)))
    assert b.upper - b.lower <= 2 * acc.eps_error_used * 1.001
    assert float(ref.gaussian_delta_mp(mu, b.lower)) >= delta >= float(ref.gaussian_delta_mp(mu, b.upper))


def test_a_schedule_gives_the_same_bracket_grouped_or_not(monkeypatch):
    """A DP-SGD schedule of 64 distinct (sigma, q) blocks: grouped and on one window, the two
    certified brackets overlap and have the same width."""
    rows = [Row(SubsampledGaussian(0.9 + 0.01 * i, 0.004 + 0.0001 * i), 20) for i in range(64)]
    acc = Accountant(rows, 0.01)
    grouped = acc.epsilon(1e-8)
    assert max(part["groups"] for part in acc.error_budget(1e-8)) > 0
    monkeypatch.setattr(tree, "TREE_MIN", 10 ** 9)
    flat = Accountant(rows, 0.01).epsilon(1e-8)
    assert grouped.lower <= flat.upper and flat.lower <= grouped.upper
    assert abs((grouped.upper - grouped.lower) - (flat.upper - flat.lower)) < 2e-3


@pytest.mark.slow
def test_a_mixed_release_of_300_rows_agrees_with_one_window(monkeypatch):
    """300 distinct rows of every shape at once (groups always): randomized responses and pure DP
    (atoms only), approximate DP (mass at +inf), Laplace, DP-SGD steps drawn once to three times.
    Grouped and on one window the certified brackets overlap, and delta's brackets too."""
    from prvgui.accounting import ApproxDP, PureDP
    rng = np.random.default_rng(7)
    makers = [lambda: RandomizedResponse(float(rng.uniform(0.005, 0.05))),
              lambda: PureDP(float(rng.uniform(0.001, 0.02))),
              lambda: ApproxDP(float(rng.uniform(0.001, 0.01)), float(rng.uniform(1e-12, 1e-10))),
              lambda: Laplace(float(rng.uniform(50.0, 200.0))),
              lambda: SubsampledGaussian(float(rng.uniform(1.0, 2.0)), float(rng.uniform(0.001, 0.02)))]
    rows = [Row(makers[i % 5](), int(rng.integers(1, 4))) for i in range(300)]
    acc = Accountant(rows, 0.02)
    grouped, d_grouped = acc.epsilon(1e-8), acc.delta(1.0)
    assert max(part["groups"] for part in acc.error_budget(1e-8)) == tree._node_count(300) > 10
    monkeypatch.setattr(tree, "TREE_MIN", 10 ** 9)
    monkeypatch.setattr(tree, "TREE_ALWAYS", 10 ** 9)
    flat_acc = Accountant(rows, 0.02)
    flat, d_flat = flat_acc.epsilon(1e-8), flat_acc.delta(1.0)
    assert grouped.lower <= flat.upper and flat.lower <= grouped.upper
    assert d_grouped.lower <= d_flat.upper and d_flat.lower <= d_grouped.upper


def test_the_steps_curve_over_many_other_rows_matches_single_queries():
    """The epsilon-versus-count curve of one row beside 40 distinct others (composed once, in
    groups, then one row of every point): each point's bracket overlaps the bracket of the
    composition with that count, computed on its own."""
    rows = [Row(SubsampledGaussian(1.0, 0.02), 100)] + \
        [Row(SubsampledGaussian(0.9 + 0.02 * i, 0.003 + 0.0002 * i), 1) for i in range(40)]
    acc = Accountant(rows, 0.01)
    counts, bounds = acc.epsilon_vs_count(0, [0, 10, 100, 400], 1e-6)
    for c, b in zip(counts, bounds):
        alone = Accountant([Row(rows[0].mechanism, int(c))] + rows[1:], 0.01).epsilon(1e-6)
        assert b.lower <= alone.upper and alone.lower <= b.upper
        assert b.upper - b.lower <= 2 * 0.01 * 1.05


def test_rows_transformed_together_are_the_rows_transformed_alone():
    """compose.row_spectra (stacked rows, scipy's FFT on every core) gives each row's
    row_spectrum exactly, rows longer than the window (folded) included."""
    from prvgui.accounting.numerics.compose import row_spectra, row_spectrum
    rng = np.random.default_rng(5)
    rows = []
    for size, start in [(50, -7), (300, 120), (1000, -400), (17, 3)]:
        pmf = rng.random(size)
        rows.append(DiscretePRV(pmf / pmf.sum(), start, 0.01, 0.0, 0.0, 0.0, 0.0, centre=size // 3))
    for n in (256, 600):
        for (spec, base), d in zip(row_spectra(rows, n), rows):
            alone, base_alone = row_spectrum(d, n)
            assert base == base_alone and np.array_equal(spec, alone)


@pytest.mark.parametrize("prv", [
    subsampled_gaussian_prv(0.8, 0.01, "remove"), subsampled_gaussian_prv(1.3, 0.002, "add"),
    Laplace(3.0).prv("remove"), RandomizedResponse(1.0).prv("remove")], ids=["sg", "sg-add", "laplace", "rr"])
def test_rows_made_packed_are_the_rows_made_dense(prv):
    """packed.discretize_packed (no array of every cell on the way) gives discretize's row:
    every field, and the same masses at the same cells."""
    from prvgui.accounting.numerics.packed import PackedRow, dense, discretize_packed
    from prvgui.accounting.numerics.pipeline import make_plan
    plan = make_plan(0.01, 1.0, 1000, 1e-16, rows=1000)
    args = (prv, plan.h, plan.tau(prv), 1 << 26, plan.coarse, None, plan.tiers)
    plain, made = discretize(*args), discretize_packed(*args)
    back = dense(made)
    assert np.array_equal(back.pmf, plain.pmf)
    for field in ("start", "shift", "bias", "tail_prob", "centre", "mass_rel", "classes", "fine", "spread"):
        assert getattr(back, field) == getattr(plain, field), field
    if isinstance(made, PackedRow):
        assert made.vals.size == np.count_nonzero(plain.pmf) < plain.pmf.size


def test_a_row_with_other_masses_keeps_every_other_field():
    """DiscretePRV.with_pmf (the copy many rows make several of) is dataclasses.replace: every
    field but the masses (and the centre when given) carried, whatever fields the row gains."""
    from prvgui.accounting.numerics.pipeline import make_plan
    plan = make_plan(0.01, 1.0, 1000, 1e-16, rows=1000)
    prv = subsampled_gaussian_prv(0.8, 0.01, "remove")
    d = discretize(prv, plan.h, plan.tau(prv), coarse=plan.coarse, tiers=plan.tiers)
    assert d.sparse is not None and d.classes and d.fine is not None  # (every field set)
    pmf = d.pmf[::-1].copy()
    for got, want in ((d.with_pmf(pmf), dataclasses.replace(d, pmf=pmf)),
                      (d.with_pmf(pmf, 7), dataclasses.replace(d, pmf=pmf, centre=7))):
        for f in dataclasses.fields(DiscretePRV):
            a, b = getattr(got, f.name), getattr(want, f.name)
            assert (np.array_equal(a, b) if isinstance(a, np.ndarray) else a == b), f.name


@pytest.mark.parametrize("lam", [0.5, 30.0])
def test_a_packed_row_tilts_as_its_array_of_cells(lam):
    """tilt.tilt_row of a packed row (from its nonzero cells, packed.nonzero) is bit for bit
    that of the same row with its array of cells: masses, centre, log M and the error terms."""
    from prvgui.accounting.kinds.discrete_gaussian import DiscreteGaussian
    from prvgui.accounting.numerics.packed import PackedRow, dense, discretize_packed
    from prvgui.accounting.numerics.pipeline import make_plan
    from prvgui.accounting.numerics.tilt import tilt_row
    plan = make_plan(0.01, 1.0, 1000, 1e-16, rows=1000)
    for prv in (DiscreteGaussian(80.0).prv("remove"), subsampled_gaussian_prv(0.8, 0.01, "remove")):
        made = discretize_packed(prv, plan.h, plan.tau(prv), 1 << 26, plan.coarse, None, plan.tiers)
        assert isinstance(made, PackedRow)
        (a, *rest_a), (b, *rest_b) = tilt_row(made, lam), tilt_row(dense(made), lam)
        assert np.array_equal(a.pmf, b.pmf) and a.centre == b.centre and rest_a == rest_b
        assert a.start == b.start and a.shift == b.shift and a.classes == b.classes


def test_rows_summed_together_give_each_rows_cumulant_bound():
    """window._fill (a group's rows' cumulant bounds in one pass over their stacked blocks) gives
    what each row's own PreparedRow.cgf gives, and a group's window is the same either way."""
    from prvgui.accounting.numerics import window
    from prvgui.accounting.numerics.pipeline import make_plan
    rng = np.random.default_rng(11)
    plan = make_plan(0.01, 1.0, 1000, 1e-16, rows=1000)
    rows = [discretize(subsampled_gaussian_prv(float(s), float(q), "remove"), plan.h, 1e-20,
                       coarse=plan.coarse, tiers=plan.tiers)
            for s, q in zip(rng.uniform(0.8, 1.5, 12), rng.uniform(0.001, 0.01, 12))]
    rows.append(discretize(Laplace(2.0).prv("remove"), plan.h, 1e-20))
    idx = np.arange(0, window.LAMBDAS.size, 2)
    together = [window.PreparedRow(d, window.ONCE_BLOCKS) for d in rows]
    alone = [window.PreparedRow(d, window.ONCE_BLOCKS) for d in rows]
    for negative in (False, True):
        window._fill(together, [(negative, idx)])
        a = np.array([r.cgf(negative, idx) for r in together])
        b = np.array([r.cgf(negative, idx) for r in alone])
        assert np.allclose(a, b, rtol=1e-13, atol=1e-13)
    fresh = [(window.PreparedRow(d, window.ONCE_BLOCKS), 1) for d in rows]
    lo, hi, err = window.choose_window(fresh, 1e-17)
    one_by_one = [(r, 1) for r in alone]
    assert (lo, hi, err) == pytest.approx(window.choose_window(one_by_one, 1e-17), rel=1e-12, abs=1e-12)


def test_both_sides_filled_together_and_summed_as_one_by_one():
    """window._fill of both sides' lambdas in one pass gives, to the bit, the bounds of each side
    filled alone; window._cgf_sum gives, to the bit, the sum over the rows one after the other
    (k times each row's bound), and nothing for no rows."""
    from prvgui.accounting.numerics import window
    rng = np.random.default_rng(5)
    rows = [discretize(subsampled_gaussian_prv(float(s), float(q), "remove"), 1e-3, 1e-20)
            for s, q in zip(rng.uniform(0.8, 1.5, 9), rng.uniform(0.001, 0.05, 9))]
    sides = [(False, np.arange(30, 33)), (True, np.arange(40, 44))]
    together = [window.PreparedRow(d, window.ONCE_BLOCKS) for d in rows]
    apart = [window.PreparedRow(d, window.ONCE_BLOCKS) for d in rows]
    window._fill(together, sides)
    for side in sides:
        window._fill(apart, [side])
    for a, b in zip(together, apart):
        assert np.array_equal(a._cgf, b._cgf, equal_nan=True)
    ks = rng.integers(1, 9, len(rows)).tolist()
    for negative, idx in sides:
        want = sum((k * r.cgf(negative, idx) for r, k in zip(apart, ks)), np.zeros(idx.size))
        assert np.array_equal(window._cgf_sum(list(zip(together, ks)), negative, idx), want)
        assert np.array_equal(window._cgf_sum([], negative, idx), np.zeros(idx.size))


def test_consumed_rows_are_let_go_and_compose_the_same(monkeypatch):
    """compose_many(consume=True) empties the caller's list at once and lets each row go as it
    joins its group (no reference is left to a composed row's cells), with the very composition
    the kept rows give."""
    import gc
    import weakref
    from prvgui.accounting.numerics.packed import pack
    monkeypatch.setattr(tree, "TREE_ALWAYS", 32)
    h, mechs = 2e-4, [SubsampledGaussian(0.9 + 0.01 * i, 0.01) for i in range(40)]
    made = [(pack(d), k) for d, k in _rows([(m, 1) for m in mechs], h, 40)]
    kept = tree.compose_many(list(made), 1e-12)
    rows = list(made)
    gone = [weakref.ref(d.idx) if hasattr(d, "idx") else weakref.ref(d.pmf) for d, _ in rows]
    del made
    seen = []
    composed = tree.compose
    monkeypatch.setattr(tree, "compose", lambda g, *a, **k: (gc.collect(), seen.append(
        sum(r() is None for r in gone)), composed(g, *a, **k))[2])
    got = tree.compose_many(rows, 1e-12, consume=True)
    # (every row composed in a group is let go before the top; the rest are the top's rows)
    assert rows == [] and seen[0] == 0 and seen[-1] == len(gone) - len(gone) % tree.FAN_IN
    assert np.array_equal(got.pmf, kept.pmf) and got.err_abs == kept.err_abs and got.n_start == kept.n_start


def test_every_group_lets_its_rows_go_before_its_inverse_transform(monkeypatch):
    """Each composition of the tree (its groups and its top) is given its rows to let go: when
    its inverse transform runs none of them is held, by the tree's lists, its window's
    cumulants (``kept``) or a loop variable; the result is the kept rows' one, bit for bit."""
    import gc
    import weakref
    from prvgui.accounting.numerics import compose as C
    from prvgui.accounting.numerics.packed import pack
    monkeypatch.setattr(tree, "TREE_ALWAYS", 32)
    h, mechs = 2e-4, [SubsampledGaussian(0.9 + 0.01 * i, 0.01) for i in range(70)]
    made = [(pack(d), k) for d, k in _rows([(m, 1) for m in mechs], h, 70)]
    want = tree.compose_many(list(made), 1e-12)
    current: list = []
    alive: list[int] = []
    composed, finish = tree.compose, C.finish

    def group(g, *a, **k):
        current[:] = [weakref.ref(d.pmf) for d, _ in g]
        return composed(g, *a, **k)

    def probe(*a, **k):
        gc.collect()
        alive.append(sum(r() is not None for r in current))
        return finish(*a, **k)
    monkeypatch.setattr(tree, "compose", group)
    monkeypatch.setattr(C, "finish", probe)
    got = tree.compose_many(made, 1e-12, consume=True)
    assert len(alive) == 5 and alive == [0] * 5  # (four groups of FAN_IN, then the top)
    assert np.array_equal(got.pmf, want.pmf) and got.err_abs == want.err_abs and got.n_start == want.n_start


def test_the_groups_fft_plans_go_before_the_top_and_change_nothing(monkeypatch):
    """scipy.fft keeps its last lengths' plans (0.2 GB at 10^5 discrete Gaussians): the tree lets
    them go once its groups are composed, just before its top, and a plan made again transforms
    to the same bits."""
    from scipy import fft as scipy_fft

    from prvgui.accounting.numerics import compose as C
    from prvgui.accounting.numerics.packed import pack
    x = np.random.default_rng(2).random((3, 40_000))
    before = scipy_fft.rfft(x, axis=-1, workers=2)
    C.release_fft_plans()
    assert np.array_equal(scipy_fft.rfft(x, axis=-1, workers=2), before)
    monkeypatch.setattr(tree, "TREE_ALWAYS", 32)
    h, mechs = 2e-4, [SubsampledGaussian(0.9 + 0.01 * i, 0.01) for i in range(40)]
    made = [(pack(d), k) for d, k in _rows([(m, 1) for m in mechs], h, 40)]
    want = tree.compose_many(list(made), 1e-12)
    events: list[str] = []
    composed, release = tree.compose, tree.release_fft_plans

    def compose(g, *a, **k):
        events.append("group" if "window_hint" in k else "top")
        return composed(g, *a, **k)

    def released():
        events.append("release")
        release()
    monkeypatch.setattr(tree, "compose", compose)
    monkeypatch.setattr(tree, "release_fft_plans", released)
    got = tree.compose_many(made, 1e-12)
    assert events == ["group", "group", "release", "top"]
    assert np.array_equal(got.pmf, want.pmf) and got.err_abs == want.err_abs
    # a composition past BATCH_N (NumPy's long transforms, one row at a time) lets them go first
    flushed: list[int] = []
    monkeypatch.setattr(C, "release_fft_plans", lambda: flushed.append(1))
    monkeypatch.setattr(C, "BATCH_N", 1 << 10)
    rows = [(d, k) for d, k in _rows([(m, 1) for m in mechs[:3]], h, 3)]
    C.compose(rows, 1e-12)
    assert flushed == [1]


def test_many_rows_let_their_tables_go_and_make_them_again_the_same(monkeypatch):
    """Past RELEASE_BYTES of tables, many discrete Gaussians' PRVs let them go as each is
    discretised (pipeline.discretize_many); the rows are those made with the tables kept, a
    second discretisation (the tables made again) gives them again, and so does the bracket."""
    from prvgui.accounting.kinds.discrete_gaussian import DiscreteGaussian
    from prvgui.accounting.numerics import pipeline, reuse
    rng = np.random.default_rng(11)
    mechs = [DiscreteGaussian(float(s)) for s in rng.uniform(20.0, 60.0, tree.TREE_ALWAYS + 20)]
    plan = pipeline.make_plan(0.01, 1.0, len(mechs), 1e-9, len(mechs))

    def rows(release_bytes):
        monkeypatch.setattr(pipeline, "RELEASE_BYTES", release_bytes)
        reuse.clear()
        prvs = [(p, 1) for p in reuse.prvs_of(mechs, "remove")]
        return prvs, pipeline.discretize_many(prvs, plan, 1 << 24)
    prvs, kept = rows(1 << 40)
    assert all(p.lattice.release.__self__._near is not None for p, _ in prvs)
    prvs, let_go = rows(0)
    assert all(p.lattice.release.__self__._near is None for p, _ in prvs)
    again = pipeline.discretize_many(prvs, plan, 1 << 24)
    def same(x, y) -> bool:
        return np.array_equal(x, y) if isinstance(x, np.ndarray) or isinstance(y, np.ndarray) else x == y
    for (a, _), (b, _), (c, _) in zip(kept, let_go, again):
        for d in (b, c):
            assert np.array_equal(a.idx, d.idx) and np.array_equal(a.vals, d.vals)
            assert all(same(getattr(a.stub, f.name), getattr(d.stub, f.name)) for f in dataclasses.fields(a.stub))
    monkeypatch.setattr(pipeline, "RELEASE_BYTES", 0)
    reuse.clear()
    low = Accountant([Row(m, 1) for m in mechs], 0.01).epsilon(1e-6)
    monkeypatch.setattr(pipeline, "RELEASE_BYTES", 1 << 40)
    reuse.clear()
    assert Accountant([Row(m, 1) for m in mechs], 0.01).epsilon(1e-6) == low


@pytest.mark.parametrize("batch_n", [None, 1024])
def test_a_consuming_composition_lets_each_row_go_once_transformed(monkeypatch, batch_n):
    """compose(consume=True), as the tree's top composition calls it: the caller's list is
    emptied at once, no row is held when the inverse transform runs, and the composition is
    the very one of the rows kept (the same products in the same order). Past BATCH_N (the
    rows transformed one by one) the widest row goes first, each transformed as it stands
    (compose.padded_spectrum): the same composition to the products' rounding."""
    import gc
    import weakref
    from prvgui.accounting.numerics import compose as C
    h, mechs = 2e-4, [SubsampledGaussian(0.9 + 0.05 * i, 0.01) for i in (2, 0, 5, 1, 4, 3)]
    rows = _rows([(m, 1) for m in mechs], h, 6)
    want = C.compose(list(rows), 1e-12)
    if batch_n is not None:
        monkeypatch.setattr(C, "BATCH_N", batch_n)
        seen, padded = [], C.padded_spectrum

        def spy(d, n):
            seen.append(d.pmf.size)
            return padded(d, n)
        monkeypatch.setattr(C, "padded_spectrum", spy)
    refs = [weakref.ref(d.pmf) for d, _ in rows]
    alive, real = [], C.finish

    def probe(*a, **k):
        gc.collect()
        alive.append(sum(r() is not None for r in refs))
        return real(*a, **k)
    monkeypatch.setattr(C, "finish", probe)
    given = list(rows)
    del rows
    got = C.compose(given, 1e-12, consume=True)
    assert given == [] and alive == [0]
    if batch_n is None:
        assert np.array_equal(got.pmf, want.pmf) and got.err_abs == want.err_abs and got.n_start == want.n_start
        return
    assert len(seen) >= 4 and seen == sorted(seen, reverse=True) and len(set(seen)) == len(seen)
    assert got.n_start == want.n_start and got.pmf.size == want.pmf.size
    assert np.max(np.abs(got.pmf - want.pmf)) <= 1e-14 and got.err_abs == pytest.approx(want.err_abs, rel=1e-6)


def test_counts_share_a_mesh_by_their_totals():
    """The mesh is planned for the total draws: a row's counts beside many other draws share one
    (count_groups with the others' draws), alone they are grouped by a factor of 4 as before."""
    from prvgui.accounting.numerics.sweep import count_groups
    cs = np.arange(1, 11)
    assert [g.tolist() for g in count_groups(cs)] == [list(range(2, 10)), [0, 1]]
    assert [g.tolist() for g in count_groups(cs, fixed=10_000)] == [list(range(10))]
    assert len(count_groups(np.array([0, 10, 100, 400]), fixed=40)) == 2


def test_the_steps_curve_beside_many_rows_composes_them_once(monkeypatch):
    """One row's counts 1 to 10 beside 300 distinct rows drawn once: the others are composed once
    (they were twice, for counts 1 to 2 and 3 to 10), and every point still overlaps the
    composition with that count computed on its own."""
    from prvgui.accounting.numerics import sweep as sweep_mod
    rows = [Row(SubsampledGaussian(1.0 + 0.001 * i, 0.004 + 0.00001 * i), 1) for i in range(301)]
    groups = []
    real = sweep_mod.count_groups
    monkeypatch.setattr(sweep_mod, "count_groups", lambda *a, **k: (lambda g: groups.append(len(g)) or g)(real(*a, **k)))
    acc = Accountant(rows, 0.01)
    counts, bounds = acc.epsilon_vs_count(0, list(range(1, 11)), 1e-6)
    assert groups and all(g == 1 for g in groups)  # (each order's sweep, the screen's too)
    for c, b in zip(counts, bounds):
        if c in (1, 4, 10):
            alone = Accountant([Row(rows[0].mechanism, int(c))] + rows[1:], 0.01).epsilon(1e-6)
            assert b.lower <= alone.upper and alone.lower <= b.upper
            assert b.upper - b.lower <= 2 * 0.01 * 1.05
