#!/usr/bin/env python
"""Benchmark: importing and scoring a large dataset — time, peak memory, and ``--jobs 1`` against ``--jobs 2``.

For each size (default 10,000 and 100,000 samples) a RAGAS JSONL file is
generated from ``--seed`` (5 retrieved contexts, a 3-sentence response and a
2-sentence reference per sample; the same bytes for the same seed and size),
then, each in a fresh Python process as a user runs it:

1. ``import``: ``playground import ragas FILE --dataset NAME --db DB`` into a new SQLite store;
2. ``run --jobs J``: ``playground harness run --dataset NAME --db DB --out OUT --quiet --jobs J``
   with the page's harness cache on (a new ``PLAYGROUND_CACHE`` folder per run, as a first run is).

``--jobs 1`` and ``--jobs 2`` runs are interleaved (1, 2, 1, 2, ...) so that a
change of machine load hits both alike.  Per step: wall time (median and range
over ``--repeat`` runs; ``--repeat-large`` for sizes over 20,000), CPU time
(user + system, the process and its workers), and peak resident memory of the
main process (``ru_maxrss``) and of its largest worker.  The speed-up is the
median wall time of ``--jobs 1`` over that of ``--jobs 2``; the issue's target
is at least 1.8 on 10,000 samples on a quiet machine, and peak memory at most
1 GiB at 100,000 samples.  The machine line gives the load average: on a
busy machine a second process gets no second core, and the speed-up says so.

Run ``python bench/bench_harness_scale.py [--sizes 10000 100000] [--repeat 3] [--repeat-large 1] [--seed 7]
[--import-only]`` (``--import-only``: the import step alone, e.g. to follow the import's memory).
"""
from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from machine import describe  # noqa: E402  (bench/machine.py)

SPEEDUP_TARGET = 1.8
MEMORY_TARGET_GIB = 1.0
WORDS = ("retry", "webhook", "invoice", "tenant", "region", "backup", "latency", "token", "quota", "schedule",
         "archive", "export", "policy", "window", "payload", "signature", "header", "limit", "plan", "report")


def write_dataset(path: Path, samples: int, seed: int, contexts: int = 5) -> None:
    """``samples`` RAGAS rows drawn from ``random.Random(seed)``: the same file for the same arguments."""
    rng = random.Random(seed)

    def phrase(n: int) -> str:
        return " ".join(rng.choice(WORDS) for _ in range(n))

    with path.open("w", encoding="utf-8") as fh:
        for i in range(samples):
            topic = phrase(3)
            row = {
                "user_input": f"How does the {topic} work for account {i}?",
                "retrieved_contexts": [f"The {phrase(12)} applies to account {i + j}. It lasts {rng.randint(1, 9)} "
                                       f"days. See section {j}." for j in range(contexts)],
                "response": f"The {topic} {phrase(3)} applies to account {i}. It lasts {rng.randint(1, 9)} days. "
                            "Ask support for more.",
                "reference": f"The {topic} {phrase(3)} applies to account {i}. It lasts {rng.randint(1, 9)} days.",
            }
            fh.write(json.dumps(row) + "\n")


def child(argv: list[str]) -> int:
    """Run the playground command ``argv`` here; print wall, CPU and peak memory as one JSON line."""
    from playground.cli import main

    t0 = time.perf_counter()
    with open(os.devnull, "w") as sink:
        stdout, sys.stdout = sys.stdout, sink
        try:
            code = main(argv)
        finally:
            sys.stdout = stdout
    wall = time.perf_counter() - t0
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    print(json.dumps({"code": code, "wall": wall, "cpu": me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime,
                      "rss_mib": me.ru_maxrss / 1024, "worker_rss_mib": kids.ru_maxrss / 1024}))
    return 0


