"""Everything a report says, gathered from a composition and its computed Result as plain text
and numbers (``Report``). No Qt; the HTML and PDF writers only lay it out.

``gather`` computes nothing the Result already holds; it adds the certified attack-risk
read-out (accounting/queries/risk.py) unless one is given, for the result and for a pinned result.
"""
from __future__ import annotations

import datetime as _dt
import math
from dataclasses import dataclass, field

from .. import __version__
from ..accounting.kinds.base import Points
from ..accounting.core.values import Relation
from ..accounting.mechanisms import MECHANISM_KINDS
from ..engine.view_model import (Request, bracket_shown, fact_sentences, failure, failure_notes, tuning_sentence,
                                 untight_note, untight_sentences)
from ..accounting.queries.risk import DEFAULT_FPRS, Risk, risk as compute_risk
from ..document.export import setting_text
from ..document.list_csv import list_summary, list_text
from .figures import figures as plot_figures
from .numbers import fmt, fmt_bound
from .statement import statement as privacy_statement
from .tables import AccountantLine, accountant_lines, certified, certified_delta, short_label


@dataclass(frozen=True)
class RowLine:
    label: str
    kind: str  # the kind's title
    parameters: tuple[str, ...]  # "Noise σ = 1.1 (std. dev., same units as Δ)"
    count: int


@dataclass(frozen=True)
class Headline:
    """The certified answer of one result (``name``: "" for the current one, "A" for a pin)."""

    name: str
    epsilon: str  # the publishable upper bound, rounded up
    by: str
    lower: str
    estimate: str
    upper: str
    delta: float
    #: where the truth lies when some rows' pairs are upper bounds only (view_model.untight_sentences)
    bracket: tuple[str, ...] = ()
    delta_at: tuple[str, str, str, str] | None = None  # (epsilon, certified δ, lower, estimate)
    setting: str = ""
    #: what the bracket is: "PRV bracket", or the dominating pair's when rows are upper bounds only
    bracket_name: str = "PRV bracket"
    #: rho-zCDP and matrix mechanisms' sensitivities, as sentences (view_model.fact_sentences)
    facts: tuple[str, ...] = ()


@dataclass(frozen=True)
class Report:
    title: str
    created: str
    version: str
    rows: tuple[RowLine, ...]
    targets: tuple[tuple[str, str], ...]
    setting: str
    headline: Headline
    pinned: Headline | None
    accountants: tuple[AccountantLine, ...]
    risk: tuple[tuple[str, str, str | None], ...]  # (what, this result, pinned result)
    utility: tuple[tuple[str, str], ...]  # (row, 95% half-width with unit)
    budget_orders: tuple[str, ...]
    budget: tuple[tuple[str, tuple[str, ...]], ...]  # (term, one value per order)
    warnings: tuple[str, ...]
    method: tuple[str, ...]
    references: tuple[str, ...]
    figures: tuple = field(default_factory=tuple)  # svg.Figure: the window's plots
    #: the structured privacy statement (statement.py): (field, value) pairs and flags
    statement: tuple[tuple[str, str], ...] = ()
    flags: tuple[str, ...] = ()


#: lists up to this long are printed in full in the composition table
SHORT_LIST = 8


def _param_text(kind: str, name: str, value: object) -> str:
    cls = MECHANISM_KINDS.get(kind)
    spec = cls.param_specs().get(name) if cls is not None else None
    if spec is None:
        return f"{name} = {value}"
    choices = dict(getattr(spec, "choices", ()) or ())
    if choices:
        return f"{spec.title}: {choices.get(value, value)}"
    if isinstance(value, (list, tuple)):  # a list: in full when short, else its length
        points = isinstance(spec, Points)
        short = len(value) <= SHORT_LIST
        return f"{spec.title} = {list_text(value, points)}" if short else list_summary(spec, name, value)
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    text = fmt(value, 6) if number else str(value)
    return f"{spec.title} = {text}" + (f" ({spec.unit})" if spec.unit else "")


def row_lines(composition, result) -> tuple[RowLine, ...]:
    """The composition table: from the document's rows (labels, as typed) when given, else from
    the engine rows of the result."""
    specs = getattr(composition, "rows", None) if composition is not None else None
    out = []
    if specs:
        for r in specs:
            params = tuple(_param_text(r.kind, k, v) for k, v in r.params.items())
            out.append(RowLine(r.label or "", r.title, params, int(r.count)))
        return tuple(out)
    for r in result.request.rows:
        m = r.mechanism
        out.append(RowLine("", m.title, tuple(_param_text(m.kind, k, v) for k, v in m.params().items()), r.count))
    return tuple(out)


