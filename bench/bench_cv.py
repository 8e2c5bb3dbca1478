#!/usr/bin/env python
"""Benchmark: grouped cross-validation of a floor with the whole-selection cluster bootstrap.

The bootstrap reruns the entire floor selection (fold thresholds chosen again)
inside every resample, so its cost is ``n_boot x folds`` sweeps.  Scenario:
RAGTruth-sized data (334 claims in 23 sources, the 21-floor support grid and
the 101-threshold default grid), 2,000 resamples, as ``playground calibrate
ragtruth`` runs it.  Data are synthetic and seeded by ``playground.sampling``.

Run ``python bench/bench_cv.py [--repeat 5]``.  Prints median and range.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from machine import describe, pin_one_core  # noqa: E402  (bench/machine.py)

from playground.sampling import uniform  # noqa: E402
from playground.sweep import DEFAULT_GRID, grouped_cv  # noqa: E402


def data(n: int = 334, groups: int = 23) -> tuple[list[float], list[bool], list[str]]:
    human = [uniform("bench", f"h{i}") < 0.81 for i in range(n)]
    scores = [min(1.0, max(0.0, (0.7 if h else 0.4) + 0.3 * (uniform("bench", f"s{i}") - 0.5)))
              for i, h in enumerate(human)]
    return scores, human, [f"src{int(uniform('bench', f'g{i}') * groups)}" for i in range(n)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--boot", type=int, default=2000)
    args = parser.parse_args()
    print(describe())
    print(pin_one_core())
    scores, human, groups = data()
    support_grid = [round(0.05 * i, 2) for i in range(21)]
    for name, grid in (("21 floors", support_grid), ("101 thresholds", list(DEFAULT_GRID))):
        times = []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            cv = grouped_cv(scores, human, groups, 5, thresholds=grid, n_boot=args.boot, criterion="balanced_accuracy")
            times.append(time.perf_counter() - t0)
        print(f"grouped_cv, 334 units, 23 groups, {name}, {args.boot} resamples ({cv.n_boot_used} used): "
              f"median {statistics.median(times):.2f} s, range {min(times):.2f}-{max(times):.2f} s "
              f"over {args.repeat} runs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
