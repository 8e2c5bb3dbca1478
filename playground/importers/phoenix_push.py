"""The human labels (and the harness's scores) of a traces dataset pushed to a running Phoenix, idempotently.

``push_annotations(client, url, project, opened, store, annotator=None, run=None)``
takes the rows of :func:`playground.importers.trace_export.trace_annotations`
(one annotator's current labels, or the consensus) and writes them through
Phoenix's client:

* **document annotations** (``client.spans.log_document_annotations``) — per
  labelled passage, on the retriever (or reranker) span it came from at its
  ``document_position``: ``relevance``, ``HUMAN``, label
  ``relevant``/``irrelevant``, score 1/0, the annotators' comments as the
  explanation, ``metadata.annotator`` who decided.  Phoenix keys a document
  annotation by (name, span, position) and takes no identifier on them, so
  the last push of a document's ``relevance`` is the one Phoenix shows;
* **span annotations** (``client.spans.log_span_annotations``) — per trace, on
  the span whose output was labelled: the four rates (``context_relevance``,
  ``faithfulness``, ``correctness``, ``coverage``: score ``yes/n``, label
  ``yes/n``) and the response's ``verdict`` (``pass``/``fail``, 1/0, its note
  as the explanation), ``HUMAN``, with ``identifier`` who decided, so one
  annotator's push and the consensus coexist;
* with ``run`` (a ``playground harness run`` folder over this dataset): the
  harness's scores as ``CODE`` annotations — per passage the document
  annotation ``harness_relevance`` (its decision and score), per trace the
  span annotations ``harness_<rate>`` (identifier ``harness``).

Idempotent: Phoenix upserts span annotations on (name, span, identifier) and
document annotations on (name, span, position).  Before writing, the
annotations already there are read (span annotations through the client's
``get_span_annotations``; document annotations through Phoenix's GraphQL API
— its REST API has no read of them), and only the missing or different ones
are sent (label, score, explanation, kind and metadata compared); a second
push of the same labels sends nothing.  After writing,
everything is read back and compared: a difference is an error naming the
span.  :class:`PushResult` counts per kind what was written and what was
already there.

Project-level figures (the human pass rate and rates with Wilson intervals;
with ``run``, the harness's raw and corrected rates) go into the project's
description (:mod:`.phoenix_figures`: Phoenix has no project annotation),
written only when they changed.
"""
from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .phoenix_figures import merge_description, project_figures
from .phoenix_live import PhoenixError
from .trace_export import trace_annotations

__all__ = ["SOURCE", "PushResult", "desired_annotations", "push_annotations", "read_documents", "read_spans"]

#: ``metadata.source`` of every annotation written here.
SOURCE = "rag-label-playground"
_BATCH = 100
#: Span ids per request when spans are looked up by id (the ids go in the URL).
_ID_BATCH = 50
#: A span annotation's key and a document annotation's key in Phoenix's upsert.
SpanKey = tuple[str, str, str]            # (span id, name, identifier)
DocKey = tuple[str, int, str]             # (span id, position, name)


@dataclass
class PushResult:
    """Per kind (``document``, ``span``): how many were written and how many were already there, unchanged."""

    written: dict[str, int] = field(default_factory=lambda: {"document": 0, "span": 0})
    unchanged: dict[str, int] = field(default_factory=lambda: {"document": 0, "span": 0})
    by_name: dict[str, int] = field(default_factory=dict)
    who: str = ""
    ties: int = 0
    figures: str = ""

    def summary(self, url: str, project: str) -> str:
        w, u = self.written, self.unchanged
        lines = [f"pushed to {url.rstrip('/')} project {project} ({self.who}): "
                 f"{w['document']} document annotation(s) and {w['span']} span annotation(s) written, "
                 f"{u['document']} and {u['span']} already there unchanged"]
        lines += [f"  {name}: {n}" for name, n in sorted(self.by_name.items())]
        if self.ties:
            lines.append(f"  {self.ties} consensus tie(s) left out (settle them: `playground calibrate adjudicate`)")
        lines.append("  read back: every annotation is in Phoenix as sent")
        if self.figures:
            lines.append(f"  project figures (the project's description): {self.figures}")
        return "\n".join(lines)


