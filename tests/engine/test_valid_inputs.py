"""Valid input answers (issue 31): the failures users met, each at its root."""
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import prvgui
from prvgui.accounting.queries.curves import atom_cells
from prvgui.accounting.core.values import Relation
from prvgui.accounting.mechanisms import Row, mechanism_from_params
from prvgui.accounting.pairs.mixture import replace_gaussian_prv
from prvgui.engine.view_model import Request, compute, published


@given(st.lists(st.floats(0.0, 1.0), min_size=0, max_size=30), st.sampled_from(["some", "all", "none"]))
@settings(max_examples=200, deadline=None)
def test_atom_cells_take_any_number_of_cells(cells, kind):
    """A composed pmf of fewer cells than the atom window (a narrow PLD) has atoms too: indices
    inside the array, masses positive and at most the cells'."""
    r = np.asarray(cells, dtype=float)
    idx, mass = atom_cells(r, kind)
    assert idx.shape == mass.shape
    assert np.all((idx >= 0) & (idx < r.size))
    assert np.all(mass > 0) and np.all(mass <= r[idx] + 1e-300)


@pytest.mark.parametrize("kind, params", [
    ("laplace", {"scale": 1000.0}), ("subsampled_laplace", {"scale": 2.0, "sampling_rate": 0.01}),
    ("randomized_response", {"epsilon": 1e-4}), ("gaussian", {"sigma": 1e4}),
    ("discrete_laplace", {"scale": 500.0})])
def test_narrow_distributions_draw_their_pld(kind, params):
    """The settings of issue 31 whose privacy-loss plot raised: every part of the result comes."""
    res = compute(Request((Row(mechanism_from_params(kind, params), 1),), 1e-5, 1.0, 0.01))
    assert res.pld is not None or res.pld_atoms is not None
    assert res.pld_inf_mass == 0
    if res.pld_atoms is not None:
        assert np.all(np.isfinite(res.pld_atoms.x)) and np.all(res.pld_atoms.columns["mass"] > 0)


@pytest.mark.parametrize("sigma", [1e-9, 1e-6, 1e-4, 0.01])
def test_discrete_gaussian_with_tiny_noise_answers(sigma):
    b = prvgui.epsilon({"mechanisms": [{"kind": "discrete_gaussian", "sigma": sigma}]}, 1e-5)
    a = 1.0 / (2 * sigma * sigma)  # the loss at y = 0: the truth is a + log(1 - delta), about a
    assert b.lower <= b.upper and b.upper >= a - 1e-5 * a
    if a <= 1e12:
        assert b.lower <= a and math.isfinite(b.upper)


@pytest.mark.parametrize("q", [1e-9, 1e-6, 1e-5, 3e-5, 1e-4])
@pytest.mark.parametrize("s", [0.5, 1.0, 2.0, 10.0])
def test_replace_one_mixture_inverts_its_flat_loss_near_zero(q, s):
    """At small q the replace-one loss is flat near 0 (slope 2q/s^2): its inverse on fine grids
    there converged nowhere ("could not be inverted to float precision")."""
    c = replace_gaussian_prv(s, q, 1).cont
    for half in (1e-12, 1e-9, 1e-6, 1e-3, 0.1):
        t = np.linspace(-half, half, 20001)
        cdf, sf = c.cdf(t), c.sf(t)
        assert np.all((cdf >= 0) & (cdf <= 1)) and np.allclose(cdf + sf, 1.0, rtol=0, atol=1e-12)
        if half >= 1e-6:  # steps of 1e-10 and more: far above the loss's rounding (16 u)
            assert np.all(np.diff(cdf) >= 0) and np.all(np.diff(sf) <= 0)


@pytest.mark.parametrize("scale", [1e-9, 1e-6, 1e-3])
def test_laplace_with_tiny_noise_answers_near_its_largest_loss(scale):
    """Laplace b = 1e-9: the loss's continuous part sits within nats of 1e9 (its tails were searched
    from 0, and the grid asked to span (-1e9, 1e9)); three runs: epsilon is 3 / b less a little."""
    b = prvgui.epsilon({"mechanisms": [{"kind": "laplace", "scale": scale, "count": 3}]}, 1e-5)
    assert b.lower <= 3 / scale <= b.upper + 1e-9 * 3 / scale and b.upper - b.lower <= 0.03


