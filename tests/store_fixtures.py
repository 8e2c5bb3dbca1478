"""Fixtures and helpers for the label-store tests (both backends), and the worker processes they spawn.

``store_url`` is parametrised over SQLite and PostgreSQL.  PostgreSQL comes
from ``$PLAYGROUND_TEST_POSTGRES`` or, when unset, a throwaway cluster started
once per test session (:mod:`playground.store.pgtest`); each test gets its own
schema.  Without a server the PostgreSQL tests skip with the reason, unless
``PLAYGROUND_REQUIRE_POSTGRES=1``, which turns that into a failure.

Worker functions at the bottom run in ``spawn``-ed processes, which import
this module (and pytest with it) by name: keep module-level work cheap.
"""
from __future__ import annotations

import atexit
import os
import sys
import uuid
from pathlib import Path
from typing import Any
from urllib.parse import quote

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:  # the package may not be installed (editable) where the tests run
    sys.path.insert(0, str(REPO))

from playground.model import UNIT_DIMENSIONS, Unit, short_hash  # noqa: E402

ENV_URL = "PLAYGROUND_TEST_POSTGRES"
ENV_REQUIRE = "PLAYGROUND_REQUIRE_POSTGRES"

# --- units --------------------------------------------------------------------------------------


def claim(i: int, text: str | None = None, case: int | None = None) -> Unit:
    case_id = f"GC-{(case if case is not None else i // 10) + 1:04d}"
    text = text if text is not None else f"Claim number {i}."
    rid = f"{case_id}-R1"
    return Unit(
        "claim", f"{rid}:c{i}:{short_hash(text)}", case_id, rid, UNIT_DIMENSIONS["claim"], text, short_hash(text, 12)
    )


def fact(i: int, case: int = 0, text: str = "A fact.") -> Unit:
    case_id = f"GC-{case + 1:04d}"
    rid = f"{case_id}-R1"
    return Unit(
        "fact", f"{rid}::{case_id}-F{i}", case_id, rid, UNIT_DIMENSIONS["fact"], text, short_hash(text + str(i), 12)
    )


def passage(i: int, case: int = 0, text: str = "A passage.") -> Unit:
    case_id = f"GC-{case + 1:04d}"
    return Unit("passage", f"{case_id}::acme/doc#sec-{i}@{short_hash(text)}", case_id, "", UNIT_DIMENSIONS["passage"],
                text, short_hash(text + str(i), 12))


def catalog_of(units) -> dict[str, Unit]:
    return {u.unit_id: u for u in units}


def worker_units(n: int) -> list[Unit]:
    """The units concurrency workers label (claims in 10-unit cases)."""
    return [claim(i) for i in range(n)]


# --- PostgreSQL server --------------------------------------------------------------------------------

_SERVER: dict[str, object] = {}


def shared_pg_server() -> tuple[str | None, str]:
    """``(url, "")`` of the session's server, or ``(None, reason)`` when none can be had. Started once."""
    if "url" in _SERVER or "reason" in _SERVER:
        return _SERVER.get("url"), _SERVER.get("reason", "")  # type: ignore[return-value]
    from playground.store.pgtest import ClusterUnavailable, start_cluster, wait_ready

    url = os.environ.get(ENV_URL)
    try:
        if url:
            wait_ready(url, timeout=15)
        else:
            cluster = start_cluster()
            atexit.register(cluster.stop)
            url = cluster.url
        _SERVER["url"] = url
    except ClusterUnavailable as exc:
        _SERVER["reason"] = (f"PostgreSQL not reachable at ${ENV_URL} ({exc})" if url
                             else f"no PostgreSQL server could be started: {exc}")
    return _SERVER.get("url"), _SERVER.get("reason", "")  # type: ignore[return-value]


def with_options(url: str, schema: str) -> str:
    sep = "&" if "?" in url else "?"
    return f"{url}{sep}options={quote('-csearch_path=' + schema)}"


def new_pg_schema(server: str) -> tuple[str, str]:
    import psycopg

    schema = "t_" + uuid.uuid4().hex[:12]
    with psycopg.connect(server, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
    return schema, with_options(server, schema)


def drop_pg_schema(server: str, schema: str) -> None:
    import psycopg

    with psycopg.connect(server, autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


# --- pytest fixtures (imported into the test modules) ----------------------------------------------------

import pytest  # noqa: E402


@pytest.fixture(scope="session")
def pg_server() -> str:
    url, reason = shared_pg_server()
    if url is None:
        if os.environ.get(ENV_REQUIRE) == "1":
            pytest.fail(f"{ENV_REQUIRE}=1 but {reason}")
        pytest.skip(reason)
    return url


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def store_url(request, tmp_path):
    """A fresh, empty store location on each backend."""
    if request.param == "sqlite":
        yield str(tmp_path / "labels.db")
        return
    server = request.getfixturevalue("pg_server")
    schema, url = new_pg_schema(server)
    try:
        yield url
    finally:
        drop_pg_schema(server, schema)


@pytest.fixture
def store(store_url):
    from playground.store import open_store

    s = open_store(store_url)
    try:
        yield s
    finally:
        s.close()


# --- worker processes (spawned; each opens its own store) -------------------------------------------------


def writer(url: str, annotator: str, n_units: int, offset: int, barrier=None, report: str | None = None) -> int:
    """Set ``n_units`` labels (units offset..offset+n-1, dimension 'supported'); report each returned call.

    Each label's value is ``(unit index + len(annotator)) % 2``.  A line with
    the unit index is appended to ``report`` (unbuffered ``os.write``) only
    after ``set_label`` has returned.
    """
    from playground.store import open_store

    units = worker_units(offset + n_units)
    fd = os.open(report, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644) if report else None
    written = 0
    with open_store(url) as store:
        if barrier is not None:
            barrier.wait(timeout=120)
        for i in range(offset, offset + n_units):
            store.set_label(annotator, units[i], "supported", (i + len(annotator)) % 2)
            written += 1
            if fd is not None:
                os.write(fd, f"{i}\n".encode())
    if fd is not None:
        os.close(fd)
    return written


def flipper(url: str, annotator: str, n_units: int, rounds: int, seed: int, barrier, report: str) -> None:
    """Flip the same labels as another flipper (same annotator): record every returned event id."""
    import random

    from playground.store import open_store

    rng = random.Random(seed)
    units = worker_units(n_units)
    fd = os.open(report, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    with open_store(url) as store:
        barrier.wait(timeout=120)
        for _ in range(rounds):
            u = units[rng.randrange(n_units)]
            event = store.set_label(annotator, u, "supported", rng.randrange(2))
            if event is not None:
                os.write(fd, f"{event.event_id} {event.created_at}\n".encode())
    os.close(fd)


def run_cli(module: Any, argv: list[str], capsys: Any) -> tuple[int, str, str]:
    """``(exit code, stdout, stderr)`` of one ``playground`` subcommand registered by ``module`` (cli.labels, ...)."""
    import argparse

    parser = argparse.ArgumentParser(prog="playground")
    module.register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(argv)
    code = args.func(args)
    out, err = capsys.readouterr()
    return code, out, err


def raw_backend(url: str) -> Any:
    """The bare backend of ``url`` (no schema check, no migration): for writing an older schema by hand."""
    from playground.store.core import parse_url

    kind, where = parse_url(url)
    if kind == "sqlite":
        from playground.store.sqlite import SQLiteBackend

        return SQLiteBackend(where)
    from playground.store.postgres import PostgresBackend

    return PostgresBackend(str(where))
