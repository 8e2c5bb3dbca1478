"""Spans pulled from a running Phoenix through its official client, made a dataset as the file import makes one.

``pull_spans(client, source)`` reads the spans of one Phoenix project
(``client.spans.get_spans``: the REST ``/v1/projects/P/spans`` pages) and
keeps whole traces:

* **time window** — ``start`` (inclusive) and ``end`` (exclusive), as Phoenix
  filters a span's start time; a trace is kept whole, so a trace is pulled
  again by its trace ids when only part of it fell inside the window;
* **span kind** — ``kinds`` keeps the traces that have at least one span of
  one of those kinds (``RETRIEVER``, ``LLM``, ...); the whole trace comes in,
  since the question and the response live on other spans;
* **sample** — ``sample`` N keeps the N traces first in
  :func:`playground.sampling.ranked` order under ``seed`` (the SHA-256 of
  ``"{seed}:{trace id}"``): the same project, seed and N always give the same
  traces, whatever order Phoenix answers in.

The spans are then written, sorted by (trace id, start time, span id), as
Phoenix's span JSON, one span per line (the REST API's numbered
``retrieval.documents.N.document.*`` attributes gathered into the list the
file reader takes), into a temporary file, and that file goes through
:func:`playground.importers.traces.prepare_traces` — the same assembly, the
same skips and the same checks as ``playground import traces FILE``.  The
stored dataset records the URL and project as its source.

At most :data:`MAX_SPANS` spans come from one request; more is an error
(narrow the window), never a silent cut.

Errors (:class:`PhoenixError`, one line each, and nothing is imported): the
URL is not reachable (connection refused, no such host: ``exit_code`` 2),
the URL answers but not as Phoenix (2), the project does not exist (1), a
span without a trace id or span id (1, naming the span), a filter that
leaves no trace (1).
"""
from __future__ import annotations

import json
import tempfile
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from ..sampling import ranked

__all__ = ["MAX_SPANS", "PhoenixError", "PhoenixSource", "check_project", "connect", "import_phoenix",
           "prepare_phoenix", "pull_spans", "span_json", "trace_groups"]

#: At most this many spans are pulled from one project (the client's ``limit``).
MAX_SPANS = 1_000_000
#: Trace ids per request when whole traces are fetched again (the ids go in the URL).
_TRACE_BATCH = 50
_DOC_LISTS = ("retrieval.documents", "reranker.output_documents", "reranker.input_documents")


class PhoenixError(Exception):
    """One clear line about Phoenix (unreachable, not Phoenix, no such project, a broken span)."""

    def __init__(self, message: str, exit_code: int = 1) -> None:
        super().__init__(message)
        self.exit_code = exit_code


@dataclass(frozen=True)
class PhoenixSource:
    """Where the spans come from and which traces to keep (the module docstring)."""

    url: str
    project: str
    start: datetime | None = None
    end: datetime | None = None
    kinds: tuple[str, ...] = ()
    sample: int | None = None
    seed: int | str = 0

    def describe(self) -> str:
        return f"{self.url.rstrip('/')} project {self.project}"


def _not_reached(url: str, exc: Exception) -> PhoenixError:
    import httpx

    if isinstance(exc, httpx.HTTPStatusError):
        return PhoenixError(f"{url} does not answer as Phoenix: {exc.request.method} {exc.request.url.path} gave "
                            f"HTTP {exc.response.status_code}", 2)
    if isinstance(exc, httpx.ConnectError):
        reason = "connection refused" if "refused" in str(exc).lower() else str(exc) or type(exc).__name__
        return PhoenixError(f"cannot reach Phoenix at {url}: {reason}", 2)
    if isinstance(exc, ValueError | KeyError | TypeError):
        return PhoenixError(f"{url} does not answer as Phoenix: GET /v1/projects gave no project list", 2)
    if isinstance(exc, httpx.HTTPError):
        return PhoenixError(f"{url} does not answer as Phoenix: {exc or type(exc).__name__}", 2)
    raise exc


def connect(url: str) -> tuple[Any, list[str]]:
    """``(client, project names)`` of the Phoenix at ``url`` (:class:`PhoenixError` when it is not one)."""
    import httpx
    from phoenix.client import Client

    if not url.startswith(("http://", "https://")):
        raise PhoenixError(f"not an http(s) URL: {url!r} (e.g. http://localhost:6006)", 2)
    try:
        client = Client(base_url=url)
        projects = client.projects.list()
        names = sorted(str(p["name"]) for p in projects)
    except (httpx.HTTPError, ValueError, KeyError, TypeError) as exc:
        raise _not_reached(url, exc) from None
    return client, names


def check_project(url: str, project: str, names: list[str]) -> None:
    """:class:`PhoenixError` naming the projects there when ``project`` is not one of them."""
    if project not in names:
        raise PhoenixError(f"no project {project!r} in Phoenix at {url} (it has: {', '.join(names) or 'none'})")


