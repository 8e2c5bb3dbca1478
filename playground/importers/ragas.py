"""RAGAS ``EvaluationDataset`` files: ``to_jsonl``, ``to_csv`` and Parquet (``to_pandas().to_parquet``).

Single-turn samples (``SingleTurnSample``): ``user_input`` (the question,
required), ``response`` (required: it is what is labelled),
``retrieved_contexts`` (passages), ``retrieved_context_ids``, ``reference``,
``reference_contexts``, ``reference_context_ids``; an ``id`` field, when a
pipeline adds one, is the sample id.  In CSV, list columns are the Python
reprs ``to_csv`` writes (``['a', 'b']``).  Other RAGAS fields (``rubrics``,
``multi_responses``, persona and query style) are kept for the export.

Multi-turn samples (``MultiTurnSample``): ``user_input`` is a list of
messages ``{"content", "type": "human" | "ai" | "tool"}``.  The last human
message is the question; the messages before it are the history (human →
user, ai → assistant; tool messages dropped); the AI messages after it,
joined by a blank line, are the response, and tool messages after it are the
retrieved contexts (what the tools returned).  A conversation with no AI
message after its last human message has nothing to label: a problem.
"""
from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

from ..errors import Problem
from ..model import Turn
from .core import Row, Sample, detect_other_format, events_cell, list_cell, read_rows, sample_id_cell, text_cell

__all__ = ["FIELDS", "HISTORY_FIELD", "KEPT_FIELDS", "parse_rows", "read_samples"]

FIELDS = ("user_input", "retrieved_contexts", "reference_contexts", "retrieved_context_ids", "reference_context_ids",
          "response", "reference")
#: RAGAS fields the playground does not label but keeps for the export.
KEPT_FIELDS = ("multi_responses", "rubrics", "persona_name", "query_style", "query_length", "reference_tool_calls",
               "reference_topics")
_ROLES = {"human": "user", "ai": "assistant"}
#: The column in which a playground export carries the label history of a sample.
HISTORY_FIELD = "human_labels"


def _messages(row: Row, problems: list[Problem]) -> list[dict[str, Any]] | None:
    value = row.data.get("user_input")
    if isinstance(value, str):
        try:
            value = ast.literal_eval(value.strip())
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            problems.append(row.place.problem("a multi-turn user_input must be a list of messages", "user_input"))
            return None
    if not isinstance(value, list) or not value:
        problems.append(row.place.problem("a multi-turn user_input must be a non-empty list of messages", "user_input"))
        return None
    out = []
    for i, m in enumerate(value, 1):
        where = f"user_input[{i}]"
        if (not isinstance(m, dict) or not isinstance(m.get("content"), str)
                or m.get("type") not in ("human", "ai", "tool")):
            problems.append(row.place.problem("a message needs a string content and type human, ai or tool", where))
            continue
        out.append(m)
    return out


def _multi_turn(row: Row, problems: list[Problem]) -> Sample | None:
    before = len(problems)
    messages = _messages(row, problems)
    if messages is None or len(problems) > before:
        return None
    human = [i for i, m in enumerate(messages) if m["type"] == "human"]
    if not human:
        problems.append(row.place.problem("no human message: there is no question", "user_input"))
        return None
    last = human[-1]
    after = messages[last + 1:]
    response = "\n\n".join(m["content"] for m in after if m["type"] == "ai" and m["content"].strip())
    if not response:
        problems.append(row.place.problem("no AI message after the last human message: nothing to label", "user_input"))
        return None
    query = messages[last]["content"]
    if not query.strip():
        problems.append(row.place.problem("the last human message is empty", "user_input"))
    history = tuple(Turn(_ROLES[m["type"]], m["content"]) for m in messages[:last] if m["type"] in _ROLES)  # type: ignore[arg-type]
    contexts = tuple(m["content"] for m in after if m["type"] == "tool" and m["content"].strip())
    reference = text_cell(row, "reference", problems, required=False)
    kept = ("reference_tool_calls", "reference_topics", "rubrics")
    extra = {k: row.data[k] for k in kept if row.data.get(k) is not None}
    extra["messages"] = json.loads(json.dumps(messages, ensure_ascii=False, default=str))
    return Sample(row.place, query, response, contexts, (), history, reference,
                  sample_id=sample_id_cell(row, row.data.get("id"), "id", problems), extra=extra,
                  events=events_cell(row, row.data.get(HISTORY_FIELD), HISTORY_FIELD, problems))


def _single_turn(row: Row, problems: list[Problem]) -> Sample:
    query = text_cell(row, "user_input", problems, required=True)
    response = text_cell(row, "response", problems, required=True)
    contexts = list_cell(row, "retrieved_contexts", problems)
    ids = list_cell(row, "retrieved_context_ids", problems)
    if ids and len(ids) != len(contexts):
        problems.append(row.place.problem(f"{len(ids)} ids for {len(contexts)} retrieved_contexts",
                                          "retrieved_context_ids"))
    for i, c in enumerate(contexts, 1):
        if not c.strip():
            problems.append(row.place.problem(f"context {i} is empty", "retrieved_contexts"))
    extra: dict[str, Any] = {}
    for k in (*KEPT_FIELDS, "reference_context_ids"):
        v = row.data.get(k)
        if v is not None and not (isinstance(v, float) and v != v):
            extra[k] = json.loads(json.dumps(v, ensure_ascii=False, default=str))
    return Sample(row.place, query, response, contexts, ids, (), text_cell(row, "reference", problems, required=False),
                  list_cell(row, "reference_contexts", problems), None,
                  sample_id_cell(row, row.data.get("id"), "id", problems), extra,
                  events_cell(row, row.data.get(HISTORY_FIELD), HISTORY_FIELD, problems))


def _is_multi_turn(row: Row) -> bool:
    value = row.data.get("user_input")
    if isinstance(value, list):
        return True
    return isinstance(value, str) and value.lstrip().startswith("[{")


def parse_rows(rows: list[Row], problems: list[Problem]) -> list[Sample]:
    """Samples of RAGAS rows (single- or multi-turn per row); problems appended."""
    if detect_other_format(rows, "ragas", problems):
        return []
    samples = []
    for row in rows:
        if "user_input" not in row.data:
            problems.append(row.place.problem("missing (a RAGAS sample needs user_input)", "user_input"))
            continue
        sample = _multi_turn(row, problems) if _is_multi_turn(row) else _single_turn(row, problems)
        if sample is not None:
            samples.append(sample)
    return samples


def read_samples(path: Path, problems: list[Problem],
                 mapping: dict[str, str] | None = None) -> tuple[str, list[Sample]]:
    """``(format, samples)`` of a RAGAS file; every problem appended."""
    fmt, rows = read_rows(path, problems)
    return fmt, parse_rows(rows, problems)
