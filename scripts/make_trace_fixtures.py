"""Write tests/fixtures/traces/ with the real libraries: OpenTelemetry + OpenInference, Phoenix, datasets.

Run in a throwaway environment (these libraries are NOT dependencies of the project)::

    python3 -m venv /tmp/phxenv
    /tmp/phxenv/bin/pip install arize-phoenix openinference-instrumentation \
        openinference-semantic-conventions opentelemetry-sdk opentelemetry-exporter-otlp-proto-common datasets
    /tmp/phxenv/bin/python scripts/make_trace_fixtures.py            # writes the fixtures
    /tmp/phxenv/bin/python scripts/make_trace_fixtures.py --check DIR/NAME.document_annotations.parquet \
        DIR/NAME.span_annotations.parquet                           # Phoenix's own validators on an export

A tiny RAG pipeline with a stub model is traced with the OpenTelemetry SDK,
OpenInference attributes set through OpenInference's tracer and
``using_session`` (ids from a seeded generator, times from a fake clock, so
the fixtures are the same on every run).  Five traces: two turns of one
session (the second through a reranker), one single question, one with no
retriever span, one whose model failed (no output).  Written:

* ``phoenix_spans.parquet`` / ``phoenix_spans.jsonl`` — Phoenix's spans
  dataframe (``TraceDataset`` built as ``from_spans`` builds it, over spans decoded by
  ``phoenix.trace.otel.decode_otlp_span``, as Phoenix's collector decodes
  them), as Parquet and as JSON Lines (``DataFrame.to_json(orient="records",
  lines=True)``);
* ``phoenix_span_json.jsonl`` — Phoenix's span JSON (``span_to_json``), one per line;
* ``otlp_spans.json`` — the OTLP ``ExportTraceServiceRequest`` the SDK's
  exporter sends, in OTLP/JSON (ids hex, per the OTLP/JSON rule);
* ``hf_dataset/`` and ``hf_datasetdict/`` — ``datasets.Dataset`` /
  ``DatasetDict`` ``save_to_disk`` folders of RAGAS-style rows;
* ``phoenix_annotation_contract.json`` — the columns Phoenix's client
  accepts for ``log_document_annotations_dataframe`` and
  ``log_span_annotations_dataframe`` (read from its validators).
"""
from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "traces"
T0 = 1_764_000_000_000_000_000  # ns: a fixed clock

DOCS = {
    "kb-1": "Tidewell's ferry leaves the north pier every 40 minutes from 6 am.",
    "kb-2": "The last ferry of the day leaves at 11 pm on weekdays.",
    "kb-3": "Tickets cost 4 euros; children under 6 ride free.",
    "kb-4": "The harbour museum is closed on Mondays.",
}


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def tick(self, ms: int = 5) -> int:
        self.now += ms * 1_000_000
        return self.now


def stub_model(question: str, docs: list[str]) -> str:
    """The 'LLM': the first retrieved sentence, as an answer."""
    return f"According to the timetable: {docs[0]}" if docs else "I do not know."


def _tracer():  # type: ignore[no-untyped-def]
    from openinference.instrumentation import OITracer, TraceConfig
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    from opentelemetry.sdk.trace.id_generator import IdGenerator

    rng = random.Random(28)

    class Seeded(IdGenerator):
        def generate_span_id(self) -> int:
            return rng.getrandbits(64)

        def generate_trace_id(self) -> int:
            return rng.getrandbits(128)

    exporter = InMemorySpanExporter()
    resource = Resource.create({"service.name": "rag-demo", "service.instance.id": "fixture"})
    provider = TracerProvider(id_generator=Seeded(), resource=resource)
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return OITracer(provider.get_tracer("rag-demo"), config=TraceConfig()), exporter


def _documents(prefix: str, docs: list[tuple[str, float]]) -> dict[str, object]:
    from openinference.semconv.trace import DocumentAttributes as D

    attrs: dict[str, object] = {}
    for i, (doc_id, score) in enumerate(docs):
        attrs[f"{prefix}.{i}.{D.DOCUMENT_ID}"] = doc_id
        attrs[f"{prefix}.{i}.{D.DOCUMENT_CONTENT}"] = DOCS[doc_id]
        attrs[f"{prefix}.{i}.{D.DOCUMENT_SCORE}"] = score
    return attrs


