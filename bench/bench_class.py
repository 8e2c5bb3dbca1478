#!/usr/bin/env python
"""Benchmark: a class of simulated students on one ``playground serve`` (issue 13.3).

Each student is a client that speaks what the page's JavaScript speaks, without
a browser (30 Chromium tabs would measure Chromium on a 2-core machine, not the
server): it GETs ``/?annotator=student-NN`` (the HTML with its kernel id),
opens the kernel's websocket (``v1.kernel.websocket.jupyter.org``), asks the
widget manager for every widget's state (``comm_open`` of
``jupyter.widget.control``, then ``request_states``) — the page is
*interactive* once that answer is in — and then, about every ``--every``
seconds, sets one of the page's yes/no toggles (a ``comm_msg`` ``update`` of
the ToggleButtons' ``index``, exactly what a click sends).  *Toggle → new
figures* is the time from sending the update until the kernel reports idle
after it (every figure the toggle changes has then been sent).  When the time
is up each student closes its websocket and sends the page's shutdown beacon,
as a closing tab does.

Printed: page open (GET → interactive) p50/p95, toggle → new figures p50/p95,
peak memory of the server and its kernels (psutil RSS, sampled every second),
labels lost (for each student, the last value it set on each toggle, compared
with its labels in the store: yes/no counts must match; must be 0), kernels
left once everyone has gone (must come back to the pool size).

The server is started as an instructor expecting the class would start it: ``--class-size`` the number of
students (``playground serve`` then plans its pool for them, as far as the memory allows:
:mod:`playground.serving.sizing`).  Students arrive over ``--ramp`` seconds (default 60); choices (which
toggle, which value, when) come from ``playground.sampling.uniform`` with ``--seed``.

A page counts as *rendered* only if its HTML carries the page's widget view
(the ``application/vnd.jupyter.widget-view+json`` output, whose model is then
among the kernel's widget states): a page sent without it is what a browser
shows blank, however well its kernel answers.  Blank pages are counted and
printed.  ``--at-once`` is the "everyone at once, right after start" scenario:
the students arrive within one second of ``serve`` saying its pool is full
(``playground: pool full: N of N kernels ready``; since 2026-12-07 the link
itself comes earlier, at the first page built, so the class is sent at the
full pool to stay comparable with the figures before that day).

With ``playground serve``'s waiting line (``--open-slots``, default 2) a
student who finds no kernel ready gets a page that says its place in words
("you are 12th in line; about 40 s"); the client waits as that page does
(asking ``/playground/api/queue``) and the report gives, per place, the
seconds to interactive.

A label is *acknowledged* when the page's kernel reported idle after the
toggle and did not set the toggle back (a refused write — the store busy
beyond its retries — sets it back to what is stored and says "not saved" on
the page; those are counted as refused, not as lost).

Run ``python bench/bench_class.py [--students 30] [--minutes 2] [--every 5] [--at-once]``.
"""
from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
for p in (ROOT, ROOT / "tests"):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

from machine import describe  # noqa: E402  (bench/machine.py)

from playground.sampling import uniform  # noqa: E402

#: What the page's kernel logs once its session is loaded (a preheated kernel then waits for its request).
READY = "playground: session ready"


def _msg(msg_type: str, content: dict, session: str, metadata: dict | None = None) -> dict:
    return {"header": {"msg_id": uuid.uuid4().hex, "msg_type": msg_type, "username": "student", "session": session,
                       "date": "2026-01-01T00:00:00Z", "version": "5.3"},
            "parent_header": {}, "metadata": metadata or {}, "content": content}


def _read_v1(frame: bytes) -> tuple[str, dict, dict, dict, list[bytes]]:
    from playground.serving.guards import deserialize_v1

    channel, parts = deserialize_v1(frame)
    header, parent, _meta, content = (json.loads(bytes(p)) for p in parts[:4])
    return channel, header, parent, content, [bytes(p) for p in parts[4:]]


