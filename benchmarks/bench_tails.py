"""Tight where float64 gives up (issue 13 item 5), run by hand:

    python benchmarks/bench_tails.py [--json]

For each case: the certified bracket of epsilon(delta) (eps_error 0.01, so the goal is a width of
at most 0.02), its width, the wall time on a fresh accountant (the row cache emptied first), and
an exact value where one exists (Gaussian compositions: the closed form; a Gaussian with
randomized responses: the exact sum in mpmath). The Gaussian cases are forced onto the FFT path
(``closed_forms=False``), as a mixture would be. prv_accountant refuses deltas this small
("Floating point errors will dominate"); dp-accounting's PLD truncates its tails at 1e-15.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

import references as ref  # noqa: E402
from prvgui.accounting import Accountant, Gaussian, RandomizedResponse, Row, SubsampledGaussian  # noqa: E402
from prvgui.accounting.numerics import reuse  # noqa: E402


def _gauss(mu: float, delta: float) -> float:
    return ref.gaussian_epsilon(mu, delta)


def _gauss_rr(delta: float) -> float:
    """epsilon of Gaussian(mu 0.4) + 6 randomized responses (0.3) at delta, by bisection on the
    exact mpmath delta (to 1e-6)."""
    lo, hi = 0.0, 40.0
    while hi - lo > 1e-6:
        mid = 0.5 * (lo + hi)
        if ref.gaussian_rr_delta(0.4, 0.3, 6, mid) > delta:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


CASES = [
    ("Gaussian mu 1 (FFT path)", [Row(Gaussian(10.0), 100)], False, (1e-10, 1e-13, 1e-15, 1e-50),
     lambda d: _gauss(1.0, d)),
    ("DP-SGD sigma 1, q 0.01, 10^4 steps", [Row(SubsampledGaussian(1.0, 0.01), 10 ** 4)], True,
     (1e-10, 1e-13, 1e-15), None),
    ("DP-SGD sigma 1, q 0.01, 10^5 steps", [Row(SubsampledGaussian(1.0, 0.01), 10 ** 5)], True,
     (1e-13, 1e-15), None),
    ("DP-SGD sigma 0.1, q 0.01, 100 steps (large eps)", [Row(SubsampledGaussian(0.1, 0.01), 100)], True,
     (1e-5,), None),
    ("Gaussian mu 0.4 + 6 randomized responses 0.3", [Row(Gaussian(2.5), 1), Row(RandomizedResponse(0.3), 6)],
     True, (1e-15, 1e-100, 1e-300), _gauss_rr),
]


def run() -> list[dict]:
    out = []
    for name, rows, closed, deltas, exact in CASES:
        for delta in deltas:
            reuse.clear()
            t = time.perf_counter()
            b = Accountant(rows, 0.01, closed_forms=closed).epsilon(delta)
            ms = 1e3 * (time.perf_counter() - t)
            truth = exact(delta) if exact is not None else None
            out.append({"case": name, "delta": delta, "lower": b.lower, "upper": b.upper,
                        "width": b.upper - b.lower, "ms": ms, "exact": truth,
                        "inside": None if truth is None else b.lower <= truth <= b.upper})
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    res = run()
    if args.json:
        print(json.dumps(res))
        return
    print("| case | delta | bracket | width | exact | time |")
    print("|---|---|---|---|---|---|")
    for r in res:
        ex = "" if r["exact"] is None else f"{r['exact']:.4f} ({'inside' if r['inside'] else 'OUTSIDE'})"
        up = "inf" if math.isinf(r["upper"]) else f"{r['upper']:.4f}"
        print(f"| {r['case']} | {r['delta']:g} | [{r['lower']:.4f}, {up}] | {r['width']:.4f} | {ex} | "
              f"{r['ms']:.0f} ms |")


if __name__ == "__main__":
    main()
