"""Human labels of an imported trace dataset back where engineers look: Phoenix annotations, OTel GenAI events.

:func:`trace_annotations` makes the rows (also what :mod:`.phoenix_push` and
:mod:`.langfuse` send); ``export_traces(opened, store, out_dir, annotator=None)`` writes three files
for the dataset ``NAME`` (one annotator's current labels, or the consensus as
``playground export`` takes it: ties left out and counted; stale labels never):

* ``NAME.document_annotations.parquet`` — one row per labelled passage, the
  frame Phoenix's ``client.spans.log_document_annotations_dataframe`` takes:
  ``span_id`` (the retriever or reranker span the document came from),
  ``document_position`` (its 0-based place in that span's list), ``name``
  (``relevance``), ``annotator_kind`` (``HUMAN``), ``label``
  (``relevant``/``irrelevant``), ``score`` (1.0/0.0), ``explanation`` (the
  annotator's comment; for the consensus every person's, ``name: text``
  joined by `` | ``; empty without one);
* ``NAME.span_annotations.parquet`` — per trace, on the span whose output is
  the labelled response, one row per rate with labels, the frame
  ``log_span_annotations_dataframe`` takes: ``name`` ``context_relevance``,
  ``faithfulness``, ``correctness`` or ``coverage``; ``score`` the rate
  ``yes / n`` (6 decimals); ``label`` ``yes/n``; ``explanation`` in words;
  ``identifier`` who (so several annotators' exports coexist); then the
  response's ``verdict`` (:data:`VERDICT_NAME`: ``label`` ``pass``/``fail``,
  ``score`` 1.0/0.0, ``explanation`` the note and the failure modes);
* ``NAME.gen_ai_evaluations.jsonl`` — the same results as OpenTelemetry GenAI
  ``gen_ai.evaluation.result`` events, one JSON object per line:
  ``{"name", "trace_id", "span_id", "attributes": {"gen_ai.evaluation.name",
  "gen_ai.evaluation.score.value", "gen_ai.evaluation.score.label",
  "gen_ai.evaluation.explanation", ...}}`` (a document's event also carries
  ``retrieval.document.position`` and ``retrieval.document.id``).

Rows are sorted (trace order, then position or rate), so the same labels give
the same bytes.  All files are written under temporary names and renamed
together.
"""
from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..files import write_all_atomic
from ..metrics import rates_from_labels
from ..model import DIMENSION_NAMES, Label, passage_unit_id
from ..store.checks import RESERVED_ANNOTATORS
from ..verdicts import response_units, verdict_summary
from .export import label_rows

__all__ = ["DOCUMENT_COLUMNS", "EVENT_NAME", "SPAN_COLUMNS", "VERDICT_NAME", "TraceAnnotations", "TraceExport",
           "export_traces", "trace_annotations"]

DOCUMENT_COLUMNS = ("span_id", "document_position", "name", "annotator_kind", "label", "score", "explanation")
SPAN_COLUMNS = ("span_id", "name", "annotator_kind", "label", "score", "explanation", "identifier")
EVENT_NAME = "gen_ai.evaluation.result"
#: The span annotation of a response's pass/fail verdict.
VERDICT_NAME = "verdict"
#: rate → what its n counts and what a yes means, for the explanation.
_WORDS = {"context_relevance": ("passages", "relevant"), "faithfulness": ("claims", "supported"),
          "correctness": ("claims", "correct"), "coverage": ("reference facts", "covered")}


@dataclass(frozen=True)
class TraceExport:
    """What :func:`export_traces` wrote."""

    files: tuple[Path, ...]
    traces: int
    documents: int
    spans: int
    who: str
    ties: int = 0

    def summary(self) -> str:
        text = (f"{self.documents} document annotation(s) and {self.spans} span annotation(s) over {self.traces} "
                f"trace(s) ({self.who}) written to:\n" + "\n".join(f"  {p}" for p in self.files))
        if self.ties:
            text += f"\n  {self.ties} consensus tie(s) left out (settle them with `playground calibrate adjudicate`)"
        return text


def _comments(store: Any, annotator: str | None, unit_ids: list[str]) -> dict[str, str]:
    """``unit id -> note``: the annotator's comment, or (consensus) every person's as ``name: text``, `` | ``-joined."""
    if not unit_ids:
        return {}
    notes: dict[str, list[str]] = defaultdict(list)
    for c in store.comments(unit_ids, annotator=annotator):
        if c.annotator in RESERVED_ANNOTATORS or not c.text:
            continue
        notes[c.unit_id].append(c.text if annotator is not None else f"{c.annotator}: {c.text}")
    return {uid: " | ".join(texts) for uid, texts in notes.items()}


def _document_rows(opened: Any, labels: dict[str, Label], who: str,
                   comments: dict[str, str]) -> list[dict[str, Any]]:
    rows = []
    for sample in opened.payload["samples"]:
        cid, docs = sample["case_id"], sample["extra"]["documents"]
        for i, passage in enumerate(opened.passages[cid]):
            lab = labels.get(passage_unit_id(cid, passage.passage_id))
            if lab is None:
                continue
            span_id, position, _score = docs[i]
            rows.append({"span_id": span_id, "document_position": int(position), "name": "relevance",
                         "annotator_kind": "HUMAN", "label": "relevant" if lab.value else "irrelevant",
                         "score": float(lab.value), "explanation": comments.get(lab.unit_id),
                         "_trace": sample["extra"]["trace_id"], "_doc_id": sample["context_ids"][i]})
    return rows


