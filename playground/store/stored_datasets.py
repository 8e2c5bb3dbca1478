"""Datasets stored in the label store: canonical JSON with its SHA-256, written with their labels at once.

:meth:`DatasetsMixin.put_dataset` writes the dataset and its label rows in ONE
transaction (all or nothing).  A name already stored with other content is
refused unless ``replace``; the same content again changes nothing (its labels
may still be new).  The SHA-256 of the canonical JSON is the dataset's revision.
"""
from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from ..model import Unit
from .base import Cursor
from .checks import canonical_json, dataset_info
from .dataset_text import put_dataset_text
from .errors import InvalidLabelError
from .handle import StoreHandle
from .types import DatasetInfo, StoredDataset

__all__ = ["DatasetsMixin"]


class DatasetsMixin(StoreHandle):
    """The dataset methods of :class:`~playground.store.core.LabelStore`."""

    if TYPE_CHECKING:
        def _rows_tx(self, rows: Sequence[tuple[str, Unit, str, int]], action: str,
                     comments: Sequence[tuple[str, Unit, str]] = ()
                     ) -> Callable[[Cursor], tuple[int, int, list[str], int | None]]: ...

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
        return put_dataset_text(self, name, kind, text, digest, summary if isinstance(summary, dict) else {},
                                label_rows=label_rows, replace=replace, also=also)

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
