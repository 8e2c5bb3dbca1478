"""The bounds of one import: what a file may hold before it is refused, with one line saying which bound.

=====================  =====================================================  ==============================
bound                  rule                                                   refused as
=====================  =====================================================  ==============================
a regular file         FIFOs, devices, sockets and folders are refused         ``not a regular file``
                       before they are opened (opening a FIFO would wait
                       for a writer forever)
:data:`MAX_FILE_BYTES`  a JSONL / JSON / CSV file's size on disk; a Parquet     ``larger than the limit``
                       file's text once read (its strings, however well
                       compressed or dictionary-encoded on disk)
:data:`MAX_ROWS`        samples (rows, lines, items) per file; a Parquet      ``more rows than the limit``
                       file's count is read from its footer first;
                       :data:`MAX_LABEL_ROWS` rows of a label table
:data:`MAX_CELL_CHARS`  characters in one cell (one string value)             ``a cell longer than the limit``
:data:`MAX_DEPTH`       nesting of lists and objects inside one row           ``nested deeper than the limit``
=====================  =====================================================  ==============================

Each check runs before the next part of the file is held in memory, so an
import holds at most about :data:`MAX_FILE_BYTES` of text (plus Python's
overhead) whatever the file claims.  The figures suit a dataset people label
by hand: 200,000 samples is 20 times the 10,000 the benchmarks import.
"""
from __future__ import annotations

import os
import stat
from typing import Any

__all__ = ["MAX_CELL_CHARS", "MAX_DEPTH", "MAX_FILE_BYTES", "MAX_LABEL_ROWS", "MAX_ROWS", "LimitExceeded",
           "check_file", "check_value", "describe", "too_many_rows"]

MAX_FILE_BYTES = 256 * 1024 * 1024
MAX_ROWS = 200_000
MAX_CELL_CHARS = 1_000_000
MAX_DEPTH = 32
#: Rows of a label table (``labels import``, ``import ... --labels``): a label per row, so more than samples.
MAX_LABEL_ROWS = 1_000_000


class LimitExceeded(ValueError):
    """An input beyond one of the documented bounds (the message names it and the limit)."""


def describe() -> str:
    """The bounds in one line (for help texts and errors)."""
    return (f"at most {MAX_FILE_BYTES // (1024 * 1024)} MiB of text, {MAX_ROWS:,} rows, {MAX_CELL_CHARS:,} "
            f"characters per cell and {MAX_DEPTH} levels of nesting per file")


def check_file(path: str | os.PathLike[str], *, text: bool = True) -> int:
    """The size of ``path``, a regular file within :data:`MAX_FILE_BYTES` (``text``); else LimitExceeded/OSError.

    ``os.stat`` does not open the file, so a FIFO is refused without waiting for a writer.
    The message does not name the file (the caller's problem does).
    """
    info = os.stat(path)
    if not stat.S_ISREG(info.st_mode):
        raise LimitExceeded("not a regular file (a pipe, device, socket or folder): give a file")
    if text and info.st_size > MAX_FILE_BYTES:
        raise LimitExceeded(f"{info.st_size:,} bytes, larger than the limit of {MAX_FILE_BYTES:,} bytes "
                            f"({describe()}): split it")
    return info.st_size


def too_many_rows(count: int, limit: int) -> str:
    """The problem of a file with ``count`` rows, more than ``limit`` (:data:`MAX_ROWS`)."""
    return f"{count:,} rows or more, more rows than the limit of {limit:,} ({describe()}): split it"


def check_value(value: Any) -> int:
    """The characters of every string in ``value`` (a parsed row); LimitExceeded beyond a cell or depth bound.

    Walked without recursion, so any depth is measured, not crashed on.  Dict keys count as text too.
    """
    if isinstance(value, str):
        return _check_text(value)
    total = 0
    stack: list[tuple[Any, int]] = [(value, 1)] if isinstance(value, dict | list | tuple) else []
    while stack:
        item, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise LimitExceeded(f"nested deeper than the limit of {MAX_DEPTH} levels")
        if isinstance(item, dict):
            total += sum(_check_text(k) for k in item if isinstance(k, str))
            item = item.values()
        for v in item:
            if isinstance(v, str):
                total += _check_text(v)
            elif isinstance(v, dict | list | tuple):
                stack.append((v, depth + 1))
    return total


def _check_text(text: str) -> int:
    if len(text) > MAX_CELL_CHARS:
        raise LimitExceeded(f"a cell of {len(text):,} characters, longer than the limit of {MAX_CELL_CHARS:,}")
    return len(text)
