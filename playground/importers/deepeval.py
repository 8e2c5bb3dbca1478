"""DeepEval datasets saved by ``EvaluationDataset.save_as`` (JSON, JSONL, CSV) of goldens or test cases.

Fields: ``input`` (the question, required), ``actual_output`` (the
response, required: a golden without one has nothing to label),
``expected_output`` (the reference), ``retrieval_context`` (the passages),
``context`` (the ideal contexts, kept as reference contexts),
``additional_metadata`` (a JSON object; its ``id`` is the sample id),
``name`` and ``comments`` (kept for the export).  ``save_as`` writes the
context lists as JSON lists in ``.json`` files and joined with ``|`` in
``.jsonl`` and ``.csv`` files, so a context that itself contains ``|`` comes
back from those as several (DeepEval's own limitation; prefer ``.json``).
Conversational goldens (``scenario``/``turns``) are not RAG samples and are
refused with a problem.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..errors import Problem
from .core import Row, Sample, detect_other_format, events_cell, list_cell, read_rows, sample_id_cell, text_cell

__all__ = ["DELIMITER", "FIELDS", "parse_rows", "read_samples"]

#: How ``save_as`` joins list cells in CSV and JSONL.
DELIMITER = "|"
FIELDS = ("input", "actual_output", "expected_output", "retrieval_context", "context", "name", "comments",
          "additional_metadata")
_MARKER = "deepeval_source="


def _metadata(row: Row, problems: list[Problem]) -> dict[str, Any]:
    value = row.data.get("additional_metadata")
    if value is None or value == "":
        return {}
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except (json.JSONDecodeError, RecursionError):
            problems.append(row.place.problem("must be a JSON object", "additional_metadata"))
            return {}
    if not isinstance(value, dict):
        problems.append(row.place.problem(f"must be an object, got {type(value).__name__}", "additional_metadata"))
        return {}
    return value


def _unmark(context: str) -> str:
    """The text of a ``deepeval_source=S,deepeval_context=TEXT`` item (RetrievedContextData), else as is."""
    if context.startswith(_MARKER) and ",deepeval_context=" in context:
        return context.split(",deepeval_context=", 1)[1]
    return context


def parse_rows(rows: list[Row], problems: list[Problem]) -> list[Sample]:
    """Samples of DeepEval rows; problems appended."""
    if detect_other_format(rows, "deepeval", problems):
        return []
    samples = []
    for row in rows:
        if "scenario" in row.data or "turns" in row.data:
            problems.append(row.place.problem("a conversational golden (scenario/turns) is not a RAG sample", "turns"))
            continue
        query = text_cell(row, "input", problems, required=True)
        response = text_cell(row, "actual_output", problems, required=True)
        contexts = tuple(_unmark(c) for c in list_cell(row, "retrieval_context", problems, split=DELIMITER))
        for i, c in enumerate(contexts, 1):
            if not c.strip():
                problems.append(row.place.problem(f"context {i} is empty", "retrieval_context"))
        meta = _metadata(row, problems)
        human = meta.pop("human", None)  # a playground export's results and label history, not the sample's
        events = events_cell(row, human.get("labels") if isinstance(human, dict) else None,
                             "additional_metadata.human.labels", problems)
        extra: dict[str, Any] = {"additional_metadata": meta} if meta else {}
        for k in ("name", "comments", "source_file"):
            if isinstance(row.data.get(k), str):
                extra[k] = row.data[k]
        samples.append(Sample(
            row.place, query, response, contexts, (), (), text_cell(row, "expected_output", problems, required=False),
            list_cell(row, "context", problems, split=DELIMITER), None,
            sample_id_cell(row, meta.get("id"), "additional_metadata.id", problems), extra, events,
        ))
    return samples


def read_samples(path: Path, problems: list[Problem],
                 mapping: dict[str, str] | None = None) -> tuple[str, list[Sample]]:
    """``(format, samples)`` of a DeepEval file; every problem appended."""
    fmt, rows = read_rows(path, problems)
    return fmt, parse_rows(rows, problems)
