"""A dataset written from its canonical JSON text, and a dataset's kind and revision read without its payload.

:meth:`playground.store.LabelStore.put_dataset` takes the payload as a dict,
serialises it (:func:`.checks.canonical_json`) and writes it here.  An importer of a large file
serialises it sample by sample instead (never holding the dict and its text at
once) and hands the text here: :func:`put_dataset_text` runs the same one
transaction on the same columns (``datasets``: name, kind, payload, sha256,
created_at; the sha256 that of the text's UTF-8 bytes), so the stored bytes are
those ``put_dataset`` would store for the payload the text is the canonical JSON of.

:func:`dataset_head` reads ``(kind, sha256)`` of a stored dataset without
reading (or parsing) its payload, which at 100,000 samples is hundreds of MiB.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..model import Unit
from .base import Cursor
from .checks import dataset_info
from .errors import InvalidLabelError, StoreError
from .types import DatasetInfo

if TYPE_CHECKING:
    from .stored_datasets import DatasetsMixin

__all__ = ["dataset_head", "put_dataset_text"]


def dataset_head(store: DatasetsMixin, name: str) -> tuple[str, str] | None:
    """``(kind, sha256)`` of the dataset stored under ``name``, or ``None``; the payload is not read."""
    row = store._b.read(lambda cur: cur.execute("SELECT kind, sha256 FROM datasets WHERE name = ?",
                                                (name,)).fetchone())
    return None if row is None else (str(row[0]), str(row[1]))


def put_dataset_text(store: DatasetsMixin, name: str, kind: str, text: str, digest: str, summary: Mapping[str, Any], *,
                     label_rows: Sequence[tuple[str, Unit, str, int]] = (), replace: bool = False,
                     also: Callable[[Cursor], Any] | None = None) -> DatasetInfo:
    """:meth:`LabelStore.put_dataset` for a payload given as its canonical JSON ``text`` (sha256 ``digest``).

    One transaction, all or nothing: the row (inserted, replaced with ``replace=True``,
    or left as it is when the stored sha256 is ``digest``; other content without
    ``replace`` is a :class:`StoreError`), then ``also``, then ``label_rows`` as
    ``import`` events.  ``summary`` is the payload's ``summary`` (cases, units) for
    the returned :class:`DatasetInfo`.  The caller guarantees that ``text`` is the
    canonical JSON of a JSON object and ``digest`` the SHA-256 of its UTF-8 bytes.
    """
    if not isinstance(name, str) or not name.strip() or len(name) > 200 or "\x00" in name:
        raise InvalidLabelError(f"a dataset needs a name of 1 to 200 characters, got {name!r}")
    if not isinstance(kind, str) or not kind:
        raise InvalidLabelError(f"a dataset needs a kind, got {kind!r}")
    if not text.startswith("{"):
        raise InvalidLabelError("a dataset payload must be a JSON object")
    write_labels = store._rows_tx(label_rows, "import") if label_rows else None

    def tx(cur: Cursor) -> Any:
        now = store._b.now(cur)
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
                raise StoreError(f"a dataset named {name!r} is already in the label store {store.url} with other"
                                 " content; nothing was written (import with --replace to replace it, its labels"
                                 " are kept, or choose another name)")
            written = found[1:]
        if also is not None:
            also(cur)
        if write_labels is not None:
            write_labels(cur)
        return written[0]

    created = store._b.ts_out(store._write(tx))
    return dataset_info(name, kind, digest, created, {"summary": dict(summary)})
