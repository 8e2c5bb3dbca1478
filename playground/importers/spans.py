"""Read OpenInference spans, streamed, from what Phoenix and OpenTelemetry write: Parquet, JSONL, OTLP JSON.

Every span becomes one small :class:`SpanRecord` (ids, kind, times, input,
output, documents, session); nothing else of the span is kept, so memory
grows with the text to label, not with the file.  Accepted inputs:

* the **Phoenix spans dataframe** (``get_spans_dataframe()``,
  ``TraceDataset``) saved as Parquet or as JSON Lines: columns
  ``context.trace_id``, ``context.span_id``, ``parent_id``, ``name``,
  ``span_kind``, ``start_time``, ``end_time`` and ``attributes.<key>``
  (``attributes.retrieval.documents`` a list of ``{"document.content",
  "document.id", "document.score"}``); a JSON Lines record may also nest
  ``context`` and ``attributes`` as objects (Phoenix's span JSON);
* **OTLP JSON** (``ExportTraceServiceRequest``: ``resourceSpans`` →
  ``scopeSpans`` → ``spans`` with ``traceId``, ``spanId``,
  ``parentSpanId``, ``startTimeUnixNano`` and ``attributes`` as
  ``{key, value: {stringValue | intValue | doubleValue | boolValue |
  arrayValue}}``): one document (``.json``) or one request per line
  (``.jsonl``, as the OpenTelemetry Collector's file exporter writes).  Ids
  are hex (the OTLP/JSON rule) or base64 (protobuf's generic JSON mapping).

Attribute keys are OpenInference's: ``openinference.span.kind``,
``input.value``, ``output.value``, ``session.id``,
``retrieval.documents.N.document.{content,id,score}`` and
``reranker.output_documents.N.document.*``; nested and flat spellings are
the same key.  A string that is not UTF-8 (bytes in Parquet, undecodable
bytes in a JSON line) is a problem naming the trace, span and attribute.
"""
from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from ..errors import Problem

__all__ = ["Document", "SpanRecord", "flatten", "read_spans"]

_BATCH = 4096
#: Parquet columns worth reading (by prefix): ids, times, kinds and the attributes a sample is made of.
_WANTED = ("context", "parent_id", "name", "span_kind", "start_time", "end_time", "attributes.input",
           "attributes.output", "attributes.retrieval", "attributes.reranker", "attributes.session",
           "attributes.openinference")
_DOC_LISTS = ("retrieval.documents", "reranker.output_documents")


@dataclass(frozen=True)
class Document:
    """One retrieved document: its position in the span's list, id, text and score."""

    position: int
    doc_id: str | None
    content: str | None
    score: float | None


@dataclass(frozen=True)
class SpanRecord:
    """What a sample needs of one span, and where the span was in the file (``line N`` / ``row N``)."""

    trace_id: str
    span_id: str
    parent_id: str | None
    name: str
    kind: str
    start: int
    end: int
    input: str | None
    input_mime: str | None
    output: str | None
    documents: tuple[Document, ...]
    reranked: tuple[Document, ...]
    session_id: str | None
    place: str
    line: int | None
    bad_text: tuple[str, ...] = ()


def flatten(value: Any, prefix: str = "", out: dict[str, Any] | None = None) -> dict[str, Any]:
    """Nested objects and lists to dotted keys: ``{"a": [{"b.c": 1}]}`` → ``{"a.0.b.c": 1}``."""
    out = {} if out is None else out
    if isinstance(value, dict):
        for k, v in value.items():
            flatten(v, f"{prefix}.{k}" if prefix else str(k), out)
    elif isinstance(value, list | tuple) and value and all(isinstance(v, dict) for v in value):
        for i, v in enumerate(value):
            flatten(v, f"{prefix}.{i}", out)
    else:
        out[prefix] = value
    return out


