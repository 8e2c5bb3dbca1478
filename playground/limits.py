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
:data:`MAX_CELL_CHARS`  characters in one cell (one string value)             ``a cell of N characters, longer
                                                                              than the limit``
:data:`MAX_DEPTH`       nesting of lists and objects inside one row           ``nested deeper than the limit``
=====================  =====================================================  ==============================

Every reader applies them (tests/test_import_limits.py, one table): the core
formats (:mod:`playground.importers.core`, :func:`playground.importers.rows.bounded_rows` for Parquet and Arrow
shards), :mod:`playground.importers.ragtruth`, the BEGIN claim file and label tables
(:func:`bounded_lines`), the claim data set file, and :mod:`playground.importers.spans` /
:mod:`playground.importers.traces` (a trace is one sample, counted as the spans stream).  A cell
or nesting error's :attr:`LimitExceeded.field` names where in the row it is
(``contexts[2]``, ``attributes.output.value``), which the problem shows.

Each check runs before the next part of the file is held in memory, so an
import holds at most about :data:`MAX_FILE_BYTES` of text (plus Python's
overhead) whatever the file claims.  The figures suit a dataset people label
by hand: 200,000 samples is 20 times the 10,000 the benchmarks import.
"""
from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Iterator
from typing import Any

__all__ = ["MAX_CELL_CHARS", "MAX_DEPTH", "MAX_FILE_BYTES", "MAX_LABEL_ROWS", "MAX_ROWS", "LimitExceeded",
           "bounded_lines", "check_file", "check_text", "check_value", "describe", "too_many_rows"]

MAX_FILE_BYTES = 256 * 1024 * 1024
MAX_ROWS = 200_000
MAX_CELL_CHARS = 1_000_000
MAX_DEPTH = 32
#: Rows of a label table (``labels import``, ``import ... --labels``): a label per row, so more than samples.
MAX_LABEL_ROWS = 1_000_000


class LimitExceeded(ValueError):
    """An input beyond one of the documented bounds (the message names it and the limit).

    ``field``: where in the row the bound was crossed (``contexts[2]``, ``a.b``), or "" when not one field.
    """

    def __init__(self, message: str, field: str = "") -> None:
        super().__init__(message)
        self.field = field


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
    """The problem of a file with ``count`` rows, more than ``limit`` (:data:`MAX_ROWS`: then the bounds follow)."""
    bounds = f" ({describe()})" if limit == MAX_ROWS else ""
    return f"{count:,} rows or more, more rows than the limit of {limit:,}{bounds}: split it"


def check_value(value: Any) -> int:
    """The characters of every string in ``value`` (a parsed row); LimitExceeded beyond a cell or depth bound.

    Walked without recursion, so any depth is measured, not crashed on.  Dict keys count as text too.
    The error's ``field`` is the path of the cell that crossed the bound (keys joined by ``.``, list
    positions as ``[n]`` from 0), or the row's field holding the nesting that did.
    """
    if isinstance(value, str):
        return check_text(value)
    total = 0
    # (container, depth, path): the path a linked pair (parent path, key), made a string only for an error
    stack: list[tuple[Any, int, Any]] = [(value, 1, None)] if isinstance(value, dict | list | tuple) else []
    while stack:
        item, depth, path = stack.pop()
        if depth > MAX_DEPTH:
            raise LimitExceeded(f"nested deeper than the limit of {MAX_DEPTH} levels", _path(_top(path)))
        pairs = item.items() if isinstance(item, dict) else enumerate(item)
        for k, v in pairs:
            if isinstance(k, str):
                total += check_text(k, (path, k))
            if isinstance(v, str):
                total += check_text(v, (path, k))
            elif isinstance(v, dict | list | tuple):
                stack.append((v, depth + 1, (path, k)))
    return total


def _top(path: Any) -> Any:
    """The first step of a linked path (the row's own field)."""
    while path is not None and path[0] is not None:
        path = path[0]
    return path


def _path(path: Any) -> str:
    """``(((None, "a"), 0), "b")`` → ``a[0].b``."""
    keys: list[Any] = []
    while path is not None:
        path, key = path
        keys.append(key)
    out = ""
    for key in reversed(keys):
        out += f"[{key}]" if isinstance(key, int) else (f".{key}" if out else str(key))
    return out


def check_text(text: str, path: Any = None) -> int:
    """``len(text)``; LimitExceeded (naming the limit; ``field`` the path) beyond :data:`MAX_CELL_CHARS`."""
    if len(text) > MAX_CELL_CHARS:
        raise LimitExceeded(f"a cell of {len(text):,} characters, longer than the limit of {MAX_CELL_CHARS:,}",
                            path if isinstance(path, str) else _path(path))
    return len(text)


def bounded_lines(values: Iterable[tuple[int, Any]], problems: list[tuple[int, str]],
                  limit: int | None = None) -> Iterator[tuple[int, Any]]:
    """The ``(line, value)`` pairs of a file's records (:func:`playground.jsonl.json_lines`) within the bounds.

    A value with a cell or a nesting beyond its limit is a problem ``(line, "field 'f': …")`` and left
    out; the value past ``limit`` (default :data:`MAX_ROWS`) is a problem that ends the lines.
    """
    limit = MAX_ROWS if limit is None else limit
    for seen, (line, value) in enumerate(values, 1):
        if seen > limit:
            problems.append((line, too_many_rows(seen, limit)))
            return
        try:
            check_value(value)
        except LimitExceeded as exc:
            problems.append((line, f"field {exc.field!r}: {exc}" if exc.field else str(exc)))
            continue
        yield line, value
