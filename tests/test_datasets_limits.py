"""Bounded imports (issue 29, must-hold 6): every bound of playground.importers.limits, at its edge.

A FIFO is refused without waiting, a truncated CSV is refused, JSON nested
100,000 deep is one problem (no RecursionError), a Parquet file of 2e6 rows
of one dictionary string is refused from its footer, and a cell, a depth, a
row count or a file size one past its limit is refused while the limit itself passes.
"""
from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from playground import limits
from playground.errors import DataError
from playground.importers.load import prepare
from playground.store import LabelImportError, import_file, open_store


def cli(*argv) -> int:
    from playground.cli import main

    return main([str(a) for a in argv])


def row(i: int = 0, **extra) -> dict:
    return {"user_input": f"Question {i}?", "response": "An answer.", "retrieved_contexts": ["A context."], **extra}


def jsonl(path: Path, rows: list) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def problems_of(path: Path) -> list[str]:
    with pytest.raises(DataError) as err:
        prepare(path, "ragas", "x")
    return [str(p) for p in err.value.problems]


def finishes(fn, seconds: float = 20.0):
    """Run ``fn`` in a thread; fail (rather than hang the suite) when it does not return in time."""
    out: list = []

    def call() -> None:
        try:
            out.append((fn(), None))
        except Exception as exc:
            out.append((None, exc))

    t = threading.Thread(target=call, daemon=True)
    t.start()
    t.join(seconds)
    assert not t.is_alive(), "hung"
    value, exc = out[0]
    if exc is not None:
        raise exc
    return value


def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path, capsys):
    fifo = tmp_path / "data.jsonl"
    os.mkfifo(fifo)
    assert finishes(lambda: cli("import", "ragas", fifo, "--dataset", "x", "--db", tmp_path / "l.db")) == 1
    said = capsys.readouterr().err
    assert said == f"error: {fifo}: not a regular file (a pipe, device, socket or folder): give a file\n"
    good = jsonl(tmp_path / "good.jsonl", [row()])
    assert finishes(lambda: cli("import", "ragas", good, "--dataset", "x", "--labels", fifo,
                                "--db", tmp_path / "l.db")) == 1
    assert "not a regular file" in capsys.readouterr().err and not (tmp_path / "l.db").exists()
    assert finishes(lambda: problems_of(fifo)) == [
        "data.jsonl: not a regular file (a pipe, device, socket or folder): give a file"]
    with open_store(tmp_path / "m.db") as store, pytest.raises(LabelImportError) as err:
        finishes(lambda: import_file(store, fifo, {}))
    assert "not a regular file" in str(err.value)
    bare = tmp_path / "labels"  # no suffix: the format would be sniffed from its first bytes
    os.mkfifo(bare)
    with open_store(tmp_path / "m.db") as store, pytest.raises(LabelImportError) as err:
        finishes(lambda: import_file(store, bare, {}))
    assert "not a regular file" in str(err.value)
    assert finishes(lambda: cli("labels", "import", fifo, "--db", tmp_path / "m.db")) == 1
    assert capsys.readouterr().err == said


def test_a_truncated_csv_is_refused(tmp_path):
    path = tmp_path / "cut.csv"
    path.write_text('user_input,response,retrieved_contexts\nQ?,A.,"[\'ctx one\', \'ctx t', encoding="utf-8")
    assert problems_of(path) == ["cut.csv:2: malformed CSV: unexpected end of data"]
    labels = tmp_path / "labels.csv"
    labels.write_text('annotator,unit_kind,unit_id,dimension,value\nana,claim,"x:1,supported,1\n', encoding="utf-8")
    with open_store(tmp_path / "l.db") as store, pytest.raises(LabelImportError) as err:
        import_file(store, labels, {})
    assert "EOF inside string" in str(err.value)


def test_json_nested_100000_deep_is_one_problem(tmp_path):
    deep = "[" * 100_000 + "]" * 100_000
    line = tmp_path / "deep.jsonl"
    line.write_text('{"user_input": "Q?", "response": "A.", "x": ' + deep + "}\n", encoding="utf-8")
    assert problems_of(line) == [f"deep.jsonl:1: nested deeper than the limit of {limits.MAX_DEPTH} levels"]
    whole = tmp_path / "deep.json"
    whole.write_text(deep, encoding="utf-8")
    with pytest.raises(DataError) as err:
        prepare(whole, "deepeval", "x")
    assert [str(p) for p in err.value.problems] == ["deep.json: nested deeper than the limit of 32 levels"]
    cell = tmp_path / "deep.csv"  # a list cell of a CSV: literal_eval and JSON both give up, one problem
    cell.write_text(f"user_input,response,retrieved_contexts\nQ?,A.,{deep}\n", encoding="utf-8")
    assert problems_of(cell) == ["deep.csv:2 [retrieved_contexts]: not a list: the cell starts with '[' but is no "
                                 "list literal"]


def nested(levels: int) -> dict:
    """A row whose deepest container is ``levels`` deep, the row itself counted as level 1."""
    value: list = []
    for _ in range(levels - 2):
        value = [value]
    return row(extra=value)


def test_the_depth_bound_at_its_edge(tmp_path):
    assert limits.MAX_DEPTH == 32
    prepare(jsonl(tmp_path / "ok.jsonl", [nested(32)]), "ragas", "x")
    assert problems_of(jsonl(tmp_path / "deep.jsonl", [nested(33)])) == [
        "deep.jsonl:1 [extra]: nested deeper than the limit of 32 levels"]


