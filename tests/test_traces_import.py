"""``import traces``: OpenInference / Phoenix spans → one sample per trace; skipped traces listed; bad input refused.

The fixtures (tests/fixtures/traces/, made by scripts/make_trace_fixtures.py
with the OpenTelemetry SDK, OpenInference and Phoenix) hold five traces of a
stub RAG pipeline: two turns of session ``sess-ferry`` (the second through a
reranker), one single question, one with no retriever span, one whose model
failed.  Ids below are the fixture's own (seeded id generator).
"""
from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from playground.cli import main
from playground.errors import DataError, Problem
from playground.importers.traces import import_traces, prepare_traces, read_traces
from playground.model import Turn
from playground.store import open_store

FIX = Path(__file__).parent / "fixtures" / "traces"
FORMATS = ("phoenix_spans.parquet", "phoenix_spans.jsonl", "phoenix_span_json.jsonl", "otlp_spans.json")
T1, T2, T3 = "8bb01460217f871cbe0ae8fa1ceac2cc", "35fef5876ae5bc08c37f0ce876cf29a6", "68311de3071daa8c3383ac783005a658"
NO_RETRIEVER, NO_OUTPUT = "d34787e4fd2fc982b24fa0d25086afab", "b90efd13b0c97126850cca8981a6efc3"
FERRY = "Tidewell's ferry leaves the north pier every 40 minutes from 6 am."
LAST = "The last ferry of the day leaves at 11 pm on weekdays."
TICKET = "Tickets cost 4 euros; children under 6 ride free."
MUSEUM = "The harbour museum is closed on Mondays."


def run(capsys, *argv: object) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("name", FORMATS)
def test_every_export_format_gives_the_same_three_samples(name):
    problems: list[Problem] = []
    read = read_traces(FIX / name, problems)
    assert problems == []
    assert (read.spans, read.traces) == (15, 5)
    s1, s2, s3 = read.samples
    assert [s.sample_id for s in read.samples] == [T1, T2, T3]  # by root start time
    assert (s1.query, s1.contexts, s1.context_ids) == ("When does the first ferry leave?", (FERRY, LAST, MUSEUM),
                                                       ("kb-1", "kb-2", "kb-4"))
    assert s1.response == f"According to the timetable: {FERRY}"
    assert s1.extra["documents"] == [["39f5c88e2d94628b", 0, 0.91], ["39f5c88e2d94628b", 1, 0.55],
                                     ["39f5c88e2d94628b", 2, 0.12]]
    assert (s1.extra["root_span_id"], s1.extra["response_span_id"], s1.extra["session_id"]) == (
        "b64ba4fd98e616ec", "b64ba4fd98e616ec", "sess-ferry")
    # the second turn: the reranker's output (kb-2, kb-1), not the retriever's three; the first turn as history
    assert (s2.query, s2.contexts, s2.context_ids) == ("And the last one?", (LAST, FERRY), ("kb-2", "kb-1"))
    assert s2.extra["documents"] == [["f488c78dd79e9be5", 0, 0.98], ["f488c78dd79e9be5", 1, 0.4]]
    assert s2.history == (Turn("user", "When does the first ferry leave?"),
                          Turn("assistant", f"According to the timetable: {FERRY}"))
    assert (s3.query, s3.contexts, s3.history, s3.extra["session_id"]) == ("How much is a ticket?", (TICKET, FERRY),
                                                                           (), None)
    assert [(s.trace_id, s.span_id, s.reason) for s in read.skipped] == [
        (NO_OUTPUT, "cc1df8d5a9871701", "no output (neither the root span nor an LLM span has one)"),
        (NO_RETRIEVER, "2d27f3132122dec3", "no retriever span")]


