"""The window's whole answer for many distinct rows (issue 30), run by hand.

    python benchmarks/bench_window_many.py [--rows 1000] [--rounds 2] [--epsilon 5]

A schedule of R distinct Poisson-subsampled Gaussian rows (sigma uniform in [0.8, 1.5], q in
[0.001, 0.01], seed 0, each drawn once), as the window asks for it: the engine's
``view_model.compute`` with the window's default request (epsilon at delta 1e-5, delta at
``--epsilon``, the comparison accountants, the tradeoff, the PLD, the attack risk, the profile
and the epsilon-versus-steps curve of the first row). One untimed answer first (imports, the
first call's caches; the rows' RDP curves are then kept, as a window keeps them between edits,
so they are cleared before each timed answer), then ``--rounds`` timed ones: the median of the
time to the headline and to each part as ``compute`` delivers it, and the estimate the window
prices the request at beforehand (``view_model.cost``). No peer answers this whole request; the
headline's peers are in bench_many.py.
"""
from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from prvgui.accounting import Row, SubsampledGaussian
from prvgui.accounting.queries import comparisons
from prvgui.engine import view_model
from prvgui.engine.view_model import Request, compute, cost


def rows(n: int) -> tuple[Row, ...]:
    rng = np.random.default_rng(0)
    return tuple(Row(SubsampledGaussian(float(s), float(q)), 1)
                 for s, q in zip(rng.uniform(0.8, 1.5, n), rng.uniform(0.001, 0.01, n)))


def timed(request: Request) -> dict[str, float]:
    """Seconds from the start to the headline and to each part's delivery."""
    t0 = time.perf_counter()
    seen: dict[str, float] = {}

    def partial(result) -> None:
        now = time.perf_counter() - t0
        if not seen:
            seen["headline"] = now
        for part in view_model._DELIVERY:
            if part not in result.pending and part not in seen and part in view_model.PARTS:
                seen[part] = now
    compute(request, partial=partial)
    seen["whole"] = time.perf_counter() - t0
    return seen


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--epsilon", type=float, default=5.0)
    args = ap.parse_args()
    request = Request(rows(args.rows), 1e-5, args.epsilon, 0.01, profile_points=100, tradeoff_points=101,
                      steps_row=0, steps_points=40)
    estimate = cost(request)
    compute(request)  # (untimed: imports and the first call's caches)
    runs = []
    for _ in range(args.rounds):
        comparisons._RDP.clear()  # (a window keeps them between edits: count them every time)
        runs.append(timed(request))
    print(f"{args.rows} distinct DP-SGD steps, the window's whole request (median of {args.rounds}); "
          f"estimated beforehand: {estimate.seconds:.1f} s")
    print("| part | delivered after (s) |")
    print("|---|---|")
    for key in runs[0]:
        print(f"| {key} | {statistics.median(r[key] for r in runs if key in r):.1f} |")


if __name__ == "__main__":
    main()
