"""``export traces``: import spans, label through the store, export Phoenix annotation frames and GenAI events.

The frames are checked against ``phoenix_annotation_contract.json``, which
scripts/make_trace_fixtures.py reads from Phoenix's client validators
(``--check`` runs those validators themselves on an export).
"""
from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from playground.cli import main
from playground.datasets import open_dataset
from playground.importers.traces import import_traces
from playground.store import open_store

FIX = Path(__file__).parent / "fixtures" / "traces"
T1, T2 = "8bb01460217f871cbe0ae8fa1ceac2cc", "35fef5876ae5bc08c37f0ce876cf29a6"
RETRIEVER1, RERANKER2 = "39f5c88e2d94628b", "f488c78dd79e9be5"
ROOT1, ROOT2 = "b64ba4fd98e616ec", "24f1e3cd369cbd3f"
COMMENT = "about the last ferry, not the first"


def run(capsys, *argv: object) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture()
def labelled(tmp_path: Path) -> Path:
    """A store with the fixture's traces and two annotators' labels (values chosen by hand)."""
    db = tmp_path / "l.db"
    with open_store(db) as store:
        import_traces(FIX / "phoenix_spans.parquet", "rag", store)
        units = {(u.case_id.split(":")[1], u.unit_kind, u.text[:12]): u for u in open_dataset("rag", store).units()}
        t1 = {k[2]: u for k, u in units.items() if k[0] == T1}
        t2 = {k[2]: u for k, u in units.items() if k[0] == T2}
        ferry, last, museum, claim1 = t1["Tidewell's f"], t1["The last fer"], t1["The harbour "], t1["According to"]
        for unit, value in ((ferry, 1), (last, 0), (museum, 0)):
            store.set_label("ana", unit, "relevant", value)
        store.set_label("ana", claim1, "supported", 1)
        store.set_label("ana", claim1, "correct", 1)
        store.set_label("ana", t2["The last fer"], "relevant", 1)
        store.set_label("ana", t2["Tidewell's f"], "relevant", 0)
        store.set_comment("ana", last, COMMENT)
        for unit, value in ((ferry, 1), (last, 1), (museum, 0)):  # bo: agrees but on 'last' (a tie)
            store.set_label("bo", unit, "relevant", value)
    return db


def frame(path: Path) -> list[tuple]:
    return [tuple(r.values()) for r in pq.read_table(path).to_pylist()]


def test_one_annotators_labels_become_document_and_span_annotations(labelled, tmp_path, capsys):
    out = tmp_path / "out"
    code, text, err = run(capsys, "export", "traces", "--dataset", "rag", "--db", labelled, "--out", out,
                          "--annotator", "ana")
    assert (code, err) == (0, "")
    assert text.startswith("5 document annotation(s) and 4 span annotation(s) over 3 trace(s) (ana) written to:")
    assert frame(out / "rag.document_annotations.parquet") == [
        (RETRIEVER1, 0, "relevance", "HUMAN", "relevant", 1.0, None),
        (RETRIEVER1, 1, "relevance", "HUMAN", "irrelevant", 0.0, COMMENT),
        (RETRIEVER1, 2, "relevance", "HUMAN", "irrelevant", 0.0, None),
        (RERANKER2, 0, "relevance", "HUMAN", "relevant", 1.0, None),  # the reranker's output order
        (RERANKER2, 1, "relevance", "HUMAN", "irrelevant", 0.0, None),
    ]
    assert frame(out / "rag.span_annotations.parquet") == [
        (ROOT1, "context_relevance", "HUMAN", "1/3", 0.333333, "1 of 3 passages labelled relevant by ana", "ana"),
        (ROOT1, "faithfulness", "HUMAN", "1/1", 1.0, "1 of 1 claims labelled supported by ana", "ana"),
        (ROOT1, "correctness", "HUMAN", "1/1", 1.0, "1 of 1 claims labelled correct by ana", "ana"),
        (ROOT2, "context_relevance", "HUMAN", "1/2", 0.5, "1 of 2 passages labelled relevant by ana", "ana"),
    ]
    events = [json.loads(line) for line in (out / "rag.gen_ai_evaluations.jsonl").read_text().splitlines()]
    assert len(events) == 9
    assert events[1] == {"name": "gen_ai.evaluation.result", "trace_id": T1, "span_id": RETRIEVER1, "attributes": {
        "gen_ai.evaluation.name": "relevance", "gen_ai.evaluation.score.value": 0.0,
        "gen_ai.evaluation.score.label": "irrelevant", "gen_ai.evaluation.explanation": COMMENT,
        "retrieval.document.position": 1, "retrieval.document.id": "kb-2"}}
    assert events[5] == {"name": "gen_ai.evaluation.result", "trace_id": T1, "span_id": ROOT1, "attributes": {
        "gen_ai.evaluation.name": "context_relevance", "gen_ai.evaluation.score.value": 0.333333,
        "gen_ai.evaluation.score.label": "1/3",
        "gen_ai.evaluation.explanation": "1 of 3 passages labelled relevant by ana"}}


