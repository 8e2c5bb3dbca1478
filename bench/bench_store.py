#!/usr/bin/env python
"""Benchmark: label writes per second into the label store, durable mode, SQLite versus PostgreSQL.

Each configuration starts N writer processes (``spawn``; each opens its own
store, as one Voila kernel per browser tab does), lines them up on a barrier,
and has each write its share of labels through ``LabelStore.set_label`` —
every call one transaction with its event, durable on return — under its own
annotator name.  Every write is a real change (a new label), never a no-op.
Throughput is all labels written divided by the wall time from the barrier
to the last writer's last returned call; latencies are per call.

Durability: SQLite in WAL mode with ``synchronous=FULL``; PostgreSQL with
``fsync=on`` and ``synchronous_commit=on`` (its defaults).  The PostgreSQL leg
uses ``$PLAYGROUND_TEST_POSTGRES`` or starts a throwaway local cluster
(:mod:`playground.store.pgtest`), each configuration in a fresh schema.

Run ``python bench/bench_store.py`` (``make bench``); ``--writers 1,4,8,32``,
``--labels 2000`` (per configuration), ``--backends sqlite,postgresql``.
Target: at least 500 writes/s for one SQLite writer.
"""
from __future__ import annotations

import argparse
import multiprocessing as mp
import sqlite3
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from urllib.parse import quote

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from machine import describe  # noqa: E402  (bench/machine.py)

TARGET_ONE_WRITER = 500.0


def _units(n: int, offset: int):
    from playground.model import UNIT_DIMENSIONS, Unit, short_hash

    out = []
    for i in range(offset, offset + n):
        text = f"Benchmark claim {i}."
        case_id = f"GC-{i // 20 + 1:04d}"
        out.append(Unit("claim", f"{case_id}-R1:c{i}:{short_hash(text)}", case_id, f"{case_id}-R1",
                        UNIT_DIMENSIONS["claim"], text, short_hash(text, 12)))
    return out


def _writer(url: str, annotator: str, n: int, barrier, results) -> None:
    from playground.store import open_store

    units = _units(n, 0)
    latencies = []
    with open_store(url) as store:
        store.set_label(annotator, units[0], "correct", 1)  # warm up: connection, annotator row
        barrier.wait(timeout=300)
        for i, unit in enumerate(units):
            t0 = time.perf_counter()
            store.set_label(annotator, unit, "supported", i % 2)
            latencies.append(time.perf_counter() - t0)
        finished = time.monotonic()
    results.put((finished, latencies))


def run_config(url: str, writers: int, total: int) -> dict:
    ctx = mp.get_context("spawn")
    per = max(20, total // writers)
    barrier = ctx.Barrier(writers + 1)
    results = ctx.Queue()
    procs = [ctx.Process(target=_writer, args=(url, f"bench-{k}", per, barrier, results)) for k in range(writers)]
    for p in procs:
        p.start()
    barrier.wait(timeout=300)
    start = time.monotonic()
    got = [results.get(timeout=600) for _ in procs]
    for p in procs:
        p.join(60)
    if any(p.exitcode != 0 for p in procs):
        raise RuntimeError("a writer failed")
    wall = max(f for f, _ in got) - start
    lat = sorted(x for _, ls in got for x in ls)
    return {
        "writers": writers, "labels": per * writers, "wall": wall, "rate": per * writers / wall,
        "p50": statistics.median(lat) * 1000, "p99": lat[min(len(lat) - 1, int(len(lat) * 0.99))] * 1000,
        "max": lat[-1] * 1000,
    }


def check_store(url: str, expected: int) -> None:
    from playground.store import open_store

    with open_store(url, read_only=True) as s:
        n = len([lab for lab in s.labels() if lab.dimension == "supported"])
        if n != expected:
            raise RuntimeError(f"expected {expected} labels in {s.url}, found {n}")
        problems = s.verify()
        if problems:
            raise RuntimeError(f"store inconsistent after the run: {problems[:3]}")


def machine() -> list[str]:
    return [f"machine: {describe()}", f"SQLite {sqlite3.sqlite_version}"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--writers", default="1,4,8,32", help="comma-separated writer process counts")
    parser.add_argument(
        "--labels", type=int, default=2000, help="labels written per configuration (split over writers)"
    )
    parser.add_argument("--backends", default="sqlite,postgresql")
    args = parser.parse_args(argv)
    counts = [int(x) for x in args.writers.split(",")]
    backends = [b.strip() for b in args.backends.split(",")]
    lines = machine()
    rows = []
    if "sqlite" in backends:
        with tempfile.TemporaryDirectory(prefix="bench-store-") as tmp:
            lines.append(f"sqlite: file in {tmp} (WAL, synchronous=FULL)")
            for n in counts:
                path = Path(tmp) / f"w{n}.db"
                from playground.store import open_store

                open_store(path).close()
                r = run_config(str(path), n, args.labels)
                check_store(str(path), r["labels"])
                rows.append(("sqlite", r))
    if "postgresql" in backends:
        import psycopg

        from playground.store.pgtest import ClusterUnavailable, server_url

        try:
            with server_url() as server:
                with psycopg.connect(server, autocommit=True) as conn:
                    version = conn.execute("SHOW server_version").fetchone()[0]
                    fsync = conn.execute("SHOW fsync").fetchone()[0]
                    sync = conn.execute("SHOW synchronous_commit").fetchone()[0]
                lines.append(
                    f"postgresql {version} at {server.split('@')[-1]} (fsync={fsync}, synchronous_commit={sync})"
                )
                for n in counts:
                    schema = "bench_" + uuid.uuid4().hex[:8]
                    with psycopg.connect(server, autocommit=True) as conn:
                        conn.execute(f'CREATE SCHEMA "{schema}"')
                    url = server + ("&" if "?" in server else "?") + "options=" + quote(f"-csearch_path={schema}")
                    try:
                        from playground.store import open_store

                        open_store(url).close()
                        r = run_config(url, n, args.labels)
                        check_store(url, r["labels"])
                        rows.append(("postgresql", r))
                    finally:
                        with psycopg.connect(server, autocommit=True) as conn:
                            conn.execute(f'DROP SCHEMA "{schema}" CASCADE')
        except ClusterUnavailable as exc:
            lines.append(f"postgresql: skipped ({exc})")
    print("\n".join(lines))
    print()
    print(
        f"{'backend':<11} {'writers':>7} {'labels':>7} {'seconds':>8} {'writes/s':>9} {'p50 ms':>7} {'p99 ms':>7} "
        f"{'max ms':>7}"
    )
    for backend, r in rows:
        print(
            f"{backend:<11} {r['writers']:>7} {r['labels']:>7} {r['wall']:>8.2f} {r['rate']:>9.0f} "
            f"{r['p50']:>7.2f} {r['p99']:>7.2f} {r['max']:>7.0f}"
        )
    one = [r for b, r in rows if b == "sqlite" and r["writers"] == 1]
    if one:
        ok = one[0]["rate"] >= TARGET_ONE_WRITER
        print(
            f"\ntarget: one SQLite writer >= {TARGET_ONE_WRITER:.0f} writes/s: {'met' if ok else 'NOT met'} "
            f"({one[0]['rate']:.0f}/s)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