def headline(result, name: str = "") -> Headline:
    e, req = result.epsilon, result.request
    value, by = certified(result)
    finite = math.isfinite(e.upper)
    at_least = getattr(result, "epsilon_at_least", None)
    poisson = getattr(result, "poisson_epsilon", None)
    delta_at = None
    if result.delta is not None and req.epsilon is not None:
        cd = certified_delta(result)
        delta_at = (fmt(req.epsilon), fmt_bound(cd[0]), fmt_bound(result.delta.lower, up=False),
                    fmt(result.delta.estimate) if math.isfinite(result.delta.upper) else "n/a")
    bracket = () if at_least is None else tuple(untight_sentences(
        req.rows, at_least, value, poisson, lambda v, up: fmt_bound(v, up=up),
        getattr(result, "shuffled_epsilon", None)))
    what, lower, est, _ = bracket_shown(result)
    relation = Relation(req.neighbouring, req.group_size)
    return Headline(name, fmt_bound(value), "PRV" if by == "prv" else short_label(result, by),
                    fmt_bound(lower, up=False), fmt(est) if finite else "n/a", fmt_bound(e.upper),
                    req.delta, bracket, delta_at, setting_text(req), what,
                    tuple(fact_sentences(req.rows, relation))
                    + tuple(filter(None, [tuning_sentence(getattr(result, "tuning", None), fmt_bound)])))


def risk_of(result, eps_error: float | None = None, cancel=None) -> Risk:
    """The certified membership-inference read-out of a result's composition: the one the
    result holds (``Result.risk``, the window's numbers) when it was asked at the report's
    false-positive rates, else computed."""
    req = result.request
    if result.risk is not None and tuple(req.risk_fprs) == tuple(DEFAULT_FPRS) and eps_error is None:
        return result.risk
    return compute_risk(req.rows, DEFAULT_FPRS, Relation(req.neighbouring, req.group_size),
                        eps_error if eps_error is not None else req.eps_error, cancel=cancel)


def _risk_or_none(result, cancel=None) -> Risk | None:
    """The risk read-out of ``result`` (``risk_of``), or None when the result says it could not
    be computed (its PRV bracket or its risk part failed: the report names the part instead)."""
    if failure(result, "headline") is not None or failure(result, "risk") is not None:
        return None
    return risk_of(result, cancel=cancel)


def _risk_lines(r: Risk | None, p: Risk | None) -> tuple[tuple[str, str, str | None], ...]:
    def interval(i) -> str:
        return f"[{fmt_bound(i.lower, up=False)}, {fmt_bound(i.upper)}]"
    if r is None:
        return ()
    out = []
    for k, a in enumerate(r.fprs):
        other = interval(p.tpr[k]) if p is not None and k < len(p.tpr) else None
        out.append((f"true-positive rate at false-positive rate {fmt(100 * a)}%", interval(r.tpr[k]), other))
    out.append(("advantage (TPR − FPR of the best attack, = δ(0))", interval(r.advantage),
                interval(p.advantage) if p is not None else None))
    theirs = {b.prior: b for b in (p.bayes if p is not None else ())}
    for b in r.bayes:
        o = theirs.get(b.prior)
        out.append((f"Bayes risk at prior {fmt(100 * b.prior)}% (least error of the best attack)",
                    interval(b.risk), interval(o.risk) if o is not None else None))
    recon = dict(zip(p.baselines, p.reconstruction)) if p is not None else {}
    for k, t in zip(r.baselines, r.reconstruction):
        o = recon.get(k)
        out.append((f"reconstruction success at baseline {fmt(100 * k)}%", interval(t),
                    interval(o) if o is not None else None))
    if r.gdp is not None:
        out.append(("μ-GDP (certified μ; regret)", _gdp_cell(r.gdp) or "",
                    _gdp_cell(p.gdp) if p is not None else None))
    return tuple(out)


def _gdp_cell(fit) -> str | None:
    if fit is None:
        return None
    if fit.mu is None:
        return "not certified"
    if math.isinf(fit.mu):
        return "no finite μ"
    return f"μ ≤ {fmt_bound(fit.mu)}" + ("" if fit.exact else f"; regret ≤ {fmt_bound(fit.regret, 3)}")


