"""The harness's scores of a traces dataset as Phoenix annotations (``export traces --phoenix URL --run DIR``).

``harness_annotations(opened, run)`` reads a ``playground harness run
--dataset NAME`` folder (``report.json``, ``units.csv``, ``cases.csv``) and
makes, with ``annotator_kind`` ``CODE``:

* per scored passage, the document annotation ``harness_relevance`` on the
  retriever (or reranker) span and position the passage came from: label
  ``relevant``/``irrelevant`` (the harness's decision), score its relevance
  score, explanation the scorer (``harness:<configuration>``);
* per trace, on the span whose output was scored, the span annotations
  ``harness_context_relevance``, ``harness_faithfulness``,
  ``harness_correctness`` and ``harness_coverage`` (score the rate, label it
  to 6 decimals; a rate the harness left empty is not sent) and
  ``harness_verdict`` (label ``ACCEPT``/``REVIEW``/``REJECT``, explanation
  its reason), identifier ``harness:<configuration>``.

The run must be of this dataset (``report.json``'s ``dataset.name``) at this
revision (its ``payload_sha256_16`` against the first 16 hex digits of the
SHA-256 of the payload's JSON with sorted keys, as the harness takes it):
a run of an older import would put scores on the wrong passages, so it is
refused with both revisions named.
"""
from __future__ import annotations

import csv
import hashlib
import json
from pathlib import Path
from typing import Any

from ..model import passage_unit_id
from .phoenix_live import PhoenixError

__all__ = ["HARNESS_RATES", "harness_annotations"]

HARNESS_RATES = ("context_relevance", "faithfulness", "correctness", "coverage")


def _rows(path: Path) -> list[dict[str, str]]:
    if not path.is_file():
        raise PhoenixError(f"{path.parent}: not a harness run folder (no {path.name}); run `playground harness run "
                           "--dataset NAME --out DIR` first")
    with path.open(encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


def _check_run(opened: Any, run: Path) -> str:
    """The run's scorer name (``harness:<configuration>``) after checking it is of this dataset and revision."""
    report_path = run / "report.json"
    if not report_path.is_file():
        raise PhoenixError(f"{run}: not a harness run folder (no report.json)")
    report = json.loads(report_path.read_text(encoding="utf-8"))
    data = report.get("dataset") if isinstance(report.get("dataset"), dict) else {}
    if data.get("name") != opened.name:
        raise PhoenixError(f"{run} is a run of dataset {data.get('name')!r}, not {opened.name!r}")
    theirs = str(data.get("payload_sha256_16", ""))
    ours = hashlib.sha256(json.dumps(opened.payload, sort_keys=True).encode("utf-8")).hexdigest()[:16]
    if theirs != ours:
        raise PhoenixError(f"{run} scored revision {theirs} of {opened.name!r}, which is now {ours}: run the harness "
                           "again on the current import")
    config = report.get("config")
    return f"harness:{config if isinstance(config, str) else 'default'}"


def harness_annotations(opened: Any, run: Path) -> tuple[dict[Any, dict[str, Any]], dict[Any, dict[str, Any]]]:
    """``(document annotations by (span, position, name), span annotations by (span, name, identifier))``."""
    scorer = _check_run(opened, Path(run))
    where: dict[str, tuple[str, int]] = {}
    spans_of: dict[str, str] = {}
    for sample in opened.payload["samples"]:
        cid, docs = sample["case_id"], sample["extra"]["documents"]
        spans_of[cid] = sample["extra"]["response_span_id"]
        for i, passage in enumerate(opened.passages[cid]):
            where[passage_unit_id(cid, passage.passage_id)] = (docs[i][0], int(docs[i][1]))
    docs_out: dict[Any, dict[str, Any]] = {}
    for row in _rows(Path(run) / "units.csv"):
        if row["unit_kind"] != "passage" or row["unit_id"] not in where or row["value"] == "":
            continue
        span_id, position = where[row["unit_id"]]
        result = {"label": "relevant" if row["value"] == "1" else "irrelevant", "score": float(row["score"]),
                  "explanation": scorer}
        docs_out[(span_id, position, "harness_relevance")] = {
            "name": "harness_relevance", "annotator_kind": "CODE", "span_id": span_id, "document_position": position,
            "result": result, "metadata": {"annotator": scorer, "source": "rag-label-playground"}}
    spans_out: dict[Any, dict[str, Any]] = {}
    for row in _rows(Path(run) / "cases.csv"):
        if row["case_id"] not in spans_of:
            continue
        span_id = spans_of[row["case_id"]]
        results: dict[str, dict[str, Any]] = {f"harness_{r}": {"label": f"{float(row[r]):.6f}", "score": float(row[r])}
                   for r in HARNESS_RATES if row.get(r)}
        results["harness_verdict"] = {"label": row["verdict"], "explanation": row["reason"]}
        for name, result in results.items():
            spans_out[(span_id, name, scorer)] = {
                "name": name, "annotator_kind": "CODE", "span_id": span_id, "identifier": scorer, "result": result,
                "metadata": {"source": "rag-label-playground"}}
    return docs_out, spans_out
