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
``reranker.output_documents.N.document.*``; nested objects and dotted keys
are the same key (``{"input": {"value": …}}`` is ``input.value``).  Documents
are a list (Phoenix: items ``{"document": {"content", …}}`` or
``{"document.content", …}``) or, in OTLP, numbered flat keys.  Parquet
struct columns are flattened by Arrow and only the columns above are read;
times only order spans, so each file keeps its own unit.  A string that is not UTF-8 (bytes in Parquet, undecodable
bytes in a JSON line) is a problem naming the trace, span and attribute.

Bounds (:mod:`.limits`), checked span by span as the file streams: a span (a
Phoenix row or JSON object, an OTLP span) whose cell is longer than
``MAX_CELL_CHARS`` or whose nesting is deeper than ``MAX_DEPTH`` becomes a
record of its ids only, carrying the field and the bound it crossed
(:attr:`SpanRecord.over_limit`); a Parquet file stops at more than
``MAX_FILE_BYTES`` characters of text (a JSON file's size is checked before
it is read, by :func:`.traces.read_traces`).
"""
from __future__ import annotations

import base64
import binascii
import json
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from .. import limits
from ..errors import Problem
from ..jsonl import json_value

__all__ = ["Document", "SpanRecord", "flatten", "read_spans"]

_BATCH = 4096
#: Parquet columns worth reading (by prefix): ids, times, kinds and the attributes a sample is made of.
_WANTED = ("context", "parent_id", "name", "span_kind", "start_time", "end_time", "attributes.input",
           "attributes.output", "attributes.retrieval", "attributes.reranker", "attributes.session",
           "attributes.openinference")
_DOC_LISTS = ("retrieval.documents", "reranker.output_documents")
#: The leaf columns of a flattened Phoenix dataframe that a sample is made of.
_LEAVES = {"context.trace_id", "context.span_id", "parent_id", "name", "span_kind", "start_time", "end_time",
           "attributes.input.value", "attributes.input.mime_type", "attributes.output.value",
           "attributes.session.id", "attributes.openinference.span.kind",
           *(f"attributes.{d}" for d in _DOC_LISTS)}
_HEX = re.compile(r"(?:[0-9a-fA-F]{16}){1,2}")
_SURROGATE = re.compile("[\udc80-\udcff]")


@dataclass(frozen=True, slots=True)
class Document:
    """One retrieved document: its position in the span's list, id, text and score."""

    position: int
    doc_id: str | None
    content: str | None
    score: float | None


@dataclass(frozen=True, slots=True)  # slots: a million spans are held at once, each without a __dict__
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
    #: ``(field, what)``: the span crossed a bound of :mod:`.limits` there (its texts are then not kept).
    over_limit: tuple[str, str] | None = None


def flatten(value: dict[str, Any], prefix: str = "", out: dict[str, Any] | None = None) -> dict[str, Any]:
    """Nested objects to dotted keys, lists kept as values: ``{"a": {"b": [1]}}`` → ``{"a.b": [1]}``."""
    out = {} if out is None else out
    for k, v in value.items():
        key = f"{prefix}.{k}" if prefix else str(k)
        if isinstance(v, dict):
            flatten(v, key, out)
        else:
            out[key] = v
    return out


def _nanos(value: Any) -> int:
    """A time as an integer for ordering: datetimes and ISO text in ns, numbers as given (one unit per file)."""
    if isinstance(value, str):
        if value.isdigit():
            return int(value)
        try:
            value = datetime.fromisoformat(value)
        except ValueError:
            return 0
    if isinstance(value, datetime):
        return int(value.timestamp() * 1_000_000) * 1000
    if isinstance(value, int | float) and not isinstance(value, bool) and value == value:
        return int(value)
    return 0


def _hex_id(value: Any) -> str | None:
    """A trace or span id as lowercase hex (hex kept; base64 from protobuf's JSON decoded; '0x' dropped)."""
    if type(value) is str and _HEX.fullmatch(value):
        return value.lower()
    if value is None or value == "" or (isinstance(value, float) and value != value):
        return None
    if isinstance(value, bytes):
        return value.hex()
    text = str(value)
    text = text[2:] if text.startswith("0x") else text
    if _HEX.fullmatch(text):
        return text.lower()
    try:
        raw = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return text
    return raw.hex() if len(raw) in (8, 16) else text


def _over_limit(span: dict[str, Any], ids: tuple[Any, Any, Any], where: tuple[str, int | None]) -> SpanRecord | None:
    """None when ``span`` (one span's object) is within the cell and depth bounds; else a record of its ids
    (each cut to 120 characters) and the field and bound it crossed."""
    try:
        limits.check_value(span)
    except limits.LimitExceeded as exc:
        trace_id, span_id, parent = (i if i is None else (_hex_id(i) or "")[:120] for i in ids)
        return SpanRecord(trace_id or "", span_id or "", parent, "", "UNKNOWN", 0, 0, None, None, None, (), (),
                          None, where[0], where[1], over_limit=(exc.field, str(exc)))
    return None