def _get(client: Any, source: PhoenixSource, **filters: Any) -> list[dict[str, Any]]:
    import httpx

    try:
        spans = client.spans.get_spans(project_identifier=source.project, limit=MAX_SPANS + 1, **filters)
    except httpx.HTTPError as exc:
        raise _not_reached(source.url, exc) from None
    if len(spans) > MAX_SPANS:
        raise PhoenixError(f"{source.describe()}: more than {MAX_SPANS:,} spans; narrow the window with --start and "
                           "--end (nothing was imported)")
    return [dict(s) for s in spans]


def _ids(span: dict[str, Any], source: PhoenixSource) -> tuple[str, str]:
    context = span.get("context") or {}
    trace_id, span_id = context.get("trace_id"), context.get("span_id")
    if not trace_id or not span_id:
        who = f"span {span_id}" if span_id else f"span {span.get('name')!r} (id {span.get('id')})"
        missing = "trace id" if not trace_id else "span id"
        raise PhoenixError(f"{source.describe()}: {who} has no {missing}; nothing was imported")
    return str(trace_id), str(span_id)


def trace_groups(spans: list[dict[str, Any]], source: PhoenixSource) -> dict[str, list[dict[str, Any]]]:
    """Spans by trace id; :class:`PhoenixError` naming the first span without a trace id or span id."""
    traces: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for span in spans:
        traces[_ids(span, source)[0]].append(span)
    return dict(traces)


def pull_spans(client: Any, source: PhoenixSource) -> tuple[list[dict[str, Any]], int]:
    """``(spans of the kept traces, sorted; number of traces in the window)`` (the module docstring)."""
    window = _get(client, source, start_time=source.start, end_time=source.end)
    traces = trace_groups(window, source)
    kinds = {k.upper() for k in source.kinds}
    keep = sorted(t for t, spans in traces.items()
                  if not kinds or any(str(s.get("span_kind", "")).upper() in kinds for s in spans))
    if source.sample is not None:
        keep = sorted(ranked(keep, source.seed)[:source.sample])
    if not keep:
        what = f" with a span of kind {', '.join(sorted(kinds))}" if kinds else ""
        raise PhoenixError(f"{source.describe()}: no trace{what} in the window ({len(window)} spans, "
                           f"{len(traces)} traces); nothing was imported")
    if source.start is not None or source.end is not None:  # the traces whole, also their spans outside the window
        wanted = set(keep)
        whole = [s for i in range(0, len(keep), _TRACE_BATCH)
                 for s in _get(client, source, trace_ids=keep[i:i + _TRACE_BATCH]) if _ids(s, source)[0] in wanted]
    else:
        whole = [s for t in keep for s in traces[t]]
    whole.sort(key=lambda s: (_ids(s, source)[0], str(s.get("start_time")), _ids(s, source)[1]))
    return whole, len(traces)


def _documents(attrs: dict[str, Any]) -> dict[str, Any]:
    """Attributes with numbered ``base.N.document.*`` keys gathered into ``base``'s list of documents."""
    out: dict[str, Any] = {}
    lists: dict[str, dict[int, dict[str, Any]]] = defaultdict(dict)
    for key, value in attrs.items():
        base = next((b for b in _DOC_LISTS if key.startswith(b + ".")), None)
        index, _, rest = key[len(base) + 1:].partition(".") if base else ("", "", "")
        if base and index.isdigit() and rest:
            lists[base].setdefault(int(index), {})[rest] = value
        else:
            out[key] = value
    for base, docs in lists.items():
        out[base] = [docs.get(i, {}) for i in range(max(docs) + 1)]
    return out


def span_json(span: dict[str, Any]) -> dict[str, Any]:
    """One REST span as Phoenix's span JSON line (ids, kind, times, attributes with document lists)."""
    return {"context": dict(span.get("context") or {}), "name": span.get("name"), "span_kind": span.get("span_kind"),
            "parent_id": span.get("parent_id"), "start_time": span.get("start_time"),
            "end_time": span.get("end_time"), "attributes": _documents(dict(span.get("attributes") or {}))}


def prepare_phoenix(client: Any, source: PhoenixSource, name: str) -> tuple[tuple[Any, Any, Any], int]:
    """``((payload, units, read), traces in the window)``: the file import's preparation of the pulled spans."""
    from .traces import prepare_traces

    spans, in_window = pull_spans(client, source)
    with tempfile.TemporaryDirectory(prefix="playground-phoenix-") as tmp:
        path = Path(tmp) / f"{source.project}.spans.jsonl"
        text = "".join(json.dumps(span_json(s), ensure_ascii=False, sort_keys=True) + "\n" for s in spans)
        path.write_text(text, encoding="utf-8")
        payload, units, read = prepare_traces(path, name)
    payload["source"] = {**payload["source"], "file": source.describe(), "format": "phoenix"}
    return (payload, units, read), in_window


def import_phoenix(client: Any, source: PhoenixSource, name: str, store: Any, *, replace: bool = False,
                   dry_run: bool = False) -> tuple[Any, int]:
    """``(TraceImport or the prepared triple when dry_run, traces in the window)``; one transaction."""
    from .traces import import_traces

    prepared, in_window = prepare_phoenix(client, source, name)
    if dry_run:
        return prepared, in_window
    result = import_traces(Path(f"{source.project}.spans.jsonl"), name, store, replace=replace, prepared=prepared)
    return result, in_window
