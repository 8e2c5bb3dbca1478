"""An external tool's per-unit scores (a RAGAS- or DeepEval-style scorer) from CSV.

Rule per row: a missing label is ``score >= t``, a missing score is the
label.  Per dimension ``t`` is the ``threshold`` given, else the threshold
the rows' labels imply (the lowest "yes" score, when every "no" score is
below it: ``label == (score >= t)``), else 0.5.  Every bad row is reported
(data rows numbered from 1, the header is row 0) and a file with any
problem is rejected whole (:class:`~.labellings.CalibrationInputError`).
"""
from __future__ import annotations

import csv
import io
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..model import DIMENSIONS
from .labellings import BINARY_THRESHOLD, AutoLabelling, CalibrationInputError, _auto_frame

__all__ = ["auto_from_csv"]


def _implied_threshold(scores: Sequence[float], labels: Sequence[int]) -> float | None:
    """The threshold the labels imply, if ``label == (score >= t)`` for some t: the lowest "yes" score."""
    yes = [s for s, label in zip(scores, labels, strict=True) if label == 1]
    no = [s for s, label in zip(scores, labels, strict=True) if label == 0]
    if yes and (not no or max(no) < min(yes)):
        return float(min(yes))
    return None


def _read(path: str | Path, source: str) -> tuple[csv.DictReader[str], list[str]]:
    """The CSV reader over the file's text and its header (names stripped); an unreadable file is row 0's error."""
    from ..limits import LimitExceeded, check_file

    try:
        check_file(path)  # a regular file within the import bounds: a FIFO is refused, not waited on
        text = Path(path).read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError, LimitExceeded) as exc:
        raise CalibrationInputError([(0, f"cannot read the file: {exc}")], source) from None
    reader = csv.DictReader(io.StringIO(text))
    header = [h.strip() for h in (reader.fieldnames or [])]
    reader.fieldnames = header
    return reader, header


def _header_problems(header: Sequence[str], dimension: str | None) -> list[tuple[int, str]]:
    """What the header (row 0) lacks: unit_id, a score or label column, a dimension (column or argument)."""
    problems: list[tuple[int, str]] = []
    if "unit_id" not in header:
        problems.append((0, "missing column 'unit_id' (expected unit_id, score, label[, dimension])"))
    if "score" not in header and "label" not in header:
        problems.append((0, "needs a 'score' or a 'label' column (or both)"))
    if "dimension" not in header and dimension is None:
        problems.append((0, "no 'dimension' column: say which dimension the scores are for"))
    if dimension is not None and dimension not in DIMENSIONS:
        problems.append((0, f"unknown dimension {dimension!r} (known: {', '.join(DIMENSIONS)})"))
    return problems


def _score_and_label(rec: Mapping[str, str], why: list[str]) -> tuple[float | None, int | None]:
    """The row's score (finite, in [0, 1]) and label (1/0, true/false, yes/no), None when empty; what is wrong
    with them is added to ``why``."""
    score = label = None
    if rec.get("score"):
        try:
            score = float(rec["score"])
            if not math.isfinite(score):
                why.append(f"score must be finite, got {rec['score']!r}")
            elif not 0.0 <= score <= 1.0:
                why.append(f"score must be in [0, 1], got {rec['score']!r} (rescale a 0-100 score first)")
        except ValueError:
            why.append(f"score must be a number, got {rec['score']!r}")
    if rec.get("label"):
        label = {"1": 1, "0": 0, "true": 1, "false": 0, "yes": 1, "no": 0}.get(rec["label"].lower())
        if label is None:
            why.append(f"label must be 1 or 0, got {rec['label']!r}")
    elif not rec.get("score"):
        why.append("neither a score nor a label")
    return score, label