@dataclass
class Student:
    name: str
    seed: int
    open_s: float | None = None
    toggles_ms: list[float] = field(default_factory=list)
    #: per toggle: (before the kernel took it, the kernel's handler, after the kernel: relay) in ms
    phases_ms: list[tuple[float, float, float]] = field(default_factory=list)
    #: per toggle: messages and bytes the kernel sent on the toggle's behalf (its iopub replies)
    replies: list[tuple[int, int]] = field(default_factory=list)
    last: dict[str, int] = field(default_factory=dict)  # toggle model id -> index set (0 yes, 1 no)
    error: str | None = None
    blank: bool = False  # the page's HTML came without its widget view, and the retries did not help
    sent_blank: int = 0  # answers without the widget view (the page then says so and reloads, as here)
    refused: int = 0  # toggles the kernel set back (not saved, and the page said so)
    place: int | None = None  # the place the waiting line gave (None: opened at once)
    said_s: float | None = None  # seconds until the first answer (the page, or the line's words)


#: The page's widget view in its HTML (the cell output Voila embeds; model ids are hex).
WIDGET_VIEW = re.compile(r'application/vnd\.jupyter\.widget-view\+json"\s*:\s*\{[^}]*"model_id"\s*:\s*"([0-9a-f]+)"')


#: Reloads of a page sent without its widgets, as the page's guard script makes them (playground.serving.page).
RETRIES = 3


def page_view(html: str) -> str | None:
    """The model id of the widget view a page's HTML carries, or None (the page would show blank)."""
    m = WIDGET_VIEW.search(html)
    return m.group(1) if m else None


def _open(base: str, st: Student) -> tuple[Any, str] | None:
    """GET the page as a browser would (reloading a page sent without widgets, as its guard does); the page and
    its widget view's model id, or None with ``st.error`` set."""
    from serve_clients import open_page

    for attempt in range(RETRIES + 1):
        page = open_page(base, f"annotator={st.name}", timeout=600)
        if attempt == 0:
            st.place, st.said_s = page.place, page.said_s
        if page.status != 200 or not page.kernel_id:
            st.error = f"page answered {page.status}"
            return None
        view = page_view(page.html)
        if view is not None:
            return page, view
        st.sent_blank += 1
        time.sleep(min(60, 5 * 2**attempt))
    st.blank = True
    st.error = "blank page: its HTML came without the widget view, after every retry"
    return None


def _toggles(ws: Any, session: str, view: str, st: Student) -> list[str]:
    """Ask for every widget's state (as the page does); the toggles' model ids ([] with ``st.error`` set)."""
    from serve_clients import v1_frame

    control = uuid.uuid4().hex
    ws.send_binary(v1_frame("shell", _msg("comm_open", {"comm_id": control, "target_name": "jupyter.widget.control",
                                                        "data": {}}, session, {"version": "1.0.0"})))
    ask = _msg("comm_msg", {"comm_id": control, "data": {"method": "request_states"}}, session)
    ws.send_binary(v1_frame("shell", ask))
    while True:
        frame = ws.recv()
        if not isinstance(frame, bytes):
            continue
        _ch, header, _parent, content, _bufs = _read_v1(frame)
        data = content.get("data", {}) if header["msg_type"] == "comm_msg" else {}
        if data.get("method") != "update_states":
            continue
        if view not in data["states"]:
            st.blank = True
            st.error = "blank page: its widget view is not among the kernel's widgets"
            return []
        toggles = sorted(mid for mid, s in data["states"].items()
                         if "pg-toggle" in s.get("state", {}).get("_dom_classes", ()))
        if not toggles:
            st.error = "no toggles on the page"
        return toggles


def _stamp(header: dict) -> float:
    """A kernel message's ``date`` (set by the kernel when it made the message) as a Unix time."""
    from datetime import datetime

    return datetime.fromisoformat(str(header["date"]).replace("Z", "+00:00")).timestamp()


