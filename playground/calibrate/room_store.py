"""The room's only door to the label store (:class:`RoomStore`), and what the room writes through it.

:class:`RoomStore` reads everything but can write only three things, an adjudication
(``store.adjudicate``), an assignment (``store.save_assignment``) and a lesson (``store.save_lesson``); it
has no way to change a student's label.  It reads the event log incrementally
(``store.events(after=...)``): a refresh costs one indexed query when nothing happened.
:func:`make_room_assignment`, :func:`make_room_sample` and :func:`make_room_lesson` make and save through it;
:func:`latest_queues` and :func:`latest_sample` pick the newest assignment of a kind.
"""
from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..assign import draw_calibration_sample, make_assignment
from ..model import Unit
from ..store import (
    RESERVED_ANNOTATORS,
    Assignment,
    LabelStore,
    Lesson,
    StoreError,
    StoreGoneError,
    parse_url,
)
from .room_state import Adjudication, RoomState, UnitComment

__all__ = ["LABEL_ACTIONS", "RoomStore", "StoreReplacedError", "latest_queues", "latest_sample",
           "make_room_assignment", "make_room_lesson", "make_room_sample"]

#: Event actions that change a person's label (every other action, e.g. a comment, is re-read from the store).
LABEL_ACTIONS: frozenset[str] = frozenset({"set", "clear", "undo", "import"})


class StoreReplacedError(StoreGoneError):
    """The SQLite file the room reads was deleted or replaced since it was opened (found on a read, where the
    store itself would raise :class:`~playground.store.StoreGoneError` only on its next write)."""


def latest_queues(assignments: Iterable[Any], dataset: str | None = None) -> Any | None:
    """The most recent assignment of kind ``queue`` (of ``dataset`` when given), or None.

    Most recent: the latest ``created_at``, ties broken by name.
    """
    queues = [a for a in assignments if a.kind == "queue" and (dataset is None or a.dataset == dataset)]
    return max(queues, key=lambda a: (a.created_at, a.name)) if queues else None


class RoomStore:
    """The room's door to a :class:`playground.store.LabelStore` over one dataset's ``catalog``.

    Reads the event log incrementally; writes only adjudications and
    assignments (there is no method that sets a person's label).  Events on
    units outside ``catalog`` (another dataset's) are skipped; a label whose
    unit text changed since it was set is stale and does not count.

    ``may_write`` (serve engineer, issue 29: roles) is whether the person holding the page may write at all —
    the instructor, not an observer; the caller decides it from the page's role
    (:func:`playground.ui.request.can_write_room`).  Every write checks it, whatever the page shows.
    """

    def __init__(self, store: LabelStore, catalog: Mapping[str, Unit], dataset: str = "golden", *,
                 may_write: bool = True):
        self._store = store
        self.catalog = catalog
        self.dataset = dataset
        self.may_write = may_write
        self._file = self._identity()

    def _check_writer(self) -> None:
        """Refuse a write from a page whose role may not write (issue 29: checked here, not by the page)."""
        if not self.may_write:
            raise PermissionError("only the instructor's link can adjudicate or assign; this page is read-only")

    def _identity(self) -> tuple[int, int] | None:
        """(device, inode) of a SQLite store's file, None for other backends or when it is missing."""
        if self._store.backend != "sqlite":
            return None
        try:
            st = os.stat(parse_url(self.url)[1])
        except (OSError, StoreError):
            return None
        return st.st_dev, st.st_ino

    def check_file(self) -> None:
        """Raise when the SQLite file was deleted or replaced since the room opened it: the room would
        otherwise keep reading the old file and show a class that has moved on."""
        if self._file is not None and self._identity() != self._file:
            raise StoreReplacedError(f"the label store {self.url} was deleted or replaced since this page opened "
                                        "it; reload the page")

    @property
    def url(self) -> str:
        return str(self._store.url)

    @property
    def store(self) -> LabelStore:
        """The store, for reading (the room's failure-mode counts); writes go through this class's methods."""
        return self._store

    @property
    def writable(self) -> bool:
        return self.may_write and not self._store.read_only

    def load(self) -> RoomState:
        """A fresh picture: every event replayed, then adjudications and comments read once."""
        state = RoomState()
        self._apply(state, self._store.events(after=0))
        self._reread(state, None)
        return state

    def poll(self, state: RoomState) -> int:
        """Apply the events after ``state.last_event_id``; returns how many there were."""
        self.check_file()
        events = self._store.events(after=state.last_event_id)
        if events:
            touched = self._apply(state, events)
            if touched:
                self._reread(state, touched)
        return len(events)

    def _apply(self, state: RoomState, events: Sequence[Any]) -> set[str]:
        """Label events update the votes; units of any other event (comment, adjudication) are returned."""
        touched: set[str] = set()
        for e in events:
            state.last_event_id = max(state.last_event_id, int(e.event_id))
            if e.unit_kind == "response" or e.dimension == "tags":
                state.verdict_events += 1
            unit = self.catalog.get(e.unit_id)
            if unit is None:
                continue
            if e.annotator in RESERVED_ANNOTATORS or e.action not in LABEL_ACTIONS:
                touched.add(e.unit_id)
                continue
            fresh = e.new_value is not None and e.text_hash == unit.text_hash
            state.set_vote(e.annotator, e.unit_id, e.dimension, e.new_value if fresh else None)
        return touched

    def _reread(self, state: RoomState, unit_ids: set[str] | None) -> None:
        """Adjudications and comments of ``unit_ids`` (None: all) from the store."""
        ids = None if unit_ids is None else sorted(unit_ids)
        found: dict[tuple[str, str], Adjudication] = {}
        for row in self._store.consensus(catalog=self.catalog, unit_ids=ids):
            if row.status == "adjudicated" and row.value is not None:
                found[(row.unit_id, row.dimension)] = Adjudication(int(row.value), row.adjudicator)
        keep = {} if unit_ids is None else {k: v for k, v in state.adjudications.items() if k[0] not in unit_ids}
        state.adjudications = {**keep, **found}
        comments: dict[str, list[UnitComment]] = {}
        for c in self._store.comments(unit_ids=ids):
            if c.text:
                comments.setdefault(c.unit_id, []).append(UnitComment(c.annotator, c.text))
        if ids is None:
            state.comments = {}
        for u in ids or ():
            state.comments.pop(u, None)
        state.comments.update({u: tuple(cs) for u, cs in comments.items()})

    # --- the only three writes -------------------------------------------------------------------
    def adjudicate(self, unit_id: str, dimension: str, value: int | None, adjudicator: str) -> Any:
        """Settle ``(unit_id, dimension)`` as ``value`` (None withdraws) under ``adjudicator``'s name.

        :meth:`playground.store.LabelStore.adjudicate`: the name follows
        :func:`playground.store.check_annotator` (a reserved name is refused).
        """
        self._check_writer()
        if not isinstance(adjudicator, str) or not adjudicator.strip():
            raise ValueError("give your name to adjudicate")
        unit = self.catalog.get(unit_id)
        if unit is None:
            raise ValueError(f"unit {unit_id} is not in the dataset {self.dataset}")
        return self._store.adjudicate(unit, dimension, value, adjudicator.strip())

    def assignments(self) -> list[Assignment]:
        return list(self._store.assignments())

    def save_assignment(self, assignment: Assignment) -> None:
        self._check_writer()
        self._store.save_assignment(assignment)

    def save_lesson(self, lesson: Lesson) -> Lesson:
        """Write path: a new lesson (a lesson of that name already there is refused); the instructor's only."""
        self._check_writer()
        saved: Lesson = self._store.save_lesson(lesson)
        return saved