def _row(n: int, rec: Mapping[str, str], dimension: str | None, catalog: Mapping[str, Any] | None,
         seen: dict[tuple[str, str], int]) -> tuple[dict[str, Any] | None, str]:
    """Data row ``n`` as a record of the frame's columns, or ``(None, what is wrong with it)``; ``seen`` maps
    ``(unit_id, dimension)`` to the row that had it first."""
    why: list[str] = []
    uid = rec.get("unit_id", "")
    dim = rec.get("dimension") or dimension or ""
    if not uid:
        why.append("empty unit_id")
    if dim not in DIMENSIONS:
        why.append(f"unknown dimension {dim!r}")
    score, label = _score_and_label(rec, why)
    unit = None
    if catalog is not None and uid:
        unit = catalog.get(uid)
        if unit is None:
            why.append(f"unknown unit {uid!r}")
        elif dim in DIMENSIONS and dim not in unit.dimensions:
            why.append(f"unit {uid} ({unit.unit_kind}) does not take dimension {dim!r}")
    if uid and dim:
        if (uid, dim) in seen:
            why.append(f"duplicate of row {seen[(uid, dim)]} (same unit and dimension)")
        else:
            seen[(uid, dim)] = n
    if why:
        return None, "; ".join(why)
    return {"unit_id": uid, "dimension": dim, "score": score, "label": label,
            "unit_kind": unit.unit_kind if unit is not None else rec.get("unit_kind", ""),
            "case_id": unit.case_id if unit is not None else rec.get("case_id", ""),
            "response_id": unit.response_id if unit is not None else rec.get("response_id", "")}, ""


def _fill_in(rows: list[dict[str, Any]], threshold: float | None) -> dict[str, float]:
    """Per dimension the threshold (given, else implied by the rows' labels, else 0.5); a missing label becomes
    ``score >= threshold``, a missing score the label.  Returns the thresholds."""
    thresholds: dict[str, float] = {}
    for dim in sorted({r["dimension"] for r in rows}):
        mine = [r for r in rows if r["dimension"] == dim]
        both = [r for r in mine if r["score"] is not None and r["label"] is not None]
        t = threshold if threshold is not None else _implied_threshold([r["score"] for r in both],
                                                                       [r["label"] for r in both])
        thresholds[dim] = BINARY_THRESHOLD if t is None else float(t)
        for r in mine:
            if r["label"] is None:
                r["label"] = int(r["score"] >= thresholds[dim])
            if r["score"] is None:
                r["score"] = float(r["label"])
    return thresholds


def auto_from_csv(path: str | Path, *, dimension: str | None = None, name: str | None = None,
                  catalog: Mapping[str, Any] | None = None, threshold: float | None = None) -> AutoLabelling:
    """An external tool's per-unit scores: CSV with ``unit_id`` and ``score`` and/or ``label``.

    Optional columns: ``dimension`` (else ``dimension=`` applies to every row),
    ``unit_kind``, ``case_id``, ``response_id``.  ``score``: a finite number;
    ``label``: 1/0 (also true/false, yes/no).  A row may leave one of them
    empty: a missing label is ``score >= threshold``, a missing score is the
    label.  ``threshold`` (the tool's own cut-off) defaults to the one the
    labels imply when they are exactly ``score >= t``, else 0.5.  With a
    ``catalog`` (``unit_id -> Unit``) unknown unit ids and dimensions a unit
    does not take are errors, and unit kind, case and response are filled in.
    Every bad row is reported (data rows numbered from 1, header = row 0); a
    file with any problem is rejected whole.
    """
    source = str(path)
    reader, header = _read(path, source)
    problems = _header_problems(header, dimension)
    if problems:
        raise CalibrationInputError(problems, source)
    rows: list[dict[str, Any]] = []  # one record per data row, the frame's columns
    seen: dict[tuple[str, str], int] = {}  # (unit_id, dimension) -> the row that had it first
    for n, raw in enumerate(reader, start=1):
        if None in raw:
            problems.append((n, f"more fields than the header has columns ({len(header)})"))
            continue
        row, why = _row(n, {k: (v or "").strip() for k, v in raw.items()}, dimension, catalog, seen)
        if row is None:
            problems.append((n, why))
        else:
            rows.append(row)
    if not rows and not problems:
        problems.append((0, "no data rows"))
    if problems:
        raise CalibrationInputError(problems, source)
    thresholds = _fill_in(rows, threshold)
    return AutoLabelling(name or f"external:{Path(path).stem}", _auto_frame(rows), thresholds, source)
