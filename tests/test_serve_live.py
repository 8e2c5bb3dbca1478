"""``playground serve`` for real (Voila, kernels, websockets; no browser): hostile clients, the kernel cap,
a GET flood, the shutdown beacon, the token beyond loopback, the per-view warnings."""
from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import psutil
import pytest
from browser_fixtures import start_server, stop_server, wait_for_log
from serve_clients import hostile_legacy_widget_request, hostile_v1_frame, kernel_socket, open_page, status, wait_until

from playground.cli.serve import TOKEN_ENV


def _server_process(srv):
    """The Voila process under ``playground serve``."""
    return next(c for c in psutil.Process(srv.proc.pid).children() if "playground.serving" in " ".join(c.cmdline()))


def _timed_status(srv):
    t0 = time.monotonic()
    st = status(srv.url, timeout=30)
    return st, time.monotonic() - t0


@pytest.mark.slow
def test_hostile_frames_do_not_stop_the_server(tmp_path):
    srv = start_server(tmp_path, "--preheat", "1")
    try:
        assert wait_until(lambda: status(srv.url)["pool_ready"] == 1, 120)
        voila = _server_process(srv)
        first = open_page(srv.url, "annotator=eve")
        assert first.status == 200 and first.kernel_id
        rss_before = voila.memory_info().rss
        # trigger 1: no subprotocol, widget control comm, request_states: the kernel answers with a legacy
        # binary frame that Voila 0.5.13 would read as a v1 part count of ~1e17
        legacy = kernel_socket(first, subprotocol=None, timeout=5)
        hostile_legacy_widget_request(legacy)
        binary = None
        end = time.monotonic() + 60
        while binary is None and time.monotonic() < end:
            try:
                msg = legacy.recv()
            except Exception:
                break
            if isinstance(msg, bytes):
                binary = msg
        # The page draws its chart as SVG, so no widget state carries a binary buffer and the kernel may answer in
        # text only; a binary answer is the legacy frame Voila 0.5.13 would read as a part count of ~1e17. Either
        # way the server must go on answering (the parser itself is tested frame by frame in test_serve.py).
        assert binary is None or int.from_bytes(binary[:8], "little") > 10**15
        # what matters: the server still answers (status has its own 30 s timeout) and the kernel lives on
        assert voila.is_running() and status(srv.url, timeout=30)["kernels"] >= 1
        # trigger 2: the 16-byte v1 frame
        v1 = kernel_socket(first, timeout=10)
        v1.send_binary(hostile_v1_frame())
        assert v1.recv() in ("", b"")  # the server closed the connection
        assert v1.connected is False
        assert voila.is_running() and status(srv.url, timeout=30)["kernels"] >= 1
        assert wait_for_log(srv.log, "refused a malformed websocket frame", 5)
        assert "part count 9223372036854775807 outside 2..1024" in srv.log_tail(20000)
        assert voila.memory_info().rss - rss_before < 100 * 2**20
        second = open_page(srv.url, "annotator=zed", timeout=60)
        assert second.status == 200 and second.kernel_id and second.kernel_id != first.kernel_id
        print(f"\n[serve] second visitor's page after both triggers: {second.seconds:.1f} s")
        legacy.close()
    finally:
        stop_server(srv.proc)


@pytest.fixture(scope="module")
def capped(tmp_path_factory):
    srv = start_server(tmp_path_factory.mktemp("capped"), "--preheat", "0", "--max-kernels", "3",
                       "--unconnected-timeout", "8")
    yield srv
    stop_server(srv.proc)


def _post(url, data=None, cookie=""):
    req = urllib.request.Request(url, data=urllib.parse.urlencode(data or {}).encode(), method="POST",
                                 headers={"Cookie": cookie})
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            return resp.status
    except urllib.error.HTTPError as exc:
        return exc.code


@pytest.mark.slow
def test_the_pages_shutdown_beacon_ends_its_kernel(capped):
    page = open_page(capped.url, "annotator=ann")
    assert page.status == 200 and page.xsrf()
    assert status(capped.url)["kernels"] == 1
    beacon = f"{capped.url}voila/api/shutdown/{page.kernel_id}"
    assert _post(beacon, cookie=page.cookie_header()) == 403          # no _xsrf: refused (cross-site)
    assert _post(beacon, {"_xsrf": page.xsrf()}, page.cookie_header()) == 204
    assert wait_until(lambda: status(capped.url)["kernels"] == 0, 10)
    assert "403 POST /voila/api/shutdown" in capped.log_tail(20000)  # the refused one; no 403 for the real one
    assert status(capped.url)["culled"] == {"unconnected": 0, "disconnected": 0, "unsent": 0, "hung_up": 0}


