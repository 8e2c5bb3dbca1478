"""Failure-mode tags in the label tables of ``labels export`` / ``labels import`` (issue 24.6).

A tag set is one row with ``dimension`` ``tags`` and ``value`` the tag names
as typed, separated by single spaces (``hallucination vague``), beside the
unit's label rows (the unit's comment repeated on it like on them).  The
import reads such a row back as the whole set of that annotator on that unit
(:meth:`LabelStore.set_tags` semantics; imports never clear a set), in the
same transaction as the file's labels and comments.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..model import Unit
from .checks import RESERVED_ANNOTATORS, TAGS_DIMENSION
from .errors import InvalidLabelError
from .tags import check_tag_set

__all__ = ["parse_tag_cell", "tag_table_rows"]


def tag_table_rows(store: Any, catalog: Mapping[str, Unit] | None, annotator: str | None, said: Mapping[Any, Any],
                   row: Callable[..., dict[str, str]]) -> list[dict[str, str]]:
    """The ``tags`` rows of ``labels export``: current sets (raw names) of people on units of ``catalog``
    (all units without one; a set on changed text is left out like a stale label)."""
    out = []
    for t in store.tags(annotator=annotator):
        if t.annotator in RESERVED_ANNOTATORS:
            continue
        unit = catalog.get(t.unit_id) if catalog is not None else None
        if catalog is not None and (unit is None or unit.text_hash != t.text_hash):
            continue
        mine = said.get((t.annotator, t.unit_id))
        out.append(row(unit, t.unit_kind, t.unit_id, t.case_id, TAGS_DIMENSION, " ".join(t.raw_tags),
                       mine.text if mine else "", t.annotator, t.created_at))
    return out


def parse_tag_cell(raw: Any, reasons: list[str]) -> tuple[str, ...]:
    """The tag names of a ``tags`` row's value (space- or comma-separated); problems appended to ``reasons``."""
    if not isinstance(raw, str) or not raw.strip():
        reasons.append("a tags row needs the tag names in value (separated by spaces)")
        return ()
    try:
        return check_tag_set(raw.replace(",", " ").split())
    except InvalidLabelError as exc:
        reasons.append(str(exc))
        return ()
