"""Langfuse exports read directly by `import traces`, and labels back as Langfuse score bodies.

The fixtures were written with Langfuse's own API models (scripts/make_langfuse_fixtures.py); both they and
the written scores are checked here with the SDK's own reader (``parse_obj_as``, as it reads an API answer)
against ``ObservationsV2Response`` / ``ObservationV2`` and ``CreateScoreRequest`` (the body of ``POST
/api/public/scores`` and of ``Langfuse.create_score``).
"""
from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest
from langfuse.api import CreateScoreRequest, ObservationsV2Response, ObservationV2
from langfuse.api.core.pydantic_utilities import parse_obj_as

from playground.cli import main
from playground.datasets import open_dataset
from playground.importers.langfuse import SCORE_NAMESPACE
from playground.store import open_store
from playground.verdicts import response_units

FIX = Path(__file__).parent / "fixtures" / "traces"
T1, T2, T3 = "a1b2c3d4e5f60718293a4b5c6d7e8f90", "b1b2c3d4e5f60718293a4b5c6d7e8f91", "c1b2c3d4e5f60718293a4b5c6d7e8f92"
LAST = "The last ferry of the day leaves at 11 pm on weekdays."
EVERY = "Tidewell's ferry leaves the north pier every 40 minutes from 6 am."


def run(capsys, *argv: object) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_the_fixtures_are_what_langfuses_api_models_read():
    page = json.loads((FIX / "langfuse_observations.json").read_text())
    parsed = parse_obj_as(ObservationsV2Response, page)
    assert [o.type for o in parsed.data] == ["SPAN", "RETRIEVER", "GENERATION", "SPAN", "RETRIEVER", "GENERATION",
                                             "SPAN"]
    lines = (FIX / "langfuse_observations.jsonl").read_text().splitlines()
    assert [parse_obj_as(ObservationV2, json.loads(line)) for line in lines] == list(parsed.data)


@pytest.mark.parametrize("file", ["langfuse_observations.json", "langfuse_observations.jsonl"])
def test_an_observations_export_imports_one_sample_per_trace(file, tmp_path, capsys):
    db = tmp_path / "l.db"
    code, out, err = run(capsys, "import", "traces", FIX / file, "--dataset", "lf", "--db", db)
    assert (code, err) == (0, "")
    assert out.splitlines()[1:] == ["  read 7 spans in 3 traces", "  1 trace(s) with nothing to label, not imported:",
                                    f"    trace {T3} (span 3a00000000000001): no retriever span"]
    with open_store(db) as store:
        opened = open_dataset("lf", store)
    first, second = opened.payload["samples"]
    assert opened.payload["source"]["format"] == "langfuse"
    assert opened.payload["source"]["file"] == file
    assert (first["sample_id"], first["query"], first["response"]) == (
        T1, "When does the last ferry leave?", "The last ferry leaves at 11 pm on weekdays.")  # input.question
    assert (first["contexts"], first["context_ids"]) == ([LAST, EVERY], ["kb-2", "kb-1"])
    assert first["extra"]["documents"] == [["1a00000000000002", 0, 0.91], ["1a00000000000002", 1, 0.55]]
    assert first["extra"]["response_span_id"] == "1a00000000000001"
    # the last user message of a chat input; no root output, so the generation's; a session's earlier turn
    assert (second["query"], second["response"]) == ("And the first one?", "The first ferry leaves at 6 am.")
    assert second["extra"]["response_span_id"] == "2a00000000000003"
    assert second["contexts"] == [EVERY, LAST]  # output {"documents": [...]}, in its order
    assert second["history"] == [["user", "When does the last ferry leave?"],
                                 ["assistant", "The last ferry leaves at 11 pm on weekdays."]]
    assert opened.payload["trace_times"] == {T1: "2026-11-30T09:00:00Z", T2: "2026-11-30T09:05:00Z"}


