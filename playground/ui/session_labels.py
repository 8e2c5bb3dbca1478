"""The annotator, their labels and comments, saving, undo and the dataset-changed check.

One part of :class:`~playground.ui.session.LabelSession`, composed into it (``session.labelling``, issue 40.1):
a :class:`Labelling` object given the page state it reads and keeps (:class:`LabellingState`: the labels,
comments, counts and caches it resets and updates) in its constructor; the session hands its methods on under
their old names.  See :mod:`playground.ui.session` for the rules."""
from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping
from typing import Any, Protocol, cast

from ..golden import Dataset
from ..metrics import (
    RateCounter,
)
from ..model import DIMENSIONS, Response, Unit
from ..store import UNSURE
from .session_types import (
    CaseFilter,
    CaseRow,
    DatasetChangedError,
    LabelChange,
    Progress,
    SessionError,
    ViewUnit,
    validate_annotator,
)

__all__ = ["Labelling", "LabellingState"]


class LabellingState(Protocol):
    """What :class:`Labelling` reads of the page's state (a :class:`~playground.ui.session.LabelSession` is one)
    and keeps there (who labels, their labels, unsure answers, stale labels, comments, the counts and caches)."""

    dataset: Dataset
    dataset_name: str
    revision: str
    store: Any
    read_only: bool
    annotator: str | None
    case_ids: list[str]
    case_id: str | None
    catalog: Any
    responses: dict[str, list[Response]]
    auto: dict[tuple[str, str], int]
    total_units: int
    total_pairs: int
    _harness: Any
    _units: dict[str, Unit]
    _group: dict[str, tuple[str, str]]
    _view_units: dict[tuple[str, str], list[ViewUnit]]
    _case_units: dict[str, list[str]]
    _response_units: dict[str, list[str]]
    labels: dict[tuple[str, str], int]
    unsure: set[tuple[str, str]]
    stale: dict[tuple[str, str], int]
    comments: dict[str, str]
    counter: Any
    _ties: set[tuple[str, str]]
    _tables: dict[str, list[int]]
    _agreement_cache: dict[str, Any]
    _case_stats: dict[str, tuple[int, int, int, int, int]]
    _rows: dict[str, tuple[Any, CaseRow]]
    _listed: tuple[CaseFilter, list[CaseRow]] | None
    _unsearched: tuple[CaseFilter, list[CaseRow]] | None
    response_name: Callable[[str], str]
    _pairs: Callable[[Iterable[str]], Iterator[tuple[str, str]]]
    _restat: Callable[[str], None]

    def build_case(self, case_id: str) -> None: ...

    def build_cases(self, case_ids: Iterable[str]) -> None: ...


