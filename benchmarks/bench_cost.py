"""The cost estimate (prvgui/accounting/numerics/pricing.py) against measured time and memory.

Run by hand:  python benchmarks/bench_cost.py [--quick] [--only NAME] [--primitives]

Each case runs in a fresh process: first ``Accountant.cost`` (or ``view_model.cost``
for a whole window request), timed, then the real query, timed, with the process's peak
resident memory. Prints estimate / actual for both. ``--primitives`` times the stages the
estimate's constants stand for (discretisation per cell, transform, power and inverse
transform per point, peak bytes by tracemalloc), best of 3, as cost.py's docstring lists them.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

#: name -> (rows as (sigma, q, count) of subsampled Gaussians or a mechanism dict, eps_error, delta, mode)
SG = "subsampled_gaussian"
CASES = {
    "dpsgd-default": ([(1.1, 0.0042667, 14063)], 0.01, 1e-5, "epsilon"),
    "dpsgd-eps1e-3": ([(1.1, 0.0042667, 14063)], 1e-3, 1e-5, "epsilon"),
    "dpsgd-eps1e-4": ([(1.1, 0.0042667, 14063)], 1e-4, 1e-5, "epsilon"),
    "dpsgd-eps1e-6": ([(1.1, 0.0042667, 14063)], 1e-6, 1e-5, "epsilon"),
    "dpsgd-delta1e-300": ([(1.1, 0.0042667, 14063)], 0.01, 1e-300, "epsilon"),
    "dpsgd-delta1e-10": ([(1.1, 0.0042667, 14063)], 0.01, 1e-10, "epsilon"),
    "dpsgd-sigma0.1": ([(0.1, 0.0042667, 14063)], 0.01, 1e-5, "epsilon"),
    "dpsgd-sigma0.3": ([(0.3, 0.0042667, 14063)], 0.01, 1e-5, "epsilon"),
    "dpsgd-count1e9": ([(1.1, 0.0042667, 10**9)], 0.01, 1e-5, "epsilon"),
    "dpsgd-count1e6": ([(0.8, 0.01, 10**6)], 0.01, 1e-5, "epsilon"),
    "dpsgd-count1e5-eps1e-3": ([(0.8, 0.01, 10**5)], 1e-3, 1e-5, "epsilon"),
    "laplace-eps1e-4": ([{"kind": "laplace", "scale": 10.0, "count": 50}], 1e-4, 1e-6, "epsilon"),
    "mixed-eps1e-3": ("mixed", 1e-3, 1e-5, "epsilon"),
    "window-default": ([(1.1, 0.0042667, 14063)], 0.01, 1e-5, "window"),
    "window-eps1e-4": ([(1.1, 0.0042667, 14063)], 1e-4, 1e-5, "window"),
    "window-sigma0.3": ([(0.3, 0.0042667, 14063)], 0.01, 1e-5, "window"),
    "window-mixed": ("mixed", 0.01, 1e-5, "window"),
}
QUICK = ("dpsgd-default", "dpsgd-eps1e-3", "dpsgd-sigma0.3", "dpsgd-count1e6", "window-default")

CHILD = r"""
import json, resource, sys, time
from prvgui.accounting.mechanisms import Row, mechanism_from_params
from prvgui.accounting.queries.accountant import Accountant
from prvgui.accounting import view_model as vm
from prvgui import api
spec, eps_error, delta, mode = json.loads(sys.argv[1])
if spec == "mixed":
    rows = api.load("resources/examples/mixed.json").engine_rows()
else:
    rows = [Row(mechanism_from_params(s["kind"], {k: v for k, v in s.items() if k not in ("kind", "count")}),
                s["count"]) if isinstance(s, dict) else
            Row(mechanism_from_params("subsampled_gaussian", {"sigma": s[0], "sampling_rate": s[1]}), s[2])
            for s in spec]
if mode == "window":
    req = vm.Request(tuple(rows), delta, 1.0, eps_error, profile_points=100, tradeoff_points=101,
                     steps_row=0, steps_points=40, want_pld=True)
    t = time.perf_counter(); est = vm.cost(req); t_est = time.perf_counter() - t
    t = time.perf_counter(); vm.compute(req); took = time.perf_counter() - t
else:
    t = time.perf_counter(); est = Accountant(rows, eps_error).cost(delta=delta)
    t_est = time.perf_counter() - t
    t = time.perf_counter(); Accountant(rows, eps_error).epsilon(delta); took = time.perf_counter() - t
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(json.dumps({"est_s": est.seconds, "est_b": est.bytes, "grid": est.grid, "why": est.why,
                  "t_est": t_est, "took": took, "peak": peak}))
