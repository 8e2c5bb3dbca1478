"""The bounds of one import, re-exported from :mod:`playground.limits` (floor 0, so the store may use them).

The old import path ``playground.importers.limits`` keeps working for every caller.
"""
from __future__ import annotations

from ..limits import (
    MAX_CELL_CHARS,
    MAX_DEPTH,
    MAX_FILE_BYTES,
    MAX_LABEL_ROWS,
    MAX_ROWS,
    LimitExceeded,
    bounded_lines,
    check_file,
    check_text,
    check_value,
    describe,
    too_many_rows,
)

__all__ = ["MAX_CELL_CHARS", "MAX_DEPTH", "MAX_FILE_BYTES", "MAX_LABEL_ROWS", "MAX_ROWS", "LimitExceeded",
           "bounded_lines", "check_file", "check_text", "check_value", "describe", "too_many_rows"]
