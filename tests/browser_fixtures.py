"""Fixtures for the browser tests: a data root with hostile text, a Voila server, Chromium through Playwright.

Chromium is Debian's (``/usr/bin/chromium``); Playwright never downloads a
browser.  Without it the browser tests skip with the reason, unless
``PLAYGROUND_REQUIRE_BROWSER=1`` (set by ``.ci/run``), where they fail.
"""
from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
MINI = REPO / "tests" / "data" / "mini"
CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = REPO / "test-artifacts"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
#: Generous: the machine has two cores and each page starts a kernel.
SERVER_TIMEOUT = 90.0
PAGE_TIMEOUT_MS = 90_000

IMG = '<img src=x onerror="window.__xss=1">'
SCRIPT = "<script>window.__xss=1</script>"
XSS_QUERY = f"How long may an endpoint take {IMG} to answer {SCRIPT}?"
XSS_CLAIMS = (f"Endpoints answer within 15 seconds {IMG}.", f"Scripts like {SCRIPT} never run.")

XSS_CASE = f"""
  - case_id: GC-0003
    case_type: normal
    tenant: acme
    query: '{XSS_QUERY}'
    history: []
    expected_sources:
      - {{tenant: acme, slug: retries, heading: Timeouts}}
    reference_answer: An endpoint must answer within 15 seconds.
    reference_facts:
      - fact_id: GC-0003-F1
        statement: 'The timeout is 15 seconds {SCRIPT}.'
        accept: ["15 seconds"]
    must_contain: ["15"]
    forbidden_text: []
    notes: Hostile markup in the question, a claim and a fact; it must show as text.
"""
XSS_RESPONSE = f"""
  - response_id: GC-0003-R1
    case_id: GC-0003
    variant: grounded_correct
    claims:
      - {{text: '{XSS_CLAIMS[0]}', supported: true, correct: true}}
      - {{text: '{XSS_CLAIMS[1]}', supported: false, correct: false}}
    facts: {{GC-0003-F1: true}}
    notes: Hostile markup.
"""
XSS_ARTICLE = f"""---
title: Endpoint limits {IMG}
tenant: acme
slug: limits
version: 1
updated: 2025-05-01
---
## Endpoint answer time

An endpoint may take up to 15 seconds to answer {SCRIPT} before the attempt counts as failed {IMG}.
"""


def browser_required() -> bool:
    return os.environ.get("PLAYGROUND_REQUIRE_BROWSER", "").strip() in ("1", "true", "yes")


def need_chromium() -> None:
    """Skip (or, when required, fail) without Debian's Chromium or the Playwright package."""
    import importlib.util

    if CHROMIUM.exists() and importlib.util.find_spec("playwright") is not None:
        return
    if not CHROMIUM.exists():
        reason = (f"no Chromium at {CHROMIUM}: install it with `apt-get install chromium` "
                  "(PLAYGROUND_REQUIRE_BROWSER=1 turns this skip into a failure)")
    else:
        reason = ("the playwright Python package is not installed (pip install -e '.[test]'); "
                  "PLAYGROUND_REQUIRE_BROWSER=1 turns this skip into a failure")
    if browser_required():
        pytest.fail(reason)
    pytest.skip(reason)


def make_data_root(target: Path) -> Path:
    """A copy of tests/data/mini plus a case, response and article whose text holds HTML and script."""
    shutil.copytree(MINI, target)
    cases = target / "golden" / "cases" / "cases.yaml"
    cases.write_text(cases.read_text(encoding="utf-8").rstrip("\n") + "\n" + XSS_CASE, encoding="utf-8")
    responses = target / "golden" / "responses" / "responses.yaml"
    responses.write_text(responses.read_text(encoding="utf-8").rstrip("\n") + "\n" + XSS_RESPONSE, encoding="utf-8")
    (target / "corpus" / "acme" / "limits.md").write_text(XSS_ARTICLE, encoding="utf-8")
    return target


def wait_for_log(log: Path, text: str, timeout: float) -> bool:
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        if text in log.read_text(errors="replace"):
            return True
        time.sleep(0.2)
    return False


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port: int, proc: subprocess.Popen, timeout: float, log: Path) -> float:
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        if proc.poll() is not None:
            raise RuntimeError(f"the server exited with {proc.returncode}:\n{log.read_text(errors='replace')[-4000:]}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return time.monotonic() - start
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"no server on port {port} after {timeout:.0f} s:\n{log.read_text(errors='replace')[-4000:]}")


class Server:
    """A running ``playground serve``: its URL, database, data root and log."""

    def __init__(self, url: str, db: Path, root: Path, log: Path, proc: subprocess.Popen, ready_s: float):
        self.url, self.db, self.root, self.log, self.proc, self.ready_s = url, db, root, log, proc, ready_s

    def log_tail(self, n: int = 4000) -> str:
        return self.log.read_text(errors="replace")[-n:]


def start_server(workdir: Path, *extra: str, db: Path | None = None, shipped: bool = False) -> Server:
    """``playground serve`` on a free port: on the hostile mini data root, or (``shipped``) the repository's data."""
    root = REPO if shipped else workdir / "data"
    if not root.exists():
        make_data_root(root)
    db = db or workdir / "labels.db"
    port = free_port()
    log = workdir / f"voila-{port}.log"
    cmd = [sys.executable, "-m", "playground", "serve", "--port", str(port), "--db", str(db), "--cull-idle", "0",
           *([] if shipped else ["--root", str(root)]), *extra]
    if "--preheat" not in extra:  # the default pool follows free memory; tests start no pool unless they ask
        cmd += ["--preheat", "0"]
    if "--open-slots" not in extra:  # no waiting line unless a test asks for one (tests/test_serve_queue.py)
        cmd += ["--open-slots", "0"]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("PLAYGROUND_READ_ONLY", None)
    t0 = time.monotonic()
    with open(log, "wb") as fh:  # the server writes to its own copy of the descriptor
        proc = subprocess.Popen(cmd, stdout=fh, stderr=subprocess.STDOUT, env=env, cwd=str(REPO),
                                start_new_session=True)
    try:
        wait_for_port(port, proc, SERVER_TIMEOUT, log)
    except Exception:
        stop_server(proc)
        raise
    ready = time.monotonic() - t0
    print(f"\n[browser] server ready in {ready:.1f} s on port {port}")
    return Server(f"http://127.0.0.1:{port}/", db, root, log, proc, ready)


def stop_server(proc: subprocess.Popen) -> None:
    """Stop the server we started: SIGTERM to ``playground serve``, which stops Voila and its kernels.

    Falls back to its process group (created for it by ``start_new_session``) if it does not exit.
    """
    if proc.poll() is not None:
        return
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    need_chromium()
    srv = start_server(tmp_path_factory.mktemp("serve"))
    yield srv
    stop_server(srv.proc)


@pytest.fixture(scope="module")
def browser():
    need_chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1500, "height": 1000}, accept_downloads=True)
    pg = context.new_page()
    pg.set_default_timeout(PAGE_TIMEOUT_MS)
    yield pg
    context.close()


def open_app(page, url: str) -> float:
    """Open the playground and wait for its widgets; returns the seconds until they were visible."""
    t0 = time.monotonic()
    page.goto(url, timeout=PAGE_TIMEOUT_MS)
    page.locator(".pg-app .pg-rates").wait_for(state="visible", timeout=PAGE_TIMEOUT_MS)
    page.locator(".pg-claim-0-supported").first.wait_for(state="visible", timeout=PAGE_TIMEOUT_MS)
    return time.monotonic() - t0
