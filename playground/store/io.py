"""Export and import of labels: CSV, JSONL and Parquet tables, golden-set YAML, store-to-store copies.

An export people can use on their own (:func:`export_table`) has the columns
:data:`EXPORT_COLUMNS` — ``case_id, response_id, unit_kind, unit_id, text,
dimension, value, comment, annotator, time`` — one row per label (``value``
``1``, ``0`` or ``unsure``; text and response id from the catalog; the
annotator's comment on the unit repeated on each of its rows; a comment on a
unit without labels is a row with empty ``dimension`` and ``value``; a
failure-mode tag set a row with ``dimension`` ``tags``, :mod:`.tag_rows`), sorted
by (annotator, unit_id, dimension).  Every value is a string.  The older
five-column rows (:data:`COLUMNS`, :func:`export_rows`) are still written and read.

CSV cells that a spreadsheet would run as a formula — starting with ``=``,
``+``, ``-``, ``@``, tab or carriage return (OWASP, CSV injection) — are
written with a leading ``'``; so is a cell that starts with ``'`` itself, so
the import can drop exactly one leading ``'`` before any of those characters
and get the text back.

An import is all-or-nothing: every row is validated against the unit catalog
first, and one :class:`LabelImportError` lists every bad row; only a file
without problems is written, in one transaction.
"""
from __future__ import annotations

import io
import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from ..files import write_atomic
from ..jsonl import json_value, split_lines
from ..model import Unit
from .checks import STORE_UNIT_DIMENSIONS, TAGS_DIMENSION
from .core import CONSENSUS_ANNOTATOR, RESERVED_ANNOTATORS, LabelStore, annotator_problem, open_store
from .errors import LabelImportError
from .types import UNSURE, ConsensusRow, ImportReport

__all__ = [
    "COLUMNS", "EXPORT_COLUMNS", "FORMATS", "ConsensusExport", "GoldenExport", "ParsedFile", "consensus_export",
    "detect_format", "export_golden", "export_rows", "export_table", "format_bytes", "format_rows", "import_file",
    "migrate_store", "neutralise_cell", "restore_cell", "validate_file", "write_export",
]

#: The five columns of the older label rows (value 1 or 0), still read and written.
COLUMNS: tuple[str, ...] = ("annotator", "unit_kind", "unit_id", "dimension", "value")
#: The columns of an export people can use alone (see the module docstring).
EXPORT_COLUMNS: tuple[str, ...] = ("case_id", "response_id", "unit_kind", "unit_id", "text", "dimension", "value",
                                   "comment", "annotator", "time")
FORMATS: tuple[str, ...] = ("csv", "jsonl", "parquet")
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r", "'")
_UNSURE_TEXT = "unsure"


# --- export ------------------------------------------------------------------------------------


def _value_text(value: int) -> str:
    return _UNSURE_TEXT if value == UNSURE else str(int(value))


@dataclass(frozen=True)
class ConsensusExport:
    """Consensus rows (annotator ``consensus``) and the ties left out of them."""

    rows: list[dict[str, Any]]
    ties: list[ConsensusRow]


def consensus_export(store: LabelStore, catalog: Mapping[str, Unit] | None = None) -> ConsensusExport:
    """Consensus rows (five columns) under the annotator name ``consensus``; ties apart, never broken.

    An adjudicated item carries its adjudicated value (status ``adjudicated``).
    """
    rows, ties = [], []
    for c in store.consensus(catalog=catalog):
        if c.value is None:
            ties.append(c)
        else:
            rows.append({"annotator": CONSENSUS_ANNOTATOR, "unit_kind": c.unit_kind, "unit_id": c.unit_id,
                         "dimension": c.dimension, "value": c.value})
    rows.sort(key=lambda r: (r["annotator"], r["unit_id"], r["dimension"]))
    return ConsensusExport(rows, ties)