def run_pipeline(tracer, clock: Clock, question: str, *, retrieve: list[tuple[str, float]] | None,  # type: ignore[no-untyped-def]
                 rerank: list[tuple[str, float]] | None = None, fail: bool = False) -> None:
    from openinference.semconv.trace import OpenInferenceSpanKindValues as K
    from openinference.semconv.trace import SpanAttributes as A
    from opentelemetry.trace import Status, StatusCode

    kind = A.OPENINFERENCE_SPAN_KIND
    with tracer.start_as_current_span("rag", start_time=clock.tick(), end_on_exit=False) as root:
        root.set_attributes({kind: K.CHAIN.value, A.INPUT_VALUE: question})
        docs: list[str] = []
        if retrieve is not None:
            with tracer.start_as_current_span("retrieve", start_time=clock.tick(), end_on_exit=False) as span:
                span.set_attributes({kind: K.RETRIEVER.value, A.INPUT_VALUE: question,
                                     **_documents(A.RETRIEVAL_DOCUMENTS, retrieve)})
                docs = [DOCS[d] for d, _ in retrieve]
                span.end(end_time=clock.tick())
        if rerank is not None:
            with tracer.start_as_current_span("rerank", start_time=clock.tick(), end_on_exit=False) as span:
                span.set_attributes({kind: K.RERANKER.value, "reranker.query": question,
                                     **_documents("reranker.input_documents", retrieve or []),
                                     **_documents("reranker.output_documents", rerank)})
                docs = [DOCS[d] for d, _ in rerank]
                span.end(end_time=clock.tick())
        with tracer.start_as_current_span("generate", start_time=clock.tick(), end_on_exit=False) as span:
            span.set_attributes({kind: K.LLM.value, A.INPUT_VALUE: question, A.LLM_MODEL_NAME: "stub-1"})
            if fail:
                span.set_status(Status(StatusCode.ERROR, "model timed out"))
                span.end(end_time=clock.tick())
                root.set_status(Status(StatusCode.ERROR, "model timed out"))
                root.end(end_time=clock.tick())
                return
            answer = stub_model(question, docs)
            span.set_attribute(A.OUTPUT_VALUE, answer)
            span.end(end_time=clock.tick())
        root.set_attribute(A.OUTPUT_VALUE, answer)
        root.end(end_time=clock.tick())


def make_spans():  # type: ignore[no-untyped-def]
    from openinference.instrumentation import using_session

    tracer, exporter = _tracer()
    clock = Clock()
    with using_session("sess-ferry"):
        run_pipeline(tracer, clock, "When does the first ferry leave?", retrieve=[("kb-1", 0.91), ("kb-2", 0.55),
                                                                                  ("kb-4", 0.12)])
        run_pipeline(tracer, clock, "And the last one?", retrieve=[("kb-1", 0.71), ("kb-2", 0.69), ("kb-3", 0.2)],
                     rerank=[("kb-2", 0.98), ("kb-1", 0.40)])
    run_pipeline(tracer, clock, "How much is a ticket?", retrieve=[("kb-3", 0.88), ("kb-1", 0.30)])
    run_pipeline(tracer, clock, "Say hello.", retrieve=None)
    run_pipeline(tracer, clock, "Is the museum open on Monday?", retrieve=[("kb-4", 0.93)], fail=True)
    return exporter.get_finished_spans()


def _hex_ids(obj: object) -> object:
    """OTLP/JSON writes trace and span ids as hex; protobuf's generic mapping gave base64."""
    import base64

    if isinstance(obj, dict):
        return {k: (base64.b64decode(v).hex() if k in ("traceId", "spanId", "parentSpanId") and v else _hex_ids(v))
                for k, v in obj.items()}
    if isinstance(obj, list):
        return [_hex_ids(v) for v in obj]
    return obj


