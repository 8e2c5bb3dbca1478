"""The label store's exceptions: one base class, each subclass with a message a person can act on."""
from __future__ import annotations

__all__ = [
    "InvalidLabelError", "LabelImportError", "ReadOnlyStoreError", "SchemaVersionError", "StoreBusyError",
    "StoreError", "StoreGoneError",
]


class StoreError(Exception):
    """Anything that went wrong in the label store; the message is meant for the person at the UI."""


class StoreBusyError(StoreError):
    """The store stayed busy (locked by other writers) through every bounded retry; nothing was written."""


class SchemaVersionError(StoreError):
    """The store was written by a newer version of the playground than this code can read."""

    def __init__(self, found: int, supported: int):
        self.found = found
        self.supported = supported
        super().__init__(
            f"this label store was written by a newer version (schema {found}); "
            f"this code reads up to {supported} — upgrade the playground"
        )


class StoreGoneError(StoreError):
    """The SQLite file was deleted or replaced (another inode or device) since the store was opened.

    Raised by the next write, before anything is written: the open connection
    would otherwise write into a file nobody will read again.  Reopen the store.
    """


class ReadOnlyStoreError(StoreError):
    """A write was attempted on a store opened with ``read_only=True``."""


class InvalidLabelError(StoreError, ValueError):
    """A label argument is invalid (unknown dimension, value not 0/1/None, empty annotator, ...)."""


class LabelImportError(ValueError):
    """An import was rejected; nothing was written.

    ``problems`` lists every bad row as ``(row_number, reason)``: for CSV the
    1-based number of the data row (the header is row 0, so a missing column
    is reported on row 0), for JSONL the 1-based line number in the file (a
    file-level problem is reported on row 0).
    """

    def __init__(self, problems: list[tuple[int, str]], source: str = ""):
        self.problems = sorted(problems, key=lambda p: p[0])
        self.source = source
        super().__init__(self.report())

    def report(self) -> str:
        where = f" {self.source}" if self.source else ""
        head = f"import{where} rejected, nothing was written: {len(self.problems)} problem(s)"
        return "\n".join([head] + [f"  row {n}: {reason}" for n, reason in self.problems])
