#!/usr/bin/env python
"""Benchmark: how long a playground page takes to show its first control, from the pool and cold, and why.

Two parts:

1. **Where a kernel's time and memory go** (``--profile``, on by default): a
   fresh Python runs what the notebook's first cell runs (``from playground.ui
   import launch; launch()``) after importing, one group at a time, the
   modules it pulls, and prints each group's import seconds and resident
   memory added (psutil RSS).  The groups: ipykernel (every kernel pays it),
   statsmodels' inter-rater module (kappa; it pulls scipy and pandas),
   matplotlib's figure and Agg backend (the chart), bm25s (retrieval for the
   harness run), then the rest of ``launch()`` (data, harness, widgets).
2. **Page open** (``--pages N``, default 5 each): ``playground serve`` on the
   shipped data, Debian's Chromium opening ``/?annotator=...`` until the
   first label control is visible (as tests/browser_fixtures.open_app):
   *pool* — ``--preheat 1``, waiting between pages for the pool to refill;
   *cold* — ``--preheat 0``.  Prints median and range, and the RSS of the
   page's kernel.

Goals (issue 13): pool ≤ 2 s p50, cold ≤ 5 s, ≤ 150 MiB per kernel.

Run ``python bench/bench_page.py [--pages N] [--no-profile] [--no-pages]``.
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
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
for p in (ROOT, ROOT / "tests"):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

from machine import describe  # noqa: E402  (bench/machine.py)

#: What the page's kernel logs once its session is loaded (a preheated kernel then waits for its request).
READY = "playground: session ready"

PROFILE = r"""
import json, os, sys, time
import psutil
me = psutil.Process()
rows = []
def step(name, fn):
    rss0, t0 = me.memory_info().rss, time.perf_counter()
    fn()
    rows.append((name, time.perf_counter() - t0, (me.memory_info().rss - rss0) / 2**20))
step("python + psutil (baseline)", lambda: None)
step("ipykernel (every kernel)", lambda: __import__("ipykernel.ipkernel"))
step("statsmodels.stats.inter_rater (kappa; pulls scipy, pandas)",
     lambda: __import__("statsmodels.stats.inter_rater"))
def mpl():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.figure, matplotlib.backends.backend_agg  # noqa: F401
step("matplotlib figure + Agg (the chart)", mpl)
step("bm25s (retrieval for the harness run)", lambda: __import__("bm25s"))
step("ipywidgets", lambda: __import__("ipywidgets"))
def page():
    from playground.ui import launch
    launch(display=False)
step("the rest of launch(): data, harness run, store, widgets", page)
print(json.dumps({"rows": rows, "rss_mib": me.memory_info().rss / 2**20}))
"""


def profile(db: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PLAYGROUND_DB": str(db), "MPLBACKEND": "Agg"}
    out = subprocess.run([sys.executable, "-c", PROFILE], env=env, capture_output=True, text=True, check=True)
    data = json.loads(out.stdout.strip().splitlines()[-1])
    print("where the first cell's time and memory go (one fresh process, in this order):")
    print(f"  {'group':60s} {'import s':>9s} {'+RSS MiB':>9s}")
    for name, secs, mib in data["rows"]:
        print(f"  {name:60s} {secs:9.2f} {mib:9.1f}")
    total = sum(r[1] for r in data["rows"])
    print(f"  {'total':60s} {total:9.2f} {data['rss_mib']:9.1f} (RSS at the end)")


def _open_pages(kind: str, n: int, workdir: Path) -> tuple[list[float], list[float]]:
    import psutil
    from browser_fixtures import CHROMIUM, CHROMIUM_ARGS, open_app, start_server, stop_server
    from playwright.sync_api import sync_playwright
    from serve_clients import status, wait_until

    srv = start_server(workdir, "--preheat", "1" if kind == "pool" else "0", shipped=True)
    times, rss = [], []
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
            for i in range(n):
                if kind == "pool":  # wait until the pooled kernel has computed its page ahead
                    wait_until(lambda: status(srv.url)["pool_ready"] == 1, 300)
                    wait_until(lambda i=i: srv.log_tail(10**7).count(READY) >= i + 1, 300)
                    time.sleep(0.5)
                context = browser.new_context()
                page = context.new_page()
                page.set_default_timeout(120_000)
                times.append(open_app(page, f"{srv.url}?annotator=bench-{kind}-{i}"))
                kernels = [c for c in psutil.Process(srv.proc.pid).children(recursive=True)
                           if "ipykernel" in " ".join(c.cmdline())]
                rss.append(max(k.memory_info().rss for k in kernels) / 2**20)
                page.close(run_before_unload=True)
                context.close()
            browser.close()
    finally:
        stop_server(srv.proc)
    return times, rss


def pages(n: int) -> None:
    from browser_fixtures import CHROMIUM

    if not CHROMIUM.exists():
        print(f"page open: skipped (no Chromium at {CHROMIUM})")
        return
    for kind in ("pool", "cold"):
        with tempfile.TemporaryDirectory() as tmp:
            times, rss = _open_pages(kind, n, Path(tmp))
        print(f"page open to first control, {kind:4s} (n={n}): median {statistics.median(times):.2f} s, "
              f"range {min(times):.2f}–{max(times):.2f} s; kernel RSS median {statistics.median(rss):.0f} MiB, "
              f"max {max(rss):.0f} MiB")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pages", type=int, default=5, help="pages to open from the pool and cold (default 5 each)")
    ap.add_argument("--no-profile", action="store_true", help="skip the import and memory profile")
    ap.add_argument("--no-pages", action="store_true", help="skip the page-open timing (needs Chromium)")
    args = ap.parse_args()
    print(f"machine: {describe()}")
    if not args.no_profile:
        with tempfile.TemporaryDirectory() as tmp:
            db = Path(tmp) / "labels.db"
            subprocess.run([sys.executable, "-m", "playground", "labels", "stats", "--db", str(db)],
                           env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True)
            profile(db)
    if not args.no_pages:
        pages(args.pages)
    return 0


if __name__ == "__main__":
    sys.exit(main())
