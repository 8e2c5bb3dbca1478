"""Clients that talk to a running ``playground serve`` without a browser: pages, status, kernel websockets.

Used by tests/test_serve_live.py and bench/bench_class.py.  A "page" here is
what Voila sends for one GET: the HTML holds the kernel id in its
``jupyter-config-data``; the kernel's websocket is
``/api/kernels/<id>/channels`` (subprotocol ``v1.kernel.websocket.jupyter.org``
or none for the legacy JSON protocol).
"""
from __future__ import annotations

import dataclasses
import http.cookiejar
import json
import re
import time
import urllib.error
import urllib.request
import uuid
from dataclasses import dataclass

__all__ = ["V1", "Page", "Widgets", "hostile_legacy_widget_request", "hostile_v1_frame", "kernel_socket",
           "open_page", "read_v1", "status", "v1_frame", "wait_until", "widgets"]

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
    place: int | None = None  # the place in the waiting line the first answer gave (None: no line)
    said_s: float | None = None  # seconds until the first answer (the page, or the waiting page's words)

    def cookie_header(self) -> str:
        return "; ".join(f"{c.name}={c.value}" for c in self.cookies)

    def xsrf(self) -> str | None:
        return next((c.value for c in self.cookies if c.name == "_xsrf"), None)


WAITING = re.compile(r'id="pg-queue-line"[^>]*>You are (\d+)')


def _get(opener, url: str, timeout: float, headers: dict[str, str] | None) -> tuple[str, int]:
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with opener.open(request, timeout=timeout) as resp:
            return resp.read().decode("utf-8", "replace"), resp.status
    except urllib.error.HTTPError as exc:
        return exc.read().decode("utf-8", "replace"), exc.code


def open_page(base: str, query: str = "", timeout: float = 120.0, headers: dict[str, str] | None = None,
              queued: bool = True) -> Page:
    """GET the page (reading it to the end) and return it; a 503 (class full) is returned, not raised.

    Given the waiting page (``playground serve``'s line), wait as it does (``queued``): ask
    ``/playground/api/queue`` every 2 s until the turn comes, then GET again with the ticket's cookie.
    """
    jar = http.cookiejar.CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    t0 = time.monotonic()
    url = base + (("?" + query) if query else "")
    html, code = _get(opener, url, timeout, headers)
    said = time.monotonic() - t0
    waiting = WAITING.search(html)
    place = int(waiting.group(1)) if waiting else None
    while waiting and queued and time.monotonic() - t0 < timeout:
        time.sleep(2.0)
        answer = json.loads(_get(opener, base + "playground/api/queue", timeout, headers)[0])
        if answer.get("turn") or not answer.get("known"):
            html, code = _get(opener, url, timeout, headers)
            waiting = WAITING.search(html)
    seconds = time.monotonic() - t0
    m = re.search(r'"kernelId":\s*"([0-9a-f-]{36})"', html)
    return Page(base, html, m.group(1) if m else None, jar, seconds, code, place, said)


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


def read_v1(frame: bytes) -> tuple[str, dict, dict, dict]:
    """``(channel, header, parent_header, content)`` of a v1 frame (checked by the serving guards' parser)."""
    from playground.serving.guards import deserialize_v1

    channel, parts = deserialize_v1(frame)
    header, parent, _meta, content = (json.loads(bytes(p)) for p in parts[:4])
    return channel, header, parent, content


@dataclass
class Widgets:
    """A page's kernel seen as the page's JavaScript sees it: its widget states, and a way to act on them."""

    ws: object
    session: str
    states: dict[str, dict]
    frames: list[bytes] = dataclasses.field(default_factory=list)  # every frame received since the states

    def by_class(self, dom_class: str) -> list[str]:
        """Model ids of the widgets carrying ``dom_class``."""
        return sorted(mid for mid, s in self.states.items() if dom_class in s.get("state", {}).get("_dom_classes", ()))

    def send(self, model: str, data: dict, timeout: float = 120.0) -> list[dict]:
        """Send a ``comm_msg`` to ``model`` and wait for the kernel to be idle after it; returns the comm
        messages the kernel sent meanwhile (their ``data``)."""
        msg = _message("comm_msg", {"comm_id": model, "data": data}, self.session)
        self.ws.send_binary(v1_frame("shell", msg))  # type: ignore[attr-defined]
        seen: list[dict] = []
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            frame = self.ws.recv()  # type: ignore[attr-defined]
            if not isinstance(frame, bytes):
                continue
            self.frames.append(frame)
            _ch, header, parent, content = read_v1(frame)
            if header["msg_type"] == "comm_msg":
                seen.append(content.get("data", {}))
            if (header["msg_type"] == "status" and parent.get("msg_id") == msg["header"]["msg_id"]
                    and content.get("execution_state") == "idle"):
                return seen
        raise TimeoutError(f"the kernel did not answer the message to {model} in {timeout:.0f} s")

    def update(self, model: str, state: dict) -> list[dict]:
        """Set widget state, as the page does when a control changes."""
        return self.send(model, {"method": "update", "state": state, "buffer_paths": []})

    def click(self, model: str) -> list[dict]:
        """Click a button, as the page does."""
        return self.send(model, {"method": "custom", "content": {"event": "click"}})


def widgets(page: Page, timeout: float = 120.0) -> Widgets:
    """Open the page's kernel websocket and read every widget's state (``request_states``), as the page does."""
    ws = kernel_socket(page, timeout=timeout)
    session = uuid.uuid4().hex
    control = uuid.uuid4().hex
    ws.send_binary(v1_frame("shell", _message("comm_open", {"comm_id": control, "target_name": "jupyter.widget.control",
                                                            "data": {}}, session, {"version": "1.0.0"})))
    ws.send_binary(v1_frame("shell", _message("comm_msg", {"comm_id": control, "data": {"method": "request_states"}},
                                              session)))
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        frame = ws.recv()
        if not isinstance(frame, bytes):
            continue
        _ch, header, _parent, content = read_v1(frame)
        data = content.get("data", {}) if header["msg_type"] == "comm_msg" else {}
        if data.get("method") == "update_states":
            return Widgets(ws, session, data["states"])
    raise TimeoutError(f"no widget states from the page's kernel in {timeout:.0f} s")
