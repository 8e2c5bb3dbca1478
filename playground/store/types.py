"""Values the label store hands out: frozen dataclasses, comparable and hashable."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "ACTIONS", "ASSIGNMENT_KINDS", "UNSURE", "Assignment", "CaseProgress", "Comment", "ConsensusRow",
    "DatasetInfo", "Event", "FailureMode", "Guidelines", "ImportReport", "Lesson", "Progress", "StaleLabel",
    "StoredDataset", "StoredLabel", "UnitTags",
]

#: The stored value of an "unsure" answer (1 = yes, 0 = no).  Unsure is counted in no rate
#: and never votes in consensus; :meth:`LabelStore.unsure_counts` counts it.
UNSURE = 2

#: The actions an event records.  ``set``/``clear`` come from :meth:`LabelStore.set_label`,
#: ``undo`` from :meth:`LabelStore.undo`, ``import`` from :func:`playground.store.import_file`,
#: ``comment`` from :meth:`LabelStore.set_comment`, ``adjudicate`` from :meth:`LabelStore.adjudicate`,
#: ``tags`` from :meth:`LabelStore.set_tags`.
ACTIONS: tuple[str, ...] = ("set", "clear", "undo", "import", "comment", "adjudicate", "tags")

#: Kinds of :class:`Assignment`.
ASSIGNMENT_KINDS: tuple[str, ...] = ("queue", "calibration_sample")


@dataclass(frozen=True)
class Event:
    """One change of one label, as appended to the event log (never updated, never deleted).

    ``old_value``/``new_value`` are 1, 0, :data:`UNSURE` or ``None`` (no label).  A ``comment``
    event has ``dimension == ""``, both values ``None`` and the new comment text in ``note``
    (``""`` when cleared); an ``adjudicate`` event is filed under the reserved annotator
    ``consensus`` with the adjudicator's name in ``note`` as ``adjudicated by NAME``.  ``text_hash``
    is the unit's text hash the new state rests on; ``old_text_hash`` the one
    of the label it replaced (``None`` when there was none).  ``created_at`` is
    a UTC ISO-8601 string (server time on PostgreSQL).  ``batch_id`` groups the
    events of one user action (an import writes many); ``undoes`` is the id of
    the event an ``undo`` event reverted.
    """

    event_id: int
    annotator: str
    unit_kind: str
    unit_id: str
    dimension: str
    old_value: int | None
    new_value: int | None
    text_hash: str
    created_at: str
    action: str
    case_id: str = ""
    old_text_hash: str | None = None
    batch_id: int | None = None
    undoes: int | None = None
    note: str | None = None
    guidelines_version: int | None = None


@dataclass(frozen=True)
class StoredLabel:
    """A current label: the state the events of (annotator, unit, dimension) add up to."""

    annotator: str
    unit_kind: str
    unit_id: str
    case_id: str
    dimension: str
    value: int
    text_hash: str
    updated_at: str


@dataclass(frozen=True)
class StaleLabel:
    """A label whose unit text changed (``reason == "changed"``) or whose unit is gone (``"orphaned"``).

    Stale labels are kept, never deleted and never counted as current judgements.
    """

    annotator: str
    unit_kind: str
    unit_id: str
    case_id: str
    dimension: str
    value: int
    stored_hash: str
    current_hash: str | None
    reason: str
    updated_at: str


@dataclass(frozen=True)
class ConsensusRow:
    """Majority over annotators for one (unit, dimension), or its adjudicated value.

    ``status`` is ``single`` (one annotator), ``unanimous``, ``majority``,
    ``tie`` or ``adjudicated``.  A tie has ``value is None`` — it is reported,
    never broken, until someone adjudicates it; an adjudicated row carries the
    adjudicated value and the ``adjudicator``'s name (``None`` when the stored
    consensus label does not say who), whatever the votes (``yes``/``no``) say.
    """

    unit_kind: str
    unit_id: str
    case_id: str
    dimension: str
    value: int | None
    status: str
    yes: int
    no: int
    adjudicator: str | None = None

    @property
    def annotators(self) -> int:
        return self.yes + self.no


@dataclass(frozen=True)
class CaseProgress:
    """Labelled versus total units and (unit, dimension) pairs of one case (or of everything)."""

    case_id: str
    labelled_units: int
    total_units: int
    labelled_pairs: int
    total_pairs: int
    stale_pairs: int = 0

    @property
    def unit_fraction(self) -> float:
        return self.labelled_units / self.total_units if self.total_units else 0.0

    @property
    def pair_fraction(self) -> float:
        return self.labelled_pairs / self.total_pairs if self.total_pairs else 0.0


@dataclass(frozen=True)
class Progress:
    """Progress over a catalog of units, overall and per case (see :meth:`LabelStore.progress`)."""

    annotator: str | None
    overall: CaseProgress
    cases: dict[str, CaseProgress] = field(default_factory=dict, compare=False, hash=False)

    # Convenience mirrors of the overall figures.
    @property
    def labelled_units(self) -> int:
        return self.overall.labelled_units

    @property
    def total_units(self) -> int:
        return self.overall.total_units

    @property
    def labelled_pairs(self) -> int:
        return self.overall.labelled_pairs

    @property
    def total_pairs(self) -> int:
        return self.overall.total_pairs

    @property
    def stale_pairs(self) -> int:
        return self.overall.stale_pairs


@dataclass(frozen=True)
class ImportReport:
    """What an import wrote: ``rows`` read, ``changed`` (an event each), ``unchanged`` (already so)."""

    source: str
    fmt: str
    rows: int
    changed: int
    unchanged: int
    annotators: tuple[str, ...]
    new_annotators: tuple[str, ...]
    batch_id: int | None = None
    #: Changed labels whose time is before that of the label they replaced (which stays in the history).
    older: int = 0

    def summary(self) -> str:
        return (
            f"imported {self.rows} row(s) from {self.source}: {self.changed} changed, "
            f"{self.unchanged} already so; annotators: {', '.join(self.annotators) or '-'}"
            + (f" (new: {', '.join(self.new_annotators)})" if self.new_annotators else "")
            + (f"; {self.older} older than the label it replaced (kept in the history; undo brings it back)"
               if self.older else "")
        )


@dataclass(frozen=True)
class Comment:
    """An annotator's current free-text comment on one unit (the latest ``comment`` event)."""

    annotator: str
    unit_kind: str
    unit_id: str
    case_id: str
    text: str
    updated_at: str