def write_spans(spans, out: Path) -> None:  # type: ignore[no-untyped-def]
    import pandas as pd
    import pyarrow as pa
    import pyarrow.parquet as pq
    from google.protobuf.json_format import MessageToDict
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
    from phoenix.trace.otel import decode_otlp_span
    from phoenix.trace.span_json_encoder import span_to_json
    from phoenix.trace.trace_dataset import TraceDataset, get_serializable_spans_dataframe

    request = encode_spans(spans)
    otlp = _hex_ids(MessageToDict(request))
    (out / "otlp_spans.json").write_text(json.dumps(otlp, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    decoded = [decode_otlp_span(s) for rs in request.resource_spans for ss in rs.scope_spans for s in ss.spans]
    with (out / "phoenix_span_json.jsonl").open("w", encoding="utf-8") as fh:
        for span in decoded:
            fh.write(json.dumps(json.loads(span_to_json(span)), sort_keys=True) + "\n")
    # TraceDataset.from_spans's own body, with the ISO times span_to_json writes parsed first: in this
    # version from_spans hands normalize_timestamps strings and fails ("must have numeric or datetime dtype")
    # keys sorted first: Phoenix's attribute order varies from run to run (PYTHONHASHSEED), the fixtures must not
    records = [json.loads(json.dumps(json.loads(span_to_json(s)), sort_keys=True)) for s in decoded]
    frame = pd.json_normalize(records, max_level=1)
    for column in ("start_time", "end_time"):
        frame[column] = pd.to_datetime(frame[column], utc=True)
    frame = TraceDataset(frame).dataframe
    pq.write_table(pa.Table.from_pandas(get_serializable_spans_dataframe(frame), preserve_index=False),
                   out / "phoenix_spans.parquet")
    frame.to_json(out / "phoenix_spans.jsonl", orient="records", lines=True, date_format="iso")


def write_hf(out: Path) -> None:
    from datasets import Dataset, DatasetDict

    rows = [{"id": f"q{i}", "user_input": q, "retrieved_contexts": [DOCS[d] for d in ids],
             "retrieved_context_ids": list(ids), "response": stub_model(q, [DOCS[d] for d in ids]),
             "reference": ref}
            for i, (q, ids, ref) in enumerate([
                ("When does the first ferry leave?", ("kb-1", "kb-2"), "At 6 am."),
                ("How much is a ticket?", ("kb-3",), "4 euros; under 6 free."),
                ("Is the museum open on Monday?", ("kb-4", "kb-1"), "No, it is closed on Mondays."),
            ], 1)]
    for name in ("hf_dataset", "hf_datasetdict"):
        shutil.rmtree(out / name, ignore_errors=True)
    Dataset.from_list(rows).save_to_disk(str(out / "hf_dataset"))
    DatasetDict({"train": Dataset.from_list(rows[:2]), "test": Dataset.from_list(rows[2:])}).save_to_disk(
        str(out / "hf_datasetdict"))


def write_contract(out: Path) -> None:
    """The annotation-dataframe columns Phoenix's client checks, read from its own validator's constants."""
    import inspect

    from phoenix.client.utils import annotation_helpers as h

    def ids(config) -> dict[str, str]:  # type: ignore[no-untyped-def]
        return {k: v.__name__ for k, v in config.columns.items()}

    result = [p for p in inspect.signature(h._create_document_annotation).parameters if p != "document_position"]
    contract = {
        "source": "phoenix.client.utils.annotation_helpers (arize-phoenix-client "
                  + __import__("importlib.metadata").metadata.version("arize-phoenix-client") + ")",
        "annotator_kinds": sorted(h._VALID_ANNOTATOR_KINDS),
        "document": {"id_columns": ids(h._DOCUMENT_ID_CONFIG), "factory_parameters": result},
        "span": {"id_columns": ids(h._SPAN_ID_CONFIG),
                 "factory_parameters": list(inspect.signature(h._create_span_annotation).parameters)},
        "name_column": "name or annotation_name (not both)",
        "result_columns": ["label", "score", "explanation"],
    }
    (out / "phoenix_annotation_contract.json").write_text(json.dumps(contract, indent=1) + "\n", encoding="utf-8")


def check(document_file: Path, span_file: Path) -> None:
    """Run Phoenix's validators and annotation factories on an export (raises if Phoenix would refuse it)."""
    import pandas as pd
    from phoenix.client.utils import annotation_helpers as h

    docs = pd.read_parquet(document_file)
    h._validate_document_annotations_dataframe(dataframe=docs, annotation_name_required=True,
                                               annotator_kind_required=True)
    made = [a for chunk in h._chunk_document_annotations_dataframe(dataframe=docs) for a in chunk]
    spans = pd.read_parquet(span_file)
    h._validate_span_annotations_dataframe(dataframe=spans, annotation_name_required=True,
                                           annotator_kind_required=True)
    made_spans = [a for chunk in h._chunk_span_annotations_dataframe(dataframe=spans) for a in chunk]
    print(f"Phoenix accepts {len(made)} document annotations and {len(made_spans)} span annotations; first: "
          f"{made[0]!r}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", nargs=2, type=Path, metavar=("DOCUMENTS", "SPANS"), default=None)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    if args.check:
        check(*args.check)
        return 0
    args.out.mkdir(parents=True, exist_ok=True)
    write_spans(make_spans(), args.out)
    write_hf(args.out)
    write_contract(args.out)
    print(f"wrote {', '.join(sorted(p.name for p in args.out.iterdir()))} in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
