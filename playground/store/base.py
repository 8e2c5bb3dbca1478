"""The small dialect layer both backends implement; the store's logic above it is plain SQL.

Statements are written once with ``?`` placeholders and standard SQL that
SQLite (≥ 3.35) and PostgreSQL (≥ 12) both accept (``ON CONFLICT ... DO
UPDATE``, ``RETURNING``, partial dialect differences kept here); the
PostgreSQL backend rewrites ``?`` to ``%s``.  What differs — connecting,
transactions and their retries, the clock, event-id allocation, per-annotator
locking, timestamp types — is a handful of methods on :class:`Backend`.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar

__all__ = ["Backend", "Cursor"]

T = TypeVar("T")


class Cursor:
    """A DB-API cursor that accepts ``?`` placeholders on either backend."""

    def __init__(self, raw: Any, translate: Callable[[str], str]):
        self.raw = raw
        self._translate = translate

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Cursor:
        self.raw.execute(self._translate(sql), tuple(params))
        return self

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        rows = [tuple(r) for r in rows]
        if rows:
            self.raw.executemany(self._translate(sql), rows)

    def fetchone(self) -> tuple[Any, ...] | None:
        row = self.raw.fetchone()
        return None if row is None else tuple(row)

    def fetchall(self) -> list[tuple[Any, ...]]:
        return list(self.raw.fetchall())

    def scalar(self, sql: str, params: Sequence[Any] = ()) -> Any:
        row = self.execute(sql, params).fetchone()
        return None if row is None else row[0]


class Backend:
    """What a backend provides to :class:`~playground.store.core.LabelStore`."""

    dialect: str = ""
    #: A display form of where the store lives (passwords removed).
    display: str = ""
    read_only: bool = False

    # connection and transactions --------------------------------------------------------
    def write(self, fn: Callable[[Cursor], T]) -> T:
        """Run ``fn`` in one write transaction, retrying bounded on lock contention."""
        raise NotImplementedError

    def read(self, fn: Callable[[Cursor], T]) -> T:
        """Run ``fn`` on one consistent snapshot."""
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError

    # schema ---------------------------------------------------------------------------------
    def table_names(self, cur: Cursor) -> set[str]:
        raise NotImplementedError

    def lock_schema(self, cur: Cursor) -> None:
        """Serialise schema creation/migration between processes (inside a write transaction)."""

    def before_migration(self, from_version: int) -> None:
        """Hook run before a migration's transaction (SQLite takes a backup copy)."""

    def reset_sequences(self, cur: Cursor) -> None:
        """After rows were inserted with explicit ids, make generated ids continue after them."""

    # values -----------------------------------------------------------------------------------
    def now(self, cur: Cursor) -> Any:
        """The current time as a parameter value (server time on PostgreSQL)."""
        raise NotImplementedError

    def ts_in(self, canonical: str) -> Any:
        """A canonical timestamp string as a parameter value."""
        return canonical

    def ts_out(self, value: Any) -> str:
        """A timestamp column value as the canonical UTC ISO string."""
        raise NotImplementedError

    def next_event_ids(self, cur: Cursor, n: int) -> list[int]:
        """``n`` fresh, increasing event ids (inside a write transaction)."""
        raise NotImplementedError

    def stamp(self, cur: Cursor) -> tuple[Any, int]:
        """``(now, one fresh event id)`` — one round trip where the backend allows."""
        return self.now(cur), self.next_event_ids(cur, 1)[0]

    def lock_annotators(self, cur: Cursor, annotator_ids: Iterable[int]) -> None:
        """Serialise writers of the same annotator until the transaction ends."""
