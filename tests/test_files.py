"""``playground.files``: whole-or-nothing writes with the permissions of any file the user creates.

Modes are checked under a umask each test sets (and restores): a shared file is ``0o666 & ~umask``
(022 -> 0644, 077 -> 0600, 0 -> 0666, by hand), a private one exactly 0600 whatever the umask.
"""
from __future__ import annotations

import itertools
import os
import stat
from contextlib import contextmanager

import pytest
from frozen_tiny import write_shared
from real_data import run_main
from store_fixtures import claim

from playground import files
from playground.files import PRIVATE_MODE, write_all_atomic, write_atomic
from playground.store import open_store
from playground.store.io import export_table, write_export


@contextmanager
def umask(value):
    old = os.umask(value)
    try:
        yield
    finally:
        os.umask(old)


def mode(path):
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.parametrize(("mask", "expected"), [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664), (0o000, 0o666)])
def test_a_shared_file_gets_0666_minus_the_umask(tmp_path, mask, expected):
    target = tmp_path / "out.csv"
    with umask(mask):
        write_atomic(target, "a,b\n")
    assert mode(target) == expected


@pytest.mark.parametrize("mask", [0o022, 0o077, 0o000, 0o277])
def test_a_private_file_is_exactly_0600(tmp_path, mask):
    # 0o277 would leave 0o400 if the mode came only from the umask: the fchmod makes it 0600
    target = tmp_path / "cache.json"
    with umask(mask):
        write_atomic(target, b"{}", private=True)
    assert mode(target) == 0o600 == PRIVATE_MODE


def test_replacing_a_private_file_gives_the_new_files_mode(tmp_path):
    target = tmp_path / "ids.csv"
    target.write_text("old\n")
    target.chmod(0o600)
    with umask(0o022):
        write_atomic(target, "new\n")
    assert mode(target) == 0o644 and target.read_text() == "new\n"


def test_bytes_and_text_are_written_exactly(tmp_path):
    raw = bytes(range(256)) + b"\r\n\r"
    write_atomic(tmp_path / "b.bin", raw)
    assert (tmp_path / "b.bin").read_bytes() == raw
    text = "line one\r\nline\u2028two\rthree\n\u00e9\U0001f600"
    write_atomic(tmp_path / "t.txt", text)
    assert (tmp_path / "t.txt").read_bytes() == (
        b"line one\r\nline\xe2\x80\xa8two\rthree\n\xc3\xa9\xf0\x9f\x98\x80")
    write_atomic(tmp_path / "empty", "")
    assert (tmp_path / "empty").read_bytes() == b""
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b.bin", "empty", "t.txt"]


def test_text_that_cannot_be_encoded_writes_nothing(tmp_path):
    with pytest.raises(UnicodeEncodeError):
        write_atomic(tmp_path / "x.txt", "half \ud800 a surrogate")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("error", [OSError("disk gone"), KeyboardInterrupt()])
def test_a_failed_rename_keeps_the_old_file_and_leaves_no_temporary(tmp_path, monkeypatch, error):
    target = tmp_path / "labels.csv"
    target.write_bytes(b"the old labels\n")

    def fail(src, dst):
        assert os.path.exists(src) and os.path.basename(src).startswith(".labels.csv.")  # written beside it
        raise error

    monkeypatch.setattr(files.os, "replace", fail)
    with pytest.raises(type(error)):
        write_atomic(target, "the new labels\n")
    assert target.read_bytes() == b"the old labels\n"
    assert [p.name for p in tmp_path.iterdir()] == ["labels.csv"]


def test_a_failure_mid_write_keeps_the_old_file_and_leaves_no_temporary(tmp_path, monkeypatch):
    target = tmp_path / "report.json"
    target.write_bytes(b"{}\n")

    def fail(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(files.os, "fsync", fail)
    with pytest.raises(OSError, match="No space left"):
        write_atomic(target, '{"new": 1}\n')
    assert target.read_bytes() == b"{}\n"
    assert [p.name for p in tmp_path.iterdir()] == ["report.json"]


def test_a_group_renames_nothing_when_one_write_fails(tmp_path, monkeypatch):
    first, second = tmp_path / "export.csv", tmp_path / "export.labels.csv"
    first.write_text("old export\n")
    real = os.fsync
    calls = []

    def fail_second(fd):
        calls.append(fd)
        if len(calls) == 2:
            raise OSError("disk gone")
        real(fd)

    monkeypatch.setattr(files.os, "fsync", fail_second)
    with pytest.raises(OSError, match="disk gone"):
        write_all_atomic({first: "new export\n", second: b"new labels\n"})
    assert first.read_text() == "old export\n" and not second.exists()
    assert [p.name for p in tmp_path.iterdir()] == ["export.csv"]
    monkeypatch.setattr(files.os, "fsync", real)
    with umask(0o022):
        write_all_atomic({str(first): "new export\n", str(second): b"new labels\n"})
    assert (first.read_text(), second.read_bytes()) == ("new export\n", b"new labels\n")
    assert (mode(first), mode(second)) == (0o644, 0o644)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["export.csv", "export.labels.csv"]


def test_a_stale_temporary_of_the_same_name_is_passed_over_and_left_alone(tmp_path, monkeypatch):
    monkeypatch.setattr(files, "_counter", itertools.count(7))
    stale = tmp_path / f".out.txt.{os.getpid()}-7.tmp"  # as a crashed process with this pid would leave it
    stale.write_bytes(b"someone else's")
    write_atomic(tmp_path / "out.txt", "mine\n")
    assert (tmp_path / "out.txt").read_text() == "mine\n"
    assert stale.read_bytes() == b"someone else's"


def test_the_folder_must_exist(tmp_path):
    with pytest.raises(FileNotFoundError):
        write_atomic(tmp_path / "no" / "such.csv", "x")
    assert list(tmp_path.iterdir()) == []


# --- the sites: a file a user exports gets the usual permissions ----------------------------------


def test_write_ids_file_is_0644_under_umask_022(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PLAYGROUND_SHARED_DATA", str(write_shared(tmp_path / "shared")))
    ids = tmp_path / "ids.csv"
    with umask(0o022):
        rc, _, err = run_main(capsys, "calibrate", "begin", "--write-ids", str(ids))
    assert rc == 0, err
    assert mode(ids) == 0o644
    assert ids.read_text(encoding="utf-8").splitlines()[0] == "claim_id,part,task_type,claim,context,question"


def test_a_store_export_is_0644_under_umask_022(tmp_path):
    unit = claim(1)
    with open_store(tmp_path / "labels.db") as store:
        store.set_label("ann", unit, "supported", 1)
        rows = export_table(store, {unit.unit_id: unit})
    with umask(0o022):
        write_export(rows, tmp_path / "labels.csv")
        write_export(rows, tmp_path / "labels.parquet", "parquet")
    assert mode(tmp_path / "labels.csv") == 0o644 and mode(tmp_path / "labels.parquet") == 0o644
    lines = (tmp_path / "labels.csv").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 2
    assert lines[1].startswith(f"{unit.case_id},{unit.response_id},claim,{unit.unit_id},Claim number 1.,"
                               "supported,1,,ann,")


def test_the_notebook_cache_stays_private(tmp_path, monkeypatch):
    from playground.ui.harness_cache import KeptFiles

    monkeypatch.setenv("PLAYGROUND_CACHE", str(tmp_path / "cache"))
    kept = KeptFiles("k")
    with umask(0o022):
        assert kept.put("doc", {"a": 1}) is True
    assert mode(tmp_path / "cache" / "dataset-k" / "doc.json") == 0o600
    assert kept.get("doc") == {"a": 1}
