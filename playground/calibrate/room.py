"""The instructor's room, without widgets: who labelled what, how far they agree, where they disagree.

The room keeps one picture of the label store (:class:`RoomState`) and
updates it from the event log: :meth:`RoomStore.poll` reads only the events
after the last one it saw (``store.events(after=...)``), so a refresh every
few seconds costs one indexed query when nothing happened.  Every figure is a
pure function of that picture over plain label rows
``(annotator, unit_id, dimension, value)``, so it can be checked by hand:

* :func:`annotator_progress` — per annotator: (unit, dimension) pairs answered
  (yes, no or unsure), units with every dimension answered, against their
  assignment queue when there is one, else against every unit of the dataset.
  Names with no answer and the reserved names (``consensus``, ``harness``) are
  never listed.
* :func:`dimension_agreement` — per dimension, over yes/no answers (unsure
  ones left out): pairwise Cohen's kappa on the units both annotators labelled,
  Fleiss' kappa and Krippendorff's alpha over units with two or more labels,
  all from :mod:`playground.stats`.  After a change only the pairs of the
  annotators who changed are computed again (:func:`update_agreement`).
* :func:`key_accuracy` — each annotator against the answer key
  (:func:`playground.calibrate.accuracy_against_key`).
* :func:`teaching_moments` — (unit, dimension) pairs with at least one yes and
  one no, most divided first: by ``min(yes, no) / (yes + no)`` (a tie is 0.5,
  the most), then by more votes, then unit id and dimension; settled ones
  (adjudicated) after every open one.  Each carries its vote split
  (``"3 yes · 2 no"``, a tie ``"tie: 2 yes · 2 no"``), its unsure answers and
  its comments.
* :func:`unit_notes` — units with unsure answers or comments, for whoever
  adjudicates (most unsure first).

:class:`RoomStore` is the room's only door to the store: it reads everything
but can write only three things, an adjudication (``store.adjudicate``), an
assignment (``store.save_assignment``) and a lesson (``store.save_lesson``);
it has no way to change a student's label.

The parts live in modules with one job each, and every name above is
re-exported here: the picture in :mod:`.room_state`, agreement in
:mod:`.room_agreement`, the other figures in :mod:`.room_figures`, the door
to the store in :mod:`.room_store`; this module holds :class:`Room`, which
keeps the figures up to date.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..model import DIMENSIONS
from ..store import Lesson
from .labellings import HumanLabelling
from .room_agreement import (
    DimensionAgreement,
    PairKappa,
    dimension_agreement,
    group_agreement,
    pair_kappa,
    update_agreement,
)
from .room_figures import (
    AnnotatorProgress,
    TeachingMoment,
    UnitNote,
    annotator_progress,
    key_accuracy,
    sample_coverage,
    teaching_moments,
    unit_notes,
    vote_split,
)
from .room_state import Adjudication, LabelRow, RoomState, UnitComment
from .room_store import (
    LABEL_ACTIONS,
    RoomStore,
    StoreReplacedError,
    latest_queues,
    latest_sample,
    make_room_assignment,
    make_room_lesson,
    make_room_sample,
)

__all__ = [
    "LABEL_ACTIONS",
    "Adjudication",
    "AnnotatorProgress",
    "DimensionAgreement",
    "LabelRow",
    "PairKappa",
    "Room",
    "RoomState",
    "RoomStore",
    "StoreReplacedError",
    "TeachingMoment",
    "UnitComment",
    "UnitNote",
    "annotator_progress",
    "dimension_agreement",
    "group_agreement",
    "key_accuracy",
    "latest_queues",
    "latest_sample",
    "make_room_assignment",
    "make_room_lesson",
    "make_room_sample",
    "pair_kappa",
    "sample_coverage",
    "teaching_moments",
    "unit_notes",
    "update_agreement",
    "vote_split",
]


class Room:
    """The room's figures over a :class:`RoomStore`, recomputed only where something changed.

    :meth:`refresh` polls the store; agreement is computed again only for the
    dimensions whose answers changed.
    """

    def __init__(self, source: RoomStore, key: HumanLabelling | None = None, moments: int = 20, *,
                 lesson: Lesson | None = None, key_values: Mapping[tuple[str, str], int] | None = None,
                 open_dataset: Any = None):
        self.source = source
        self.key = key
        self.moments_limit = moments
        #: the lesson the room is scoped to (its catalog is the lesson's units), or None
        self.lesson = lesson
        #: the answer key per (unit_id, dimension), passages included (:func:`.room_grid.answer_key_values`)
        self.key_values: Mapping[tuple[str, str], int] = key_values or {}
        #: the open dataset (:func:`playground.datasets.open_dataset`), to make lessons from the room
        self.open_dataset = open_dataset
        self.state = source.load()
        self.agreement: dict[str, DimensionAgreement] = {}
        self.version = 0
        self.state.changed = {}
        for d in DIMENSIONS:
            self.agreement[d] = dimension_agreement(self.state, d)

    def refresh(self) -> bool:
        """Read new events; True when anything changed (the figures are then up to date)."""
        if not self.source.poll(self.state):
            return False
        self._recompute()
        return True

    def _recompute(self) -> None:
        changed, self.state.changed = self.state.changed, {}
        for d, who in sorted(changed.items()):
            if d in DIMENSIONS:
                self.agreement[d] = update_agreement(self.state, d, self.agreement.get(d), who)
        self.version += 1

    def queues(self) -> Any | None:
        return latest_queues(self.source.assignments(), self.source.dataset)

    def sample(self) -> Any | None:
        return latest_sample(self.source.assignments(), self.source.dataset)

    def progress(self) -> list[AnnotatorProgress]:
        a = None if self.lesson is not None else self.queues()  # a lesson: everyone the lesson's units
        return annotator_progress(self.state, self.source.catalog, a.queues if a is not None else None)

    def accuracy(self) -> list[dict[str, Any]]:
        return key_accuracy(self.state, self.key)

    def moments(self, dimension: str | None = None) -> tuple[list[TeachingMoment], int, int]:
        """``(shown, open, settled)``: the first ``moments`` teaching moments (of ``dimension``), and how many
        are open and adjudicated in all."""
        found = teaching_moments(self.state, self.source.catalog, None, dimension)
        settled = sum(1 for m in found if m.adjudication is not None)
        return found[:self.moments_limit], len(found) - settled, settled

    def notes(self) -> list[UnitNote]:
        return unit_notes(self.state, self.source.catalog, self.moments_limit)