def _span_rows(opened: Any, by_case: dict[str, list[Label]], who: str) -> list[dict[str, Any]]:
    rows = []
    for sample in opened.payload["samples"]:
        rates = rates_from_labels(by_case.get(sample["case_id"], []))
        for name in DIMENSION_NAMES.values():
            r = rates[name]
            if r.rate is None:
                continue
            units, yes = _WORDS[name]
            rows.append({"span_id": sample["extra"]["response_span_id"], "name": name, "annotator_kind": "HUMAN",
                         "label": f"{r.successes}/{r.n}", "score": round(r.rate, 6),
                         "explanation": f"{r.successes} of {r.n} {units} labelled {yes} by {who}",
                         "identifier": who, "_trace": sample["extra"]["trace_id"]})
    return rows


def _verdict_rows(opened: Any, store: Any, annotator: str | None, who: str) -> list[dict[str, Any]]:
    """Per judged response: ``verdict`` pass/fail (1.0/0.0) with its note (and failure modes) as the explanation."""
    responses = {u.case_id: u for u in response_units(opened)}
    summary = verdict_summary(store, list(responses.values()), annotator)
    notes = _comments(store, annotator, sorted(u.unit_id for u in responses.values()))
    rows = []
    for sample in opened.payload["samples"]:
        unit = responses.get(sample["case_id"])
        value, _judges, modes = summary.get(unit.unit_id, (None, 0, ())) if unit is not None else (None, 0, ())
        if unit is None or value is None:
            continue
        words = [notes[unit.unit_id]] if unit.unit_id in notes else []
        if modes:
            words.append("failure modes: " + ", ".join(modes))
        rows.append({"span_id": sample["extra"]["response_span_id"], "name": VERDICT_NAME, "annotator_kind": "HUMAN",
                     "label": "pass" if value == 1 else "fail", "score": float(value),
                     "explanation": "; ".join(words) or None, "identifier": who,
                     "_trace": sample["extra"]["trace_id"]})
    return rows


@dataclass(frozen=True)
class TraceAnnotations:
    """The rows :func:`trace_annotations` makes: per document, per trace (rates and verdicts), who, ties."""

    documents: list[dict[str, Any]]
    spans: list[dict[str, Any]]
    who: str
    ties: int


def trace_annotations(opened: Any, store: Any, annotator: str | None = None) -> TraceAnnotations:
    """The document rows (relevance per labelled passage) and span rows (rates, then the verdict, per trace)."""
    if opened.kind != "traces":
        raise ValueError(f"dataset {opened.name!r} is a {opened.kind} dataset; `export traces` takes one imported "
                         "with `playground import traces`")
    catalog = opened.catalog()
    labels, who, ties = label_rows(store, catalog, annotator)
    relevance = {lab.unit_id: lab for lab in labels if lab.dimension == "relevant"}
    by_case: dict[str, list[Label]] = defaultdict(list)
    for lab in labels:
        by_case[catalog[lab.unit_id].case_id].append(lab)
    documents = _document_rows(opened, relevance, who, _comments(store, annotator, sorted(relevance)))
    order = {s["extra"]["trace_id"]: i for i, s in enumerate(opened.payload["samples"])}
    spans = sorted(_span_rows(opened, by_case, who) + _verdict_rows(opened, store, annotator, who),
                   key=lambda r: order[r["_trace"]])
    return TraceAnnotations(documents, spans, who, ties)


def _event(row: dict[str, Any], document: bool) -> dict[str, Any]:
    attrs: dict[str, Any] = {"gen_ai.evaluation.name": row["name"], "gen_ai.evaluation.score.value": row["score"],
                             "gen_ai.evaluation.score.label": row["label"],
                             "gen_ai.evaluation.explanation": row["explanation"]}
    if document:
        attrs["retrieval.document.position"] = row["document_position"]
        attrs["retrieval.document.id"] = row["_doc_id"]
    return {"name": EVENT_NAME, "trace_id": row["_trace"], "span_id": row["span_id"], "attributes": attrs}


def _parquet(rows: list[dict[str, Any]], columns: tuple[str, ...]) -> bytes:
    import pyarrow as pa
    import pyarrow.parquet as pq

    types = {"document_position": pa.int64(), "score": pa.float64()}
    table = pa.table({c: pa.array([r[c] for r in rows], types.get(c, pa.string())) for c in columns})
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink)
    return bytes(sink.getvalue().to_pybytes())


def export_traces(opened: Any, store: Any, out_dir: str | Path, *, annotator: str | None = None) -> TraceExport:
    """Write ``opened`` (an imported ``traces`` dataset)'s human labels (see the module docstring)."""
    rows = trace_annotations(opened, store, annotator)
    out = Path(out_dir)
    documents, spans = rows.documents, rows.spans
    events = [_event(r, True) for r in documents] + [_event(r, False) for r in spans]
    name = opened.name
    files = {out / f"{name}.document_annotations.parquet": _parquet(documents, DOCUMENT_COLUMNS),
             out / f"{name}.span_annotations.parquet": _parquet(spans, SPAN_COLUMNS),
             out / f"{name}.gen_ai_evaluations.jsonl":
                 "".join(json.dumps(e, ensure_ascii=False, sort_keys=True) + "\n" for e in events).encode("utf-8")}
    out.mkdir(parents=True, exist_ok=True)
    write_all_atomic(files)
    return TraceExport(tuple(files), len(opened.payload["samples"]), len(documents), len(spans), rows.who,
                       rows.ties)
