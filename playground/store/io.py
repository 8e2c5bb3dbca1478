"""Export and import of labels: CSV, JSONL and Parquet tables, golden-set YAML, store-to-store copies.

An export people can use on their own is :func:`export_table` (its columns, sort order and the CSV
formula guard are described in :mod:`.exports`).

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
