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

This module is the face of the three parts that do it: :mod:`.exports` (rows
and formats), :mod:`.label_files` (reading, validating and importing label
files) and :mod:`.golden_export` (the golden-set YAML); it adds the
store-to-store copy (:func:`migrate_store`).
"""
from __future__ import annotations

import os

from .core import open_store
from .exports import (
    COLUMNS,
    EXPORT_COLUMNS,
    FORMATS,
    ConsensusExport,
    consensus_export,
    export_rows,
    export_table,
    format_bytes,
    format_rows,
    neutralise_cell,
    restore_cell,
    write_export,
)
from .golden_export import GoldenExport, export_golden
from .label_files import ParsedFile, detect_format, import_file, validate_file

__all__ = [
    "COLUMNS", "EXPORT_COLUMNS", "FORMATS", "ConsensusExport", "GoldenExport", "ParsedFile", "consensus_export",
    "detect_format", "export_golden", "export_rows", "export_table", "format_bytes", "format_rows", "import_file",
    "migrate_store", "neutralise_cell", "restore_cell", "validate_file", "write_export",
]

# --- store to store -----------------------------------------------------------------------------------


def migrate_store(source_url: str | os.PathLike[str], target_url: str | os.PathLike[str]) -> dict[str, int]:
    """Copy the store at ``source_url`` into a new or empty store at ``target_url``, exactly.

    Annotators, every event and every current label keep their ids and
    timestamps; the copy is verified table by table.  The source is opened
    normally, so an older-schema source is migrated forward in place first.
    """
    with open_store(source_url, create=False) as source, open_store(target_url) as target:
        return target.copy_from(source)
