"""Whole-process timings of prvgui against prv-accountant 0.2.0 and dp-accounting 0.6.0.

Run by hand (needs the test extras):  python benchmarks/bench_dpsgd.py [--repeats 3] [--big]

Each measurement is a fresh Python process (imports included), DP-SGD with q = 0.01,
sigma = 0.8, delta = 1e-5. Reports medians over repeats (the programs take turns, so that
each sees the same spells of machine noise) and ratios measured in the same run,
plus the peak memory of the k = 10^6 run (--big) and the 200-point epsilon-vs-steps curve. Bytecode
caching is on for every process (PYTHONDONTWRITEBYTECODE is removed) and one untimed warm-up
run per program comes first, so each side runs from compiled modules, as after an install.
The library runs are plain imports (no process tuning); the CLI run goes through main()
as the ``prvgui`` command does, with the command's process tuning (prvgui/tuning.py).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
Q, SIGMA, DELTA = 0.01, 0.8, 1e-5

OURS = """
from prvgui.accounting import Accountant, Row, SubsampledGaussian
b = Accountant([Row(SubsampledGaussian({sigma}, {q}), {k})], eps_error=0.01).epsilon({delta})
print(b.lower, b.estimate, b.upper)
"""
PRV = """
from prv_accountant import PoissonSubsampledGaussianMechanism, PRVAccountant
prv = PoissonSubsampledGaussianMechanism(noise_multiplier={sigma}, sampling_probability={q})
acc = PRVAccountant(prvs=prv, max_self_compositions={k}, eps_error=0.01, delta_error={delta} / 1000)
print(*acc.compute_epsilon(delta={delta}, num_self_compositions={k}))
"""
DPA = """
from dp_accounting import dp_event
from dp_accounting.pld import pld_privacy_accountant
acc = pld_privacy_accountant.PLDAccountant(value_discretization_interval=1e-4)
acc.compose(dp_event.PoissonSampledDpEvent({q}, dp_event.GaussianDpEvent({sigma})), {k})
print(acc.get_epsilon({delta}))
"""
STEPS = """
import time, numpy as np
from prvgui.accounting import Accountant, Row, SubsampledGaussian

acc = Accountant([Row(SubsampledGaussian({sigma}, {q}), {k})], eps_error=0.01)
t = time.perf_counter()
cs, b = acc.epsilon_vs_count(0, np.unique(np.linspace(1, {k}, 200).astype(int)), {delta})
print(time.perf_counter() - t, len(cs), b[-1].upper)
"""


PEAK = """
import resource
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""
CLI = """
import sys
from prvgui.cli import main
sys.argv = ["prvgui", "epsilon", {path!r}, "--delta", "{delta}", "--json"]
raise SystemExit(main())  # as the prvgui command runs it: with the process tuning (tuning.py)
"""


# bytecode caching on, as in any installed package (the peers' .pyc files were written when
# they were installed; prvgui's are written by the untimed warm-up run below)
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
ENV["PYTHONPATH"] = ROOT


def run(code: str, **kw) -> tuple[float, str]:
    """(seconds, stdout) of a fresh interpreter running ``code``."""
    t = time.perf_counter()
    r = subprocess.run([sys.executable, "-c", code.format(**kw)], capture_output=True, text=True,
                       env=ENV, timeout=3600)
    dt = time.perf_counter() - t
    if r.returncode != 0:
        raise RuntimeError(r.stderr)
    return dt, r.stdout.strip()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--big", action="store_true", help="also k = 10^6 (memory) and the peers at 10^5")
    args = ap.parse_args()
    kw = dict(sigma=SIGMA, q=Q, delta=DELTA)
    print(f"DP-SGD q={Q} sigma={SIGMA} delta={DELTA}, eps_error 0.01, medians of {args.repeats}\n")
    for code in (OURS, PRV, DPA):  # warm-up: writes bytecode caches, fills the page cache
        run(code, k=100, **kw)
    print("| k | prvgui s | prv_accountant s | dp_accounting s | prv_acc / prvgui | dp_acc / prvgui |"
          " prvgui eps [lower, upper] |")
    print("|---|---|---|---|---|---|---|")
    for k in (10**3, 10**4, 10**5):
        # interleaved (prvgui, peers, prvgui, peers, ...) so that every program sees the same
        # spells of a noisy shared machine; prv_accountant at 10^5 once (about a minute)
        progs = [("ours", OURS), ("prv", PRV), ("dpa", DPA)]
        if k > 10**4:
            progs = [p for p in progs if p[0] != "prv"]
        times: dict[str, list[float]] = {name: [] for name, _ in progs}
        outs: dict[str, str] = {}
        for _ in range(args.repeats):
            for name, code in progs:
                dt, outs[name] = run(code, k=k, **kw)
                times[name].append(dt)
        if k > 10**4 and args.big:
            dt, outs["prv"] = run(PRV, k=k, **kw)
            times["prv"] = [dt]
        res = {name: (statistics.median(ts), outs[name]) for name, ts in times.items()}
        ours = res["ours"][0]
        lo, _, up = res["ours"][1].split()
        prv = res.get("prv", (float("nan"), ""))[0]
        dpa = res["dpa"][0]
        print(f"| {k} | {ours:.2f} | {prv:.2f} | {dpa:.2f} | {prv / ours:.1f}x | {dpa / ours:.1f}x |"
              f" [{float(lo):.3f}, {float(up):.3f}] |")
    inner, whole = [], []
    for _ in range(args.repeats):
        dt, out = run(STEPS, k=10**5, **kw)
        secs, n, last = out.split()
        inner.append(float(secs))
        whole.append(dt)
    print(f"\nsteps curve, {n} points up to k=10^5: {statistics.median(inner):.2f} s inside the "
          f"process ({statistics.median(whole):.2f} s whole process), medians of {args.repeats}")
    cli = []
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "dpsgd.json")
        with open(path, "w") as f:
            json.dump({"format": "prvgui.composition", "version": 1, "mechanisms": [
                {"kind": "subsampled_gaussian", "sigma": SIGMA, "sampling_rate": Q, "count": 10**4}]}, f)
        for _ in range(args.repeats):
            dt, _ = run(CLI, path=path, delta=DELTA)
            cli.append(dt)
    print(f"CLI `prvgui epsilon FILE --delta {DELTA} --json` at k=10^4 (with the comparison "
          f"accountants): {statistics.median(cli):.2f} s whole process")
    if args.big:  # the child reports its own peak (the children's maximum includes the peers')
        dt, out = run(OURS + PEAK, k=10**6, **kw)
        lo, est, up, peak_kib = out.split()
        print(f"k=10^6: {dt:.1f} s, peak RSS {int(peak_kib) / 1024:.0f} MiB, "
              f"epsilon bracket [{float(lo):.3f}, {float(up):.3f}]")


if __name__ == "__main__":
    main()
