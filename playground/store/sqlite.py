"""SQLite backend: one file, WAL, ``synchronous=FULL``, ``BEGIN IMMEDIATE`` per user action.

* Durable on return: in WAL mode with ``synchronous=FULL`` a commit syncs the
  log before ``COMMIT`` returns.
* Several processes write one file: ``BEGIN IMMEDIATE`` takes the write lock
  up front (no lock upgrades, no deadlocks), SQLite's ``busy_timeout`` waits
  for it, and an outer loop retries a bounded number of times with jittered
  backoff; then :class:`StoreBusyError` says so plainly.  Nothing is written by
  a failed attempt.
* One connection per store object and process (:class:`~.connection.HeldConnection`,
  shared with the PostgreSQL backend): a store used after ``fork()`` opens its
  own connection in the child instead of sharing the parent's.  It stays open
  (a file handle: no server counts it).
* Read-only stores open the file with ``mode=ro`` and ``PRAGMA query_only``;
  so does a file on read-only media (or one this user may not write), for
  reading, instead of failing to switch it to WAL.
* Nothing is changed in a file before it is known to be a label store (or
  empty and creating was asked for): a foreign SQLite database is refused with
  the names of its tables, never switched to WAL.
* Before each write transaction the path's inode and device are compared with
  those of the file opened; a file deleted or replaced since raises
  :class:`StoreGoneError` and nothing is written (the unlinked file would
  take the write and nobody would ever read it).
"""
from __future__ import annotations

import contextlib
import os
import random
import sqlite3
import time
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import quote

from .base import Backend, Cursor
from .connection import HeldConnection
from .errors import StoreBusyError, StoreError, StoreGoneError

__all__ = ["SQLiteBackend"]

T = TypeVar("T")

_BUSY_MARKERS = ("database is locked", "database is busy", "database table is locked")


def _is_busy(exc: BaseException) -> bool:
    if isinstance(exc, sqlite3.OperationalError):
        code = getattr(exc, "sqlite_errorcode", None)
        if code is not None and code & 0xFF in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED):
            return True
        return any(m in str(exc).lower() for m in _BUSY_MARKERS)
    return False


def _identity(sql: str) -> str:
    return sql