@pytest.mark.parametrize("kind, params, count, group", [
    ("gaussian", {"sigma": 1e-300}, 1, 1), ("discrete_laplace", {"scale": 1e-300}, 10**9, 2),
    ("laplace", {"scale": 1e-300}, 1, 1), ("pure_dp", {"epsilon": 1e6}, 10**9, 1),
    ("subsampled_gaussian", {"sigma": 1e-300, "sampling_rate": 1e-300}, 1, 2),
    ("subsampled_gaussian", {"sigma": 0.0, "sampling_rate": 1e-300}, 1, 1),
    ("shuffled_gaussian", {"sigma": 1e-300, "batches_per_epoch": 10**6}, 1, 1),
    ("subsampled_laplace", {"scale": 1e-300, "sampling_rate": 1e-300, "sensitivity": 1e6}, 1714, 2)])
def test_no_noise_to_speak_of_answers_every_part(kind, params, count, group):
    """Losses beyond 1e12 nats (taken as +inf) and atoms too far apart for any grid: the
    headline answers, and every part either answers or says the composition is far from private."""
    res = compute(Request((Row(mechanism_from_params(kind, params), count),), 1e-5, 1.0, 0.05, "add_remove",
                          group, profile_points=30, tradeoff_points=31, steps_row=0, steps_points=4))
    assert res.epsilon.lower <= res.epsilon.upper and not res.pending
    assert all("far from private" in reason for _, reason in res.failed), res.failed


def test_a_replace_one_mixture_at_q_1e_300_answers_delta_too():
    """(the property sweep's find: the root finder's tolerance divided by a slope of 1e-294)"""
    row = Row(mechanism_from_params("subsampled_gaussian", {"sigma": math.exp(-7), "sampling_rate": 1e-300}), 1)
    res = compute(Request((row,), 1e-5, 1.0, 0.05, "replace_one", profile_points=20, tradeoff_points=21))
    assert not res.failed and res.delta.lower <= res.delta.upper <= 1e-12  # (float64 floor: truth ~0)


@pytest.mark.parametrize("kind, params", [
    ("subsampled_gaussian", {"sigma": 1e-300, "sampling_rate": 1e-300, "sensitivity": 1e6}),
    ("subsampled_gaussian", {"sigma": 1e-7, "sampling_rate": 0.1}),
    ("subsampled_laplace", {"scale": 1e-9, "sampling_rate": 0.1})])
def test_fixed_size_batches_without_noise_to_speak_of_answer(kind, params):
    """(the property sweep's find: the without-replacement pair's mean at noise 1e-306)"""
    row = Row(mechanism_from_params(kind, {**params, "sampling": "fixed_size"}), 3)
    res = compute(Request((row,), 1e-5, 1.0, 0.05, "replace_one", profile_points=20, tradeoff_points=21))
    assert res.epsilon.lower <= res.epsilon.upper
    assert all("far from private" in reason for _, reason in res.failed), res.failed


@pytest.mark.parametrize("neighbouring", ["add_remove", "replace_one"])
def test_a_group_of_a_subsampled_laplace_with_huge_eps0_and_tiny_q_answers(neighbouring):
    """(the property sweep's find: log1p(-1) when 1 - q rounds to 1, q = 1e-180, eps0 = 1e6)"""
    row = Row(mechanism_from_params("subsampled_laplace", {"scale": 1.0, "sampling_rate": math.exp(-413.0),
                                                           "sensitivity": 1e6}), 2366)
    res = compute(Request((row,), 1e-10, 1.0, 0.05, neighbouring, 2, profile_points=20, tradeoff_points=21))
    assert res.epsilon.lower <= res.epsilon.upper
    assert all("far from private" in reason for _, reason in res.failed), res.failed


