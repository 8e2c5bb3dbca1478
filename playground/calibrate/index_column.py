"""A pandas index column in a scorer's result table: recognised and skipped, not read as a metric.

``DataFrame.to_csv(path)`` writes the frame's index as a first column with an empty name; read back with
``pandas.read_csv`` and saved again it is called ``Unnamed: 0`` (after a new ``''``); pyarrow names an
unnamed index it stores ``__index_level_0__``.  The rule: a **leading** column (the first, or one right
after another such) named one of :data:`INDEX_NAMES` whose values are exactly the integers
``0, 1, …, n − 1`` in row order (as numbers, or as the digits a CSV cell holds) is an index column.  Any
other column keeps its meaning, and an error about it quotes its name (:func:`quoted`, ``''`` when empty).
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["INDEX_NAMES", "index_columns", "quoted"]

#: The names a pandas index column gets in a saved table.
INDEX_NAMES = ("", "Unnamed: 0", "__index_level_0__")


def _is_position(value: Any, i: int) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return value == i
    if isinstance(value, float):
        return value == i and value.is_integer()
    return isinstance(value, str) and value.strip() == str(i)


def index_columns(columns: Sequence[str], rows: Sequence[dict[str, Any]]) -> tuple[str, ...]:
    """The table's pandas index columns (module docstring): the leading run of them, ``()`` when none.

    A table read with ``read_csv`` and saved again with ``to_csv`` starts ``'', 'Unnamed: 0'``: two of them.
    """
    found: list[str] = []
    for name in columns:
        if name not in INDEX_NAMES or name in found or not rows:
            break
        if not all(_is_position(row.get(name), i) for i, row in enumerate(rows)):
            break
        found.append(name)
    return tuple(found)


def quoted(columns: Sequence[str]) -> str:
    """Column names for an error: each quoted, so an empty one shows as ``''``."""
    return ", ".join(repr(c) for c in columns)
