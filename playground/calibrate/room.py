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
"""
from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..assign import draw_calibration_sample, make_assignment
from ..model import DIMENSIONS, UNIT_DIMENSIONS, Unit
from ..stats import AgreementStat, cohens_kappa_table, fleiss_kappa, krippendorff_alpha
from ..store import (
    RESERVED_ANNOTATORS,
    UNSURE,
    Assignment,
    LabelStore,
    Lesson,
    StoreError,
    StoreGoneError,
    parse_url,
)
from .annotators import accuracy_against_key
from .labellings import HumanLabelling

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

#: Event actions that change a person's label (every other action, e.g. a comment, is re-read from the store).
LABEL_ACTIONS: frozenset[str] = frozenset({"set", "clear", "undo", "import"})


class StoreReplacedError(StoreGoneError):
    """The SQLite file the room reads was deleted or replaced since it was opened (found on a read, where the
    store itself would raise :class:`~playground.store.StoreGoneError` only on its next write)."""


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


# --------------------------------------------------------------------------- figures


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


# --------------------------------------------------------------------------- the store


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
