"""Where an imported record came from, and the record itself: the two types every reader yields.

Kept apart from :mod:`.core` so that readers :mod:`.core` dispatches to (the Hugging Face folder reader) can
use them without an import cycle.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from .. import limits
from ..errors import Problem

__all__ = ["Place", "Row", "bounded_rows"]


@dataclass(frozen=True)
class Place:
    """Where a row is: ``line N``, ``item N`` or ``row N`` of ``file``."""

    file: str
    kind: str
    number: int

    def problem(self, message: str, fieldname: str = "") -> Problem:
        if self.kind == "line":
            where = fieldname
        else:
            where = f"{self.kind} {self.number}" + (f", {fieldname}" if fieldname else "")
        return Problem(self.file, message, where, self.number if self.kind == "line" else None)

    def __str__(self) -> str:
        return f"{self.kind} {self.number}"


@dataclass(frozen=True)
class Row:
    """One record of the input file with its place."""

    place: Place
    data: dict[str, Any]


def bounded_rows(records: Iterable[dict[str, Any]], name: str, problems: list[Problem], limit: int) -> list[Row]:
    """Records (of Parquet, of Arrow shards) as rows ``row 1``, ``row 2``…, each within :mod:`.limits`.

    Counted and checked as they come, so the first bound crossed stops the reading with one problem
    (and no rows): a row past ``limit``; a cell or a nesting beyond its limit (the row and the field
    named); more than :data:`~.limits.MAX_FILE_BYTES` characters of text in all.
    """
    rows: list[Row] = []
    total = 0
    for obj in records:
        place = Place(name, "row", len(rows) + 1)
        if len(rows) >= limit:
            problems.append(Problem(name, limits.too_many_rows(len(rows) + 1, limit)))
            return []
        try:
            total += limits.check_value(obj)
        except limits.LimitExceeded as exc:
            problems.append(place.problem(str(exc), exc.field))
            return []
        if total > limits.MAX_FILE_BYTES:
            problems.append(Problem(name, f"more than {limits.MAX_FILE_BYTES:,} characters of text, larger than "
                                    f"the limit ({limits.describe()}): split it"))
            return []
        rows.append(Row(place, obj))
    return rows
