#!/usr/bin/env python
"""Benchmark: :func:`playground.files.write_atomic` (temporary beside the target, fsync, rename).

For a 1 KB and a 1 MB file (a checkpoint, a notebook cache document), each
written ``--repeat`` times over the same target in a temporary folder: the
time of ``write_atomic`` and, for comparison, of the notebook cache's former
write (``tempfile.mkstemp``, no fsync, rename).  The difference is the fsync
the cache now pays.  Median and range in milliseconds.

Run ``python bench/bench_files.py [--repeat N] [--dir FOLDER]`` (the folder
decides the file system, hence the fsync cost; default a temporary one).
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from machine import describe  # noqa: E402  (bench/machine.py)

from playground.files import write_atomic  # noqa: E402


def mkstemp_no_fsync(path: Path, data: bytes) -> None:
    """The notebook cache's write before ``playground.files``."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".harness-", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def timed_ms(fn, path: Path, data: bytes, repeat: int) -> list[float]:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn(path, data)
        times.append((time.perf_counter() - t0) * 1000)
    return times


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=50, help="writes per size and way (default 50)")
    ap.add_argument("--dir", type=Path, default=None, help="folder to write in (default: a temporary one)")
    args = ap.parse_args(argv)
    print(describe())
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        print(f"folder {tmp}, {args.repeat} writes each")
        for label, size in (("1 KB", 1024), ("1 MB", 1024 * 1024)):
            data = b"x" * size
            for name, fn in (("write_atomic", write_atomic), ("mkstemp, no fsync", mkstemp_no_fsync)):
                t = timed_ms(fn, Path(tmp) / "target.json", data, args.repeat)
                print(f"{label:>5} {name:<18} median {statistics.median(t):7.3f} ms  range "
                      f"{min(t):7.3f}–{max(t):7.3f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