def _utility(composition, result) -> tuple[tuple[str, str], ...]:
    rows = row_lines(composition, result)
    out = []
    for line, noise in zip(rows, getattr(result, "noise_95", ()) or ()):
        if noise is None:
            continue
        width, unit = noise
        out.append((line.label or line.kind, f"± {fmt_bound(width)} {unit}"))
    return tuple(out)


#: the error terms of the certificate, in words (accountant.error_budget's keys)
BUDGET_TERMS = (("h", "mesh width h (nats)"), ("n_fft", "grid points (FFT length)"),
                ("K", "draws composed (K)"),
                ("hoeffding", "discretisation error (Hoeffding)"), ("truncation", "truncation mass"),
                ("window", "window (tails outside the grid)"), ("alias", "aliasing"),
                ("coarse", "coarse cells"), ("bias", "mean-shift bias"),
                ("fp_abs", "floating point, absolute"), ("fp_rel", "floating point, relative"),
                ("tilt_lambda", "tilt λ (the tail composed at full precision)"),
                ("tilt_fp_abs", "floating point of the tilted composition (× e^(L − λε) at ε)"),
                ("mass_rel", "mass error, relative"), ("total_abs", "total additive error on δ"),
                ("total_rel", "total relative error on δ"), ("eps_error_used", "accuracy used (ε error)"))


def _budget(result) -> tuple[tuple[str, ...], tuple[tuple[str, tuple[str, ...]], ...]]:
    entries = list(result.budget or [])
    orders = tuple(str(b.get("order", i)) for i, b in enumerate(entries))
    rows = []
    for key, words in BUDGET_TERMS:
        values = [b.get(key) for b in entries]
        if all(v is None for v in values):
            continue
        rows.append((words, tuple("n/a" if v is None else fmt(float(v), 3) if key not in ("n_fft", "K")
                                  else str(int(v)) for v in values)))
    return orders, tuple(rows)


REFERENCES = (
    "S. Gopi, Y. T. Lee, L. Wutschitz. Numerical Composition of Differential Privacy. NeurIPS 2021 "
    "(arXiv:2106.02848).",
    "I. Mironov. Rényi Differential Privacy. CSF 2017; I. Mironov, K. Talwar, L. Zhang. Rényi DP of the "
    "Sampled Gaussian Mechanism, 2019.",
    "J. Dong, A. Roth, W. Su. Gaussian Differential Privacy. J. R. Stat. Soc. B 2022 (arXiv:1905.02383).",
    "P. Kairouz, S. Oh, P. Viswanath. The Composition Theorem for Differential Privacy. ICML 2015.",
    "C. Dwork, G. Rothblum, S. Vadhan. Boosting and Differential Privacy. FOCS 2010.",
    "V. Doroshenko, B. Ghazi, P. Kamath, R. Kumar, P. Manurangsi. Connect the Dots: Tighter Discrete "
    "Approximations of Privacy Loss Distributions. PETS 2022.",
    "B. Kulynych, J. F. Gomez, G. Kaissis, F. du Pin Calmon, C. Troncoso. Attack-Aware Noise Calibration "
    "for Differential Privacy. NeurIPS 2024.",
)
SHUFFLED_REFERENCE = ("L. Chua, B. Ghazi, P. Kamath, R. Kumar, P. Manurangsi, A. Sinha, C. Zhang. How Private "
                      "are DP-SGD Implementations? ICML 2024 (arXiv:2403.17673).")


