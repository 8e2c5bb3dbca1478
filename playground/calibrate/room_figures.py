"""The room's figures other than agreement, pure functions of a :class:`~.room_state.RoomState`.

* :func:`annotator_progress` — per annotator: (unit, dimension) pairs answered (yes, no or unsure), units with
  every dimension answered, against their assignment queue when there is one, else against every unit of the
  dataset.  Names with no answer and the reserved names are never listed.
* :func:`key_accuracy` — each annotator against the answer key
  (:func:`playground.calibrate.accuracy_against_key`).
* :func:`teaching_moments` — (unit, dimension) pairs with at least one yes and one no, most divided first: by
  ``min(yes, no) / (yes + no)`` (a tie is 0.5, the most), then by more votes, then unit id and dimension;
  settled ones (adjudicated) after every open one; each with its vote split (:func:`vote_split`).
* :func:`unit_notes` — units with unsure answers or comments (most unsure first).
* :func:`sample_coverage` — how far a calibration sample is labelled, and its labelled prefix.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..model import DIMENSIONS, UNIT_DIMENSIONS, Unit
from ..store import RESERVED_ANNOTATORS, UNSURE
from .annotators import accuracy_against_key
from .labellings import HumanLabelling
from .room_state import Adjudication, RoomState, UnitComment

__all__ = ["AnnotatorProgress", "TeachingMoment", "UnitNote", "annotator_progress", "key_accuracy",
           "sample_coverage", "teaching_moments", "unit_notes", "vote_split"]


@dataclass(frozen=True)
class AnnotatorProgress:
    """One annotator's progress: ``answered`` (unit, dimension) pairs (``unsure`` of them unsure), ``units_done``
    units with every dimension answered out of ``units_total`` (their queue's, or the dataset's)."""

    annotator: str
    answered: int
    unsure: int
    units_done: int
    units_total: int
    queued: bool
    #: unsure answers per dimension, ``(dimension, count)`` in dimension order (dimensions with none left out)
    unsure_by_dimension: tuple[tuple[str, int], ...] = ()

    @property
    def fraction(self) -> float:
        return self.units_done / self.units_total if self.units_total else 0.0


def _dims(unit: Unit) -> tuple[str, ...]:
    return tuple(d for d in unit.dimensions if d in UNIT_DIMENSIONS.get(unit.unit_kind, DIMENSIONS))


def annotator_progress(state: RoomState, catalog: Mapping[str, Unit],
                       queues: Mapping[str, Sequence[str]] | None = None) -> list[AnnotatorProgress]:
    """Per annotator with at least one answer (reserved names never), sorted by name.

    A unit is done for an annotator when they answered each of its dimensions
    (unsure counts as an answer).  With a queue for the annotator the units
    are those of the queue (``queued``), otherwise every unit of ``catalog``;
    ``answered`` and ``unsure`` count all their answers on units of ``catalog``.
    """
    answered: dict[str, dict[str, set[str]]] = {}
    unsure: dict[str, dict[str, int]] = {}
    for (u, d), by in state.votes.items():
        if u not in catalog:
            continue
        for a, v in by.items():
            answered.setdefault(a, {}).setdefault(u, set()).add(d)
            if v == UNSURE:
                unsure.setdefault(a, {})[d] = unsure.get(a, {}).get(d, 0) + 1
    out = []
    for a in sorted(answered):
        if a in RESERVED_ANNOTATORS:
            continue
        mine = answered[a]
        queue = list((queues or {}).get(a, ()))
        units = [u for u in queue if u in catalog] if queue else list(catalog)
        done = sum(1 for u in units if u in mine and set(_dims(catalog[u])) <= mine[u])
        dims = unsure.get(a, {})
        out.append(AnnotatorProgress(a, sum(len(ds) for ds in mine.values()), sum(dims.values()), done, len(units),
                                     bool(queue), tuple((d, dims[d]) for d in DIMENSIONS if d in dims)))
    return out


def key_accuracy(state: RoomState, key: HumanLabelling | None) -> list[dict[str, Any]]:
    """Each annotator's yes/no answers against the answer key, one row per annotator and dimension
    (``n, correct, accuracy, low, high, kappa``; see :func:`playground.calibrate.accuracy_against_key`)."""
    if key is None or not len(key.frame):
        return []
    frame = accuracy_against_key(state.by_annotator(), key)
    return [dict(r) for r in frame.to_dict("records")]


def vote_split(yes: int, no: int, unsure: int = 0) -> str:
    """``"3 yes · 2 no"``; a tie says so (``"tie: 2 yes · 2 no"``); unsure answers are added (``" · 1 unsure"``)."""
    text = f"{yes} yes · {no} no"
    if yes == no:
        text = "tie: " + text
    return text + (f" · {unsure} unsure" if unsure else "")


@dataclass(frozen=True)
class TeachingMoment:
    """A (unit, dimension) the annotators disagree on, with everything an adjudicator needs."""

    unit_id: str
    dimension: str
    unit_kind: str
    case_id: str
    text: str
    yes: int
    no: int
    unsure: int
    votes: tuple[tuple[str, int], ...]
    comments: tuple[UnitComment, ...]
    adjudication: Adjudication | None

    @property
    def split(self) -> str:
        return vote_split(self.yes, self.no, self.unsure)

    @property
    def status(self) -> str:
        """``adjudicated``, ``tie`` or ``majority``."""
        if self.adjudication is not None:
            return "adjudicated"
        return "tie" if self.yes == self.no else "majority"

    @property
    def consensus(self) -> int | None:
        """The adjudicated value, else the majority (None for an open tie)."""
        if self.adjudication is not None:
            return self.adjudication.value
        return None if self.yes == self.no else int(self.yes > self.no)


def teaching_moments(state: RoomState, catalog: Mapping[str, Unit] | None = None,
                     limit: int | None = None, dimension: str | None = None) -> list[TeachingMoment]:
    """Pairs with at least one yes and one no (of ``dimension`` when given), in the order of the module
    docstring (at most ``limit``)."""
    order = {d: i for i, d in enumerate(DIMENSIONS)}
    found = []
    for (u, d), by in state.votes.items():
        if dimension is not None and d != dimension:
            continue
        yes = sum(1 for v in by.values() if v == 1)
        no = sum(1 for v in by.values() if v == 0)
        if not yes or not no:
            continue
        unit = catalog.get(u) if catalog is not None else None
        found.append(TeachingMoment(
            u, d, unit.unit_kind if unit else "", unit.case_id if unit else "", unit.text if unit else "",
            yes, no, len(by) - yes - no, tuple(sorted(by.items())), state.comments.get(u, ()),
            state.adjudications.get((u, d))))
    found.sort(key=lambda m: (m.adjudication is not None, -min(m.yes, m.no) / (m.yes + m.no), -(m.yes + m.no),
                              m.unit_id, order.get(m.dimension, len(order)), m.dimension))
    return found if limit is None else found[:limit]


@dataclass(frozen=True)
class UnitNote:
    """A unit with unsure answers or comments: ``unsure`` per dimension (``(dimension, count)``, in
    dimension order) and every comment."""

    unit_id: str
    unit_kind: str
    case_id: str
    text: str
    unsure: tuple[tuple[str, int], ...]
    comments: tuple[UnitComment, ...]

    @property
    def unsure_total(self) -> int:
        return sum(n for _d, n in self.unsure)


def unit_notes(state: RoomState, catalog: Mapping[str, Unit] | None = None,
               limit: int | None = None) -> list[UnitNote]:
    """Units with at least one unsure answer or comment: most unsure answers first, then most comments,
    then unit id (at most ``limit``)."""
    order = {d: i for i, d in enumerate(DIMENSIONS)}
    unsure: dict[str, dict[str, int]] = {}
    for (u, d), by in state.votes.items():
        n = sum(1 for v in by.values() if v == UNSURE)
        if n:
            unsure.setdefault(u, {})[d] = n
    out = []
    for u in set(unsure) | {u for u, cs in state.comments.items() if cs}:
        unit = catalog.get(u) if catalog is not None else None
        dims = tuple(sorted(unsure.get(u, {}).items(), key=lambda kv: (order.get(kv[0], len(order)), kv[0])))
        out.append(UnitNote(u, unit.unit_kind if unit else "", unit.case_id if unit else "", unit.text if unit else "",
                            dims, state.comments.get(u, ())))
    out.sort(key=lambda n: (-n.unsure_total, -len(n.comments), n.unit_id))
    return out if limit is None else out[:limit]


def sample_coverage(state: RoomState, units: Sequence[str]) -> tuple[int, int]:
    """``(labelled, prefix)`` of a calibration sample in its ranked order: units with at least one yes/no
    answer, and the length of the longest run of such units from the start of the ranking."""
    answered = {u for (u, _d), by in state.votes.items() if any(v != UNSURE for v in by.values())}
    prefix = 0
    for u in units:
        if u not in answered:
            break
        prefix += 1
    return sum(1 for u in units if u in answered), prefix
