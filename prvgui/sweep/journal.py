"""A sweep's results on disk: the finished chunks beside the final file, then the final file.

While a sweep runs, ``OUT.parts/`` holds ``plan.json`` (the plan's digest, its chunk size and the
plan itself, written first) and one ``chunk-NNNNNN.csv`` per finished chunk, each written to a
temporary file, flushed to disk and renamed (fileio.atomic_write): a chunk file is there whole or
not at all, so a killed sweep loses only the chunks it was computing. A sweep started again with
the same plan reads which chunks are there (each checked to hold exactly its points, with the plan's values and a number or nothing in each numeric column) and computes
only the others; a different plan is refused unless ``restart`` is asked for. At the end the
chunks are joined into OUT (CSV, or Parquet through pyarrow), again through a temporary file and a
rename, and ``OUT.parts/`` is removed.

Every file has the same columns: ``index``, the varied values (named ``ROW.PARAM``, the row
counted from 1), ``lower``, ``estimate``, ``upper`` (the PRV bracket), ``proven_lower`` (a proven
lower bound on the true epsilon: the bracket's lower end where every row's pair is realised, else
``epsilon_at_least``), ``certified_upper`` and ``by`` (the number to publish and the accountant
that gave it) and ``failed`` (why the point has no PRV bracket, else empty). Floats are written as Python's ``repr`` (they read back exactly).
"""
from __future__ import annotations

import csv
import io
import json
import math
import os
import re
import tempfile

from ..document.fileio import atomic_write
from .plan import SweepPlan

RESULTS = ("lower", "estimate", "upper", "proven_lower", "certified_upper", "by", "failed")
FORMATS = (".csv", ".parquet")
EXTRA = 'pip install "prvgui[sweep]"'
_CHUNK = re.compile(r"chunk-(\d{6,})\.csv$")


class PlanMismatch(ValueError):
    """The results folder holds the chunks of another plan."""


def columns(plan: SweepPlan) -> tuple[str, ...]:
    return ("index", *plan.names, *RESULTS)


def out_format(path: str, option: str = "--out") -> str:
    """".csv" or ".parquet" from the name, checked before any work (Parquet needs pyarrow)."""
    ext = os.path.splitext(path)[1].lower()
    if ext not in FORMATS:
        raise ValueError(f"{option} {path}: the name must end in .csv or .parquet")
    if ext == ".parquet":
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            raise ValueError(f"{option} {path}: writing Parquet needs pyarrow ({EXTRA}); or write "
                             f"{option} {os.path.splitext(path)[0]}.csv") from None
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise ValueError(f"{option} {path}: the folder {folder} does not exist")
    return ext


def _text(v: object) -> str:
    return repr(v) if isinstance(v, float) else "" if v is None else str(v)


