"""The shuffle model (kinds/shuffle_model.py, clones.py) against independent references:

* the clone pair of Feldman, McMillan, Talwar (FOCS 2021, Thm 3.2) summed exactly in mpmath;
* the published numbers of apple/ml-shuffling-amplification (README) and that reference code's
  output on a grid (run once at commit 993d285; its numbers are certified brackets of the same
  pair, from binary search with its upper/lower deltacomp);
* the closed-form bounds (the README's, and FMT21's main theorem as the seed blog post states
  it): the numerical pair can only be tighter;
* a realised pair: binary randomized response with the others' bits 0, shuffled (an
  eps0-DP randomizer, so the clone pair must dominate it);
* monotonicity (more users: less epsilon; shuffling never hurts: epsilon <= eps0) and bad input.
"""
import json
import math
import subprocess
import sys

import mpmath as mp
import numpy as np
import pytest

from prvgui.accounting import Accountant, Row
from prvgui.accounting.pairs import clones
from prvgui.accounting.queries.comparisons import compare_epsilon
from prvgui.accounting.core.values import Relation
from prvgui.accounting.kinds.shuffle_model import ClonePair, ShuffleModel
from prvgui.accounting.mechanisms import mechanism_from_params
from prvgui.accounting.pairs.rdp import rr_rdp
from prvgui.document import dumps
from prvgui.document.fileio import FileFormatError, loads_composition
from prvgui.document.model import Document, RowSpec

REPLACE = "replace_one"
mp.mp.dps = 30


# ------------------------------------------------------------------ independent references
def clone_delta_exact(eps0: float, n: int, eps: float, cut: float = 1e-30) -> float:
    """delta(eps) = sum_c pi(c) sum_a (P(a|c) - e^eps Q(a|c))_+ for the clone pair, summed
    directly: C ~ Binom(n-1, e^-eps0); given m = C + 1 the first count a has
    P(a|m) = 2 B_m(a) (1 + E a/m) / (2 + E), Q(a|m) = 2 B_m(a) (1 + E (1 - a/m)) / (2 + E),
    E = e^eps0 - 1 (the laws of A + D and A + 1 - D in FMT21 Thm 3.2). The positive terms are
    those with a/m > u* = (e^eps (1 + E) - 1) / (E (1 + e^eps)); each row's sums of binom(m, a)
    and a binom(m, a) over them are exact integers, the rest is mpmath at 30 digits. Rows with
    pi(c) < cut are skipped (their total is below n * cut)."""
    e0, ee = mp.mpf(eps0), mp.exp(mp.mpf(eps))
    p, big = mp.exp(-e0), mp.expm1(e0)
    ustar = (ee * (1 + big) - 1) / (big * (1 + ee))
    total = mp.mpf(0)
    for c in range(n):
        pi = mp.binomial(n - 1, c) * p ** c * (1 - p) ** (n - 1 - c)
        if pi < cut:
            continue
        m = c + 1
        s0 = s1 = 0
        b, a = 1, m  # binom(m, m), then binom(m, a - 1) = binom(m, a) a / (m - a + 1)
        while a >= 0 and a > ustar * m:
            s0, s1 = s0 + b, s1 + a * b
            b, a = b * a // (m - a + 1), a - 1
        row = (1 - ee * (1 + big)) * s0 + big * (1 + ee) * mp.mpf(s1) / m
        total += pi * 2 * row / ((2 + big) * mp.mpf(2) ** m)
    return float(total)


def shuffled_rr_delta(eps0: float, n: int, eps: float) -> float:
    """A realised pair: n users run binary randomized response (true bit with probability
    e^eps0 / (1 + e^eps0)), the others' bits are 0, the first user's bit is 0 or 1; the shuffled
    output is the number of ones. Both orders, exact in mpmath."""
    al = mp.exp(eps0) / (1 + mp.exp(eps0))
    q, ee = 1 - al, mp.exp(mp.mpf(eps))
    rest = [mp.binomial(n - 1, k) * q ** k * al ** (n - 1 - k) for k in range(n)] + [mp.mpf(0)]
    p1 = [rest[k] * q + (rest[k - 1] * al if k else 0) for k in range(n + 1)]   # bit 1
    p0 = [rest[k] * al + (rest[k - 1] * q if k else 0) for k in range(n + 1)]   # bit 0
    fwd = sum(max(mp.mpf(0), a - ee * b) for a, b in zip(p1, p0))
    bwd = sum(max(mp.mpf(0), b - ee * a) for a, b in zip(p1, p0))
    return float(max(fwd, bwd))


