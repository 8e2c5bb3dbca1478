"""Guards on the kernel websocket: frames are checked before any work proportional to the numbers they carry.

Voila 0.5.13 and jupyter_server 2.21 read a part count from the first bytes of
a binary websocket frame and loop over it (``range(int.from_bytes(msg[:8],
"little"))``) before looking at the frame's length, so one 16-byte frame, or a
legacy-protocol client whose widget replies Voila misreads as v1 frames, makes
the server allocate gigabytes and stop answering.  :func:`install` replaces
those three parsers, in the serving process only, by ones that check the
frame first:

* v1 (``v1.kernel.websocket.jupyter.org``): ``n`` little-endian 8-byte
  offsets after an 8-byte count, with ``2 <= n <= MAX_PARTS``,
  ``8 * (n + 1) <= len(frame)``, ``offsets[0] >= 8 * (n + 1)``, offsets
  non-decreasing and ``offsets[-1] <= len(frame)``;
* legacy binary: a big-endian 4-byte count ``n`` then ``n`` 4-byte offsets,
  with ``1 <= n <= MAX_PARTS``, ``4 * (n + 1) <= len(frame)`` and the same
  order and bounds.

A frame that fails is refused (:class:`MalformedFrame`; the connection is
closed with code 1003 and one line in the log); the work done on any frame is
bounded by its length, which tornado bounds by ``websocket_max_message_size``
(:data:`MAX_MESSAGE_BYTES`).  A message from a student whose roster link has
since been revoked, reissued, removed or has expired
(:func:`playground.serving.auth.still_allowed`) is dropped and the connection
closed with code 1008: revocation reaches a page already open at its next
click.  Patching at run time rather than pinning forked
versions keeps the upstream packages as installed; :func:`install` refuses to
run on versions whose parsers it does not know (it checks the functions it
replaces exist), so an upgrade is noticed.
"""
from __future__ import annotations

import itertools
import json
import logging
import struct
from typing import Any

from jupyter_client.session import DELIM
from jupyter_server.services.kernels.connection.channels import ZMQChannelsWebsocketConnection

from . import auth

__all__ = ["MAX_MESSAGE_BYTES", "MAX_PARTS", "MalformedFrame", "QuietConnection", "deserialize_legacy",
           "deserialize_v1", "install", "installed", "legacy_offsets", "quieted", "read_header", "v1_offsets"]

#: At most this many parts in one frame: a kernel message has 4 (header, parent header, metadata,
#: content) plus its buffers; a widget message carries a handful of buffers.
MAX_PARTS = 1024
#: tornado's ``websocket_max_message_size`` for the serving process: widget messages from a page are a few KiB.
MAX_MESSAGE_BYTES = 4 * 1024 * 1024

log = logging.getLogger("playground.serving")


class MalformedFrame(ValueError):
    """A websocket frame whose header does not describe the frame (refused before any work)."""


def _check_offsets(offsets: list[int], start: int, length: int) -> list[int]:
    if offsets[0] < start:
        raise MalformedFrame(f"first offset {offsets[0]} inside the {start}-byte offset table")
    for a, b in itertools.pairwise(offsets):
        if b < a:
            raise MalformedFrame("offsets not in increasing order")
    if offsets[-1] > length:
        raise MalformedFrame(f"offset {offsets[-1]} beyond the frame's {length} bytes")
    return offsets


def v1_offsets(frame: bytes) -> list[int]:
    """The offset table of a v1 frame, checked against the frame's length (:class:`MalformedFrame` if not)."""
    if not isinstance(frame, (bytes, bytearray, memoryview)):
        raise MalformedFrame("a v1 frame must be binary")
    length = len(frame)
    if length < 8:
        raise MalformedFrame(f"{length} bytes: shorter than the 8-byte part count")
    n = int.from_bytes(frame[:8], "little")
    if n < 2 or n > MAX_PARTS:
        raise MalformedFrame(f"part count {n} outside 2..{MAX_PARTS}")
    start = 8 * (n + 1)
    if start > length:
        raise MalformedFrame(f"{n} offsets need {start} bytes; the frame has {length}")
    offsets = [int.from_bytes(frame[8 * (i + 1): 8 * (i + 2)], "little") for i in range(n)]
    return _check_offsets(offsets, start, length)


def legacy_offsets(frame: bytes) -> list[int]:
    """The offset table of a legacy binary frame (4-byte big-endian count and offsets), checked likewise."""
    length = len(frame)
    if length < 4:
        raise MalformedFrame(f"{length} bytes: shorter than the 4-byte part count")
    n = struct.unpack("!i", frame[:4])[0]
    if n < 1 or n > MAX_PARTS:
        raise MalformedFrame(f"part count {n} outside 1..{MAX_PARTS}")
    start = 4 * (n + 1)
    if start > length:
        raise MalformedFrame(f"{n} offsets need {start} bytes; the frame has {length}")
    offsets = list(struct.unpack("!" + "I" * n, frame[4:start]))
    return _check_offsets(offsets, start, length)


def deserialize_v1(frame: bytes) -> tuple[str, list[bytes]]:
    """``jupyter_server``'s ``deserialize_msg_from_ws_v1`` with the frame checked first."""
    offsets = v1_offsets(frame)
    try:
        channel = bytes(frame[offsets[0]:offsets[1]]).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise MalformedFrame("the channel name is not UTF-8") from exc
    parts = [frame[offsets[i]:offsets[i + 1]] for i in range(1, len(offsets) - 1)]
    return channel, parts