def chunk_text(header: tuple[str, ...], rows: list[tuple]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    for r in rows:
        w.writerow([_text(v) for v in r])
    return buf.getvalue()


class Journal:
    """The results folder of one sweep: ``out + ".parts"``; chunk ``k`` holds the points
    ``k * chunk_size`` up to the next chunk's first."""

    def __init__(self, out: str, plan: SweepPlan, chunk_size: int) -> None:
        self.out, self.plan, self.chunk_size = out, plan, chunk_size
        self.folder = out + ".parts"
        self.header = columns(plan)

    @property
    def chunks(self) -> int:
        return -(-self.plan.total // self.chunk_size)

    def span(self, k: int) -> range:
        return range(k * self.chunk_size, min((k + 1) * self.chunk_size, self.plan.total))

    def path(self, k: int) -> str:
        return os.path.join(self.folder, f"chunk-{k:06d}.csv")

    # ------------------------------------------------------------ opening
    def open(self, restart: bool = False) -> set[int]:
        """Make or reopen the folder; the chunks already finished. A folder of another plan is a
        ``PlanMismatch`` unless ``restart``, which empties it. The chunk size of a reopened
        folder is the one it was begun with."""
        digest = self.plan.digest()
        meta = os.path.join(self.folder, "plan.json")
        if os.path.isdir(self.folder):
            kept = self._read_meta(meta)
            if kept is not None and kept.get("digest") == digest and not restart:
                self.chunk_size = int(kept["chunk_size"])
                return self._finished()
            if not restart:
                why = ("was begun by another sweep: another composition, --vary, --delta or --eps-error, "
                       "or another prvgui" if kept is not None else "is not a sweep's results folder")
                raise PlanMismatch(f"{self.folder} {why}; run the sweep as it was begun to resume it, or "
                                   "give --restart to discard it")
            self._clear()
        os.makedirs(self.folder, exist_ok=True)
        atomic_write(meta, json.dumps({"digest": digest, "chunk_size": self.chunk_size,
                                       "total": self.plan.total, "columns": list(self.header),
                                       "plan": self.plan.as_dict()}, default=list))
        return set()

    @staticmethod
    def _read_meta(meta: str) -> dict | None:
        try:
            with open(meta, encoding="utf-8") as f:
                kept = json.load(f)
            return kept if isinstance(kept, dict) and isinstance(kept.get("chunk_size"), int) else None
        except (OSError, ValueError):
            return None

    def _ours(self) -> list[str]:
        return [n for n in os.listdir(self.folder)
                if n == "plan.json" or _CHUNK.match(n) or (n.startswith(".prvgui-") and n.endswith(".tmp"))]

    def _clear(self) -> None:
        for n in self._ours():
            os.unlink(os.path.join(self.folder, n))

    def _finished(self) -> set[int]:
        done = set()
        for n in os.listdir(self.folder):
            m = _CHUNK.match(n)
            if n.startswith(".prvgui-") and n.endswith(".tmp"):  # a write the kill cut short
                os.unlink(os.path.join(self.folder, n))
            elif m and int(m.group(1)) < self.chunks and self._whole(int(m.group(1))):
                done.add(int(m.group(1)))
        return done

    def _whole(self, k: int) -> bool:
        """Whether chunk k is there whole: each point of its span once, in order, with the plan's
        values at it and a number (or nothing) in each numeric column; anything else (a cut
        write, another sweep's chunk, garbage) is computed again."""
        try:
            rows = self.read(k)
            if [int(r[0]) for r in rows] != list(self.span(k)):
                return False
            n = len(self.plan.axes)
            for r in rows:
                if len(r) != len(self.header) or r[1:1 + n] != [_text(v) for v in self.plan.point(int(r[0]))]:
                    return False
                numbers = [float(v) for v in r[1 + n:1 + n + 5] if v]  # (ValueError: not a number)
                if any(math.isnan(v) for v in numbers):
                    return False
        except (OSError, ValueError, IndexError, csv.Error):
            return False
        return True

    # ------------------------------------------------------------ chunks
    def write(self, k: int, rows: list[tuple]) -> None:
        atomic_write(self.path(k), chunk_text(self.header, rows))

    def read(self, k: int) -> list[list[str]]:
        with open(self.path(k), encoding="utf-8", newline="") as f:
            rows = list(csv.reader(f))
        if not rows or tuple(rows[0]) != self.header:
            raise ValueError(f"{self.path(k)}: not a chunk of this sweep")
        return rows[1:]

    # ------------------------------------------------------------ the end
    def assemble(self) -> None:
        """Join the chunks into the final file (atomically), then remove the folder."""
        if self.out.lower().endswith(".parquet"):
            atomic_write(self.out, self._parquet())
        else:
            self._csv()
        self._clear()
        try:
            os.rmdir(self.folder)
        except OSError:  # something else was put there: left as it is
            pass

    def _csv(self) -> None:
        fd, tmp = tempfile.mkstemp(prefix=".prvgui-", suffix=".tmp", dir=os.path.dirname(os.path.abspath(self.out)))
        try:
            with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
                f.write(",".join(self.header) + "\n")
                for k in range(self.chunks):
                    with open(self.path(k), encoding="utf-8", newline="") as c:
                        c.readline()
                        for line in c:
                            f.write(line)
                f.flush()
                os.fsync(f.fileno())
            os.chmod(tmp, 0o666 & ~_umask())
            os.replace(tmp, self.out)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise

    def _parquet(self) -> bytes:
        import pyarrow as pa
        import pyarrow.parquet as pq
        rows = [r for k in range(self.chunks) for r in self.read(k)]
        cols = list(zip(*rows)) if rows else [()] * len(self.header)
        arrays = [pa.array([int(v) for v in cols[0]], pa.int64())]
        for a, col in zip(self.plan.axes, cols[1:]):
            arrays.append(pa.array([int(v) for v in col], pa.int64()) if a.integer
                          else pa.array([float(v) for v in col], pa.float64()))
        n = len(self.plan.axes) + 1
        arrays += [pa.array([float(v) if v else None for v in col], pa.float64()) for col in cols[n:n + 4]]
        arrays += [pa.array(list(col), pa.string()) for col in cols[n + 4:]]
        buf = pa.BufferOutputStream()
        pq.write_table(pa.table(arrays, names=list(self.header)), buf)
        return buf.getvalue().to_pybytes()


def read_results(path: str) -> dict[str, list]:
    """A results CSV as columns: the numbers as floats (empty: NaN), ``by`` and ``failed`` as text."""
    with open(path, encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    names = list(rows[0]) if rows else []
    return {n: [r[n] for r in rows] if n in ("by", "failed") else [float(r[n]) if r[n] else math.nan for r in rows]
            for n in names}


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