def test_import_lists_the_skipped_traces_and_reimporting_a_later_export_keeps_every_label(tmp_path, capsys):
    db = tmp_path / "l.db"
    code, out, err = run(capsys, "import", "traces", FIX / "phoenix_spans.parquet", "--dataset", "rag", "--db", db)
    assert (code, err) == (0, "")
    assert out == (f"dataset 'rag' (traces) imported: 3 samples, 10 units, in sqlite://{db}\n"
                   "  read 15 spans in 5 traces\n  2 trace(s) with nothing to label, not imported:\n"
                   f"    trace {NO_OUTPUT} (span cc1df8d5a9871701): no output (neither the root span nor an LLM span "
                   "has one)\n"
                   f"    trace {NO_RETRIEVER} (span 2d27f3132122dec3): no retriever span\n")
    with open_store(db) as store:
        from playground.datasets import open_dataset

        units = open_dataset("rag", store).units()
        for u in units:
            for dim in u.dimensions:
                store.set_label("ana", u, dim, 1)
        before = {(s.unit_id, s.dimension, s.value) for s in store.current_labels({u.unit_id: u for u in units})}
    # a later export: the same spans in OTLP JSON, interleaved with a new trace's spans
    later = tmp_path / "later.jsonl"
    lines = (FIX / "phoenix_span_json.jsonl").read_text(encoding="utf-8").splitlines()
    extra = [span_line("f" * 32, "1" * 16, None, "CHAIN", 9, inp="Where is the pier?", out="North."),
             span_line("f" * 32, "2" * 16, "1" * 16, "RETRIEVER", 10, docs=[("kb-1", FERRY, 0.5)])]
    later.write_text("\n".join([lines[0], extra[1], *lines[1:], extra[0]]) + "\n", encoding="utf-8")
    code, out, _ = run(capsys, "import", "traces", later, "--dataset", "rag", "--db", db, "--replace")
    assert code == 0 and out.startswith("dataset 'rag' (traces) replaced: 4 samples, 12 units")  # + 1 passage, 1 claim
    with open_store(db) as store:
        from playground.datasets import open_dataset

        catalog = open_dataset("rag", store).catalog()
        after = {(s.unit_id, s.dimension, s.value) for s in store.current_labels(catalog)}
        assert after == before and len(after) == 13  # 7 passages + 3 claims x 2 dimensions
        assert store.stale(catalog) == []


def span_line(trace: str, span: str, parent: str | None, kind: str, start: int, *, inp: str | None = None,
              out: str | None = None, docs: list | None = None, session: str | None = None, end: int | None = None,
              mime: str | None = None) -> str:
    """One span in Phoenix's span JSON (nested attributes), as phoenix.trace.span_json_encoder writes it."""
    attrs: dict = {"openinference": {"span": {"kind": kind}}}
    if inp is not None:
        attrs["input"] = {"value": inp, **({"mime_type": mime} if mime else {})}
    if out is not None:
        attrs["output"] = {"value": out}
    if docs is not None:
        attrs["retrieval"] = {"documents": [{"document": {"id": i, "content": c, "score": s}} for i, c, s in docs]}
    if session is not None:
        attrs["session"] = {"id": session}
    return json.dumps({"name": kind.lower(), "context": {"trace_id": trace, "span_id": span}, "parent_id": parent,
                       "span_kind": kind, "start_time": f"2026-01-01T00:00:{start:02d}+00:00",
                       "end_time": f"2026-01-01T00:00:{end if end is not None else start + 1:02d}+00:00",
                       "attributes": attrs})


def good_trace(trace: str, root: str = "a" * 16) -> list[str]:
    return [span_line(trace, root, None, "CHAIN", 1, inp="Q?", out="A."),
            span_line(trace, root[:15] + "b", root, "RETRIEVER", 2, docs=[("d1", "Text one.", 0.9)])]