def _nanos(value: Any) -> int:
    """A time as an integer for ordering: datetimes and ISO text in ns, numbers as given (one unit per file)."""
    if value is None or (isinstance(value, float) and value != value):
        return 0
    if isinstance(value, datetime):
        return int(value.timestamp() * 1_000_000) * 1000
    if isinstance(value, int | float) and not isinstance(value, bool):
        return int(value)
    if isinstance(value, str):
        if value.isdigit():
            return int(value)
        try:
            return _nanos(datetime.fromisoformat(value.replace("Z", "+00:00")))
        except ValueError:
            return 0
    return 0


def _hex_id(value: Any) -> str | None:
    """A trace or span id as lowercase hex (hex kept; base64 from protobuf's JSON decoded; '0x' dropped)."""
    if value is None or value == "" or (isinstance(value, float) and value != value):
        return None
    if isinstance(value, bytes):
        return value.hex()
    text = str(value)
    text = text[2:] if text.startswith("0x") else text
    if len(text) in (16, 32) and all(c in "0123456789abcdefABCDEF" for c in text):
        return text.lower()
    try:
        raw = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return text
    return raw.hex() if len(raw) in (8, 16) else text


def _text(attrs: dict[str, Any], key: str, bad: list[str]) -> str | None:
    value = attrs.get(key)
    if value is None or (isinstance(value, float) and value != value):
        return None
    if isinstance(value, bytes):
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError:
            bad.append(key)
            return None
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    if any("\udc80" <= ch <= "\udcff" for ch in text):  # surrogateescape'd bytes that were not UTF-8
        bad.append(key)
        return None
    return text


def _score(value: Any) -> float | None:
    if isinstance(value, int | float) and not isinstance(value, bool) and value == value:
        return float(value)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return None
    return None


def _documents(attrs: dict[str, Any], base: str, bad: list[str]) -> tuple[Document, ...]:
    positions = sorted({int(k[len(base) + 1:].split(".", 1)[0]) for k in attrs
                        if k.startswith(base + ".") and k[len(base) + 1:].split(".", 1)[0].isdigit()})
    docs = []
    for n in positions:
        key = f"{base}.{n}.document"
        doc_id = _text(attrs, f"{key}.id", bad)
        docs.append(Document(n, doc_id, _text(attrs, f"{key}.content", bad), _score(attrs.get(f"{key}.score"))))
    return tuple(docs)


def _record(flat: dict[str, Any], ids: tuple[Any, Any, Any], times: tuple[Any, Any], name: Any, kind: Any,
            place: str, line: int | None) -> SpanRecord:
    """A :class:`SpanRecord` from flat OpenInference attribute keys and the span's own fields."""
    bad: list[str] = []
    trace_id, span_id, parent = (_hex_id(i) for i in ids)
    kind = flat.get("openinference.span.kind") or kind
    return SpanRecord(
        trace_id or "", span_id or "", parent, str(name or ""), str(kind or "UNKNOWN").upper(),
        _nanos(times[0]), _nanos(times[1]), _text(flat, "input.value", bad), _text(flat, "input.mime_type", bad),
        _text(flat, "output.value", bad), _documents(flat, _DOC_LISTS[0], bad), _documents(flat, _DOC_LISTS[1], bad),
        _text(flat, "session.id", bad), place, line, tuple(bad))


def _phoenix_record(row: dict[str, Any], place: str, line: int | None) -> SpanRecord:
    """A span of Phoenix's dataframe (flat ``attributes.`` columns) or span JSON (nested objects)."""
    flat = flatten(row)
    attrs = {k[len("attributes."):]: v for k, v in flat.items() if k.startswith("attributes.")}
    return _record(attrs, (flat.get("context.trace_id"), flat.get("context.span_id"), flat.get("parent_id")),
                   (flat.get("start_time"), flat.get("end_time")), flat.get("name"), flat.get("span_kind"),
                   place, line)