def bracket(eps0, n, delta=1e-6, eps_error=1e-3, count=1):
    return Accountant([Row(ShuffleModel(eps0, n), count)], eps_error, REPLACE).epsilon(delta)


# ------------------------------------------------------------------ the masses
def test_log_binomial_masses_match_mpmath_to_a_few_ulps():
    rng = np.random.default_rng(12)
    m = np.concatenate([[1, 2, 3, 15, 16, 17, 40, 1000], rng.integers(1, 10**6 + 2, 60)])
    spread = np.sqrt(m * math.log(1 / clones.TAU) / 2)
    a = np.clip(np.rint(m / 2 + rng.uniform(-1, 1, m.size) * spread), 0, m).astype(np.int64)
    a[:3] = [0, 2, 3]  # the edges a = 0 and a = m
    cases = [(m, a, 0.5)]
    for n1, eps0 in ((10**6 - 1, 0.7), (999, 4.0), (10**6 - 1, 12.0)):  # rows: Binom(n - 1, p)
        p = clones.quantized(math.exp(-eps0), n1)
        sd = math.sqrt(n1 * p * (1 - p))
        k = np.clip(np.rint(n1 * p + rng.uniform(-9, 9, 20) * sd), 0, n1).astype(np.int64)
        cases.append((np.full(k.size, n1), k, p))
    for nn, kk, p in cases:
        got = clones.log_binom_pmf(kk, nn, p)
        for ki, ni, g in zip(kk.tolist(), nn.tolist(), got):
            exact = (mp.log(mp.binomial(ni, ki)) + ki * mp.log(mp.mpf(p))
                     + (ni - ki) * mp.log(1 - mp.mpf(p)))
            # a few ulps of its size: the mass exp(.) to a relative 1e-14 where it matters
            assert abs(g - float(exact)) <= 8 * 2.0 ** -53 * max(1.0, abs(g)), (ki, ni, p)


