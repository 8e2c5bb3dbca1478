"""PostgreSQL backend (psycopg 3, plain SQL).

* At most one connection per store object and process, opened when a
  transaction needs it and closed after ``idle_close`` seconds without one
  (default :data:`IDLE_CLOSE` = 2 s, ``$PLAYGROUND_PG_IDLE_CLOSE``; ``0``
  keeps it open) — :class:`~.connection.HeldConnection`, shared with the
  SQLite backend.  A page's kernel holds a connection only around its saves
  and reads, so a class holds about as many connections as it has students
  clicking within two seconds of each other (docs/many-hosts.md: the formula
  against ``max_connections``).  One transaction per user action
  (``conn.transaction()`` blocks); session time zone UTC.
* A server with no free connection (``max_connections`` reached, SQLSTATE
  53300) is asked again with backoff for up to ``busy_timeout`` seconds; then
  :class:`StoreError` says so in words (nothing was saved) instead of a
  driver message.
* Writers of the same annotator are serialised with a transaction-scoped
  advisory lock on the annotator id (two browser tabs of one person), so the
  event chain of every label stays exact and the later writer — by server
  time, ``clock_timestamp()`` taken after the lock — is the current label.
  Different annotators never wait for each other.
* Bounded waits: ``lock_timeout`` on the session and a bounded retry on
  lock timeouts, serialisation failures and deadlocks; then
  :class:`StoreBusyError`.  A lost connection is reported (the change may or
  may not have been committed: check the history) and the next call reconnects.
* Read-only stores set ``default_transaction_read_only`` on the session, so
  even a bug cannot write.
* The schema is the first schema on the connection's ``search_path`` (e.g.
  ``?options=-csearch_path%3Dclass_a`` in the URL keeps several stores in one
  database).
"""
from __future__ import annotations

import os
import random
import re
import time
from collections.abc import Callable, Iterable
from datetime import datetime
from typing import Any, TypeVar

from .base import Backend, Cursor
from .connection import HeldConnection
from .errors import StoreBusyError, StoreError
from .schema import canonical_timestamp

__all__ = ["ENV_IDLE_CLOSE", "IDLE_CLOSE", "PostgresBackend", "idle_close_from_env", "is_too_many_connections",
           "redact"]

T = TypeVar("T")

#: First key of the two-int advisory locks this store takes ("PL").
_LOCK_CLASS = 0x504C
_SCHEMA_LOCK = 0


def redact(url: str) -> str:
    """The URL with any password replaced by ``***``."""
    return re.sub(r"(://[^:/@]*:)[^@]*@", r"\1***@", url)


def _translate(sql: str) -> str:
    return sql.replace("?", "%s")


#: Seconds a connection stays open with no transaction before it is closed (issue 30: connections that scale).
IDLE_CLOSE = 2.0
ENV_IDLE_CLOSE = "PLAYGROUND_PG_IDLE_CLOSE"
#: SQLSTATE too_many_connections: also "remaining connection slots are reserved for ..." (superuser slots).
_TOO_MANY = "53300"


def idle_close_from_env() -> float | None:
    """``$PLAYGROUND_PG_IDLE_CLOSE`` in seconds (``0``: never close), else :data:`IDLE_CLOSE`."""
    raw = os.environ.get(ENV_IDLE_CLOSE, "").strip()
    if not raw:
        return IDLE_CLOSE
    try:
        value = float(raw)
    except ValueError:
        raise StoreError(f"${ENV_IDLE_CLOSE} must be a number of seconds (0: keep connections open), "
                         f"not {raw!r}") from None
    if value < 0:
        raise StoreError(f"${ENV_IDLE_CLOSE} must be 0 or more seconds, not {raw!r}")
    return value or None


def is_too_many_connections(exc: BaseException) -> bool:
    """Whether a failed connect was the server refusing for lack of a free connection slot."""
    if getattr(exc, "sqlstate", None) == _TOO_MANY:
        return True
    text = str(exc).lower()
    return "too many clients" in text or "remaining connection slots are reserved" in text


