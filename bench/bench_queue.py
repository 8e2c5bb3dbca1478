#!/usr/bin/env python
"""Benchmark: is ``playground serve``'s waiting line fair to a class when one client holds many places (issue 43.3)?

Two runs on one fresh server each (``--open-slots 1 --max-per-address 0 --preheat 0``: what the docs advise
behind one NAT address, the issue's setting), all clients on loopback:

* **without**: ``--students`` (30) students arrive ``--spacing`` s apart (0.1 s) and wait as the waiting page
  does: they ask ``/playground/api/queue`` as told (``poll_ms``; 2 s, 0.5 s near the front) and GET the page
  as soon as their turn comes;
* **hostile**: the same, plus one client with ``--jars`` (6) cookie jars arriving just after the first student:
  each jar takes a place, asks as a page does and never comes for its turn; when a place is dropped it takes a
  new one.  It stops when the last student has their page.

A student's *wait* is the time from their first GET until the GET that opens their page starts (time in line);
*to page* until their page's HTML has arrived (a cold kernel's page built).  Printed per run: p50, p95 and max
of both, how many turns the jars were given and let pass, and the ratio of the students' p95 wait with the
jars to without (issue 43.3: at most 1.10).

The server logs each turn that passed on unclaimed with the seconds it held its slot; their sum is printed
too: what the jars cost the line, whatever the machine's load.  Runs alternate (without, hostile, without,
...; ``--rounds`` pairs) and the ratio is of the medians, because a shared machine's load drifts.

Run ``python bench/bench_queue.py [--students 30] [--jars 6] [--rounds 2] [--port 9310]`` (one server per run,
on the port and the next ones).  The machine is shared: quote the load average it prints.
"""
from __future__ import annotations

import argparse
import http.cookiejar
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
from machine import describe  # noqa: E402  (bench/machine.py)

WAITING = re.compile(r'id="pg-queue-line"[^>]*>You are (\d+)')
#: The server's line for a turn that passed on unclaimed, with the seconds it held its slot.
PASSED = re.compile(r"passed on unclaimed \([a-z ]+; it held the slot ([0-9.]+) s\)")
TOKEN = "bench-queue-class-key"


def _opener() -> urllib.request.OpenerDirector:
    return urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))


def _get(opener: urllib.request.OpenerDirector, url: str, timeout: float = 600.0) -> tuple[str, int]:
    try:
        with opener.open(url, timeout=timeout) as resp:
            return resp.read().decode("utf-8", "replace"), resp.status
    except urllib.error.HTTPError as exc:
        return exc.read().decode("utf-8", "replace"), exc.code


def student(base: str, name: str, out: dict[str, dict[str, Any]]) -> None:
    """One student, as the waiting page behaves: ask when told, GET the page at once on the turn."""
    opener, url = _opener(), f"{base}?token={TOKEN}&annotator={name}"
    t0 = time.monotonic()
    html, code = _get(opener, url)
    turn = t0
    place = WAITING.search(html)
    first = int(place.group(1)) if place else 0
    while place:
        poll = 2.0
        while True:
            time.sleep(poll)
            answer = json.loads(_get(opener, base + "playground/api/queue", 60)[0])
            if answer.get("turn") or not answer.get("known"):
                break
            poll = answer.get("poll_ms", 2000) / 1000
        turn = time.monotonic()
        html, code = _get(opener, url)
        place = WAITING.search(html)
    out[name] = {"wait": turn - t0, "page": time.monotonic() - t0, "code": code, "place": first,
                 "kernel": '"kernelId"' in html}


def jar(base: str, stop: threading.Event, tally: dict[str, int], lock: threading.Lock) -> None:
    """One cookie jar of the hostile client: takes a place, asks as a page does, never comes for its turn."""
    opener, url = _opener(), f"{base}?token={TOKEN}"
    while not stop.is_set():
        html, _code = _get(opener, url)
        with lock:
            tally["places" if WAITING.search(html) else "pages"] += 1
        if not WAITING.search(html):
            time.sleep(1.0)  # it got a page (the line was empty): it holds it, and tries for a place again
            continue
        poll, told = 2.0, False
        while not stop.is_set():
            time.sleep(poll)
            answer = json.loads(_get(opener, base + "playground/api/queue", 60)[0])
            if not answer.get("known"):
                break  # the place was dropped: take a new one
            if answer.get("turn") and not told:
                told = True
                with lock:
                    tally["turns"] += 1
            poll = answer.get("poll_ms", 2000) / 1000


