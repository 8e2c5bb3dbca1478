"""Any JSONL/CSV/Parquet table with a column map: own logs, a tracing tool's export flattened with pandas.

``--map question=q,contexts=docs,answer=output,reference=gold,id=trace_id``
names, for each field the playground knows, the column that holds it; a
field not in the map is read from a column of its own name.  Fields:

==============  ========  =============================================================
field           required  holds
==============  ========  =============================================================
``question``    yes       the user's question (text)
``answer``      yes       the response to label (text)
``contexts``    no        the retrieved contexts: a list (in CSV a JSON or Python list)
``context_ids`` no        their ids, same length
``reference``   no        the reference answer (split into facts)
``facts``       no        the reference facts themselves (a list; overrides the split)
``history``     no        earlier turns: a list of ``{role, content}`` (user/assistant,
                          also human/ai)
``id``          no        the sample's own id
==============  ========  =============================================================

A mapped column that no row has is one problem naming it and the columns
the file does have; an unknown field name in the map is an error.
"""
from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

from ..errors import Problem
from ..model import Turn
from .core import Row, Sample, list_cell, read_rows, sample_id_cell, text_cell

__all__ = ["FIELDS", "REQUIRED", "parse_map", "parse_rows", "read_samples"]

FIELDS = ("question", "answer", "contexts", "context_ids", "reference", "facts", "history", "id")
REQUIRED = ("question", "answer")
_ROLES = {"user": "user", "human": "user", "assistant": "assistant", "ai": "assistant"}


def parse_map(text: str | None) -> dict[str, str]:
    """``"question=q,answer=out"`` → ``{"question": "q", "answer": "out"}`` (ValueError naming what is wrong)."""
    mapping: dict[str, str] = {}
    if not text:
        return mapping
    bad = []
    for part in text.split(","):
        key, sep, column = part.partition("=")
        key, column = key.strip(), column.strip()
        if not sep or not key or not column:
            bad.append(f"{part.strip()!r} is not FIELD=COLUMN")
        elif key not in FIELDS:
            bad.append(f"unknown field {key!r}")
        elif key in mapping:
            bad.append(f"field {key!r} mapped twice")
        else:
            mapping[key] = column
    if bad:
        raise ValueError(f"--map: {'; '.join(bad)} (fields: {', '.join(FIELDS)})")
    return mapping


def _history(row: Row, column: str, problems: list[Problem]) -> tuple[Turn, ...]:
    value: Any = row.data.get(column)
    if value is None or value == "":
        return ()
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            try:
                value = ast.literal_eval(value.strip())
            except (ValueError, SyntaxError, MemoryError, RecursionError):
                problems.append(row.place.problem("must be a list of {role, content}", column))
                return ()
    if not isinstance(value, list):
        problems.append(row.place.problem("must be a list of {role, content}", column))
        return ()
    turns = []
    for i, t in enumerate(value, 1):
        if not isinstance(t, dict) or t.get("role") not in _ROLES or not isinstance(t.get("content"), str):
            problems.append(row.place.problem(f"turn {i} needs role user/assistant and a string content", column))
            continue
        turns.append(Turn(_ROLES[t["role"]], t["content"]))  # type: ignore[arg-type]
    return tuple(turns)


def parse_rows(rows: list[Row], problems: list[Problem], mapping: dict[str, str] | None = None) -> list[Sample]:
    """Samples of table rows under ``mapping`` (field → column); problems appended."""
    columns = {f: (mapping or {}).get(f, f) for f in FIELDS}
    present = set().union(*(r.data.keys() for r in rows)) if rows else set()
    if rows:
        missing = [f"{f} (column {columns[f]!r})" for f in FIELDS
                   if columns[f] not in present and (f in REQUIRED or f in (mapping or {}))]
        if missing:
            problems.append(Problem(rows[0].place.file, f"no column for {', '.join(missing)}; the file has columns "
                                    f"{', '.join(sorted(map(str, present)))} — map them with --map FIELD=COLUMN"))
            return []
    samples = []
    for row in rows:
        contexts = list_cell(row, columns["contexts"], problems)
        ids = list_cell(row, columns["context_ids"], problems)
        if ids and len(ids) != len(contexts):
            problems.append(row.place.problem(f"{len(ids)} ids for {len(contexts)} contexts", columns["context_ids"]))
        for i, c in enumerate(contexts, 1):
            if not c.strip():
                problems.append(row.place.problem(f"context {i} is empty", columns["contexts"]))
        facts = list_cell(row, columns["facts"], problems) if columns["facts"] in row.data else None
        samples.append(Sample(
            row.place, text_cell(row, columns["question"], problems, required=True),
            text_cell(row, columns["answer"], problems, required=True), contexts, ids,
            _history(row, columns["history"], problems), text_cell(row, columns["reference"], problems, required=False),
            (), facts if facts else None, sample_id_cell(row, row.data.get(columns["id"]), columns["id"], problems),
        ))
    return samples


def read_samples(path: Path, problems: list[Problem],
                 mapping: dict[str, str] | None = None) -> tuple[str, list[Sample]]:
    """``(format, samples)`` of a table file under ``mapping``; every problem appended."""
    fmt, rows = read_rows(path, problems)
    return fmt, parse_rows(rows, problems, mapping)
