"""Tables of curves from a computed result, shared by the CLI and the GUI exports."""
from __future__ import annotations

import math

import numpy as np

from ..accounting.core.values import Neighbouring, Relation
from .fileio import composition_comments, curve_csv
from .model import Document

#: how each way of forming batches is named in captions and export headers
SCHEME_WORDS = {"poisson": "Poisson-sampled batches", "fixed_size": "fixed-size batches",
                "shuffled": "shuffled batches"}


def batch_schemes(rows) -> list[str]:
    """How the rows form their batches, in words ('Poisson-sampled batches', 'shuffled batches',
    a kind's own ``batch_words``), in row order, each once: each kind says its own
    (``Mechanism.batch_scheme``); rows without batches (a Laplace query, zCDP, the exponential
    mechanism, the shuffle model) add nothing."""
    out: list[str] = []
    for r in rows:
        mech = getattr(r, "mechanism", None)
        scheme = getattr(mech, "batch_scheme", None)
        words = getattr(mech, "batch_words", None) or SCHEME_WORDS.get(scheme) if isinstance(scheme, str) else None
        if words and words not in out:
            out.append(words)
    return out


def setting_text(request) -> str:
    """What a result's guarantee is for, in words: the neighbouring relation, the group size and
    the sampling schemes, e.g. 'replace one record, groups of 4 records; fixed-size batches'."""
    relation = Relation(Neighbouring.parse(getattr(request, "neighbouring", "add_remove")),
                        getattr(request, "group_size", 1))
    schemes = batch_schemes(getattr(request, "rows", ()))
    text = relation.describe()
    if schemes:
        text += "; " + ", ".join(schemes)
    return text


def _col(c: np.ndarray | None, n: int) -> np.ndarray:
    return np.full(n, math.nan) if c is None else np.asarray(c, dtype=float)


def curve_table(result, kind: str) -> tuple[list[str], list[np.ndarray], list[str]]:
    """(header, columns, extra comment lines) for one curve of an engine Result."""
    req = result.request
    notes = [f"guarantee for: {setting_text(req)}", f"delta: {req.delta!r}", f"eps_error: {req.eps_error!r}",
             f"epsilon at delta: lower {result.epsilon.lower!r} estimate "
             f"{result.epsilon.estimate!r} upper {result.epsilon.upper!r}",
             "lower/upper are certified bounds; rdp is an upper bound; "
             "gdp is an approximation and may under-report"]
    best = getattr(result, "certified_upper", None)
    if best is not None:
        notes.insert(4, f"certified upper bound on epsilon: {best.value!r} (by {best.by})")
    notes += [f"warning: {w}" for w in getattr(result, "warnings", ())]
    if kind == "profile" and result.profile is not None:
        c = result.profile
        n = c.x.size
        return (["epsilon", "delta_lower", "delta_estimate", "delta_upper", "delta_rdp", "delta_gdp"],
                [c.x] + [_col(c.columns.get(k), n) for k in ("lower", "estimate", "upper", "rdp", "gdp")],
                notes)
    if kind == "tradeoff" and result.tradeoff is not None:
        c = result.tradeoff
        n = c.x.size
        return (["alpha", "beta_lower", "beta_estimate", "beta_upper", "beta_gdp"],
                [c.x] + [_col(c.columns.get(k), n) for k in ("lower", "estimate", "upper", "gdp")],
                notes)
    if kind == "steps" and result.steps is not None:
        c = result.steps
        n = c.x.size
        notes.append(f"count of row {req.steps_row + 1} varies; other rows fixed")
        return (["count", "epsilon_lower", "epsilon_estimate", "epsilon_upper", "epsilon_rdp",
                 "epsilon_gdp"],
                [c.x] + [_col(c.columns.get(k), n) for k in ("lower", "estimate", "upper", "rdp", "gdp")],
                notes)
    if kind == "pld" and result.pld is not None:
        c = result.pld
        notes.append(f"probability of infinite loss: {result.pld_inf_mass!r}")
        notes.append("composed privacy loss (first order of the pair): density is that of its "
                     "continuous part; atom_mass is the probability of a point mass at that loss "
                     "(rows with an atom leave density empty: a point mass has no density)")
        atoms = getattr(result, "pld_atoms", None)
        dens = c.columns.get("density")
        x = c.x if dens is not None else np.zeros(0)
        d = _col(dens, x.size)
        m = np.zeros(x.size)
        if atoms is not None:
            ax = np.asarray(atoms.x, dtype=float)
            x = np.concatenate([x, ax])
            d = np.concatenate([d, np.full(ax.size, math.nan)])
            m = np.concatenate([m, atoms.columns["mass"]])
            order = np.argsort(x, kind="stable")
            x, d, m = x[order], d[order], m[order]
        return ["loss", "density", "atom_mass"], [x, d, m], notes
    raise ValueError(f"the result has no {kind!r} curve")


def curve_csv_text(result, kind: str, doc: Document | None) -> str:
    header, cols, notes = curve_table(result, kind)
    return curve_csv(header, cols, composition_comments(doc, notes))
