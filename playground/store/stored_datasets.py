"""Datasets stored in the label store: canonical JSON with its SHA-256, written with their labels at once.

:meth:`StoredDatasets.put_dataset` writes the dataset and its label rows in ONE
transaction (all or nothing).  A name already stored with other content is
refused unless ``replace``; the same content again changes nothing (its labels
may still be new).  The SHA-256 of the canonical JSON is the dataset's revision.
"""
from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..model import Unit
from .base import Cursor
from .checks import canonical_json, dataset_info
from .errors import InvalidLabelError, StoreError
from .handle import StoreHandle
from .label_writes import LabelWrites
from .types import DatasetInfo, StoredDataset

__all__ = ["StoredDatasets"]


class StoredDatasets:
    """Datasets in the store (canonical JSON, its SHA-256), written with their label rows by ``writes``."""

    def __init__(self, handle: StoreHandle, writes: LabelWrites):
        self._h = handle
        self._b = handle.db
        self._writes = writes

    def put_dataset(self, name: str, kind: str, payload: dict[str, Any], *,
                    label_rows: Sequence[tuple[str, Unit, str, int]] = (), replace: bool = False,
                    also: Callable[[Cursor], Any] | None = None) -> DatasetInfo:
        """Store a dataset (canonical JSON and its sha256) and its labels in ONE transaction: all or nothing.

        ``label_rows`` are :meth:`write_rows` tuples, written as ``import``
        events; ``also`` runs in the same transaction before them (a restored
        label history, :func:`playground.store.replay.restore_tx`).  A dataset
        of that name already present is an error unless ``replace=True``
        (labels are never removed by a replace).
        """
        if not isinstance(payload, dict):
            raise InvalidLabelError(f"a dataset payload must be a JSON object (dict), got {type(payload).__name__}")
        text = canonical_json(payload)
        digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
        summary = payload.get("summary")
        return self.put_text(name, kind, text, digest, summary if isinstance(summary, dict) else {},
                             label_rows=label_rows, replace=replace, also=also)

    def put_text(self, name: str, kind: str, text: str, digest: str, summary: Mapping[str, Any], *,
                 label_rows: Sequence[tuple[str, Unit, str, int]] = (), replace: bool = False,
                 also: Callable[[Cursor], Any] | None = None) -> DatasetInfo:
        """:meth:`put_dataset` for a payload given as its canonical JSON ``text`` (sha256 ``digest``).

        One transaction, all or nothing: the row (inserted, replaced with ``replace=True``,
        or left as it is when the stored sha256 is ``digest``; other content without
        ``replace`` is a :class:`StoreError`), then ``also``, then ``label_rows`` as
        ``import`` events.  ``summary`` is the payload's ``summary`` (cases, units) for
        the returned :class:`DatasetInfo`.  The caller guarantees that ``text`` is the
        canonical JSON of a JSON object and ``digest`` the SHA-256 of its UTF-8 bytes
        (:mod:`.dataset_text`: an importer of a large file makes the text sample by sample).
        """
        if not isinstance(name, str) or not name.strip() or len(name) > 200 or "\x00" in name:
            raise InvalidLabelError(f"a dataset needs a name of 1 to 200 characters, got {name!r}")
        if not isinstance(kind, str) or not kind:
            raise InvalidLabelError(f"a dataset needs a kind, got {kind!r}")
        if not text.startswith("{"):
            raise InvalidLabelError("a dataset payload must be a JSON object")
        write_labels = self._writes.rows_tx(label_rows, "import") if label_rows else None

        def tx(cur: Cursor) -> Any:
            now = self._b.now(cur)
            # One statement decides, so two concurrent imports of one new name cannot both "create" it.
            on_conflict = ("DO UPDATE SET kind = excluded.kind, payload = excluded.payload,"
                           " sha256 = excluded.sha256") if replace else "DO NOTHING"
            written = cur.execute("INSERT INTO datasets (name, kind, payload, sha256, created_at)"
                                  f" VALUES (?, ?, ?, ?, ?) ON CONFLICT (name) {on_conflict} RETURNING created_at",
                                  (name, kind, text, digest, now)).fetchone()
            if written is None:
                # Identical content again is no change (its labels may still be new); other content is refused.
                found = cur.execute("SELECT sha256, created_at FROM datasets WHERE name = ?", (name,)).fetchone()
                if found is None or found[0] != digest:
                    raise StoreError(f"a dataset named {name!r} is already in the label store {self._h.url} with other"
                                     " content; nothing was written (import with --replace to replace it, its labels"
                                     " are kept, or choose another name)")
                written = found[1:]
            if also is not None:
                also(cur)
            if write_labels is not None:
                write_labels(cur)
            return written[0]

        created = self._b.ts_out(self._h.write(tx))
        return dataset_info(name, kind, digest, created, {"summary": dict(summary)})

    def head(self, name: str) -> tuple[str, str] | None:
        """``(kind, sha256)`` of the dataset stored under ``name``, or ``None``; the payload is not read."""
        row = self._b.read(lambda cur: cur.execute("SELECT kind, sha256 FROM datasets WHERE name = ?",
                                                   (name,)).fetchone())
        return None if row is None else (str(row[0]), str(row[1]))

    def dataset(self, name: str) -> StoredDataset | None:
        """The dataset stored under ``name`` (payload parsed back from JSON), or ``None``."""
        row = self._b.read(lambda cur: cur.execute(
            "SELECT name, kind, payload, sha256, created_at FROM datasets WHERE name = ?", (name,)).fetchone())
        if row is None:
            return None
        return StoredDataset(row[0], row[1], json.loads(row[2]), row[3], self._b.ts_out(row[4]))

    def dataset_revision(self, name: str) -> str | None:
        """The SHA-256 of the dataset stored under ``name`` (its revision), without reading the payload; ``None``
        when there is none.  An open page compares it with the revision it opened before each write."""
        row = self._b.read(lambda cur: cur.execute("SELECT sha256 FROM datasets WHERE name = ?", (name,)).fetchone())
        return None if row is None else str(row[0])

    def dataset_names(self) -> list[str]:
        """The name of every stored dataset, sorted, without reading the payloads (a page's dataset picker)."""
        rows = self._b.read(lambda cur: cur.execute("SELECT name FROM datasets ORDER BY name").fetchall())
        return [r[0] for r in rows]

    def datasets(self) -> list[DatasetInfo]:
        """Every stored dataset, sorted by name (``cases``/``units`` from ``payload["summary"]``)."""
        rows = self._b.read(lambda cur: cur.execute(
            "SELECT name, kind, payload, sha256, created_at FROM datasets ORDER BY name").fetchall())
        return [dataset_info(n, k, h, self._b.ts_out(t), json.loads(p)) for n, k, p, h, t in rows]
