"""Readers of scorer results as the tools write them (issue 37.7): Inspect AI eval logs (.eval and .json),
MLflow's evaluation table, promptfoo's output JSON — files written by each tool (tests/fixtures/tools/README.md)."""
from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest
from calibration_data import case_ids, label_samples, write_rows
from test_calibrate_gate import IDENTITY, entry
from test_calibrate_gate import record as make_record

from playground.calibrate.external_samples import read_result
from playground.calibrate.record import load_record
from playground.calibrate.score_gate import gate_scores, read_run
from playground.calibrate.tool_results import read_scored_rows, tool_format
from playground.cli import main
from playground.errors import DataError
from playground.importers.load import import_dataset
from playground.store import open_store

TOOLS = Path(__file__).parent / "fixtures" / "tools"
QUESTIONS = {"price-basic-berlin": "What does the Basic plan cost in Berlin?",
             "price-pro-berlin": "What does the Pro plan cost in Berlin?",
             "seats-basic-berlin": "How many seats does the Basic plan include in Berlin?",
             "price-basic-paris": "What does the Basic plan cost in Paris?"}
# by construction: right, price wrong, right, vague
INCLUDES = {"price-basic-berlin": 1.0, "price-pro-berlin": 0.0, "seats-basic-berlin": 1.0, "price-basic-paris": 0.0}


@pytest.mark.parametrize("name", ["inspect_price_qa.eval", "inspect_price_qa.json"])
def test_inspect_logs_both_formats(name):
    problems: list = []
    fmt, rows = read_scored_rows(TOOLS / name, problems)
    assert fmt == "inspect" and problems == []
    by_id = {r.data["id"]: r.data for r in rows}
    assert {i: d["user_input"] for i, d in by_id.items()} == QUESTIONS
    assert {i: d["includes"] for i, d in by_id.items()} == INCLUDES  # Inspect's C / I
    # answer_length = min(1, len(answer) / 40), the answers as the mock model gave them
    assert {i: d["answer_length"] for i, d in by_id.items()} == {
        i: min(1.0, len(d["response"]) / 40) for i, d in by_id.items()}
    assert by_id["price-pro-berlin"]["response"] == "The Pro plan costs $36 per month."
    assert by_id["price-pro-berlin"]["reference"] == "$63"


def test_the_eval_archive_is_zstd_compressed_as_inspect_writes_it():
    with zipfile.ZipFile(TOOLS / "inspect_price_qa.eval") as z:
        assert {i.compress_type for i in z.infolist()} == {93}


def test_mlflow_evaluation_table():
    fmt, rows = read_scored_rows(TOOLS / "mlflow_eval_results_table.json", [])
    assert fmt == "mlflow" and [r.data["user_input"] for r in rows] == list(QUESTIONS.values())
    assert [r.data["price_match/score"] for r in rows] == [1.0, 0.0, 1.0, 0.0]
    # brevity = min(1, len(target) / len(prediction)), rounded to 4 places by the metric
    assert [r.data["brevity/score"] for r in rows] == [
        round(min(1.0, len(r.data["reference"]) / len(r.data["response"])), 4) for r in rows]
    assert set(rows[0].data) == {"id", "user_input", "response", "reference", "price_match/score", "brevity/score"}


def test_promptfoo_output():
    fmt, rows = read_scored_rows(TOOLS / "promptfoo_output.json", [])
    assert fmt == "promptfoo" and [r.data["id"] for r in rows] == ["0:0", "1:0", "2:0", "3:0"]
    assert [r.data["price_match"] for r in rows] == [1, 0, 1, 0]
    assert [r.data["pass"] for r in rows] == [1.0, 0.0, 1.0, 0.0]
    # the echo provider answers with the prompt; brevity = min(1, 40 / len(output)); score = the mean of both
    for r in rows:
        assert r.data["brevity"] == pytest.approx(min(1.0, 40 / len(r.data["response"])), abs=1e-12)
        assert r.data["score"] == pytest.approx((r.data["price_match"] + r.data["brevity"]) / 2, abs=1e-12)


def test_other_files_go_to_the_ordinary_reader(tmp_path):
    plain = write_rows(tmp_path / "r.jsonl", [{"user_input": "Q?", "response": "A.", "faithfulness": 0.5}])
    assert tool_format(plain) == (None, None)
    (tmp_path / "list.json").write_text(json.dumps([{"user_input": "Q?", "response": "A.", "faithfulness": 1}]))
    assert tool_format(tmp_path / "list.json") == (None, None)
    fmt, rows = read_scored_rows(tmp_path / "list.json", [])
    assert fmt == "json" and rows[0].data["faithfulness"] == 1
    empty = tmp_path / "empty.json"
    empty.write_text(json.dumps({"results": {"results": []}}))
    problems: list = []
    assert read_scored_rows(empty, problems) == ("promptfoo", []) and [p.message for p in problems] == [
        "a promptfoo file with no scored row"]


def test_a_score_that_is_no_number_is_named_with_its_row(tmp_path):
    body = json.loads((TOOLS / "mlflow_eval_results_table.json").read_text())
    body["data"][1][3] = "maybe"
    (tmp_path / "t.json").write_text(json.dumps(body))
    with pytest.raises(DataError) as err:
        read_result(tmp_path / "t.json", extra_metrics={"price_match/score": "correctness"},
                    only=("price_match/score",))
    assert [str(p) for p in err.value.problems] == [
        "t.json [row 2, 'price_match/score']: score 'maybe' is not a number"]


def test_the_gate_reads_them_as_written(tmp_path):
    record = {"scorers": [{"column": "includes", "dimension": "correct"}]}
    scores, n, _t, unrecorded = read_run(TOOLS / "inspect_price_qa.eval", record)
    assert n == 4 and sorted(scores["includes"]) == [0.0, 0.0, 1.0, 1.0] and unrecorded == ["answer_length"]
    rec = load_record(make_record(tmp_path, entry(column="includes", dimension="correct",
                                                  identity={**IDENTITY, "name": "includes"})))
    for name, column in (("inspect_price_qa.json", "includes"), ("promptfoo_output.json", "price_match"),
                         ("mlflow_eval_results_table.json", "price_match/score")):
        renamed = {**rec, "scorers": [{**rec["scorers"][0], "column": column}]}
        result = gate_scores(TOOLS / name, renamed, identities={column: {**IDENTITY, "name": "includes"}}, n_boot=50)
        assert result.rates[column].raw == 0.5 and result.rates[column].n == 4, name  # 2 of 4 pass


def test_calibrate_external_takes_a_tool_file_with_a_dataset(tmp_path, capsys):
    db = tmp_path / "labels.db"
    rows = [{"id": i, "user_input": q, "response": "x", "retrieved_contexts": [f"Context {i}."]}
            for i, q in QUESTIONS.items()]
    with open_store(db) as store:
        import_dataset(write_rows(tmp_path / "ds.jsonl", rows), "ragas", "prices", store)
    cases = case_ids(db, "prices")
    label_samples(db, "prices", {c: int(INCLUDES[c.split(":", 1)[1]]) for c in cases})
    assert main(["calibrate", "external", str(TOOLS / "inspect_price_qa.eval"), "--dataset", "prices", "--db",
                 str(db), "--metric", "includes=context_relevance", "--ignore", "answer_length", "--boot", "20"]) == 0
    out = capsys.readouterr().out
    assert "4 of 4 result rows matched to samples" in out
