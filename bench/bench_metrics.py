#!/usr/bin/env python
"""Benchmark: recompute the four dimensions with Wilson intervals after one label change.

Scenarios (seeded, synthetic; one core, no multiprocessing):

* 60 cases (about 1,200 units) -- target under 20 ms per recompute;
* 5,000 cases (about 100,000 units) -- target under 100 ms per recompute.

Each case has 8 retrieved passages (``relevant``), 7 answer claims
(``supported`` and ``correct``) and 5 reference facts (``covered``): 20 units,
27 labels.  One "recompute" is what the playground does after a person changes
one label: record the change, then produce the four rates with intervals
pooled, for the changed case, and for its case type.

Modes:

* ``incremental``  -- :class:`playground.metrics.RateCounter` (O(1) update,
  4 Wilson intervals per view, cached by (successes, n));
* ``incremental, cold cache`` -- the same with the Wilson cache cleared before
  every change (worst case: every interval computed by statsmodels);
* ``full recount`` -- :func:`rates_from_labels` over every label plus
  :func:`rates_by_group` by case type, from scratch (the naive way; shown for
  comparison).

Run ``python bench/bench_metrics.py`` (``make bench``).  Prints a table.
"""
from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
from machine import describe, pin_one_core  # noqa: E402  (bench/machine.py)

from playground.metrics import RateCounter, rates_by_group, rates_from_labels  # noqa: E402
from playground.model import CASE_TYPES, Label  # noqa: E402
from playground.stats.intervals import _wilson_cached  # noqa: E402

PASSAGES, CLAIMS, FACTS = 8, 7, 5
UNITS_PER_CASE = PASSAGES + CLAIMS + FACTS
#: Share of "yes" per label dimension in the synthetic labels.
YES_RATE = {"relevant": 0.6, "supported": 0.8, "correct": 0.75, "covered": 0.7}


def synthetic(n_cases: int, seed: int):
    """Labels, unit -> case, case -> case type for ``n_cases`` synthetic cases."""
    rng = random.Random(seed)
    labels: dict[tuple[str, str], Label] = {}
    case_of: dict[str, str] = {}
    type_of: dict[str, str] = {}
    for i in range(n_cases):
        case_id = f"case-{i:05d}"
        type_of[case_id] = CASE_TYPES[i % len(CASE_TYPES)]
        units = ([(f"{case_id}::p{j}", "passage", ("relevant",)) for j in range(PASSAGES)]
                 + [(f"{case_id}/r1:c{j}", "claim", ("supported", "correct"))
                    for j in range(CLAIMS)]
                 + [(f"{case_id}/r1::f{j}", "fact", ("covered",)) for j in range(FACTS)])
        for unit_id, kind, dims in units:
            case_of[unit_id] = case_id
            for dim in dims:
                value = int(rng.random() < YES_RATE[dim])
                labels[(unit_id, dim)] = Label("bench", kind, unit_id, dim, value)
    return labels, case_of, type_of


def changes(labels, n: int, seed: int):
    """``n`` seeded label flips: (key, new value)."""
    rng = random.Random(seed + 1)
    keys = sorted(labels)
    out = []
    current = {k: lab.value for k, lab in labels.items()}
    for _ in range(n):
        key = keys[rng.randrange(len(keys))]
        current[key] = 1 - current[key]
        out.append((key, current[key]))
    return out


def time_incremental(labels, case_of, type_of, flips, cold: bool) -> list[float]:
    by_case = RateCounter(case_of)
    by_type = RateCounter(lambda u: type_of[case_of[u]])
    for lab in labels.values():
        by_case.set(lab.unit_id, lab.dimension, lab.value)
        by_type.set(lab.unit_id, lab.dimension, lab.value)
    times = []
    for (unit_id, dim), value in flips:
        if cold:
            _wilson_cached.cache_clear()
        t0 = time.perf_counter_ns()
        by_case.set(unit_id, dim, value)
        by_type.set(unit_id, dim, value)
        case_id = case_of[unit_id]
        pooled = by_case.rates()
        case = by_case.rates(case_id)
        ctype = by_type.rates(type_of[case_id])
        times.append((time.perf_counter_ns() - t0) / 1e6)
        assert len(pooled) == len(case) == len(ctype) == 4
    return times


def time_full(labels, case_of, type_of, flips) -> list[float]:
    labels = dict(labels)
    times = []
    for key, value in flips:
        old = labels[key]
        t0 = time.perf_counter_ns()
        labels[key] = Label(old.annotator, old.unit_kind, old.unit_id, old.dimension, value)
        values = labels.values()
        pooled = rates_from_labels(values)
        per_type = rates_by_group(values, lambda lab: type_of[case_of[lab.unit_id]])
        times.append((time.perf_counter_ns() - t0) / 1e6)
        assert len(pooled) == 4 and per_type
    return times


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--changes", type=int, default=2000, help="label changes per incremental run")
    ap.add_argument("--full-changes", type=int, default=30, help="label changes per full recount")
    ap.add_argument("--seed", type=int, default=20240601)
    args = ap.parse_args(argv)

    pinned = pin_one_core()
    print("Recompute the four dimensions with 95% Wilson intervals after one label change")
    print(f"machine: {describe()}; {pinned}")
    print(f"seed {args.seed} | "
          f"{UNITS_PER_CASE} units ({PASSAGES} passages, {CLAIMS} claims, {FACTS} facts) "
          f"per case")
    print("each recompute: record the change, then rates pooled + changed case + its case type")
    print()
    header = (f"{'scenario':<13} {'units':>8} {'labels':>8} {'mode':<24} {'runs':>5} "
              f"{'mean ms':>8} {'median ms':>9} {'p95 ms':>8} {'target ms':>9}  ok")
    print(header)
    print("-" * len(header))
    all_ok = True
    for n_cases, target in ((60, 20.0), (5000, 100.0)):
        labels, case_of, type_of = synthetic(n_cases, args.seed)
        flips = changes(labels, args.changes, args.seed)
        runs = [
            ("incremental", time_incremental(labels, case_of, type_of, flips, cold=False)),
            ("incremental, cold cache", time_incremental(labels, case_of, type_of, flips,
                                                         cold=True)),
            ("full recount", time_full(labels, case_of, type_of, flips[:args.full_changes])),
        ]
        for mode, times in runs:
            t = np.asarray(times)
            p95 = float(np.percentile(t, 95))
            ok = p95 < target
            if mode.startswith("incremental"):
                all_ok &= ok
            print(f"{n_cases:>5} cases   {len(case_of):>8,} {len(labels):>8,} {mode:<24} "
                  f"{len(t):>5} {t.mean():>8.3f} {float(np.median(t)):>9.3f} {p95:>8.3f} "
                  f"{target:>9.0f}  {'yes' if ok else 'NO'}")
    print()
    print("ok = p95 under the target; the live playground uses the incremental mode.")
    return 0 if all_ok else 1


if __name__ == "__main__":
    sys.exit(main())