"""


def run_case(name: str, timeout: float) -> dict | None:
    spec, eps_error, delta, mode = CASES[name]
    try:
        r = subprocess.run([sys.executable, "-c", CHILD, json.dumps([spec, eps_error, delta, mode])],
                           capture_output=True, text=True, cwd=ROOT, timeout=timeout,
                           env=dict(os.environ, PYTHONPATH=ROOT))
    except subprocess.TimeoutExpired:
        return None
    if r.returncode != 0:
        print(r.stderr, file=sys.stderr)
        return None
    return json.loads(r.stdout.strip().splitlines()[-1])


def primitives() -> None:
    import time
    import tracemalloc

    import numpy as np

    from prvgui.accounting.numerics import compose
    from prvgui.accounting.numerics.discretize import DiscretePRV, discretize
    from prvgui.accounting.mechanisms import Neighbouring, SubsampledGaussian

    def best(fn, *args, rep=3):
        b = float("inf")
        for _ in range(rep):
            t = time.perf_counter()
            fn(*args)
            b = min(b, time.perf_counter() - t)
        return b

    def peak(fn, *args):
        tracemalloc.start()
        fn(*args)
        p = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        return p

    prv = SubsampledGaussian(1.1, 0.0043).prv("remove", Neighbouring.ADD_REMOVE)
    a, b = prv.cont.lower_cut(1e-15), prv.cont.upper_cut(1e-15)
    h = (b - a) / 2e6
    t = best(discretize, prv, h, 1e-15, 10**9)
    print(f"discretize, subsampled Gaussian: {1e9 * t / 2e6:.0f} ns per cell (every cell an edge), "
          f"peak {peak(discretize, prv, h, 1e-15, 10**9) / 2e6:.0f} B per cell")
    for n in (1 << 22, 24 << 20):
        cells = n // 2
        pmf = np.exp(-0.5 * ((np.arange(cells) - cells / 2) / (cells / 10)) ** 2)
        d = DiscretePRV(pmf / pmf.sum(), -cells // 2, 1e-4, 0.0, 0.0, 0.0, 0.0, centre=cells // 2)
        for ext in (False, True):
            if ext and n > 1 << 22:
                continue
            spec, _ = compose.row_spectrum(d, n, ext)
            t_rs, t_pw = best(compose.row_spectrum, d, n, ext), best(compose.power, spec, 3)
            m_rs, m_pw = peak(compose.row_spectrum, d, n, ext), peak(compose.power, spec, 3)
            print(f"n = {n}, long double {ext}: transform {1e9 * t_rs / n:.0f} ns/point, power "
                  f"{1e9 * t_pw / (n / 2):.0f} ns/coefficient, peak {m_rs / n:.0f} + {m_pw / n:.0f} B/point")
        spec = np.fft.rfft(d.pmf, n)
        t_fin = best(compose.finish, spec, n, 0, 0, 1e-4, 0.0, 0.0, 1e-12, 1e-12, 0.0)
        print(f"n = {n}: inverse transform and window read {1e9 * t_fin / n:.0f} ns/point")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="only the faster cases")
    ap.add_argument("--only", help="one case by name")
    ap.add_argument("--primitives", action="store_true", help="time the stages behind the constants")
    ap.add_argument("--timeout", type=float, default=600)
    args = ap.parse_args()
    if args.primitives:
        primitives()
        return
    names = [args.only] if args.only else QUICK if args.quick else list(CASES)
    print(f"{'case':<24} {'est s':>7} {'real s':>7} {'ratio':>6} {'est GB':>7} {'real GB':>8} {'ratio':>6} "
          f"{'grid':>9} {'estimate ms':>11}")
    for name in names:
        r = run_case(name, args.timeout)
        if r is None:
            print(f"{name:<24} (timed out or failed)")
            continue
        print(f"{name:<24} {r['est_s']:7.2f} {r['took']:7.2f} {r['est_s'] / r['took']:6.2f} "
              f"{r['est_b'] / 1e9:7.2f} {r['peak'] / 1e9:8.2f} {r['est_b'] / r['peak']:6.2f} "
              f"{r['grid']:9.2g} {1e3 * r['t_est']:11.1f}", flush=True)


if __name__ == "__main__":
    main()
