"""Label tables out of the store: rows, CSV/JSONL/Parquet bytes, and files written atomically.

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
"""
from __future__ import annotations

import io
import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from ..files import write_atomic
from ..model import Unit
from .core import CONSENSUS_ANNOTATOR, RESERVED_ANNOTATORS, LabelStore
from .types import UNSURE, ConsensusRow

__all__ = [
    "COLUMNS", "EXPORT_COLUMNS", "FORMATS", "UNSURE_TEXT", "ConsensusExport", "consensus_export", "export_rows",
    "export_table", "format_bytes", "format_rows", "neutralise_cell", "restore_cell", "write_export",
]

#: The five columns of the older label rows (value 1 or 0), still read and written.
COLUMNS: tuple[str, ...] = ("annotator", "unit_kind", "unit_id", "dimension", "value")
#: The columns of an export people can use alone (see the module docstring).
EXPORT_COLUMNS: tuple[str, ...] = ("case_id", "response_id", "unit_kind", "unit_id", "text", "dimension", "value",
                                   "comment", "annotator", "time")
FORMATS: tuple[str, ...] = ("csv", "jsonl", "parquet")
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r", "'")
#: How an unsure answer is written in a label table (and read back, in any case).
UNSURE_TEXT = "unsure"


def _value_text(value: int) -> str:
    return UNSURE_TEXT if value == UNSURE else str(int(value))


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
