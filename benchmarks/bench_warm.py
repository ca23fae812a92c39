"""In-process, warm timings of the engine through its public API, against the peers in the same
process: what the window feels on every edit.

Run by hand (needs the test extras):

    python benchmarks/bench_warm.py [--repeats 15] [--ks 10000,100000,1000000] [--engine-only] [--json]

DP-SGD with q = 0.01, sigma = 0.8, delta = 1e-5, eps_error 0.01, k = 10^4, 10^5 and 10^6 steps
by default. The peers: prv_accountant's PRVAccountant (eps_error 0.01, delta_error delta/1000;
k <= 10^4 only: it needs minutes and gigabytes beyond), dp-accounting's PLD accountant at
value_discretization_interval 1e-4 (k <= 10^5 unless ``--pld-big``) and dp-accounting's RDP
accountant (an upper bound, looser, no bracket: the speed target at k = 10^6 is "within 5x of
RDP"). The ratios are peer time / prvgui time, so > 1 means prvgui is faster. Every call builds a fresh
accountant with the row cache emptied (no cached discretisation or composition), after two untimed warm-up calls; the programs take turns
within each repeat, so that each sees the same spells of machine noise. Reports medians and
the peers' time over prvgui's. The process is not tuned unless ``--tuned`` asks for the
command's settings (prvgui/tuning.py: heap pad, one BLAS thread). ``--engine-only`` times prvgui alone and prints JSON, which is
how a before/after comparison runs the same script against another checkout:

    PYTHONPATH=/path/to/old/checkout python benchmarks/bench_warm.py --engine-only --json
"""
from __future__ import annotations

import argparse
import json
import statistics
import time

Q, SIGMA, DELTA = 0.01, 0.8, 1e-5


def _fresh():
    """Forget the rows' discretisations kept between queries (accounting/numerics/reuse.py): every timed
    call answers a question the engine has not seen, as the peers do."""
    from prvgui.accounting.numerics import reuse
    reuse.clear()


def ours(k: int):
    from prvgui.accounting import Accountant, Row, SubsampledGaussian

    def run():
        _fresh()
        return Accountant([Row(SubsampledGaussian(SIGMA, Q), k)], 0.01).epsilon(DELTA).upper
    return run


def ours_api(k: int):
    import prvgui
    comp = prvgui.Composition.from_dict({"mechanisms": [
        {"kind": "subsampled_gaussian", "sigma": SIGMA, "sampling_rate": Q, "count": k}]})

    def run():
        _fresh()
        return prvgui.epsilon(comp, DELTA, eps_error=0.01).upper
    return run


def prv_accountant(k: int):
    from prv_accountant import PoissonSubsampledGaussianMechanism, PRVAccountant

    def run():
        prv = PoissonSubsampledGaussianMechanism(noise_multiplier=SIGMA, sampling_probability=Q)
        acc = PRVAccountant(prvs=prv, max_self_compositions=k, eps_error=0.01, delta_error=DELTA / 1000)
        return acc.compute_epsilon(delta=DELTA, num_self_compositions=k)[2]
    return run


def dp_accounting(k: int):
    from dp_accounting import dp_event
    from dp_accounting.pld import pld_privacy_accountant

    def run():
        acc = pld_privacy_accountant.PLDAccountant(value_discretization_interval=1e-4)
        acc.compose(dp_event.PoissonSampledDpEvent(Q, dp_event.GaussianDpEvent(SIGMA)), k)
        return acc.get_epsilon(DELTA)
    return run


def rdp(k: int):
    from dp_accounting import dp_event
    from dp_accounting.rdp import rdp_privacy_accountant

    def run():
        acc = rdp_privacy_accountant.RdpAccountant()
        acc.compose(dp_event.PoissonSampledDpEvent(Q, dp_event.GaussianDpEvent(SIGMA)), k)
        return acc.get_epsilon(DELTA)
    return run


def timed(fn) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the whole process: every thread, so prvgui's two orders
    built side by side count twice)."""
    t, c = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - t, time.process_time() - c


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=15)
    ap.add_argument("--ks", default="10000,100000,1000000", help="comma-separated step counts")
    ap.add_argument("--pld-big", action="store_true", help="also dp_accounting's PLD at k > 10^5")
    ap.add_argument("--engine-only", action="store_true", help="prvgui's Accountant alone")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--cpu", action="store_true",
                    help="also CPU-time medians (steadier than wall time on a shared machine)")
    ap.add_argument("--tuned", action="store_true",
                    help="tune this process as the prvgui command does (prvgui/tuning.py)")
    args = ap.parse_args()
    if args.tuned:
        from prvgui import tuning
        tuning.limit_blas_threads()
        tuning.keep_freed_memory()
    ks = [int(float(x)) for x in args.ks.split(",")]
    out, cpu = {}, {}
    for k in ks:
        programs = {"prvgui": ours(k)}
        if not args.engine_only:
            programs["prvgui.epsilon"] = ours_api(k)
            if k <= 10**4:  # prv_accountant needs minutes and gigabytes beyond
                programs["prv_accountant"] = prv_accountant(k)
            if k <= 10**5 or args.pld_big:
                programs["dp_accounting"] = dp_accounting(k)
            programs["rdp"] = rdp(k)
        for fn in programs.values():
            fn(), fn()
        times: dict[str, list[tuple[float, float]]] = {name: [] for name in programs}
        for _ in range(args.repeats):
            for name, fn in programs.items():
                times[name].append(timed(fn))
        out[k] = {name: statistics.median(w for w, _ in t) for name, t in times.items()}
        cpu[k] = {name: statistics.median(c for _, c in t) for name, t in times.items()}
    if args.json:
        print(json.dumps(out if not args.cpu else {"wall": out, "cpu": cpu}))
        return
    for label, table in (("wall", out), ("cpu", cpu)) if args.cpu else (("wall", out),):
        for k, row in table.items():
            base = row["prvgui"]
            cells = [f"{name} {1e3 * t:8.1f} ms" + ("" if name == "prvgui" else f" ({t / base:5.1f}x)")
                     for name, t in row.items()]
            print(f"{label} k = {k:>8}: " + " | ".join(cells))


if __name__ == "__main__":
    main()
