"""playground.datasets on each store backend."""
from __future__ import annotations

import pytest
from store_fixtures import pg_server, store_url  # noqa: F401  (fixtures)

from playground.datasets import dataset_names
from playground.store import open_store


@pytest.fixture
def backend(store_url):  # noqa: F811
    with open_store(store_url) as s:
        yield s


def test_dataset_names_come_without_reading_payloads(backend):
    """``LabelStore.dataset_names`` (the page's picker) is the names ``datasets()`` lists, sorted, on each backend."""
    assert backend.dataset_names() == [] and dataset_names(backend) == ["golden"]
    backend.put_dataset("zeta", "ragas", {"summary": {"cases": 1, "units": 2}})
    backend.put_dataset("Alpha", "table", {"x": 1})
    assert backend.dataset_names() == [d.name for d in backend.datasets()] == ["Alpha", "zeta"]
    assert dataset_names(backend) == ["golden", "Alpha", "zeta"]
