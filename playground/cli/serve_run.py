"""The life of ``playground serve``'s server process: started so that it dies with ``serve``, watched until a
page is ready, its pool's filling shown, stopped.

* **Dies with serve** (issue 43.5): on Linux the Voila server is started with a parent-death signal
  (``prctl(PR_SET_PDEATHSIG, SIGTERM)`` in the child before it runs Python, :func:`die_with_parent`):
  whatever ends ``serve`` — Ctrl-C, a service manager's stop, ``kill -9`` — the server gets SIGTERM, stops
  listening and shuts its kernels down; a kernel whose server is gone anyway exits within a second
  (ipykernel's parent poller, ``JPY_PARENT_PID``).  The server stays in ``serve``'s process group, so a
  terminal's Ctrl-C reaches both.
* **Ready means a page was built** (issue 42.1): :func:`wait_until_ready` reads the kernels' reports
  (:mod:`playground.ui.readiness`) and the server's ``/playground/api/status``.  With a pool, ``serve`` is
  ready once a pooled kernel has opened the store and built its page; a kernel's "cannot start" stops
  ``serve`` with that reason before any link is given.  With no pool there is no kernel to ask: the server
  answering is ready (``serve`` has opened the same store itself, at the same absolute path).
* **The link early, the pool shown** (issue 44.2): the link is given at the first ready page; meanwhile
  and after, :class:`PoolProgress` prints ``preparing: k of N kernels ready`` as the pool fills (at most
  every :data:`PROGRESS_EVERY_S` seconds, only when it grew) and ``pool full`` when it is.  A student who
  comes before a kernel is ready waits in the server's waiting line.
"""
from __future__ import annotations

import contextlib
import json
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["PROGRESS_EVERY_S", "READY_WAIT_S", "PoolProgress", "Readiness", "built", "die_with_parent", "follow_pool",
           "read_reports", "start_server", "status_reader", "stop_server", "wait_until_ready"]

#: How long ``serve`` waits for the first page before it gives up and stops (seconds).
READY_WAIT_S = 600.0
#: Least seconds between two "preparing" lines.
PROGRESS_EVERY_S = 5.0
#: ``prctl`` option: the signal a process gets when its parent dies (linux/prctl.h).
PR_SET_PDEATHSIG = 1


def die_with_parent(parent_pid: int, sig: int = signal.SIGTERM) -> Callable[[], None]:
    """A ``preexec_fn``: ask Linux to send ``sig`` to the child when its parent dies, and send it at once if
    the parent (``parent_pid``) died before the request was made.  Elsewhere than Linux: nothing."""
    def preexec() -> None:
        import ctypes
        import os

        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(PR_SET_PDEATHSIG, int(sig), 0, 0, 0) != 0:
            return  # no parent-death signal here: SIGTERM from serve's own handlers still stops the server
        if os.getppid() != parent_pid:
            os.kill(os.getpid(), int(sig))

    return preexec


def start_server(cmd: list[str], env: dict[str, str]) -> subprocess.Popen[bytes]:
    """Start the server (``cmd``, ``env``) in this process group, dying with this process on Linux."""
    import os

    preexec = die_with_parent(os.getpid()) if sys.platform.startswith("linux") else None
    return subprocess.Popen(cmd, env=env, preexec_fn=preexec)  # no thread runs yet in serve


def stop_server(proc: subprocess.Popen[bytes], grace_s: float = 10.0, told: bool = False) -> int:
    """Stop the server as Ctrl-C would (SIGINT: Voila shuts its kernels down), then SIGTERM, then SIGKILL.

    ``told``: the server got the stop itself (a terminal's Ctrl-C reaches the whole process group): it is
    given ``grace_s`` to finish before any signal, since a second SIGINT would break its kernels' shutdown.
    """
    steps: list[tuple[int, float]] = [(signal.SIGINT, grace_s), (signal.SIGTERM, 5.0)]
    if told:
        steps.insert(0, (0, grace_s))
    for sig, wait in steps:
        if proc.poll() is not None:
            return int(proc.returncode)
        if sig:
            proc.send_signal(sig)
        try:
            return int(proc.wait(timeout=wait))
        except subprocess.TimeoutExpired:
            continue
    proc.kill()
    return int(proc.wait())


@dataclass
class Readiness:
    """What :func:`wait_until_ready` found: ``ready``, or why not (``reason``), and how long it took."""

    ready: bool
    reason: str = ""
    seconds: float = 0.0
    checked: bool = True  # False: no pooled kernel to check the page with (no pool)