def test_the_cell_bound_at_its_edge(tmp_path):
    n = limits.MAX_CELL_CHARS
    prepare(jsonl(tmp_path / "ok.jsonl", [row(response="a" * n)]), "ragas", "x")
    assert problems_of(jsonl(tmp_path / "long.jsonl", [row(response="a" * (n + 1))])) == [
        "long.jsonl:1 [response]: a cell of 1,000,001 characters, longer than the limit of 1,000,000"]
    # CSV: the csv module's own cap (131,072) is lifted; each cell is checked against the documented one
    ok = tmp_path / "ok.csv"
    ok.write_text(f"user_input,response\nQ?,{'a' * n}\n", encoding="utf-8")
    assert len(prepare(ok, "ragas", "x")["samples"][0]["response"]) == n
    long = tmp_path / "long.csv"
    long.write_text(f"user_input,response\nQ?,{'a' * (n + 1)}\n", encoding="utf-8")
    assert problems_of(long) == ["long.csv:2 [response]: a cell of 1,000,001 characters, longer than the limit of "
                                 "1,000,000"]


def test_the_row_bound_at_its_edge(tmp_path, monkeypatch):
    monkeypatch.setattr(limits, "MAX_ROWS", 3)
    assert len(prepare(jsonl(tmp_path / "three.jsonl", [row(i) for i in range(3)]), "ragas", "x")["samples"]) == 3
    assert problems_of(jsonl(tmp_path / "four.jsonl", [row(i) for i in range(4)])) == [
        "four.jsonl:4: 4 rows or more, more rows than the limit of 3 (at most 256 MiB of text, 3 rows, "
        "1,000,000 characters per cell and 32 levels of nesting per file): split it"]
    csv_path = tmp_path / "four.csv"
    csv_path.write_text("user_input,response\n" + "".join(f"Q{i}?,A.\n" for i in range(4)), encoding="utf-8")
    assert problems_of(csv_path)[0].startswith("four.csv:5: 4 rows or more, more rows than the limit of 3")


def test_a_parquet_of_2e6_rows_of_one_dictionary_string_is_refused_from_its_footer(tmp_path):
    text = pa.DictionaryArray.from_arrays(pa.array([0] * 2_000_000, pa.int32()), pa.array(["x" * 1000]))
    path = tmp_path / "big.parquet"
    pq.write_table(pa.table({"user_input": text, "response": text}), path)
    assert path.stat().st_size < 2_000_000  # small on disk; 4 GB of text once made
    assert finishes(lambda: problems_of(path)) == [
        "big.parquet: 2,000,000 rows or more, more rows than the limit of 200,000 (at most 256 MiB of text, "
        "200,000 rows, 1,000,000 characters per cell and 32 levels of nesting per file): split it"]


def test_a_parquet_whose_text_passes_the_size_bound_is_refused_before_it_is_all_made(tmp_path, monkeypatch):
    monkeypatch.setattr(limits, "MAX_FILE_BYTES", 10_000)
    text = pa.DictionaryArray.from_arrays(pa.array([0] * 1000, pa.int32()), pa.array(["y" * 100]))
    path = tmp_path / "wide.parquet"
    pq.write_table(pa.table({"user_input": text, "response": text}), path)
    # 218 characters a row (the column names count too): row 46 passes 10,000
    assert problems_of(path) == ["wide.parquet: more than 10,000 characters of text, larger than the limit (at most "
                                 "0 MiB of text, 200,000 rows, 1,000,000 characters per cell and 32 levels of "
                                 "nesting per file): split it"]


def test_the_file_size_bound_at_its_edge(tmp_path, monkeypatch):
    path = jsonl(tmp_path / "d.jsonl", [row()])
    size = path.stat().st_size
    monkeypatch.setattr(limits, "MAX_FILE_BYTES", size)
    prepare(path, "ragas", "x")
    monkeypatch.setattr(limits, "MAX_FILE_BYTES", size - 1)
    assert problems_of(path)[0].startswith(f"d.jsonl: {size:,} bytes, larger than the limit of {size - 1:,} bytes")


def test_a_label_table_has_its_own_row_bound(tmp_path, monkeypatch):
    """A label table holds a label a row, so more rows than a dataset: MAX_LABEL_ROWS, not MAX_ROWS."""
    from playground.datasets import open_dataset
    from playground.importers.load import import_dataset

    monkeypatch.setattr(limits, "MAX_ROWS", 3)
    data = jsonl(tmp_path / "d.jsonl", [row(i) for i in range(2)])
    with open_store(tmp_path / "l.db") as store:
        import_dataset(data, "ragas", "x", store)
        catalog = open_dataset("x", store).catalog()
    table = tmp_path / "t.csv"
    table.write_text("annotator,unit_id,dimension,value\n" + "".join(
        f"a{i},{uid},{u.dimensions[0]},1\n" for i in range(2) for uid, u in sorted(catalog.items())),
        encoding="utf-8")
    assert len(catalog) * 2 > 3
    with open_store(tmp_path / "m.db") as store:
        result = import_dataset(data, "ragas", "x", store, labels=table)
    assert result.labels == len(catalog) * 2
    assert limits.MAX_LABEL_ROWS == 1_000_000