def test_atom_masses_at_a_million_users_are_within_the_stated_error():
    """Whole atom masses P(m, a) = pi(m) 2 B_m(a) (1 + E a/m) / (2 + E) at n = 10^6, for rows
    and counts across the kept windows, against mpmath (the same rounded p and E)."""
    n, eps0 = 10**6, 0.7
    p = clones.quantized(math.exp(-eps0) * (1 - 4 * clones._U), n)
    e = math.expm1(eps0) * (1 + 4 * clones._U)
    c_lo, c_hi = clones._c_range(n - 1, p)
    c = np.array([c_lo, (c_lo + c_hi) // 2, c_hi])
    lo, hi = clones._window(c + 1.0)
    rows = clones._Rows(e, c + 1, lo, hi, np.exp(clones.log_binom_pmf(c, np.full(3, n - 1), p)))
    aa, mm, loss, mass = rows.atoms(0, 3)
    pick = np.linspace(0, aa.size - 1, 40).astype(int)
    mp_p, mp_e = mp.mpf(p), mp.mpf(e)
    for i in pick:
        a, m = int(aa[i]), int(mm[i])
        pi = mp.binomial(n - 1, m - 1) * mp_p ** (m - 1) * (1 - mp_p) ** (n - m)
        exact = pi * 2 * mp.binomial(m, a) / mp.mpf(2) ** m * (1 + mp_e * a / m) / (2 + mp_e)
        assert abs(mass[i] / float(exact) - 1) <= clones.EVAL_REL, (a, m)
        l_exact = mp.log((1 + mp_e * a / m) / (1 + mp_e * (m - a) / m))
        assert abs(loss[i] - float(l_exact)) <= 1e-15


# ------------------------------------------------------------------ the pair, exactly
@pytest.mark.parametrize("eps0,n", [(1.0, 50), (3.0, 50), (0.3, 20)])
def test_small_n_atoms_are_the_exact_clone_pair(eps0, n):
    prv = clones.clone_prv(eps0, n)
    assert len(prv.atoms) <= clones.MAX_ATOMS and prv.inf_mass == 0
    assert math.fsum(m for _, m in prv.atoms) == pytest.approx(1.0, abs=1e-14)
    for eps in (0.0, 0.1, 0.4, 0.8 * eps0):
        exact = clone_delta_exact(eps0, n, eps)
        got = prv.delta(eps)
        # never below (conservative); above by at most the rounding slack at the top loss
        assert exact <= got <= exact * (1 + 1e-12) + 1e-12, eps
        b = Accountant([Row(ShuffleModel(eps0, n), 1)], 0.01, REPLACE).delta(eps)
        assert b.lower <= exact + 1e-12 and exact <= b.upper


def test_large_pairs_dominate_the_clone_pair_and_stay_close():
    """n = 1000: too many atoms, so buckets (connect the dots) make a dominating pair."""
    prv = clones.clone_prv(1.0, 1000)
    assert len(prv.atoms) <= clones.MAX_ATOMS + 2
    for eps in (0.02, 0.1):
        exact = clone_delta_exact(1.0, 1000, eps)
        assert exact <= prv.delta(eps) <= exact * (1 + 1e-4) + 1e-12
        b = Accountant([Row(ShuffleModel(1.0, 1000), 1)], 0.005, REPLACE).delta(eps)
        assert b.lower <= exact <= b.upper  # (the buckets' excess is far inside the bracket)


def test_groups_of_rows_and_buckets_still_dominate(monkeypatch):
    """Force step 3 (connect the dots on 128 buckets), then also step 2 (rows in runs of 2), at
    n = 200: the PRV stays above the exact clone pair. These buckets (g = 1/32) alone are within 1%; runs
    of 2 rows at ~27 clones are a 7% coarsening here (in use runs are < 1e-3 of the clones)."""
    monkeypatch.setattr(clones, "MAX_ATOMS", 300)
    monkeypatch.setattr(clones, "BUCKETS", 128)
    eps_list = (0.05, 0.2, 0.5, 1.0)
    exact = [clone_delta_exact(2.0, 200, eps) for eps in eps_list]
    try:
        for budget, rel in ((clones.BUDGET, 0.01), (2000, 0.2)):
            monkeypatch.setattr(clones, "BUDGET", budget)
            clones.clone_prv.cache_clear()
            prv = clones.clone_prv(2.0, 200)
            assert len(prv.atoms) <= 2 * 128 + 3
            for eps, ex in zip(eps_list, exact):
                assert ex <= prv.delta(eps) <= ex * (1 + rel) + 1e-12, (budget, eps)
    finally:
        clones.clone_prv.cache_clear()


def test_the_pair_is_symmetric_and_never_beyond_eps0():
    for eps0, n in [(1.0, 50), (2.0, 10**4), (0.7, 10**6), (8.0, 10**6)]:
        prv = clones.clone_prv(eps0, n)
        locs = np.array([x for x, _ in prv.atoms])
        assert np.all(np.abs(locs) <= eps0 * (1 + 1e-12))
        assert len(prv.atoms) <= clones.MAX_ATOMS + 2 and prv.inf_mass == 0
        assert prv.delta(eps0 * (1 + 1e-12)) == 0  # shuffling never hurts
    assert ShuffleModel(1.0, 50).under(Relation(REPLACE)).orders() == ("remove",)


def test_a_realised_pair_never_exceeds_the_clone_pair():
    """Binary randomized response is eps0-DP, so its shuffled pair is dominated by the clone pair:
    delta_RR <= delta_clone everywhere, and our certified epsilon is above RR's."""
    for eps0, n in [(1.0, 50), (3.0, 50), (2.0, 400)]:
        for eps in (0.05, 0.3, 0.6):
            assert shuffled_rr_delta(eps0, n, eps) <= clone_delta_exact(eps0, n, eps) * (1 + 1e-12) + 1e-30
        b = bracket(eps0, n, 1e-6, 0.01)
        assert shuffled_rr_delta(eps0, n, b.upper) <= 1e-6


# ------------------------------------------------------------------ published numbers
def test_the_reference_repository_example():
    """apple/ml-shuffling-amplification README: n = 10^5, eps0 = 4, delta = 1e-6: 'eps between
    0.1675385583317841 and 0.172790550755978'; closed form at most 0.5378040242374512."""
    b = bracket(4.0, 10**5, 1e-6, 2e-4)
    assert b.lower <= 0.172790550755978 and b.upper >= 0.1675385583317841  # the same pair
    assert 0.1675385583317841 <= b.estimate <= 0.172790550755978
    assert b.upper <= 0.5378040242374512


# computeamplification.numericalanalysis(n, eps0, 1e-6, 20, 100, False / True) at commit 993d285
APPLE = [(10**4, 1, 0.05263122640201969, 0.05340494022278079),
         (10**4, 2, 0.1523120844443614, 0.15854980336849395),
         (10**4, 4, 0.5699501037597656, 0.8888664245605469),
         (10**5, 1, 0.015270902442538013, 0.015508926899924757),
         (10**5, 2, 0.044937564195462035, 0.045212553415304994),
         (10**5, 4, 0.16745752172992645, 0.17243409228578122),
         (10**6, 1, 0.0043341994485529105, 0.004581214126088508),
         (10**5, 8, 1.7378387451171875, 8.0),
         (10**6, 2, 0.012955835217308698, 0.013525056273708085),
         (10**6, 4, 0.049235834411823734, 0.050080249726684414),
         (10**6, 8, 0.4251805914216796, 0.5148745644048706)]


@pytest.mark.parametrize("n,eps0,lo,up", APPLE)
def test_the_reference_code_brackets_the_same_epsilon(n, eps0, lo, up):
    b = bracket(float(eps0), n, 1e-6, min(1e-3, 0.05 * lo))
    assert b.lower <= up and b.upper >= lo  # two certified brackets of one number overlap
    assert b.upper - b.lower <= 0.1 * lo + 1e-9


@pytest.mark.parametrize("n,eps0", [(10**4, 1.0), (10**5, 2.0), (10**6, 4.0), (10**6, 0.5)])
def test_below_the_closed_form_of_the_main_theorem(n, eps0):
    """FMT21 main theorem as the seed blog post (differentialprivacy.org, 'Privacy doona') states
    it: eps <= log(1 + 16 (e^eps0 - 1)/(e^eps0 + 1) sqrt(e^eps0 log(4/delta) / n)) when
    eps0 <= log(n / (16 log(2/delta)))."""
    delta = 1e-6
    assert eps0 <= math.log(n / (16 * math.log(2 / delta)))
    closed = math.log1p(16 * math.tanh(eps0 / 2) * math.sqrt(math.exp(eps0) * math.log(4 / delta) / n))
    assert bracket(eps0, n, delta, 1e-3).upper <= closed


# ------------------------------------------------------------------ monotonicity
def test_more_users_less_epsilon_and_never_above_eps0():
    for eps0 in (1.0, 4.0):
        bs = [bracket(eps0, n, 1e-6, 1e-3) for n in (100, 10**3, 10**4, 10**5, 10**6)]
        est = [b.estimate for b in bs]
        assert all(x > y for x, y in zip(est, est[1:])), est
        assert all(b.lower <= eps0 and b.upper <= eps0 + 2e-3 for b in bs)
    for n in (2, 5):
        b = bracket(2.0, n, 1e-6, 1e-3)
        assert b.lower <= 2.0 <= b.upper + 1e-9  # few users: almost no amplification
    # the exact pair: delta(eps) falls with n (more clones are a post-processing)
    for eps in (0.1, 0.5):
        ds = [clones.clone_prv(1.5, n).delta(eps) for n in (2, 3, 10, 30, 60)]
        assert all(x >= y for x, y in zip(ds, ds[1:])), ds


def test_more_local_epsilon_more_epsilon_and_compositions_grow():
    est = [bracket(e, 10**4, 1e-6, 1e-3).estimate for e in (0.5, 1.0, 2.0, 4.0)]
    assert all(x < y for x, y in zip(est, est[1:]))
    one, ten = bracket(2.0, 10**4, 1e-6, 1e-3), bracket(2.0, 10**4, 1e-6, 1e-3, count=10)
    assert one.upper < ten.lower <= 10 * one.upper


# ------------------------------------------------------------------ relations and input
def test_replace_one_only_and_no_groups():
    mech = ShuffleModel(1.0, 1000)
    with pytest.raises(ValueError, match='replace-one neighbouring.*set Neighbouring to “Replace one record”'):
        mech.check_relation("add_remove")
    with pytest.raises(ValueError, match="replace_one"):
        mech.prv()
    with pytest.raises(ValueError, match="group privacy is not defined for the shuffle model"):
        mech.check_relation(Relation(REPLACE, 2))
    with pytest.raises(ValueError, match=r"row 1 \(Shuffle model.*replace-one"):
        Accountant([Row(mech, 1)]).epsilon(1e-6)
    with pytest.raises(ValueError, match="group privacy"):
        Accountant([Row(mech, 1)], neighbouring=REPLACE, group_size=3)
    assert mech.under(Relation(REPLACE)) == ClonePair(1.0, 1000)
    doc = Document([RowSpec("shuffle_model", {"epsilon0": 1.0, "n": 1000}, 1)])
    assert "replace_one" in doc.errors()[0][1]
    doc.neighbouring = REPLACE
    assert doc.errors() == [] and doc.engine_rows() == [Row(mech, 1)]


@pytest.mark.parametrize("params,text", [
    ({"epsilon0": 1.0, "n": 1}, "Users n must be between 2 and 1e6; you typed 1"),
    ({"epsilon0": 1.0, "n": 2.5}, "Users n must be a whole number; you typed 2.5"),
    ({"epsilon0": 1.0, "n": 10**7}, "Users n must be between 2 and 1e6; you typed 10000000"),
    ({"epsilon0": 1.0, "n": math.inf}, "Users n must be .*; you typed inf"),
    ({"epsilon0": -0.5, "n": 100}, "Local ε₀ must be between 0 and 100; you typed -0.5"),
    ({"epsilon0": math.inf, "n": 100}, "Local ε₀ must be .*; you typed inf"),
    ({"epsilon0": math.nan, "n": 100}, "Local ε₀ must be a number"),
    ({"epsilon0": "1", "n": 100}, "Local ε₀ must be a number"),
    ({"epsilon0": 1.0}, "Users n must be a number .*it is missing"),
])
def test_bad_input_names_the_field(params, text):
    with pytest.raises(ValueError, match=text):
        mechanism_from_params("shuffle_model", params)


def test_whole_numbers_are_accepted_and_edges_work():
    assert ShuffleModel(1.0, 1000.0).n == 1000 and isinstance(ShuffleModel(1.0, 1000.0).n, int)
    assert ShuffleModel(0.0, 10).under(Relation(REPLACE)).is_trivial()
    assert Accountant([Row(ShuffleModel(0.0, 10), 5)], 0.01, REPLACE).epsilon(1e-6).upper == 0.0
    b = bracket(20.0, 10**6, 1e-6, 0.01)  # almost never a clone: randomized response at eps0
    assert b.lower <= 20.0 <= b.upper + 1e-9


def test_file_format_and_command_line(tmp_path):
    doc = Document([RowSpec("shuffle_model", {"epsilon0": 2.0, "n": 10000}, 4, "survey")], REPLACE)
    text = dumps(doc)
    assert loads_composition(text).rows == doc.rows
    with pytest.raises(FileFormatError, match=r"row 1 \(.*\), kind: .*replace_one"):
        loads_composition(text.replace('"replace_one"', '"add_remove"'))
    path = tmp_path / "shuffle.json"
    path.write_text(text)
    out = subprocess.run([sys.executable, "-m", "prvgui", "epsilon", str(path), "--delta", "1e-6", "--json"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    assert got["neighbouring"] == REPLACE and got["epsilon"]["upper"] < 2.0


def test_comparisons_rdp_is_a_valid_upper_bound():
    """RDP of the clone pair from its PRV: at or above the exact RDP (mpmath, n = 50), never above
    eps0-randomized response's; the comparison accountants run on the pair."""
    eps0, n = 1.0, 50
    orders = np.array([1.5, 2.0, 5.0, 20.0])
    got = clones.clone_rdp(eps0, n, orders)
    e0 = mp.mpf(eps0)
    p, big = mp.exp(-e0), mp.expm1(e0)
    for alpha, g in zip(orders, got):
        s = mp.mpf(0)
        for c in range(n):
            pi = mp.binomial(n - 1, c) * p ** c * (1 - p) ** (n - 1 - c)
            m = c + 1
            for a in range(m + 1):
                u = mp.mpf(a) / m
                b = mp.binomial(m, a) / mp.mpf(2) ** m
                pp, qq = 2 * b * (1 + big * u) / (2 + big), 2 * b * (1 + big * (1 - u)) / (2 + big)
                s += pi * pp ** alpha * qq ** (1 - alpha)
        exact = float(mp.log(s) / (alpha - 1))
        assert exact <= g <= exact + 1e-9
    assert np.all(got <= rr_rdp(eps0, orders))
    acc = Accountant([Row(ShuffleModel(2.0, 10**4), 10)], 0.01, REPLACE)
    b = acc.epsilon(1e-6)
    comps = compare_epsilon(acc.rows, 1e-6)
    assert comps["rdp"].value is not None and comps["rdp"].value >= b.lower
    assert comps["basic"].value == pytest.approx(20.0)


def test_calibrating_the_local_epsilon_never_overshoots():
    from prvgui.accounting.queries.calibrate import calibrate
    cal = calibrate([Row(ShuffleModel(1.0, 1000), 1)], 0, "epsilon0", 1.0, 1e-6, 0.02,
                    relation=Relation(REPLACE))
    assert cal.epsilon.upper <= 1.0 and 1.5 < cal.value < 50.0  # amplified: eps0 well above 1
    assert bracket(cal.value * 1.02, 1000, 1e-6, 0.02).upper > 1.0 - 0.04


def test_the_composed_pld_is_drawn_as_a_density():
    """Thousands of atoms closer than the mesh: the plot shows a density, not one merged atom."""
    from prvgui.engine.view_model import Request, compute
    res = compute(Request((Row(ShuffleModel(2.0, 10**5), 5),), 1e-6, 0.5, 0.01, REPLACE,
                          profile_points=0, tradeoff_points=0))
    dens = res.pld.columns["density"]
    assert res.pld_atoms is None and dens is not None and res.pld.x.size > 50
    assert float(np.sum(dens) * (res.pld.x[1] - res.pld.x[0])) == pytest.approx(1.0, abs=1e-6)


def test_the_proven_lower_bound_is_shuffled_randomized_response_below_the_clone_pair():
    """The clone pair is not realised; n users running eps0 randomized response are: the count
    of ones, computed here directly from binomials (mpmath), lies at or below the certified
    upper bound, and the accountant's lower bound for it is at most that exact value."""
    import mpmath as mp

    from prvgui.accounting import Accountant, Row
    from prvgui.accounting.queries import bracket
    from prvgui.accounting.kinds.shuffle_model import ShuffleModel
    e0, n, eps = 2.0, 60, 0.5
    mp.mp.dps = 40
    r1 = mp.e ** e0 / (1 + mp.e ** e0)
    r0 = 1 - r1
    B = [mp.binomial(n - 1, k) * r0 ** k * r1 ** (n - 1 - k) for k in range(n)] + [mp.mpf(0)]
    P = [r1 * (B[k - 1] if k else 0) + r0 * B[k] for k in range(n + 1)]
    Q = [r0 * (B[k - 1] if k else 0) + r1 * B[k] for k in range(n + 1)]
    exact = max(sum(max(a - mp.e ** eps * b, 0) for a, b in zip(P, Q)),
                sum(max(b - mp.e ** eps * a, 0) for a, b in zip(P, Q)))
    rows = [Row(ShuffleModel(e0, n), 1)]
    acc = Accountant(rows, neighbouring="replace_one")
    assert float(exact) <= acc.delta(eps).upper  # the clone pair bounds the real randomizer
    low = Accountant(bracket.attack_rows(rows, "replace_one")[0]).delta(eps)
    assert low.lower <= float(exact) * (1 + 1e-9) <= low.upper * (1 + 1e-9) + 1e-12
    at_least = bracket.epsilon_at_least(rows, 1e-6, "replace_one")
    assert 0 < at_least <= acc.epsilon(1e-6).upper
