#!/usr/bin/env python
"""Benchmark: where an import's memory goes, phase by phase (Linux: ``/proc/self/status``).

A RAGAS JSONL file of ``--samples`` samples (``bench_harness_scale.py``'s
generator: 5 contexts, a 3-sentence response, a 2-sentence reference; the
same bytes for the same seed) is imported with
:func:`playground.importers.load.import_dataset` into a new SQLite store, in
this process.  Each phase of the import is wrapped: the peak resident memory
(``VmHWM``) is reset before it (``/proc/self/clear_refs``: 5) and read after,
with the resident memory left (``VmRSS``) and the phase's wall time; the
import's peak is the highest of them.  Memory does not depend on the
machine's load, wall time does.  Also printed: the length of the stored text.

Run ``python bench/bench_import_memory.py [--samples 100000] [--seed 7]``.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
for where in (str(ROOT), str(ROOT / "bench")):
    if where not in sys.path:
        sys.path.insert(0, where)

from bench_harness_scale import write_dataset  # noqa: E402
from machine import describe  # noqa: E402


def memory() -> dict[str, int]:
    """``VmRSS`` and ``VmHWM`` in MiB."""
    out = {}
    with open("/proc/self/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith(("VmRSS", "VmHWM")):
                key, value = line.split(":")
                out[key] = int(value.split()[0]) // 1024
    return out


def reset_peak() -> None:
    with open("/proc/self/clear_refs", "w", encoding="ascii") as fh:
        fh.write("5")


def wrap(module: Any, name: str, label: str, rows: list[str]) -> None:
    """Replace ``module.name`` by a wrapper adding a table row for each call."""
    real: Callable[..., Any] = getattr(module, name)

    def measured(*args: Any, **kwargs: Any) -> Any:
        reset_peak()
        t0 = time.perf_counter()
        result = real(*args, **kwargs)
        m = memory()
        rows.append(f"| {label} | {m['VmHWM']} | {m['VmRSS']} | {time.perf_counter() - t0:.1f} |")
        return result

    setattr(module, name, measured)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    import playground.importers.core as core
    import playground.importers.load as load
    import playground.importers.ragas as ragas
    from playground.store import open_store

    rows: list[str] = []
    wrap(ragas, "read_rows", "reading the file into rows (`read_rows`)", rows)
    wrap(ragas, "parse_rows", "rows to samples (`parse_rows`; then the checks)", rows)
    wrap(load, "stream_payload", "samples to the canonical JSON text, units counted (`stream_payload`)", rows)
    wrap(load, "put_dataset_text", "the one transaction (`put_dataset_text`)", rows)
    print(f"machine: {describe()}")
    print(f"command: python bench/bench_import_memory.py --samples {args.samples} --seed {args.seed}")
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data.jsonl"
        write_dataset(data, args.samples, args.seed)
        reset_peak()
        start = memory()
        with open_store(Path(tmp) / "s.db") as store:
            result = load.import_dataset(data, "ragas", "bench", store)
            text = int(store._b.read(lambda cur: cur.scalar("SELECT length(payload) FROM datasets", ())))
        end = memory()
    print(f"{result.cases:,} samples, {result.units:,} units; stored text {text:,} characters "
          f"({text / 2**20:.0f} MiB); file format {core.FORMAT} v{core.FORMAT_VERSION}")
    print("| phase | peak RSS (MiB) | RSS after (MiB) | wall (s) |")
    print("| --- | ---: | ---: | ---: |")
    print(f"| start (interpreter, playground imported) | {start['VmHWM']} | {start['VmRSS']} | — |")
    print("\n".join(rows))
    peak = max(int(r.split("|")[2]) for r in rows)
    print(f"| whole import: the highest of the phases, and what is left at the end | {peak} | {end['VmRSS']} | — |")
    print(f"machine after: {describe()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
