"""The three dataset calls of the label store, whichever side provides them.

The shared interface puts ``put_dataset``, ``dataset`` and ``datasets`` on
:class:`playground.store.LabelStore`.  Until that lands, the same calls come
from :mod:`playground.store.datasets` (functions on a store, same semantics:
the dataset and its labels in one transaction).  Importers, exporters and
:mod:`playground.datasets` go through this module only, so switching is one
place.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..model import Unit
from ..store import datasets as fallback

__all__ = ["dataset", "datasets", "put_dataset"]


def put_dataset(store: Any, name: str, kind: str, payload: dict[str, Any], *,
                label_rows: Iterable[tuple[str, Unit, str, int]] = (), replace: bool = False) -> Any:
    """Store the dataset and its label rows in one transaction (see the store's ``put_dataset``)."""
    method = getattr(store, "put_dataset", None)
    if method is not None:
        return method(name, kind, payload, label_rows=list(label_rows), replace=replace)
    return fallback.put_dataset(store, name, kind, payload, label_rows=label_rows, replace=replace)


def dataset(store: Any, name: str) -> Any:
    """The stored dataset ``name`` (``name, kind, payload, sha256, created_at``) or None."""
    method = getattr(store, "dataset", None)
    if method is not None:
        return method(name)
    return fallback.dataset(store, name)


def datasets(store: Any) -> list[Any]:
    """Every stored dataset (``name, kind, sha256, created_at, cases, units``), sorted by name."""
    method = getattr(store, "datasets", None)
    if method is not None:
        return list(method())
    return fallback.datasets(store)
