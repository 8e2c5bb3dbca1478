"""BM25 queries per second over a 10,000-chunk synthetic corpus, on one core.

Chunks are ~120 words drawn (seeded) from a 5,000-word vocabulary plus
identifiers such as ``TW-4291``; queries are 6-word samples of the same
vocabulary with one identifier. Prints a table with the machine.
"""
from __future__ import annotations

import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from machine import describe, pin_one_core

from playground.harness.retrieve import BM25Retriever
from playground.model import Locator, Passage


def corpus(n_chunks: int, rng: random.Random) -> tuple[list[Passage], list[str]]:
    vocab = [f"w{i:04d}" for i in range(5000)]
    idents = [f"TW-{4000 + i}" for i in range(400)]
    weights = [1 / (i + 1) for i in range(len(vocab))]  # Zipf-like
    passages = []
    for i in range(n_chunks):
        words = [*rng.choices(vocab, weights, k=120), rng.choice(idents)]
        tenant = "t1" if i % 2 else "t2"
        passages.append(Passage(Locator(tenant, f"doc-{i // 4}", f"Section {i % 4}"), " ".join(words), f"Doc {i // 4}"))
    queries = [" ".join([*rng.choices(vocab, weights, k=6), rng.choice(idents)]) for _ in range(500)]
    return passages, queries


def main() -> int:
    pinned = pin_one_core()
    rng = random.Random(7)
    passages, queries = corpus(10_000, rng)
    t0 = time.perf_counter()
    retriever = BM25Retriever(passages)
    build = time.perf_counter() - t0
    times = []
    for q in queries:
        t = time.perf_counter()
        retriever.search(q, "t1", k=5)
        times.append(time.perf_counter() - t)
    total = sum(times)
    print(f"machine: {describe()}; {pinned}")
    print(f"{'corpus':<28} {'index build s':>14} {'queries':>8} {'queries/s':>10} {'median ms':>10} {'p95 ms':>8}")
    p95 = sorted(times)[int(0.95 * len(times))]
    print(f"{'10,000 chunks (2 tenants)':<28} {build:>14.2f} {len(queries):>8} {len(queries) / total:>10.0f} "
          f"{statistics.median(times) * 1000:>10.2f} {p95 * 1000:>8.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