def _toggle(ws: Any, session: str, model: str, index: int, st: Student) -> int | None:
    """Set a toggle as a click does and wait for the kernel to be idle after it; the value the page then shows
    (``index``, or what is stored when the kernel set it back).  Appends the toggle's phases to ``st``: from
    sending to the kernel's ``busy`` (the server's relay in, and the kernel's queue), ``busy`` → ``idle`` (the
    kernel's handler: the write, the recompute, the widget messages), ``idle`` → received (the relay out)."""
    from serve_clients import v1_frame

    update = _msg("comm_msg", {"comm_id": model, "data": {"method": "update", "state": {"index": index},
                                                          "buffer_paths": []}}, session)
    sent = time.time()
    ws.send_binary(v1_frame("shell", update))
    shown: int | None = index
    busy, count, size = sent, 0, 0
    while True:
        frame = ws.recv()
        if not isinstance(frame, bytes):
            continue
        _ch, header, parent, content, _bufs = _read_v1(frame)
        mine = parent.get("msg_id") == update["header"]["msg_id"]
        if mine and header["msg_type"] != "status":
            count, size = count + 1, size + len(frame)
        data = content.get("data", {}) if header["msg_type"] == "comm_msg" else {}
        if content.get("comm_id") == model and data.get("method") == "update" and "index" in data.get("state", {}):
            shown = data["state"]["index"]  # the kernel set the toggle to what is stored
        if mine and header["msg_type"] == "status" and content.get("execution_state") == "busy":
            busy = _stamp(header)
        if mine and header["msg_type"] == "status" and content.get("execution_state") == "idle":
            idle, now = _stamp(header), time.time()
            st.phases_ms.append((1000 * (busy - sent), 1000 * (idle - busy), 1000 * (now - idle)))
            st.replies.append((count, size))
            return shown


def _run_student(base: str, st: Student, until: float, every: float) -> None:
    from serve_clients import kernel_socket

    t0 = time.monotonic()
    opened = _open(base, st)
    if opened is None:
        return
    page, view = opened
    ws = kernel_socket(page, timeout=120)
    session = uuid.uuid4().hex
    toggles = _toggles(ws, session, view, st)
    if not toggles:
        return
    st.open_s = time.monotonic() - t0
    i = 0
    while time.monotonic() < until:
        time.sleep(every * (0.5 + uniform(st.seed, f"{st.name}-wait-{i}")))
        if time.monotonic() >= until:
            break
        model = toggles[int(uniform(st.seed, f"{st.name}-which-{i}") * len(toggles))]
        index = 0 if uniform(st.seed, f"{st.name}-value-{i}") < 0.6 else 1
        sent = time.monotonic()
        shown = _toggle(ws, session, model, index, st)
        st.toggles_ms.append(1000 * (time.monotonic() - sent))
        st.refused += shown != index
        if shown is None:
            st.last.pop(model, None)
        else:
            st.last[model] = shown
        i += 1
    ws.close()
    import urllib.parse
    import urllib.request

    req = urllib.request.Request(f"{base}voila/api/shutdown/{page.kernel_id}", method="POST",
                                 data=urllib.parse.urlencode({"_xsrf": page.xsrf() or ""}).encode(),
                                 headers={"Cookie": page.cookie_header()})
    urllib.request.urlopen(req, timeout=60).read()


def student(base: str, st: Student, until: float, every: float) -> None:
    try:
        _run_student(base, st, until, every)
    except Exception as exc:  # reported in the table, not raised: the others go on
        st.error = f"{type(exc).__name__}: {exc}"


def _memory_sampler(pid: int, stop: threading.Event, peak: list[float]) -> None:
    import psutil

    root = psutil.Process(pid)
    while not stop.is_set():
        try:
            procs = [root, *root.children(recursive=True)]
            total = sum(p.memory_info().rss for p in procs if p.is_running())
            peak[0] = max(peak[0], total / 2**30)
            peak[1] = max(peak[1], sum(1 for p in procs if "ipykernel" in " ".join(p.cmdline())))
        except Exception:
            pass
        stop.wait(1.0)


