"""Sweep throughput per core against single queries (prvgui sweep, prvgui/sweep/run.py).

Run by hand:  python benchmarks/bench_sweep.py [--rounds 3] [--workers 2] [--cases gaussian,dpsgd]

Each case is a grid over one composition: "gaussian" (one Gaussian row, closed form, a few ms a
point) and "dpsgd" (a DP-SGD row, the FFT path, about 30 ms a point). Each (case, way) runs in a
fresh process with the command's tuning (tuning.py), timed from after the imports:

* single: ``api.query`` for every point, one after the other (what ``prvgui epsilon`` computes
  per point, without the process start);
* sweep 1: ``run_sweep(..., workers=1)``: the chunks in the process, written to the journal;
* sweep N: ``run_sweep(..., workers=N)``: N local worker processes (a Dask LocalCluster, its
  start included).

Throughput per core is points / (wall seconds x cores used), and points / CPU seconds (user +
system of the process and its reaped children: the workers), which a loaded machine disturbs
less. The ratio is single / sweep (1: as fast per core as single queries; 1.5: the target's
limit). Medians over the rounds; the load average is printed beside them.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CASES = {
    "gaussian": ({"kind": "gaussian", "sigma": 2.0, "count": 10},
                 ["1.sigma=0.5:5:100", "1.count=100:20000:200"]),
    "dpsgd": ({"kind": "subsampled_gaussian", "sigma": 1.0, "sampling_rate": 0.01, "count": 1000},
              ["1.sigma=0.8:1.6:32", "1.sampling_rate=0.005:0.02:30"]),
}
CHILD = r"""
import json, resource, sys, time
from prvgui.tuning import tuned_startup
with tuned_startup():
    from prvgui import api
    from prvgui.sweep.plan import make_plan
    from prvgui.sweep.run import run_sweep
way, path, out, workers, vary = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), json.loads(sys.argv[5])
plan = make_plan(api.load(path), vary, 1e-5, 0.01)
def cpu():
    return sum(getattr(resource.getrusage(w), f) for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
               for f in ("ru_utime", "ru_stime"))
c0, t0 = cpu(), time.perf_counter()
if way == "single":
    for i in range(plan.total):
        api.query(plan.composition_at(plan.point(i)), True, plan.delta, plan.eps_error)
else:
    run_sweep(plan, out, workers=workers, restart=True)
print(json.dumps({"wall": time.perf_counter() - t0, "cpu": cpu() - c0, "points": plan.total}))
"""


def once(case: str, way: str, workers: int, folder: str) -> dict:
    row, vary = CASES[case]
    path = os.path.join(folder, f"{case}.json")
    with open(path, "w") as f:
        json.dump({"format": "prvgui.composition", "version": 2, "mechanisms": [row]}, f)
    out = os.path.join(folder, f"{case}-{way}.csv")
    env = dict(os.environ, PYTHONPATH=ROOT)
    r = subprocess.run([sys.executable, "-c", CHILD, way, path, out, str(workers), json.dumps(vary)],
                       capture_output=True, text=True, env=env, check=True)
    return json.loads(r.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--cases", default=",".join(CASES))
    a = ap.parse_args()
    ways = [("single", 1), ("sweep 1", 1), (f"sweep {a.workers}", a.workers)]
    print(f"load average at the start: {os.getloadavg()[0]:.1f} ({os.cpu_count()} cores)")
    print("| case | points | way | wall points/s per core | CPU points/s | ratio (wall) | ratio (CPU) |")
    print("|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as folder:
        for case in a.cases.split(","):
            res: dict = {}
            for _ in range(a.rounds):
                for way, n in ways:
                    r = once(case, way.split()[0], n, folder)
                    cores = min(n, os.cpu_count() or 1)
                    res.setdefault(way, []).append((r["points"] / (r["wall"] * cores), r["points"] / r["cpu"],
                                                    r["points"]))
            base_wall = statistics.median(x[0] for x in res["single"])
            base_cpu = statistics.median(x[1] for x in res["single"])
            for way, _ in ways:
                wall = statistics.median(x[0] for x in res[way])
                cpu = statistics.median(x[1] for x in res[way])
                print(f"| {case} | {res[way][0][2]} | {way} | {wall:.1f} | {cpu:.1f} | {base_wall / wall:.2f} | "
                      f"{base_cpu / cpu:.2f} |", flush=True)
    print(f"load average at the end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
