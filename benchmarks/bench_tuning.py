"""Does each piece of the command's process tuning (prvgui/tuning.py) still pay?

Run by hand:  python benchmarks/bench_tuning.py [--rounds 21]

Times whole processes of ``python -m prvgui epsilon FILE --delta 1e-5`` (the command, so with
its tuning) on the DP-SGD example and on a 10^4-step DP-SGD file (q = 0.01, sigma = 0.8), with
all tuning on, each piece switched off through its environment variable, and all off. Every
round runs each (file, variant) once in a shuffled order, so that all see the same spells of
machine noise; reports the median wall time with its quartiles, the ratio to all-on with a 95%
bootstrap interval, and the median CPU time (user + system) of the process. Bytecode caching
is on and one untimed run of each comes first. On Linux, a run during which other processes
kept more than 0.2 of a CPU busy (--quiet) is repeated. "No BLAS limit" sets
OPENBLAS_NUM_THREADS to the CPU count, which is what OpenBLAS picks by itself.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SWITCHES = ("OPENBLAS_NUM_THREADS", "PRVGUI_GC_FREEZE", "PRVGUI_HEAP_PAD", "PYTHONDONTWRITEBYTECODE")
ENV = {k: v for k, v in os.environ.items() if k not in SWITCHES} | {"PYTHONPATH": ROOT}
BLAS_DEFAULT = {"OPENBLAS_NUM_THREADS": str(os.cpu_count() or 1)}
VARIANTS = {
    "all on": {},
    "PRVGUI_GC_FREEZE=0": {"PRVGUI_GC_FREEZE": "0"},
    "PRVGUI_HEAP_PAD=0": {"PRVGUI_HEAP_PAD": "0"},
    "no BLAS limit": BLAS_DEFAULT,
    "all off": {"PRVGUI_GC_FREEZE": "0", "PRVGUI_HEAP_PAD": "0"} | BLAS_DEFAULT,
}


def busy_seconds() -> float | None:
    """CPU seconds the whole machine has spent busy since boot (Linux; None elsewhere)."""
    try:
        with open("/proc/stat") as f:
            ticks = [int(x) for x in f.readline().split()[1:]]
    except OSError:
        return None
    return (sum(ticks[:8]) - ticks[3] - ticks[4]) / os.sysconf("SC_CLK_TCK")  # minus idle, iowait


def run_once(path: str, env: dict) -> tuple[float, float, float]:
    """(wall seconds, CPU seconds, CPU seconds used by other processes meanwhile) of one
    ``prvgui epsilon`` process."""
    before, busy = resource.getrusage(resource.RUSAGE_CHILDREN), busy_seconds()
    t = time.perf_counter()
    subprocess.run([sys.executable, "-m", "prvgui", "epsilon", path, "--delta", "1e-5"],
                   env=ENV | env, check=True, stdout=subprocess.DEVNULL)  # a timeout would poll
    wall = time.perf_counter() - t
    after, busy_after = resource.getrusage(resource.RUSAGE_CHILDREN), busy_seconds()
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return wall, cpu, 0.0 if busy is None else max(busy_after - busy - cpu, 0.0)


def run(path: str, env: dict, quiet: float) -> tuple[float, float]:
    """(wall, CPU) seconds of a run during which other processes used at most ``quiet`` of a
    CPU (a shared machine: runs that caught someone else's job are repeated for up to an hour)."""
    deadline = time.monotonic() + 3600
    while True:
        wall, cpu, other = run_once(path, env)
        if other <= quiet * wall:
            return wall, cpu
        if time.monotonic() > deadline:
            raise RuntimeError("the machine was never quiet for an hour; try a larger --quiet")
        time.sleep(2.0)


def ratio_interval(a: list[float], b: list[float], n: int = 2000) -> tuple[float, float]:
    """95% bootstrap interval of median(a) / median(b)."""
    rs = sorted(statistics.median(random.choices(a, k=len(a))) /
                statistics.median(random.choices(b, k=len(b))) for _ in range(n))
    return rs[int(0.025 * n)], rs[int(0.975 * n) - 1]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=21)
    ap.add_argument("--quiet", type=float, default=0.2,
                    help="repeat runs during which other processes used more than this many CPUs")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        big = os.path.join(tmp, "dpsgd_1e4.json")
        with open(big, "w") as f:
            json.dump({"format": "prvgui.composition", "version": 1, "mechanisms": [
                {"kind": "subsampled_gaussian", "sigma": 0.8, "sampling_rate": 0.01,
                 "count": 10**4}]}, f)
        files = {"dpsgd_mnist.json": os.path.join(ROOT, "resources", "examples", "dpsgd_mnist.json"),
                 "DP-SGD k=10^4": big}
        jobs = [(f, v) for f in files for v in VARIANTS]
        times: dict = {job: ([], []) for job in jobs}
        for f, v in jobs:  # warm-up: bytecode caches, page cache
            run_once(files[f], VARIANTS[v])
        for _ in range(args.rounds):
            random.shuffle(jobs)
            for f, v in jobs:
                wall, cpu = run(files[f], VARIANTS[v], args.quiet)
                times[(f, v)][0].append(wall)
                times[(f, v)][1].append(cpu)
    for f in files:
        ref = times[(f, "all on")][0]
        print(f"\n{f}: median wall ms (quartiles), ratio to all on [95% bootstrap], median CPU ms")
        for v in VARIANTS:
            wall, cpu = times[(f, v)]
            q1, _, q3 = statistics.quantiles(wall, n=4)
            med = statistics.median(wall)
            lo, hi = ratio_interval(wall, ref)
            print(f"  {v:<20} {1e3 * med:6.1f} ({1e3 * q1:.1f}-{1e3 * q3:.1f})"
                  f"  {med / statistics.median(ref):.3f} [{lo:.3f}, {hi:.3f}]"
                  f"  {1e3 * statistics.median(cpu):6.1f}")


if __name__ == "__main__":
    main()
