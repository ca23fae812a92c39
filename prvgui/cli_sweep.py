"""``prvgui sweep FILE --vary ROW.PARAM=START:STOP:NUM[:log] ... --out RESULTS.csv|.parquet``: the
certified epsilon bracket at every point of a grid of parameter values (sweep/plan.py), computed
in chunks on all local cores, in this process (``--workers 1``) or on a Dask cluster
(``--scheduler tcp://HOST:8786``), kept chunk by chunk so that a killed sweep goes on where it
stopped (sweep/journal.py). Registered by cli.py (``add_parser``, ``run``).

Progress goes to stderr: one line updated in place on a terminal, else a line every tenth of the
points. Bad input exits with status 2 and one line on stderr; Ctrl-C keeps the finished chunks
and exits with status 130.
"""
from __future__ import annotations

import sys
import time

from .cli_args import load, number as _number


def _whole(text: str) -> int | str:
    v = _number(text)
    return int(v) if isinstance(v, float) and v == int(v) else text


def add_parser(sub, error) -> None:
    s = sub.add_parser("sweep", help="the certified epsilon over a grid of parameter values (CSV or Parquet)",
                       description="Compute the certified epsilon bracket at every point of a grid: the "
                                   "Cartesian product of the --vary ranges, the last varying fastest.")
    s.add_argument("file", help="composition file (JSON)")
    s.add_argument("--vary", action="append", required=True, metavar="ROW.PARAM=START:STOP:NUM[:log]",
                   help="vary a parameter (or count) of a row: ROW is its number from 1 or its label; NUM "
                        "points from START to STOP, evenly or (:log) log-spaced; repeat for a grid")
    s.add_argument("--out", required=True, metavar="RESULTS.csv|.parquet",
                   help="the results (one row per point); RESULTS.parts/ keeps the finished chunks meanwhile")
    s.add_argument("--delta", type=_number, default=None, help="target delta (default: the file's)")
    s.add_argument("--eps-error", type=_number, default=None,
                   help="half-width of the epsilon bracket (default: the file's, else 0.01)")
    s.add_argument("--workers", type=_whole, default=None, metavar="N",
                   help="local worker processes (default: every core; 1: compute in this process)")
    s.add_argument("--scheduler", default=None, metavar="ADDRESS",
                   help="run on an existing Dask cluster, e.g. tcp://HOST:8786 (its workers need this prvgui)")
    s.add_argument("--chunk-size", type=_whole, default=None, metavar="N",
                   help="points per chunk of a new sweep (default: about 5 s of work, at most 1024)")
    s.add_argument("--restart", action="store_true",
                   help="discard the finished chunks of another sweep into the same --out")
    s.error = error  # type: ignore[method-assign]


def _count(value, option: str) -> int | None:
    if value is None:
        return None
    if not isinstance(value, int) or value < 1:
        raise ValueError(f"{option} must be a whole number of at least 1; you typed {value}")
    return value


class ProgressLine:
    """``progress(done, total)`` printing points done, the rate and the time left on ``stream``:
    in place on a terminal, else one line per tenth of the points."""

    def __init__(self, stream=None, tty: bool | None = None, clock=time.monotonic) -> None:
        self.stream = sys.stderr if stream is None else stream
        self.tty = self.stream.isatty() if tty is None else tty
        self.clock, self.tenth, self.width = clock, -1, 0
        self.start: tuple[float, int] | None = None

    def __call__(self, done: int, total: int) -> None:
        from .accounting.core.cost import format_seconds
        now = self.clock()
        if self.start is None:
            self.start = (now, done)
        t0, d0 = self.start
        text = f"sweep: {done:,} / {total:,} points ({100 * done / max(total, 1):.0f}%)"
        if d0 == done and d0:
            text += " finished before: going on from there"
        elif done > d0 and now > t0:
            rate = (done - d0) / (now - t0)
            left = (total - done) / rate
            text += f", {rate:.3g} points/s, " + ("done" if done == total else "under a second left" if left < 1
                                                   else f"about {format_seconds(left)} left")
        if self.tty:
            self.stream.write("\r" + text.ljust(self.width))
            self.width = len(text)
        elif done * 10 // max(total, 1) > self.tenth:
            self.tenth = done * 10 // max(total, 1)
            self.stream.write(text + "\n")
        self.stream.flush()

    def end(self) -> None:
        if self.tty and self.width:
            self.stream.write("\n")
            self.stream.flush()
            self.width = 0


def run(args) -> int:
    from .accounting.core.validate import check_delta, check_eps_error
    from .sweep.journal import out_format
    from .sweep.plan import make_plan
    from .sweep.run import run_sweep
    out_format(args.out)  # before any work: a bad name or folder fails at once
    workers, chunk = _count(args.workers, "--workers"), _count(args.chunk_size, "--chunk-size")
    if workers is not None and args.scheduler is not None:
        raise ValueError("--workers counts local processes; with --scheduler the cluster's workers run the "
                         "sweep: give one of the two")
    comp = load(args.file)
    delta = comp.targets.delta if args.delta is None else check_delta(args.delta, "--delta")
    err = comp.targets.eps_error if args.eps_error is None else check_eps_error(args.eps_error, "--eps-error")
    plan = make_plan(comp, args.vary, delta, err)
    line = ProgressLine()
    try:
        s = run_sweep(plan, args.out, workers=workers, scheduler=args.scheduler, chunk_size=chunk,
                      restart=args.restart, progress=line)
    except KeyboardInterrupt:
        line.end()
        print(f"prvgui: interrupted; the finished points are kept in {args.out}.parts: the same command "
              "goes on from there", file=sys.stderr)
        return 130
    line.end()
    failed = f", {s.failed:,} without a PRV bracket (see the failed column)" if s.failed else ""
    before = f", {s.points - s.computed:,} finished before" if s.computed < s.points else ""
    print(f"wrote {args.out}: {s.points:,} points at delta {delta:g} ({s.computed:,} computed in "
          f"{s.seconds:.1f} s on {s.where}{before}{failed})")
    return 0
