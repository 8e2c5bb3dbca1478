"""Issue 17 on the SQLite file: deleted or replaced while open, create=False, foreign files, read-only media."""
from __future__ import annotations

import os
import shutil
import sqlite3

import pytest
from store_fixtures import claim

from playground.store import CURRENT_VERSION, ReadOnlyStoreError, StoreError, StoreGoneError, open_store
from playground.store import sqlite as sqlite_backend


def test_a_deleted_file_makes_the_next_write_fail_and_nothing_is_written(tmp_path):
    path = tmp_path / "labels.db"
    store = open_store(path)
    store.set_label("ann", claim(1), "supported", 1)
    keep = tmp_path / "kept-link.db"
    os.link(path, keep)                         # the inode the open connection still writes to
    path.unlink()
    with pytest.raises(StoreGoneError, match=f"the label store file {path} was deleted while it was open"):
        store.set_label("ann", claim(2), "supported", 1)
    with pytest.raises(StoreGoneError):
        store.set_comment("ann", claim(2), "x")
    assert len(store.events()) == 1             # the unlinked file got nothing
    assert not path.exists()                    # and nothing was created in its place
    store.close()


def test_a_replaced_file_makes_the_next_write_fail_and_the_new_file_is_untouched(tmp_path):
    path, other = tmp_path / "labels.db", tmp_path / "other.db"
    with open_store(other) as o:
        o.set_label("bob", claim(1), "supported", 0)
        dump = o.dump()
    store = open_store(path)
    store.set_label("ann", claim(1), "supported", 1)
    for suffix in ("", "-wal", "-shm"):
        if (tmp_path / f"other.db{suffix}").exists():
            shutil.copy(tmp_path / f"other.db{suffix}", tmp_path / f"swap.db{suffix}")
    os.replace(tmp_path / "swap.db", path)      # e.g. a restore from backup while a kernel runs
    new_bytes = path.read_bytes()
    with pytest.raises(StoreGoneError, match="was replaced by another file while it was open"):
        store.set_label("ann", claim(2), "supported", 1)
    assert path.read_bytes() == new_bytes and len(store.events()) == 1
    store.close()
    # The old connection's -wal is still there (SQLite keeps it for a replaced file): without it,
    # the new file holds exactly what was copied in.
    for suffix in ("-wal", "-shm"):
        (tmp_path / f"labels.db{suffix}").unlink(missing_ok=True)
    with open_store(path, create=False) as reopened:
        assert reopened.dump() == dump


def test_create_false_never_creates_a_file(tmp_path):
    path = tmp_path / "labels.db"
    with pytest.raises(StoreError, match="no label store at"):
        open_store(path, create=False)
    assert not path.exists()
    path.touch()                                # an empty file: still not created as a store
    with pytest.raises(StoreError, match="the file is empty"):
        open_store(path, create=False)
    assert path.stat().st_size == 0 and not (tmp_path / "labels.db-wal").exists()
    with open_store(path) as s:                 # creating is what `playground serve` does, once
        assert s.schema_version == CURRENT_VERSION
    with open_store(path, create=False) as s:
        assert s.set_label("ann", claim(1), "supported", 1) is not None


def test_a_foreign_sqlite_file_is_never_modified(tmp_path):
    path = tmp_path / "notes.db"
    conn = sqlite3.connect(path)
    conn.executescript("CREATE TABLE c (x); CREATE TABLE a (y); CREATE TABLE b (z); INSERT INTO a VALUES (1);")
    conn.commit()
    conn.close()
    before = path.read_bytes()
    for kwargs in ({}, {"create": False}, {"read_only": True}):
        with pytest.raises(StoreError, match=f"{path} is an SQLite database with tables a, b, c, not a label store"):
            open_store(path, **kwargs)
    assert path.read_bytes() == before          # no WAL switch, no schema
    assert not (tmp_path / "notes.db-wal").exists()
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
    conn.close()


def test_a_file_that_is_not_sqlite_is_named_so(tmp_path):
    path = tmp_path / "x.db"
    path.write_bytes(b"hello, this is not a database" * 10)
    before = path.read_bytes()
    with pytest.raises(StoreError, match="not a readable SQLite database"):
        open_store(path)
    assert path.read_bytes() == before


def test_a_store_on_read_only_media_opens_read_only_for_reading(tmp_path, monkeypatch):
    path = tmp_path / "labels.db"
    with open_store(path) as s:
        s.set_label("ann", claim(1), "supported", 1)
    # Tests run as root, which chmod does not stop: stand in for a read-only mount where the store
    # module asks (os.access(W_OK) answers EROFS there for everyone).
    real_access = os.access
    monkeypatch.setattr(sqlite_backend.os, "access",
                        lambda p, mode: False if mode & os.W_OK else real_access(p, mode))
    with open_store(path) as s:
        assert s.read_only and [lb.annotator for lb in s.labels()] == ["ann"]
        with pytest.raises(ReadOnlyStoreError):
            s.set_label("ann", claim(2), "supported", 1)
