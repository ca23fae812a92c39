"""The window's slow parts in the engine (issue 13 item 3), run by hand:

    python benchmarks/bench_curves.py [--repeats 3] [--json]

For each bundled example, warm (a first run fills the caches), medians of ``--repeats``:

* ``profile_ms``: the certified privacy profile on the window's 100-point grid
  (``Accountant.delta_curve`` at the headline's error level, on a fresh accountant, after
  the headline's epsilon, which it shares and which is included);
* ``steps_ms``: the epsilon-versus-count sweep of the row with the largest count (40 counts),
  on an accountant that has composed the headline (untimed), as the window's has;
* ``calibrate_count_ms``: calibration of that row's count to a target epsilon (the certified
  epsilon at the example's own count), ``calibrate.calibrate(..., "count", ...)``;
* ``headline_ms``: epsilon at the target delta, for scale.

Fresh accountants each time (as the window makes one per request); the process-wide caches
of reuse.py stay warm, as they do in the window between edits. ``--cold`` clears them first.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from prvgui import api  # noqa: E402
try:  # absent before issue 13 (the script also times older code)
    from prvgui.accounting.numerics import reuse  # noqa: E402
except ImportError:
    reuse = None
from prvgui.accounting.queries.accountant import Accountant  # noqa: E402
from prvgui.accounting.queries.calibrate import calibrate  # noqa: E402
from prvgui.accounting.numerics.pipeline import error_level  # noqa: E402
from prvgui.engine.view_model import steps_counts  # noqa: E402


def timed(fn, repeats: int, cold: bool, setup=None) -> float:
    """Median wall time of ``fn(setup())`` (``fn()`` without setup); setup is not timed."""
    def once():
        arg = None if setup is None else setup()
        t0 = time.perf_counter()
        fn() if setup is None else fn(arg)
        return 1000 * (time.perf_counter() - t0)
    once()
    out = []
    for _ in range(repeats):
        if cold and reuse is not None:
            reuse.clear()
        out.append(once())
    return round(statistics.median(out), 1)


def bench(path: Path, repeats: int, cold: bool) -> dict:
    doc = api.load(path).document()
    rows, t = list(doc.engine_rows()), doc.targets
    j = int(np.argmax([r.count for r in rows]))
    counts = steps_counts(rows[j].count, 40)

    def acc():
        return Accountant(rows, t.eps_error, doc.neighbouring, screen=False, group_size=doc.group_size)
    eps = acc().epsilon(t.delta)
    grid = np.linspace(0.0, max(1.5 * eps.upper, 1.0), 100)

    def profile():
        a = acc()
        a.epsilon(t.delta)  # the window composes the headline first; the profile shares it
        return a.delta_curve(grid, level=error_level(t.delta))
    def headline():  # the window's accountant has composed the headline when the sweep starts
        a = acc()
        a.epsilon(t.delta)
        return a
    return {
        "headline_ms": timed(lambda: acc().epsilon(t.delta), repeats, cold),
        "profile_ms": timed(profile, repeats, cold),
        "steps_ms": timed(lambda a: a.epsilon_vs_count(j, counts, t.delta), repeats, cold, setup=headline),
        "calibrate_count_ms": timed(lambda: calibrate(rows, j, "count", eps.upper, t.delta, t.eps_error),
                                    repeats, cold),
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--cold", action="store_true", help="clear reuse.py's caches before each run")
    args = ap.parse_args(argv)
    out = {p.stem: bench(p, args.repeats, args.cold)
           for p in sorted((ROOT / "resources" / "examples").glob("*.json"))}
    if args.json:
        print(json.dumps({"examples": out}))
    else:
        for name, r in out.items():
            print(f"{name:16s} " + "  ".join(f"{k} {v:8.1f}" for k, v in r.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