def _status_sampler(url: str, t0: float, stop: threading.Event, seen: list[tuple[float, int, int]]) -> None:
    """Every 5 s: (seconds since the class began, preheated kernels ready, kernels) from the server's status."""
    from serve_clients import status

    while not stop.is_set():
        try:
            st = status(url)
            seen.append((time.monotonic() - t0, int(st["pool_ready"]), int(st["kernels"])))
        except Exception:
            pass
        stop.wait(5.0)


def server_cpu_s(pid: int) -> float:
    """CPU seconds (user + system) the Voila server process (``python -m playground.serving``) has used so far."""
    import psutil

    for p in psutil.Process(pid).children(recursive=True):
        try:
            if "playground.serving" in " ".join(p.cmdline()):
                t = p.cpu_times()
                return float(t.user + t.system)
        except psutil.Error:
            continue
    return float("nan")


def _cpu_until_open(pid: int, students: list[Student], until: float) -> float:
    """The server's CPU seconds (:func:`server_cpu_s`) once every student's page is open or has failed (or at
    ``until``): with the CPU when the class came, what opening the pages cost the server."""
    while time.monotonic() < until and any(s.open_s is None and s.error is None for s in students):
        time.sleep(0.2)
    return server_cpu_s(pid)


def _pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))] if xs else float("nan")


def lost_labels(db: Path, students: list[Student]) -> int:
    """Per student: |yes set − yes stored| + |no set − no stored| over its labels in the store."""
    from playground.store import open_store

    lost = 0
    with open_store(str(db), create=False) as store:
        for st in students:
            stored = store.labels(annotator=st.name)
            yes_set = sum(1 for v in st.last.values() if v == 0)
            no_set = sum(1 for v in st.last.values() if v == 1)
            lost += abs(yes_set - sum(1 for s in stored if s.value == 1))
            lost += abs(no_set - sum(1 for s in stored if s.value == 0))
    return lost


def _arguments() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--students", type=int, default=30, help="simulated students (default 30)")
    ap.add_argument("--minutes", type=float, default=2.0, help="how long they label (default 2)")
    ap.add_argument("--every", type=float, default=5.0, help="seconds between a student's toggles, on average (5)")
    ap.add_argument("--ramp", type=float, default=60.0,
                    help="students arrive over this many seconds (default 60: a class sitting down)")
    ap.add_argument("--class-size", type=int, default=None,
                    help="playground serve --class-size: the class the pool is planned for (default: --students, as "
                         "an instructor expecting them would start it)")
    ap.add_argument("--preheat", type=int, default=None,
                    help="pool size (default: playground serve's, from the available memory)")
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--at-once", action="store_true",
                    help="everyone at once, right after start: the students arrive within one second of serve "
                         "giving out its link (--ramp is then 1)")
    ap.add_argument("--open-slots", type=int, default=2,
                    help="playground serve --open-slots: cold pages opened at once before the line (default 2, "
                         "serve's; 0: no line)")
    ap.add_argument("--keep-log", default=None, metavar="FILE", help="copy the server's log to FILE")
    args = ap.parse_args()
    if args.at_once:
        args.ramp = 1.0
    return args


