#!/usr/bin/env python
"""Benchmark: a full-dataset export and re-import, label history included (issue 24: ≤ 30 s).

A RAGAS JSONL file of N samples (default 10,000; 5 contexts, a 3-sentence
response, a 2-sentence reference each) is imported into a SQLite store and
labelled with L labels (default 50,000: two annotators, five answers per
sample, one in ten unsure, plus a comment every 100 samples) in one
transaction, untimed.  Then, per format, timed ``--repeat`` times:

* ``export``: :func:`playground.importers.export.export_dataset` of the whole
  dataset (the tool's file with every sample's label history, and the side tables);
* ``import``: :func:`playground.importers.load.import_dataset` of that file
  into a fresh store (read, validate, restore the history; one transaction).

The re-imported store is checked to hold the same events, labels and
comments.  Median and range per step and for the round trip, wall time
and the process's CPU time (on a shared, loaded machine the wall time is
mostly waiting for a core; the CPU time is what the work costs).

Run ``python bench/bench_roundtrip.py [--samples N] [--labels L] [--repeat R] [--formats .jsonl,.csv,.parquet]``.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench_import import write_dataset  # noqa: E402  (bench/bench_import.py)
from machine import describe  # noqa: E402  (bench/machine.py)

TARGET_S = 30.0


def label(store, units: list, n: int) -> None:
    """``n`` labels by ana and ben over the units in order (values 1, 0, unsure), comments now and then."""
    rows, notes = [], []
    pairs = [(u, d) for u in units for d in u.dimensions]
    for i in range(n):
        unit, dim = pairs[i // 2 % len(pairs)]
        value = 2 if i % 10 == 9 else (i // 3) % 2
        rows.append(("ana" if i % 2 == 0 else "ben", unit, dim, value))
        if i % 1000 == 0:
            notes.append(("ana", unit, f"note {i}: =not a formula, \"quoted\"\r\nline two"))
    store.write_rows(rows, action="set", comments=notes)


def content(store) -> tuple:
    return (store.events(), store.labels(include_unsure=True), store.comments())


def run(samples: int, labels: int, repeat: int, formats: list[str]) -> int:
    from playground.datasets import open_dataset
    from playground.importers.export import export_dataset
    from playground.importers.load import import_dataset
    from playground.store import open_store

    print(describe())
    tmp = Path(tempfile.mkdtemp(prefix="bench-roundtrip-"))
    source = tmp / "data.jsonl"
    write_dataset(source, samples, 5)
    with open_store(tmp / "source.db") as store:
        import_dataset(source, "ragas", "bench", store)
        opened = open_dataset("bench", store)
        label(store, opened.units(), labels)
        before = content(store)
    print(f"{samples:,} samples, {len(opened.units()):,} units, {len(before[0]):,} events "
          f"({len(before[1]):,} labels, {len(before[2]):,} comments)")
    ok = True
    for suffix in formats:
        times: dict[str, list[float]] = {"export": [], "import": [], "round trip": []}
        cpu: dict[str, list[float]] = {"export": [], "import": [], "round trip": []}
        for r in range(repeat):
            out = tmp / f"r{r}" / f"bench{suffix}"
            with open_store(tmp / "source.db", read_only=True) as store:
                t0, c0 = time.perf_counter(), time.process_time()
                export_dataset(open_dataset("bench", store), store, "ragas", out)
                t1, c1 = time.perf_counter(), time.process_time()
            with open_store(tmp / f"r{r}{suffix}.db") as store:
                t2, c2 = time.perf_counter(), time.process_time()
                import_dataset(out, "ragas", "bench", store)
                t3, c3 = time.perf_counter(), time.process_time()
                if content(store) != before:
                    print(f"  {suffix}: the re-imported store differs", file=sys.stderr)
                    ok = False
            for key, (a, b, c, d) in (("wall", (t0, t1, t2, t3)), ("cpu", (c0, c1, c2, c3))):
                into = times if key == "wall" else cpu
                into["export"].append(b - a)
                into["import"].append(d - c)
                into["round trip"].append(b - a + d - c)
        for step, values in times.items():
            print(f"  ragas {suffix:<8} {step:<10} median {statistics.median(values):6.2f} s "
                  f"(range {min(values):.2f}–{max(values):.2f} s over {len(values)} runs); CPU median "
                  f"{statistics.median(cpu[step]):6.2f} s (range {min(cpu[step]):.2f}–{max(cpu[step]):.2f} s)")
        ok = ok and statistics.median(times["round trip"]) <= TARGET_S
    print(f"load average after: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    print(f"target: round trip ≤ {TARGET_S:.0f} s — {'met' if ok else 'NOT met'}")
    return 0 if ok else 1


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--samples", type=int, default=10_000)
    p.add_argument("--labels", type=int, default=50_000)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--formats", default=".jsonl,.csv,.parquet")
    args = p.parse_args(argv)
    return run(args.samples, args.labels, args.repeat, args.formats.split(","))


if __name__ == "__main__":
    sys.exit(main())
