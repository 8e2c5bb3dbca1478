"""``playground serve`` for real, started as the docs start it (issues 42.1, 43.5, 44.2): from a fresh folder
with a relative ``--db``, ready only once a pooled kernel has built its page, stopping with the reason when a
page cannot start, the link given before the pool is full, and a SIGKILL of ``serve`` taking its server and
kernels with it.

Each test starts its own ``serve`` in a temporary folder (the working directory of the command, as a person's
shell would be) and reads what it prints; pages and labels go over HTTP and the kernel websocket, as the
page's JavaScript sends them.
"""
from __future__ import annotations

import contextlib
import html
import os
import signal
import socket
import time
from pathlib import Path

import psutil
import pytest
from browser_fixtures import REPO, wait_for_log
from serve_clients import open_page, status, widgets
from serve_process import READY, Serve, playground, serving

from playground.serving.page import WIDGET_VIEW

pytestmark = pytest.mark.slow

def _port_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _servers_on(port: int) -> list[int]:
    """Pids of Voila servers started for ``port`` that are still running."""
    found = []
    for p in psutil.process_iter(["pid", "cmdline", "status"]):
        cmd = " ".join(p.info["cmdline"] or ())
        if "playground.serving" in cmd and f"--port={port}" in cmd and p.info["status"] != psutil.STATUS_ZOMBIE:
            found.append(p.info["pid"])
    return found


def _labels(db: Path) -> list[tuple[str, str, int | None]]:
    from playground.store import open_store

    with open_store(str(db), create=False, read_only=True) as store:
        return [(label.annotator, label.unit_id, label.value) for label in store.labels()]


def test_serve_as_the_docs_write_it_from_a_fresh_folder_labels_into_that_folders_store(tmp_path):
    """docs/instructor.md: ``playground labels init --db week1.db`` then ``playground serve --db week1.db``, typed
    in the class's folder: the page renders the playground and a toggle lands in ./week1.db."""
    made = playground(tmp_path, "labels", "init", "--db", "week1.db")
    assert made.returncode == 0, made.stderr
    with serving(tmp_path, "--db", "week1.db", "--preheat", "1", "--open-slots", "0") as srv:
        assert wait_for_log(srv.log, READY, 240), srv.text()[-4000:]
        assert "a page cannot start" not in srv.text()
        assert f"playground: labels in sqlite:///{tmp_path / 'week1.db'}".replace("////", "///") in srv.text()
        page = open_page(srv.url, "annotator=ada")
        assert page.status == 200 and page.kernel_id and WIDGET_VIEW in page.html
        assert "The playground cannot start" not in page.html
        w = widgets(page)
        (status_line,) = w.by_class("pg-status")
        assert "cannot start" not in html.unescape(str(w.states[status_line]["state"]["value"]))
        toggle = w.by_class("pg-toggle")[0]
        w.update(toggle, {"index": 0})  # "yes", as a click sends it
        labels = _labels(tmp_path / "week1.db")
    assert [(a, v) for a, _u, v in labels] == [("ada", 1)]
    assert not (REPO / "notebooks" / "week1.db").exists()


def test_a_page_that_cannot_start_stops_serve_before_any_link(tmp_path):
    """A data root whose corpus and golden set are empty folders: serve's own checks pass, every kernel fails
    to load the data; serve says why and stops, giving no link, leaving no server or kernel."""
    for sub in ("corpus", "golden"):
        (tmp_path / "broken" / sub).mkdir(parents=True)
    srv = Serve(tmp_path, "--root", "broken", "--db", "labels.db", "--preheat", "1")
    try:
        code = srv.proc.wait(timeout=240)
        left = _servers_on(srv.port)
    finally:
        srv.stop()
    text = srv.text()
    assert code == 1, text[-4000:]
    assert "playground serve: stopped before giving out any link: a page cannot start:" in text
    assert READY not in text and "annotator=THEIR-NAME" not in text and "join link" not in text
    assert left == [] and _port_free(srv.port)


def test_the_link_comes_with_the_first_page_built_and_the_pool_goes_on_filling(tmp_path):
    with serving(tmp_path, "--db", "labels.db", "--class-size", "4", "--preheat", "4") as srv:
        assert wait_for_log(srv.log, "playground: pool full: 4 of 4 kernels ready", 300), srv.text()[-4000:]
        lines = srv.lines()
    said = [i for i, line in enumerate(lines) if line.startswith(READY)]
    bookmark = [i for i, line in enumerate(lines) if "annotator=THEIR-NAME" in line]
    full = lines.index("playground: pool full: 4 of 4 kernels ready")
    assert len(said) == 1 and bookmark and bookmark[0] < said[0] < full, lines
    assert "(a page was built; " in lines[said[0]]


def test_sigkill_of_serve_frees_the_port_within_5_s_and_a_restart_serves(tmp_path):
    playground(tmp_path, "labels", "init", "--db", "labels.db")
    srv = Serve(tmp_path, "--db", "labels.db", "--preheat", "1", "--open-slots", "0")
    try:
        assert wait_for_log(srv.log, READY, 240), srv.text()[-4000:]
        family = srv.family()
        kernels = [p for p in family if "ipykernel" in " ".join(p.cmdline())]
        assert len(family) >= 3 and kernels  # serve, its Voila server, the pooled kernel
        os.kill(srv.proc.pid, signal.SIGKILL)
        killed = time.monotonic()
        while not _port_free(srv.port) and time.monotonic() - killed < 5:
            time.sleep(0.05)
        freed = time.monotonic() - killed
        gone = psutil.wait_procs(family[1:], timeout=max(0.1, 5 - freed))[0]
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(srv.proc.pid, signal.SIGKILL)
        srv.proc.wait(timeout=10)
    print(f"\n[serve] port free {freed:.2f} s after SIGKILL of serve")
    assert freed < 5 and len(gone) == len(family) - 1, f"left: {[p.pid for p in family[1:] if p not in gone]}"
    with serving(tmp_path, "--db", "labels.db", "--preheat", "1", "--open-slots", "0", port=srv.port) as again:
        assert wait_for_log(again.log, READY, 240), again.text()[-4000:]
        page = open_page(again.url, "annotator=bo")
        assert page.status == 200 and WIDGET_VIEW in page.html
        assert status(again.url)["kernels"] >= 1
