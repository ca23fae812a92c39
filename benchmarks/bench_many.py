"""Many distinct rows (issue 30): prvgui against dp-accounting's RDP and PLD accountants.

Run by hand (needs the test extras):  python benchmarks/bench_many.py [--rounds 3] [--cap 600]

Cases: a schedule of R distinct Poisson-subsampled Gaussian rows (sigma uniform in [0.8, 1.5],
q in [0.001, 0.01], seed 0; each row drawn ``count`` times; or, "branchy", sigma in [0.01,
0.02] at q 1e-10: each row's loss split between its bulk and a branch 1250 to 5000 nats out), and R distinct Gaussians or
discrete Gaussians (sigma uniform in [50, 200]), epsilon at delta. Every (case, program) runs in
its own process, which builds its input, answers once untimed (the warm-up: imports, caches of
the first call), then answers ``--rounds`` times; the median of those is the warm time, what a
window or a notebook feels (an answer that takes more than 30 s is timed once: its warm-up is
then a small part of it). The process's resident peak is reported beside it (it includes the
interpreter and libraries, about 100 MB), and for prvgui its own estimate of the answer's time
and peak (Accountant.cost, made before the first answer, as a window prices a request; its bytes
are above the interpreter's; the time it took to price, cold, is beside it). A program that has not answered within ``--cap`` seconds is
stopped and reported as "> cap".

prvgui: Accountant(rows, eps_error=0.01).epsilon(delta), the certified bracket. dp-accounting
RDP: RdpAccountant with its default orders (an upper bound). dp-accounting PLD: PLDAccountant at
its default value_discretization_interval 1e-4 (pessimistic estimate). The Gaussian case is
also run through prvgui's FFT path (closed forms off), for the engine's own speed on it.
Ratios are peer time / prvgui time in the same run.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

SETUP = """
import json, resource, statistics, sys, time
import numpy as np
kind, n, count, delta, rounds = {kind!r}, {n}, {count}, {delta}, {rounds}
rng = np.random.default_rng(0)
if kind == "sg":
    params = list(zip(rng.uniform(0.8, 1.5, n).tolist(), rng.uniform(0.001, 0.01, n).tolist()))
elif kind == "sgb":  # (branchy: each row's loss split between its bulk and a branch far out)
    params = [(s, 1e-10) for s in rng.uniform(0.01, 0.02, n).tolist()]
else:
    params = rng.uniform(50.0, 200.0, n).tolist()
"""

#: a dp-accounting accountant (``Peer``) composing one event per row
PEER = """
from dp_accounting import GaussianDpEvent, PoissonSampledDpEvent, SelfComposedDpEvent
def event(p):
    e = PoissonSampledDpEvent(p[1], GaussianDpEvent(p[0])) if kind.startswith("sg") else GaussianDpEvent(p)
    return SelfComposedDpEvent(e, count) if count > 1 else e
def answer():
    acc = Peer()
    for p in params:
        acc.compose(event(p))
    return [acc.get_epsilon(delta)]
"""

PROGRAMS = {
    "prvgui": """
from prvgui.accounting import Accountant, Gaussian, Row, SubsampledGaussian
from prvgui.accounting.kinds.discrete_gaussian import DiscreteGaussian
closed = {closed}
if kind.startswith("sg"):
    rows = [Row(SubsampledGaussian(s, q), count) for s, q in params]
elif kind == "dg":
    rows = [Row(DiscreteGaussian(s), count) for s in params]
else:
    rows = [Row(Gaussian(s), count) for s in params]
def answer():
    b = Accountant(rows, 0.01, closed_forms=closed).epsilon(delta)
    return [b.lower, b.estimate, b.upper]
def estimate():
    t = time.perf_counter()
    c = Accountant(rows, 0.01, closed_forms=closed).cost(delta=delta)
    return [c.seconds, c.bytes, time.perf_counter() - t]
""",
    "rdp": """
from dp_accounting.rdp import RdpAccountant as Peer
""" + PEER,
    "pld": """
