#!/usr/bin/env python
"""Benchmark: ``playground import traces`` — its growth from 10^4 to 10^6 spans, and 100,000 spans in two formats.

**Growth** (the default; ``--spans 10000,100000,1000000``): two shapes of JSON Lines in Phoenix's
flat dataframe columns, each size imported by ``python -m playground import traces FILE --dataset
bench --db NEW`` in a fresh process (read, group, build the trees, assemble, validate, payload and
units, one store transaction):

* ``traces`` — N/10 traces of 10 spans (a root with the question and answer, a retriever with one
  document, eight bare CHAIN steps under the root), every 3 traces one session: N/10 samples;
* ``chain`` — one trace whose spans form one parent chain N deep (the root first, the retriever
  last, written deepest first): one sample; what took 914 s at 100,001 spans when every span was
  walked up to its root.

The child reports its own peak RSS (``ru_maxrss``), its CPU time (user + system, which the
machine's load does not inflate as it does the wall time) and the CPU time of ``main()`` alone
(without Python's start-up, about 0.3 s, which would flatten the growth).  The growth per doubling
of spans is ``2 ** b`` for the slope ``b`` of a least-squares line through (log N, log time) over
the sizes run, and between each pair of neighbouring sizes ``(t2 / t1) ** (1 / log2(N2 / N1))``;
the target (issue 43) is at most 2.2x per doubling, judged on main()'s CPU time.  Median and range
over ``--repeat`` runs (``--repeat-large`` at 10^6 spans and more).

**Two formats** (``--traces N``): N traces of 10 spans with 5 documents and a reranker keeping 3
(the columns of tests/fixtures/traces/phoenix_spans.*), written as JSON Lines and as Parquet, the
spans of 8 traces at a time interleaved; targets <= 20 s and <= 1 GiB at 10,000 traces.

Run ``python bench/bench_traces.py [--spans N,N,...] [--shapes traces,chain] [--repeat N]
[--repeat-large N]`` or ``python bench/bench_traces.py --traces 10000 [--repeat N]``.
"""
from __future__ import annotations

import argparse
import json
import math
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


#: The child: the CLI's own main(), then its peak resident set size (KiB on Linux), its CPU time and the
#: CPU time of main() alone (without Python's start-up and the CLI's imports).
CHILD = ("import resource, sys, time\nfrom playground.cli import main\nc0 = time.process_time()\n"
         "code = main(sys.argv[1:])\nc1 = time.process_time()\nu = resource.getrusage(resource.RUSAGE_SELF)\n"
         "print('peak_kib', u.ru_maxrss, u.ru_utime + u.ru_stime, c1 - c0)\nsys.exit(code)")


def run_import(path: Path, db: Path) -> tuple[float, float, float, str, float]:
    """``(wall seconds, CPU seconds, peak RSS MiB, first stdout line, CPU seconds of main() alone)`` of one
    ``import traces`` in a fresh process."""
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", CHILD, "import", "traces", str(path), "--dataset", "bench",
                           "--db", str(db)], env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - t0
    if done.returncode:
        raise SystemExit(f"import failed: {done.stderr}")
    lines = done.stdout.splitlines()
    _, kib, cpu, own = lines[-1].split()
    return seconds, float(cpu), int(kib) / 1024, lines[0], float(own)


GROWTH_TARGET = 2.2
SIZES = (10_000, 100_000, 1_000_000)


def _lean(trace: int, span: int, parent: int | None, kind: str = "CHAIN", **attrs: Any) -> str:
    """One span as a Phoenix dataframe row (flat columns), no more than the shapes need."""
    row = {"context.trace_id": f"{trace:032x}", "context.span_id": f"{span:016x}",
           "parent_id": None if parent is None else f"{parent:016x}", "span_kind": kind,
           "start_time": span, "end_time": span + 1, **{f"attributes.{k}": v for k, v in attrs.items()}}
    return json.dumps(row) + "\n"


def _root(trace: int, span: int) -> str:
    return _lean(trace, span, None, **{"input.value": f"How does the {phrase(trace, 0, 3)} work?",
                                       "output.value": f"The {phrase(trace, 1, 6)} applies.",
                                       "session.id": f"s{trace // 3}"})


def _retriever(trace: int, span: int, parent: int) -> str:
    return _lean(trace, span, parent, "RETRIEVER", **{"retrieval.documents": [
        {"document.id": f"kb-{trace % 500}", "document.content": f"The {phrase(trace, 2, 12)} applies.",
         "document.score": 0.5}]})


