"""Connections that scale (issue 30.3) and one connection rule for both backends (issue 27).

* :class:`~playground.store.connection.HeldConnection` on a fake clock and
  fake connections: opened on use, reused, closed once idle ``idle`` seconds
  (not a moment before), reopened after, never the parent's after ``fork()``.
* A real PostgreSQL with ``max_connections = 8``: 24 store objects (a class's
  kernels) writing at once all save every label, since each holds a
  connection only around its transactions and waits for a free one; with
  connections kept open (``idle_close=0``, the old behaviour) the ninth store
  is refused — in words, after its wait — and so is a page, which says so and
  logs it on the server.
"""
from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator

import pytest
from store_fixtures import claim

from playground.store import StoreError, open_store
from playground.store.connection import HeldConnection
from playground.store.postgres import ENV_IDLE_CLOSE, IDLE_CLOSE, idle_close_from_env, is_too_many_connections

# --- the rule, on a fake clock ----------------------------------------------------------------------------------


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class Conn:
    def __init__(self, n: int) -> None:
        self.n = n
        self.closed = False


def held(idle: float | None) -> tuple[HeldConnection[Conn], Clock, list[Conn]]:
    clock, made = Clock(), []

    def open_() -> Conn:
        made.append(Conn(len(made) + 1))
        return made[-1]

    def close_(conn: Conn) -> None:
        conn.closed = True

    return HeldConnection(open_, close_, usable=lambda c: not c.closed, idle=idle, clock=clock), clock, made


def test_a_connection_is_opened_on_first_use_and_reused():
    h, _clock, made = held(idle=None)
    assert h.current is None and made == []
    first = h.get()
    assert h.get() is first and h.opened == 1 and made == [first]
    h.close()
    assert first.closed and h.current is None


def test_an_idle_connection_closes_exactly_at_idle_seconds_and_the_next_use_opens_one():
    h, clock, made = held(idle=2.0)
    conn = h.get()
    h.release()  # the transaction ended at t = 100
    clock.now = 101.999
    h._expire()  # the timer looked too early: used 1.999 s ago, kept
    assert not conn.closed and h.current is conn
    clock.now = 102.0
    h._expire()  # 2.0 s unused: closed
    assert conn.closed and h.current is None
    again = h.get()
    assert again is not conn and h.opened == 2 and made == [conn, again]
    h.close()


def test_a_use_after_release_restarts_the_idle_clock():
    h, clock, _made = held(idle=2.0)
    conn = h.get()
    h.release()
    clock.now = 101.5
    h.get()
    h.release()  # used again at 101.5: open until 103.5
    clock.now = 103.0
    h._expire()
    assert not conn.closed
    clock.now = 103.5
    h._expire()
    assert conn.closed
    h.close()


def test_without_an_idle_time_nothing_is_scheduled():
    h, _clock, _made = held(idle=None)
    h.get()
    h.release()
    assert h._timer is None
    h.close()


def test_a_broken_connection_is_closed_and_replaced():
    h, _clock, made = held(idle=None)
    first = h.get()
    first.closed = True  # the server dropped it
    second = h.get()
    assert second is not first and made == [first, second]
    h.close()


def test_after_fork_the_parents_connection_is_neither_used_nor_closed():
    h, _clock, made = held(idle=None)
    parents = h.get()
    h._pid = os.getpid() + 1  # as a forked child sees it: the connection was opened by another process
    assert h.current is None
    h.close()
    assert not parents.closed  # closing it would end the parent's session
    mine = h.get()
    assert mine is not parents and made == [parents, mine]
    h.close()
    assert mine.closed


def test_the_idle_time_comes_from_the_environment(monkeypatch):
    monkeypatch.delenv(ENV_IDLE_CLOSE, raising=False)
    assert idle_close_from_env() == IDLE_CLOSE == 2.0
    monkeypatch.setenv(ENV_IDLE_CLOSE, "0.5")
    assert idle_close_from_env() == 0.5
    monkeypatch.setenv(ENV_IDLE_CLOSE, "0")
    assert idle_close_from_env() is None  # 0: keep connections open
    for bad in ("-1", "soon"):
        monkeypatch.setenv(ENV_IDLE_CLOSE, bad)
        with pytest.raises(StoreError, match=ENV_IDLE_CLOSE):
            idle_close_from_env()


def test_too_many_connections_is_recognised_by_its_sqlstate_or_its_words():
    class Refused(Exception):
        sqlstate = "53300"

    assert is_too_many_connections(Refused("x"))
    assert is_too_many_connections(Exception('connection failed: FATAL:  sorry, too many clients already'))
    assert is_too_many_connections(Exception("FATAL: remaining connection slots are reserved for roles with the "
                                             "SUPERUSER attribute"))
    assert not is_too_many_connections(Exception("password authentication failed for user \"x\""))