def _result(row: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"label": row["label"], "score": row["score"]}
    if row.get("explanation"):
        out["explanation"] = row["explanation"]
    return out


def desired_annotations(opened: Any, store: Any, annotator: str | None = None, run: Path | None = None
                        ) -> tuple[dict[DocKey, dict[str, Any]], dict[SpanKey, dict[str, Any]], str, int]:
    """``(document annotations by key, span annotations by key, who, ties)`` as Phoenix's client takes them."""
    rows = trace_annotations(opened, store, annotator)
    docs: dict[DocKey, dict[str, Any]] = {}
    for r in rows.documents:
        docs[(r["span_id"], r["document_position"], r["name"])] = {
            "name": r["name"], "annotator_kind": r["annotator_kind"], "span_id": r["span_id"],
            "document_position": r["document_position"], "result": _result(r),
            "metadata": {"annotator": rows.who, "document_id": r["_doc_id"], "source": SOURCE}}
    spans: dict[SpanKey, dict[str, Any]] = {}
    for r in rows.spans:
        spans[(r["span_id"], r["name"], r["identifier"])] = {
            "name": r["name"], "annotator_kind": r["annotator_kind"], "span_id": r["span_id"],
            "identifier": r["identifier"], "result": _result(r), "metadata": {"source": SOURCE}}
    if run is not None:
        from .phoenix_harness import harness_annotations

        more_docs, more_spans = harness_annotations(opened, run)
        docs.update(more_docs)
        spans.update(more_spans)
    return docs, spans, rows.who, rows.ties


def _same(want: dict[str, Any], have: dict[str, Any] | None) -> bool:
    if have is None:
        return False
    w, h = want["result"], have.get("result") or {}
    score_w, score_h = w.get("score"), h.get("score")
    return (want["annotator_kind"] == have.get("annotator_kind") and w.get("label") == h.get("label")
            and (want.get("metadata") or {}) == (have.get("metadata") or {})
            and (w.get("explanation") or None) == (h.get("explanation") or None)
            and (score_w is None) == (score_h is None)
            and (score_w is None or score_h is None or abs(float(score_w) - float(score_h)) < 1e-9))


def read_spans(client: Any, project: str, span_ids: Iterable[str], names: Iterable[str]
               ) -> dict[SpanKey, dict[str, Any]]:
    """The span annotations of those names on those spans, by (span id, name, identifier)."""
    ids, wanted = sorted(set(span_ids)), sorted(set(names))
    if not ids or not wanted:
        return {}
    got = client.spans.get_span_annotations(span_ids=ids, project_identifier=project,
                                            include_annotation_names=wanted)
    return {(str(a["span_id"]), str(a["name"]), str(a.get("identifier") or "")): dict(a) for a in got}


_DOC_QUERY = ("{alias}: node(id: {id}) {{ ... on Span {{ spanId documentEvaluations {{ name label score "
              "explanation documentPosition annotatorKind metadata }} }} }}")