from dp_accounting.pld import PLDAccountant as Peer
""" + PEER,
}

RUN = """
est = estimate() if "estimate" in globals() else None  # (before any answer: as a window prices)
t = time.perf_counter(); got = answer(); first = time.perf_counter() - t
times = [first] if first > 30 else []  # (a long first answer is as warm as the next)
for _ in range(rounds if not times else 0):
    t = time.perf_counter(); got = answer(); times.append(time.perf_counter() - t)
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(json.dumps({{"seconds": statistics.median(times), "answer": got, "peak": peak, "estimate": est}}))
"""

#: (label, kind, rows, count, delta, programs: (name, closed forms))
CASES = [
    ("1000 distinct DP-SGD steps", "sg", 1000, 1, 1e-5, [("prvgui", True), ("rdp", True), ("pld", True)]),
    ("1000 distinct DP-SGD steps", "sg", 1000, 1, 1e-10, [("prvgui", True), ("rdp", True), ("pld", True)]),
    ("1000 distinct rows of 5 DP-SGD steps", "sg", 1000, 5, 1e-10, [("prvgui", True), ("rdp", True)]),
    ("300 distinct rows of 100 DP-SGD steps", "sg", 300, 100, 1e-10, [("prvgui", True), ("rdp", True)]),
    ("10^4 distinct discrete Gaussians", "dg", 10000, 1, 1e-10, [("prvgui", True)]),
    ("2 x 10^4 distinct discrete Gaussians", "dg", 20000, 1, 1e-10, [("prvgui", True)]),
    ("4 x 10^4 distinct discrete Gaussians (streamed)", "dg", 40000, 1, 1e-10, [("prvgui", True)]),
    ("256 distinct DP-SGD steps at sigma 0.01 to 0.02, q 1e-10", "sgb", 256, 1, 1e-10,
     [("prvgui", True), ("rdp", True)]),
    ("10^4 distinct Gaussians", "g", 10000, 1, 1e-10,
     [("prvgui", True), ("prvgui", False), ("rdp", True), ("pld", True)]),
]


def run(name: str, closed: bool, kind: str, n: int, count: int, delta: float, rounds: int, cap: float) -> dict:
    code = SETUP.format(kind=kind, n=n, count=count, delta=delta, rounds=rounds) \
        + PROGRAMS[name].format(closed=closed) + RUN.format()
    env = {**os.environ, "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")}
    try:
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                             timeout=cap + 60 + min(cap, 30) * (rounds + 1), check=True)
    except subprocess.TimeoutExpired:
        return {"seconds": None}
    except subprocess.CalledProcessError as exc:
        return {"seconds": None, "error": exc.stderr.strip().splitlines()[-1:]}
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--cap", type=float, default=600.0, help="seconds a program may take per answer")
    ap.add_argument("--only", type=int, nargs="*", help="case numbers (from 0) to run")
    args = ap.parse_args()
    print("| case | delta | program | answer | warm time (median) | peak | peer / prvgui | estimated |")
    print("|---|---|---|---|---|---|---|---|")
    for i, (label, kind, n, count, delta, programs) in enumerate(CASES):
        if args.only and i not in args.only:
            continue
        ours = None
        for name, closed in programs:
            r = run(name, closed, kind, n, count, delta, args.rounds, args.cap)
            secs = r.get("seconds")
            if name == "prvgui" and closed and secs:
                ours = secs
            who = name if closed else "prvgui (FFT, closed forms off)"
            ans = (r["error"] or ["failed"])[0] if "error" in r else \
                ", ".join(f"{v:.4f}" for v in r.get("answer", []))
            t = f"{secs:.2f} s" if secs else f"> {args.cap:.0f} s"
            peak = f"{r['peak'] / 2 ** 30:.2f} GB" if r.get("peak") else "-"
            ratio = f"{secs / ours:.1f}" if secs and ours and name != "prvgui" else \
                (f"> {args.cap / ours:.0f}" if ours and not secs else "")
            est = r.get("estimate")
            guess = f"{est[0]:.1f} s, {est[1] / 2 ** 30:.2f} GB (priced in {est[2]:.2f} s)" if est else ""
            print(f"| {label} | {delta:g} | {who} | [{ans}] | {t} | {peak} | {ratio} | {guess} |", flush=True)


if __name__ == "__main__":
    main()