def test_a_shuffled_gaussian_with_its_loss_near_5e11_nats_answers_every_part():
    """(the property sweep's find: sigma 1 at sensitivity 1e6 under replace-one in groups of 5;
    the attack pair's loss sits near 5e11 nats, with a tail to 1e14, and the tail search gave up
    at 1e8: "PRV tail does not decay")"""
    row = Row(mechanism_from_params("shuffled_gaussian", {"sigma": 1.0, "batches_per_epoch": 238,
                                                          "sensitivity": 1e6}), 1153)
    res = compute(Request((row,), 1e-5, 1.0, 0.05, "replace_one", 5, profile_points=30, tradeoff_points=31,
                          steps_row=0, steps_points=4))
    assert res.epsilon.lower <= res.epsilon.upper and not res.pending
    assert all("far from private" in reason for _, reason in res.failed), res.failed


@pytest.mark.parametrize("kind, params", [
    ("subsampled_gaussian", {"sigma": 1e300, "sampling_rate": 0.5}),
    ("subsampled_gaussian", {"sigma": 1e160, "sampling_rate": 0.01, "sampling": "fixed_size"}),
    ("subsampled_laplace", {"scale": 1e300, "sampling_rate": 0.5}),
    ("shuffled_gaussian", {"sigma": 1e6, "batches_per_epoch": 393147, "sensitivity": 1e-300})])
@pytest.mark.parametrize("neighbouring, group", [("add_remove", 1), ("replace_one", 5)])
def test_noise_beyond_1e154_answers_every_part(kind, params, neighbouring, group):
    """(the property sweep's find: sigma / sensitivity = 1e306 squared overflowed in the Poisson
    counterpart's mixture pair; such noise is now taken as 1e100, a pair it post-processes)"""
    mech = mechanism_from_params(kind, params)
    try:
        mech.check_relation(prvgui.accounting.core.values.Relation(neighbouring, group))
    except ValueError:
        return
    res = compute(Request((Row(mech, 373),), 0.1, 1.0, 0.05, neighbouring, group, profile_points=20,
                          tradeoff_points=21, steps_row=0, steps_points=4))
    assert not res.failed and 0.0 <= res.epsilon.lower <= res.epsilon.upper <= 1e-6


def test_a_tilted_composition_whose_rounding_is_100_percent_is_vacuous_not_an_error():
    """(the property sweep's find: 10^9 discrete Laplace steps at eps0 4.5e6 under replace-one; the
    tilted read-out's relative rounding bound passed 1 and its log raised 'math domain error')"""
    row = Row(mechanism_from_params("discrete_laplace", {"scale": 0.0011595164400686675, "sensitivity": 5167}),
              10**9)
    res = compute(Request((row,), 1e-10, 1.0, 0.05, "replace_one", 1, profile_points=30, tradeoff_points=31,
                          steps_row=0, steps_points=4))
    assert all("far from private" in reason for _, reason in res.failed), res.failed
    assert res.epsilon.lower <= res.epsilon.upper
    # under replace-one the sensitivity doubles (10334): each step's loss is +eps0 = 10334 / scale
    # but with probability ~e^-8.9e6, so epsilon is k eps0
    eps0, _ = row.mechanism.under(Relation("replace_one")).eps_delta()
    assert eps0 == 2 * 5167 / 0.0011595164400686675
    assert res.certified_upper.value >= 1e9 * eps0 * (1 - 1e-9)