def _phoenix_ids(row: dict[str, Any]) -> tuple[Any, Any, Any]:
    """Trace, span and parent id of a Phoenix row, flat (``context.span_id``) or nested (``context: {…}``)."""
    context = row.get("context")
    context = context if isinstance(context, dict) else {}
    return (row.get("context.trace_id", context.get("trace_id")), row.get("context.span_id", context.get("span_id")),
            row.get("parent_id"))


class _Reader:
    """Text out of one span's attributes, noting each attribute that is not UTF-8."""

    def __init__(self, dirty: bool) -> None:
        self.dirty = dirty  # the line had bytes that are not UTF-8: look for them
        self.bad: list[str] = []

    def text(self, value: Any, key: str) -> str | None:
        if value is None or (isinstance(value, float) and value != value):
            return None
        if isinstance(value, bytes):
            try:
                return value.decode("utf-8")
            except UnicodeDecodeError:
                self.bad.append(key)
                return None
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
        if self.dirty and _SURROGATE.search(text):  # surrogateescape'd bytes that were not UTF-8
            self.bad.append(key)
            return None
        return text

    def document(self, n: int, fields: Any, base: str) -> Document:
        """Document ``n`` from ``{"document": {"id", ...}}`` or ``{"document.id", ...}``."""
        fields = fields if isinstance(fields, dict) else {}
        inner = fields.get("document")
        if isinstance(inner, dict):
            doc_id, content, score = inner.get("id"), inner.get("content"), inner.get("score")
        else:
            doc_id, content, score = (fields.get("document.id"), fields.get("document.content"),
                                      fields.get("document.score"))
        key = f"{base}.{n}.document"
        return Document(n, self.text(doc_id, f"{key}.id"), self.text(content, f"{key}.content"), _score(score))


def _score(value: Any) -> float | None:
    if isinstance(value, int | float) and not isinstance(value, bool) and value == value:
        return float(value)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return None
    return None


def _documents(attrs: dict[str, Any], prefix: str, base: str, reader: _Reader,
               flat: bool) -> tuple[Document, ...]:
    """The documents under ``base``: a list of (nested or dotted) objects, or (``flat``) OTLP's ``base.N.…`` keys."""
    value = attrs.get(prefix + base)
    if isinstance(value, list | tuple):
        return tuple(reader.document(n, d, base) for n, d in enumerate(value))
    if not flat:
        return ()
    groups: dict[int, dict[str, Any]] = {}
    head = prefix + base + "."
    for k, v in attrs.items():
        if k.startswith(head):
            index, _, rest = k[len(head):].partition(".")
            if index.isdigit():
                groups.setdefault(int(index), {})[rest] = v
    return tuple(reader.document(n, groups[n], base) for n in sorted(groups))


def _record(attrs: dict[str, Any], prefix: str, ids: tuple[Any, Any, Any], times: tuple[Any, Any], name: Any,
            kind: Any, where: tuple[str, int | None], *, dirty: bool = False, flat: bool = False) -> SpanRecord:
    """A :class:`SpanRecord` from OpenInference attributes (keys ``prefix + key``) and the span's own fields."""
    r = _Reader(dirty)

    def text(key: str) -> str | None:
        return r.text(attrs.get(prefix + key), key)

    kind = attrs.get(prefix + "openinference.span.kind") or kind
    # interned: the spans of a trace share one trace id, and names and kinds are few (a million spans are held)
    return SpanRecord(
        sys.intern(_hex_id(ids[0]) or ""), _hex_id(ids[1]) or "", _hex_id(ids[2]), sys.intern(str(name or "")),
        sys.intern(str(kind or "UNKNOWN").upper()), _nanos(times[0]), _nanos(times[1]), text("input.value"),
        text("input.mime_type"), text("output.value"), _documents(attrs, prefix, _DOC_LISTS[0], r, flat),
        _documents(attrs, prefix, _DOC_LISTS[1], r, flat), text("session.id"), where[0], where[1], tuple(r.bad))


def _phoenix_record(row: dict[str, Any], place: str, line: int | None, dirty: bool = False,
                    nested: bool = True, checked: bool = False) -> SpanRecord:
    """A span of Phoenix's dataframe (flat ``attributes.`` columns) or span JSON (``nested`` objects).

    ``checked``: the caller has found ``row`` within the bounds already.
    """
    over = None if checked else _over_limit(row, _phoenix_ids(row), (place, line))
    if over is not None:
        return over
    flat = flatten(row) if nested else row
    return _record(flat, "attributes.", (flat.get("context.trace_id"), flat.get("context.span_id"),
                                         flat.get("parent_id")),
                   (flat.get("start_time"), flat.get("end_time")), flat.get("name"), flat.get("span_kind"),
                   (place, line), dirty=dirty)


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