def export_rows(store: LabelStore, annotator: str | None = None, consensus: bool = False,
                catalog: Mapping[str, Unit] | None = None) -> list[dict[str, Any]]:
    """Label rows with exactly :data:`COLUMNS`, sorted by (annotator, unit_id, dimension).

    ``annotator`` restricts to one person; ``consensus=True`` gives the
    consensus rows instead (ties left out — use :func:`consensus_export` to get
    them).  With a ``catalog``, stale and orphaned labels are left out (the
    five columns cannot say a label is stale, and importing it would make it
    look current); use :meth:`LabelStore.stale` to list them.  Unsure answers
    and the reserved names are not in these rows (see :func:`export_table`).
    """
    if consensus:
        return consensus_export(store, catalog).rows
    labels = store.labels(annotator=annotator) if catalog is None else store.current_labels(catalog, annotator)
    rows = [{"annotator": lb.annotator, "unit_kind": lb.unit_kind, "unit_id": lb.unit_id, "dimension": lb.dimension,
             "value": int(lb.value)} for lb in labels if lb.annotator not in RESERVED_ANNOTATORS]
    rows.sort(key=lambda r: (r["annotator"], r["unit_id"], r["dimension"]))
    return rows


def _table_row(unit: Unit | None, kind: str, uid: str, case_id: str, dim: str, value: str, comment: str,
               annotator: str, time: str) -> dict[str, str]:
    return {"case_id": case_id, "response_id": unit.response_id if unit is not None else "", "unit_kind": kind,
            "unit_id": uid, "text": unit.text if unit is not None else "", "dimension": dim, "value": value,
            "comment": comment, "annotator": annotator, "time": time}


def export_table(store: LabelStore, catalog: Mapping[str, Unit] | None = None, *, annotator: str | None = None,
                 consensus: bool = False) -> list[dict[str, str]]:
    """Rows with :data:`EXPORT_COLUMNS` (all strings), sorted by (annotator, unit_id, dimension).

    ``annotator`` restricts to one person (reserved names never appear);
    ``consensus=True`` gives one row per settled item under the annotator
    ``consensus`` (majority or adjudication; ties left out; an adjudicated
    row's comment says ``adjudicated by NAME``).  With a ``catalog``, stale
    and orphaned labels and comments on units outside it are left out and
    ``text``/``response_id`` are filled in; without one they are empty.  Unsure answers are rows with value
    ``unsure``.  A pure function of the store and catalog: the page's download
    calls it, then :func:`format_rows` / :func:`format_bytes`.
    """
    cat: Mapping[str, Unit] = catalog if catalog is not None else {}
    rows: list[dict[str, str]] = []
    if consensus:
        times = {(lb.unit_id, lb.dimension): lb.updated_at for lb in store.labels(annotator=CONSENSUS_ANNOTATOR)}
        for c in store.consensus(catalog=catalog):
            if c.value is None:
                continue
            adjudicated = c.status == "adjudicated"
            note = f"adjudicated by {c.adjudicator}" if adjudicated and c.adjudicator else ""
            rows.append(_table_row(cat.get(c.unit_id), c.unit_kind, c.unit_id, c.case_id, c.dimension,
                                   _value_text(c.value), note, CONSENSUS_ANNOTATOR,
                                   times.get((c.unit_id, c.dimension), "") if adjudicated else ""))
        return rows
    labels = (store.labels(annotator=annotator, include_unsure=True) if catalog is None
              else store.current_labels(catalog, annotator, include_unsure=True))
    said = {(c.annotator, c.unit_id): c for c in store.comments(annotator=annotator)
            if c.annotator not in RESERVED_ANNOTATORS and (catalog is None or c.unit_id in catalog)}
    with_rows: set[tuple[str, str]] = set()
    for lb in labels:
        if lb.annotator in RESERVED_ANNOTATORS:
            continue
        mine = said.get((lb.annotator, lb.unit_id))
        with_rows.add((lb.annotator, lb.unit_id))
        rows.append(_table_row(cat.get(lb.unit_id), lb.unit_kind, lb.unit_id, lb.case_id, lb.dimension,
                               _value_text(lb.value), mine.text if mine else "", lb.annotator, lb.updated_at))
    from .tag_rows import tag_table_rows

    tagged = tag_table_rows(store, catalog, annotator, said, _table_row)
    rows += tagged
    with_rows |= {(r["annotator"], r["unit_id"]) for r in tagged}
    for key, alone in said.items():
        if key not in with_rows:
            rows.append(_table_row(cat.get(alone.unit_id), alone.unit_kind, alone.unit_id, alone.case_id, "", "",
                                   alone.text, alone.annotator, alone.updated_at))
    rows.sort(key=lambda r: (r["annotator"], r["unit_id"], r["dimension"]))
    return rows