def _serve(port: int, work: Path) -> tuple[subprocess.Popen, Path]:
    log = work / f"serve-{port}.log"
    env = {**os.environ, "PLAYGROUND_SERVE_TOKEN": TOKEN, "PYTHONPATH": str(ROOT)}
    env.pop("PLAYGROUND_INSTRUCTOR_TOKEN", None)
    cmd = [sys.executable, "-m", "playground", "serve", "--port", str(port), "--db", str(work / "labels.db"),
           "--preheat", "0", "--open-slots", "1", "--max-per-address", "0", "--max-kernels", "48",
           "--unconnected-timeout", "20", "--cull-idle", "0", "--links-file", str(work / "links.txt")]
    with open(log, "wb") as fh:
        proc = subprocess.Popen(cmd, stdout=fh, stderr=subprocess.STDOUT, env=env, cwd=str(ROOT),
                                start_new_session=True)
    end = time.monotonic() + 300
    while "playground: ready" not in log.read_text(errors="replace"):
        if proc.poll() is not None or time.monotonic() > end:
            raise SystemExit(f"the server did not start:\n{log.read_text(errors='replace')[-3000:]}")
        time.sleep(0.5)
    return proc, log


def _stop(proc: subprocess.Popen) -> None:
    import signal

    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)


def run(args: argparse.Namespace, port: int, jars: int) -> dict[str, Any]:
    """One run on a fresh server: the students' waits, the jars' tally."""
    with tempfile.TemporaryDirectory() as tmp:
        proc, log = _serve(port, Path(tmp))
        base = f"http://127.0.0.1:{port}/"
        out: dict[str, dict[str, Any]] = {}
        stop, lock = threading.Event(), threading.Lock()
        tally = {"places": 0, "pages": 0, "turns": 0}
        threads, hostile = [], []
        try:
            for i in range(args.students):
                threads.append(threading.Thread(target=student, args=(base, f"s{i:02d}", out), daemon=True))
                threads[-1].start()
                if i == 0:
                    time.sleep(0.05)
                    for _ in range(jars):
                        hostile.append(threading.Thread(target=jar, args=(base, stop, tally, lock), daemon=True))
                        hostile[-1].start()
                        time.sleep(0.01)
                time.sleep(args.spacing)
            for t in threads:
                t.join(timeout=1800)
        finally:
            stop.set()
            for t in hostile:
                t.join(timeout=10)
            _stop(proc)
            held = [float(m) for m in PASSED.findall(log.read_text(errors="replace"))]
    waits = sorted(s["wait"] for s in out.values())
    pages = sorted(s["page"] for s in out.values())
    return {"waits": waits, "pages": pages, "tally": tally, "opened": sum(s["kernel"] for s in out.values()),
            "n": len(out), "held": held}


def _pct(xs: list[float], q: float) -> float:
    return statistics.quantiles(xs, n=100, method="inclusive")[q - 1] if len(xs) > 1 else xs[0]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--students", type=int, default=30)
    ap.add_argument("--jars", type=int, default=6, help="the hostile client's cookie jars (default 6)")
    ap.add_argument("--spacing", type=float, default=0.1, help="seconds between two students' arrivals")
    ap.add_argument("--rounds", type=int, default=2,
                    help="pairs of runs, without and hostile alternating (the machine's load drifts; default 2)")
    ap.add_argument("--port", type=int, default=9310, help="the first run's port; each next run uses the next one")
    args = ap.parse_args()
    print(f"machine: {describe()}")
    p95: dict[str, list[float]] = {"without": [], "hostile": []}
    ok = True
    for k in range(2 * args.rounds):
        label, jars = ("without", 0) if k % 2 == 0 else ("hostile", args.jars)
        r = run(args, args.port + k, jars)
        w, p = r["waits"], r["pages"]
        p95[label].append(_pct(w, 95))
        ok = ok and r["opened"] == args.students
        print(f"{label:8s} {r['n']} students, {r['opened']} pages with a kernel; wait p50 {_pct(w, 50):.1f} s, "
              f"p95 {_pct(w, 95):.1f} s, max {w[-1]:.1f} s; to page p50 {_pct(p, 50):.1f} s, p95 {_pct(p, 95):.1f} s"
              + (f"; jars: {r['tally']['places']} places, {r['tally']['turns']} turns let pass, "
                 f"{r['tally']['pages']} pages; the slot held by unclaimed turns {sum(r['held']):.2f} s in all "
                 f"({len(r['held'])} turns)" if jars else ""), flush=True)
        print(f"  load after the run: {describe().rsplit('; ', 1)[-1]}", flush=True)
    ratio = statistics.median(p95["hostile"]) / statistics.median(p95["without"])
    without, hostile = statistics.median(p95["without"]), statistics.median(p95["hostile"])
    print(f"students' p95 wait, median of {args.rounds} runs each: without {without:.1f} s, hostile {hostile:.1f} s; "
          f"hostile / without {ratio:.3f} (issue 43.3: at most 1.10)")
    return 0 if ratio <= 1.10 and ok else 1


if __name__ == "__main__":
    sys.exit(main())
