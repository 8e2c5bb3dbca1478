"""Every labellable unit of a dataset: the passages retrieved for each case, claims and facts.

Passages are those the configured retrieval (by default ``configs/default.yaml``:
per-heading chunks, BM25 top 5 within the tenant) returns for each case, so
people label exactly what the harness scores
(:func:`playground.datasets.retrieved_passages`, re-exported here).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from .datasets import SHIPPED, dataset_names, open_dataset, retrieved_passages
from .golden import Dataset, load_dataset
from .model import Unit

__all__ = ["dataset_units", "load_catalog", "retrieved_passages"]


def dataset_units(dataset: Dataset, config: Any = None) -> list[Unit]:
    """All units in a stable order: per case, its passages, then per response its claims and facts."""
    return dataset.units(retrieved_passages(dataset, config))


def load_catalog(root: str | Path | None = None, config: Any = None, store: Any = None) -> dict[str, Unit]:
    """``unit_id → Unit`` for the dataset at ``root`` (default: the repository's own).

    Units of data sets imported into ``root/imported/*.dataset.json`` (by
    ``playground import ragtruth --out``) are included, and with a ``store``
    the units of every dataset imported into it, so their labels count as
    known units rather than orphans.
    """
    from .installed import REPO_ROOT

    dataset = load_dataset(root)
    catalog = {u.unit_id: u for u in dataset_units(dataset, config)}
    for path in sorted((Path(root) if root is not None else REPO_ROOT).glob("imported/*.dataset.json")):
        from .importers.claim_dataset import load_imported

        catalog.update(load_imported(path).catalog())
    if store is not None:
        for name in dataset_names(store):
            if name != SHIPPED:
                catalog.update(open_dataset(name, store, root).catalog())
    return catalog
