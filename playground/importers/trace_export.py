"""Human labels of an imported trace dataset back where engineers look: Phoenix annotations, OTel GenAI events.

``export_traces(opened, store, out_dir, annotator=None)`` writes three files
for the dataset ``NAME`` (one annotator's current labels, or the consensus as
``playground export`` takes it: ties left out and counted; stale labels never):

* ``NAME.document_annotations.parquet`` — one row per labelled passage, the
  frame Phoenix's ``client.spans.log_document_annotations_dataframe`` takes:
  ``span_id`` (the retriever or reranker span the document came from),
  ``document_position`` (its 0-based place in that span's list), ``name``
  (``relevance``), ``annotator_kind`` (``HUMAN``), ``label``
  (``relevant``/``irrelevant``), ``score`` (1.0/0.0), ``explanation`` (the
  annotator's comment, or who decided);
* ``NAME.span_annotations.parquet`` — per trace, on the span whose output is
  the labelled response, one row per rate with labels, the frame
  ``log_span_annotations_dataframe`` takes: ``name`` ``context_relevance``,
  ``faithfulness``, ``correctness`` or ``coverage``; ``score`` the rate
  ``yes / n`` (6 decimals); ``label`` ``yes/n``; ``explanation`` in words;
  ``identifier`` who (so several annotators' exports coexist);
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
from .export import label_rows

__all__ = ["DOCUMENT_COLUMNS", "EVENT_NAME", "SPAN_COLUMNS", "TraceExport", "export_traces"]

DOCUMENT_COLUMNS = ("span_id", "document_position", "name", "annotator_kind", "label", "score", "explanation")
SPAN_COLUMNS = ("span_id", "name", "annotator_kind", "label", "score", "explanation", "identifier")
EVENT_NAME = "gen_ai.evaluation.result"
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
    if annotator is None or not unit_ids:
        return {}
    return {c.unit_id: c.text for c in store.comments(unit_ids, annotator=annotator)}


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
                         "score": float(lab.value), "explanation": comments.get(lab.unit_id, f"human: {who}"),
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
    if opened.kind != "traces":
        raise ValueError(f"dataset {opened.name!r} is a {opened.kind} dataset; `export traces` takes one imported "
                         "with `playground import traces`")
    out = Path(out_dir)
    catalog = opened.catalog()
    labels, who, ties = label_rows(store, catalog, annotator)
    relevance = {lab.unit_id: lab for lab in labels if lab.dimension == "relevant"}
    by_case: dict[str, list[Label]] = defaultdict(list)
    for lab in labels:
        by_case[catalog[lab.unit_id].case_id].append(lab)
    documents = _document_rows(opened, relevance, who, _comments(store, annotator, sorted(relevance)))
    spans = _span_rows(opened, by_case, who)
    events = [_event(r, True) for r in documents] + [_event(r, False) for r in spans]
    name = opened.name
    files = {out / f"{name}.document_annotations.parquet": _parquet(documents, DOCUMENT_COLUMNS),
             out / f"{name}.span_annotations.parquet": _parquet(spans, SPAN_COLUMNS),
             out / f"{name}.gen_ai_evaluations.jsonl":
                 "".join(json.dumps(e, ensure_ascii=False, sort_keys=True) + "\n" for e in events).encode("utf-8")}
    out.mkdir(parents=True, exist_ok=True)
    write_all_atomic(files)
    return TraceExport(tuple(files), len(opened.payload["samples"]), len(documents), len(spans), who, ties)
