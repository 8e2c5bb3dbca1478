"""The room's picture of the label store: current answers, adjudications and comments (:class:`RoomState`).

Answers are plain rows ``(annotator, unit_id, dimension, value)`` (:class:`LabelRow`; value 1, 0 or
:data:`~playground.store.UNSURE`).  The reserved names (``consensus``, ``harness``) never enter the picture;
``RoomState.changed`` remembers whose answers on which dimension moved, so that only their pairs are
computed again (:func:`playground.calibrate.room_agreement.update_agreement`).
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from ..store import RESERVED_ANNOTATORS, UNSURE

__all__ = ["Adjudication", "LabelRow", "RoomState", "UnitComment"]


@dataclass(frozen=True)
class LabelRow:
    """One current answer: ``value`` is 1 (yes), 0 (no) or :data:`UNSURE`."""

    annotator: str
    unit_id: str
    dimension: str
    value: int


@dataclass(frozen=True)
class Adjudication:
    """The settled value of a (unit, dimension) and who settled it."""

    value: int
    adjudicator: str | None = None


@dataclass(frozen=True)
class UnitComment:
    annotator: str
    text: str


@dataclass
class RoomState:
    """The room's picture of the store: current answers, adjudications and comments.

    ``votes[(unit_id, dimension)][annotator]`` is 1, 0 or :data:`UNSURE`;
    ``changed[dimension]`` holds the annotators whose answers on it changed
    since the figures were last computed (so only their pairs are computed again).
    """

    votes: dict[tuple[str, str], dict[str, int]] = field(default_factory=dict)
    adjudications: dict[tuple[str, str], Adjudication] = field(default_factory=dict)
    comments: dict[str, tuple[UnitComment, ...]] = field(default_factory=dict)
    last_event_id: int = 0
    changed: dict[str, set[str]] = field(default_factory=dict)
    #: events on response verdicts, notes or failure-mode tags seen so far (the failure-mode counts are
    #: computed again only when this moved)
    verdict_events: int = 0

    @classmethod
    def from_rows(cls, rows: Iterable[LabelRow]) -> RoomState:
        state = cls()
        for r in rows:
            state.set_vote(r.annotator, r.unit_id, r.dimension, r.value)
        return state

    def set_vote(self, annotator: str, unit_id: str, dimension: str, value: int | None) -> None:
        """Record ``annotator``'s current answer (``None``: no answer); reserved names are ignored."""
        if annotator in RESERVED_ANNOTATORS:
            return
        key = (unit_id, dimension)
        current = self.votes.get(key, {})
        if current.get(annotator) == value:
            return
        if value is None:
            if annotator not in current:
                return
            del current[annotator]
            if not current:
                del self.votes[key]
        else:
            if value not in (0, 1, UNSURE):
                raise ValueError(f"{annotator}: {unit_id} {dimension}: answer must be 1, 0 or unsure, got {value!r}")
            self.votes.setdefault(key, current)[annotator] = int(value)
        self.changed.setdefault(dimension, set()).add(annotator)

    def rows(self) -> list[LabelRow]:
        return [LabelRow(a, u, d, v) for (u, d), by in sorted(self.votes.items()) for a, v in sorted(by.items())]

    def annotators(self) -> list[str]:
        """Everyone with at least one answer, sorted."""
        return sorted({a for by in self.votes.values() for a in by})

    def by_annotator(self, dimension: str | None = None) -> dict[str, dict[tuple[str, str], int]]:
        """``{annotator: {(unit_id, dimension): 0/1}}`` over yes/no answers (unsure left out)."""
        out: dict[str, dict[tuple[str, str], int]] = {}
        for (u, d), by in self.votes.items():
            if dimension is not None and d != dimension:
                continue
            for a, v in by.items():
                if v != UNSURE:
                    out.setdefault(a, {})[(u, d)] = v
        return out
