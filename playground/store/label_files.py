"""Label files into the store: read a CSV, JSONL or Parquet table, check every row, import all or nothing.

An import is all-or-nothing: every row is validated against the unit catalog
first, and one :class:`LabelImportError` lists every bad row; only a file
without problems is written, in one transaction.  The columns are those of
:mod:`.exports` (either set); a CSV cell loses the one leading ``'`` that
:func:`~.exports.neutralise_cell` added.
"""
from __future__ import annotations

import io
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..jsonl import json_value, split_lines
from ..model import Unit
from .checks import STORE_UNIT_DIMENSIONS, TAGS_DIMENSION
from .core import LabelStore, annotator_problem
from .errors import LabelImportError
from .exports import COLUMNS, EXPORT_COLUMNS, FORMATS, UNSURE_TEXT, restore_cell
from .schema import canonical_timestamp
from .types import UNSURE, ImportReport

__all__ = ["ParsedFile", "detect_format", "import_file", "validate_file"]


def detect_format(path: str | os.PathLike[str], fmt: str | None = None) -> str:
    """``fmt`` if given (checked), else from the suffix (.csv/.txt, .jsonl/.ndjson/.json, .parquet) or the content."""
    if fmt:
        if fmt not in FORMATS:
            raise ValueError(f"unknown format {fmt!r} (known: {', '.join(FORMATS)})")
        return fmt
    suffix = Path(path).suffix.lower()
    if suffix in (".jsonl", ".ndjson", ".json"):
        return "jsonl"
    if suffix in (".csv", ".txt"):
        return "csv"
    if suffix in (".parquet", ".pq"):
        return "parquet"
    with open(path, "rb") as fh:
        head = fh.read(4)
    if head == b"PAR1":
        return "parquet"
    text = head.decode("utf-8", errors="replace").lstrip("\ufeff").lstrip()[:1]
    return "jsonl" if text == "{" else "csv"


def _read_csv(text: str, problems: list[tuple[int, str]]) -> tuple[list[str], list[tuple[int, dict[str, Any]]]]:
    import pandas as pd

    if not text.strip():
        problems.append((0, "empty file: expected a header line " + ",".join(COLUMNS)))
        return [], []
    try:
        frame = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False, na_filter=False)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, ValueError) as exc:
        problems.append((0, f"malformed CSV: {str(exc).strip()}"))
        return [], []
    header = [str(c) for c in frame.columns]
    records = [(i + 1, {k: restore_cell(v) for k, v in rec.items()})
               for i, rec in enumerate(frame.to_dict(orient="records"))]
    return header, records


def _read_parquet(path: str | os.PathLike[str], problems: list[tuple[int, str]]
                  ) -> tuple[list[str], list[tuple[int, dict[str, Any]]]]:
    import pandas as pd

    try:
        frame = pd.read_parquet(path, engine="pyarrow")
    except Exception as exc:  # pyarrow raises several unrelated types for a bad file
        problems.append((0, f"not a readable Parquet file: {str(exc).strip()}"))
        return [], []
    header = [str(c) for c in frame.columns]
    frame = frame.astype(object).where(frame.notna(), "")
    return header, [(i + 1, rec) for i, rec in enumerate(frame.to_dict(orient="records"))]


def _read_jsonl(text: str, problems: list[tuple[int, str]]) -> list[tuple[int, dict[str, Any]]]:
    rows = []
    for n, line in enumerate(split_lines(text), start=1):  # "\n" only: raw U+2028 stays inside its string
        if not line.strip():
            continue
        obj, problem = json_value(line)
        if problem:
            problems.append((n, problem))
            continue
        if not isinstance(obj, dict):
            problems.append((n, f"expected a JSON object, got {type(obj).__name__}"))
            continue
        rows.append((n, obj))
    return rows


def _parse_value(raw: Any) -> int | None:
    """1, 0 or :data:`UNSURE` from ``1``/``0`` (int or text) or ``unsure``; else None."""
    if isinstance(raw, bool):
        return None
    if isinstance(raw, int) and raw in (0, 1):
        return raw
    if isinstance(raw, str) and raw.strip() in ("0", "1"):
        return int(raw.strip())
    if isinstance(raw, str) and raw.strip().lower() == UNSURE_TEXT:
        return UNSURE
    return None


@dataclass
class ParsedFile:
    """Validated rows of one label file: ``(row_number, annotator, unit, dimension, value)``, and comments.

    ``comments``: ``(row_number, annotator, unit, text)``, one per (annotator, unit).
    """

    source: str
    fmt: str
    rows: list[tuple[int, str, Unit, str, int]] = field(default_factory=list)
    comments: list[tuple[int, str, Unit, str]] = field(default_factory=list)
    #: ``(row_number, annotator, unit, tag names)`` of ``tags`` rows (:mod:`.tag_rows`).
    tags: list[tuple[int, str, Unit, tuple[str, ...]]] = field(default_factory=list)
    #: row_number -> the row's ``time`` as the store spells it (rows without a time are absent).
    times: dict[int, str] = field(default_factory=dict)


