"""Send a small traced RAG pipeline's spans to a running Phoenix, as an application would.

The OpenTelemetry SDK exports over OTLP/HTTP to ``URL/v1/traces``, with OpenInference's attribute names
(``openinference.span.kind``, ``input.value``, ``output.value``, ``retrieval.documents.N.document.*``) and the
project in the resource (``openinference.project.name``).  Three traces an hour apart from 2026-01-01T10:00Z:
two RAG turns (a retriever with documents and an LLM under a root span) and one with no retriever.  Needs the
``test`` extra (opentelemetry-sdk, its OTLP/HTTP exporter, openinference-semantic-conventions, arize-phoenix-client)::

    .venv/bin/python scripts/send_demo_traces.py http://localhost:6006 rag-demo

It prints each trace's id and waits until Phoenix has stored all eight spans.  tests/test_phoenix_live.py
sends its traces with it.
"""
from __future__ import annotations

import sys
import time
from dataclasses import dataclass

import httpx

HOUR = 3600 * 10**9
T0 = 1_767_261_600 * 10**9  # 2026-01-01T10:00:00Z in ns
DOCS = {
    "kb-1": "Tidewell's ferry leaves the north pier every 40 minutes from 6 am.",
    "kb-2": "The last ferry of the day leaves at 11 pm on weekdays.",
    "kb-4": "The harbour museum is closed on Mondays.",
}


@dataclass(frozen=True)
class Trace:
    trace_id: str
    root: str
    retriever: str | None
    llm: str


def send_traces(url: str, project: str) -> list[Trace]:
    """Three traces an hour apart: two RAG turns (retriever + LLM under a root), one with no retriever."""
    from openinference.semconv.resource import ResourceAttributes
    from openinference.semconv.trace import DocumentAttributes as D
    from openinference.semconv.trace import OpenInferenceSpanKindValues as K
    from openinference.semconv.trace import SpanAttributes as A
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.trace import set_span_in_context

    provider = TracerProvider(resource=Resource({ResourceAttributes.PROJECT_NAME: project}))
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=f"{url}/v1/traces")))
    tracer = provider.get_tracer("rag-pipeline")
    plan = [("When does the last ferry leave?", ["kb-2", "kb-1", "kb-4"], "The last ferry leaves at 11 pm."),
            ("How often does the ferry run?", ["kb-1", "kb-4"], "Every 40 minutes from 6 am."),
            ("Tell me a joke.", None, "No jokes here.")]
    out = []
    for n, (question, doc_ids, answer) in enumerate(plan):
        t = T0 + n * HOUR
        root = tracer.start_span("rag", start_time=t, attributes={
            A.OPENINFERENCE_SPAN_KIND: K.CHAIN.value, A.INPUT_VALUE: question, A.OUTPUT_VALUE: answer})
        ctx = set_span_in_context(root)
        retriever = None
        if doc_ids is not None:
            attrs: dict[str, object] = {A.OPENINFERENCE_SPAN_KIND: K.RETRIEVER.value, A.INPUT_VALUE: question}
            for i, d in enumerate(doc_ids):
                attrs[f"{A.RETRIEVAL_DOCUMENTS}.{i}.{D.DOCUMENT_ID}"] = d
                attrs[f"{A.RETRIEVAL_DOCUMENTS}.{i}.{D.DOCUMENT_CONTENT}"] = DOCS[d]
                attrs[f"{A.RETRIEVAL_DOCUMENTS}.{i}.{D.DOCUMENT_SCORE}"] = 1.0 - i / 10
            retriever = tracer.start_span("retrieve", context=ctx, start_time=t + 1000, attributes=attrs)
            retriever.end(end_time=t + 2000)
        llm = tracer.start_span("generate", context=ctx, start_time=t + 3000, attributes={
            A.OPENINFERENCE_SPAN_KIND: K.LLM.value, A.INPUT_VALUE: question, A.OUTPUT_VALUE: answer})
        llm.end(end_time=t + 4000)
        root.end(end_time=t + 5000)
        out.append(Trace(format(root.get_span_context().trace_id, "032x"),
                         format(root.get_span_context().span_id, "016x"),
                         None if retriever is None else format(retriever.get_span_context().span_id, "016x"),
                         format(llm.get_span_context().span_id, "016x")))
    provider.shutdown()
    _wait_for(url, project, 8)
    return out


def _wait_for(url: str, project: str, spans: int) -> None:
    from phoenix.client import Client

    client = Client(base_url=url)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if len(client.spans.get_spans(project_identifier=project, limit=1000)) >= spans:
                return
        except httpx.HTTPStatusError:
            pass  # the project appears with its first span
        time.sleep(0.3)
    raise RuntimeError(f"Phoenix did not ingest {spans} spans of {project} within 60 s")




def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: send_demo_traces.py URL PROJECT", file=sys.stderr)
        return 2
    for t in send_traces(argv[0], argv[1]):
        print(f"trace {t.trace_id}: root {t.root}, retriever {t.retriever or '-'}, llm {t.llm}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