@pytest.mark.slow
def test_a_get_flood_stays_under_the_cap_and_the_server_answers(capped):
    observed: list[int] = []
    answered: list[float] = []
    stop = threading.Event()

    def watch():
        while not stop.is_set():
            st, took = _timed_status(capped)
            observed.append(st["kernels"])
            answered.append(took)
            time.sleep(0.2)

    refused: list[int] = []

    def hang_up_early():
        try:
            urllib.request.urlopen(capped.url, timeout=0.5).read(100)
        except urllib.error.HTTPError as exc:
            refused.append(exc.code)
        except Exception:  # the client's timeout: it hangs up
            pass

    watcher = threading.Thread(target=watch)
    watcher.start()
    flood = [threading.Thread(target=hang_up_early) for _ in range(40)]
    for t in flood:
        t.start()
        time.sleep(0.02)
    for t in flood:
        t.join()
    # keep watching until the flood's kernels are gone (its clients hung up before their pages were sent) and
    # the watcher has looked at least five times: readiness, not a fixed time (issue 27: 4 s failed under load)
    gone = wait_until(lambda: len(answered) >= 5 and status(capped.url, timeout=30)["kernels"] == 0, 300)
    stop.set()
    watcher.join()
    assert gone, (observed, answered)
    assert max(observed) <= 3  # every status request was answered (30 s each) and never saw more than the cap
    print(f"\n[serve] GET flood: kernels at most {max(observed)}, status answered in at most {max(answered):.2f} s")
    assert refused and set(refused) == {503}  # beyond the cap: "the class is full"
    culled = status(capped.url)["culled"]
    # at least the cap's worth of kernels started and every one of them went (how many more started once the
    # first went depends on timing); none was taken for a page that connected
    assert culled["hung_up"] + culled["unconnected"] >= 3 and culled["disconnected"] == 0
    # a page read to the end that nobody connects to: culled --unconnected-timeout (8 s) after it was sent
    after = open_page(capped.url, "annotator=after")
    assert after.status == 200 and after.kernel_id
    assert status(capped.url)["kernels"] == 1
    assert wait_until(lambda: status(capped.url)["culled"]["unconnected"] == culled["unconnected"] + 1, 30)
    assert status(capped.url)["kernels"] == 0


@pytest.mark.slow
def test_the_class_full_page_says_when_to_come_back(capped):
    with urllib.request.urlopen(capped.url + "playground/api/status") as resp:
        assert resp.status == 200
    # fill the cap with pages, then ask once more
    pages = [open_page(capped.url) for _ in range(3 - status(capped.url)["kernels"])]
    assert all(p.status == 200 for p in pages)
    try:
        urllib.request.urlopen(capped.url, timeout=30)
        raise AssertionError("a fourth page was served beyond --max-kernels 3")
    except urllib.error.HTTPError as exc:
        assert exc.code == 503 and exc.headers["Retry-After"] == "60"
        assert "3 of 3 kernels are running" in exc.read().decode()


def test_no_per_view_warnings_and_kernels_over_ipc(capped):
    if status(capped.url)["kernels"] == 0:
        assert open_page(capped.url).status == 200
    log = capped.log_tail(200000)
    assert "Kernel started" in log
    assert "is not trusted" not in log
    assert "without encryption" not in log  # ipykernel warns "Kernel is running over TCP without encryption"
    voila = _server_process(capped)
    kernels = [c for c in voila.children() if "ipykernel" in " ".join(c.cmdline())]
    assert kernels
    for k in kernels:
        connection = json.loads(Path(k.cmdline()[-1]).read_text())
        assert connection["transport"] == "ipc" and connection["ip"].startswith("/")


@pytest.mark.slow
def test_beyond_loopback_a_token_is_asked_for(tmp_path, monkeypatch):
    monkeypatch.setenv(TOKEN_ENV, "tok-for-the-class")
    srv = start_server(tmp_path, "--host", "0.0.0.0")
    try:
        assert wait_for_log(srv.log, "?token=tok-for-the-class", 30)
        assert "join link" in srv.log_tail()
        assert "tok-for-the-class" not in " ".join(_server_process(srv).cmdline())
        refused = open_page(srv.url)
        assert refused.status in (401, 403) or "login" in refused.html.lower()
        assert refused.kernel_id is None
        assert status_code(srv.url + "playground/api/status") == 403
        allowed = open_page(srv.url, "token=tok-for-the-class&annotator=ann")
        assert allowed.status == 200 and allowed.kernel_id
    finally:
        stop_server(srv.proc)


@pytest.mark.slow
def test_no_auth_is_loud(tmp_path, monkeypatch):
    monkeypatch.delenv(TOKEN_ENV, raising=False)
    srv = start_server(tmp_path, "--host", "0.0.0.0", "--no-auth")
    try:
        assert wait_for_log(srv.log, "WARNING: --no-auth", 30)
        page = open_page(srv.url)
        assert page.status == 200 and page.kernel_id
    finally:
        stop_server(srv.proc)


def status_code(url):
    try:
        with urllib.request.urlopen(url, timeout=30) as resp:
            return resp.status
    except urllib.error.HTTPError as exc:
        return exc.code