def test_a_proven_lower_bound_never_exceeds_a_certified_upper_bound_when_noise_is_taken_as_none():
    """(the input-space sweep's find: truncated Poisson steps at sigma 4e-58, noise the engine reads
    as none, so the attack pair's bracket was [inf, inf]; RDP certified 9.3e118, and the proven
    lower bound said inf: it now leaves such rows out, which only lowers epsilon)"""
    mech = mechanism_from_params("truncated_poisson", {"dataset_size": 628583, "sampling_rate": 1.0,
                                                       "max_batch": 7120, "sigma": 4.074509806638999e-58})
    res = compute(Request((Row(mech, 3869),), 1e-5, None, 0.05, "add_remove", 1, profile_points=10,
                          tradeoff_points=11, steps_row=0, steps_points=4))
    assert math.isfinite(published(res))
    assert res.epsilon_at_least is not None and res.epsilon_at_least <= published(res)
    # (with a row of real noise beside it, that row's own lower bound is kept)
    other = Row(mechanism_from_params("truncated_poisson", {"dataset_size": 1000, "sampling_rate": 0.1,
                                                            "max_batch": 200, "sigma": 1.0}), 50)
    both = compute(Request((Row(mech, 3869), other), 1e-5, None, 0.05, "add_remove", 1, profile_points=10,
                           tradeoff_points=11, steps_row=0, steps_points=4))
    alone = compute(Request((other,), 1e-5, None, 0.05, "add_remove", 1, profile_points=10,
                            tradeoff_points=11, steps_row=0, steps_points=4))
    assert 0 < alone.epsilon_at_least <= both.epsilon_at_least <= published(both)


@pytest.mark.parametrize("params, count", [({"sigma": 1e-8, "sampling_rate": 0.01}, 1000),
                                           ({"sigma": 1e-7, "sampling_rate": 1e-3}, 50)])
def test_a_bracket_whose_rows_are_read_as_noiseless_never_claims_a_lower_end_above_a_certified_bound(params, count):
    """(subsampled Gaussian steps at sigma 1e-8: noise below 1e-6 of the sensitivity is read as
    none, so the "PRV bracket" said [inf, inf] and "epsilon is infinite" beside RDP's certified
    1e19. The bracket is now named the dominating pair's, the proven lower bound leaves those
    rows out, and the note that epsilon is infinite goes)"""
    from prvgui import api
    from prvgui.engine.view_model import bracket_shown
    row = Row(mechanism_from_params("subsampled_gaussian", params), count)
    res = compute(Request((row,), 1e-5, None, 0.05, "add_remove", 1, profile_points=10, tradeoff_points=11,
                          steps_row=0, steps_points=4))
    cert = published(res)
    assert math.isfinite(cert) and res.certified_upper.by == "rdp"
    assert res.epsilon.lower > cert  # the dominating pair's: ...
    name, _, _, _ = bracket_shown(res)
    assert name == "Bracket of the dominating pair"  # ... and named so
    assert res.epsilon_at_least is not None and 0 <= res.epsilon_at_least <= cert
    assert not any("is infinite" in w for w in res.warnings), res.warnings
    assert any("read as +∞" in w for w in res.warnings), res.warnings
    ans = api.query({"neighbouring": "add_remove", "mechanisms": [{"kind": "subsampled_gaussian", **params,
                                                                    "count": count}]}, True, 1e-5, 0.05)
    assert ans.epsilon_at_least is not None and ans.epsilon_at_least <= ans.certified_upper.value
    assert not any("is infinite" in w for w in ans.warnings) and any("read as +∞" in n for n in ans.notes)


def test_an_approximate_dp_row_still_says_its_epsilon_is_infinite_below_the_delta_it_spends():
    """(the other side of the rule above: a pair realised with a true mass at +inf keeps the note)"""
    row = Row(mechanism_from_params("approx_dp", {"epsilon": 1.0, "delta": 1e-3}), 10)
    res = compute(Request((row,), 1e-5, None, 0.05, "add_remove", 1, profile_points=10, tradeoff_points=11,
                          steps_row=0, steps_points=4))
    assert math.isinf(published(res)) and res.epsilon_at_least is None
    assert any("is infinite" in w for w in res.warnings), res.warnings


def test_a_crossing_without_mass_at_infinity_is_not_taken_for_the_noiseless_convention():
    """bracket.crossed names the bracket the dominating pair's only when the rows put mass at
    +inf (the conventions' doing); any other crossing would be a fault and stays visible."""
    from prvgui.accounting.queries.accountant import Accountant
    from prvgui.accounting.queries.bracket import crossed
    rdp = {"rdp": {"kind": "bound", "value": 1.0}}
    plain = Accountant([Row(mechanism_from_params("gaussian", {"sigma": 1.0}), 10)], 0.01)
    noiseless = Accountant([Row(mechanism_from_params("subsampled_gaussian",
                                                      {"sigma": 1e-8, "sampling_rate": 0.01}), 10)], 0.01)
    assert not crossed(plain, 5.0, rdp, 0.01)
    assert crossed(noiseless, 5.0, rdp, 0.01)
    assert not crossed(noiseless, 1.005, rdp, 0.01)  # (within the tie)