def read_reports(path: Path) -> list[dict[str, str]]:
    """The kernels' report lines so far (:mod:`playground.ui.readiness`); a line not yet whole is left out."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    reports = []
    for line in text.splitlines(keepends=True):
        if not line.endswith("\n"):
            break
        try:
            item = json.loads(line)
        except ValueError:
            continue
        if isinstance(item, dict):
            reports.append({str(k): str(v) for k, v in item.items()})
    return reports


def status_reader(base: str, headers: dict[str, str]) -> Callable[[], dict[str, int] | None]:
    """A function that GETs ``base + playground/api/status`` (the server's kernel counts), None if it does
    not answer."""
    def read() -> dict[str, int] | None:
        try:
            req = urllib.request.Request(base + "playground/api/status", headers=headers)
            with urllib.request.urlopen(req, timeout=10) as resp:
                data = json.loads(resp.read())
        except (OSError, ValueError):
            return None
        return {k: int(v) for k, v in data.items() if isinstance(v, int)}

    return read


@dataclass
class PoolProgress:
    """The pool's filling, said in the terminal: before the link the kernels started, after it those whose page
    is built; a line when the number grew (at most every :data:`PROGRESS_EVERY_S` s), one when the pool is full,
    none after."""

    pool: int
    say: Callable[[str], None]
    clock: Callable[[], float] = time.monotonic
    best: int = -1  # the count last said
    said_at: float = field(default=float("-inf"))
    done: bool = False

    linked: bool = False

    def started(self, count: int) -> None:
        """Before the link: ``count`` pooled kernels have started (none has its page built yet)."""
        self._say(count, f"preparing: {count} of {self.pool} kernels started; the link follows when the first "
                         "page is built")

    def ready(self, count: int) -> None:
        """After the link: ``count`` pooled kernels have their page built; ``pool full`` once all have."""
        if not self.linked:
            self.linked, self.best, self.said_at = True, -1, float("-inf")
        if not self.done and self.pool > 0 and count >= self.pool:
            self.done = True
            self.say(f"pool full: {self.pool} of {self.pool} kernels ready")
            return
        why = " (students who come before a kernel is ready wait in line)" if self.best < 0 else ""
        self._say(count, f"preparing: {count} of {self.pool} kernels ready{why}")

    def _say(self, count: int, line: str) -> None:
        if self.done or self.pool <= 0:
            return
        now = self.clock()
        if count > self.best and now - self.said_at >= PROGRESS_EVERY_S:
            self.say(line)
            self.said_at, self.best = now, count


def built(counts: dict[str, int], reports: list[dict[str, str]]) -> int:
    """Pooled kernels whose page is built: the pool's started kernels (the server's ``pool_ready``), at most as
    many as kernels have reported their page built."""
    return min(counts.get("pool_ready", 0), sum(1 for r in reports if r.get("state") == "ready"))


def _reason(reports: list[dict[str, str]]) -> str | None:
    failed = next((r for r in reports if r.get("state") == "failed"), None)
    if failed is not None:
        return f"a page cannot start: {failed.get('detail') or 'no reason given'}"
    return None


def wait_until_ready(proc: subprocess.Popen[bytes], reports: Path, status: Callable[[], dict[str, int] | None],
                     progress: PoolProgress, timeout: float = READY_WAIT_S, poll_s: float = 0.5) -> Readiness:
    """Wait until a pooled kernel reports its page built (or, with no pool, until the server answers).

    Not ready, with the reason: a kernel reported that its page cannot start; the server exited; nothing was
    ready after ``timeout`` seconds.
    """
    start = time.monotonic()
    while True:
        waited = time.monotonic() - start
        if proc.poll() is not None:
            return Readiness(False, f"the server stopped (exit {proc.returncode}) before a page was ready; "
                                    "its log is above", waited)
        found = read_reports(reports)
        why = _reason(found)
        if why is not None:
            return Readiness(False, why, waited)
        if any(r.get("state") == "ready" for r in found):
            return Readiness(True, seconds=waited)
        counts = status()
        if counts is not None:
            if progress.pool <= 0:
                return Readiness(True, seconds=waited, checked=False)
            progress.started(counts.get("pool_ready", 0))
        if waited >= timeout:
            return Readiness(False, f"no page was ready {timeout:.0f} s after the start; the server's log "
                                    "above says why", waited)
        time.sleep(poll_s)


def follow_pool(proc: subprocess.Popen[bytes], reports: Path, status: Callable[[], dict[str, int] | None],
                progress: PoolProgress, timeout: float = READY_WAIT_S, poll_s: float = 2.0) -> None:
    """After the link: say how the pool fills until it is full, the server stops or ``timeout`` passes."""
    start = time.monotonic()
    while not progress.done and proc.poll() is None and time.monotonic() - start < timeout:
        counts = status()
        if counts is not None:
            progress.ready(built(counts, read_reports(reports)))
        if not progress.done:
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=poll_s)
