"""Sweeps: the certified epsilon of a composition over a grid of parameter values.

``plan`` parses the ``--vary ROW.PARAM=START:STOP:NUM[:log]`` specs against a composition and
numbers the grid's points; ``journal`` keeps the finished chunks of a sweep on disk (so that a
killed sweep resumes) and assembles the final CSV or Parquet file; ``run`` computes the chunks,
in this process, on a local Dask cluster or on an existing one. No Qt; Dask is imported only
when a sweep runs on more than one worker (the ``sweep`` extra: ``pip install "prvgui[sweep]"``).
May import: ``prvgui.accounting``, ``prvgui.document``, ``prvgui.api``.
"""