def neutralise_cell(value: Any) -> Any:
    """A CSV cell a spreadsheet will not run: text starting with ``= + - @`` tab, CR or ``'`` gets a leading ``'``."""
    if isinstance(value, str) and value.startswith(_FORMULA_START):
        return "'" + value
    return value


def restore_cell(value: Any) -> Any:
    """Undo :func:`neutralise_cell` (one ``'`` before a formula character or another ``'``)."""
    if isinstance(value, str) and len(value) > 1 and value[0] == "'" and value[1:].startswith(_FORMULA_START):
        return value[1:]
    return value


def _columns_of(rows: list[Mapping[str, Any]], columns: Iterable[str] | None) -> tuple[str, ...]:
    if columns is not None:
        return tuple(columns)
    if rows and not set(EXPORT_COLUMNS) <= set(rows[0]):
        return COLUMNS
    return EXPORT_COLUMNS


def format_rows(rows: Iterable[Mapping[str, Any]], fmt: str = "csv", columns: Iterable[str] | None = None) -> str:
    """The rows as CSV (pandas, header first, formula cells neutralised) or JSONL text.

    Columns: ``columns`` if given, else :data:`EXPORT_COLUMNS` when the rows
    have them (or there are none), else the older :data:`COLUMNS`.
    """
    listed = list(rows)
    cols = _columns_of(listed, columns)
    table = [{c: r[c] for c in cols} for r in listed]
    if fmt == "jsonl":
        return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in table)
    if fmt == "csv":
        import csv

        import pandas as pd

        table = [{c: neutralise_cell(v) for c, v in r.items()} for r in table]
        frame = pd.DataFrame(table, columns=list(cols))
        # Minimal quoting with "\n" line ends; a lone "\r" inside a field would then go unquoted and
        # split the row on reading, so such an export quotes every field instead.
        carriage = any("\r" in str(v) for r in table for v in r.values())
        text: str = frame.to_csv(index=False, lineterminator="\n",
                                 quoting=csv.QUOTE_ALL if carriage else csv.QUOTE_MINIMAL)
        return text
    if fmt == "parquet":
        raise ValueError("parquet is binary: use format_bytes(rows, 'parquet')")
    raise ValueError(f"unknown format {fmt!r} (known: {', '.join(FORMATS)})")


def format_bytes(rows: Iterable[Mapping[str, Any]], fmt: str = "csv", columns: Iterable[str] | None = None) -> bytes:
    """The rows as file content: UTF-8 CSV/JSONL (:func:`format_rows`) or Parquet (pandas + pyarrow, string columns)."""
    if fmt != "parquet":
        return format_rows(rows, fmt, columns).encode("utf-8")
    import pandas as pd

    listed = list(rows)
    cols = _columns_of(listed, columns)
    frame = pd.DataFrame([{c: r[c] for c in cols} for r in listed], columns=list(cols))
    frame = frame.astype({c: "string" for c in cols if c != "value" or cols == EXPORT_COLUMNS})
    buf = io.BytesIO()
    frame.to_parquet(buf, index=False, engine="pyarrow")
    return buf.getvalue()


def write_export(rows: Iterable[Mapping[str, Any]], path_or_stream: str | os.PathLike[str] | IO[str],
                 fmt: str = "csv") -> None:
    """Write rows to a file (atomically: a reader never sees half a file) or a text stream.

    Parquet to a stream goes to its binary ``buffer`` (``sys.stdout.buffer``).
    """
    data = format_bytes(rows, fmt)
    if hasattr(path_or_stream, "write"):
        if fmt == "parquet":
            target = getattr(path_or_stream, "buffer", None)
            if target is None:
                raise ValueError("parquet needs a file or a binary stream")
            target.write(data)
            target.flush()
            return
        path_or_stream.write(data.decode("utf-8"))
        if hasattr(path_or_stream, "flush"):
            path_or_stream.flush()
    else:
        write_atomic(Path(path_or_stream), data)

# --- import --------------------------------------------------------------------------------------


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
    if isinstance(raw, str) and raw.strip().lower() == _UNSURE_TEXT:
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