def measure(argv: list[str], cache: Path | None = None) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    if cache is not None:
        env["PLAYGROUND_CACHE"] = str(cache)
    out = subprocess.run([sys.executable, __file__, "--child", json.dumps(argv)], env=env, capture_output=True,
                         text=True, check=True)
    result: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    if result["code"] != 0:
        raise SystemExit(f"playground {' '.join(argv)} exited {result['code']}: {out.stderr[-2000:]}")
    return result


def line(what: str, runs: list[dict[str, float]]) -> str:
    walls = [r["wall"] for r in runs]
    cpu = statistics.median(r["cpu"] for r in runs)
    rss = max(r["rss_mib"] for r in runs)
    worker = max(r["worker_rss_mib"] for r in runs)
    workers = f"{worker:.0f}" if worker else "—"  # an import has no worker process
    return (f"| {what} | {statistics.median(walls):.1f} | {min(walls):.1f}–{max(walls):.1f} | {cpu:.1f} | {rss:.0f} | "
            f"{workers} | {len(runs)} |")


def bench_size(base: Path, size: int, seed: int, repeat: int,
               import_only: bool = False) -> tuple[list[str], float | None, float]:
    """The table rows of one size, the speed-up of --jobs 2 (None with ``import_only``), and the highest peak
    memory (MiB) of any step."""
    data = base / f"data-{size}.jsonl"
    write_dataset(data, size, seed)
    name = f"bench{size}"
    imports = [measure(["import", "ragas", str(data), "--dataset", name, "--db", str(base / f"s{size}-{r}.db")])
               for r in range(repeat)]
    if import_only:
        return [line(f"{size:,} import", imports)], None, max(r["rss_mib"] for r in imports)
    db = str(base / f"s{size}-0.db")
    runs: dict[int, list[dict[str, float]]] = {1: [], 2: []}
    for r in range(repeat):
        for jobs in (1, 2):
            out, cache = base / f"run-{size}-{jobs}-{r}", base / f"cache-{size}-{jobs}-{r}"
            runs[jobs].append(measure(["harness", "run", "--dataset", name, "--db", db, "--out", str(out),
                                       "--quiet", "--jobs", str(jobs)], cache))
    speedup = statistics.median(r["wall"] for r in runs[1]) / statistics.median(r["wall"] for r in runs[2])
    rows = [line(f"{size:,} import", imports), line(f"{size:,} run --jobs 1", runs[1]),
            line(f"{size:,} run --jobs 2", runs[2])]
    peak = max(r["rss_mib"] for r in [*imports, *runs[1], *runs[2]])
    return rows, speedup, peak


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--repeat", type=int, default=3, help="runs per step for sizes up to 20,000")
    parser.add_argument("--repeat-large", type=int, default=1, help="runs per step for larger sizes")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--import-only", action="store_true", help="measure the import step only (no harness runs)")
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child is not None:
        return child(json.loads(args.child))
    print(f"machine: {describe()}")
    print(f"command: python bench/bench_harness_scale.py --sizes {' '.join(map(str, args.sizes))} "
          f"--repeat {args.repeat} --repeat-large {args.repeat_large} --seed {args.seed}"
          + (" --import-only" if args.import_only else ""))
    print("| step | wall median (s) | wall range (s) | CPU median (s) | peak RSS, main (MiB) | "
          "peak RSS, largest worker (MiB) | runs |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    verdicts = []
    with tempfile.TemporaryDirectory() as tmp:
        for size in args.sizes:
            rows, speedup, peak = bench_size(Path(tmp), size, args.seed, args.repeat if size <= 20_000 else
                                             args.repeat_large, args.import_only)
            print("\n".join(rows), flush=True)
            faster = "" if speedup is None else (f"--jobs 2 speed-up {speedup:.2f}x (target >= {SPEEDUP_TARGET}x on "
                                                 "10,000, quiet machine); ")
            verdicts.append(f"{size:,} samples: {faster}peak RSS {peak / 1024:.2f} GiB (target <= "
                            f"{MEMORY_TARGET_GIB:.0f} GiB at 100,000)")
    print("\n".join(verdicts))
    print(f"machine after: {describe()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