class PostgresBackend(Backend):
    dialect = "postgresql"

    def __init__(self, url: str, *, read_only: bool = False, create: bool = True,
                 busy_timeout: float = 10.0, retries: int = 4, connect_timeout: int = 10,
                 idle_close: float | None = None):
        try:
            import psycopg
        except ImportError as exc:  # pragma: no cover - psycopg is a dependency
            raise StoreError("the PostgreSQL backend needs psycopg 3: pip install 'psycopg[binary]'") from exc
        self._psycopg = psycopg
        self.url = url
        self.display = redact(url)
        self.read_only = read_only
        self.create = create
        self.busy_timeout = busy_timeout
        self.retries = retries
        self.connect_timeout = connect_timeout
        idle = idle_close_from_env() if idle_close is None else (idle_close or None)  # 0: keep it open
        self._held: HeldConnection[Any] = HeldConnection(self._connect, lambda conn: conn.close(),
                                                         usable=lambda conn: not (conn.closed or conn.broken),
                                                         idle=idle)
        self._lock = self._held.lock
        self._held.get()  # fail now, with the reason, when the store cannot be reached
        self._held.release()

    # --- connection ----------------------------------------------------------------------------
    def _connect(self) -> Any:
        """A new session (UTC, ``lock_timeout``, read-only when asked), waiting while the server has no free slot."""
        psycopg = self._psycopg
        start, delay = time.monotonic(), 0.05
        while True:
            try:
                conn = psycopg.connect(self.url, autocommit=True, connect_timeout=self.connect_timeout,
                                       application_name="rag-label-playground")
                break
            except psycopg.Error as exc:
                waited = time.monotonic() - start
                if is_too_many_connections(exc) and waited < self.busy_timeout:
                    time.sleep(delay * (0.5 + random.random()))
                    delay = min(delay * 2, 1.0)
                    continue
                if is_too_many_connections(exc):
                    raise StoreError(
                        f"the PostgreSQL label store {self.display} has no free connection: every one of the "
                        f"server's connections (its max_connections) stayed in use for {waited:.1f} s; nothing was "
                        "saved — try again in a moment (whoever runs the class: docs/many-hosts.md, "
                        "'Connections')") from exc
                raise StoreError(f"cannot connect to the PostgreSQL label store {self.display}: "
                                 f"{str(exc).strip()}") from exc
        setup = f"SET TIME ZONE 'UTC'; SET lock_timeout = {int(self.busy_timeout * 1000)}"
        if self.read_only:
            setup += "; SET default_transaction_read_only = on"
        try:
            conn.execute(setup)  # one round trip: no parameters, so several statements are allowed
        except psycopg.Error as exc:
            conn.close()
            raise StoreError(f"cannot set up the PostgreSQL session {self.display}: {exc}") from exc
        return conn

    def connection(self) -> Any:
        """This process's open session (opened now if there is none, it broke, or it was closed while idle)."""
        return self._held.get()

    @property
    def connections_opened(self) -> int:
        """Sessions this store object opened in this process (tests and the docs' connection figures)."""
        return self._held.opened

    @property
    def holds_connection(self) -> bool:
        """Whether a session is open now (False once it was closed after ``idle_close`` seconds unused)."""
        conn = self._held.current
        return conn is not None and not conn.closed

    def close(self) -> None:
        self._held.close()

    # --- transactions ---------------------------------------------------------------------------------
    def _run(self, fn: Callable[[Cursor], T], read: bool) -> T:
        errors = self._psycopg.errors
        retryable = (errors.SerializationFailure, errors.DeadlockDetected, errors.LockNotAvailable)
        what = "reading" if read else "writing"
        with self._lock:
            try:
                return self._attempts(fn, read, what, retryable)
            finally:
                self._held.release()

    def _attempts(self, fn: Callable[[Cursor], T], read: bool, what: str,
                  retryable: tuple[type[BaseException], ...]) -> T:
        """One transaction, retried bounded on lock contention and once on a connection that died idle."""
        errors = self._psycopg.errors
        start = time.monotonic()
        delay = 0.05
        reconnected = False
        n = 0
        while True:
            conn = self.connection()
            began = False
            try:
                with conn.transaction():
                    began = True
                    with conn.cursor() as raw:
                        if read:
                            raw.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
                        return fn(Cursor(raw, _translate))
            except retryable as exc:
                if n == self.retries:
                    raise StoreBusyError(
                        f"the PostgreSQL label store {self.display} stayed busy for "
                        f"{time.monotonic() - start:.1f} s "
                        f"through {self.retries + 1} attempts while {what} ({type(exc).__name__}); "
                        "nothing was saved — try again"
                    ) from exc
                n += 1
                time.sleep(delay * (0.5 + random.random()))
                delay = min(delay * 2, 1.0)
            except errors.ReadOnlySqlTransaction as exc:
                from .errors import ReadOnlyStoreError

                raise ReadOnlyStoreError(f"the label store {self.display} is open read-only") from exc
            except self._psycopg.OperationalError as exc:
                if conn.broken or conn.closed:
                    # A connection that died while idle (server restart, idle timeout) fails at BEGIN:
                    # nothing was sent, so one fresh connection and one more try are safe.  Reads are
                    # always safe to repeat.  A write that died after BEGIN may or may not be committed.
                    if (read or not began) and not reconnected:
                        reconnected = True
                        continue
                    raise StoreError(
                        f"lost the connection to the PostgreSQL label store {self.display} while {what}: "
                        f"{str(exc).strip()}" + ("; the change may or may not have been saved — check the "
                                                 "label's history" if not read else "")
                    ) from exc
                raise StoreError(f"PostgreSQL label store {self.display}: {what} failed: "
                                 f"{str(exc).strip()}") from exc
            except self._psycopg.Error as exc:
                raise StoreError(f"PostgreSQL label store {self.display}: {what} failed: "
                                 f"{str(exc).strip()}") from exc

    def write(self, fn: Callable[[Cursor], T]) -> T:
        return self._run(fn, read=False)

    def read(self, fn: Callable[[Cursor], T]) -> T:
        return self._run(fn, read=True)

    # --- schema ------------------------------------------------------------------------------------------
    def table_names(self, cur: Cursor) -> set[str]:
        cur.execute(
            "SELECT table_name FROM information_schema.tables"
            " WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'"
        )
        return {r[0] for r in cur.fetchall()}

    def current_schema(self, cur: Cursor) -> str | None:
        name = cur.scalar("SELECT current_schema()")
        return None if name is None else str(name)

    def lock_schema(self, cur: Cursor) -> None:
        cur.execute("SELECT pg_advisory_xact_lock(?::integer, ?::integer)", (_LOCK_CLASS, _SCHEMA_LOCK))

    def reset_sequences(self, cur: Cursor) -> None:
        for table, column in (("annotators", "annotator_id"), ("events", "event_id")):
            cur.execute(
                f"SELECT setval(pg_get_serial_sequence('{table}', '{column}'),"
                f" COALESCE((SELECT MAX({column}) FROM {table}), 0) + 1, false)"
            )

    # --- values -------------------------------------------------------------------------------------------
    def now(self, cur: Cursor) -> datetime:
        value: datetime = cur.scalar("SELECT clock_timestamp()")
        return value

    def ts_in(self, canonical: str) -> datetime:
        return datetime.fromisoformat(canonical)

    def ts_out(self, value: Any) -> str:
        return canonical_timestamp(value)

    def next_event_ids(self, cur: Cursor, n: int) -> list[int]:
        cur.execute("SELECT nextval(pg_get_serial_sequence('events', 'event_id'))"
                    " FROM generate_series(1, ?::integer)", (n,))
        return sorted(r[0] for r in cur.fetchall())

    def stamp(self, cur: Cursor) -> tuple[datetime, int]:
        row = cur.execute("SELECT clock_timestamp(), nextval(pg_get_serial_sequence('events', 'event_id'))").fetchone()
        assert row is not None
        return row[0], int(row[1])

    def lock_annotators(self, cur: Cursor, annotator_ids: Iterable[int]) -> None:
        for aid in sorted(set(annotator_ids)):
            cur.execute("SELECT pg_advisory_xact_lock(?::integer, ?::integer)", (_LOCK_CLASS + 1, aid))
