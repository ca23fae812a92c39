"""Where many rows' memory goes (issue 30): the resident size of one answer, sampled every second.

Run by hand:  python benchmarks/bench_memory.py [ROWS]   (default 30000; 10^5 takes about 10 min)

R distinct discrete Gaussians (sigma uniform in [50, 200], seed 0), ``Accountant(rows,
0.01).epsilon(1e-10)`` once, in this process. A thread samples the resident size (/proc, Linux)
and the main thread's innermost frames every second; the script prints the time, the peak
(``ru_maxrss``) and the bracket, then the five highest samples and each sample that rose by
more than 0.05 GB (where the memory went). The peak includes the interpreter and libraries,
about 0.1 GB. benchmarks/README.md has the figures.
"""
from __future__ import annotations

import resource
import sys
import threading
import time
import traceback

import numpy as np

from prvgui.accounting import Accountant, Row
from prvgui.accounting.kinds.discrete_gaussian import DiscreteGaussian


def resident_gb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096 / 2 ** 30


def main(n: int) -> None:
    rng = np.random.default_rng(0)
    rows = [Row(DiscreteGaussian(s), 1) for s in rng.uniform(50.0, 200.0, n).tolist()]
    samples: list[tuple[float, float, str]] = []
    done = threading.Event()

    def sample() -> None:
        main_id = threading.main_thread().ident
        while not done.is_set():
            frame = sys._current_frames().get(main_id)
            names = [f.f_code.co_name for f, _ in traceback.walk_stack(frame)][:6] if frame else []
            samples.append((time.perf_counter(), resident_gb(), "/".join(reversed(names))))
            done.wait(1.0)
    threading.Thread(target=sample, daemon=True).start()
    start = time.perf_counter()
    bracket = Accountant(rows, 0.01).epsilon(1e-10)
    done.set()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2 ** 20
    print(f"rows={n} seconds={time.perf_counter() - start:.1f} peak={peak:.3f} GB bracket={bracket}")
    for t, r, where in sorted(samples, key=lambda s: -s[1])[:5]:
        print(f"  {t - start:.0f} s {r:.3f} GB {where}")
    last = 0.0
    for t, r, where in samples:
        if r - last > 0.05:
            print(f"  t={t - start:.0f} s resident={r:.3f} GB {where}")
            last = r


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 30000)