def test_the_consensus_leaves_ties_out_and_counts_them(labelled, tmp_path, capsys):
    out = tmp_path / "c"
    code, text, _ = run(capsys, "export", "traces", "--dataset", "rag", "--db", labelled, "--out", out)
    assert code == 0
    assert "1 consensus tie(s) left out" in text
    assert [(s, p, label) for s, p, _n, _k, label, _s, _e in frame(out / "rag.document_annotations.parquet")] == [
        (RETRIEVER1, 0, "relevant"), (RETRIEVER1, 2, "irrelevant"), (RERANKER2, 0, "relevant"),
        (RERANKER2, 1, "irrelevant")]
    assert frame(out / "rag.span_annotations.parquet")[0] == (
        ROOT1, "context_relevance", "HUMAN", "1/2", 0.5, "1 of 2 passages labelled relevant by consensus", "consensus")


def test_the_frames_meet_phoenixs_annotation_contract(labelled, tmp_path):
    contract = json.loads((FIX / "phoenix_annotation_contract.json").read_text(encoding="utf-8"))
    with open_store(labelled) as store:
        from playground.importers.trace_export import export_traces

        export_traces(open_dataset("rag", store), store, tmp_path, annotator="ana")
    types = {"str": pa.types.is_string, "int": pa.types.is_integer}
    for part in ("document", "span"):
        table = pq.read_table(tmp_path / f"rag.{part}_annotations.parquet")
        for column, kind in contract[part]["id_columns"].items():
            assert types[kind](table.schema.field(column).type), column
            assert all(v is not None and str(v).strip() for v in table.column(column).to_pylist())
        names = {"name", "annotation_name"} & set(table.column_names)
        assert names == {"name"}  # one of the two, never both
        assert set(table.column("annotator_kind").to_pylist()) <= set(contract["annotator_kinds"])
        assert set(contract["result_columns"]) <= set(table.column_names)
        assert set(contract["result_columns"]) <= set(contract[part]["factory_parameters"])
        assert pa.types.is_floating(table.schema.field("score").type)


def test_the_same_labels_give_the_same_bytes_and_other_datasets_are_refused(labelled, tmp_path, capsys):
    for name in ("a", "b"):
        assert run(capsys, "export", "traces", "--dataset", "rag", "--db", labelled, "--out", tmp_path / name)[0] == 0
    for file in ("rag.document_annotations.parquet", "rag.span_annotations.parquet", "rag.gen_ai_evaluations.jsonl"):
        assert (tmp_path / "a" / file).read_bytes() == (tmp_path / "b" / file).read_bytes()
    ragas = tmp_path / "r.jsonl"
    ragas.write_text(json.dumps({"user_input": "Q?", "response": "A.", "retrieved_contexts": ["C."]}) + "\n")
    assert run(capsys, "import", "ragas", ragas, "--dataset", "rg", "--db", labelled)[0] == 0
    code, _, err = run(capsys, "export", "traces", "--dataset", "rg", "--db", labelled, "--out", tmp_path / "x")
    assert (code, err) == (1, "error: dataset 'rg' is a ragas dataset; `export traces` takes one imported with "
                              "`playground import traces`\n")


def test_verdicts_go_out_with_their_notes_and_the_consensus_names_who_wrote_each_note(labelled, tmp_path, capsys):
    from playground.verdicts import response_units

    with open_store(labelled) as store:
        responses = {u.case_id.split(":")[1]: u for u in response_units(open_dataset("rag", store))}
        store.set_label("ana", responses[T1], "pass", 0)
        store.set_comment("ana", responses[T1], "gives the first ferry, not the last")
        store.set_tags("ana", responses[T1], ["wrong-passage"])
        store.set_label("bo", responses[T2], "pass", 1)  # no note: no explanation
        last = next(u for u in open_dataset("rag", store).units()
                    if u.case_id.endswith(T1) and u.text.startswith("The last fer"))
        store.set_comment("bo", last, "timetable page")
    out = tmp_path / "v"
    assert run(capsys, "export", "traces", "--dataset", "rag", "--db", labelled, "--out", out)[0] == 0
    spans = frame(out / "rag.span_annotations.parquet")
    assert [r for r in spans if r[1] == "verdict"] == [
        (ROOT1, "verdict", "HUMAN", "fail", 0.0, "ana: gives the first ferry, not the last; failure modes: "
         "wrong-passage", "consensus"),
        (ROOT2, "verdict", "HUMAN", "pass", 1.0, None, "consensus")]
    docs = frame(out / "rag.document_annotations.parquet")
    assert [r for r in docs if r[0] == RETRIEVER1 and r[1] == 0] == [
        (RETRIEVER1, 0, "relevance", "HUMAN", "relevant", 1.0, None)]
    # position 1 ("The last ferry") is a tie (ana 0, bo 1): left out, though both wrote a note on it
    assert [r for r in docs if r[0] == RETRIEVER1 and r[1] == 1] == []
    code = run(capsys, "export", "traces", "--dataset", "rag", "--db", labelled, "--out", out, "--annotator", "bo")[0]
    assert code == 0
    assert frame(out / "rag.document_annotations.parquet")[1] == (
        RETRIEVER1, 1, "relevance", "HUMAN", "relevant", 1.0, "timetable page")