# --- a real PostgreSQL with max_connections = 8 ---------------------------------------------------------------

SLOTS = 8


@pytest.fixture(scope="module")
def small_pg() -> Iterator[str]:
    from playground.store.pgtest import ENV_REQUIRE, ClusterUnavailable, start_cluster

    try:
        cluster = start_cluster(max_connections=SLOTS)
    except ClusterUnavailable as exc:
        if os.environ.get(ENV_REQUIRE) == "1":
            pytest.fail(f"{ENV_REQUIRE}=1 but {exc}")
        pytest.skip(f"no PostgreSQL server could be started: {exc}")
    try:
        yield cluster.url
    finally:
        cluster.stop()


def _ours(admin) -> int:
    row = admin.execute("SELECT count(*) FROM pg_stat_activity WHERE application_name = 'rag-label-playground'"
                        ).fetchone()
    return int(row[0])


def _wait_for(predicate, timeout: float) -> bool:
    end = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > end:
            return False
        time.sleep(0.05)
    return True


@pytest.mark.postgres
def test_a_class_larger_than_max_connections_saves_every_label(small_pg, monkeypatch):
    """24 kernels, 8 server slots (one of them ours to watch): every label saved, no connection left idle."""
    import psycopg

    monkeypatch.setenv(ENV_IDLE_CLOSE, "0.2")
    with open_store(small_pg):  # created once, as `playground serve` does
        pass
    errors: list[str] = []
    barrier = threading.Barrier(24)

    def kernel(k: int) -> None:
        try:
            with open_store(small_pg, create=False) as store:
                barrier.wait(timeout=60)
                for i in range(5):
                    store.set_label(f"student-{k:02d}", claim(i), "supported", (i + k) % 2)
        except Exception as exc:
            errors.append(f"student-{k:02d}: {type(exc).__name__}: {exc}")

    with psycopg.connect(small_pg, autocommit=True) as admin:
        threads = [threading.Thread(target=kernel, args=(k,)) for k in range(24)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=120)
        assert errors == []
        with open_store(small_pg, read_only=True, create=False) as store:
            labels = store.labels()
            assert len(labels) == 24 * 5
            assert {(x.annotator, x.value) for x in labels if x.unit_id == claim(0).unit_id} == {
                (f"student-{k:02d}", k % 2) for k in range(24)}
            assert store.verify() == []
        assert _wait_for(lambda: _ours(admin) == 0, 10), "connections were left open after 0.2 s idle"


@pytest.mark.postgres
def test_a_store_kept_idle_gives_its_connection_back_and_reopens_on_the_next_write(small_pg, monkeypatch):
    import psycopg

    monkeypatch.setenv(ENV_IDLE_CLOSE, "0.2")
    with psycopg.connect(small_pg, autocommit=True) as admin, open_store(small_pg) as store:
        store.set_label("ann", claim(1), "supported", 1)
        backend = store._b
        assert _wait_for(lambda: not backend.holds_connection, 10)
        assert _ours(admin) == 0
        opened = backend.connections_opened
        store.set_label("ann", claim(2), "supported", 0)
        assert backend.connections_opened == opened + 1
        assert [(x.unit_id, x.value) for x in store.labels(annotator="ann")] == sorted(
            [(claim(1).unit_id, 1), (claim(2).unit_id, 0)])


@pytest.mark.slow
@pytest.mark.postgres
def test_kept_open_connections_run_out_and_the_store_and_the_page_say_so(small_pg, monkeypatch, capfd):
    """The old behaviour (``idle_close=0``): eight stores hold the eight slots; the ninth is refused in words,
    and a page that cannot reach the store says so on the page and in the server's log."""
    import IPython.display

    from playground.ui import launch

    monkeypatch.setenv(ENV_IDLE_CLOSE, "0")
    held_open = []
    try:
        while len(held_open) < SLOTS:
            held_open.append(open_store(small_pg, busy_timeout=1.0))
        t0 = time.monotonic()
        with pytest.raises(StoreError) as refused:
            open_store(small_pg, busy_timeout=1.0)
        assert time.monotonic() - t0 >= 1.0  # it waited for a slot before saying so
        assert "has no free connection" in str(refused.value)
        assert "max_connections" in str(refused.value) and "nothing was saved" in str(refused.value)

        shown: list = []
        monkeypatch.setattr(IPython.display, "display", lambda widget: shown.append(widget))
        capfd.readouterr()
        assert launch(db=small_pg, display=True) is None
        assert len(shown) == 1
        assert "The playground cannot start." in shown[0].value
        assert "has no free connection" in shown[0].value
        log = capfd.readouterr().err
        assert "playground: a page cannot start: StoreError: the PostgreSQL label store" in log
        assert "has no free connection" in log
    finally:
        for store in held_open:
            store.close()
