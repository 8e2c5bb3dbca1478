"""The four evaluation dimensions and their rates: each a proportion over *labelled* units only, with
its Wilson interval; counted from labels at once (:func:`rates_from_labels`) or one label change at a
time (:class:`RateCounter`).
"""
from __future__ import annotations

import numbers
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from playground.model import DIMENSION_NAMES
from playground.stats import (
    wilson_interval,
)

__all__ = [
    "CAUSES",
    "COMPOSITE_LABEL",
    "DEFAULT_THRESHOLDS",
    "DIMENSION_LABELS",
    "DIMENSION_ORDER",
    "LABEL_DIMENSION",
    "DimensionRate",
    "RateCounter",
    "rate_from_counts",
    "rates_by_group",
    "rates_from_labels",
]

#: The four evaluation dimensions, in the order every output lists them.
DIMENSION_ORDER: tuple[str, ...] = ("context_relevance", "faithfulness", "correctness", "coverage")
#: Human-readable names, for text.
DIMENSION_LABELS: dict[str, str] = {
    "context_relevance": "context relevance",
    "faithfulness": "faithfulness",
    "correctness": "correctness",
    "coverage": "coverage",
}
#: Evaluation dimension -> the label dimension that feeds it (inverse of model.DIMENSION_NAMES).
LABEL_DIMENSION: dict[str, str] = {v: k for k, v in DIMENSION_NAMES.items()}
#: Plain-language cause of a low rate, per dimension.
CAUSES: dict[str, str] = {
    "context_relevance": "poor evidence retrieval",
    "faithfulness": "unsupported generation",
    "correctness": "incorrect answer",
    "coverage": "missing reference facts",
}
#: Teaching thresholds of the diagnosis: a rate below its threshold fails.
DEFAULT_THRESHOLDS: dict[str, float] = {
    "context_relevance": 0.50,
    "faithfulness": 0.70,
    "correctness": 0.70,
    "coverage": 0.70,
}
COMPOSITE_LABEL = "weighted composite (not a standard score)"

# label dimension ("relevant") -> position in DIMENSION_ORDER
_LABEL_INDEX: dict[str, int] = {
    label_dim: DIMENSION_ORDER.index(dim) for label_dim, dim in DIMENSION_NAMES.items()
}
assert set(_LABEL_INDEX.values()) == {0, 1, 2, 3}


# --------------------------------------------------------------------------- rates


@dataclass(frozen=True)
class DimensionRate:
    """One dimension's rate: ``successes / n`` with its Wilson interval.

    ``rate``, ``low`` and ``high`` are None when ``n == 0`` (no data).
    """

    dimension: str
    successes: int
    n: int
    rate: float | None
    low: float | None
    high: float | None
    confidence: float = 0.95

    @property
    def has_data(self) -> bool:
        return self.n > 0


def rate_from_counts(dimension: str, successes: int, n: int,
                     confidence: float = 0.95) -> DimensionRate:
    """A :class:`DimensionRate` from counts: ``rate = successes / n``, Wilson ``(low, high)``."""
    if dimension not in DIMENSION_ORDER:
        raise ValueError(f"unknown dimension {dimension!r}; expected one of {DIMENSION_ORDER}")
    ci = wilson_interval(successes, n, confidence)
    if ci is None:
        return DimensionRate(dimension, 0, 0, None, None, None, confidence)
    return DimensionRate(dimension, successes, n, successes / n, ci[0], ci[1], confidence)


def _label_index(dimension: Any) -> int:
    try:
        return _LABEL_INDEX[dimension]
    except (KeyError, TypeError):
        raise ValueError(
            f"unknown label dimension {dimension!r}; expected one of {tuple(_LABEL_INDEX)}"
        ) from None


def _label_value(value: Any, where: str) -> int:
    if isinstance(value, bool) or (isinstance(value, numbers.Real) and value in (0, 1)):
        return int(value)  # type: ignore[arg-type]
    raise ValueError(f"{where}: label value must be 0 or 1, got {value!r}")


def _counts_to_rates(succ: Sequence[int], n: Sequence[int], confidence: float
                     ) -> dict[str, DimensionRate]:
    return {dim: rate_from_counts(dim, succ[i], n[i], confidence)
            for i, dim in enumerate(DIMENSION_ORDER)}


def _count_labels(labels: Iterable[Any], group_of: Callable[[Any], Hashable] | None) -> dict[Any, list[int]]:
    counts: dict[Any, list[int]] = {}
    seen: set[tuple[Any, str]] = set()
    for label in labels:
        idx = _label_index(label.dimension)
        unit_id = getattr(label, "unit_id", None)
        value = _label_value(label.value, f"unit {unit_id!r} {label.dimension!r}")
        if unit_id is not None:
            key = (unit_id, label.dimension)
            if key in seen:
                raise ValueError(
                    f"two labels for unit {unit_id!r} on {label.dimension!r}: rates assume one "
                    f"label per unit and dimension (pass one annotator's labels)")
            seen.add(key)
        group = None if group_of is None else group_of(label)
        c = counts.get(group)
        if c is None:
            c = counts[group] = [0] * 8  # successes x4, n x4
        c[idx] += value
        c[4 + idx] += 1
    return counts