def write_shape(path: Path, shape: str, spans: int) -> Path:
    """``spans`` spans of ``shape`` (``traces`` or ``chain``, see the module docstring) as JSON Lines."""
    with path.open("w", encoding="utf-8") as fh:
        if shape == "chain":  # deepest first: every parent comes after its child
            fh.write(_retriever(0, spans - 1, spans - 2))
            for n in range(spans - 2, 0, -1):
                fh.write(_lean(0, n, n - 1))
            fh.write(_root(0, 0))
            return path
        for t in range(spans // 10):
            base = t * 10
            fh.write(_root(t, base))
            fh.write(_retriever(t, base + 1, base))
            for n in range(2, 10):
                fh.write(_lean(t, base + n, base))
    return path


def per_doubling(sizes: list[int], seconds: list[float]) -> tuple[float, list[float]]:
    """``(2 ** b, neighbours)``: ``b`` the least-squares slope of log time on log size; the factor per doubling
    between each pair of neighbouring sizes."""
    xs, ys = [math.log2(n) for n in sizes], [math.log2(t) for t in seconds]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sum((x - mx) ** 2 for x in xs)
    steps = [(seconds[i + 1] / seconds[i]) ** (1 / (xs[i + 1] - xs[i])) for i in range(len(sizes) - 1)]
    return 2 ** slope, steps


def growth(base: Path, shapes: list[str], sizes: list[int], repeat: int, repeat_large: int) -> bool:
    """The growth table: one line per shape and size, then the growth per doubling of each shape."""
    ok = True
    for shape in shapes:
        cpu_medians, wall_medians = [], []
        for n in sizes:
            path = write_shape(base / f"{shape}-{n}.jsonl", shape, n)
            runs = [run_import(path, base / f"{shape}-{n}-{r}.db") for r in range(repeat if n < 1_000_000
                                                                                  else repeat_large)]
            path.unlink()
            walls, cpus, peaks, owns = ([r[i] for r in runs] for i in (0, 1, 2, 4))
            wall_medians.append(statistics.median(walls))
            cpu_medians.append(statistics.median(owns))
            print(f"{shape:6} {n:>9,} spans: wall median {wall_medians[-1]:.2f} s ({min(walls):.2f}–{max(walls):.2f}), "
                  f"CPU median {statistics.median(cpus):.2f} s ({min(cpus):.2f}–{max(cpus):.2f}), of the import "
                  f"itself {cpu_medians[-1]:.2f} s ({min(owns):.2f}–{max(owns):.2f}) over {len(runs)} run(s); "
                  f"peak RSS {statistics.median(peaks):.0f} MiB (largest {max(peaks):.0f}); "
                  f"load {os.getloadavg()[0]:.1f}\n    {runs[0][3]}", flush=True)
        if len(sizes) > 1:
            fit, steps = per_doubling(sizes, cpu_medians)
            wall_fit, _ = per_doubling(sizes, wall_medians)
            good = fit <= GROWTH_TARGET and all(s <= GROWTH_TARGET for s in steps)
            ok = ok and good
            print(f"{shape:6} the import's own CPU time per doubling of spans: {fit:.2f}x by the log-log fit; "
                  f"between neighbouring sizes {', '.join(f'{s:.2f}x' for s in steps)} "
                  f"(wall time: {wall_fit:.2f}x by the fit); "
                  f"target ≤ {GROWTH_TARGET}x: {'OK' if good else 'OVER'}", flush=True)
    return ok


def formats(base: Path, traces: int, repeat: int) -> bool:
    """The two-format table at ``traces`` traces (see the module docstring)."""
    ok = True
    files = write_files(base, traces)
    for fmt, path in files.items():
        times, cpus, peaks = [], [], []
        line = ""
        for r in range(repeat):
            seconds, cpu, peak, line, _ = run_import(path, base / f"{fmt}-{r}.db")
            times.append(seconds)
            cpus.append(cpu)
            peaks.append(peak)
        med = statistics.median(times)
        good = max(times) <= TIME_TARGET_S and max(peaks) <= MEMORY_TARGET_MIB
        ok = ok and good
        print(f"{fmt:7} {traces * 10:,} spans ({traces:,} traces, {path.stat().st_size / 2**20:.0f} "
              f"MiB): import median {med:.2f} s, range {min(times):.2f}–{max(times):.2f} s over {repeat} "
              f"runs (CPU time median {statistics.median(cpus):.2f} s, range {min(cpus):.2f}–{max(cpus):.2f} s; "
              f"load {os.getloadavg()[0]:.1f}); peak RSS median {statistics.median(peaks):.0f} MiB, "
              f"largest {max(peaks):.0f} MiB; targets ≤ {TIME_TARGET_S:.0f} s, ≤ {MEMORY_TARGET_MIB} MiB: "
              f"{'OK' if good else 'OVER'}\n  {line}")
    return ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spans", default=",".join(str(n) for n in SIZES), metavar="N,N,...",
                        help="the sizes of the growth table (default 10000,100000,1000000)")
    parser.add_argument("--shapes", default="traces,chain", help="traces, chain or both (default both)")
    parser.add_argument("--traces", type=int, default=None, metavar="N",
                        help="instead: the two-format table at N traces of 10 spans (10000 in the docs)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per size under 10^6 spans (default 3)")
    parser.add_argument("--repeat-large", type=int, default=1, help="runs per size of 10^6 spans or more (default 1)")
    args = parser.parse_args(argv)
    print(describe(), flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        if args.traces is not None:
            ok = formats(Path(tmp), args.traces, args.repeat)
        else:
            sizes = sorted(int(n) for n in args.spans.split(","))
            ok = growth(Path(tmp), args.shapes.split(","), sizes, args.repeat, args.repeat_large)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
