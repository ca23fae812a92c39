"""One row of a composition as the peers' libraries spell it (scripts.py writes the script): first
the row as a ``Basic`` mechanism every library may have (a Gaussian of noise multiplier s, a
Poisson-subsampled Gaussian, pure DP, ...), then that in each library's words, or the reason it
cannot be said there. Numbers are written with repr(), so that they round-trip exactly. No Qt, and
the libraries are never imported: this only writes their names.

Relations: dp_accounting has accountants for add/remove and for replace-one, so a composition of
single records keeps its relation there. Otherwise a row is first reduced to its add/remove
equivalent (``Mechanism.under``: e.g. a Gaussian at twice the sensitivity under replace-one, k
times it for a group of k), which is exact where the reduction is a basic mechanism again.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..accounting.core.values import Relation

FIXED_REASON = ("fixed-size batches: dp_accounting's SampledWithoutReplacementDpEvent needs the dataset and "
                "batch sizes and only its RDP accountant takes it (with a replace-one sensitivity half of "
                "prvgui's); the other libraries have no counterpart")
COUNTERPART = ("NOT a certified bound: {what} have no exact counterpart; exported as the Poisson-subsampled "
               "Gaussian at the same rate, whose epsilon is not a guarantee for the batches as run")


def r(x: float | int) -> str:
    """A number as Python source that reads back as the same value."""
    return repr(int(x)) if isinstance(x, int) and not isinstance(x, bool) else repr(float(x))


def ratio(a: float, b: float) -> str:
    """a / b as source (a alone when b is 1)."""
    return r(a) if b == 1 else f"{r(a)} / {r(b)}"


@dataclass(frozen=True)
class Basic:
    """A mechanism most libraries know: ``what`` is one of gaussian (s = noise multiplier as source,
    sigma and sens for libraries that take both), laplace (s: scale / sensitivity), poisson_gaussian,
    poisson_laplace (q), group_poisson_gaussian (q, k), truncated (n, q, b), pure, approx (eps,
    delta), exponential, zcdp (rho, xi), discrete_gaussian, discrete_laplace (sigma or scale, sens)."""

    what: str
    s: str = ""
    sigma: float = 0.0
    sens: float = 1.0
    q: float = 1.0
    k: int = 1
    n: int = 0
    b: int = 0
    eps: float = 0.0
    delta: float = 0.0
    xi: float = 0.0
    times: int = 1  # runs per count (a Poisson counterpart of an epoch: its steps)
    caveat: str = ""


def basic(mech, relation: Relation, native: bool) -> Basic | str:
    """The row's mechanism as a Basic, or why it has none. ``native``: stated under ``relation``
    itself (dp_accounting, one record); else reduced to its add/remove equivalent."""
    if mech.kind == "subsampled_gaussian" and not native and relation.group_size > 1 \
            and not relation.replace and mech.sampling == "poisson":
        return Basic("group_poisson_gaussian", ratio(mech.sigma, mech.sensitivity), q=mech.sampling_rate,
                     k=relation.group_size)
    if getattr(mech, "sampling", "poisson") != "poisson":
        return FIXED_REASON
    m = mech if native or relation.plain else mech.under(relation)
    kind = getattr(m, "kind", "")
    if kind in ("gaussian", "laplace", "subsampled_gaussian", "subsampled_laplace", "truncated_poisson",
                "shuffled_gaussian", "random_allocation", "discrete_gaussian", "discrete_laplace"):
        noise = m.scale if kind in ("laplace", "subsampled_laplace", "discrete_laplace") else m.sigma
        if noise == 0 and m.sensitivity != 0:
            return "no noise: the mechanism is not private (infinite epsilon)"
    if kind in ("gaussian", "laplace"):
        s = m.sigma if kind == "gaussian" else m.scale
        return Basic(kind, ratio(s, m.sensitivity), sigma=s, sens=m.sensitivity)
    if kind in ("subsampled_gaussian", "subsampled_laplace"):
        if m.sampling != "poisson":
            return FIXED_REASON
        s = m.sigma if kind == "subsampled_gaussian" else m.scale
        return Basic("poisson_" + kind.split("_")[1], ratio(s, m.sensitivity), sigma=s, sens=m.sensitivity,
                     q=m.sampling_rate)
    if kind == "truncated_poisson":
        return Basic("truncated", ratio(m.sigma, m.sensitivity), q=m.sampling_rate, n=m.dataset_size,
                     b=m.max_batch)
    if kind == "shuffled_gaussian":
        return Basic("poisson_gaussian", ratio(m.sigma, m.sensitivity), sigma=m.sigma, sens=m.sensitivity,
                     q=1.0 / m.batches_per_epoch, times=m.batches_per_epoch,
                     caveat=COUNTERPART.format(what="shuffled batches"))
    if kind == "random_allocation":
        return Basic("poisson_gaussian", ratio(m.sigma, m.sensitivity), sigma=m.sigma, sens=m.sensitivity,
                     q=m.selected / m.steps_per_epoch, times=m.steps_per_epoch,
                     caveat=COUNTERPART.format(what="random allocation batches"))
    if kind == "matrix_mechanism":
        sens = m.l2_sensitivity
        how = "" if sens.exact else (f"the sensitivity {sens.value!r} is a certified upper bound "
                                     f"({sens.method}), as prvgui uses it")
        if m.amplification:
            return Basic("poisson_gaussian", ratio(m.sigma, sens.value), sigma=m.sigma, sens=sens.value,
                         q=m.amplified_rate, caveat=how)
        return Basic("gaussian", ratio(m.sigma, sens.value), sigma=m.sigma, sens=sens.value, caveat=how)
    if kind in ("randomized_response", "pure_dp"):
        return Basic("pure", eps=m.epsilon)
    if kind == "approx_dp":
        return Basic("approx", eps=m.epsilon, delta=m.delta)
    if kind == "exponential_mechanism":
        return Basic("exponential", eps=m.epsilon)
    if kind == "zcdp":
        return Basic("zcdp", eps=m.rho, xi=m.xi)
    if kind == "discrete_gaussian":
        return Basic("discrete_gaussian", sigma=m.sigma, sens=m.sensitivity)
    if kind == "discrete_laplace":
        return Basic("discrete_laplace", sigma=m.scale, sens=m.sensitivity)
    if kind == "":
        return (f"its pair under {relation.describe()} (a mixture) has no add/remove equivalent that the "
                "other libraries take")
    return "its pair has no counterpart in the other libraries"


def dp_accounting(b: Basic, replace: bool) -> str:
    """The DpEvent (``E`` is dp_accounting.dp_event) of one run, or the reason (prefixed "!")."""
    if replace and b.what in ("laplace", "poisson_laplace", "discrete_laplace", "discrete_gaussian"):
        return "!dp_accounting accounts Laplace and discrete events under add/remove only"
    if b.what == "gaussian":
        return f"E.GaussianDpEvent(noise_multiplier={b.s})"
    if b.what == "laplace":
        return f"E.LaplaceDpEvent(noise_multiplier={b.s})"
    if b.what in ("poisson_gaussian", "poisson_laplace"):
        inner = "GaussianDpEvent" if b.what == "poisson_gaussian" else "LaplaceDpEvent"
        return (f"E.PoissonSampledDpEvent(sampling_probability={r(b.q)}, "
                f"event=E.{inner}(noise_multiplier={b.s}))")
    if b.what == "group_poisson_gaussian":
        return (f"E.MixtureOfGaussiansDpEvent(standard_deviation={b.s}, "
                f"sensitivities=list(range({b.k} + 1)), sampling_probs=binomial({b.k}, {r(b.q)}))")
    if b.what == "truncated":
        return (f"E.TruncatedSubsampledGaussianDpEvent(dataset_size={r(b.n)}, sampling_probability={r(b.q)}, "
                f"truncated_batch_size={r(b.b)}, noise_multiplier={b.s})")
    if b.what in ("pure", "approx"):
        return f"E.EpsilonDeltaDpEvent(epsilon={r(b.eps)}, delta={r(b.delta)})"
    if b.what == "exponential":
        return f"E.ExponentialMechanismDpEvent(epsilon={r(b.eps)})"
    if b.what == "zcdp":
        return f"E.ZCDpEvent(rho={r(b.eps)}, xi={r(b.xi)})"
    if b.what == "discrete_gaussian":
        return f"E.DiscreteGaussianDpEvent(sigma={r(b.sigma)}, sensitivity={r(b.sens)}, dimension=1)"
    return f"E.DiscreteLaplaceDpEvent(noise_parameter=1 / {r(b.sigma)}, sensitivity={r(b.sens)})"


def opacus(b: Basic) -> str:
    """(noise_multiplier, sample_rate) of a history entry, or the reason (prefixed "!")."""
    if b.what == "gaussian":
        return f"({b.s}, 1.0)"
    if b.what == "poisson_gaussian":
        return f"({b.s}, {r(b.q)})"
    return "!Opacus' accountants take Poisson-subsampled Gaussian steps only"


def prv_accountant(b: Basic) -> str:
    """The PrivacyRandomVariable of one run, or the reason (prefixed "!")."""
    if b.what == "gaussian":
        return f"GaussianMechanism(noise_multiplier={r(b.sigma)}, l2_sensitivity={r(b.sens)})"
    if b.what == "laplace":
        return f"LaplaceMechanism(mu={r(b.sens)} / {r(b.sigma)})"
    if b.what == "poisson_gaussian":
        return f"PoissonSubsampledGaussianMechanism(sampling_probability={r(b.q)}, noise_multiplier={b.s})"
    if b.what in ("pure", "exponential"):
        return f"PureDPMechanism(eps={r(b.eps)})"
    if b.what == "approx":
        return f"ApproximateDPMechanism(epsilon={r(b.eps)}, delta={r(b.delta)})"
    return "!prv_accountant has no such mechanism"