def rates_from_labels(labels: Iterable[Any], confidence: float = 0.95) -> dict[str, DimensionRate]:
    """The four rates, pooled over ``labels`` (e.g. a selection of cases).

    ``labels`` are :class:`playground.model.Label` (or anything with
    ``.dimension`` in ``relevant/supported/correct/covered`` and ``.value`` in
    {0, 1}).  For each dimension ``rate = sum(value) / count(labels)`` with a
    Wilson interval.  All four keys are always present, in
    :data:`DIMENSION_ORDER`; a dimension without labels has ``n == 0`` and
    ``rate is None``.  Raises ValueError on an unknown dimension, a value not
    in {0, 1}, or (for labels with a ``unit_id``) two labels of the same unit
    and dimension, which would count one unit twice.
    """
    c = _count_labels(labels, None).get(None, [0] * 8)
    return _counts_to_rates(c[:4], c[4:], confidence)


def rates_by_group(labels: Iterable[Any], group_of: Callable[[Any], Hashable],
                   confidence: float = 0.95) -> dict[Any, dict[str, DimensionRate]]:
    """The four rates per group (``group_of(label)``: a case id, a case type ...).

    Returns ``{group: {dimension: DimensionRate}}`` sorted by group key; only
    groups with at least one label appear.  Pooled rates are
    :func:`rates_from_labels` over the same labels (pooling counts units, so a
    case with many claims weighs more than one with few: a micro-average).
    """
    counts = _count_labels(labels, group_of)
    return {g: _counts_to_rates(c[:4], c[4:], confidence)
            for g, c in sorted(counts.items(), key=lambda kv: _sort_key(kv[0]))}


def _sort_key(value: Any) -> tuple[str, Any]:
    # Sort like-typed keys naturally; mixed types by type name first (deterministic).
    return (type(value).__name__, value) if value is not None else ("", "")


class RateCounter:
    """Incremental counts of the four dimensions, for live recomputation.

    ``set(unit_id, dimension, value)`` records, changes or (``value=None``)
    removes one label in O(1); ``rates()`` turns the counts into four
    :class:`DimensionRate` (four Wilson calls, cached by ``(successes, n)``).
    With ``group_of_unit`` (a mapping or callable unit id -> group, e.g. case id
    or case type) the counts are also kept per group: ``rates(group=...)``.
    A group nobody labelled yet returns four "no data" rates.
    """

    def __init__(self, group_of_unit: Mapping[Hashable, Hashable] | Callable[[Hashable], Hashable] | None = None,
                 confidence: float = 0.95) -> None:
        if group_of_unit is None or callable(group_of_unit):
            self._group_fn = group_of_unit
        else:
            mapping = group_of_unit

            def lookup(unit_id: Hashable) -> Hashable:
                try:
                    return mapping[unit_id]
                except KeyError:
                    raise ValueError(f"unit {unit_id!r} has no group") from None
            self._group_fn = lookup
        self.confidence = confidence
        self._values: dict[tuple[Hashable, int], tuple[int, Hashable]] = {}
        self._total = [0] * 8
        self._groups: dict[Hashable, list[int]] = {}

    @classmethod
    def from_labels(cls, labels: Iterable[Any], group_of_unit: Any = None,
                    confidence: float = 0.95) -> RateCounter:
        """A counter loaded with ``labels`` (a later label of a unit replaces an earlier one)."""
        counter = cls(group_of_unit, confidence)
        for label in labels:
            counter.set(label.unit_id, label.dimension, label.value)
        return counter

    def set(self, unit_id: Hashable, dimension: str, value: int | None) -> None:
        """Record ``value`` (0/1) for ``(unit_id, dimension)``; ``None`` removes the label."""
        idx = _label_index(dimension)
        key = (unit_id, idx)
        old = self._values.get(key)
        if value is not None:
            value = _label_value(value, f"unit {unit_id!r} {dimension!r}")
        if old is not None:
            old_value, group = old
            if value == old_value:
                return
            self._add(group, idx, old_value, -1)
            if value is None:
                del self._values[key]
                return
        elif value is None:
            return
        else:
            group = None if self._group_fn is None else self._group_fn(unit_id)
        self._values[key] = (value, group)
        self._add(group, idx, value, +1)

    def _add(self, group: Hashable, idx: int, value: int, sign: int) -> None:
        self._total[idx] += sign * value
        self._total[4 + idx] += sign
        if self._group_fn is not None:
            c = self._groups.get(group)
            if c is None:
                c = self._groups[group] = [0] * 8
            c[idx] += sign * value
            c[4 + idx] += sign

    def get(self, unit_id: Hashable, dimension: str) -> int | None:
        """The recorded value of ``(unit_id, dimension)``, or None."""
        old = self._values.get((unit_id, _label_index(dimension)))
        return None if old is None else old[0]

    def __len__(self) -> int:
        return len(self._values)

    def counts(self, group: Hashable | None = None) -> dict[str, tuple[int, int]]:
        """``{dimension: (successes, n)}`` pooled, or for one group."""
        c = self._counts(group)
        return {dim: (c[i], c[4 + i]) for i, dim in enumerate(DIMENSION_ORDER)}

    def _counts(self, group: Hashable | None) -> list[int]:
        if group is None:
            return self._total
        if self._group_fn is None:
            raise ValueError("this RateCounter has no grouping; pass group_of_unit")
        return self._groups.get(group, [0] * 8)

    def rates(self, group: Hashable | None = None) -> dict[str, DimensionRate]:
        """The four rates with intervals, pooled (``group=None``) or for one group."""
        c = self._counts(group)
        return _counts_to_rates(c[:4], c[4:], self.confidence)

    def groups(self) -> list[Any]:
        """Groups that currently hold at least one label, sorted."""
        return sorted((g for g, c in self._groups.items() if any(c[4:])), key=_sort_key)

    def rates_by_group(self) -> dict[Any, dict[str, DimensionRate]]:
        """``{group: rates}`` for every group with labels, sorted by group."""
        return {g: self.rates(g) for g in self.groups()}
