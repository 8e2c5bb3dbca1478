#!/usr/bin/env python
"""Benchmark: ``playground import traces`` of 100,000 spans (10,000 traces), time and peak memory.

A span file in Phoenix's spans-dataframe shape (the columns of
tests/fixtures/traces/phoenix_spans.*: ``context.trace_id``,
``context.span_id``, ``parent_id``, ``span_kind``, times and nested
``attributes.*``) is written as JSON Lines and as Parquet: per trace a CHAIN
root, a RETRIEVER span with 5 documents, a RERANKER keeping 3, an LLM span,
an EMBEDDING span and five TOOL/CHAIN steps (10 spans), every 3 traces one
session; the spans of 8 traces at a time interleaved, as OTLP batches come.
Each run is ``python -m playground import traces FILE --dataset bench --db NEW``
in a fresh process (read, assemble, validate, build the payload and units,
one store transaction); the wall time and the child's peak RSS
are measured (the child reports its own ``ru_maxrss`` and its CPU time, user + system, which the
machine's load does not inflate as it does the wall time).  Targets: ≤ 20 s and ≤ 1 GiB.  Median and range over
``--repeat`` runs per format.

Run ``python bench/bench_traces.py [--traces N] [--repeat N]``.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from machine import describe  # noqa: E402  (bench/machine.py)

TIME_TARGET_S = 20.0
MEMORY_TARGET_MIB = 1024
WORDS = ("ferry", "pier", "ticket", "harbour", "museum", "timetable", "weekday", "season", "route", "fare",
         "bridge", "island", "north", "south", "morning", "evening", "holiday", "child", "bicycle", "luggage")


def phrase(i: int, j: int, n: int) -> str:
    return " ".join(WORDS[(i * 7 + j * 3 + k) % len(WORDS)] for k in range(n))


def _span(trace: int, n: int, parent: int | None, kind: str, attrs: dict[str, Any]) -> dict[str, Any]:
    base = 1_764_000_000 + trace
    return {"name": kind.lower(), "span_kind": kind, "context.trace_id": f"{trace:032x}",
            "context.span_id": f"{trace * 16 + n:016x}",
            "parent_id": None if parent is None else f"{trace * 16 + parent:016x}",
            "start_time": datetime.fromtimestamp(base + n / 100, UTC),
            "end_time": datetime.fromtimestamp(base + (20 - n) / 100 if n == 0 else base + n / 100 + 0.005, UTC),
            "attributes.openinference": {"span": {"kind": kind}}, **attrs}


def _docs(i: int, ids: range) -> dict[str, Any]:
    return {"documents": [{"document": {"id": f"kb-{(i + j) % 500}", "score": 1.0 - j / 10,
                                        "content": f"The {phrase(i, j, 12)} applies to route {i + j}. It runs "
                                                   f"{j + 2} times a day."}} for j in ids]}


def trace_spans(i: int) -> list[dict[str, Any]]:
    """The 10 spans of trace ``i``."""
    question = f"How does the {phrase(i, 0, 3)} work for route {i}?"
    answer = f"The {phrase(i, 1, 6)} applies to route {i}. It runs 3 times a day. Ask at the pier for more."
    session = {"attributes.session": {"id": f"s{i // 3}"}}
    spans = [_span(i, 0, None, "CHAIN", {"attributes.input": {"value": question},
                                        "attributes.output": {"value": answer}, **session}),
             _span(i, 1, 0, "EMBEDDING", {"attributes.input": {"value": question}}),
             _span(i, 2, 0, "RETRIEVER", {"attributes.input": {"value": question},
                                         "attributes.retrieval": _docs(i, range(5))}),
             _span(i, 3, 0, "RERANKER", {"attributes.reranker": {"output_documents": _docs(i, range(3))["documents"]}}),
             _span(i, 4, 0, "LLM", {"attributes.input": {"value": question}, "attributes.output": {"value": answer}})]
    spans += [_span(i, n, 0, "TOOL" if n % 2 else "CHAIN", {"attributes.input": {"value": f"step {n}"}})
              for n in range(5, 10)]
    return spans


def rows(traces: int) -> list[dict[str, Any]]:
    """Every span, the spans of 8 traces at a time interleaved."""
    out = []
    for start in range(0, traces, 8):
        group = [trace_spans(i) for i in range(start, min(start + 8, traces))]
        for n in range(10):
            out += [g[n] for g in group]
    return out


def write_files(base: Path, traces: int) -> dict[str, Path]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    spans = rows(traces)
    jsonl = base / "spans.jsonl"
    with jsonl.open("w", encoding="utf-8") as fh:
        for r in spans:
            fh.write(json.dumps({k: (v.isoformat() if isinstance(v, datetime) else v) for k, v in r.items()}) + "\n")
    parquet = base / "spans.parquet"
    columns = list(dict.fromkeys(k for r in spans for k in r))  # from_pylist would take the first row's keys
    pq.write_table(pa.Table.from_pydict({c: [r.get(c) for r in spans] for c in columns}), parquet)
    return {"jsonl": jsonl, "parquet": parquet}


#: The child: the CLI's own main(), then its peak resident set size (KiB on Linux).
CHILD = ("import resource, sys\nfrom playground.cli import main\ncode = main(sys.argv[1:])\n"
         "u = resource.getrusage(resource.RUSAGE_SELF)\n"
         "print('peak_kib', u.ru_maxrss, u.ru_utime + u.ru_stime)\nsys.exit(code)")


def run_import(path: Path, db: Path) -> tuple[float, float, float, str]:
    """``(wall seconds, CPU seconds, peak RSS MiB, first stdout line)`` of one ``import traces`` in a fresh process."""
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", CHILD, "import", "traces", str(path), "--dataset", "bench",
                           "--db", str(db)], env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - t0
    if done.returncode:
        raise SystemExit(f"import failed: {done.stderr}")
    lines = done.stdout.splitlines()
    _, kib, cpu = lines[-1].split()
    return seconds, float(cpu), int(kib) / 1024, lines[0]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--traces", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    print(describe())
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        files = write_files(base, args.traces)
        for fmt, path in files.items():
            times, cpus, peaks = [], [], []
            line = ""
            for r in range(args.repeat):
                seconds, cpu, peak, line = run_import(path, base / f"{fmt}-{r}.db")
                times.append(seconds)
                cpus.append(cpu)
                peaks.append(peak)
            med = statistics.median(times)
            good = max(times) <= TIME_TARGET_S and max(peaks) <= MEMORY_TARGET_MIB
            ok = ok and good
            print(f"{fmt:7} {args.traces * 10:,} spans ({args.traces:,} traces, {path.stat().st_size / 2**20:.0f} "
                  f"MiB): import median {med:.2f} s, range {min(times):.2f}–{max(times):.2f} s over {args.repeat} "
                  f"runs (CPU time median {statistics.median(cpus):.2f} s, range {min(cpus):.2f}–"
                  f"{max(cpus):.2f} s; "
                  f"load {os.getloadavg()[0]:.1f}); peak RSS median {statistics.median(peaks):.0f} MiB, "
                  f"largest {max(peaks):.0f} MiB; "
                  f"targets ≤ {TIME_TARGET_S:.0f} s, ≤ {MEMORY_TARGET_MIB} MiB: "
                  f"{'OK' if good else 'OVER'}\n  {line}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
