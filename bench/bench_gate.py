#!/usr/bin/env python
"""Benchmark: ``playground harness gate --scores FILE --record RECORD`` on 100,000 scores (issue 25).

Scenario: a calibration record of one scorer (TPR 0.9 from 300 human-"yes"
samples, TNR 0.85 from 200 human-"no" ones, a uniform random sample) and a run
of 100,000 samples with one metric column, as a CSV; the gate reads it, corrects
the pass rate (Rogan-Gladen), bootstraps the interval (2,000 resamples) and
compares it with a baseline.  Timed: the whole command in this process.  Data
are synthetic and seeded by ``playground.sampling``.

Run ``python bench/bench_gate.py [--repeat 5] [--rows 100000]``.  Prints median and range.
"""
from __future__ import annotations

import argparse
import contextlib
import csv
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

from playground.calibrate.record import dumps_record  # noqa: E402
from playground.cli import main as cli  # noqa: E402
from playground.sampling import uniform  # noqa: E402


def record() -> dict:
    rate = {"rate": 0.9, "low": 0.862, "high": 0.928, "successes": 270, "n": 300}
    neg = {"rate": 0.85, "low": 0.794, "high": 0.893, "successes": 170, "n": 200}
    entry = {"column": "faithfulness", "dimension": "supported", "threshold": 0.5, "n": 500, "sample_size": 500,
             "outside_sample": 0, "confusion": {"tp": 270, "fp": 30, "fn": 30, "tn": 170}, "tpr": rate, "tnr": neg,
             "identity": {"name": "faithfulness", "version": None, "config_sha256": None, "model": None,
                          "prompt_sha256": None},
             "kappa": {"kappa": 0.75, "low": 0.69, "high": 0.81}, "base_rate": 0.6, "balanced_accuracy": 0.875,
             "cv": None, "repeats": None}
    return {"kind": "playground-calibration-record", "version": 1, "dataset": {"name": "bench", "revision": ""},
            "human": {"who": "consensus", "human_threshold": 0.5},
            "sample": {"seed": "7", "uniform_random": True, "unit": "sample", "rule": "-"}, "scorers": [entry]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--rows", type=int, default=100_000)
    args = parser.parse_args()
    print(describe())
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        (tmp / "record.json").write_text(dumps_record(record()), encoding="utf-8")
        (tmp / "base.json").write_text(json.dumps({"metrics": {"faithfulness": 0.6}}), encoding="utf-8")
        with (tmp / "run.csv").open("w", newline="", encoding="utf-8") as f:
            w = csv.writer(f)
            w.writerow(["user_input", "response", "faithfulness"])
            for i in range(args.rows):
                w.writerow([f"Question {i}?", f"Answer {i}.", round(uniform("bench", str(i)), 4)])
        argv = ["harness", "gate", "--scores", str(tmp / "run.csv"), "--record", str(tmp / "record.json"),
                "--dataset", "bench", "--scores-baseline", str(tmp / "base.json")]
        times = []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                code = cli(argv)
            times.append(time.perf_counter() - t0)
            if code not in (0, 1):
                print(f"gate exited {code}")
                return 1
    print(f"harness gate --scores: {args.rows:,} scores, 2,000 resamples: median {statistics.median(times):.2f} s, "
          f"range {min(times):.2f}-{max(times):.2f} s over {args.repeat} runs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
