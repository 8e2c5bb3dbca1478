"""Langfuse exports read directly (one sample per trace), and verdicts back as Langfuse scores.

**In.**  What Langfuse's public API returns, saved as a file:

* observations as the Observations API v2 gives them (``GET
  /api/public/v2/observations``: ``{"data": [observation, ...], "meta":
  {...}}``), as such a page, a JSON list of observations, or JSON Lines with
  one observation (or one page) a line.  An observation has ``id``,
  ``traceId``, ``type`` (``SPAN``, ``GENERATION``, ``RETRIEVER``, ``AGENT``,
  ``TOOL``, ``CHAIN``, ``EVENT``, ...), ``startTime``, ``endTime``,
  ``parentObservationId``, ``input``, ``output``, ``sessionId``;
* traces with their observations (``GET /api/public/traces/{id}``: ``id``,
  ``timestamp``, ``input``, ``output``, ``sessionId``, ``observations``), one
  a line, or a list of them, or a page ``{"data": [trace, ...]}``.

Each trace becomes the spans :mod:`.traces` assembles (the same rules, skips
and checks as ``import traces FILE``): an observation is a span with its id
and parent, kind ``LLM`` for a ``GENERATION`` and its own type otherwise.
The root is the trace itself when the export holds the trace (its input and
output; its span id is the trace id), else the trace's one observation
without a parent.  Text out of Langfuse's JSON values: a string is itself; a
chat message list gives its last user message's ``content``; an object its
``content``, ``text``, ``output`` or ``answer`` string (an object input goes
to the question rule as JSON: ``query``, ``question``, ...).  A RETRIEVER's
documents are its output list (or the list under ``documents``): a string,
or an object with ``page_content``/``pageContent``/``content``/``text``, its
``id`` (else ``metadata.id``, ``metadata.source``) and ``score``.

Problems import nothing and name the observation and line: an observation
without ``id`` or ``traceId``, a line that is not JSON, a file that is not a
Langfuse export.

**Out.**  :func:`langfuse_scores` turns a traces dataset's labels (those of
:func:`.trace_export.trace_annotations`) into Langfuse score bodies — the
``CreateScoreRequest`` of ``POST /api/public/scores`` and of the SDK's
``create_score``: per labelled passage ``relevance`` (``BOOLEAN`` 1/0, on
the retriever observation, ``metadata.document_position``), per trace the
four rates (``NUMERIC``) and ``verdict`` (``CATEGORICAL`` ``pass``/``fail``,
the note as ``comment``), on the observation whose output was labelled (no
``observationId`` when that is the trace itself).  Each score's ``id`` is a
UUID 5 of (trace, observation, name, position, who) and its ``timestamp`` the
trace's, so sending the file again updates the same scores instead of adding
new ones (Langfuse: "send it again with the same id and timestamp").
"""
from __future__ import annotations

import json
import tempfile
import uuid
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..errors import DataError, Problem

__all__ = ["SCORE_NAMESPACE", "is_langfuse", "langfuse_scores", "prepare_langfuse", "read_langfuse",
           "write_langfuse_scores"]

#: The UUID 5 namespace of the score ids (a fixed random UUID: ids are the same on every machine).
SCORE_NAMESPACE = uuid.UUID("5d0e8a52-3f0e-4b43-9b7c-2f1a8c7e61d4")
_CONTENT = ("page_content", "pageContent", "content", "text")
_TEXT = ("content", "text", "output", "answer")


def _values(path: Path, problems: list[Problem]) -> Iterator[tuple[Any, int | None]]:
    """Each JSON value of the file with its line (JSON Lines) or None (one JSON document)."""
    text = path.read_text(encoding="utf-8")
    if path.suffix.lower() == ".jsonl":
        for n, line in enumerate(text.split("\n"), 1):
            if line.strip():
                try:
                    yield json.loads(line), n
                except json.JSONDecodeError as exc:
                    problems.append(Problem(path.name, f"not JSON: {exc.msg}", line=n))
        return
    try:
        yield json.loads(text), None
    except json.JSONDecodeError as exc:
        problems.append(Problem(path.name, f"not JSON: {exc.msg}", line=exc.lineno))


def _items(value: Any) -> list[Any]:
    if isinstance(value, dict) and isinstance(value.get("data"), list):
        return list(value["data"])
    return list(value) if isinstance(value, list) else [value]


