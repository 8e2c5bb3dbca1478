"""Beyond one machine: the harness scores on Dask's executor (a LocalCluster on loopback here), same bytes."""
from __future__ import annotations

import os

import distributed
import pytest
from test_harness_jobs import folder_bytes, write_samples

from playground.datasets import open_dataset
from playground.harness.config import load_config
from playground.harness.run_dataset import run_dataset
from playground.importers.load import import_dataset
from playground.store import open_store


@pytest.mark.parametrize("processes", [False, True], ids=["threads", "two-worker-processes"])
def test_a_dataset_run_on_a_dask_cluster_writes_the_same_bytes(tmp_path, monkeypatch, processes):
    monkeypatch.setenv("PLAYGROUND_CACHE", "off")
    monkeypatch.setattr("playground.harness.run_dataset.CHUNK", 4)
    with open_store(tmp_path / "labels.db") as store:
        import_dataset(write_samples(tmp_path / "s.jsonl", 15), "ragas", "big", store)
        opened = open_dataset("big", store)
    config = load_config()
    run_dataset(config, opened, tmp_path / "here", progress=False)
    environ = dict(os.environ)  # a nanny sets thread and hash variables in this process: put them back after
    cluster = distributed.LocalCluster(n_workers=2 if processes else 1, threads_per_worker=1 if processes else 2,
                                       processes=processes, protocol="tcp", host="127.0.0.1",
                                       dashboard_address=None)
    try:
        with distributed.Client(cluster) as client:
            run_dataset(config, opened, tmp_path / "dask", progress=False, executor=client.get_executor())
    finally:
        cluster.close()
        os.environ.clear()
        os.environ.update(environ)
    assert folder_bytes(tmp_path / "dask") == folder_bytes(tmp_path / "here")