def _method(result) -> tuple[tuple[str, ...], tuple[str, ...]]:
    req = result.request
    text = [
        "The certified bounds come from the PRV accountant of Gopi, Lee and Wutschitz [1]: each "
        "mechanism's privacy loss random variable is truncated, discretised on a mesh and composed by "
        "FFT; every error of that process (the terms in the error budget above) is bounded and added, "
        f"so that the lower and upper ends of the bracket are proven bounds on ε at δ = {fmt(req.delta)} "
        f"(asked-for accuracy ±{fmt(req.eps_error)}). Under add/remove neighbouring both orders of each "
        "mechanism's dominating pair are composed and the larger δ is taken.",
        "The comparison accountants are labelled with what they are: Rényi DP [2] is an upper bound, "
        "usually looser; GDP by the central limit theorem [3] is an approximation that may under-report ε; "
        "basic and advanced composition [5] are upper bounds; the optimal composition of Kairouz, Oh and "
        "Viswanath [4] is exact where it applies. The number to publish is the smallest valid upper bound.",
        "The attack-risk read-out bounds the best membership-inference attack: at false-positive rate a "
        "its true-positive rate is at most 1 − T(a), where T is the tradeoff function of the composition "
        "[3, 7], bracketed by the certified tradeoff bounds; the advantage is the total variation distance "
        "δ(0). At a prior π of membership the Bayes risk, the best attack's least error, is "
        "min(π, 1 − π)(1 − δ(|log((1 − π)/π)|)); a reconstruction guess with baseline success κ succeeds "
        "with probability at most 1 − T(κ) [3, 7]. μ-GDP is certified from the profile, the RDP bound and "
        "each row's Gaussian tail, at every ε (docs/method.md, \"Certified μ-GDP\"); its regret is Gomez "
        "et al.'s distance from the Gaussian curve. The utility read-out gives the half-width of each "
        "noisy row's 95% noise interval.",
    ]
    refs = list(REFERENCES)
    if getattr(result, "epsilon_at_least", None) is not None:
        text.append("Some rows have a dominating pair that is only an upper bound (for shuffled batches no "
                    "tight accountant exists); the proven lower bound on the true ε comes from a concrete "
                    "attack pair [8].")
        refs.append(SHUFFLED_REFERENCE)
    return tuple(text), tuple(refs)


def gather(composition, result, pinned=None, risk: Risk | None = None, pinned_risk: Risk | None = None,
           created: _dt.datetime | None = None, title: str = "Differential privacy report",
           cancel=None) -> Report:
    """The report of ``result`` (computed for ``composition``: a Composition or Document, or None);
    ``pinned`` is (label, Result) to show beside it. ``risk`` and ``pinned_risk`` are computed when
    not given (a composition at the error level 1e-12: about the cost of the result itself);
    ``cancel()`` returning True stops that (``Cancelled``)."""
    req = result.request
    r = risk if risk is not None else _risk_or_none(result, cancel)
    p_label, p_result = pinned if pinned is not None else (None, None)
    pr = None
    if p_result is not None:
        pr = pinned_risk if pinned_risk is not None else _risk_or_none(p_result, cancel)
    targets = [("target δ", fmt(req.delta)), ("accuracy (ε error)", fmt(req.eps_error))]
    if req.epsilon is not None:
        targets.append(("δ reported at ε", fmt(req.epsilon)))
    orders, budget = _budget(result)
    method, refs = _method(result)
    warnings = list(result.warnings)
    if getattr(result, "epsilon_at_least", None) is not None:  # the headline says it already
        said = untight_note(req.rows, result.epsilon_at_least, result.epsilon.upper,
                            getattr(result, "poisson_epsilon", None), getattr(result, "shuffled_epsilon", None))
        warnings = [w for w in warnings if w != said]
    warnings += failure_notes(result)  # a part that could not be computed is named, not left out
    when = (created or _dt.datetime.now(_dt.timezone.utc)).strftime("%Y-%m-%d %H:%M UTC")
    st = privacy_statement(result, composition, r)
    return Report(title, when, __version__, row_lines(composition, result), tuple(targets),
                  setting_text(req), headline(result),
                  headline(p_result, p_label) if p_result is not None else None,
                  tuple(accountant_lines(result)), _risk_lines(r, pr), _utility(composition, result),
                  orders, budget, tuple(warnings), method, refs,
                  tuple(plot_figures(result, pinned)), st.fields, st.flags)


#: the window's curve resolutions (main_window.py), so that a report shows what the window shows
PROFILE_POINTS, TRADEOFF_POINTS, STEPS_POINTS = 100, 101, 40


def request_for(composition, delta: float | None = None, eps_error: float | None = None):
    """The view model's Request for a report of ``composition`` (a Composition or Document): its
    targets unless ``delta`` / ``eps_error`` are given, every curve, the steps curve varying the
    row with the largest count (the window's default). Raises ValueError naming a bad row."""
    rows = tuple(composition.engine_rows())
    t = composition.targets
    steps_row = max(range(len(rows)), key=lambda i: (rows[i].count, -i)) if rows else None
    return Request(rows, t.delta if delta is None else delta, t.epsilon,
                   t.eps_error if eps_error is None else eps_error, composition.neighbouring,
                   composition.group_size, profile_points=PROFILE_POINTS, tradeoff_points=TRADEOFF_POINTS,
                   steps_row=steps_row, steps_points=STEPS_POINTS, want_pld=True,
                   tuning=getattr(composition, "tuning", None))