def write(tmp_path: Path, lines: list[str], name: str = "spans.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def problems_of(path: Path) -> list[tuple[int | None, str, str]]:
    with pytest.raises(DataError) as err:
        prepare_traces(path, "x")
    return [(p.line, p.where, p.message) for p in err.value.problems]


def test_missing_parent_cycle_two_roots_and_a_document_without_content_are_each_listed(tmp_path):
    t = ["1" * 32, "2" * 32, "3" * 32, "4" * 32]
    lines = [
        *good_trace("0" * 32),
        span_line(t[0], "7" * 16, None, "CHAIN", 1, inp="Q?", out="A."),
        span_line(t[0], "8" * 16, "9" * 16, "RETRIEVER", 2, docs=[("d", "x", 1.0)]),  # line 4: missing parent
        span_line(t[1], "c" * 16, "d" * 16, "CHAIN", 1, inp="Q?", out="A."),  # lines 5-6: a cycle c -> d -> c
        span_line(t[1], "d" * 16, "c" * 16, "RETRIEVER", 2, docs=[("d", "x", 1.0)]),
        span_line(t[2], "e" * 16, None, "CHAIN", 1, inp="Q?", out="A."),  # lines 7-8: two roots
        span_line(t[2], "f" * 16, None, "CHAIN", 3, inp="Q?", out="B."),
        span_line(t[3], "1" * 16, None, "CHAIN", 1, inp="Q?", out="A."),  # line 10: a document without content
        span_line(t[3], "2" * 16, "1" * 16, "RETRIEVER", 2, docs=[("d1", "Text.", 1.0), ("d2", None, 0.5)]),
    ]
    assert problems_of(write(tmp_path, lines)) == [
        (4, f"trace {t[0]} span {'8' * 16}", f"missing parent: parent span {'9' * 16} is not in the file"),
        (5, f"trace {t[1]} span {'c' * 16}",  # once, on its smallest span id
         f"parent ids form a cycle of 2 spans: {'c' * 16} -> {'d' * 16} -> {'c' * 16}"),
        (8, f"trace {t[2]} span {'f' * 16}", f"two final outputs: 2 root spans ({'e' * 16}, {'f' * 16})"),
        (10, f"trace {t[3]} span {'2' * 16}", "document 1 has no content"),
    ]


def test_two_llm_outputs_ending_last_a_non_utf8_attribute_and_a_reused_span_id_are_refused(tmp_path):
    t = ["1" * 32, "2" * 32]
    lines = [
        span_line(t[0], "a" * 16, None, "CHAIN", 1, inp="Q?", end=9),  # the root has no output
        span_line(t[0], "b" * 16, "a" * 16, "RETRIEVER", 2, docs=[("d", "x", 1.0)]),
        span_line(t[0], "c" * 16, "a" * 16, "LLM", 3, out="One.", end=5),
        span_line(t[0], "e" * 16, "a" * 16, "LLM", 4, out="Two.", end=5),  # line 4: ends with c, says otherwise
        span_line(t[1], "a" * 16, None, "CHAIN", 1, inp="Q?", out="A."),  # line 5: span id of trace 1 again
    ]
    path = write(tmp_path, lines)
    with path.open("ab") as fh:  # line 6: an input that is not UTF-8
        fh.write(span_line("3" * 32, "f" * 16, None, "CHAIN", 1, inp="caf@", out="A.").encode().replace(
            b"caf@", b"caf\xe9") + b"\n")
    assert problems_of(path) == [
        (4, f"trace {t[0]} span {'e' * 16}", f"two final outputs: LLM spans {'c' * 16}, {'e' * 16} end last with "
         "different outputs"),
        (5, f"trace {t[1]} span {'a' * 16}", f"span id also used in trace {t[0]}"),
        (6, f"trace {'3' * 32} span {'f' * 16}", "attribute input.value is not UTF-8 text"),
    ]


def test_a_refused_file_imports_nothing_and_the_cli_lists_every_problem(tmp_path, capsys):
    bad = write(tmp_path, [*good_trace("0" * 32), span_line("1" * 32, "b" * 16, "9" * 16, "RETRIEVER", 2,
                                                              docs=[("d", "x", 1.0)])])
    db = tmp_path / "l.db"
    code, out, err = run(capsys, "import", "traces", bad, "--dataset", "x", "--db", db)
    assert (code, out) == (1, "")
    assert err == (f"{bad}: not a usable span file; nothing was imported: 1 problem(s)\n"
                   f"  spans.jsonl:3 [trace {'1' * 32} span {'b' * 16}]: missing parent: parent span {'9' * 16} "
                   "is not in the file\n")
    assert not db.exists()


def test_the_last_llm_output_answers_when_the_root_has_none_and_a_json_input_gives_its_query(tmp_path):
    trace = "5" * 32
    lines = [span_line(trace, "a" * 16, None, "CHAIN", 1, inp=json.dumps({"query": "Where?", "k": 3}),
                       mime="application/json", end=9),
             span_line(trace, "b" * 16, "a" * 16, "RETRIEVER", 2, docs=[("d", "Here.", None)]),
             span_line(trace, "c" * 16, "a" * 16, "LLM", 3, out="Rewritten query", end=4),
             span_line(trace, "e" * 16, "a" * 16, "LLM", 5, out="It is here.", end=8)]
    problems: list[Problem] = []
    (sample,) = read_traces(write(tmp_path, lines), problems).samples
    assert problems == []
    assert (sample.query, sample.response, sample.extra["response_span_id"]) == ("Where?", "It is here.", "e" * 16)
    assert sample.extra["documents"] == [["b" * 16, 0, None]]


def test_traces_with_nothing_to_label_only_are_refused_with_their_reasons(tmp_path):
    path = write(tmp_path, [span_line("6" * 32, "a" * 16, None, "CHAIN", 1, inp="Q?", out="A.")])
    assert problems_of(path) == [(None, "", "no trace to label (1 spans, 1 traces)"),
                                 (None, f"trace {'6' * 32} span {'a' * 16}", "skipped: no retriever span")]


def test_otlp_ids_in_base64_and_the_phoenix_server_dataframe_spelling_read_the_same(tmp_path):
    otlp = json.loads((FIX / "otlp_spans.json").read_text(encoding="utf-8"))
    for rs in otlp["resourceSpans"]:
        for ss in rs["scopeSpans"]:
            for span in ss["spans"]:
                for key in ("traceId", "spanId", "parentSpanId"):
                    if span.get(key):
                        span[key] = base64.b64encode(bytes.fromhex(span[key])).decode()
    b64 = tmp_path / "b64.json"
    b64.write_text(json.dumps(otlp), encoding="utf-8")
    # get_spans_dataframe's spelling: flat attribute columns, documents as {"document.content": ...} records
    flat = tmp_path / "flat.jsonl"
    rows = []
    for line in (FIX / "phoenix_span_json.jsonl").read_text(encoding="utf-8").splitlines():
        span = json.loads(line)
        attrs = span.pop("attributes")
        row = {"context.span_id": span["context"]["span_id"], "context.trace_id": span["context"]["trace_id"],
               "parent_id": span["parent_id"], "span_kind": span["span_kind"], "start_time": span["start_time"],
               "end_time": span["end_time"], "attributes.openinference.span.kind": span["span_kind"]}
        for key in ("input", "output"):
            if key in attrs:
                row[f"attributes.{key}.value"] = attrs[key]["value"]
        if "session" in attrs:
            row["attributes.session.id"] = attrs["session"]["id"]
        for key, sub in (("retrieval", "documents"), ("reranker", "output_documents")):
            if sub in attrs.get(key, {}):
                row[f"attributes.{key}.{sub}"] = [{f"document.{k}": v for k, v in d["document"].items()}
                                                  for d in attrs[key][sub]]
        rows.append(row)
    flat.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    def essence(samples: list) -> list[tuple]:
        return [(s.sample_id, s.query, s.contexts, s.context_ids, s.history, s.response, s.extra) for s in samples]

    reference = essence(read_traces(FIX / "phoenix_spans.parquet", []).samples)
    for path in (b64, flat):
        problems: list[Problem] = []
        assert essence(read_traces(path, problems).samples) == reference
        assert problems == []


def test_a_dry_run_says_what_it_would_import(capsys, tmp_path):
    path = FIX / "otlp_spans.json"
    code, out, err = run(capsys, "import", "traces", path, "--dataset", "t", "--db", tmp_path / "l.db", "--dry-run")
    assert (code, err) == (0, "")
    assert out.splitlines()[0] == (f"{path}: 15 spans in 5 traces — 3 samples, 10 units, 2 trace(s) skipped; "
                                   "nothing written (--dry-run)")
    assert not (tmp_path / "l.db").exists()


def test_import_traces_writes_labels_given_with_it_in_the_same_transaction(tmp_path):
    _payload, units, _read = prepare_traces(FIX / "phoenix_spans.jsonl", "lab")
    passage = units[0]
    table = tmp_path / "labels.csv"
    table.write_text(f"annotator,unit_id,dimension,value\nana,{passage.unit_id},relevant,0\n", encoding="utf-8")
    with open_store(tmp_path / "l.db") as store:
        result = import_traces(FIX / "phoenix_spans.jsonl", "lab", store, labels=table)
        assert result.result.labels == 1
        assert [(s.unit_id, s.value) for s in store.current_labels({passage.unit_id: passage})] == [
            (passage.unit_id, 0)]


def test_a_span_without_ids_is_listed_with_its_line_and_a_hint_about_the_dataframe_index(tmp_path):
    row = json.loads(span_line("7" * 32, "a" * 16, None, "CHAIN", 1, inp="Q?", out="A."))
    del row["context"]  # what df.to_json(orient="records") writes when context.span_id is the index
    path = write(tmp_path, [*good_trace("0" * 32), json.dumps(row)])
    assert problems_of(path) == [(3, "line 3", "a span without trace id or span id (a spans dataframe saved without "
                                               "its context.span_id index? save df.reset_index())")]


def test_otlp_requests_one_per_line_as_the_collectors_file_exporter_writes_them(tmp_path):
    otlp = json.loads((FIX / "otlp_spans.json").read_text(encoding="utf-8"))
    spans = otlp["resourceSpans"][0]["scopeSpans"][0]["spans"]
    scope = otlp["resourceSpans"][0]["scopeSpans"][0]
    lines = [json.dumps({"resourceSpans": [{**otlp["resourceSpans"][0],
                                            "scopeSpans": [{**scope, "spans": spans[i:i + 4]}]}]})
             for i in range(0, len(spans), 4)]  # 4 batches, traces cut across them
    problems: list[Problem] = []
    read = read_traces(write(tmp_path, lines, "collector.jsonl"), problems)
    assert problems == []
    assert (read.spans, [s.sample_id for s in read.samples]) == (15, [T1, T2, T3])


def test_bytes_that_are_not_utf8_in_a_parquet_column_are_listed(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.table({"context.trace_id": ["1" * 32, "1" * 32], "context.span_id": ["a" * 16, "b" * 16],
                      "parent_id": [None, "a" * 16], "span_kind": ["CHAIN", "RETRIEVER"],
                      "attributes.input.value": pa.array([b"caf\xe9?", None], pa.binary()),
                      "attributes.output.value": ["A.", None],
                      "attributes.retrieval.documents": [None, [{"document.content": "Text.", "document.id": "d"}]]})
    pq.write_table(table, tmp_path / "bin.parquet")
    assert problems_of(tmp_path / "bin.parquet") == [
        (None, f"trace {'1' * 32} span {'a' * 16}", "attribute input.value is not UTF-8 text")]