class Labelling:
    """The annotator, their labels and comments, saving, undo and the dataset-changed check."""

    def __init__(self, state: LabellingState):
        self.state = state

    def set_annotator(self, name: str | None) -> str | None:
        """Label (or, read-only, view) as ``name``; loads their labels from the store.

        ``None`` is allowed only on a read-only session: the consensus of all
        annotators.  Returns the tidied name.
        """
        if name is None:
            if not self.state.read_only:
                raise SessionError("Type your name first.")
            self.state.annotator = None
        else:
            from .request import check_name  # a roster link binds a student's page to one name

            self.state.annotator = check_name(validate_annotator(name))
        self.refresh()
        return self.state.annotator

    def dataset_changed(self) -> bool:
        """Whether the store's dataset is no longer the revision this page opened (re-imported or removed)."""
        if not self.state.revision:
            return False
        return self.state.store.dataset_revision(self.state.dataset_name) != self.state.revision

    def check_dataset(self) -> None:
        """Raise :class:`DatasetChangedError` when the dataset changed under this page (before every write)."""
        if self.dataset_changed():
            raise DatasetChangedError(
                f"The dataset {self.state.dataset_name!r} was re-imported since this page opened, so the text shown "
                "here may no longer exist; nothing more is saved from this page. Reload the page to label the new "
                "version (labels saved before are kept; those on changed text show as earlier labels).")

    @property
    def can_label(self) -> bool:
        return self.state.annotator is not None and not self.state.read_only

    def known_annotators(self) -> list[str]:
        return self.state.store.annotators()

    def annotator_progress(self) -> list[tuple[str, Progress]]:
        """Every annotator's progress on this dataset (for an instructor's dashboard), by name."""
        out = []
        self.build_labelled(everyone=True)
        for name in self.known_annotators():  # the store never lists the reserved names
            p = self.state.store.progress(self.state._units, annotator=name)
            # every labelled unit is built; the units of cases not built yet are counted, not built
            out.append((name, Progress("", p.labelled_units, self.state.total_units, p.labelled_pairs,
                                       self.state.total_pairs, p.stale_pairs)))
        return out

    def build_labelled(self, everyone: bool = False, labels: Iterable[Any] | None = None) -> None:
        """Build every case holding a label or comment of this annotator (``everyone``: of anyone)."""
        if self.state._harness is None:
            return
        who = None if everyone else self.state.annotator
        if labels is None:
            labels = self.state.store.labels(annotator=who, include_unsure=True)
        cases = {lb.case_id for lb in labels}
        cases |= {c.case_id for c in self.state.store.comments(annotator=who)}
        self.state.build_cases(c for c in cases if c in self.state.dataset.cases)

    def reset_labels(self) -> None:
        """Forget every label, comment, count and cache of the state (the next :meth:`refresh` loads them)."""
        self.state.counter = RateCounter(cast(Mapping[Hashable, Hashable], self.state._group))
        self.state.labels = {}
        self.state.unsure = set()
        self.state.comments = {}
        self.state.stale = {}
        # (human, harness) table per label dimension, kept as labels change: agreement in O(1) per toggle
        self.state._tables = {d: [0, 0, 0, 0] for d in DIMENSIONS}
        self.state._agreement_cache = {}
        self.state._case_stats = {}
        self.state._rows = {}
        self.state._listed = None
        self.state._unsearched = None
        self.state._ties = set()

    def _my_labels(self, **where: Any) -> list:
        """This annotator's stored labels, unsure ones included."""
        return list(self.state.store.labels(annotator=self.state.annotator, **where, include_unsure=True))

    def _load_comments(self, unit_ids: Iterable[str] | None = None) -> dict[str, str]:
        if self.state.annotator is None:
            return {}
        ids = None if unit_ids is None else list(unit_ids)
        return {c.unit_id: c.text for c in self.state.store.comments(unit_ids=ids, annotator=self.state.annotator)
                if c.unit_id in self.state._units and c.text}

    def refresh(self) -> None:
        """Reload this annotator's labels (or the consensus) from the store: another tab's changes appear."""
        self.reset_labels()
        if self.state.annotator is None and self.state.read_only:
            self.build_labelled(everyone=True)
            for row in self.state.store.consensus(catalog=self.state._units):
                if row.value is None:
                    self.state._ties.add((row.unit_id, row.dimension))
                else:
                    self._put(row.unit_id, row.dimension, row.value)
        elif self.state.annotator is not None:
            mine = self._my_labels()
            self.build_labelled(labels=mine)
            self.state.comments = self._load_comments()
            for label in mine:
                unit = self.state._units.get(label.unit_id)
                if unit is None or label.dimension not in unit.dimensions:
                    continue  # orphaned: a unit of another configuration or dataset
                if unit.text_hash != label.text_hash:
                    self.state.stale[(label.unit_id, label.dimension)] = label.value
                    continue
                self._put(label.unit_id, label.dimension, label.value)
        for cid in self.state.case_ids:
            self.state._restat(cid)

    def refresh_case(self, case_id: str | None = None) -> int:
        """Reload one case's labels from the store (cheap: one query); returns how many changed.

        The page calls it when a case comes on screen, so a second tab's
        changes show up without a full :meth:`refresh`.
        """
        cid = case_id or self.state.case_id
        if cid is None or (self.state.annotator is None and not self.state.read_only):
            return 0
        self.state.build_case(cid)
        ids = list(self.state._case_units.get(cid, []))
        for r in self.state.responses.get(cid, []):
            ids += self.state._response_units.get(r.response_id, [])
        fresh: dict[tuple[str, str], int] = {}
        stale: dict[tuple[str, str], int] = {}
        if self.state.annotator is None:
            here = set(ids)
            self.state._ties -= {k for k in self.state._ties if k[0] in here}
            for row in self.state.store.consensus(catalog=self.state._units, unit_ids=ids):
                if row.value is None:
                    self.state._ties.add((row.unit_id, row.dimension))
                else:
                    fresh[(row.unit_id, row.dimension)] = row.value
        else:
            for label in self._my_labels(case_id=cid):
                unit = self.state._units.get(label.unit_id)
                if unit is None or label.dimension not in unit.dimensions:
                    continue
                target = fresh if unit.text_hash == label.text_hash else stale
                target[(label.unit_id, label.dimension)] = label.value
        changed = 0
        if self.state.annotator is not None:
            here_comments = self._load_comments(ids)
            for uid in ids:
                if self.state.comments.get(uid, "") != here_comments.get(uid, ""):
                    changed += 1
                    if uid in here_comments:
                        self.state.comments[uid] = here_comments[uid]
                    else:
                        self.state.comments.pop(uid, None)
        for uid, dim in self.state._pairs(ids):
            key = (uid, dim)
            new = fresh.get(key)
            if self.answer(uid, dim) != new:
                self._put(uid, dim, new)
                changed += 1
            if key in stale and new is None:
                self.state.stale[key] = stale[key]
            elif key not in stale:
                self.state.stale.pop(key, None)
        if changed:
            self.state._restat(cid)
        return changed

    @property
    def ties(self) -> int:
        """Consensus only: (unit, dimension) pairs whose annotators are split evenly (left out of every rate)."""
        return len(self.state._ties)

    def _put(self, unit_id: str, dimension: str, value: int | None) -> None:
        """Record an answer (1, 0, :data:`UNSURE` or None) in memory: labels, unsure set, counts and agreement."""
        key = (unit_id, dimension)
        old = self.state.labels.get(key)
        auto = self.state.auto.get(key)
        if old is not None and auto is not None:
            self.state._tables[dimension][2 * old + auto] -= 1
        if value is None or value == UNSURE:
            self.state.labels.pop(key, None)
            if value == UNSURE:
                self.state.unsure.add(key)
                self.state.stale.pop(key, None)
            else:
                self.state.unsure.discard(key)
            self.state.counter.set(unit_id, dimension, None)  # unsure is counted in no rate
        else:
            v = int(value)
            self.state.labels[key] = v
            self.state.unsure.discard(key)
            self.state.stale.pop(key, None)
            if auto is not None:
                self.state._tables[dimension][2 * v + auto] += 1
            self.state.counter.set(unit_id, dimension, v)
        self.state._agreement_cache.pop(dimension, None)

    def label(self, unit_id: str, dimension: str) -> int | None:
        """This annotator's current label (1, 0) or None (no label, or unsure)."""
        return self.state.labels.get((unit_id, dimension))

    def answer(self, unit_id: str, dimension: str) -> int | None:
        """This annotator's answer: 1, 0, :data:`UNSURE` or None (not answered)."""
        key = (unit_id, dimension)
        if key in self.state.unsure:
            return UNSURE
        return self.state.labels.get(key)

    def answered(self, unit_id: str, dimension: str) -> bool:
        """Whether this annotator gave an answer (an unsure one counts: they have looked at it)."""
        key = (unit_id, dimension)
        return key in self.state.labels or key in self.state.unsure

    def comment(self, unit_id: str) -> str:
        """This annotator's comment on a unit ("" when none)."""
        return self.state.comments.get(unit_id, "")

    def set_comment(self, unit_id: str, text: str) -> bool:
        """Save a comment on a unit ("" removes it); returns whether the store changed."""
        if self.state.read_only:
            raise SessionError("This page is read-only: comments cannot be changed here.")
        if self.state.annotator is None:
            raise SessionError("Type your name first: comments are saved under it.")
        unit = self.state.catalog.get(unit_id)
        if unit is None:
            raise SessionError(f"unknown unit {unit_id!r}")
        text = str(text).strip()
        self.check_dataset()
        event = self.state.store.set_comment(self.state.annotator, unit, text)
        if text:
            self.state.comments[unit_id] = text
        else:
            self.state.comments.pop(unit_id, None)
        return event is not None

    def stale_label(self, unit_id: str, dimension: str) -> int | None:
        """An earlier label of this unit whose text has changed since, or None."""
        return self.state.stale.get((unit_id, dimension))

    def _unit(self, unit_id: str, dimension: str) -> Unit:
        unit = self.state.catalog.get(unit_id)
        if unit is None:
            raise SessionError(f"unknown unit {unit_id!r}")
        if dimension not in unit.dimensions:
            raise SessionError(f"{unit.unit_kind} units are not labelled on {dimension!r}")
        return unit

    def set_label(self, unit_id: str, dimension: str, value: int | None) -> LabelChange | None:
        """Save ``value`` (1, 0, or None to clear) at once; returns the change, or None if nothing changed."""
        if self.state.read_only:
            raise SessionError("This page is read-only (an instructor dashboard): labels cannot be changed here.")
        if self.state.annotator is None:
            raise SessionError("Type your name first: labels are saved under it.")
        if value is not None and value not in (0, 1, UNSURE):
            raise SessionError(f"a label is 1 (yes), 0 (no), {UNSURE} (unsure) or None (clear), not {value!r}")
        unit = self._unit(unit_id, dimension)
        shown = self.answer(unit_id, dimension)
        self.check_dataset()
        event = self.state.store.set_label(self.state.annotator, unit, dimension, None if value is None else int(value))
        if event is None:
            # Nothing changed in the store; make sure the page agrees with it.
            if shown != (None if value is None else int(value)):
                self.apply(unit_id, dimension, value)
            return None
        self.apply(unit_id, dimension, event.new_value)
        cid, rid = self.state._group[unit_id]
        return LabelChange(unit_id, dimension, event.old_value, event.new_value, cid, rid, event.action,
                           conflict=event.old_value != shown)

    def apply(self, unit_id: str, dimension: str, value: int | None) -> None:
        self._put(unit_id, dimension, value)
        cid = self.state._group[unit_id][0]
        self.state._restat(cid)

    def undo(self) -> LabelChange | None:
        """Revert this annotator's last change (in the store, whichever tab made it); None when nothing is left."""
        if self.state.read_only:
            raise SessionError("This page is read-only: nothing to undo.")
        if self.state.annotator is None:
            raise SessionError("Type your name first.")
        self.check_dataset()
        event = self.state.store.undo(self.state.annotator)
        if event is None:
            return None
        unit = self.state.catalog.get(event.unit_id)
        if unit is None:
            self.refresh()
            return LabelChange(event.unit_id, event.dimension, event.old_value, event.new_value, event.case_id, "",
                               "undo")
        if event.new_value is not None and event.text_hash != unit.text_hash:
            self.refresh()  # restored a label of older text: it is stale, not current
        else:
            self.apply(event.unit_id, event.dimension, event.new_value)
        cid, rid = self.state._group[event.unit_id]
        return LabelChange(event.unit_id, event.dimension, event.old_value, event.new_value, cid, rid, "undo")

    def describe(self, unit_id: str) -> str:
        """A short name of a unit for messages: ``claim 2 of GC-0001 (confident hallucination)``."""
        if unit_id not in self.state._group:
            return unit_id
        cid, rid = self.state._group[unit_id]
        for vu in self.state._view_units.get((cid, rid), []):
            if vu.unit.unit_id == unit_id:
                where = f" of {cid}" + (f" ({self.state.response_name(rid)})" if rid else "")
                return f"{vu.kind} {vu.index + 1}{where}"
        return unit_id
