"""Imported datasets in the label store, written in one transaction with their labels.

A bridge until :class:`~playground.store.LabelStore` has the methods of the
shared interface (``put_dataset``, ``dataset``, ``datasets``): the same
calls as functions taking the store, on a table of their own created with
``CREATE TABLE IF NOT EXISTS`` inside the write transaction that first needs
it (the schema version is not touched)::

    datasets(name TEXT PRIMARY KEY, kind TEXT, payload TEXT, sha256 TEXT, created_at TEXT)

``payload`` is canonical JSON (sorted keys, no whitespace, UTF-8) and
``sha256`` its digest.  :func:`put_dataset` writes the dataset row and the
label rows (as :meth:`LabelStore.write_rows` takes them) in ONE write
transaction: a failure anywhere leaves neither.
"""
from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from ..model import Unit
from .base import Cursor
from .errors import ReadOnlyStoreError, StoreError
from .schema import canonical_timestamp

__all__ = ["DatasetInfo", "StoredDataset", "canonical_json", "dataset", "datasets", "put_dataset"]

_DDL = ("CREATE TABLE IF NOT EXISTS datasets (name TEXT PRIMARY KEY, kind TEXT NOT NULL, payload TEXT NOT NULL,"
        " sha256 TEXT NOT NULL, created_at TEXT NOT NULL)")


@dataclass(frozen=True)
class DatasetInfo:
    """One catalogued dataset; ``cases``/``units`` from ``payload["summary"]`` (0 when absent)."""

    name: str
    kind: str
    sha256: str
    created_at: str
    cases: int = 0
    units: int = 0


@dataclass(frozen=True)
class StoredDataset:
    """A dataset as stored: its payload (parsed JSON) and the sha256 of its canonical JSON."""

    name: str
    kind: str
    payload: dict[str, Any]
    sha256: str
    created_at: str


def canonical_json(payload: dict[str, Any]) -> str:
    """``json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)``."""
    return json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def _has_table(store: Any, cur: Cursor) -> bool:
    return "datasets" in store._b.table_names(cur)


def _info(name: str, kind: str, payload_text: str, sha: str, created: str) -> DatasetInfo:
    summary = json.loads(payload_text).get("summary") or {}
    return DatasetInfo(name, kind, sha, created, int(summary.get("cases", 0)), int(summary.get("units", 0)))


def put_dataset(store: Any, name: str, kind: str, payload: dict[str, Any], *,
                label_rows: Iterable[tuple[str, Unit, str, int]] = (), replace: bool = False) -> DatasetInfo:
    """Store ``payload`` under ``name`` and write ``label_rows`` — one transaction.

    Refuses (:class:`StoreError`, nothing written) when ``name`` exists with
    different content and ``replace`` is False.  Storing identical content
    again is allowed and changes nothing but the labels.
    """
    if store.read_only:
        raise ReadOnlyStoreError(f"the label store {store.url} is open read-only; nothing was written")
    if not isinstance(name, str) or not name:
        raise StoreError("a dataset needs a non-empty name")
    text = canonical_json(payload)
    sha = hashlib.sha256(text.encode("utf-8")).hexdigest()
    rows = list(label_rows)
    backend = store._b
    result: list[DatasetInfo] = []

    def with_dataset(rows_tx: Callable[[Cursor], Any]) -> Any:
        def tx(cur: Cursor) -> Any:
            cur.execute(_DDL)
            found = cur.execute("SELECT sha256, created_at FROM datasets WHERE name = ?", (name,)).fetchone()
            if found is not None and found[0] != sha and not replace:
                raise StoreError(f"a dataset named {name!r} already exists with other content; "
                                 "import with --replace to replace it (its labels are kept), or choose another name")
            now = canonical_timestamp(backend.now(cur))
            if found is None:
                cur.execute("INSERT INTO datasets (name, kind, payload, sha256, created_at) VALUES (?, ?, ?, ?, ?)",
                            (name, kind, text, sha, now))
                created = now
            else:
                cur.execute("UPDATE datasets SET kind = ?, payload = ?, sha256 = ? WHERE name = ?",
                            (kind, text, sha, name))
                created = found[1]
            out = rows_tx(cur)
            result.append(_info(name, kind, text, sha, created))
            return out

        return backend.write(tx)

    # write_rows validates the rows and builds its transaction body; run that body inside ours.
    store._write = with_dataset
    try:
        store.write_rows(rows, action="import")
    finally:
        del store._write
    return result[-1]


def dataset(store: Any, name: str) -> StoredDataset | None:
    """The stored dataset ``name``, or None."""
    backend = store._b

    def q(cur: Cursor) -> tuple[Any, ...] | None:
        if not _has_table(store, cur):
            return None
        return cur.execute("SELECT name, kind, payload, sha256, created_at FROM datasets WHERE name = ?",
                           (name,)).fetchone()

    row = backend.read(q)
    if row is None:
        return None
    return StoredDataset(row[0], row[1], json.loads(row[2]), row[3], row[4])


def datasets(store: Any) -> list[DatasetInfo]:
    """Every stored dataset, sorted by name."""
    backend = store._b

    def q(cur: Cursor) -> list[tuple[Any, ...]]:
        if not _has_table(store, cur):
            return []
        return cur.execute("SELECT name, kind, payload, sha256, created_at FROM datasets ORDER BY name").fetchall()

    return [_info(n, k, p, s, c) for n, k, p, s, c in backend.read(q)]
