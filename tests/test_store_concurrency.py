"""Several processes writing one store at once, and a writer killed with SIGKILL, on both backends.

Workers run in ``spawn``-ed processes (tests/store_fixtures.py), each opening
its own store, as several Voila kernels would.
"""
from __future__ import annotations

import multiprocessing as mp
import os
import signal
import time

import pytest
import store_fixtures as sf
from store_fixtures import flipper, worker_units, writer

from playground.store import open_store

# pytest fixtures, used by name as test arguments (assigned, not imported, so a test argument is no redefinition)
pg_server = sf.pg_server
store_url = sf.store_url

CTX = mp.get_context("spawn")


def run_all(procs, timeout=120):
    for p in procs:
        p.start()
    deadline = time.monotonic() + timeout
    for p in procs:
        p.join(max(0.1, deadline - time.monotonic()))
    alive = [p for p in procs if p.is_alive()]
    for p in alive:
        p.kill()
    assert not alive, "workers did not finish in time"
    assert [p.exitcode for p in procs] == [0] * len(procs)


@pytest.mark.slow
@pytest.mark.parametrize("n_procs, per_proc, tabs", [(4, 500, 1), (8, 250, 2)], ids=["4x500", "8x250"])
def test_concurrent_writers_lose_nothing(store_url, n_procs, per_proc, tabs):
    """n processes write at once; with tabs=2 two processes share each annotator name (two browser tabs)."""
    if tabs == 1:
        open_store(store_url).close()  # created up front; with tabs=2 the workers race to create it
    barrier = CTX.Barrier(n_procs)
    procs = []
    for k in range(n_procs):
        annotator = f"annotator-{k // tabs}"
        offset = (k % tabs) * per_proc  # tabs of one person label different units
        procs.append(CTX.Process(target=writer, args=(store_url, annotator, per_proc, offset, barrier)))
    run_all(procs)
    with open_store(store_url) as s:
        labels = s.labels()
        assert len(labels) == n_procs * per_proc
        assert len(s.events()) == n_procs * per_proc
        units = worker_units(tabs * per_proc)
        expected = {(f"annotator-{k // tabs}", units[i].unit_id, (i + len(f"annotator-{k // tabs}")) % 2)
                    for k in range(n_procs) for i in range((k % tabs) * per_proc, (k % tabs + 1) * per_proc)}
        assert {(label.annotator, label.unit_id, label.value) for label in labels} == expected
        assert s.annotators() == sorted({f"annotator-{k // tabs}" for k in range(n_procs)})
        assert s.integrity_check() == []


@pytest.mark.slow
def test_two_tabs_changing_the_same_labels_keep_an_exact_chain(store_url, tmp_path):
    """Same annotator, same units, two processes: every returned event is stored once, the chain is unbroken,
    and each current label is the one written last."""
    open_store(store_url).close()
    barrier = CTX.Barrier(2)
    reports = [tmp_path / f"flip{k}.txt" for k in range(2)]
    procs = [CTX.Process(target=flipper, args=(store_url, "same person", 8, 150, k, barrier, str(reports[k])))
             for k in range(2)]
    run_all(procs)
    returned = [line.split() for r in reports for line in r.read_text().splitlines()]
    with open_store(store_url) as s:
        events = s.events()
        assert sorted(int(e) for e, _ in returned) == [e.event_id for e in events]  # none lost, none duplicated
        assert s.verify() == []  # old_value of each event == new_value of the previous one on that label
        last = {}
        for e in events:
            last[e.unit_id] = e
        for label in s.labels():
            assert label.value == last[label.unit_id].new_value
            assert label.updated_at == last[label.unit_id].created_at
        # Later event ids carry later (or equal) times on each label: "the later one by server time" wins.
        by_unit = {}
        for e in events:
            by_unit.setdefault(e.unit_id, []).append(e.created_at)
        assert all(times == sorted(times) for times in by_unit.values())


@pytest.mark.slow
def test_writer_killed_mid_loop_loses_no_returned_label(store_url, tmp_path):
    open_store(store_url).close()
    report = tmp_path / "returned.txt"
    report.touch()
    proc = CTX.Process(target=writer, args=(store_url, "victim", 100_000, 0, None, str(report)))
    proc.start()
    deadline = time.monotonic() + 60
    while report.read_bytes().count(b"\n") < 300 and time.monotonic() < deadline and proc.is_alive():
        time.sleep(0.01)
    os.kill(proc.pid, signal.SIGKILL)
    proc.join(10)
    assert proc.exitcode == -signal.SIGKILL
    data = report.read_bytes()
    returned = [int(x) for x in data[: data.rfind(b"\n") + 1].split()]  # complete lines only
    assert len(returned) >= 300
    units = worker_units(max(returned) + 2)
    with open_store(store_url) as s:
        stored = {label.unit_id: label.value for label in s.labels(annotator="victim")}
        for i in returned:
            assert stored.get(units[i].unit_id) == (i + len("victim")) % 2, f"label {i} returned but is missing"
        assert len(stored) in (len(returned), len(returned) + 1)  # at most the one in flight beyond
        assert s.integrity_check() == []
        assert s.set_label("victim", units[0], "correct", 1) is not None  # the store is usable afterwards
