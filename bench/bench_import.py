#!/usr/bin/env python
"""Benchmark: importing a large RAGAS dataset, and labelling it in the playground's session.

1. ``import``: a RAGAS JSONL file of N samples (default 10,000) with 5
   retrieved contexts each, a 3-sentence response and a 2-sentence
   reference, imported into a fresh SQLite store (read, validate, build the
   payload, one transaction).  Target: under 10 s.  Repeated ``--repeat``
   times, each into a new store; median and range.
2. ``toggle``: the same dataset opened from the store (``open_dataset``) and
   served by :class:`playground.ui.session.LabelSession` with its passages
   given (no retrieval); a toggle is ``set_label`` then ``scores()`` — the
   recompute the page shows.  Target: p95 under 50 ms.

Run ``python bench/bench_import.py [--samples N] [--toggles N] [--repeat N]`` (``make bench``).
"""
from __future__ import annotations

import argparse
import inspect
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from machine import describe  # noqa: E402  (bench/machine.py)

IMPORT_TARGET_S = 10.0
TOGGLE_TARGET_MS = 50.0
WORDS = ("retry", "webhook", "invoice", "tenant", "region", "backup", "latency", "token", "quota", "schedule",
         "archive", "export", "policy", "window", "payload", "signature", "header", "limit", "plan", "report")


def phrase(i: int, j: int, n: int) -> str:
    return " ".join(WORDS[(i * 7 + j * 3 + k) % len(WORDS)] for k in range(n))


def write_dataset(path: Path, samples: int, contexts: int) -> None:
    with path.open("w", encoding="utf-8") as fh:
        for i in range(samples):
            row = {
                "user_input": f"How does the {phrase(i, 0, 3)} work for account {i}?",
                "retrieved_contexts": [f"The {phrase(i, j, 12)} applies to account {i + j}. It lasts {j + 2} days. "
                                       f"See section {j}." for j in range(contexts)],
                "response": f"The {phrase(i, 1, 6)} applies to account {i}. It lasts 3 days. Ask support for more.",
                "reference": f"The {phrase(i, 1, 6)} applies to account {i}. It lasts 2 days.",
            }
            fh.write(json.dumps(row) + "\n")


def summary(seconds: list[float]) -> tuple[float, float, float, float]:
    ms = sorted(s * 1000 for s in seconds)
    p95 = ms[min(len(ms) - 1, round(0.95 * (len(ms) - 1)))]
    return statistics.median(ms), ms[0], ms[-1], p95


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=10_000)
    parser.add_argument("--contexts", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--toggles", type=int, default=200)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)

    from playground.datasets import open_dataset
    from playground.harness.config import load_config
    from playground.harness.retrieve import Hit
    from playground.harness.run import score_case
    from playground.importers.load import import_dataset
    from playground.store import open_store
    from playground.ui.session import LabelSession

    print(f"machine: {describe()}")
    tmp = tempfile.TemporaryDirectory()
    base = Path(tmp.name)
    data = base / "big.jsonl"
    write_dataset(data, args.samples, args.contexts)
    print(f"data: {args.samples} RAGAS samples x {args.contexts} contexts, {data.stat().st_size / 1e6:.1f} MB JSONL")

    times, cpu, result = [], [], None
    for r in range(args.repeat):
        with open_store(base / f"store{r}.db") as store:
            t0, c0 = time.perf_counter(), time.process_time()
            result = import_dataset(data, "ragas", "bench", store)
            times.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
    assert result is not None
    med, low, high, _ = summary(times)
    cmed, clow, chigh, _ = summary(cpu)
    ok_import = med / 1000 < IMPORT_TARGET_S
    print(f"import ({result.units} units, {args.repeat} runs): wall median {med / 1000:.2f} s, range "
          f"{low / 1000:.2f}–{high / 1000:.2f} s; CPU median {cmed / 1000:.2f} s, range {clow / 1000:.2f}–"
          f"{chigh / 1000:.2f} s; target < {IMPORT_TARGET_S:.0f} s wall: {'OK' if ok_import else 'OVER'}")

    store = open_store(base / "store0.db")
    t0 = time.perf_counter()
    opened = open_dataset("bench", store)
    t_open = time.perf_counter() - t0
    config = load_config()
    t0 = time.perf_counter()
    hits = {cid: [Hit(p, 0.0, rank) for rank, p in enumerate(ps, 1)] for cid, ps in opened.passages.items()}
    results = {cid: score_case(opened.dataset.cases[cid], hits[cid], opened.dataset.responses_for(cid), config)
               for cid in sorted(opened.dataset.cases)}
    t_score = time.perf_counter() - t0
    t0 = time.perf_counter()
    if "passages" in inspect.signature(LabelSession).parameters:
        session = LabelSession(opened.dataset, store, config, annotator="bench", harness_results=results,
                               passages=opened.passages)  # type: ignore[call-arg]
    else:
        session = LabelSession(opened.dataset, store, config, annotator="bench", harness_results=results, hits=hits)
    t_session = time.perf_counter() - t0
    print(f"open: open_dataset {t_open:.2f} s, deterministic scores for the session {t_score:.2f} s, "
          f"LabelSession {t_session:.2f} s ({len(session.catalog)} units)")

    pairs = [(u, d) for u, unit in session.catalog.items() for d in unit.dimensions]
    rng = random.Random(args.seed)
    recompute = []
    for _ in range(args.toggles):
        uid, dim = rng.choice(pairs)
        cid, rid = session._group[uid]
        session.go_to(cid, rid or None)
        current = session.label(uid, dim)
        value = rng.choice([v for v in (1, 0, None) if v != current])
        session.set_label(uid, dim, value)
        t1 = time.perf_counter()
        session.scores()
        recompute.append(time.perf_counter() - t1)
    med, low, high, p95 = summary(recompute)
    ok_toggle = p95 < TOGGLE_TARGET_MS
    print(f"toggle recompute ({args.toggles} toggles, seed {args.seed}): median {med:.2f} ms, range "
          f"{low:.2f}–{high:.2f} ms, p95 {p95:.2f} ms; target p95 < {TOGGLE_TARGET_MS:.0f} ms: "
          f"{'OK' if ok_toggle else 'OVER'}")
    store.close()
    tmp.cleanup()
    return 0 if ok_import and ok_toggle else 1


if __name__ == "__main__":
    sys.exit(main())