def _read_records(path: str | os.PathLike[str], fmt: str | None, source: str, problems: list[tuple[int, str]]
                  ) -> tuple[str, list[str] | None, list[tuple[int, dict[str, Any]]]]:
    """``(fmt, header or None for JSONL, records)``; unreadable files raise :class:`LabelImportError`.

    The file must be a regular file within :mod:`playground.limits`' size (checked
    before it is opened: a FIFO would wait forever) and, for Parquet, row bounds; its records are
    then held to the cell, nesting and label-row bounds (:func:`~playground.limits.bounded_lines`).
    """
    from ..limits import MAX_LABEL_ROWS, LimitExceeded, bounded_lines, check_file

    try:
        check_file(path)  # before anything opens it (detect_format may read its first bytes)
        fmt = detect_format(path, fmt)
        if fmt == "parquet":
            import pyarrow.parquet as pq

            try:
                rows = pq.ParquetFile(path).metadata.num_rows
            except Exception:  # unreadable: _read_parquet says so, with pyarrow's reason
                rows = 0
            if rows > MAX_LABEL_ROWS:
                raise LimitExceeded(f"{rows:,} rows, more than the limit of {MAX_LABEL_ROWS:,} label rows: split it")
            header, records = _read_parquet(path, problems)
            return fmt, header, list(bounded_lines(records, problems, MAX_LABEL_ROWS))
        with open(path, encoding="utf-8-sig", newline="") as fh:  # newline="": keep "\r" inside fields
            text = fh.read()
    except UnicodeDecodeError as exc:
        raise LabelImportError([(0, f"not UTF-8 text ({exc.reason} at byte {exc.start})")], source) from None
    except LimitExceeded as exc:
        raise LabelImportError([(0, str(exc))], source) from None
    except OSError as exc:
        raise LabelImportError([(0, f"cannot read the file: {exc.strerror or exc}")], source) from None
    if fmt == "csv":
        header, records = _read_csv(text, problems)
        return fmt, header, list(bounded_lines(records, problems, MAX_LABEL_ROWS))
    return fmt, None, list(bounded_lines(_read_jsonl(text, problems), problems, MAX_LABEL_ROWS))


def _check_columns(header: list[str], required: list[str]) -> list[str]:
    missing = [c for c in required if c not in header]
    extra = [c for c in header if c not in EXPORT_COLUMNS]
    out = []
    if missing:
        out.append(f"missing column(s) {', '.join(missing)} "
                   f"(expected {', '.join(COLUMNS)}, or {', '.join(EXPORT_COLUMNS)})")
    if extra:
        out.append(f"unknown column(s) {', '.join(map(repr, extra))} (known: {', '.join(EXPORT_COLUMNS)})")
    return out


def _row_unit(rec: Mapping[str, Any], catalog: Mapping[str, Unit], reasons: list[str]) -> Unit | None:
    kind, uid, dim = rec.get("unit_kind"), rec.get("unit_id"), rec.get("dimension")
    unit = catalog.get(uid) if isinstance(uid, str) else None
    if unit is None:
        reasons.append(f"unknown unit {uid!r} (not among the {len(catalog)} units the data defines)")
        if kind not in STORE_UNIT_DIMENSIONS:
            reasons.append(f"unknown unit_kind {kind!r} (known: {', '.join(STORE_UNIT_DIMENSIONS)})")
        return None
    if kind != unit.unit_kind:
        reasons.append(f"unit_kind {kind!r} does not match unit {uid}, which is a {unit.unit_kind}")
    if (dim not in ("", None) or "comment" not in rec) and dim != TAGS_DIMENSION:
        allowed = [d for d in unit.dimensions if d in STORE_UNIT_DIMENSIONS.get(unit.unit_kind, ())]
        if dim not in allowed:
            reasons.append(f"dimension {dim!r} is not labelled on a {unit.unit_kind} (it takes: {', '.join(allowed)})")
    for column, expected in (("case_id", unit.case_id), ("response_id", unit.response_id), ("text", unit.text)):
        given = rec.get(column)
        if given not in (None, "") and given != expected:
            what = "the unit's text changed since the export" if column == "text" else f"the unit's is {expected!r}"
            reasons.append(f"{column} {str(given)[:60]!r} does not match ({what})")
    return unit


