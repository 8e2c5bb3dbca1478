"""A page's kernel tells ``playground serve`` whether its page could start.

``serve`` gives out its links only once a pooled kernel has opened the label store and built the page, and
stops with the reason when a kernel cannot (issue 42.1).  It names a file in ``$PLAYGROUND_READY_FILE``
(created empty, in a folder only its user can read); a kernel appends one JSON line to it:

* ``{"state": "ready", "pid": N}`` when a preheated kernel has built its page (before it waits for its
  request);
* ``{"state": "failed", "pid": N, "detail": "StoreError: ..."}`` when a page cannot start (the same text the
  page shows and the server's log has).

Without the variable (a notebook opened by hand, a test) nothing is written.  A line is written with one
``write`` on a descriptor opened with ``O_APPEND`` and without ``O_CREAT``, so lines of several kernels do not
interleave and a file ``serve`` has removed is not made again.
"""
from __future__ import annotations

import contextlib
import json
import os

__all__ = ["FAILED", "READY", "READY_FILE_ENV", "report"]

READY_FILE_ENV = "PLAYGROUND_READY_FILE"
READY = "ready"
FAILED = "failed"


def report(state: str, detail: str = "") -> bool:
    """Append ``state`` (:data:`READY` or :data:`FAILED`) and ``detail`` to ``$PLAYGROUND_READY_FILE``; True if
    a line was written."""
    path = os.environ.get(READY_FILE_ENV, "")
    if not path:
        return False
    line: dict[str, object] = {"state": state, "pid": os.getpid()}
    if detail:
        line["detail"] = detail
    data = (json.dumps(line, ensure_ascii=True) + "\n").encode("ascii")
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_WRONLY | os.O_APPEND)
        try:
            return os.write(fd, data) == len(data)
        finally:
            os.close(fd)
    return False