def test_a_trace_with_its_observations_is_the_root_itself(tmp_path, capsys):
    trace = {"id": "t-9", "timestamp": "2026-11-30T10:00:00Z", "input": "Is the museum open on Monday?",
             "output": "No, it is closed on Mondays.", "observations": [
                 {"id": "o1", "traceId": "t-9", "type": "RETRIEVER", "startTime": "2026-11-30T10:00:00.1Z",
                  "endTime": "2026-11-30T10:00:00.2Z", "parentObservationId": None,
                  "output": ["The harbour museum is closed on Mondays."]}]}
    file = tmp_path / "traces.json"
    file.write_text(json.dumps({"data": [trace], "meta": {}}))
    db = tmp_path / "t.db"
    assert run(capsys, "import", "traces", file, "--dataset", "tr", "--db", db)[0] == 0
    with open_store(db) as store:
        (sample,) = open_dataset("tr", store).payload["samples"]
    assert (sample["query"], sample["response"], sample["contexts"]) == (
        "Is the museum open on Monday?", "No, it is closed on Mondays.", ["The harbour museum is closed on Mondays."])
    assert sample["extra"]["response_span_id"] == "t-9" and sample["extra"]["documents"] == [["o1", 0, None]]


def test_an_observation_without_a_trace_id_is_named_and_nothing_is_imported(tmp_path, capsys):
    lines = (FIX / "langfuse_observations.jsonl").read_text().splitlines()
    broken = json.loads(lines[4])
    del broken["traceId"]
    file = tmp_path / "obs.jsonl"
    file.write_text("\n".join([*lines[:4], json.dumps(broken), *lines[5:]]) + "\n")
    db = tmp_path / "e.db"
    code, out, err = run(capsys, "import", "traces", file, "--dataset", "lf", "--db", db, "--format", "langfuse")
    assert (code, out) == (1, "")
    assert "obs.jsonl:5 [observation 2a00000000000002]: observation without traceId" in err
    assert not db.exists()


def _score_id(*key: object) -> str:
    return str(uuid.uuid5(SCORE_NAMESPACE, "\x1f".join(map(str, key))))


def test_labels_go_out_as_langfuse_score_bodies_its_models_accept(tmp_path, capsys):
    db = tmp_path / "s.db"
    assert run(capsys, "import", "traces", FIX / "langfuse_observations.json", "--dataset", "lf", "--db", db)[0] == 0
    with open_store(db) as store:
        opened = open_dataset("lf", store)
        for u in opened.units():
            if u.unit_kind == "passage" and u.case_id.endswith(T1):
                store.set_label("ana", u, "relevant", int(u.text == LAST))
        (r1,) = (r for r in response_units(opened) if r.case_id.endswith(T1))
        store.set_label("ana", r1, "pass", 1)
        store.set_comment("ana", r1, "exact hour and the weekday caveat")
    out = tmp_path / "scores.jsonl"
    code, text, err = run(capsys, "export", "traces", "--dataset", "lf", "--db", db, "--langfuse", out,
                          "--annotator", "ana")
    assert (code, err) == (0, "")
    assert text == f"4 Langfuse score(s) written to {out} (one create-score body a line)\n"
    bodies = [json.loads(line) for line in out.read_text().splitlines()]
    known = {"id", "traceId", "sessionId", "observationId", "datasetRunId", "name", "value", "comment", "metadata",
             "environment", "queueId", "dataType", "configId", "source", "timestamp"}
    for body in bodies:
        assert set(body) <= known  # the model allows extra fields: a misspelt one would pass it silently
        parse_obj_as(CreateScoreRequest, body)
    assert bodies[0] == {
        "id": _score_id(T1, "1a00000000000002", "relevance", 0, "ana"), "traceId": T1,
        "observationId": "1a00000000000002", "name": "relevance", "value": 1, "dataType": "BOOLEAN",
        "timestamp": "2026-11-30T09:00:00Z",
        "metadata": {"document_position": 0, "document_id": "kb-2", "annotator": "ana",
                     "source": "rag-label-playground"}}
    assert [(b["name"], b["value"], b["dataType"]) for b in bodies[1:]] == [
        ("relevance", 0, "BOOLEAN"), ("context_relevance", 0.5, "NUMERIC"), ("verdict", "pass", "CATEGORICAL")]
    verdict = bodies[3]
    # the root span is an observation (not the trace), so the score names it
    assert (verdict["observationId"], verdict["comment"]) == ("1a00000000000001", "exact hour and the weekday caveat")
    assert verdict["id"] == _score_id(T1, "1a00000000000001", "verdict", -1, "ana")
    first = out.read_bytes()
    code = run(capsys, "export", "traces", "--dataset", "lf", "--db", db, "--langfuse", out, "--annotator", "ana")[0]
    assert code == 0
    assert out.read_bytes() == first  # same ids and timestamps: sending it again updates, never duplicates