def deserialize_legacy(frame: bytes) -> dict[str, Any]:
    """``jupyter_server``'s ``deserialize_binary_message`` with the frame checked first."""
    from jupyter_client.jsonutil import extract_dates

    offsets = legacy_offsets(frame)
    bounds = [*offsets, len(frame)]
    bufs = [frame[a:b] for a, b in itertools.pairwise(bounds)]
    try:
        msg = json.loads(bytes(bufs[0]).decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise MalformedFrame("the message part is not UTF-8 JSON") from exc
    if not isinstance(msg, dict) or not isinstance(msg.get("header"), dict):
        raise MalformedFrame("the message part has no header")
    msg["header"] = extract_dates(msg["header"])
    msg["parent_header"] = extract_dates(msg.get("parent_header") or {})
    msg["buffers"] = bufs[1:]
    return msg


def read_header(frame: bytes) -> dict[str, Any] | None:
    """Voila's ``read_header_from_binary_message`` for a frame going to the page: v1 or legacy, else ``None``.

    Used only to drop ``execute_input`` messages, so a frame it cannot read is passed on unchanged.
    """
    try:
        offsets = v1_offsets(frame)
        if len(offsets) >= 3:
            header = json.loads(bytes(frame[offsets[1]:offsets[2]]).decode("utf-8"))
            return header if isinstance(header, dict) else None
    except (MalformedFrame, UnicodeDecodeError, ValueError):
        pass
    try:
        offsets = legacy_offsets(frame)
        end = offsets[1] if len(offsets) > 1 else len(frame)
        msg = json.loads(bytes(frame[offsets[0]:end]).decode("utf-8"))
    except (MalformedFrame, UnicodeDecodeError, ValueError):
        return None
    header = msg.get("header") if isinstance(msg, dict) else None
    return header if isinstance(header, dict) else None


_installed = False


def installed() -> bool:
    """Whether :func:`install` has run in this process."""
    return _installed


def install() -> None:
    """Replace the websocket frame parsers of Voila and jupyter_server in this process (idempotent)."""
    global _installed
    if _installed:
        return
    from jupyter_server.services.kernels.connection import base, channels
    from voila.tornado import kernel_websocket_handler as voila_ws

    for module, name in ((base, "deserialize_msg_from_ws_v1"), (channels, "deserialize_msg_from_ws_v1"),
                         (base, "deserialize_binary_message"), (channels, "deserialize_binary_message"),
                         (voila_ws, "read_header_from_binary_message")):
        if not callable(getattr(module, name, None)):
            raise RuntimeError(f"{module.__name__}.{name} is gone: the websocket guard does not know this "
                               "version of Voila/jupyter_server; check playground/serving/guards.py against it")
    base.deserialize_msg_from_ws_v1 = channels.deserialize_msg_from_ws_v1 = deserialize_v1
    base.deserialize_binary_message = channels.deserialize_binary_message = deserialize_legacy
    voila_ws.read_header_from_binary_message = read_header

    original = channels.ZMQChannelsWebsocketConnection.handle_incoming_message

    def handle_incoming_message(self: Any, incoming_msg: Any) -> None:
        if not auth.still_allowed(getattr(self.websocket_handler, "current_user", None)):
            log.warning("playground: closed the page of a student whose roster link no longer works (kernel %s)",
                        self.kernel_id)
            self.websocket_handler.close(1008, "this link no longer works")
            return
        try:
            original(self, incoming_msg)
        except MalformedFrame as exc:
            peer = getattr(getattr(self.websocket_handler, "request", None), "remote_ip", "?")
            log.warning("playground: refused a malformed websocket frame from %s for kernel %s: %s",
                        peer, self.kernel_id, exc)
            self.websocket_handler.close(1003, "malformed frame")

    channels.ZMQChannelsWebsocketConnection.handle_incoming_message = handle_incoming_message  # type: ignore[method-assign]
    _installed = True


class QuietConnection(ZMQChannelsWebsocketConnection):
    """The kernel websocket, with what would show the server's files to the browser taken out.

    A kernel's ``stderr`` stream and the traceback of an ``error`` message name files of the server (the
    project's checkout, the virtualenv).  The page shows neither, but anyone speaking the websocket sees
    them: here ``stderr`` messages are not sent on, and an ``error`` message keeps its ``ename`` with a
    generic ``evalue`` and no traceback.  The server log keeps the details (the kernel's own stderr).
    ``playground serve --debug`` does not use this class.
    """

    def handle_outgoing_message(self, stream: str, outgoing_msg: list[Any]) -> None:
        quiet = quieted(self.session, outgoing_msg)
        if quiet is not None:
            super().handle_outgoing_message(stream, quiet)


def quieted(session: Any, msg_list: list[Any]) -> list[Any] | None:
    """``msg_list`` (a kernel message as ZMQ frames) without server paths: None to drop it (``stderr``), the
    frames with a scrubbed content for an ``error``, else the frames unchanged."""
    idents, fed = session.feed_identities(msg_list)
    if len(fed) < 5:
        return msg_list
    try:
        header = session.unpack(_raw(fed[1]))
        kind = header.get("msg_type")
        if kind not in ("stream", "error"):
            return msg_list
        content = session.unpack(_raw(fed[4]))
    except Exception:
        return msg_list
    if kind == "stream":
        return None if content.get("name") == "stderr" else msg_list
    scrubbed = {"ename": str(content.get("ename", "Error")),
                "evalue": "an error in the page's kernel (details in the server's log)", "traceback": []}
    parts = [_raw(f) for f in fed[1:4]] + [session.pack(scrubbed)]
    return [*idents, DELIM, session.sign(parts), *parts, *fed[5:]]  # signed again: the legacy protocol checks


def _raw(frame: Any) -> bytes:
    """A ZMQ frame's bytes (a ``zmq.Frame`` or bytes already)."""
    return bytes(frame.bytes) if hasattr(frame, "bytes") else bytes(frame)