def test_a_poisson_contrast_that_cannot_be_composed_is_not_called_the_proven_lower_bound(monkeypatch):
    """(the fifth input-space find, after its fix: zCDP beside a shuffled Gaussian at sensitivity
    e^8 has a proven lower bound of 1.78e7, but the Poisson counterpart's 5099 steps span 2.2e10
    nats, and its failure was said as "the proven lower bound could not be computed")"""
    from prvgui.accounting.queries import bracket
    from prvgui.engine.view_model import failure_notes

    def far(*a, **k):
        raise ArithmeticError("the privacy loss of this composition spans 2.22e+10 nats: far from private")
    monkeypatch.setattr(bracket, "poisson_contrast", far)
    row = Row(mechanism_from_params("shuffled_gaussian", {"sigma": 0.8, "batches_per_epoch": 1000}), 2)
    res = compute(Request((row,), 1e-6, None, 0.05, "add_remove", 1, profile_points=10, tradeoff_points=11,
                          steps_row=0, steps_points=4))
    assert res.epsilon_at_least is not None and res.epsilon_at_least > 6.0
    assert [p for p, _ in res.failed] == ["contrast"]
    notes = " ".join(failure_notes(res))
    assert "Poisson accounting" in notes and "proven lower bound" not in notes


def test_the_api_answers_when_the_poisson_contrast_or_the_attack_cannot_be_composed(monkeypatch):
    """prvgui.api.query (the command line's answer) as the window: a part that cannot be composed
    is a note, the rest of the answer stands; without the attack, the proven lower bound is 0."""
    from prvgui import api
    from prvgui.accounting.queries import bracket

    def far(*a, **k):
        raise ArithmeticError("the privacy loss of this composition spans 2.22e+10 nats: far from private")
    doc = {"mechanisms": [{"kind": "shuffled_gaussian", "sigma": 0.8, "batches_per_epoch": 1000, "count": 2}]}
    monkeypatch.setattr(bracket, "poisson_contrast", far)
    ans = api.query(doc, True, 1e-6, 0.05)
    assert ans.epsilon_at_least > 6.0 and ans.poisson is None
    assert any("Not computed: what Poisson accounting would say" in n for n in ans.notes), ans.notes
    monkeypatch.setattr(bracket, "epsilon_at_least", far)
    ans = api.query(doc, True, 1e-6, 0.05)
    assert ans.epsilon_at_least == 0.0 and ans.certified_upper.value > 6.0
    assert any("Not computed: the proven lower bound" in n for n in ans.notes), ans.notes