def make_room_lesson(source: RoomStore, od: Any, name: str, cases: Sequence[str],
                     responses: Sequence[str] = ()) -> Lesson:
    """Make and save a lesson from the room (:func:`playground.lessons.make_lesson` over the open dataset
    ``od``); its errors reach the caller unchanged and nothing is saved."""
    from ..lessons import make_lesson

    if od is None:
        raise ValueError("this room has no dataset to make a lesson from")
    return source.save_lesson(make_lesson(name, od, cases, responses))


def make_room_assignment(source: RoomStore, annotators: Sequence[str], overlap: int, seed: int | str,
                         name: str) -> Assignment:
    """Make and save a queue assignment of every unit of the room's dataset.

    :func:`playground.assign.make_assignment` over the units in catalog order;
    its errors (a reserved name, an overlap above the number of annotators)
    reach the caller unchanged and nothing is saved.
    """
    names = [a.strip() for a in annotators if a.strip()]
    if not names:
        raise ValueError("name at least one annotator")
    if not name.strip():
        raise ValueError("give the assignment a name")
    assignment = make_assignment(list(source.catalog), names, overlap, seed, name=name.strip(), dataset=source.dataset)
    source.save_assignment(assignment)
    return assignment


def make_room_sample(source: RoomStore, n: int, seed: int | str, name: str) -> Assignment:
    """Draw and save a calibration sample of ``n`` units of the room's dataset.

    :func:`playground.assign.draw_calibration_sample` over the units in
    catalog order: the first ``n`` of :func:`playground.sampling.ranked`, the
    sample on which prediction-powered estimates are valid.
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"a calibration sample needs at least 1 unit, got {n!r}")
    if not name.strip():
        raise ValueError("give the sample a name")
    sample = draw_calibration_sample(list(source.catalog), n, seed, name=name.strip(), dataset=source.dataset)
    source.save_assignment(sample)
    return sample


def latest_sample(assignments: Iterable[Any], dataset: str | None = None) -> Any | None:
    """The most recent assignment of kind ``calibration_sample`` (of ``dataset`` when given), or None."""
    found = [a for a in assignments if a.kind == "calibration_sample" and (dataset is None or a.dataset == dataset)]
    return max(found, key=lambda a: (a.created_at, a.name)) if found else None
