"""jupyter_server's watch of every kernel's activity, reading only what it uses of each message.

jupyter_server subscribes to every kernel's IOPub to keep ``last_activity``
(for the idle cull) and ``execution_state``.  For every message every kernel
sends it ran ``Session.deserialize``: the signature checked, the header, parent
header and metadata parsed as JSON, their dates parsed, the message adapted to
the current protocol; and for a status message all of it again with the
content.  Profiled with py-spy while thirty pages opened at once, that watch was
a fifth of the server process's samples.

:func:`record_activity` applies the same rule to the same messages from two
JSON frames (header and parent header), and the content only for a status
message:

* ``last_activity`` (the manager's and the kernel's) is now when the message's
  type or its parent's is tracked (not in ``untracked_message_types``), or the
  kernel is busy;
* on a ``status`` message whose parent's type is tracked, the kernel's
  ``execution_state`` becomes the message's; a kernel still ``starting``
  becomes ``idle`` on its first other state.

The signature is not checked here: the watch only records times and states,
and the IOPub socket it reads is bound by the kernel itself.  Voila's renderer
and the pages' websockets still read the messages with jupyter_client's checks.
"""
from __future__ import annotations

import json
from typing import Any

from jupyter_server._tz import utcnow

__all__ = ["record_activity", "watch_activity"]


def record_activity(manager: Any, kernel: Any, msg_list: list[Any]) -> None:
    """Apply the module's rule for one IOPub message (its ZMQ frames) of ``kernel`` of ``manager``."""
    _idents, parts = kernel.session.feed_identities(msg_list)
    header = json.loads(bytes(parts[1]))
    parent_type = json.loads(bytes(parts[2])).get("msg_type")
    msg_type = header.get("msg_type")
    if (manager.track_message_type(msg_type) or manager.track_message_type(parent_type)
            or kernel.execution_state == "busy"):
        manager.last_kernel_activity = kernel.last_activity = utcnow()
    if msg_type == "status":
        state = json.loads(bytes(parts[4])).get("execution_state")
        if manager.track_message_type(parent_type):
            kernel.execution_state = state
        elif kernel.execution_state == "starting" and state != "starting":
            kernel.execution_state = "idle"


def watch_activity(manager: Any, kernel_id: str) -> None:
    """Subscribe to the kernel's IOPub and apply :func:`record_activity` to every message (what
    ``MappingKernelManager.start_watching_activity`` sets up)."""
    kernel = manager._kernels[kernel_id]
    kernel.reason = ""
    kernel.last_activity = utcnow()
    kernel._activity_stream = kernel.connect_iopub()
    kernel._activity_stream.on_recv(lambda msg_list: record_activity(manager, kernel, msg_list))
