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
comments.  Median and range per step and for the round trip.

Run ``python bench/bench_roundtrip.py [--samples N] [--labels L] [--repeat R] [--formats .jsonl,.csv,.parquet]``.
"""
from __future__ import annotations

import argparse
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
        for r in range(repeat):
            out = tmp / f"r{r}" / f"bench{suffix}"
            with open_store(tmp / "source.db", read_only=True) as store:
                t0 = time.perf_counter()
                export_dataset(open_dataset("bench", store), store, "ragas", out)
                t1 = time.perf_counter()
            with open_store(tmp / f"r{r}{suffix}.db") as store:
                t2 = time.perf_counter()
                import_dataset(out, "ragas", "bench", store)
                t3 = time.perf_counter()
                if content(store) != before:
                    print(f"  {suffix}: the re-imported store differs", file=sys.stderr)
                    ok = False
            times["export"].append(t1 - t0)
            times["import"].append(t3 - t2)
            times["round trip"].append(t1 - t0 + t3 - t2)
        for step, values in times.items():
            print(f"  ragas {suffix:<8} {step:<10} median {statistics.median(values):6.2f} s "
                  f"(range {min(values):.2f}–{max(values):.2f} s over {len(values)} runs)")
        ok = ok and statistics.median(times["round trip"]) <= TARGET_S
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