def read_documents(url: str, client: Any, project: str, span_ids: Iterable[str]) -> dict[DocKey, dict[str, Any]]:
    """The document annotations on those spans, by (span id, position, name), read through Phoenix's GraphQL."""
    import json

    import httpx

    ids = sorted(set(span_ids))
    if not ids:
        return {}
    nodes = sorted(str(s["id"]) for i in range(0, len(ids), _ID_BATCH)
                   for s in client.spans.get_spans(project_identifier=project, span_ids=ids[i:i + _ID_BATCH],
                                                   limit=_ID_BATCH))
    headers = {"authorization": f"Bearer {os.environ['PHOENIX_API_KEY']}"} if os.environ.get("PHOENIX_API_KEY") else {}
    out: dict[DocKey, dict[str, Any]] = {}
    with httpx.Client(base_url=url.rstrip("/"), headers=headers, timeout=60) as http:
        for i in range(0, len(nodes), _BATCH):
            body = " ".join(_DOC_QUERY.format(alias=f"s{n}", id=json.dumps(node))
                            for n, node in enumerate(nodes[i:i + _BATCH]))
            answer = http.post("/graphql", json={"query": "{ " + body + " }"})
            answer.raise_for_status()
            data = answer.json()
            if data.get("errors"):
                raise PhoenixError(f"{url}: reading document annotations failed: {data['errors'][0].get('message')}")
            for node in (data.get("data") or {}).values():
                for a in (node or {}).get("documentEvaluations") or []:
                    key = (str(node["spanId"]), int(a["documentPosition"]), str(a["name"]))
                    out[key] = {"annotator_kind": a["annotatorKind"], "metadata": a.get("metadata"),
                                "result": {"label": a["label"], "score": a["score"], "explanation": a["explanation"]}}
    return out


def _check(url: str, kind: str, want: dict[Any, dict[str, Any]], have: dict[Any, dict[str, Any]]) -> None:
    wrong = sorted(k for k, v in want.items() if not _same(v, have.get(k)))
    if wrong:
        raise PhoenixError(f"{url}: {len(wrong)} {kind} annotation(s) not in Phoenix as sent after the push, "
                           f"first: span {wrong[0][0]} {wrong[0][1:]}")


def _push_figures(client: Any, url: str, project: str, lines: list[str]) -> str:
    """Write the figures block into the project's description unless it is there already; read it back."""
    current = client.projects.get(project_name=project).get("description")
    wanted = merge_description(current, lines)
    if wanted == (current or ""):
        return "unchanged"
    client.projects.update(project_name=project, description=wanted)
    if client.projects.get(project_name=project).get("description") != wanted:
        raise PhoenixError(f"{url}: project {project}'s description is not what was sent")
    return f"written ({len(lines)} lines)"


def push_annotations(client: Any, url: str, project: str, opened: Any, store: Any, *, annotator: str | None = None,
                     run: Path | None = None) -> PushResult:
    """Send what is missing or different, read everything back, count (the module docstring)."""
    import httpx

    docs, spans, who, ties = desired_annotations(opened, store, annotator, run)
    try:
        had_docs = read_documents(url, client, project, {k[0] for k in docs})
        had_spans = read_spans(client, project, {k[0] for k in spans}, {k[1] for k in spans})
        new_docs = [v for k, v in sorted(docs.items()) if not _same(v, had_docs.get(k))]
        new_spans = [v for k, v in sorted(spans.items()) if not _same(v, had_spans.get(k))]
        for i in range(0, len(new_docs), _BATCH):
            client.spans.log_document_annotations(document_annotations=new_docs[i:i + _BATCH], sync=True)
        for i in range(0, len(new_spans), _BATCH):
            client.spans.log_span_annotations(span_annotations=new_spans[i:i + _BATCH], sync=True)
        _check(url, "document", docs, read_documents(url, client, project, {k[0] for k in docs}))
        _check(url, "span", spans, read_spans(client, project, {k[0] for k in spans}, {k[1] for k in spans}))
        figures = _push_figures(client, url, project, project_figures(opened, store, annotator, run))
    except httpx.HTTPStatusError as exc:
        raise PhoenixError(f"{url}: {exc.request.method} {exc.request.url.path} gave HTTP "
                           f"{exc.response.status_code}: {exc.response.text[:200]}") from None
    except httpx.HTTPError as exc:
        raise PhoenixError(f"cannot reach Phoenix at {url}: {exc}", 2) from None
    result = PushResult(who=who, ties=ties, figures=figures)
    result.written = {"document": len(new_docs), "span": len(new_spans)}
    result.unchanged = {"document": len(docs) - len(new_docs), "span": len(spans) - len(new_spans)}
    for v in new_docs + new_spans:
        kind = "document" if "document_position" in v else "span"
        result.by_name[f"{kind} {v['name']}"] = result.by_name.get(f"{kind} {v['name']}", 0) + 1
    return result