def _run(args: argparse.Namespace) -> tuple[list[Student], dict[str, Any]]:
    """Start the server, let the class label, stop it; the students and what was measured around them."""
    from browser_fixtures import start_server, stop_server, wait_for_log
    from serve_clients import status, wait_until

    print(f"machine: {describe()}")
    with tempfile.TemporaryDirectory() as tmp:
        from playground.serving.sizing import plan

        class_size = args.class_size or args.students
        pool_size = plan(class_size=class_size).pool if args.preheat is None else args.preheat  # serve's default
        t_start = time.monotonic()
        srv = start_server(Path(tmp), "--class-size", str(class_size), "--preheat", str(pool_size),
                           "--unconnected-timeout", "120",
                           "--open-slots", str(args.open_slots), shipped=True)
        stop, peak = threading.Event(), [0.0, 0.0]
        sampler = threading.Thread(target=_memory_sampler, args=(srv.proc.pid, stop, peak), daemon=True)
        sampler.start()
        try:
            if args.at_once:  # the moment the pool is full (the link itself is given at the first page built)
                wait_for_log(srv.log, "playground: pool full" if pool_size else "playground: ready", 900)
                st0 = status(srv.url)
                print(f"server: link given out {time.monotonic() - t_start:.0f} s after start; pool "
                      f"{st0['pool_ready']} of {pool_size} ready, cap {st0['max_kernels']}: everyone arrives now")
            else:
                wait_until(lambda: status(srv.url)["pool_ready"] == pool_size, 600, 2.0)
                # a pooled kernel is in the pool once started; its page is computed ahead after that
                wait_until(lambda: srv.log_tail(10**7).count(READY) >= pool_size, 600, 2.0)
                print(f"server: pool {pool_size} ready for a class of {class_size}, "
                      f"cap {status(srv.url)['max_kernels']}")
            students = [Student(f"student-{i:02d}", args.seed) for i in range(args.students)]
            cpu_ready = server_cpu_s(srv.proc.pid)
            start = time.monotonic()
            seen: list[tuple[float, int, int]] = []
            threading.Thread(target=_status_sampler, args=(srv.url, start, stop, seen), daemon=True).start()
            until = start + args.ramp + 60 * args.minutes
            threads = []
            for i, st in enumerate(students):
                time.sleep(max(0.0, start + args.ramp * i / max(1, args.students) - time.monotonic()))
                t = threading.Thread(target=student, args=(srv.url, st, until, args.every), daemon=True)
                t.start()
                threads.append(t)
            cpu_open = _cpu_until_open(srv.proc.pid, students, until) - cpu_ready
            for t in threads:  # a student stuck past the end (a page that never came) is reported, not waited for
                t.join(timeout=max(1.0, until + 300 - time.monotonic()))
            for st, t in zip(students, threads, strict=True):
                if t.is_alive() and not st.error:
                    st.error = "still waiting at the end (page or toggle answer never came)"
            gone = time.monotonic()
            cpu_class = server_cpu_s(srv.proc.pid) - cpu_ready
            back = wait_until(lambda: status(srv.url)["kernels"] == pool_size, 300, 1.0)
            left = status(srv.url)["kernels"]
            settle = time.monotonic() - gone
        finally:
            stop.set()
            stop_server(srv.proc)
            log = srv.log_tail(10**8)
            if args.keep_log:
                Path(args.keep_log).write_text(log, encoding="utf-8")
        lost = lost_labels(srv.db, students)
    return students, {"pool": pool_size, "peak": peak, "log": log, "back": back, "left": left, "settle": settle,
                      "lost": lost, "seen": seen, "cpu": (cpu_ready, cpu_class, cpu_open)}