@pytest.mark.parametrize("neighbouring", ["add_remove", "replace_one"])
@pytest.mark.parametrize("scale", [1e-300, 1e-13, 1e-11, 1e-7])
def test_a_laplace_step_with_almost_no_noise_answers_as_its_kind_reads_it(scale, neighbouring):
    """The sixth input-space find: a subsampled Laplace step at rate 1 and scale 1e-300 raised
    in the discretiser (its loss placed at 1e300), at 1e-13 a tilt's rounding bound reached 1
    ("math domain error"; the Laplace kind at 1e-11 under replace-one too). At rate 1 it is the
    Laplace mechanism: the same bracket as that kind's (3 eps0 for three draws, up to
    float64's rounding of it; +inf past base.BLATANT_LOSS)."""
    from prvgui.accounting import Accountant
    from prvgui.accounting.kinds.base import BLATANT_LOSS
    from prvgui.accounting.mechanisms import Laplace, SubsampledLaplace
    plain = Accountant([Row(Laplace(scale), 3)], 0.05, neighbouring).epsilon(1e-5)
    full = Accountant([Row(SubsampledLaplace(scale, 1.0), 3)], 0.05, neighbouring).epsilon(1e-5)
    shift = 2.0 if neighbouring == "replace_one" else 1.0  # (replace-one: twice the sensitivity)
    eps0 = shift / scale
    if eps0 > BLATANT_LOSS:
        assert plain.lower == plain.upper == full.lower == full.upper == math.inf
    else:  # the truth 3 eps0 + log(1 - 8 delta), which float64 rounds to 3 eps0 from 1e7 on
        assert full == plain
        assert plain.lower <= 3 * eps0 + math.log1p(-8e-5) + 1e-9 * eps0
        assert 3 * eps0 <= plain.upper <= 3 * eps0 * (1 + 1e-9)
    # below rate 1: losses past BLATANT_LOSS read as +inf under add/remove (as the Laplace kind's),
    # past eps0 = 1e6 under replace-one (the mixture pair's base.NOISELESS); below those the step
    # is composed as it is, 3 (eps0 + log q) up to rounding, or refused as too wide for a grid
    try:
        half = Accountant([Row(SubsampledLaplace(scale, 0.5), 3)], 0.05, neighbouring).epsilon(1e-5)
    except MemoryError as exc:
        assert "far from private" in str(exc) and eps0 <= BLATANT_LOSS
        return
    if neighbouring == "replace_one" or eps0 > BLATANT_LOSS:
        assert half.lower == half.upper == math.inf
    else:
        truth = 3 * (eps0 + math.log(0.5))
        assert half.lower <= truth * (1 + 1e-9) and truth * (1 - 1e-9) <= half.upper < math.inf


def test_an_atom_no_grid_index_reaches_is_refused_as_too_wide():
    """A discrete Laplace at scale 1e-300 under replace-one (atoms near 2e300 nats) raised an
    OverflowError in the discretiser: it is a grid too large, which the window words as far
    from private."""
    from prvgui.accounting.core.errors import GridTooLarge
    from prvgui.accounting.kinds.laplace import laplace_prv
    from prvgui.accounting.numerics.discretize import discretize
    from prvgui.accounting.pairs.prv import PRV
    for prv in (PRV(((2e300, 0.5), (-2e300, 0.5)), 0.0, None, 0.0, 0.0), laplace_prv(1e20)):
        with pytest.raises(GridTooLarge):
            discretize(prv, 1e-3, 1e-12)
    res = compute(Request((Row(mechanism_from_params("discrete_laplace", {"scale": 1e-300}), 3),), 1e-5, 1.0,
                          0.05, "replace_one"))
    assert [(p, "far from private" in why) for p, why in res.failed][:1] == [("headline", True)]


@pytest.mark.parametrize("replace", [False, True])
@pytest.mark.parametrize("eps0", [1e300, 1e7])
def test_a_laplace_mixture_read_as_noiseless_gives_the_basic_accountants_its_pure_delta(eps0, replace):
    """The seventh find: a subsampled Laplace step at scale 1e-300 and rate 1 - 1.5e-7 in groups
    of 5 (add/remove, 981 draws): the pair is read as noiseless past eps0 = 1e6 (a point mass at
    +inf once the group is all but surely sampled), and its (epsilon, delta) for the basic
    accountants looked for a finite loss among none ("max() arg is an empty sequence"). Read as
    noiseless it is (0, P(a group member is sampled))-DP."""
    from prvgui.accounting.kinds._mixtures import LaplaceMixturePair
    from prvgui.accounting.mechanisms import SubsampledLaplace
    q = 0.9999998519119168
    hit = -math.expm1(5 * math.log1p(-q))
    assert LaplaceMixturePair(q, 5, replace, eps0).eps_delta() == (0.0, hit)
    assert LaplaceMixturePair(0.3, 5, replace, 1e6).eps_delta()[1] == 0.0  # (at 1e6 still read as noisy)
    res = compute(Request((Row(SubsampledLaplace(1.0 / eps0, q), 981),), 1e-5, 1.0, 0.05,
                          "replace_one" if replace else "add_remove", 5))
    assert res.failed == () and res.epsilon.upper == math.inf
    assert published(res) < math.inf  # (a comparison accountant's certified bound)


