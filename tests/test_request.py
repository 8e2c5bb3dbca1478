"""playground.ui.request speaks Voila's request-info handshake: tested against the serving handler on loopback.

The server side is :class:`playground.serving.auth.RequestInfoHandler` (what
``playground serve`` mounts at ``/voila/query/<kernel_id>`` instead of Voila's
``RequestInfoHandler``, with the same class methods), run in a tornado
application on 127.0.0.1; the message is sent with its ``send_updates``, as
Voila's page handler sends it when a request claims a kernel.  The handshake
needs the kernel's own key (``PLAYGROUND_KERNEL_KEY``).
"""
from __future__ import annotations

import asyncio
import json
import os
import socket
import threading
import time
from collections.abc import Iterator

import pytest
import tornado.web
import websockets.sync.client
from websockets.exceptions import InvalidStatus

from playground.serving import auth
from playground.serving.auth import RequestInfoHandler, kernel_key
from playground.ui import request
from playground.ui.request import request_url, role, wait_for_request

KERNEL = "0e2f7c5a-1b2c-4d3e-8f90-a1b2c3d4e5f6"
OTHER = "9d8c7b6a-5f4e-4d3c-8b2a-1f0e9d8c7b6a"
REQUEST = {"QUERY_STRING": "annotator=Zo%C3%AB&case=GC-0003", "SCRIPT_NAME": "/", "SERVER_NAME": "127.0.0.1"}


class _Server:
    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        ready = threading.Event()

        def run() -> None:
            asyncio.set_event_loop(self.loop)
            app = tornado.web.Application([(r"/voila/query/(?P<kernel_id>[\w-]+)", RequestInfoHandler)])
            app.listen(self.port, address="127.0.0.1")
            self.loop.call_soon(ready.set)
            self.loop.run_forever()

        self.thread = threading.Thread(target=run, daemon=True)
        self.thread.start()
        assert ready.wait(10)

    def send(self, payload: dict, role: str | None = None) -> None:
        done = threading.Event()

        def go() -> None:
            auth.current_role.set(role)
            RequestInfoHandler.send_updates({"kernel_id": KERNEL, "payload": payload})
            done.set()

        self.loop.call_soon_threadsafe(go)
        assert done.wait(10)

    def waiting(self) -> bool:
        return KERNEL in RequestInfoHandler._waiters

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


@pytest.fixture
def server(monkeypatch) -> Iterator[_Server]:
    RequestInfoHandler._cache.clear()
    srv = _Server()
    monkeypatch.setenv("VOILA_PREHEAT", "True")
    monkeypatch.setenv("VOILA_KERNEL_ID", KERNEL)
    monkeypatch.setenv("VOILA_APP_IP", "127.0.0.1")
    monkeypatch.setenv("VOILA_APP_PORT", str(srv.port))
    monkeypatch.setenv("VOILA_SERVER_URL", "/")
    monkeypatch.delenv("VOILA_WS_BASE_URL", raising=False)
    monkeypatch.setenv("PLAYGROUND_KERNEL_KEY", kernel_key(KERNEL))
    for name in (*REQUEST, "PLAYGROUND_ROLE"):  # recorded, so that what the handshake sets is undone after the test
        monkeypatch.setenv(name, "")
        monkeypatch.delenv(name)
    yield srv
    srv.stop()
    RequestInfoHandler._cache.clear()


def test_the_address_is_voilas(monkeypatch):
    env = {"VOILA_APP_IP": "10.1.2.3", "VOILA_APP_PORT": "9999", "VOILA_SERVER_URL": "/srv/", "VOILA_KERNEL_ID": "k-1"}
    assert request_url(env) == "ws://10.1.2.3:9999/srv/voila/query/k-1"
    env |= {"VOILA_WS_PROTOCOL": "wss", "VOILA_WS_BASE_URL": "/proxy/"}
    assert request_url(env) == "wss://10.1.2.3:9999/proxy/voila/query/k-1"
    assert request_url({}) == "ws://127.0.0.1:8866/voila/query/"


def _waiting(server: _Server) -> tuple[list[bool], threading.Thread]:
    """A kernel waiting for its request in a thread, once the server has it among its waiters."""
    got: list[bool] = []
    waiter = threading.Thread(target=lambda: got.append(wait_for_request()))
    waiter.start()
    deadline = time.monotonic() + 10
    while not server.waiting() and time.monotonic() < deadline:
        time.sleep(0.01)
    return got, waiter


def test_a_kernel_claimed_after_it_connected_gets_the_request(server):
    got, waiter = _waiting(server)
    assert server.waiting() and waiter.is_alive()  # blocked until the request comes
    server.send(REQUEST)
    waiter.join(10)
    assert got == [True]
    assert {k: os.environ[k] for k in REQUEST} == REQUEST
    assert os.environ["PLAYGROUND_ROLE"] == "student"  # no role set by a page handler: the least power


