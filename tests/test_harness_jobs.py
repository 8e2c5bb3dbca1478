"""The harness on a process pool or any executor: the same bytes as one process, results in case order."""
from __future__ import annotations

import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from test_session_lazy import write_samples  # the same generated RAGAS samples as the page's lazy tests

from playground.cli import main
from playground.datasets import open_dataset
from playground.harness import pool
from playground.harness import run_dataset as run_dataset_module
from playground.harness.config import load_config
from playground.harness.run import RunError, run_harness
from playground.harness.run_dataset import run_dataset
from playground.importers.load import import_dataset
from playground.store import open_store


def folder_bytes(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture
def db(tmp_path, monkeypatch):
    monkeypatch.setenv("PLAYGROUND_CACHE", str(tmp_path / "cache"))
    path = tmp_path / "labels.db"
    with open_store(path) as store:
        import_dataset(write_samples(tmp_path / "s.jsonl", 23), "ragas", "big", store)
    return path


@pytest.fixture
def small_chunks(monkeypatch):
    """Chunks of 5 cases: 23 cases are 5 chunks, so the order in which they come back matters."""
    monkeypatch.setattr(run_dataset_module, "CHUNK", 5)
    monkeypatch.setattr("playground.harness.run.CHUNK", 5)


def test_a_dataset_run_on_two_processes_writes_the_same_bytes_as_on_one(db, tmp_path, small_chunks):
    one = tmp_path / "one"
    two = tmp_path / "two"
    assert main(["harness", "run", "--dataset", "big", "--db", str(db), "--out", str(one), "--quiet"]) == 0
    assert main(["harness", "run", "--dataset", "big", "--db", str(db), "--out", str(two), "--quiet",
                 "--jobs", "2"]) == 0
    files = folder_bytes(one)
    assert sorted(files) == ["cases.csv", "cases.jsonl", "config.yaml", "report.json", "run.json", "units.csv"]
    assert folder_bytes(two) == files
    lines = files["cases.jsonl"].decode().splitlines()
    assert [json.loads(line)["case_id"] for line in lines] == sorted(json.loads(line)["case_id"] for line in lines)
    assert len(lines) == 23


def test_the_page_cache_a_run_fills_is_the_same_with_two_processes(db, tmp_path, small_chunks, monkeypatch):
    from playground.harness.case_cache import CaseHarness, dataset_fingerprint

    with open_store(db, create=False, read_only=True) as store:
        opened = open_dataset("big", store)
    config = load_config()
    key = dataset_fingerprint("big", opened.revision, config)
    kept = {}
    for jobs in (1, 2):
        monkeypatch.setenv("PLAYGROUND_CACHE", str(tmp_path / f"cache{jobs}"))
        run_dataset(config, opened, tmp_path / f"run{jobs}", progress=False, jobs=jobs)
        harness = CaseHarness(opened.dataset, opened.passages, config, key)
        kept[jobs] = {c: harness.cases.get(c) for c in sorted(opened.dataset.cases)}
        assert all(kept[jobs].values()) and harness.cases.path is not None
    assert kept[1] == kept[2]


def test_any_executor_runs_it_and_results_come_back_in_case_order(db, tmp_path, small_chunks, monkeypatch):
    """A thread pool whose later chunks finish first: the files are still the same bytes."""
    real = run_dataset_module.score_chunk
    order: list[str] = []
    lock = threading.Lock()
    with open_store(db, create=False, read_only=True) as store:
        opened = open_dataset("big", store)
    first = min(opened.dataset.cases)

    def slow_first(chunk):
        starts = chunk[2][0][0].case_id
        time.sleep(0.5 if starts == first else 0)  # the first chunk sent comes back last
        with lock:
            order.append(starts)
        return real(chunk)

    monkeypatch.setattr(run_dataset_module, "score_chunk", slow_first)
    config = load_config()
    run_dataset(config, opened, tmp_path / "here", progress=False)
    order.clear()
    with ThreadPoolExecutor(max_workers=3) as executor:
        run_dataset(config, opened, tmp_path / "threads", progress=False, executor=executor)
    assert order != sorted(order)  # the first chunk finished after others
    assert folder_bytes(tmp_path / "threads") == folder_bytes(tmp_path / "here")


def test_the_shipped_set_on_two_processes_writes_the_same_bytes(mini_root, tmp_path, small_chunks):
    config = load_config()
    run_harness(config, tmp_path / "one", root=mini_root, progress=False)
    run_harness(config, tmp_path / "two", root=mini_root, progress=False, jobs=2)
    assert folder_bytes(tmp_path / "two") == folder_bytes(tmp_path / "one")


def test_jobs_zero_is_one_per_cpu_and_below_zero_is_refused(db, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(pool.os, "cpu_count", lambda: 3)
    assert pool.workers(0) == 3 and pool.workers(1) == 1 and pool.workers(2) == 2
    with pytest.raises(ValueError, match="--jobs must be 0"):
        pool.workers(-1)
    code = main(["harness", "run", "--dataset", "big", "--db", str(db), "--out", str(tmp_path / "r"), "--quiet",
                 "--jobs", "-1"])
    assert code == 1
    assert "error: --jobs must be 0 (one per CPU) or more, got -1" in capsys.readouterr().err
    assert not (tmp_path / "r").exists()


def test_a_run_with_models_refuses_more_than_one_job(tmp_path):
    config = load_config()
    config.data["judge"] = {**config.data["judge"], "enabled": True}
    assert config.uses_models
    with pytest.raises(RunError, match="--jobs 2: a configuration that calls models runs with --jobs 1"):
        run_harness(config, tmp_path / "r", progress=False, jobs=2)


def test_ordered_map_keeps_the_order_and_a_bounded_window():
    in_flight = []
    running = [0]
    lock = threading.Lock()

    def work(x: int) -> int:
        with lock:
            running[0] += 1
            in_flight.append(running[0])
        time.sleep(0.02 * (5 - x % 5))
        with lock:
            running[0] -= 1
        return x * x

    with ThreadPoolExecutor(max_workers=8) as executor:
        assert list(pool.ordered_map(work, range(20), executor, window=3)) == [x * x for x in range(20)]
    assert max(in_flight) <= 3
    assert list(pool.ordered_map(work, range(4), None)) == [0, 1, 4, 9]
    assert list(pool.chunked(range(7), 3)) == [[0, 1, 2], [3, 4, 5], [6]]


def test_an_error_in_a_worker_is_raised_and_no_report_is_left(db, tmp_path, monkeypatch):
    def broken(chunk):
        raise ValueError("scorer broke")

    monkeypatch.setattr(run_dataset_module, "score_chunk", broken)
    with open_store(db, create=False, read_only=True) as store:
        opened = open_dataset("big", store)
    with ThreadPoolExecutor(max_workers=2) as executor, pytest.raises(ValueError, match="scorer broke"):
        run_dataset(load_config(), opened, tmp_path / "r", progress=False, executor=executor)
    assert sorted(p.name for p in (tmp_path / "r").iterdir()) == []


def test_the_labels_for_the_floors_are_the_stores_current_labels_without_the_whole_catalog(db):
    from playground.harness.run_dataset import current_labels

    with open_store(db) as store:
        opened = open_dataset("big", store)
        catalog = opened.catalog()
        cases = sorted(opened.dataset.cases)
        labelled = [u for u in catalog.values() if u.case_id in (cases[2], cases[17])]
        for i, unit in enumerate(labelled):
            store.set_label("alice", unit, unit.dimensions[0], i % 2)
        assert current_labels(opened, store) == store.current_labels(catalog)
        assert len(current_labels(opened, store)) == len(labelled) > 0