def _otlp_records(request: dict[str, Any], place: str, line: int | None,
                  dirty: bool = False) -> Iterator[SpanRecord]:
    for resource in request.get("resourceSpans") or []:
        for scope in (resource or {}).get("scopeSpans") or []:
            for span in (scope or {}).get("spans") or []:
                span = span if isinstance(span, dict) else {}  # no ids: listed as a span without them
                over = _over_limit(span, (span.get("traceId"), span.get("spanId"), span.get("parentSpanId")),
                                   (place, line))
                if over is not None:
                    yield over
                    continue
                attrs = {str(a.get("key")): _any_value(a.get("value")) for a in span.get("attributes") or []
                         if isinstance(a, dict)}
                yield _record(attrs, "", (span.get("traceId"), span.get("spanId"), span.get("parentSpanId")),
                              (span.get("startTimeUnixNano"), span.get("endTimeUnixNano")), span.get("name"),
                              None, (place, line), dirty=dirty, flat=True)


def _json_lines(path: Path, problems: list[Problem]) -> Iterator[SpanRecord]:
    with path.open("rb") as fh:
        for n, raw in enumerate(fh, 1):
            try:
                text, dirty = raw.decode("utf-8"), False
            except UnicodeDecodeError:
                text, dirty = raw.decode("utf-8", errors="surrogateescape"), True
            if not text.strip():
                continue
            obj, problem = json_value(text.rstrip("\r\n"))
            if problem:
                problems.append(Problem(path.name, problem, "", n))
                continue
            if not isinstance(obj, dict):
                problems.append(Problem(path.name, f"expected a JSON object, got {type(obj).__name__}", "", n))
            elif "resourceSpans" in obj:
                yield from _otlp_records(obj, f"line {n}", n, dirty)
            else:
                yield _phoenix_record(obj, f"line {n}", n, dirty)


def _json_document(path: Path, problems: list[Problem]) -> Iterator[SpanRecord]:
    raw = path.read_bytes()
    try:
        text, dirty = raw.decode("utf-8"), False
    except UnicodeDecodeError:
        text, dirty = raw.decode("utf-8", errors="surrogateescape"), True
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        problems.append(Problem(path.name, f"invalid JSON: {exc.msg} (column {exc.colno})", "", exc.lineno))
        return
    except RecursionError:
        problems.append(Problem(path.name, "invalid JSON: nested too deep", "", None))
        return
    if isinstance(obj, dict) and "resourceSpans" in obj:
        yield from _otlp_records(obj, "document", None, dirty)
    elif isinstance(obj, list):
        for n, item in enumerate(obj, 1):
            if isinstance(item, dict):
                yield _phoenix_record(item, f"item {n}", None, dirty)
            else:
                problems.append(Problem(path.name, f"expected a JSON object, got {type(item).__name__}", f"item {n}"))
    else:
        problems.append(Problem(path.name, "neither OTLP JSON (resourceSpans) nor a JSON array of spans"))


def _parquet(path: Path, problems: list[Problem]) -> Iterator[SpanRecord]:
    """Phoenix's dataframe as Parquet: struct columns flattened by Arrow, only the columns a sample needs read."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        pf = pq.ParquetFile(path)
    except (pa.ArrowException, OSError) as exc:
        problems.append(Problem(path.name, f"not a readable Parquet file: {exc}"))
        return
    columns = [c for c in pf.schema_arrow.names if c.startswith(_WANTED) or c == "attributes"]
    n = text = 0
    for batch in pf.iter_batches(batch_size=_BATCH, columns=columns):
        table = pa.Table.from_batches([batch])
        while any(pa.types.is_struct(f.type) for f in table.schema):
            table = table.flatten()
        names = [c for c in table.column_names if c in _LEAVES]
        values = [table.column(c).cast(pa.int64()) if pa.types.is_timestamp(table.schema.field(c).type)
                  else table.column(c) for c in names]  # times as integers: only their order matters
        for row in zip(*(v.to_pylist() for v in values), strict=True):
            n += 1
            record = dict(zip(names, row, strict=True))
            try:
                text += limits.check_value(record)
            except limits.LimitExceeded:
                yield _phoenix_record(record, f"row {n}", None, nested=False)  # the record saying which bound
                continue
            if text > limits.MAX_FILE_BYTES:
                problems.append(Problem(path.name, f"more than {limits.MAX_FILE_BYTES:,} characters of text, larger "
                                        f"than the limit ({limits.describe()}): split it", "", None))
                return
            yield _phoenix_record(record, f"row {n}", None, nested=False, checked=True)


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