def _row_time(rec: Mapping[str, Any], reasons: list[str]) -> str | None:
    """The row's ``time`` as the store spells it (:func:`~.schema.canonical_timestamp`), or None when empty.

    ISO 8601 with a date and a time of day; without an offset it is UTC (as the store reads its own times).
    """
    raw = rec.get("time")
    if raw in (None, ""):
        return None
    text = raw.strip() if isinstance(raw, str) else ""
    if len(text) > 10 and text[10] in "Tt ":  # a date alone is no time of day
        try:
            return canonical_timestamp(text)
        except ValueError:
            pass
    reasons.append(f"time {raw!r} is not an ISO 8601 date and time (like 2026-12-07T06:56:21.000000+00:00)")
    return None


def _row_value(rec: Mapping[str, Any], reasons: list[str]) -> tuple[int | None, str]:
    """``(value or None for a comment-only row, stripped comment)``; problems appended to ``reasons``."""
    dim, raw_value, comment = rec.get("dimension"), rec.get("value"), rec.get("comment", "")
    if not isinstance(comment, str):
        reasons.append(f"comment must be text, got {comment!r}")
        comment = ""
    comment = comment.strip()
    if "comment" in rec and dim in ("", None) and raw_value in ("", None):
        if not comment:
            reasons.append("a row without dimension and value must carry a comment")
        return None, comment
    value = _parse_value(raw_value)
    if value is None:
        reasons.append(f"value must be 1, 0 or unsure, got {raw_value!r}")
    return value, comment


def _check_repeats(n: int, annotator: str, rec: Mapping[str, Any], value: int | None, comment: str,
                   seen: dict[tuple[str, str, str], int], comments: dict[tuple[str, str], tuple[int, str]],
                   reasons: list[str]) -> None:
    """No (annotator, unit, dimension) twice; one comment per (annotator, unit) however many rows repeat it."""
    uid, dim = rec.get("unit_id"), rec.get("dimension")
    if not isinstance(uid, str):
        return
    if value is not None and isinstance(dim, str):
        key = (annotator, uid, dim)
        if key in seen:
            reasons.append(f"duplicate of row {seen[key]} (same annotator, unit and dimension)")
        else:
            seen[key] = n
    if comment:
        first = comments.setdefault((annotator, uid), (n, comment))
        if first[1] != comment:
            reasons.append(f"a different comment than row {first[0]} for the same annotator and unit")


@dataclass
class _RowChecker:
    """Checks the records of one file in order, remembering what earlier rows said (duplicates, comments)."""

    catalog: Mapping[str, Unit]
    annotator_override: str | None
    parsed: ParsedFile
    #: (annotator, unit_id, dimension) -> the first row that set it.
    seen: dict[tuple[str, str, str], int] = field(default_factory=dict)
    #: (annotator, unit_id) -> (the first row with a comment, that comment).
    comments: dict[tuple[str, str], tuple[int, str]] = field(default_factory=dict)

    def add(self, n: int, rec: Mapping[str, Any], reasons: list[str]) -> None:
        """Check record ``n``: its problems go to ``reasons``; without any, it joins :attr:`parsed`."""
        raw_name = self.annotator_override if self.annotator_override is not None else rec.get("annotator")
        name_problem = annotator_problem(raw_name)
        if name_problem is not None:
            reasons.append(name_problem)
        annotator = raw_name.strip() if isinstance(raw_name, str) else ""
        unit = _row_unit(rec, self.catalog, reasons)
        tags: tuple[str, ...] | None = None
        if rec.get("dimension") == TAGS_DIMENSION:
            tags, value, comment = self._tag_row(n, annotator, rec, reasons)
        else:
            value, comment = _row_value(rec, reasons)
        _check_repeats(n, annotator, rec, value, comment, self.seen, self.comments, reasons)
        when = _row_time(rec, reasons)
        if reasons:
            return
        assert unit is not None
        if when is not None:
            self.parsed.times[n] = when
        if value is not None:
            self.parsed.rows.append((n, annotator, unit, str(rec.get("dimension")), value))
        if tags:
            self.parsed.tags.append((n, annotator, unit, tags))
        if comment and self.comments[(annotator, unit.unit_id)][0] == n:
            self.parsed.comments.append((n, annotator, unit, comment))

    def _tag_row(self, n: int, annotator: str, rec: Mapping[str, Any], reasons: list[str]
                 ) -> tuple[tuple[str, ...], None, str]:
        """``(tags, no value, comment)`` of a ``tags`` row (:mod:`.tag_rows`); one such row per annotator and unit."""
        from .tag_rows import parse_tag_cell

        tags = parse_tag_cell(rec.get("value"), reasons)
        first = self.seen.setdefault((annotator, str(rec.get("unit_id")), TAGS_DIMENSION), n)
        if first != n:
            reasons.append(f"duplicate of row {first} (same annotator, unit and dimension)")
        return tags, None, str(rec.get("comment") or "").strip()


