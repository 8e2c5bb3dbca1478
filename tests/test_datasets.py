"""playground.datasets: the shipped set and imported ones behind one API."""
from __future__ import annotations

from pathlib import Path

import pytest

from playground.datasets import SHIPPED, DatasetNotFound, dataset_names, open_dataset
from playground.importers.load import import_dataset
from playground.store import open_store
from playground.units import dataset_units, retrieved_passages

FIX = Path(__file__).resolve().parent / "fixtures"


def test_golden_is_the_default_and_uses_retrieval(mini_root):
    opened = open_dataset(None, root=mini_root)
    assert (opened.name, opened.kind, SHIPPED) == ("golden", "golden", "golden")
    assert opened.passages == retrieved_passages(opened.dataset)
    assert opened.units() == dataset_units(opened.dataset)
    assert open_dataset("golden", root=mini_root).catalog() == opened.catalog()


def test_names_and_not_found(tmp_path):
    assert dataset_names() == ["golden"]
    with open_store(tmp_path / "l.db") as store:
        assert dataset_names(store) == ["golden"]
        import_dataset(FIX / "ragas_single.jsonl", "ragas", "zeta", store)
        import_dataset(FIX / "deepeval_goldens.json", "deepeval", "alpha", store)
        assert dataset_names(store) == ["golden", "alpha", "zeta"]
        with pytest.raises(DatasetNotFound, match=r"no dataset named 'nope' in sqlite:.*; known: golden, alpha, zeta"):
            open_dataset("nope", store)
        opened = open_dataset("alpha", store)
    assert opened.kind == "deepeval" and sorted(opened.passages) == ["alpha:trace-1", "alpha:trace-2", "alpha:trace-3"]
    # an import's passages are its contexts as given, in order
    assert [p.text for p in opened.passages["alpha:trace-3"]] == ["Every plan starts with a 14-day free trial."]
    with pytest.raises(DatasetNotFound, match="no label store given"):
        open_dataset("alpha")
    assert issubclass(DatasetNotFound, ValueError)
