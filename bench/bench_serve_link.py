"""Benchmark: how long after ``playground serve`` starts the link is given, and the pool is full (issue 44.2).

Each run starts ``playground serve --db labels.db --class-size N`` in a fresh temporary folder (a store made by
``playground labels init`` first, the shipped data, loopback, a free port) and times, from the start of the
command, the lines it prints:

* ``link``: ``playground: ready: give out the link now`` (the first pooled kernel has built its page);
* ``full``: ``playground: pool full: N of N kernels ready`` (every pooled kernel has built its page);

then stops the server (SIGTERM).  The figures are the median and the range over ``--runs`` runs, with the
machine's load before each run (the 2-core machine is shared: say how loaded it was).

Run ``python bench/bench_serve_link.py [--class-size 30] [--runs 3]``.
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
for p in (ROOT, ROOT / "tests"):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

from machine import describe  # noqa: E402  (bench/machine.py)

LINK = "playground: ready: give out the link now"


def one_run(class_size: int, timeout: float) -> tuple[float | None, float | None, str]:
    """Seconds to the link and to a full pool (None: not seen within ``timeout``), and the load before."""
    from serve_process import playground, serving

    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        made = playground(folder, "labels", "init", "--db", "labels.db")
        if made.returncode != 0:
            raise SystemExit(made.stderr)
        full_line = f"playground: pool full: {class_size} of {class_size} kernels ready"
        link = full = None
        t0 = time.monotonic()
        with serving(folder, "--db", "labels.db", "--class-size", str(class_size)) as srv:
            while time.monotonic() - t0 < timeout and srv.proc.poll() is None:
                text = srv.text()
                if link is None and LINK in text:
                    link = time.monotonic() - t0
                if full_line in text:
                    full = time.monotonic() - t0
                    break
                time.sleep(0.1)
    return link, full, load


def _summary(name: str, xs: list[float | None]) -> str:
    seen = [x for x in xs if x is not None]
    if not seen:
        return f"{name}: not seen"
    return (f"{name}: median {statistics.median(seen):.1f} s, range {min(seen):.1f}-{max(seen):.1f} s "
            f"({len(seen)} of {len(xs)} runs)")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--class-size", type=int, default=30, help="playground serve --class-size (default 30)")
    ap.add_argument("--runs", type=int, default=3, help="runs (default 3)")
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds to wait for a full pool (default 600)")
    args = ap.parse_args(argv)
    print(f"machine: {describe()}")
    links: list[float | None] = []
    fulls: list[float | None] = []
    for i in range(args.runs):
        link, full, load = one_run(args.class_size, args.timeout)
        links.append(link)
        fulls.append(full)
        shown = [f"{x:.1f} s" if x is not None else "not seen" for x in (link, full)]
        print(f"run {i + 1}: link {shown[0]}, pool of {args.class_size} full {shown[1]} (load before: {load})",
              flush=True)
    print(_summary("link given", links))
    print(_summary(f"pool of {args.class_size} full", fulls))
    return 0 if all(x is not None for x in links) else 1


if __name__ == "__main__":
    raise SystemExit(main())