def validate_file(path: str | os.PathLike[str], catalog: Mapping[str, Unit], annotator_override: str | None = None,
                  fmt: str | None = None) -> ParsedFile:
    """Read and check every row of a label file; raise :class:`LabelImportError` listing every bad row.

    Checks: the file is readable (UTF-8 CSV/JSONL, or Parquet); the columns
    include :data:`COLUMNS` (``annotator`` may be absent with
    ``annotator_override``) and are among :data:`EXPORT_COLUMNS`; the
    annotator name follows :func:`~playground.store.check_annotator` (reserved
    names refused); a unit id the catalog knows, with the catalog's unit kind
    (and its case id, response id and text where the file gives them); a
    dimension that unit takes; value 1, 0 or ``unsure`` — or, with a
    ``comment`` column, empty dimension and value for a comment alone; no
    (annotator, unit, dimension) twice; one comment per (annotator, unit).
    """
    source = str(path)
    problems: list[tuple[int, str]] = []
    required = [c for c in COLUMNS if not (c == "annotator" and annotator_override is not None)]
    fmt, header, records = _read_records(path, fmt, source, problems)
    if header is not None and not problems:
        bad = _check_columns(header, required)
        if bad:
            problems += [(0, b) for b in bad]
            records = []
    rows = _RowChecker(catalog, annotator_override, ParsedFile(source, fmt))
    for n, rec in records:
        reasons: list[str] = []
        if header is None:
            bad = _check_columns(list(rec), required)
            if bad and any(b.startswith("missing") for b in bad):
                problems.append((n, "; ".join(bad)))
                continue
            reasons += bad
        rows.add(n, rec, reasons)
        if reasons:
            problems.append((n, "; ".join(reasons)))
    if problems:
        raise LabelImportError(problems, source)
    return rows.parsed


def import_file(store: LabelStore, path: str | os.PathLike[str], catalog: Mapping[str, Unit],
                annotator_override: str | None = None, fmt: str | None = None) -> ImportReport:
    """Import a CSV, JSONL or Parquet label file (either column set): all rows or none.

    Every row is validated first (:func:`validate_file`); any problem raises
    :class:`LabelImportError` with all of them and nothing is written.  Then
    every row is written in ONE transaction: a row that changes a label adds
    an ``import`` event (all sharing one ``batch_id``), a new comment a
    ``comment`` event; a row equal to the current label (same value, same
    text hash) is counted as unchanged.  Imports set values and comments
    only — they never clear.  ``annotator_override`` files every row under
    that name (the ``annotator`` column may then be absent).

    Times: a row's ``time`` is kept as the event's and the label's time (not
    re-stamped), so export → import → export gives the same bytes; a row
    without one gets the time of the import.  The history's order is the
    order the store learnt of its events (event ids), not their times: an
    imported label older than the current label of the same annotator,
    unit and dimension still becomes current (an import is asked for), the
    label it replaces stays in the history as that event's old value (undo
    brings it back), and the report counts such rows (``older``).
    """
    parsed = validate_file(path, catalog, annotator_override, fmt)
    rows = [(a, u, d, v) for _n, a, u, d, v in parsed.rows]
    notes = [(a, u, t) for _n, a, u, t in parsed.comments]
    if store.read_only:
        from .errors import ReadOnlyStoreError

        raise ReadOnlyStoreError(f"the label store {store.url} is open read-only; nothing was imported")
    when = parsed.times.get
    write_labels = store.writes.rows_tx(rows, "import", notes, times=[when(n) for n, *_ in parsed.rows],
                                  comment_times=[when(n) for n, *_ in parsed.comments]) if rows or notes else None
    write_tags = store.tagging.tags_tx([(a, u, t) for _n, a, u, t in parsed.tags], [when(n) for n, *_ in parsed.tags])

    def tx(cur: Any) -> tuple[tuple[int, int, list[str], int | None, int], int]:
        return (write_labels(cur) if write_labels is not None else (0, 0, [], None, 0)), write_tags(cur)

    (changed, unchanged, created, batch, older), tagged = store.handle.write(tx) if rows or notes or parsed.tags else (
        (0, 0, [], None, 0), 0)
    changed += tagged
    names = tuple(sorted({a for a, *_ in rows} | {a for a, *_ in notes} | {a for _n, a, *_ in parsed.tags}))
    return ImportReport(parsed.source, parsed.fmt, len(rows), changed, unchanged, names, tuple(created), batch,
                        older)