def _is_item(value: Any) -> bool:
    return isinstance(value, dict) and (("traceId" in value and "type" in value) or "observations" in value)


def is_langfuse(path: Path) -> bool:
    """Whether the file's first item looks like a Langfuse observation or trace (``--format auto``)."""
    if path.suffix.lower() not in (".json", ".jsonl"):
        return False
    try:
        with path.open(encoding="utf-8") as f:
            head = f.readline() if path.suffix.lower() == ".jsonl" else f.read()
        items = _items(json.loads(head))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return False
    return bool(items) and _is_item(items[0])


def _text(value: Any) -> str | None:
    """Text out of a Langfuse input/output value (module docstring)."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, list) and value and all(isinstance(m, dict) and "role" in m for m in value):
        users = [m for m in value if m.get("role") == "user" and isinstance(m.get("content"), str)]
        return str(users[-1]["content"]) if users else json.dumps(value, ensure_ascii=False)
    if isinstance(value, dict):
        for key in _TEXT:
            if isinstance(value.get(key), str):
                return str(value[key])
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _documents(output: Any) -> list[dict[str, Any]]:
    items = output.get("documents") if isinstance(output, dict) else output
    docs: list[dict[str, Any]] = []
    for raw in items if isinstance(items, list) else []:
        if isinstance(raw, str):
            docs.append({"document.content": raw})
            continue
        item: dict[str, Any] = raw if isinstance(raw, dict) else {}
        meta: dict[str, Any] = item["metadata"] if isinstance(item.get("metadata"), dict) else {}
        content = next((item[k] for k in _CONTENT if isinstance(item.get(k), str)), None)
        doc_id = item.get("id") or meta.get("id") or meta.get("source")
        score = item.get("score", meta.get("score"))
        docs.append({"document.content": content, "document.id": None if doc_id is None else str(doc_id),
                     "document.score": score})
    return docs


def _span(trace_id: str, span_id: str, parent: str | None, kind: str, start: Any, end: Any, item: dict[str, Any],
          session: Any) -> dict[str, Any]:
    attrs: dict[str, Any] = {}
    raw_input = item.get("input")
    if isinstance(raw_input, dict):
        attrs["input.value"], attrs["input.mime_type"] = json.dumps(raw_input, ensure_ascii=False), "application/json"
    elif raw_input is not None:
        attrs["input.value"] = _text(raw_input)
    if kind == "RETRIEVER":
        attrs["retrieval.documents"] = _documents(item.get("output"))
    elif item.get("output") is not None:
        attrs["output.value"] = _text(item.get("output"))
    if session:
        attrs["session.id"] = str(session)
    return {"context": {"trace_id": trace_id, "span_id": span_id}, "parent_id": parent, "name": item.get("name"),
            "span_kind": kind, "start_time": start, "end_time": end, "attributes": attrs}


def _observation(o: dict[str, Any], trace_id: str, parent: str | None) -> dict[str, Any]:
    kind = str(o.get("type") or "SPAN").upper()
    return _span(trace_id, str(o["id"]), parent, "LLM" if kind == "GENERATION" else kind, o.get("startTime"),
                 o.get("endTime"), o, o.get("sessionId"))


def _check(item: Any, file: str, line: int | None, problems: list[Problem], trace: bool) -> bool:
    if not isinstance(item, dict):
        problems.append(Problem(file, "not a Langfuse observation or trace (a JSON object)", line=line))
        return False
    what = "trace" if trace else "observation"
    missing = [k for k in (("id",) if trace else ("id", "traceId")) if not item.get(k)]
    if missing:
        problems.append(Problem(file, f"{what} without {' or '.join(missing)}",
                                f"{what} {item.get('id') or item.get('name') or '?'}", line))
        return False
    return True


def read_langfuse(path: Path, problems: list[Problem]) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """``(Phoenix span JSON records, trace id -> trace timestamp)``; every problem appended."""
    file = path.name
    spans: list[dict[str, Any]] = []
    times: dict[str, str] = {}
    loose: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for value, line in _values(path, problems):
        for item in _items(value):
            if isinstance(item, dict) and "observations" in item:
                if not _check(item, file, line, problems, True):
                    continue
                tid = str(item["id"])
                ends = [str(o["endTime"]) for o in item["observations"] if isinstance(o, dict) and o.get("endTime")]
                spans.append(_span(tid, tid, None, "CHAIN", item.get("timestamp"), max(ends, default=None), item,
                                   item.get("sessionId")))
                times[tid] = str(item.get("timestamp") or "")
                for o in item["observations"]:
                    if _check(o, file, line, problems, False):
                        spans.append(_observation(o, tid, o.get("parentObservationId") or tid))
            elif _check(item, file, line, problems, False):
                loose[str(item["traceId"])].append(item)
    for tid, observations in loose.items():
        spans.extend(_observation(o, tid, o.get("parentObservationId")) for o in observations)
        roots = [o for o in observations if not o.get("parentObservationId")]
        times.setdefault(tid, str(min(str(o.get("startTime") or "") for o in roots or observations)))
    return spans, times


def prepare_langfuse(path: Path, name: str) -> tuple[dict[str, Any], list[Any], Any]:
    """``(payload, units, read)`` of a Langfuse export, through :func:`.traces.prepare_traces`."""
    from .traces import prepare_traces

    problems: list[Problem] = []
    spans, times = read_langfuse(path, problems)
    if problems or not spans:
        problems = problems or [Problem(path.name, "no Langfuse observation or trace in the file")]
        raise DataError(problems, f"{path}: not a usable Langfuse export; nothing was imported")
    spans.sort(key=lambda s: (s["context"]["trace_id"], str(s["start_time"]), s["context"]["span_id"]))
    with tempfile.TemporaryDirectory(prefix="playground-langfuse-") as tmp:
        tmp_path = Path(tmp) / f"{path.stem}.jsonl"
        tmp_path.write_text("".join(json.dumps(s, ensure_ascii=False, sort_keys=True) + "\n" for s in spans),
                            encoding="utf-8")
        payload, units, read = prepare_traces(tmp_path, name)
    from .hf_disk import digest

    payload["source"] = {"file": path.name, "sha256": digest(path), "format": "langfuse"}
    payload["trace_times"] = {s["sample_id"]: times.get(s["sample_id"], "") for s in payload["samples"]}
    return payload, units, read


def _score(key: tuple[str, str, str, int, str], row: dict[str, Any], value: Any, data_type: str,
           when: str | None, metadata: dict[str, Any]) -> dict[str, Any]:
    trace_id, observation, name, _position, who = key
    body: dict[str, Any] = {"id": str(uuid.uuid5(SCORE_NAMESPACE, "\x1f".join(map(str, key)))),
                            "traceId": trace_id, "name": name, "value": value, "dataType": data_type}
    if observation and observation != trace_id:
        body["observationId"] = observation
    if row.get("explanation"):
        body["comment"] = row["explanation"]
    if when:
        body["timestamp"] = when
    body["metadata"] = {**metadata, "annotator": who, "source": "rag-label-playground"}
    return body


def langfuse_scores(opened: Any, store: Any, annotator: str | None = None) -> list[dict[str, Any]]:
    """Langfuse score bodies of the dataset's labels (module docstring), in trace then document order."""
    from .trace_export import trace_annotations

    rows = trace_annotations(opened, store, annotator)
    times = opened.payload.get("trace_times") or {}
    out = []
    for r in rows.documents:
        key = (r["_trace"], r["span_id"], "relevance", r["document_position"], rows.who)
        out.append(_score(key, r, int(r["score"]), "BOOLEAN", times.get(r["_trace"]),
                          {"document_position": r["document_position"], "document_id": r["_doc_id"]}))
    for r in rows.spans:
        key = (r["_trace"], r["span_id"], r["name"], -1, rows.who)
        if r["name"] == "verdict":
            out.append(_score(key, r, r["label"], "CATEGORICAL", times.get(r["_trace"]), {}))
        else:
            out.append(_score(key, r, r["score"], "NUMERIC", times.get(r["_trace"]), {"count": r["label"]}))
    return out


def write_langfuse_scores(opened: Any, store: Any, out: Path, annotator: str | None = None) -> int:
    """Write the score bodies as JSON Lines to ``out`` (atomically); how many."""
    from ..files import write_all_atomic

    scores = langfuse_scores(opened, store, annotator)
    text = "".join(json.dumps(s, ensure_ascii=False, sort_keys=True) + "\n" for s in scores)
    out.parent.mkdir(parents=True, exist_ok=True)
    write_all_atomic({out: text.encode("utf-8")})
    return len(scores)