@dataclass(frozen=True)
class Assignment:
    """Who labels which units: per-annotator queues (``kind == "queue"``) or one calibration sample.

    ``queues`` maps an annotator to unit ids in labelling order; a
    ``calibration_sample`` has a single queue under the key ``"*"`` in
    :func:`playground.sampling.ranked` order.  ``dataset`` names the dataset
    the unit ids come from; ``seed`` the seed that drew it.
    """

    name: str
    kind: str
    dataset: str
    seed: int | str
    overlap: int
    queues: dict[str, tuple[str, ...]] = field(hash=False)
    created_at: str = ""


@dataclass(frozen=True)
class Lesson:
    """What a class labels in one lesson: the same ``units`` in the same order for every student.

    ``cases`` in the instructor's order; ``responses`` the chosen responses
    (empty: every response of those cases); ``units`` the unit ids, per case
    its passages then per response its claims and facts
    (:func:`playground.lessons.lesson_units`).  ``dataset`` names the dataset.
    """

    name: str
    dataset: str
    cases: tuple[str, ...]
    responses: tuple[str, ...]
    units: tuple[str, ...]
    created_at: str = ""


@dataclass(frozen=True)
class DatasetInfo:
    """A dataset held in the store, without its payload (``cases``/``units`` from ``payload["summary"]``)."""

    name: str
    kind: str
    sha256: str
    created_at: str
    cases: int | None = None
    units: int | None = None


@dataclass(frozen=True)
class StoredDataset:
    """A dataset held in the store: its JSON ``payload`` and the sha256 of its canonical JSON."""

    name: str
    kind: str
    payload: dict[str, Any] = field(hash=False)
    sha256: str = ""
    created_at: str = ""


@dataclass(frozen=True)
class UnitTags:
    """An annotator's current failure-mode tags on one unit (a response).

    ``raw_tags`` are the names as typed (sorted); ``tags`` the same set resolved
    through the dataset's taxonomy (renames and merges followed to the tag that
    is current now), sorted and without repeats.
    """

    annotator: str
    unit_id: str
    tags: tuple[str, ...]
    text_hash: str
    created_at: str
    raw_tags: tuple[str, ...] = ()
    dataset: str = ""
    case_id: str = ""
    unit_kind: str = "response"


@dataclass(frozen=True)
class FailureMode:
    """A tag of a dataset's failure-mode taxonomy.

    ``merged_into`` is ``None`` for a tag in use; a renamed or merged tag keeps
    its row and names the tag it went into (``merged_by``/``merged_at`` say who
    and when).
    """

    dataset: str
    name: str
    description: str
    created_by: str
    created_at: str
    merged_into: str | None = None
    merged_by: str | None = None
    merged_at: str | None = None


@dataclass(frozen=True)
class Guidelines:
    """One version of a dataset's labelling guidelines (markdown, stored verbatim)."""

    dataset: str
    version: int
    markdown: str
    author: str
    created_at: str