def test_a_kernel_claimed_before_it_connected_gets_the_kept_request(server):
    server.send(REQUEST)  # nobody waiting yet: Voila keeps it in its cache
    assert wait_for_request() is True
    assert os.environ["QUERY_STRING"] == REQUEST["QUERY_STRING"]


def test_a_message_that_is_not_an_object_of_strings_changes_nothing(server):
    server.send({"SERVER_NAME": 7})  # type: ignore[dict-item]
    with pytest.warns(UserWarning, match="not a JSON object of strings"):
        assert wait_for_request() is False
    assert "QUERY_STRING" not in os.environ and "SERVER_NAME" not in os.environ


def test_no_server_is_a_warning_not_a_hang(server, monkeypatch):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        closed = s.getsockname()[1]
    monkeypatch.setenv("VOILA_APP_PORT", str(closed))
    with pytest.warns(UserWarning, match="no request info from Voila"):
        assert wait_for_request(timeout=2) is False


def test_outside_a_preheated_kernel_it_returns_at_once(monkeypatch):
    monkeypatch.setenv("VOILA_PREHEAT", "False")
    assert wait_for_request("ws://127.0.0.1:1/never") is False
    monkeypatch.delenv("VOILA_PREHEAT")
    assert wait_for_request("ws://127.0.0.1:1/never") is False


def test_the_page_needs_no_voila_import():
    """The point of the module: a kernel that waited for its request has not imported voila.utils (1.35 s, 47 MiB)."""
    import subprocess
    import sys

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        closed = s.getsockname()[1]
    code = ("import json, sys, warnings; import playground.ui.request as r; warnings.simplefilter('ignore'); "
            f"print(r.wait_for_request('ws://127.0.0.1:{closed}/voila/query/k', timeout=1)); "
            "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('voila', 'jupyter_server', 'jupyterlab_server', 'nbconvert'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={**os.environ, "VOILA_PREHEAT": "True"}, check=True)
    tried, modules = out.stdout.splitlines()
    assert tried == "False"  # it did try the websocket (and found nobody)
    assert json.loads(modules) == []


def _connect(srv: _Server, kernel: str, key: str | None):
    headers = {} if key is None else {request.KERNEL_KEY_HEADER: key}
    return websockets.sync.client.connect(f"ws://127.0.0.1:{srv.port}/voila/query/{kernel}", open_timeout=5,
                                          additional_headers=headers)


@pytest.mark.parametrize("key", [None, "", "0" * 64, kernel_key(OTHER)], ids=["none", "empty", "made-up", "other"])
def test_the_handshake_is_refused_without_the_kernels_own_key(server, key):
    with pytest.raises(InvalidStatus) as refused:
        _connect(server, KERNEL, key)
    assert refused.value.response.status_code == 403
    assert not server.waiting()


def test_a_listener_without_the_key_neither_hears_nor_stalls_the_page(server):
    """Issue 29: listeners on a made-up id (and on the page's own id) without the key must not disturb it."""
    for kernel in (OTHER, OTHER, KERNEL):
        with pytest.raises(InvalidStatus):
            _connect(server, kernel, None)
    got, waiter = _waiting(server)
    with pytest.raises(InvalidStatus) as second:  # a second listener, even with the key, is not let in
        _connect(server, KERNEL, kernel_key(KERNEL))
    assert second.value.response.status_code == 409
    server.send({**REQUEST, "QUERY_STRING": "token=s3cret&annotator=ann", "VOILA_REQUEST_URL": "http://h/?token=s3cret"},
                role="instructor")
    waiter.join(10)
    assert got == [True]
    assert os.environ["QUERY_STRING"] == "annotator=ann"  # the key never reaches the kernel
    assert "s3cret" not in os.environ.get("VOILA_REQUEST_URL", "")
    assert os.environ["PLAYGROUND_ROLE"] == "instructor"


def test_the_role_names_agree_with_the_server():
    assert (request.KERNEL_KEY_ENV, request.KERNEL_KEY_HEADER, request.ROLE_ENV, request.ROLES) == (
        auth.KERNEL_KEY_ENV, auth.KERNEL_KEY_HEADER, auth.ROLE_ENV, auth.ROLES)


@pytest.mark.parametrize(("env", "expected"), [
    ({}, "instructor"),                                   # not under playground serve: the machine's own user
    ({"PLAYGROUND_ROLE": "student"}, "student"),
    ({"PLAYGROUND_ROLE": "instructor"}, "instructor"),
    ({"PLAYGROUND_ROLE": "observer"}, "observer"),
    ({"PLAYGROUND_ROLE": "Instructor"}, "student"),       # not a known role: the least power
    ({"PLAYGROUND_ROLE": ""}, "student"),
])
def test_the_role(env, expected):
    assert role(env) == expected
    assert request.can_write_room(env) is (expected == "instructor")
