"""Agreement between the room's annotators, per dimension, over yes/no answers (unsure ones left out).

* :func:`pair_kappa` — Cohen's kappa of two annotators on the units both labelled.
* :func:`dimension_agreement` — every pair's kappa, Fleiss' kappa and Krippendorff's alpha over units with two
  or more labels, all from :mod:`playground.stats`.
* :func:`update_agreement` — the same after a change, computing again only the pairs of the annotators who
  changed (Fleiss and Krippendorff always).
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from ..stats import AgreementStat, cohens_kappa_table, fleiss_kappa, krippendorff_alpha
from .room_state import RoomState

__all__ = ["DimensionAgreement", "PairKappa", "dimension_agreement", "group_agreement", "pair_kappa",
           "update_agreement"]


@dataclass(frozen=True)
class PairKappa:
    """Two annotators on the units both labelled: ``n_shared``, percent agreement, Cohen's kappa and interval."""

    annotator_a: str
    annotator_b: str
    n_shared: int
    agreement: float | None
    kappa: float | None
    low: float | None
    high: float | None
    reason: str


@dataclass(frozen=True)
class DimensionAgreement:
    """Agreement between annotators on one dimension (yes/no answers; see the module docstring)."""

    dimension: str
    annotators: tuple[str, ...]
    n_items: int
    n_shared: int
    pairs: tuple[PairKappa, ...]
    fleiss: float | None
    fleiss_reason: str
    krippendorff: float | None
    krippendorff_reason: str


def pair_kappa(a: str, b: str, items_a: Mapping[str, int], items_b: Mapping[str, int]) -> PairKappa | None:
    """Cohen's kappa of ``a`` and ``b`` on the units both labelled (0/1 answers); None when they share none.
    ``a`` and ``b`` are put in name order.  The 2x2 table is counted directly and handed to
    :func:`playground.stats.cohens_kappa_table` (what :func:`playground.stats.cohens_kappa` does after
    pairing the lists; a room of 30 computes hundreds of pairs per refresh)."""
    if b < a:
        a, b, items_a, items_b = b, a, items_b, items_a
    if len(items_b) < len(items_a):
        small, other, flip = items_b, items_a, True
    else:
        small, other, flip = items_a, items_b, False
    table = [0, 0, 0, 0]  # n_00, n_01, n_10, n_11 with rows a
    for u, v in small.items():
        w = other.get(u)
        if w is not None:
            table[2 * (w if flip else v) + (v if flip else w)] += 1
    n = sum(table)
    if not n:
        return None
    k = cohens_kappa_table(((table[0], table[1]), (table[2], table[3])))
    return PairKappa(a, b, n, k.agreement, k.kappa, k.low, k.high, k.reason or k.note)


def group_agreement(by: Mapping[str, Mapping[str, int]]) -> tuple[AgreementStat, AgreementStat, int, int]:
    """``(fleiss, krippendorff, n_items, n_shared)`` of ``{annotator: {unit_id: 0/1}}``
    (:func:`playground.stats.fleiss_kappa`, :func:`playground.stats.krippendorff_alpha`)."""
    names = sorted(by)
    units = sorted({u for items in by.values() for u in items})
    ratings = [[by[a][u] for a in names if u in by[a]] for u in units]
    reliability: list[list[int | None]] = [[by[a].get(u) for u in units] for a in names]
    return (fleiss_kappa(ratings), krippendorff_alpha(reliability), len(units),
            sum(1 for r in ratings if len(r) >= 2))


def _per_unit(state: RoomState, dimension: str) -> dict[str, dict[str, int]]:
    return {a: {u: v for (u, _d), v in items.items()} for a, items in state.by_annotator(dimension).items()}


def _assemble(dimension: str, by: Mapping[str, Mapping[str, int]], pairs: Iterable[PairKappa]) -> DimensionAgreement:
    fleiss, alpha, n_items, n_shared = group_agreement(by)
    return DimensionAgreement(dimension, tuple(sorted(by)), n_items, n_shared,
                              tuple(sorted(pairs, key=lambda p: (p.annotator_a, p.annotator_b))),
                              fleiss.value, fleiss.reason or fleiss.note, alpha.value, alpha.reason)


def dimension_agreement(state: RoomState, dimension: str) -> DimensionAgreement:
    """Pairwise Cohen's kappa, Fleiss' kappa and Krippendorff's alpha on ``dimension``, from scratch.

    Items are units; only yes/no answers count.  ``n_shared`` counts units
    with two or more labels.  Pairs with no shared unit are left out; a pair
    whose kappa is undefined keeps its row with the reason.
    """
    by = _per_unit(state, dimension)
    names = sorted(by)
    pairs = [p for i, a in enumerate(names) for b in names[i + 1:]
             if (p := pair_kappa(a, b, by[a], by[b])) is not None]
    return _assemble(dimension, by, pairs)


def update_agreement(state: RoomState, dimension: str, previous: DimensionAgreement | None,
                     changed: set[str] | None) -> DimensionAgreement:
    """:func:`dimension_agreement` again after the answers of ``changed`` annotators changed (None: all):
    only the pairs that involve one of them are computed again; Fleiss and Krippendorff always."""
    if previous is None or changed is None:
        return dimension_agreement(state, dimension)
    by = _per_unit(state, dimension)
    kept = {(p.annotator_a, p.annotator_b): p for p in previous.pairs
            if p.annotator_a not in changed and p.annotator_b not in changed
            and p.annotator_a in by and p.annotator_b in by}
    for a in sorted(changed & by.keys()):
        for b in by:
            key = (min(a, b), max(a, b))
            if a != b and key not in kept and (p := pair_kappa(a, b, by[a], by[b])) is not None:
                kept[key] = p
    return _assemble(dimension, by, kept.values())
