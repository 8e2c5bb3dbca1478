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
from typing import Any

from ..model import Unit
from .base import Cursor
from .core import LabelStore
from .types import DatasetInfo

__all__ = ["dataset_head", "put_dataset_text"]


def dataset_head(store: LabelStore, name: str) -> tuple[str, str] | None:
    """``(kind, sha256)`` of the dataset stored under ``name``, or ``None``; the payload is not read."""
    return store.stored_datasets.head(name)


def put_dataset_text(store: LabelStore, name: str, kind: str, text: str, digest: str, summary: Mapping[str, Any], *,
                     label_rows: Sequence[tuple[str, Unit, str, int]] = (), replace: bool = False,
                     also: Callable[[Cursor], Any] | None = None) -> DatasetInfo:
    """:meth:`LabelStore.put_dataset` for a payload given as its canonical JSON ``text`` (sha256 ``digest``):
    :meth:`~.stored_datasets.StoredDatasets.put_text` (one transaction, all or nothing)."""
    return store.stored_datasets.put_text(name, kind, text, digest, summary, label_rows=label_rows,
                                          replace=replace, also=also)
