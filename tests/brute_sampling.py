"""Brute-force privacy of a noisy sum on small datasets, independent of the engine (issue 25).

A dataset is a tuple of clipped contributions in [-1, 1] (units of the clipping norm). Each step
forms a batch by a sampling scheme, enumerated exactly with its probabilities, and releases the
batch's sum plus Gaussian or Laplace noise; so one step's output law is a finite mixture of
shifted noise densities. Two neighbouring datasets give two such mixtures, and their hockey-stick
divergence delta(eps) = int (p - e^eps q)_+ is a proven LOWER bound on any valid epsilon(delta)
of the mechanism. Composition: the same pair at every step, its privacy loss discretised with the
loss rounded DOWN (an optimistic discretisation, so the composed delta stays below the truth),
convolved k times.

Nothing here calls prvgui: the sampling, the mixtures and the divergences are written out.
"""
from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
from scipy.signal import fftconvolve
from scipy.special import ndtr

#: the outputs' grid for one step: the mixtures' mass outside it is below 1e-15
_HALF = 40.0


def fixed_size_batches(n: int, b: int):
    """Every batch of exactly b of the n indices, equally likely: (indices, probability)."""
    subsets = list(itertools.combinations(range(n), b))
    p = 1.0 / len(subsets)
    return [(s, p) for s in subsets]


def poisson_batches(n: int, q: float):
    """Every subset of the n indices with its Poisson probability (each index with rate q)."""
    out = []
    for mask in itertools.product((0, 1), repeat=n):
        k = sum(mask)
        out.append((tuple(i for i in range(n) if mask[i]), q ** k * (1 - q) ** (n - k)))
    return out


def shuffled_partitions(n: int, batches: int):
    """Every way a random permutation splits n indices into ``batches`` consecutive batches of
    n / batches (ordered: batch t is the t-th), equally likely."""
    size = n // batches
    perms = list(itertools.permutations(range(n)))
    p = 1.0 / len(perms)
    out: dict = {}
    for perm in perms:
        key = tuple(tuple(sorted(perm[t * size:(t + 1) * size])) for t in range(batches))
        out[key] = out.get(key, 0.0) + p
    return list(out.items())


def sums_law(data, batches) -> dict[float, float]:
    """The law of the batch's sum: value -> probability (one batch per step)."""
    law: dict[float, float] = {}
    for s, p in batches:
        v = round(sum(data[i] for i in s if i < len(data)), 12)
        law[v] = law.get(v, 0.0) + p
    return law


def density(law: dict[float, float], x: np.ndarray, noise: str, scale: float) -> np.ndarray:
    out = np.zeros_like(x)
    for v, p in law.items():
        if noise == "gaussian":
            out += p * np.exp(-0.5 * ((x - v) / scale) ** 2) / (scale * math.sqrt(2 * math.pi))
        else:
            out += p * np.exp(-np.abs(x - v) / scale) / (2 * scale)
    return out


def cell_masses(law: dict[float, float], edges: np.ndarray, noise: str, scale: float) -> np.ndarray:
    """The mixture's exact mass in each cell between consecutive edges."""
    cdf = np.zeros_like(edges)
    for v, p in law.items():
        z = (edges - v) / scale
        if noise == "gaussian":
            cdf += p * ndtr(z)
        else:
            cdf += p * np.where(z < 0, 0.5 * np.exp(np.minimum(z, 0)), 1 - 0.5 * np.exp(-np.maximum(z, 0)))
    return np.diff(cdf)


