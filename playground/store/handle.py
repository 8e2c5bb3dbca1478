"""One open label store: its backend, transactions, schema check on open, and annotator ids.

The one handle every part of :class:`~playground.store.core.LabelStore` is
given in its constructor (the parts are objects with one job each, sharing
it).  It owns one :class:`~.base.Backend` (:attr:`StoreHandle.db`, one
connection per process); :meth:`StoreHandle.write` refuses every write of
a read-only store (:class:`ReadOnlyStoreError`, nothing written).  On open the
schema is checked: a newer version than this code is refused
(:class:`SchemaVersionError`); an empty database gets the current schema when
creating was asked for; an older one is migrated forward in one transaction
(:data:`~.schema.MIGRATIONS`), after the backend's backup hook, unless the
store is read-only (then refused, with how to migrate).  Annotators are rows
created on first use; their ids are remembered once a transaction committed.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from .base import Backend, Cursor
from .checks import RESERVED_ANNOTATORS
from .errors import ReadOnlyStoreError, SchemaVersionError, StoreError
from .schema import CURRENT_VERSION, MIGRATIONS, TABLES, current_ddl
from .types import Event

__all__ = ["StoreHandle"]

T = TypeVar("T")


class StoreHandle:
    """The store's connection core: backend, transactions, schema on open, annotator ids, row readers."""

    def __init__(self, backend: Backend, *, create: bool = True):
        #: The backend: connection, transactions and the dialect's few differences.
        self.db = backend
        self.read_only = backend.read_only
        self._create = create
        #: name -> annotator_id of annotators seen in committed transactions (rows are never deleted).
        self._annotator_ids: dict[str, int] = {}
        self.schema_version = self._prepare_schema()

    # --- basics ---------------------------------------------------------------------------------
    @property
    def backend(self) -> str:
        """``"sqlite"`` or ``"postgresql"``."""
        return self.db.dialect

    @property
    def url(self) -> str:
        """Where the store lives (passwords redacted)."""
        return self.db.display

    def close(self) -> None:
        self.db.close()

    def write(self, fn: Callable[[Cursor], T]) -> T:
        """Run ``fn`` in one write transaction; a read-only store refuses (:class:`ReadOnlyStoreError`)."""
        if self.read_only:
            raise ReadOnlyStoreError(f"the label store {self.url} is open read-only; nothing was written")
        return self.db.write(fn)

    # --- schema ----------------------------------------------------------------------------------
    @staticmethod
    def _version(cur: Cursor, tables: set[str], where: str) -> int | None:
        if "meta" not in tables:
            ours = tables & set(TABLES)
            if ours:
                raise StoreError(f"{where} has tables {sorted(ours)} but no schema version: not a label store")
            return None
        raw = cur.scalar("SELECT value FROM meta WHERE key = 'schema_version'")
        try:
            return int(raw)
        except (TypeError, ValueError):
            raise StoreError(f"{where}: unreadable schema version {raw!r}") from None

    def _prepare_schema(self) -> int:
        b = self.db

        def inspect(cur: Cursor) -> tuple[set[str], int | None]:
            tables = b.table_names(cur)
            return tables, self._version(cur, tables, b.display)

        tables, version = b.read(inspect)
        if version is not None and version > CURRENT_VERSION:
            raise SchemaVersionError(version, CURRENT_VERSION)
        if version == CURRENT_VERSION:
            return version
        if version is None and not self._create:
            raise StoreError(f"no label store at {b.display} (it is empty) and creating one was not asked for")
        if self.read_only:
            if version is None:
                raise StoreError(f"{b.display} is not a label store yet (it is empty) and it is open read-only")
            raise StoreError(
                f"the label store {b.display} is at schema {version} and needs migrating to {CURRENT_VERSION}; "
                "open it once without read-only to migrate it"
            )
        if version is None and b.dialect == "sqlite" and tables:
            raise StoreError(f"{b.display} is a SQLite database but not a label store "
                             f"(tables: {', '.join(sorted(tables))})")
        if version is not None:
            b.before_migration(version)

        def upgrade(cur: Cursor) -> int:
            b.lock_schema(cur)
            tables = b.table_names(cur)
            found = self._version(cur, tables, b.display)  # again, inside the lock: another process may have done it
            if found is None:
                for stmt in current_ddl(b.dialect):
                    cur.execute(stmt)
                return CURRENT_VERSION
            if found > CURRENT_VERSION:
                raise SchemaVersionError(found, CURRENT_VERSION)
            for target, migrate in MIGRATIONS:
                if target > found:
                    migrate(b, cur)
                    cur.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(target),))
            return CURRENT_VERSION

        return b.write(upgrade)

    # --- annotators ---------------------------------------------------------------------------------
    def annotator_id(self, cur: Cursor, name: str, create: bool) -> int | None:
        """The id of annotator ``name`` (created when ``create``; else None when unknown)."""
        cached = self._annotator_ids.get(name)
        if cached is not None:
            return cached
        aid = cur.scalar("SELECT annotator_id FROM annotators WHERE name = ?", (name,))
        if aid is None and create:
            cur.execute(
                "INSERT INTO annotators (name, created_at) VALUES (?, ?) ON CONFLICT (name) DO NOTHING",
                (name, self.db.now(cur)),
            )
            aid = cur.scalar("SELECT annotator_id FROM annotators WHERE name = ?", (name,))
        return None if aid is None else int(aid)

    def remember(self, name: str, annotator_id: int) -> None:
        """Keep ``name``'s id once the transaction that used it committed (rows are never deleted)."""
        self._annotator_ids[name] = annotator_id

    def ids_creating(self, cur: Cursor, names: Iterable[str]) -> tuple[dict[str, int], list[str]]:
        """``({name: annotator_id}, [names created now])``, creating the missing annotators."""
        ids: dict[str, int] = {}
        created: list[str] = []
        for name in names:
            existed = cur.scalar("SELECT annotator_id FROM annotators WHERE name = ?", (name,))
            aid = existed if existed is not None else self.annotator_id(cur, name, create=True)
            assert aid is not None
            ids[name] = int(aid)
            if existed is None:
                created.append(name)
        return ids, created

    def annotators(self) -> list[str]:
        """Every annotator name ever used, sorted; the reserved names (:data:`RESERVED_ANNOTATORS`) never."""
        names = self.db.read(lambda cur: [r[0] for r in cur.execute("SELECT name FROM annotators").fetchall()])
        return sorted(n for n in names if n not in RESERVED_ANNOTATORS)

    # --- rows ----------------------------------------------------------------------------------------
    def event(self, row: tuple[Any, ...]) -> Event:
        """An :class:`Event` from a row of :data:`~.statements.EVENT_COLUMNS`."""
        (eid, name, kind, uid, dim, old, new, thash, created, action, case_id, old_hash, batch, undoes, note,
         gv) = row
        return Event(eid, name, kind, uid, dim, old, new, thash, self.db.ts_out(created), action, case_id,
                     old_hash, batch, undoes, note, None if gv is None else int(gv))

    @staticmethod
    def chunked(cur: Cursor, base: str, params: list[Any], column: str,
                 ids: Iterable[str] | None) -> list[tuple[Any, ...]]:
        """Rows of ``base`` (a query ending in a WHERE clause), restricted to ``column IN ids`` 500 ids at a time."""
        if ids is None:
            return cur.execute(base, params).fetchall()
        wanted = sorted(set(ids))
        rows: list[tuple[Any, ...]] = []
        for i in range(0, len(wanted), 500):
            chunk = wanted[i:i + 500]
            rows += cur.execute(base + f" AND {column} IN ({', '.join('?' * len(chunk))})", params + chunk).fetchall()
        return rows
