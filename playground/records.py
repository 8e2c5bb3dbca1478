"""Plain records in, the core's inputs out: what :mod:`playground.api` and ``pg.calibrate`` accept.

A record is a dict (or a DataFrame row, or an object with attributes) with
``unit_id``, ``dimension`` and ``value`` (a person's 0/1) or ``score`` /
``label`` (a scorer's).  ``dimension`` is a label dimension (``relevant``,
``supported``, ``correct``, ``covered``) or the evaluation dimension it feeds
(``context_relevance``, ``faithfulness``, ``correctness``, ``coverage``);
:func:`label_dimension` maps both to the label dimension.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .model import DIMENSION_NAMES

__all__ = ["FIELDS", "TO_LABEL", "label_dimension", "records"]

#: Evaluation dimension ("faithfulness") or label dimension ("supported") → label dimension.
TO_LABEL: dict[str, str] = {**{d: d for d in DIMENSION_NAMES}, **{v: k for k, v in DIMENSION_NAMES.items()}}
#: The attributes read from a record that is an object rather than a mapping.
FIELDS = ("unit_id", "dimension", "value", "score", "label", "unit_kind", "case_id", "response_id")


def records(data: Any) -> list[dict[str, Any]]:
    """Plain records (new dicts) from a DataFrame, an iterable of mappings, or objects with :data:`FIELDS`."""
    if hasattr(data, "to_dict") and hasattr(data, "columns"):
        rows: list[dict[str, Any]] = data.to_dict("records")
        return rows
    return [dict(item) if isinstance(item, Mapping) else {k: getattr(item, k) for k in FIELDS if hasattr(item, k)}
            for item in data]


def label_dimension(record: Mapping[str, Any], where: str) -> str:
    """The label dimension of ``record``; ValueError naming ``where`` and the known names otherwise."""
    dimension = record.get("dimension")
    if not isinstance(dimension, str) or dimension not in TO_LABEL:
        raise ValueError(f"{where}: unknown dimension {dimension!r}; expected one of {', '.join(TO_LABEL)}")
    return TO_LABEL[dimension]
