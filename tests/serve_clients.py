"""Clients that talk to a running ``playground serve`` without a browser: pages, status, kernel websockets.

Used by tests/test_serve_live.py and bench/bench_class.py.  A "page" here is
what Voila sends for one GET: the HTML holds the kernel id in its
``jupyter-config-data``; the kernel's websocket is
``/api/kernels/<id>/channels`` (subprotocol ``v1.kernel.websocket.jupyter.org``
or none for the legacy JSON protocol).
"""
from __future__ import annotations

import http.cookiejar
import json
import re
import time
import urllib.error
import urllib.request
import uuid
from dataclasses import dataclass

__all__ = ["V1", "Page", "hostile_legacy_widget_request", "hostile_v1_frame", "kernel_socket", "open_page",
           "status", "v1_frame", "wait_until"]

V1 = "v1.kernel.websocket.jupyter.org"
#: The 16-byte v1 frame of issue 17: a part count of 2**63 - 1 and nothing else.
HOSTILE_V1_FRAME = b"\xff" * 7 + b"\x7f" + b"\x00" * 8


@dataclass
class Page:
    """One page view: its HTML, its kernel id, the cookies it set, how long it took."""

    base: str
    html: str
    kernel_id: str | None
    cookies: http.cookiejar.CookieJar
    seconds: float
    status: int

    def cookie_header(self) -> str:
        return "; ".join(f"{c.name}={c.value}" for c in self.cookies)

    def xsrf(self) -> str | None:
        return next((c.value for c in self.cookies if c.name == "_xsrf"), None)


def open_page(base: str, query: str = "", timeout: float = 120.0) -> Page:
    """GET the page (reading it to the end) and return it; a 503 (class full) is returned, not raised."""
    jar = http.cookiejar.CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    t0 = time.monotonic()
    try:
        with opener.open(base + (("?" + query) if query else ""), timeout=timeout) as resp:
            html, code = resp.read().decode("utf-8", "replace"), resp.status
    except urllib.error.HTTPError as exc:
        html, code = exc.read().decode("utf-8", "replace"), exc.code
    seconds = time.monotonic() - t0
    m = re.search(r'"kernelId":\s*"([0-9a-f-]{36})"', html)
    return Page(base, html, m.group(1) if m else None, jar, seconds, code)


def status(base: str, timeout: float = 10.0) -> dict:
    """The server's ``/playground/api/status``."""
    with urllib.request.urlopen(base + "playground/api/status", timeout=timeout) as resp:
        return json.loads(resp.read())


def wait_until(predicate, timeout: float, interval: float = 0.5):
    """Poll ``predicate`` until it returns something true (returned) or ``timeout`` seconds pass (None)."""
    end = time.monotonic() + timeout
    while True:
        value = predicate()
        if value or time.monotonic() >= end:
            return value
        time.sleep(interval)


def kernel_socket(page: Page, subprotocol: str | None = V1, timeout: float = 30.0):
    """A websocket-client connection to the page's kernel (``subprotocol=None``: the legacy protocol)."""
    import websocket

    url = page.base.replace("http://", "ws://", 1) + f"api/kernels/{page.kernel_id}/channels?session_id={uuid.uuid4()}"
    return websocket.create_connection(url, timeout=timeout, subprotocols=[subprotocol] if subprotocol else None,
                                       cookie=page.cookie_header(), origin=page.base.rstrip("/"))


def _message(msg_type: str, content: dict, session: str, metadata: dict | None = None) -> dict:
    return {"header": {"msg_id": uuid.uuid4().hex, "msg_type": msg_type, "username": "student", "session": session,
                       "date": "2026-01-01T00:00:00Z", "version": "5.3"},
            "parent_header": {}, "metadata": metadata or {}, "content": content, "buffers": []}


def v1_frame(channel: str, msg: dict) -> bytes:
    """A well-formed v1 frame (as jupyter_server's ``serialize_msg_to_ws_v1``)."""
    parts = [json.dumps(msg[k]).encode() for k in ("header", "parent_header", "metadata", "content")]
    ch = channel.encode()
    offsets = [8 * (1 + 1 + len(parts) + 1)]
    offsets.append(offsets[-1] + len(ch))
    for p in parts:
        offsets.append(offsets[-1] + len(p))
    return b"".join([len(offsets).to_bytes(8, "little"), *(o.to_bytes(8, "little") for o in offsets), ch, *parts])


def hostile_legacy_widget_request(ws) -> None:
    """Issue 17's first trigger: no subprotocol, ``comm_open`` of ``jupyter.widget.control``, ``request_states``."""
    session = uuid.uuid4().hex
    comm_id = uuid.uuid4().hex
    opening = _message("comm_open", {"comm_id": comm_id, "target_name": "jupyter.widget.control", "data": {}},
                       session, {"version": "1.0.0"})  # ipywidgets' control protocol
    ws.send(json.dumps({**opening, "channel": "shell"}))
    asking = _message("comm_msg", {"comm_id": comm_id, "data": {"method": "request_states"}}, session)
    ws.send(json.dumps({**asking, "channel": "shell"}))


def hostile_v1_frame() -> bytes:
    return HOSTILE_V1_FRAME