@pytest.mark.parametrize("order", ["remove", "add"])
@pytest.mark.parametrize("q", [0.01, 0.3, 0.9])
@pytest.mark.parametrize("eps0", [2.0, 20.0, 200.0])
def test_the_noiseless_reading_of_a_subsampled_laplace_step_dominates_it(eps0, q, order):
    """Past eps0 = 1e12 (1e6 in its mixtures) a subsampled Laplace step is read as the noiseless pair:
    an upper bound only if that pair's privacy profile is above the step's at every epsilon
    (the noisy pair is a post-processing of the noiseless one). Checked where the step's own
    profile is computable, with its own PRV summed directly."""
    import numpy as np
    from prvgui.accounting.kinds.subsampled_laplace import subsampled_laplace_prv
    from prvgui.accounting.pairs.subsampling import blind_subsample
    noisy, blind = subsampled_laplace_prv(eps0, q, order), blind_subsample(q, order)
    for eps in np.concatenate([[0.0], np.geomspace(1e-4, 2.0 * eps0, 40)]):
        assert blind.delta(float(eps)) >= noisy.delta(float(eps)) * (1 - 1e-9) - 1e-15


def test_a_subsampled_laplace_step_at_a_loss_near_1e306_has_an_infinite_rdp():
    """The eighth find: scale 1e-300 at sensitivity 1e6 and rate 1e-300 (beside a zCDP row):
    the add order's RDP quadrature divided by a step that underflowed to 0 ("float division by
    zero" in the comparisons). Too many panels: its RDP is +inf, an upper bound."""
    from prvgui.accounting.kinds import KINDS
    from prvgui.accounting.mechanisms import SubsampledLaplace
    from prvgui.accounting.pairs.rdp import subsampled_laplace_add
    assert subsampled_laplace_add(2, 1e306, 1e-300) == math.inf
    res = compute(Request((Row(KINDS["zcdp"].from_params({"rho": 1e-300}), 945),
                           Row(SubsampledLaplace(1e-300, 1e-300, 1e6), 135)), 1e-10, 1.0, 0.05))
    assert res.failed == () and res.epsilon.lower <= published(res) <= res.epsilon.upper


def test_a_random_allocation_too_noiseless_for_its_grids_falls_back_to_the_gaussian_bound():
    """The ninth find: random allocation at mu 5e6 (sensitivity 1e6, groups of 5): a term's grid
    held no cell and scipy raised "Target length must be positive"; such a round now takes the
    kind's bound without amplification, as grids too large do, and the window says the
    composition is far from private."""
    from prvgui.accounting.kinds import KINDS
    from prvgui.accounting.pairs.allocation import round_prvs
    assert round_prvs(5e6, 35842) is None
    m = KINDS["random_allocation"].from_params({"sigma": 1.0, "steps_per_epoch": 35842, "selected": 1,
                                                "sensitivity": 1e6})
    res = compute(Request((Row(m, 3571),), 0.1, 1.0, 0.05, "add_remove", 5))
    assert res.failed and all("far from private" in why for _, why in res.failed)


@pytest.mark.parametrize("kind, params", [("pmf_pair", {"p": (0.35, 4e-60, 0.65), "q": (0.485, 0.515, 2e-123)}),
                                          ("gaussian", {"sigma": 1.0})])
