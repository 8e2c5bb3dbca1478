"""The page's harness cache of a dataset revision: one SQLite file, written in batches, shared by processes."""
from __future__ import annotations

import json

from playground.harness.case_cache import CaseResults, case_text


def test_rows_written_in_one_batch_are_read_back_by_another_handle(tmp_path):
    writer, reader = CaseResults(tmp_path / "dataset-k"), CaseResults(tmp_path / "dataset-k")
    rows = [(f"d:{i}", case_text(f"d:{i}", {"case_id": f"d:{i}", "n": i})) for i in range(3)]
    assert writer.put(rows)
    assert reader.get("d:1") == '{"case_id": "d:1", "result": {"case_id": "d:1", "n": 1}}'
    assert json.loads(reader.get("d:2") or "")["result"]["n"] == 2
    assert reader.get("d:3") is None
    assert sorted(p.name for p in (tmp_path / "dataset-k").iterdir() if not p.name.startswith("cases.sqlite-")) == [
        "cases.sqlite"]
    assert (tmp_path / "dataset-k" / "cases.sqlite").stat().st_mode & 0o777 == 0o600
    assert writer.put([("d:1", "again")]) and reader.get("d:1") == "again"  # a later write replaces
    writer.close()
    reader.close()


def test_off_or_unusable_is_never_an_error(tmp_path):
    off = CaseResults(None)
    assert off.get("x") is None and off.put([("x", "{}")]) is False
    blocker = tmp_path / "file"
    blocker.write_text("", encoding="utf-8")
    broken = CaseResults(blocker / "dataset-k")  # its folder would be inside a file
    assert broken.get("x") is None and broken.put([("x", "{}")]) is False and broken.path is None
    damaged = tmp_path / "dataset-d"
    damaged.mkdir()
    (damaged / "cases.sqlite").write_bytes(b"this is not a database" * 100)
    assert CaseResults(damaged).get("x") is None and CaseResults(damaged).put([("x", "{}")]) is False
