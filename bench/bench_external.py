#!/usr/bin/env python
"""Benchmark: ``playground calibrate external RESULT --dataset NAME`` at scale (issue 25).

Scenario: an imported RAGAS dataset of 10,000 samples (one retrieved context
each), a result table with 5 metric columns (context_precision,
context_relevance, context_utilization, contextual_precision,
contextual_relevancy — every one a context-relevance rate), 1,000 human labels
on the calibration sample of seed 7 (the first 1,000 samples of
``playground.sampling.ranked``), 1,000 bootstrap resamples of the grouped
cross-validation (``--boot 1000``), and a calibration record (``--record``).
Timed: the whole command in this process (reading the result, the store, every
metric's report, the record), not the one-off import.  Data are synthetic and
seeded by ``playground.sampling``.

Run ``python bench/bench_external.py [--repeat 3] [--samples 10000] [--labels 1000]``.  Prints median and range.
"""
from __future__ import annotations

import argparse
import contextlib
import io
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from machine import describe  # noqa: E402  (bench/machine.py)

from playground.cli import main as cli  # noqa: E402
from playground.datasets import open_dataset  # noqa: E402
from playground.importers.load import import_dataset  # noqa: E402
from playground.sampling import ranked, uniform  # noqa: E402
from playground.store import open_store  # noqa: E402
from playground.sweep import _picks  # noqa: E402

METRICS = ("context_precision", "context_relevance", "context_utilization", "contextual_precision",
           "contextual_relevancy")


def build(tmp: Path, samples: int, labels: int) -> tuple[Path, Path]:
    rows = [{"user_input": f"Question {i}?", "response": f"Answer {i}.", "retrieved_contexts": [f"Context {i}."]}
            for i in range(samples)]
    (tmp / "ds.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    db = tmp / "labels.db"
    truth = [uniform("bench", f"h{i}") < 0.7 for i in range(samples)]
    with open_store(db) as store:
        import_dataset(tmp / "ds.jsonl", "ragas", "big", store)
        opened = open_dataset("big", store)
        index = {s["case_id"]: i for i, s in enumerate(opened.payload["samples"])}
        chosen = set(ranked(list(index), "7")[:labels])
        for unit in opened.units():
            if unit.unit_kind == "passage" and unit.case_id in chosen:
                store.set_label("ann", unit, "relevant", int(truth[index[unit.case_id]]))
    result = [{**r, **{m: round(min(1.0, max(0.0, (0.7 if truth[i] else 0.35)
                                             + 0.6 * (uniform(m, str(i)) - 0.5))), 4) for m in METRICS}}
              for i, r in enumerate(rows)]
    (tmp / "result.jsonl").write_text("".join(json.dumps(r) + "\n" for r in result), encoding="utf-8")
    return db, tmp / "result.jsonl"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--samples", type=int, default=10_000)
    parser.add_argument("--labels", type=int, default=1_000)
    parser.add_argument("--boot", type=int, default=1_000)
    args = parser.parse_args()
    print(describe())
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        t0 = time.perf_counter()
        db, result = build(tmp, args.samples, args.labels)
        print(f"setup (import + labels, not timed below): {time.perf_counter() - t0:.1f} s")
        argv = ["calibrate", "external", str(result), "--dataset", "big", "--db", str(db), "--sample-seed", "7",
                "--boot", str(args.boot), "--record", str(tmp / "record.json")]
        times = []
        for _ in range(args.repeat):
            _picks.cache_clear()  # each run draws its resamples afresh, as one CLI call does
            t0 = time.perf_counter()
            with contextlib.redirect_stdout(io.StringIO()):
                code = cli(argv)
            times.append(time.perf_counter() - t0)
            if code != 0:
                print(f"calibrate external exited {code}")
                return 1
    print(f"calibrate external: {len(METRICS)} metrics, {args.samples:,} samples, {args.labels:,} human labels, "
          f"{args.boot:,} resamples: median {statistics.median(times):.2f} s, range {min(times):.2f}-"
          f"{max(times):.2f} s over {args.repeat} runs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