def _any_value(value: Any) -> Any:
    """The Python value of an OTLP ``AnyValue`` (arrays as lists)."""
    if not isinstance(value, dict):
        return None
    for key in ("stringValue", "boolValue", "doubleValue"):
        if key in value:
            return value[key]
    if "intValue" in value:
        return int(value["intValue"])
    if "arrayValue" in value:
        return [_any_value(v) for v in (value["arrayValue"] or {}).get("values", [])]
    return None


def _otlp_records(request: dict[str, Any], place: str, line: int | None) -> Iterator[SpanRecord]:
    for resource in request.get("resourceSpans") or []:
        for scope in (resource or {}).get("scopeSpans") or []:
            for span in (scope or {}).get("spans") or []:
                attrs = {str(a.get("key")): _any_value(a.get("value")) for a in span.get("attributes") or []
                         if isinstance(a, dict)}
                yield _record(attrs, (span.get("traceId"), span.get("spanId"), span.get("parentSpanId")),
                              (span.get("startTimeUnixNano"), span.get("endTimeUnixNano")), span.get("name"),
                              None, place, line)


def _json_lines(path: Path, problems: list[Problem]) -> Iterator[SpanRecord]:
    with path.open("rb") as fh:
        for n, raw in enumerate(fh, 1):
            text = raw.decode("utf-8", errors="surrogateescape")
            if not text.strip():
                continue
            try:
                obj = json.loads(text)
            except json.JSONDecodeError as exc:
                problems.append(Problem(path.name, f"malformed JSON ({exc.msg}, column {exc.colno})", "", n))
                continue
            if not isinstance(obj, dict):
                problems.append(Problem(path.name, f"expected a JSON object, got {type(obj).__name__}", "", n))
            elif "resourceSpans" in obj:
                yield from _otlp_records(obj, f"line {n}", n)
            else:
                yield _phoenix_record(obj, f"line {n}", n)


def _json_document(path: Path, problems: list[Problem]) -> Iterator[SpanRecord]:
    try:
        obj = json.loads(path.read_bytes().decode("utf-8", errors="surrogateescape"))
    except json.JSONDecodeError as exc:
        problems.append(Problem(path.name, f"malformed JSON: {exc.msg}", "", exc.lineno))
        return
    if isinstance(obj, dict) and "resourceSpans" in obj:
        yield from _otlp_records(obj, "document", None)
    elif isinstance(obj, list):
        for n, item in enumerate(obj, 1):
            if isinstance(item, dict):
                yield _phoenix_record(item, f"item {n}", None)
            else:
                problems.append(Problem(path.name, f"expected a JSON object, got {type(item).__name__}", f"item {n}"))
    else:
        problems.append(Problem(path.name, "neither OTLP JSON (resourceSpans) nor a JSON array of spans"))


def _parquet(path: Path, problems: list[Problem]) -> Iterator[SpanRecord]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        pf = pq.ParquetFile(path)
    except (pa.ArrowException, OSError) as exc:
        problems.append(Problem(path.name, f"not a readable Parquet file: {exc}"))
        return
    names = pf.schema_arrow.names
    columns = [c for c in names if c.startswith(_WANTED) or c == "attributes"]
    n = 0
    for batch in pf.iter_batches(batch_size=_BATCH, columns=columns):
        for row in batch.to_pylist():
            n += 1
            yield _phoenix_record(row, f"row {n}", None)


def read_spans(path: Path, problems: list[Problem]) -> Iterator[SpanRecord]:
    """Every span of ``path`` (``.parquet``, ``.jsonl``, ``.json``), streamed; problems appended."""
    suffix = path.suffix.lower()
    if suffix == ".parquet":
        return _parquet(path, problems)
    if suffix == ".jsonl":
        return _json_lines(path, problems)
    if suffix == ".json":
        return _json_document(path, problems)
    raise ValueError(f"{path}: unsupported file type {suffix or '(none)'!r}: give a .parquet, .jsonl or .json file")
