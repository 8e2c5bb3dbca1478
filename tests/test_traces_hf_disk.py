"""Hugging Face ``save_to_disk`` folders: ``import ragas|table DIR [--split S]`` read through pyarrow alone.

The folders under tests/fixtures/traces/ were written by ``datasets`` 5.2
(scripts/make_trace_fixtures.py): ``hf_dataset`` holds the three rows q1-q3,
``hf_datasetdict`` the splits train (q1, q2) and test (q3).
"""
from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pytest

from playground.cli import main
from playground.errors import DataError, Problem
from playground.importers import hf_disk
from playground.importers.load import prepare
from playground.store import open_store

FIX = Path(__file__).parent / "fixtures" / "traces"
MAP = "question=user_input,answer=response,contexts=retrieved_contexts,context_ids=retrieved_context_ids"


def run(capsys, *argv: object) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_a_saved_dataset_imports_as_ragas_with_its_ids_and_contexts():
    payload = prepare(FIX / "hf_dataset", "ragas", "hf")
    rows = payload["samples"]
    assert [r["case_id"] for r in rows] == ["hf:q1", "hf:q2", "hf:q3"]
    assert rows[0]["query"] == "When does the first ferry leave?"
    assert rows[0]["context_ids"] == ["kb-1", "kb-2"]
    assert rows[2]["contexts"] == ["The harbour museum is closed on Mondays.",
                                   "Tidewell's ferry leaves the north pier every 40 minutes from 6 am."]
    assert [r["place"] for r in rows] == ["row 1", "row 2", "row 3"]
    assert payload["source"]["format"] == "hf-disk"
    assert payload["source"]["sha256"] == hf_disk.digest(FIX / "hf_dataset")


def test_a_datasetdict_split_is_chosen_with_split(tmp_path, capsys):
    db = tmp_path / "l.db"
    code, out, err = run(capsys, "import", "table", FIX / "hf_datasetdict", "--split", "test", "--map", MAP,
                         "--dataset", "t", "--db", db)
    assert (code, err) == (0, "")
    # q3: 2 passages + 1 claim ("According to ... Mondays.") + 1 fact (the reference)
    assert out.startswith("dataset 't' (table) imported: 1 samples, 4 units")
    with open_store(db) as store:
        assert [r["sample_id"] for r in store.dataset("t").payload["samples"]] == ["q3"]
    code, out, err = run(capsys, "import", "ragas", FIX / "hf_datasetdict", "--split", "train", "--dataset", "r",
                         "--db", db)
    assert code == 0 and out.startswith("dataset 'r' (ragas) imported: 2 samples")


def test_a_datasetdict_without_split_a_wrong_split_and_a_split_of_a_dataset_are_refused(tmp_path, capsys):
    db = tmp_path / "l.db"
    code, _, err = run(capsys, "import", "ragas", FIX / "hf_datasetdict", "--dataset", "r", "--db", db)
    assert code == 1
    assert "hf_datasetdict: a DatasetDict with the splits train, test: choose one with --split" in err
    code, _, err = run(capsys, "import", "ragas", FIX / "hf_datasetdict", "--split", "dev", "--dataset", "r",
                       "--db", db)
    assert code == 1 and "hf_datasetdict: no split 'dev' (the splits: train, test)" in err
    code, _, err = run(capsys, "import", "ragas", FIX / "hf_dataset", "--split", "train", "--dataset", "r",
                       "--db", db)
    assert code == 1 and "--split train given, but this is one Dataset, not a DatasetDict" in err
    assert not db.exists()


def _shard(path: Path, rows: list[dict]) -> None:
    table = pa.Table.from_pylist(rows)
    with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)


def test_rows_are_numbered_across_shards_in_state_order(tmp_path):
    folder = tmp_path / "two"
    folder.mkdir()
    _shard(folder / "data-00001-of-00002.arrow", [{"user_input": "c?", "response": "C."}])
    _shard(folder / "data-00000-of-00002.arrow", [{"user_input": "a?", "response": "A."},
                                                  {"user_input": "b?", "response": "B."}])
    state = {"_data_files": [{"filename": "data-00000-of-00002.arrow"}, {"filename": "data-00001-of-00002.arrow"}]}
    (folder / "state.json").write_text(json.dumps(state), encoding="utf-8")
    problems: list[Problem] = []
    rows = hf_disk.read_rows(folder, problems)
    assert problems == []
    assert [(str(r.place), r.data["user_input"]) for r in rows] == [("row 1", "a?"), ("row 2", "b?"), ("row 3", "c?")]


def test_a_missing_shard_or_a_folder_without_state_is_a_problem_and_nothing_is_read(tmp_path):
    folder = tmp_path / "broken"
    folder.mkdir()
    (folder / "state.json").write_text(json.dumps({"_data_files": [{"filename": "data-0.arrow"}]}), encoding="utf-8")
    with pytest.raises(DataError) as err:
        prepare(folder, "ragas", "x")
    assert [p.message for p in err.value.problems] == ["shard 'data-0.arrow' is missing"]
    plain = tmp_path / "plain"
    plain.mkdir()
    problems: list[Problem] = []
    assert hf_disk.read_rows(plain, problems) == []
    assert [p.message for p in problems] == ["no state.json: not a folder written by save_to_disk"]


def test_the_digest_of_a_folder_changes_with_any_shard_byte(tmp_path):
    folder = tmp_path / "d"
    folder.mkdir()
    _shard(folder / "data.arrow", [{"user_input": "a?", "response": "A."}])
    first = hf_disk.digest(folder)
    assert hf_disk.digest(folder) == first
    _shard(folder / "data.arrow", [{"user_input": "a?", "response": "B."}])
    assert hf_disk.digest(folder) != first