class SQLiteBackend(Backend):
    dialect = "sqlite"

    def __init__(self, path: Path, *, read_only: bool = False, create: bool = True,
                 busy_timeout: float = 3.0, retries: int = 4):
        self.path = Path(path)
        self.display = f"sqlite://{self.path.resolve()}"  # sqlite:///abs/path, as open_store reads it
        self.read_only = read_only
        self.busy_timeout = busy_timeout
        self.retries = retries
        self.create = create
        self._held: HeldConnection[sqlite3.Connection] = HeldConnection(self._connect, sqlite3.Connection.close)
        self._lock = self._held.lock
        self._file_id: tuple[int, int] | None = None
        if not self.path.exists():
            if read_only or not create:
                raise StoreError(f"no label store at {self.path} (it was not created: opened with create=False or "
                                 "read-only; `playground serve` or `playground labels init` creates it)")
            if not self.path.parent.is_dir():
                raise StoreError(f"cannot create the label store {self.path}: "
                                 f"directory {self.path.parent} does not exist")
        elif self.path.is_dir():
            raise StoreError(f"{self.path} is a directory, not a label store file")
        elif not read_only and not self._writable():
            self.read_only = True  # read-only media or permissions: open for reading instead of failing
        self._held.get()
        st = os.stat(self.path)
        self._file_id = (st.st_dev, st.st_ino)

    def _writable(self) -> bool:
        """Whether this process may write the file and create ``-wal``/``-shm`` next to it."""
        return os.access(self.path, os.W_OK) and os.access(self.path.parent, os.W_OK)

    # --- connection ------------------------------------------------------------------------
    def _open(self) -> sqlite3.Connection:
        try:
            if self.read_only:
                uri = f"file:{quote(str(self.path.resolve()))}?mode=ro"
                conn = sqlite3.connect(uri, uri=True, timeout=self.busy_timeout, isolation_level=None,
                                       check_same_thread=False)
                try:
                    conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
                except sqlite3.OperationalError:
                    # A WAL file on read-only media without its -shm: read it as an immutable file.
                    conn.close()
                    conn = sqlite3.connect(uri + "&immutable=1", uri=True, timeout=self.busy_timeout,
                                           isolation_level=None, check_same_thread=False)
                return conn
            return sqlite3.connect(str(self.path), timeout=self.busy_timeout, isolation_level=None,
                                   check_same_thread=False)
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open the label store {self.path}: {exc}") from exc

    def _refuse_foreign(self, conn: sqlite3.Connection) -> None:
        """Raise unless the file is a label store, or empty and creating one was asked for (changes nothing)."""
        tables = sorted(r[0] for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'").fetchall())
        if not tables:
            if not self.create and not self.read_only:
                raise StoreError(f"no label store at {self.path} (the file is empty) "
                                 "and creating one was not asked for")
            return
        version = None
        if "meta" in tables:
            try:
                version = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
            except sqlite3.DatabaseError:
                version = None
        if version is None:
            raise StoreError(f"{self.path} is an SQLite database with tables {', '.join(tables)}, not a label store;"
                             " it was not changed")

    def _connect(self) -> sqlite3.Connection:
        conn = self._open()
        try:
            conn.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout * 1000)}")
            self._refuse_foreign(conn)
            if self.read_only:
                conn.execute("PRAGMA query_only = ON")
            else:
                self._retry(lambda: self._set_wal(conn), "switching to WAL mode")
                conn.execute("PRAGMA synchronous = FULL")
            conn.execute("PRAGMA foreign_keys = ON")
        except sqlite3.DatabaseError as exc:
            conn.close()
            raise StoreError(f"{self.path} is not a label store (not a readable SQLite database: {exc})") from exc
        except BaseException:
            conn.close()
            raise
        return conn

    def _set_wal(self, conn: sqlite3.Connection) -> None:
        mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        if str(mode).lower() != "wal":
            raise StoreError(f"cannot put the label store {self.path} in WAL mode (journal mode stays {mode!r})")

    def connection(self) -> sqlite3.Connection:
        return self._held.get()

    def close(self) -> None:
        self._held.close()

    # --- transactions ----------------------------------------------------------------------------
    def _retry(self, attempt: Callable[[], T], what: str) -> T:
        start = time.monotonic()
        delay = 0.05
        for n in range(self.retries + 1):
            try:
                return attempt()
            except sqlite3.OperationalError as exc:
                if not _is_busy(exc):
                    raise
                if n == self.retries:
                    waited = time.monotonic() - start
                    raise StoreBusyError(
                        f"the label store {self.path} stayed busy (locked by other writers) for {waited:.1f} s "
                        f"through {self.retries + 1} attempts while {what}; nothing was saved — try again"
                    ) from exc
                time.sleep(delay * (0.5 + random.random()))
                delay = min(delay * 2, 1.0)
        raise AssertionError("unreachable")

    def _run(self, fn: Callable[[Cursor], T], begin: str, what: str) -> T:
        def attempt() -> T:
            conn = self.connection()
            conn.execute(begin)
            try:
                result = fn(Cursor(conn.cursor(), _identity))
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    with contextlib.suppress(sqlite3.Error):
                        conn.execute("ROLLBACK")
                raise
            return result

        with self._lock:
            try:
                return self._retry(attempt, what)
            except StoreError:
                raise
            except sqlite3.DatabaseError as exc:
                raise StoreError(f"label store {self.path}: {what} failed: {exc}") from exc
            finally:
                self._held.release()

    def check_same_file(self) -> None:
        """Raise :class:`StoreGoneError` when the path no longer names the file that was opened."""
        if self._file_id is None:
            return
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            raise StoreGoneError(f"the label store file {self.path} was deleted while it was open; nothing was "
                                 "written — reopen the store (reload the page)") from None
        if (st.st_dev, st.st_ino) != self._file_id:
            raise StoreGoneError(f"the label store file {self.path} was replaced by another file while it was open; "
                                 "nothing was written — reopen the store (reload the page)")

    def write(self, fn: Callable[[Cursor], T]) -> T:
        self.check_same_file()
        return self._run(fn, "BEGIN IMMEDIATE", "writing")

    def read(self, fn: Callable[[Cursor], T]) -> T:
        return self._run(fn, "BEGIN", "reading")

    # --- schema -------------------------------------------------------------------------------------
    def table_names(self, cur: Cursor) -> set[str]:
        cur.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
        return {r[0] for r in cur.fetchall()}

    def before_migration(self, from_version: int) -> None:
        """Copy the file to ``<file>.schema<N>.bak`` (a consistent snapshot) before migrating it."""
        backup = self.path.with_name(f"{self.path.name}.schema{from_version}.bak")
        if backup.exists():
            return
        tmp = backup.with_name(backup.name + ".tmp")
        try:
            target = sqlite3.connect(str(tmp))
            try:
                with self._lock:
                    self.connection().backup(target)
            finally:
                target.close()
            os.replace(tmp, backup)
        except (OSError, sqlite3.Error) as exc:
            tmp.unlink(missing_ok=True)
            raise StoreError(
                f"refusing to migrate {self.path} from schema {from_version}: "
                f"could not write the backup {backup}: {exc}"
            ) from exc

    # --- values ---------------------------------------------------------------------------------------
    def now(self, cur: Cursor) -> str:
        return datetime.now(UTC).isoformat(timespec="microseconds")

    def ts_out(self, value: Any) -> str:
        return str(value)

    def next_event_ids(self, cur: Cursor, n: int) -> list[int]:
        # BEGIN IMMEDIATE holds the only write lock, so max + 1 is ours; events are never deleted.
        top = cur.scalar("SELECT COALESCE(MAX(event_id), 0) FROM events")
        return list(range(top + 1, top + 1 + n))

    def lock_annotators(self, cur: Cursor, annotator_ids: Iterable[int]) -> None:
        return None  # BEGIN IMMEDIATE already serialises all writers of the file
