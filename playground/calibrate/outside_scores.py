"""A user's own per-claim scores (HHEM, MiniCheck, … run elsewhere) on the real data sets, under our protocol.

The claims to score: :func:`write_claims` exports every claim of a data set's
tuning and frozen parts (``playground calibrate ragtruth|begin --write-ids FILE``)
with the columns :data:`CLAIM_COLUMNS` — ``claim_id`` (the loader's
``example_id``), ``part`` (``tuning`` / ``frozen``), ``task_type``, ``claim``,
``context`` (the evidence passages, joined by a blank line in CSV, a list in
JSON Lines) and ``question`` (BEGIN: the previous dialogue turn, which is not
evidence; empty for RAGTruth).  No human label is exported.

The scores come back as a CSV (:func:`read_scores`) with a header holding
``claim_id`` and ``score`` (other columns are ignored, so the exported file with
a ``score`` column added will do).  A score is a number in [0, 1], higher =
more supported (HHEM's consistency score, MiniCheck's probability of
"supported").  Every problem is collected and raised at once as
:class:`ScoresError`, naming the CSV line (the header is line 1):

* a missing ``claim_id`` or ``score`` column, a row with more fields than the header;
* an empty ``claim_id``; a score that is not a number, not finite or outside [0, 1];
* a ``claim_id`` given twice (both lines named);
* a ``claim_id`` that is no claim of the data set (an **error**, not a warning:
  it means another data set's or another version's file, whose scores would
  silently be of different claims);
* claims of a required part with no score (line 0, the file as a whole; the
  first ten ids and the count): the tuning part always (the floor is chosen
  there), and the frozen part when it is the part reported.
"""
from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..files import write_atomic
from ..jsonl import LineProblems

__all__ = ["CLAIM_COLUMNS", "ScoresError", "claim_rows", "read_scores", "write_claims"]

CLAIM_COLUMNS: tuple[str, ...] = ("claim_id", "part", "task_type", "claim", "context", "question")
_SHOWN = 10


class ScoresError(LineProblems):
    """A scores CSV failed validation; ``problems`` lists every ``(line, message)`` (line 0 = the file)."""

    WHAT = "scores CSV"


def claim_rows(tuning: Sequence[Any], frozen: Sequence[Any]) -> list[dict[str, Any]]:
    """One row per record (tuning first, then frozen, each in file order): :data:`CLAIM_COLUMNS`,
    ``context`` as a list of passages."""
    rows = []
    for part, records in (("tuning", tuning), ("frozen", frozen)):
        for r in records:
            rows.append({"claim_id": r.example_id, "part": part, "task_type": r.task_type, "claim": r.claim,
                         "context": list(r.context), "question": getattr(r, "message", "")})
    return rows


def write_claims(path: str | Path, tuning: Sequence[Any], frozen: Sequence[Any]) -> int:
    """Write :func:`claim_rows` to ``path`` (JSON Lines when it ends in ``.jsonl``, else CSV with the
    passages joined by a blank line), atomically (a temporary file renamed into place); the row count."""
    rows = claim_rows(tuning, frozen)
    p = Path(path)
    if p.suffix.lower() == ".jsonl":
        text = "".join(json.dumps(r, ensure_ascii=False, sort_keys=False) + "\n" for r in rows)
    else:
        buf = io.StringIO()
        w = csv.DictWriter(buf, fieldnames=list(CLAIM_COLUMNS), lineterminator="\n")
        w.writeheader()
        for r in rows:
            w.writerow({**r, "context": "\n\n".join(r["context"])})
        text = buf.getvalue()
    p.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(p, text)
    return len(rows)


def _score(text: str) -> tuple[float | None, str]:
    try:
        v = float(text)
    except ValueError:
        return None, f"score must be a number, got {text!r}"
    if not math.isfinite(v):
        return None, f"score must be finite, got {text!r}"
    if not 0.0 <= v <= 1.0:
        return None, f"score must be in [0, 1] (higher = more supported), got {text!r}"
    return v, ""


def _missing(required: Mapping[str, str], given: Collection[str]) -> list[tuple[int, str]]:
    out = []
    for part in sorted(set(required.values()), key=lambda p: (p != "tuning", p)):
        ids = [i for i, p in required.items() if p == part and i not in given]
        if ids:
            shown = ", ".join(ids[:_SHOWN]) + (f" … ({len(ids) - _SHOWN} more)" if len(ids) > _SHOWN else "")
            out.append((0, f"no score for {len(ids)} claim(s) of the {part} part: {shown} "
                           "(--write-ids FILE lists every claim to score)"))
    return out


def read_scores(path: str | Path, required: Mapping[str, str], known: Collection[str],
                dataset: str = "the data set") -> dict[str, float]:
    """``{claim_id: score}`` from a scores CSV (module docstring), or one :class:`ScoresError` listing
    every problem.  ``required``: ``{claim_id: part}`` of the claims that must have a score;
    ``known``: every claim id of the data set (a row of any other id is an error)."""
    source = str(path)
    try:
        raw = Path(path).read_bytes()
    except IsADirectoryError:
        raise ScoresError([(0, "is a folder, expected a CSV file")], source) from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise ScoresError([(line, f"not UTF-8 text ({exc.reason} at byte {exc.start})")], source) from None
    reader = csv.reader(io.StringIO(text, newline=""))
    header = [h.strip() for h in next(reader, [])]
    problems: list[tuple[int, str]] = []
    for col in ("claim_id", "score"):
        if col not in header:
            problems.append((1, f"missing column {col!r} (the header must name claim_id and score)"))
    if problems:
        raise ScoresError(problems, source)
    ci, si = header.index("claim_id"), header.index("score")
    scores: dict[str, float] = {}
    first: dict[str, int] = {}
    line = reader.line_num
    for row in reader:
        start, line = line + 1, reader.line_num
        if not any(c.strip() for c in row):
            continue  # a blank line
        if len(row) > len(header):
            problems.append((start, f"{len(row)} fields, more than the header's {len(header)}"))
            continue
        cid = row[ci].strip() if ci < len(row) else ""
        why = []
        if not cid:
            why.append("empty claim_id")
        elif cid in first:
            why.append(f"claim_id {cid!r} is given twice (first on line {first[cid]})")
        elif cid not in known:
            why.append(f"unknown claim_id {cid!r}: not a claim of {dataset}'s tuning or frozen part")
        else:
            first[cid] = start
        value, bad = _score(row[si].strip() if si < len(row) else "")
        if bad:
            why.append(bad)
        if why:
            problems.append((start, "; ".join(why)))
        elif value is not None:
            scores[cid] = value
    problems += _missing(required, first)
    if problems:
        raise ScoresError(problems, source)
    return scores
