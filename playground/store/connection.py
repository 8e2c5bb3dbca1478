"""One store object's database connection, for both backends: per process, opened on use, closed when idle.

The rule (issue 27: this was written twice, once per backend; issue 30: connections that scale):

* **Per process.**  A connection belongs to the process that opened it.  After
  ``fork()`` the child never uses the parent's connection, nor closes it (that
  would end the parent's session): it opens its own on first use.
* **Opened on use.**  :meth:`HeldConnection.get` returns the open connection,
  or opens one when there is none, it was closed, or ``usable(conn)`` says it
  broke.
* **Closed when idle** (``idle`` seconds, ``None``: never).  After each
  transaction :meth:`HeldConnection.release` records the time; a timer thread
  closes the connection once nothing used it for ``idle`` seconds.  A page's
  kernel that is only being read then holds no PostgreSQL connection between
  clicks, so the connections a class holds at once are the kernels that saved
  something in the last ``idle`` seconds, not every kernel (docs/many-hosts.md
  gives the formula against ``max_connections``).
* **One lock.**  :attr:`HeldConnection.lock` serialises the transactions of the
  store object (threads of one kernel) and the idle close: a connection is
  never closed under a running transaction.
"""
from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Callable
from typing import Generic, TypeVar

__all__ = ["HeldConnection"]

C = TypeVar("C")


class HeldConnection(Generic[C]):
    """A connection opened by ``open_`` on first use in this process, closed by ``close_`` (or when idle)."""

    def __init__(self, open_: Callable[[], C], close_: Callable[[C], None], *,
                 usable: Callable[[C], bool] = lambda _conn: True, idle: float | None = None,
                 clock: Callable[[], float] = time.monotonic):
        self._open, self._close, self._usable = open_, close_, usable
        self.idle = idle
        self._clock = clock
        self.lock = threading.RLock()
        self._conn: C | None = None
        self._pid = -1
        self._last = 0.0
        self._timer: threading.Timer | None = None
        #: Connections opened by this object in this process (one more each time an idle one was closed).
        self.opened = 0

    @property
    def current(self) -> C | None:
        """The connection this process holds now, or None (never opens one)."""
        return self._conn if self._pid == os.getpid() else None

    def get(self) -> C:
        """The open connection of this process, opening one if needed."""
        with self.lock:
            if self._pid != os.getpid():
                # After fork() the parent's connection (and its timer thread) are not ours: forget, never close.
                self._conn, self._timer = None, None
            elif self._conn is not None and not self._usable(self._conn):
                self._discard()
            if self._conn is None:
                conn = self._open()
                self._conn, self._pid = conn, os.getpid()
                self.opened += 1
            self._last = self._clock()
            return self._conn

    def release(self) -> None:
        """A transaction ended: the idle clock starts now (the timer closes the connection ``idle`` s later)."""
        with self.lock:
            self._last = self._clock()
            if self.idle is None or self._conn is None or self._timer is not None:
                return
            self._schedule(self.idle)

    def _schedule(self, delay: float) -> None:
        timer = threading.Timer(max(delay, 0.0), self._expire)
        timer.daemon = True  # never keeps a kernel or a CLI alive
        self._timer = timer
        timer.start()

    def _expire(self) -> None:
        with self.lock:
            self._timer = None
            if self._conn is None or self._pid != os.getpid() or self.idle is None:
                return
            left = self._last + self.idle - self._clock()
            if left > 0:  # used since: look again when it would have been idle long enough
                self._schedule(left)
                return
            self._discard()

    def _discard(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            with contextlib.suppress(Exception):
                self._close(conn)

    def close(self) -> None:
        """Close this process's connection (a parent's connection after fork is left alone)."""
        with self.lock:
            timer, self._timer = self._timer, None
            if timer is not None and self._pid == os.getpid():
                timer.cancel()
            if self._pid == os.getpid():
                self._discard()
            self._conn = None
