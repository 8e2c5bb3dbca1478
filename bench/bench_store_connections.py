#!/usr/bin/env python
"""Benchmark: what closing idle PostgreSQL connections costs a click (issue 30.3, docs/many-hosts.md).

A throwaway PostgreSQL on loopback (``playground.store.pgtest``, durability at
its defaults).  One store object saves one label per "click", ``--clicks``
times, in two ways, interleaved click by click:

* **kept open** (``idle_close=0``): the connection stays open between clicks,
  as every kernel's did before;
* **reopened** (the default rule, idle close 2 s): the clicks come more than
  2 s apart in a class, so each save opens a new connection first.  Here the
  store is closed between clicks (``close()``), which is what the idle timer
  does, without waiting 2 s per click.

Printed: per way, the save's wall time (median, p95, range) in ms, and the
sessions each opened; and, apart, what opening and closing a bare session
(``psycopg.connect`` and ``close``, no statement) takes.

Run ``python bench/bench_store_connections.py [--clicks 200]``.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
for p in (ROOT, ROOT / "tests"):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

from machine import describe  # noqa: E402  (bench/machine.py)


def _pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--clicks", type=int, default=200, help="saves per way (default 200)")
    args = ap.parse_args()
    from store_fixtures import claim

    from playground.store import open_store
    from playground.store.pgtest import start_cluster
    from playground.store.postgres import ENV_IDLE_CLOSE

    print(f"machine: {describe()}")
    cluster = start_cluster()
    try:
        print(f"PostgreSQL {cluster.version} on loopback (fsync on, synchronous_commit on)")
        with open_store(cluster.url):
            pass  # the tables, once
        os.environ[ENV_IDLE_CLOSE] = "0"  # kept open
        kept = open_store(cluster.url, create=False)
        os.environ[ENV_IDLE_CLOSE] = "2"  # the default rule
        reopened = open_store(cluster.url, create=False)
        times: dict[str, list[float]] = {"kept open": [], "reopened": []}
        for i in range(args.clicks):
            for name, store in (("kept open", kept), ("reopened", reopened)):
                if name == "reopened":
                    store._b.close()  # type: ignore[attr-defined]  (what the idle timer does after 2 s)
                t0 = time.perf_counter()
                store.set_label(f"bench-{name}", claim(i), "supported", i % 2)
                times[name].append(1000 * (time.perf_counter() - t0))
        import psycopg

        bare = []
        for _ in range(args.clicks):
            t0 = time.perf_counter()
            psycopg.connect(cluster.url, autocommit=True, connect_timeout=10).close()
            bare.append(1000 * (time.perf_counter() - t0))
        print(f"bare session open + close: median {statistics.median(bare):.2f} ms, p95 {_pct(bare, 0.95):.2f} ms "
              f"({len(bare)} sessions)")
        for name, store in (("kept open", kept), ("reopened", reopened)):
            xs = times[name]
            print(f"{name:>9}: save median {statistics.median(xs):.2f} ms, p95 {_pct(xs, 0.95):.2f} ms, "
                  f"range {min(xs):.2f}–{max(xs):.2f} ms over {len(xs)} saves; "
                  f"sessions opened {store._b.connections_opened}")  # type: ignore[attr-defined]
            store.close()
    finally:
        print(f"machine after: {describe()}")
        cluster.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