def _read_records(path: str | os.PathLike[str], fmt: str | None, source: str, problems: list[tuple[int, str]]
                  ) -> tuple[str, list[str] | None, list[tuple[int, dict[str, Any]]]]:
    """``(fmt, header or None for JSONL, records)``; unreadable files raise :class:`LabelImportError`.

    The file must be a regular file within :mod:`playground.importers.limits`' size (checked
    before it is opened: a FIFO would wait forever) and, for Parquet, row bounds.
    """
    from ..importers.limits import MAX_LABEL_ROWS, LimitExceeded, check_file

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
            return fmt, header, records
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
        return fmt, header, records
    return fmt, None, _read_jsonl(text, problems)


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
    parsed = ParsedFile(source, fmt)
    seen: dict[tuple[str, str, str], int] = {}
    comments: dict[tuple[str, str], tuple[int, str]] = {}
    for n, rec in records:
        reasons: list[str] = []
        if header is None:
            bad = _check_columns(list(rec), required)
            if bad and any(b.startswith("missing") for b in bad):
                problems.append((n, "; ".join(bad)))
                continue
            reasons += bad
        raw_name = annotator_override if annotator_override is not None else rec.get("annotator")
        name_problem = annotator_problem(raw_name)
        if name_problem is not None:
            reasons.append(name_problem)
        annotator = raw_name.strip() if isinstance(raw_name, str) else ""
        unit = _row_unit(rec, catalog, reasons)
        tags: tuple[str, ...] | None = None
        if rec.get("dimension") == TAGS_DIMENSION:
            from .tag_rows import parse_tag_cell

            tags = parse_tag_cell(rec.get("value"), reasons)
            value, comment = None, str(rec.get("comment") or "").strip()
            first = seen.setdefault((annotator, str(rec.get("unit_id")), TAGS_DIMENSION), n)
            if first != n:
                reasons.append(f"duplicate of row {first} (same annotator, unit and dimension)")
        else:
            value, comment = _row_value(rec, reasons)
        _check_repeats(n, annotator, rec, value, comment, seen, comments, reasons)
        if reasons:
            problems.append((n, "; ".join(reasons)))
            continue
        assert unit is not None
        if value is not None:
            parsed.rows.append((n, annotator, unit, str(rec.get("dimension")), value))
        if tags:
            parsed.tags.append((n, annotator, unit, tags))
        if comment and comments[(annotator, unit.unit_id)][0] == n:
            parsed.comments.append((n, annotator, unit, comment))
    if problems:
        raise LabelImportError(problems, source)
    return parsed


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
    """
    parsed = validate_file(path, catalog, annotator_override, fmt)
    rows = [(a, u, d, v) for _n, a, u, d, v in parsed.rows]
    notes = [(a, u, t) for _n, a, u, t in parsed.comments]
    if store.read_only:
        from .errors import ReadOnlyStoreError

        raise ReadOnlyStoreError(f"the label store {store.url} is open read-only; nothing was imported")
    write_labels = store._rows_tx(rows, "import", notes) if rows or notes else None
    write_tags = store._tags_tx([(a, u, t) for _n, a, u, t in parsed.tags])

    def tx(cur: Any) -> tuple[tuple[int, int, list[str], int | None], int]:
        return (write_labels(cur) if write_labels is not None else (0, 0, [], None)), write_tags(cur)

    (changed, unchanged, created, batch), tagged = store._write(tx) if rows or notes or parsed.tags else (
        (0, 0, [], None), 0)
    changed += tagged
    names = tuple(sorted({a for a, *_ in rows} | {a for a, *_ in notes} | {a for _n, a, *_ in parsed.tags}))
    return ImportReport(parsed.source, parsed.fmt, len(rows), changed, unchanged, names, tuple(created), batch)


# --- golden-set export -----------------------------------------------------------------------------


@dataclass(frozen=True)
class GoldenExport:
    """Which responses went into the golden-set file, and which were skipped and why."""

    path: str
    written: tuple[str, ...]
    skipped: tuple[tuple[str, str], ...]


def export_golden(store: LabelStore, dataset: Any, path: str | os.PathLike[str] | IO[str], annotator: str | None = None
                  ) -> GoldenExport:
    """Write the labels as a golden-set response file (``golden/responses/*.yaml`` format).

    ``annotator=None`` uses the consensus of all annotators — the adjudicated
    value where there is one, else the majority (a tie leaves the response
    out); a name uses that person's labels.  Unsure answers never count.  A response is written
    only when every one of its claims has ``supported`` and ``correct`` and
    every reference fact has ``covered``, all current (not stale); the others
    are listed in :attr:`GoldenExport.skipped` with the reason.  Passage
    relevance has no place in that format and is not exported.  ``dataset``
    needs ``cases`` and ``responses`` mappings (a :class:`playground.golden.Dataset`).
    """
    import yaml

    from ..golden import response_units
    from .core import majority

    by_unit: dict[str, list[Any]] = {}
    settled: dict[tuple[str, str], Any] = {}
    for label in store.labels(annotator=annotator):
        if annotator is None and label.annotator == CONSENSUS_ANNOTATOR:
            settled[(label.unit_id, label.dimension)] = label
            continue
        if annotator is None and label.annotator in RESERVED_ANNOTATORS:
            continue
        by_unit.setdefault(label.unit_id, []).append(label)
    written, skipped, out = [], [], []
    for rid in sorted(dataset.responses):
        response = dataset.responses[rid]
        case = dataset.cases.get(response.case_id)
        if case is None:
            skipped.append((rid, f"case {response.case_id} is not in the dataset"))
            continue
        units = response_units(case, response)
        values: dict[tuple[str, str], int] = {}
        problems: list[str] = []
        unlabelled: list[str] = []
        for unit in units:
            for dim in unit.dimensions:
                adjudicated = settled.get((unit.unit_id, dim))
                if adjudicated is not None and adjudicated.text_hash == unit.text_hash:
                    values[(unit.unit_id, dim)] = int(adjudicated.value)
                    continue
                labels = [lb for lb in by_unit.get(unit.unit_id, ()) if lb.dimension == dim]
                fresh = [lb for lb in labels if lb.text_hash == unit.text_hash]
                if not fresh:
                    if labels:
                        problems.append(f"stale label(s) on {unit.unit_id} {dim} (its text changed)")
                    else:
                        unlabelled.append(f"{unit.unit_id} {dim}")
                    continue
                yes = sum(lb.value == 1 for lb in fresh)
                value, _status = majority(yes, len(fresh) - yes)
                if value is None:
                    problems.append(f"tie on {unit.unit_id} {dim} ({yes} yes, {len(fresh) - yes} no)")
                else:
                    values[(unit.unit_id, dim)] = value
        if unlabelled:
            problems.append(f"{len(unlabelled)} unlabelled: {', '.join(unlabelled[:5])}"
                            + (" ..." if len(unlabelled) > 5 else ""))
        if problems:
            skipped.append((rid, "; ".join(problems)))
            continue
        claims = [u for u in units if u.unit_kind == "claim"]
        entry: dict[str, Any] = {
            "response_id": rid, "case_id": response.case_id, "variant": response.variant,
            "claims": [{"text": u.text, "supported": bool(values[(u.unit_id, "supported")]),
                        "correct": bool(values[(u.unit_id, "correct")])} for u in claims],
            "facts": {f.fact_id: bool(values[(u.unit_id, "covered")])
                      for f, u in zip(case.reference_facts, [u for u in units if u.unit_kind == "fact"],
                                      strict=False)},
            "notes": response.notes,
        }
        if response.text != " ".join(u.text for u in claims):
            entry["text"] = response.text
        if getattr(response, "origin", "authored") != "authored":
            entry["origin"] = response.origin
        out.append(entry)
        written.append(rid)
    who = "consensus of all annotators" if annotator is None else f"annotator {annotator}"
    header = f"# Golden-set responses exported from the label store ({who}).\n"
    text = header + yaml.safe_dump({"responses": out}, sort_keys=False, allow_unicode=True, width=100)
    if hasattr(path, "write"):
        path.write(text)
        target = getattr(path, "name", "<stream>")
    else:
        write_atomic(Path(path), text)
        target = str(path)
    return GoldenExport(str(target), tuple(written), tuple(skipped))


# --- store to store -----------------------------------------------------------------------------------


def migrate_store(source_url: str | os.PathLike[str], target_url: str | os.PathLike[str]) -> dict[str, int]:
    """Copy the store at ``source_url`` into a new or empty store at ``target_url``, exactly.

    Annotators, every event and every current label keep their ids and
    timestamps; the copy is verified table by table.  The source is opened
    normally, so an older-schema source is migrated forward in place first.
    """
    with open_store(source_url, create=False) as source, open_store(target_url) as target:
        return target.copy_from(source)
