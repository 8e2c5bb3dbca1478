#!/usr/bin/env python
"""Benchmark: a class through nginx onto several `playground serve` hosts on one PostgreSQL (issue 30.2).

The deployment of docs/many-hosts.md on one machine: a throwaway PostgreSQL
(``playground.store.pgtest``), ``--hosts`` ``playground serve`` processes and
the room (``--read-only``) on loopback ports, and a real nginx running the
shipped ``deploy/nginx/playground.conf`` (addresses put in place as in
tests/test_multihost.py).  The students are the class benchmark's protocol
clients (``bench/bench_class.py``: GET the page, read every widget's state
over the kernel's websocket, set toggles, send the shutdown beacon), all
through the proxy.

Printed: page open (GET → interactive) p50/p95/max, toggle → new figures
p50/p95, pages built per host, labels lost (must be 0), annotators in the
store, whether the room's page on its own process lists every student, and
the most PostgreSQL connections the class held at once (sampled every 0.5 s;
the idle close of docs/many-hosts.md, "Connections").

Run ``python bench/bench_multihost.py [--students 20] [--hosts 2] [--preheat 10] [--minutes 1]``.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
for p in (ROOT, ROOT / "tests", ROOT / "bench"):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

from machine import describe  # noqa: E402  (bench/machine.py)


def _pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))] if xs else float("nan")


def _connections(url: str, stop: threading.Event, peak: list[int]) -> None:
    import psycopg

    with psycopg.connect(url, autocommit=True) as admin:
        while not stop.is_set():
            row = admin.execute("SELECT count(*) FROM pg_stat_activity WHERE application_name = "
                                "'rag-label-playground'").fetchone()
            peak[0] = max(peak[0], int(row[0]) if row else 0)
            stop.wait(0.5)


def _arguments() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--students", type=int, default=20)
    ap.add_argument("--hosts", type=int, default=2)
    ap.add_argument("--preheat", type=int, default=10, help="pool per host (default 10)")
    ap.add_argument("--minutes", type=float, default=1.0, help="how long they label (default 1)")
    ap.add_argument("--every", type=float, default=5.0, help="seconds between a student's toggles (5)")
    ap.add_argument("--ramp", type=float, default=30.0, help="students arrive over this many seconds (30)")
    ap.add_argument("--seed", type=int, default=13)
    return ap.parse_args()


def main() -> int:
    args = _arguments()
    from bench_class import Student, lost_labels, student
    from browser_fixtures import stop_server
    from serve_clients import status, wait_until
    from test_multihost import nginx, room_text, serve_host

    from playground.store import open_store
    from playground.store.pgtest import start_cluster

    print(f"machine: {describe()}")
    cluster = start_cluster()
    procs = []
    try:
        with tempfile.TemporaryDirectory() as tmp_name:
            tmp = Path(tmp_name)
            hosts = []
            for h in range(args.hosts):
                proc, port, log = serve_host(tmp, f"host-{h + 1}", cluster.url, "--preheat", str(args.preheat))
                procs.append(proc)
                hosts.append((port, log))
            room, room_port, _ = serve_host(tmp, "room", cluster.url, "--read-only", "--preheat", "0")
            procs.append(room)
            for port, _log in hosts:
                wait_until(lambda port=port: status(f"http://127.0.0.1:{port}/")["pool_ready"] >= args.preheat,
                           600, 2.0)
            print(f"hosts: {args.hosts}, pools of {args.preheat} ready; {describe()}")
            stop, peak = threading.Event(), [0]
            sampler = threading.Thread(target=_connections, args=(cluster.url, stop, peak), daemon=True)
            sampler.start()
            with nginx([p for p, _ in hosts], room_port, tmp / "nginx") as (base, room_base):
                students = [Student(f"student-{i:02d}", args.seed) for i in range(args.students)]
                start = time.monotonic()
                until = start + args.ramp + 60 * args.minutes
                threads = []
                for i, st in enumerate(students):
                    time.sleep(max(0.0, start + args.ramp * i / max(1, args.students) - time.monotonic()))
                    t = threading.Thread(target=student, args=(base, st, until, args.every), daemon=True)
                    t.start()
                    threads.append(t)
                for t in threads:
                    t.join(timeout=max(1.0, until + 300 - time.monotonic()))
                stop.set()
                shown = room_text(room_base)
            lost = lost_labels(cluster.url, students)  # type: ignore[arg-type]  (open_store takes a URL too)
            with open_store(cluster.url, read_only=True, create=False) as store:
                annotators = set(store.annotators())
            logs = [log.read_text(errors="replace") for _, log in hosts]
    finally:
        for proc in reversed(procs):
            stop_server(proc)
        cluster.stop()
    opens = [s.open_s for s in students if s.open_s is not None]
    toggles = [ms for s in students for ms in s.toggles_ms]
    errors = [f"{s.name}: {s.error}" for s in students if s.error]
    per_host = [sum(1 for s in students if f"page for '{s.name}'" in log) for log in logs]
    print(f"students: {args.students} over {args.ramp:.0f} s through nginx, labelling {args.minutes:g} min, "
          f"one toggle every ~{args.every:g} s each")
    print(f"page open (GET → interactive): p50 {_pct(opens, 0.5):.2f} s, p95 {_pct(opens, 0.95):.2f} s, "
          f"max {max(opens, default=float('nan')):.2f} s (n={len(opens)})")
    print(f"toggle → new figures: p50 {_pct(toggles, 0.5):.0f} ms, p95 {_pct(toggles, 0.95):.0f} ms "
          f"(n={len(toggles)})")
    print(f"pages built per host: {per_host}")
    print(f"labels lost: {lost} (must be 0); toggles refused and shown as not saved: "
          f"{sum(s.refused for s in students)}")
    named = {s.name for s in students if s.last}  # the students who set a label (late pages may set none)
    print(f"students who set a label: {len(named)}; annotators in the one store among them: "
          f"{len(annotators & named)}; the room on its own process lists {sum(1 for n in named if n in shown)}")
    print(f"PostgreSQL connections held by the class at most (sampled every 0.5 s): {peak[0]}")
    print(f"toggles per student: median {statistics.median([len(s.toggles_ms) for s in students]):.0f}")
    print(f"machine after: {describe()}")
    if errors:
        print("errors:\n  " + "\n  ".join(errors))
    return 0 if lost == 0 and not errors and annotators >= named and all(n in shown for n in named) else 1


if __name__ == "__main__":
    sys.exit(main())