def hockey_stick(law_p, law_q, eps, noise: str, scale: float) -> np.ndarray:
    """delta(eps) = int (p - e^eps q)_+ at each eps, for two one-dimensional mixtures: the exact
    masses of fine cells (a post-processing of the outputs, so never above the truth), summed
    as sum over cells of (P(cell) - e^eps Q(cell))_+."""
    lo = min(min(law_p), min(law_q)) - _HALF * scale
    hi = max(max(law_p), max(law_q)) + _HALF * scale
    edges = np.linspace(lo, hi, 100_001)
    mp, mq = cell_masses(law_p, edges, noise, scale), cell_masses(law_q, edges, noise, scale)
    return np.array([float(np.sum(np.maximum(mp - math.exp(e) * mq, 0.0))) for e in np.atleast_1d(eps)])


def hockey_stick_2d(laws_p, laws_q, eps, scale: float) -> np.ndarray:
    """The same for two-dimensional outputs (two batch sums with Gaussian noise each): laws map
    (sum_1, sum_2) -> probability; cells of a product grid, exact masses."""
    pts = list(laws_p) + list(laws_q)
    lo = min(min(a, b) for a, b in pts) - 9 * scale
    hi = max(max(a, b) for a, b in pts) + 9 * scale
    edges = np.linspace(lo, hi, 1201)

    def masses(law):
        out = np.zeros((edges.size - 1, edges.size - 1))
        for (a, b), p in law.items():
            out += p * np.outer(np.diff(ndtr((edges - a) / scale)), np.diff(ndtr((edges - b) / scale)))
        return out
    mp, mq = masses(laws_p), masses(laws_q)
    return np.array([float(np.sum(np.maximum(mp - math.exp(e) * mq, 0.0))) for e in np.atleast_1d(eps)])


def shuffled_law(data, partitions) -> dict[tuple[float, float], float]:
    """The law of the two batch sums of one shuffled epoch."""
    law: dict = {}
    for parts, p in partitions:
        v = tuple(round(sum(data[i] for i in part), 12) for part in parts)
        law[v] = law.get(v, 0.0) + p
    return law


def composed_delta(law_p, law_q, k: int, eps_grid: np.ndarray, noise: str, scale: float,
                   h: float = 1e-3) -> np.ndarray:
    """delta(eps) at ``eps_grid`` of the pair composed k times, from below: the output line cut
    into fine cells, each cell's loss the smallest loss in it (post-processing to the cells can
    only lower delta, and rounding the loss down lowers it further); the losses of k draws
    convolved on a grid of width h, rounded down."""
    # the outputs beyond 12 scales are dropped: mass left out only lowers delta
    lo = min(min(law_p), min(law_q)) - 12 * scale
    hi = max(max(law_p), max(law_q)) + 12 * scale
    edges = np.linspace(lo, hi, 100_001)
    mp = cell_masses(law_p, edges, noise, scale)
    mq = cell_masses(law_q, edges, noise, scale)
    keep = (mp > 0) & (mq > 0)
    # the cell's probabilities are exact masses: their ratio is the loss of the coarsened pair
    loss = np.log(mp[keep]) - np.log(mq[keep])
    inf_mass = float(mp[(mp > 0) & ~(mq > 0)].sum())
    idx = np.floor(loss / h).astype(np.int64)
    base = int(idx.min())
    pmf = np.bincount(idx - base, weights=mp[keep])
    total = pmf.copy()
    start = base
    for _ in range(k - 1):
        total = np.maximum(fftconvolve(total, pmf), 0.0) * (1 - 1e-12)  # FFT rounding: from below
        start += base
    fin = 1.0 - (1.0 - inf_mass) ** k
    y = (start + np.arange(total.size)) * h
    return np.array([fin + float(np.sum(total * np.maximum(0.0, -np.expm1(e - y)))) for e in eps_grid])


def value_sets(n_others: int, values=(-1.0, 0.0, 1.0)):
    """The others' contributions up to order (a batch's sum depends only on how many of each
    value it holds): every multiset of n_others values."""
    return list(itertools.combinations_with_replacement(values, n_others))


def hypergeometric(n: int, k: int, b: int, j: int) -> float:
    return float(Fraction(math.comb(k, j) * math.comb(n - k, b - j), math.comb(n, b)))