def test_the_steps_curve_of_a_row_with_nothing_to_compose_is_the_other_rows(kind, params):
    """The tenth find (two rows, random sweep): the epsilon-versus-steps curve of an (0, 0)-DP row
    beside another raised "index 1 is out of bounds" in the windows' search; each count's
    window is now the other rows', and the curve is flat at the other rows' epsilon."""
    rows = (Row(mechanism_from_params(kind, params), 1),
            Row(mechanism_from_params("approx_dp", {"epsilon": 0.0, "delta": 0.0}), 1))
    res = compute(Request(rows, 1e-5, 1.0, 0.05, "add_remove", 1, profile_points=0, tradeoff_points=0,
                          steps_row=1, steps_points=4))
    assert not res.failed
    alone = compute(Request(rows[:1], 1e-5, 1.0, 0.05, "add_remove", 1, profile_points=0, tradeoff_points=0))
    for col in ("lower", "upper"):
        ys = res.steps.columns[col]
        assert ys.size >= 2 and np.all(ys == ys[0])
    assert res.steps.columns["lower"][0] <= alone.epsilon.upper and alone.epsilon.lower <= res.steps.columns["upper"][0]


def test_a_pure_dp_composition_past_a_floats_range_is_infinite_in_the_exact_accountant():
    """The eleventh find: a discrete Laplace at scale 1e-300 drawn 10^9 times (epsilon0 k past
    1.8e308): the exact (KOV) accountant overflowed ("overflow encountered in multiply", an error
    under the test's warnings); its top atom has probability 1 to a float, so epsilon is infinite
    below delta 1 and delta is 1. The window lists each failed part once (the error budget was
    listed twice)."""
    from prvgui.accounting.queries.comparisons import _kov
    assert _kov(1e300, 0.0, 10**9, 0.1, True) == math.inf and _kov(1e300, 0.0, 10**9, 5.0, False) == 1.0
    assert _kov(1e300, 0.0, 10**9, 1.0, True) == 0.0
    m = mechanism_from_params("discrete_laplace", {"scale": 1e-300})
    res = compute(Request((Row(m, 10**9),), 0.1, 1.0, 0.05, "add_remove", 1, profile_points=30,
                          tradeoff_points=31, steps_row=0, steps_points=4))
    assert res.epsilon.upper == math.inf and res.comparisons["exact"]["value"] == math.inf
    parts = [p for p, _ in res.failed]
    assert len(parts) == len(set(parts)) and all("far from private" in why for _, why in res.failed)


@pytest.mark.slow  # (about 30 s: the realised pair's grid is sized before it is refused)
def test_a_dominating_pair_whose_proven_lower_bound_cannot_be_composed_still_says_so():
    """The twelfth find (random sweep): random allocation at sigma 1 drawn 10^9 epochs. Its upper
    pair's escape mass at +inf (1.8e-11 an epoch) makes the PRV say [inf, inf] at delta 1e-5,
    RDP certifies 5.05e8, and the realised pair's composition is too large for a grid. The
    window named the bracket "PRV bracket", its lower end inf read as a bound on the truth (a
    sweep wrote inf as the proven lower bound). As the API already did: the proven lower bound
    is 0 (true of every composition), the failure says why no more, the bracket is the
    dominating pair's, and the window and the report give the published bound beside it."""
    from prvgui.engine.view_model import bracket_shown
    m = mechanism_from_params("random_allocation", {"sigma": 1.0, "steps_per_epoch": 16})
    res = compute(Request((Row(m, 10**9),), 1e-5, 1.0, 0.05, "add_remove", 1, profile_points=0,
                          tradeoff_points=0))
    assert res.epsilon.lower == math.inf and 5e8 < published(res) < 5.1e8
    assert res.epsilon_at_least == 0.0 and "far from private" in dict(res.failed)["bracket"]
    assert bracket_shown(res)[0] == "Bracket of the dominating pair"
    assert any("between 0 (proven lower bound" in w for w in res.warnings)
    from prvgui.report.model import headline
    assert "between 0 (proven lower bound" in " ".join(headline(res).bracket) and "5.051e+08" in " ".join(
        headline(res).bracket)  # (the report's sentences, and the window's, give the published bound)
    api = prvgui.epsilon({"neighbouring": "add_remove", "targets": {"eps_error": 0.05},
                          "mechanisms": [{"kind": "random_allocation", "sigma": 1.0, "steps_per_epoch": 16,
                                          "count": 10**9}]}, 1e-5)
    assert api.epsilon_at_least == res.epsilon_at_least and api.certified_upper.value == published(res)
