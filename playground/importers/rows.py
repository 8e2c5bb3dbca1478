"""Where an imported record came from, and the record itself: the two types every reader yields.

Kept apart from :mod:`.core` so that readers :mod:`.core` dispatches to (the Hugging Face folder reader) can
use them without an import cycle.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import Problem

__all__ = ["Place", "Row"]


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
