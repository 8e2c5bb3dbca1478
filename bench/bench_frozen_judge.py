#!/usr/bin/env python
"""Benchmark: the LLM judge's own cost per claim on a frozen part, without a model.

What ``calibrate begin --judge MODEL`` spends around the model: the judge prompt,
the cache lookup, the official client's HTTP round trip, validation and the
cache write (cold: an empty cache file), and a rerun served from the cache
(warm: no request).  The model is the protocol-level double of Ollama's API
(tests/ollama_double.py, answering at once), so a real judge adds its own
generation time on top of the cold figure.  Data: BEGIN's frozen part from the
shared data (256 responses).

Run ``python bench/bench_frozen_judge.py [--repeat 3]``.  Prints median and range.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
for extra in (ROOT, ROOT / "tests"):
    if str(extra) not in sys.path:
        sys.path.insert(0, str(extra))

from machine import describe, pin_one_core  # noqa: E402  (bench/machine.py)
from ollama_double import OllamaDouble  # noqa: E402  (tests/ollama_double.py)
from test_ollama import replies  # noqa: E402  (a valid judgement for whatever claims the prompt lists)

from playground.calibrate.begin import begin_split  # noqa: E402
from playground.calibrate.judge_scorer import judge_claims  # noqa: E402
from playground.harness.llm import ModelCache, OllamaModels  # noqa: E402

JUDGE = "llama3.1:8b"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(describe())
    print(pin_one_core())
    _, frozen = begin_split()
    cold: list[float] = []
    warm: list[float] = []
    with OllamaDouble(chat_reply=replies) as double, tempfile.TemporaryDirectory() as tmp:
        for k in range(args.repeat):
            path = Path(tmp) / f"cache{k}.db"
            for times in (cold, warm):  # the first pass fills the new cache, the second reads it
                with ModelCache(path) as cache:
                    models = OllamaModels(double.host, timeout=10.0, cache=cache)
                    t0 = time.perf_counter()
                    judge_claims(frozen, "BEGIN", models, JUDGE)
                    times.append((time.perf_counter() - t0) / len(frozen) * 1000)
    for name, times in (("cold (empty cache, one request per claim)", cold), ("warm (served from the cache)", warm)):
        print(f"judge_claims on BEGIN's frozen part ({len(frozen)} claims), {name}: median "
              f"{statistics.median(times):.2f} ms/claim, range {min(times):.2f}-{max(times):.2f} over {args.repeat} "
              "runs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
