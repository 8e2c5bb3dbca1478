#!/usr/bin/env python
"""Benchmark: how long a playground page takes to show its first control, from the pool and cold, and why.

Two parts:

1. **Where a kernel's time and memory go** (on by default, ``--no-profile``
   skips it): a fresh Python imports ipykernel (every kernel pays it), then
   runs what the notebook's first cell runs (``from playground.ui import
   launch; launch()``, with ``?annotator=``) on a new store and a harness
   cache filled by a first such process (as the pool's first kernel does),
   and prints each step's seconds and resident memory added (psutil RSS),
   the RSS with the page built and which of statsmodels, scipy, pandas,
   matplotlib, bm25s, numba the page loaded (none, since issue 13.2); then
   what those would add (statsmodels' inter-rater module, matplotlib's
   figure and Agg backend, bm25s) for comparison.
2. **Page open** (``--pages N``, default 5 each): ``playground serve`` on the
   shipped data, Debian's Chromium opening ``/?annotator=...`` until the
   first label control is visible (as tests/browser_fixtures.open_app):
   *pool* — ``--preheat 1``, waiting between pages for the pool to refill;
   *cold* — ``--preheat 0``.  Prints median and range, and the RSS of the
   page's kernel.

3. **Pages opened together** (``--together N``, default 10; 0 skips): the
   server with ``make serve``'s default pool (from the free memory,
   :func:`playground.serving.sizing.plan`), once every pooled kernel is
   ready, N Chromium contexts open ``/?annotator=together-NN`` at the same
   moment (Playwright's async API); prints the median and the slowest page's
   time to first control.

Goals (issue 13): pool ≤ 2 s p50, cold ≤ 5 s, ten at once all interactive
within 15 s, ≤ 150 MiB per kernel.

Run ``python bench/bench_page.py [--pages N] [--together N] [--no-profile] [--no-pages]``.
"""
from __future__ import annotations

import argparse
import asyncio
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
app = []
def page():
    from playground.ui import launch
    app.append(launch(display=False))
step("launch(): data, store, harness results (cache), widgets", page)
assert type(app[0]).__name__ == "PlaygroundApp", app[0]
HEAVY = ("statsmodels", "scipy", "pandas", "matplotlib", "bm25s", "numba")
loaded = [m for m in HEAVY if m in sys.modules]
rss_page = me.memory_info().rss / 2**20
step("(not on the page) statsmodels.stats.inter_rater: scipy, pandas",
     lambda: __import__("statsmodels.stats.inter_rater"))
def mpl():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.figure, matplotlib.backends.backend_agg  # noqa: F401
step("(not on the page) matplotlib figure + Agg", mpl)
step("(not on the page) bm25s: numba", lambda: __import__("bm25s"))
print(json.dumps({"rows": rows, "rss_page": rss_page, "loaded": loaded,
                  "harness": app[0].session.harness_source}))
"""


def profile(db: Path, cache: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PLAYGROUND_DB": str(db), "MPLBACKEND": "Agg",
           "PLAYGROUND_CACHE": str(cache), "QUERY_STRING": "annotator=bench-profile"}
    for _ in range(2):  # the first fills the harness cache, as the pool's first kernel does
        out = subprocess.run([sys.executable, "-c", PROFILE], env=env, capture_output=True, text=True, cwd=ROOT)
        if out.returncode:
            raise SystemExit(f"profile failed: {out.stderr.strip().splitlines()[-1:]}")
    data = json.loads(out.stdout.strip().splitlines()[-1])
    print("where the first cell's time and memory go (one fresh process, harness results "
          f"{data['harness']!r} from the cache, in this order):")
    print(f"  {'group':60s} {'import s':>9s} {'+RSS MiB':>9s}")
    for name, secs, mib in data["rows"]:
        print(f"  {name:60s} {secs:9.2f} {mib:9.1f}")
    print(f"  RSS with the page built: {data['rss_page']:.1f} MiB; heavy modules loaded by the page: "
          f"{', '.join(data['loaded']) or 'none'}")


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


async def _open_together(url: str, n: int) -> list[float]:
    from browser_fixtures import CHROMIUM, CHROMIUM_ARGS
    from playwright.async_api import async_playwright

    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        pages = []
        for _ in range(n):
            context = await browser.new_context()
            pages.append(await context.new_page())

        async def one(i: int) -> float:
            page = pages[i]
            t0 = time.monotonic()
            await page.goto(f"{url}?annotator=together-{i:02d}", timeout=120_000)
            await page.locator(".pg-app .pg-rates").wait_for(state="visible", timeout=120_000)
            await page.locator(".pg-claim-0-supported").first.wait_for(state="visible", timeout=120_000)
            return time.monotonic() - t0

        times = await asyncio.gather(*(one(i) for i in range(n)))
        for page in pages:
            await page.close(run_before_unload=True)
        await browser.close()
    return list(times)


def together(n: int) -> None:
    from browser_fixtures import CHROMIUM, start_server, stop_server
    from serve_clients import status, wait_until

    from playground.serving.sizing import plan

    if not CHROMIUM.exists():
        print(f"pages together: skipped (no Chromium at {CHROMIUM})")
        return
    pool = plan().pool
    with tempfile.TemporaryDirectory() as tmp:
        srv = start_server(Path(tmp), "--preheat", str(pool), shipped=True)
        try:
            wait_until(lambda: status(srv.url)["pool_ready"] == pool, 600)
            wait_until(lambda: srv.log_tail(10**7).count(READY) >= pool, 600)
            time.sleep(1.0)
            times = asyncio.run(_open_together(srv.url, n))
        finally:
            stop_server(srv.proc)
    print(f"{n} pages opened together (pool of {pool}, make serve's default here): first control median "
          f"{statistics.median(times):.2f} s, slowest {max(times):.2f} s (goal: all within 15 s)")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pages", type=int, default=5, help="pages to open from the pool and cold (default 5 each)")
    ap.add_argument("--no-profile", action="store_true", help="skip the import and memory profile")
    ap.add_argument("--no-pages", action="store_true", help="skip the page-open timing (needs Chromium)")
    ap.add_argument("--together", type=int, default=10, help="pages opened at the same moment (default 10; 0 skips)")
    args = ap.parse_args()
    print(f"machine: {describe()}")
    if not args.no_profile:
        with tempfile.TemporaryDirectory() as tmp:
            db = Path(tmp) / "labels.db"
            subprocess.run([sys.executable, "-m", "playground", "labels", "init", "--db", str(db)],
                           env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, check=True)
            profile(db, Path(tmp) / "cache")
    if not args.no_pages:
        pages(args.pages)
        if args.together:
            together(args.together)
    return 0


if __name__ == "__main__":
    sys.exit(main())