def _report(args: argparse.Namespace, students: list[Student], run: dict[str, Any]) -> int:
    """Print the figures; 0 when no label was lost, no page stayed blank, every student got on, the pool came back."""
    pool_size, peak, log, lost = run["pool"], run["peak"], run["log"], run["lost"]
    opens = [s.open_s for s in students if s.open_s is not None]
    toggles = [ms for s in students for ms in s.toggles_ms]
    errors = [f"{s.name}: {s.error}" for s in students if s.error]
    print(f"students: {args.students} over {args.ramp:.0f} s, labelling {args.minutes:g} min, one toggle every "
          f"~{args.every:g} s each")
    print(f"page open (GET → interactive): p50 {_pct(opens, 0.5):.2f} s, p95 {_pct(opens, 0.95):.2f} s, "
          f"max {max(opens, default=float('nan')):.2f} s (n={len(opens)})")
    by_arrival = [s.open_s for s in students[:pool_size] if s.open_s is not None]
    print(f"  the first {pool_size} (served from the pool): median {_pct(by_arrival, 0.5):.2f} s; "
          f"every student in arrival order: {' '.join(f'{s.open_s:.0f}' if s.open_s else '-' for s in students)}")
    print(f"toggle → new figures: p50 {_pct(toggles, 0.5):.0f} ms, p95 {_pct(toggles, 0.95):.0f} ms "
          f"(n={len(toggles)}; goal p95 ≤ 100 ms)")
    phases = [p for s in students for p in s.phases_ms]
    if phases:
        names = ("relay in + kernel queue", "kernel handler", "relay out")
        print("  where it goes, p50 / p95 ms: " + "; ".join(
            f"{name} {_pct([p[i] for p in phases], 0.5):.0f} / {_pct([p[i] for p in phases], 0.95):.0f}"
            for i, name in enumerate(names)))
        replies = [r for s in students for r in s.replies]
        print(f"  messages the kernel sent per toggle: median {statistics.median(r[0] for r in replies):.0f}, "
              f"max {max(r[0] for r in replies)}; bytes median {statistics.median(r[1] for r in replies):.0f}")
    print(f"server log: {log.count('Timeout waiting for IOPub output')} × 'Timeout waiting for IOPub output', "
          f"{log.count('a page was sent without its widgets')} × 'a page was sent without its widgets'")
    said = [s.said_s for s in students if s.said_s is not None]
    queued = [s for s in students if s.place is not None]
    print(f"first answer (the page, or its place in line in words): p50 {_pct(said, 0.5):.2f} s, "
          f"p95 {_pct(said, 0.95):.2f} s; {len(queued)} waited in line")
    if queued:
        print("  waiting line, place given → seconds to interactive: " + " ".join(
            f"{s.place}→{s.open_s:.0f}" if s.open_s else f"{s.place}→-" for s in queued))
    print(f"pages sent without their widgets (then reloaded, as the page does): {sum(s.sent_blank for s in students)}")
    blank = sum(1 for s in students if s.blank)
    print(f"pages that stayed blank (HTML without the widget view after {RETRIES} reloads): {blank} of "
          f"{args.students} (must be 0)")
    print(f"peak memory: {peak[0]:.2f} GiB (server + kernels), {peak[1]:.0f} kernels at most")
    print(f"server process CPU: {run['cpu'][0]:.1f} s until the class came (starting the pool), "
          f"{run['cpu'][1]:.1f} s during the class")
    print(f"server CPU from the first arrival until the last page was open: {run['cpu'][2]:.1f} s, "
          f"{run['cpu'][2] / max(1, len(opens)):.2f} s per page opened (toggles of the pages already open "
          "included; it grows with the load, less than wall times do)")
    print("pool ready / kernels, every 5 s from the first arrival: " + " ".join(
        f"{t:.0f}s:{ready}/{kernels}" for t, ready, kernels in run["seen"][::2]))
    print(f"labels lost: {lost} (must be 0); toggles refused and shown as not saved: "
          f"{sum(s.refused for s in students)}")
    print(f"kernels left after they went: {run['left']} (pool {pool_size}; {'back' if run['back'] else 'NOT back'} "
          f"in {run['settle']:.0f} s)")
    if errors:
        print("errors:\n  " + "\n  ".join(errors))
    print(f"toggles per student: median {statistics.median([len(s.toggles_ms) for s in students]):.0f}")
    return 0 if lost == 0 and blank == 0 and run["back"] and not errors else 1




def main() -> int:
    args = _arguments()
    students, run = _run(args)
    return _report(args, students, run)


if __name__ == "__main__":
    sys.exit(main())
