"""The case list (filters, search), the case on screen, next / previous, queues and progress of a view.

One part of :class:`~playground.ui.session.LabelSession`, composed into it (``session.navigation``, issue
40.1): a :class:`Navigation` object given the page state it reads and moves (:class:`NavigationState`) in its
constructor; the session hands its methods on under their old names.  See :mod:`playground.ui.session` for
the rules."""
from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, Protocol

from ..golden import Dataset
from ..model import Case, Passage, Response, Unit
from .search import CaseSearch, case_texts
from .session_types import (
    STATUSES,
    VERDICTS,
    CaseFilter,
    CaseRow,
    Progress,
    SessionError,
    ViewUnit,
)

__all__ = ["Navigation", "NavigationState"]


class NavigationState(Protocol):
    """What :class:`Navigation` reads of the page's state (a :class:`~playground.ui.session.LabelSession` is one)
    and moves (the case and response on screen, the filter's cached rows, the queue)."""

    dataset: Dataset
    dataset_name: str
    store: Any
    reveal_all: bool
    annotator: str | None
    case_ids: list[str]
    case_id: str | None
    response_id: str | None
    filter: CaseFilter
    queue_name: str | None
    queue_units: list[str]
    queue_sample: bool
    lesson_name: str | None
    queue_lesson: bool
    queue: list[tuple[str, str | None]]
    catalog: Any
    passages: Mapping[str, Sequence[Passage]]
    responses: dict[str, list[Response]]
    auto: dict[tuple[str, str], int]
    decisions: dict[str, dict]
    labels: dict[tuple[str, str], int]
    unsure: set[tuple[str, str]]
    _units: dict[str, Unit]
    _view_units: dict[tuple[str, str], list[ViewUnit]]
    _case_units: dict[str, list[str]]
    _response_units: dict[str, list[str]]
    _group: dict[str, tuple[str, str]]
    _built: set[str]
    _counts: dict[str, tuple[int, int]]
    _case_stats: dict[str, tuple[int, int, int, int, int]]
    _rows: dict[str, tuple[Any, CaseRow]]
    _listed: tuple[CaseFilter, list[CaseRow]] | None
    _unsearched: tuple[CaseFilter, list[CaseRow]] | None

    def answered(self, unit_id: str, dimension: str) -> bool: ...

    def build_case(self, case_id: str) -> None: ...

    def build_all(self) -> None: ...

    def _first_response(self, case_id: str | None) -> str | None: ...


class Navigation:
    """The case list (filters, search), the case on screen, next / previous, queues and progress of a view."""

    def __init__(self, state: NavigationState):
        self.state = state
        self._search: CaseSearch | None = None

    def view_ids(self, case_id: str, response_id: str | None) -> list[str]:
        self.state.build_case(case_id)
        ids = list(self.state._case_units.get(case_id, []))
        if response_id:
            ids += self.state._response_units.get(response_id, [])
        return ids

    def pairs(self, unit_ids: Iterable[str]) -> Iterator[tuple[str, str]]:
        for uid in unit_ids:
            for d in self.state._units[uid].dimensions:
                yield uid, d

    def restat(self, case_id: str) -> None:
        self.state._case_stats[case_id] = self._compute_case_stats(case_id)
        self.state._listed = self.state._unsearched = None  # the case list changes with any case's stats

    def _compute_case_stats(self, case_id: str) -> tuple[int, int, int, int, int]:
        """``(labelled units, units, labelled pairs, pairs, disagreements)``; on a lesson page, of its units."""
        if (kept := self.lesson_responses(case_id)) is not None:
            self.state.build_case(case_id)  # a lesson's few cases: counted on their units, not the case's total
        if case_id not in self.state._built:  # nothing of it is labelled (a labelled case is built): counted only
            units, pairs = self.state._counts[case_id]
            return 0, units, 0, pairs, 0
        ids = list(self.state._case_units.get(case_id, []))
        for r in (r for r in self.state.responses.get(case_id, []) if kept is None or r.response_id in kept):
            ids += self.state._response_units.get(r.response_id, [])
        lu = lp = tp = dis = 0
        for uid in ids:
            dims = self.state._units[uid].dimensions
            done = 0
            for d in dims:
                v = self.state.labels.get((uid, d))
                if v is not None or (uid, d) in self.state.unsure:
                    done += 1
                    if v is not None and v != self.state.auto.get((uid, d)):
                        dis += 1
            lu += done == len(dims)
            lp += done
            tp += len(dims)
        return lu, len(ids), lp, tp, dis

    def case_row(self, case_id: str) -> CaseRow:
        """A case of the list; ``verdicts`` of a case whose harness result is not computed yet (lazy) are ()."""
        stats = self.state._case_stats[case_id]
        kept = self.state._rows.get(case_id)
        if kept is not None and kept[0] is stats:  # new stats (a label, a build) are a new tuple
            return kept[1]
        case = self.state.dataset.cases[case_id]
        lu, tu, lp, tp, dis = stats
        status = "unlabelled" if lp == 0 else ("done" if lp == tp else "partial")
        verdicts = () if case_id not in self.state._built else tuple(
            (self.state.decisions.get(r.response_id) or {}).get("verdict", "") for r in self.state.responses[case_id])
        row = CaseRow(case_id, case.case_type, case.query, status, lu, tu, lp, tp, dis, verdicts)
        self.state._rows[case_id] = (stats, row)
        return row

    def case_types(self) -> list[str]:
        return sorted({c.case_type for c in self.state.dataset.cases.values()})

    def set_filter(self, case_type: str | None = None, status: str | None = None, verdict: str | None = None,
                   disagreement: bool = False, text: str = "") -> list[CaseRow]:
        """Restrict the case list; returns the visible cases.  The case on screen does not change.

        ``text`` searches the cases' text (:class:`~playground.ui.search.CaseSearch`)."""
        if case_type is not None and case_type not in self.case_types():
            raise SessionError(f"unknown case type {case_type!r}")
        if status is not None and status not in STATUSES:
            raise SessionError(f"unknown status {status!r} (known: {', '.join(STATUSES)})")
        if verdict is not None and verdict not in VERDICTS:
            raise SessionError(f"unknown verdict {verdict!r} (known: {', '.join(VERDICTS)})")
        if verdict is not None and not self.state.reveal_all:
            # Blind mode: listing the cases with a REJECT response would show the harness before labelling.
            raise SessionError("The harness-decision filter needs “show harness labels” on (blind labelling).")
        words = " ".join(str(text).split())[:200]
        self.state.filter = CaseFilter(case_type, status, verdict, bool(disagreement), words)
        return self.cases()

    @property
    def search(self) -> CaseSearch:
        """The case list's text search (made, and every case's text folded, when the page opens)."""
        if self._search is None:
            s = self.state
            self._search = CaseSearch(s.case_ids, case_texts(s.dataset, s.passages, s.responses))
        return self._search

    def lesson_cases(self) -> set[str] | None:
        """The cases of the lesson the page follows (of its queue's views), or None (no lesson)."""
        return {cid for cid, _ in self.state.queue} if self.state.queue_lesson else None

    def lesson_responses(self, case_id: str) -> set[str] | None:
        """The responses of ``case_id`` the lesson holds units of; None: no lesson, or none of them (all shown)."""
        held = {self.state._group[u] for u in self.state.queue_units} if self.state.queue_lesson else set()
        return {rid for cid, rid in held if cid == case_id and rid} or None

    def _matches(self, row: CaseRow, f: CaseFilter) -> bool:
        return (((lesson := self.lesson_cases()) is None or row.case_id in lesson)
                and (f.case_type is None or row.case_type == f.case_type)
                and (f.status is None or row.status == f.status)
                and (f.verdict is None or not self.state.reveal_all or f.verdict in row.verdicts)
                and (not f.disagreement or row.disagreements > 0))

    def cases(self, flt: CaseFilter | None = None) -> list[CaseRow]:
        """The cases the list shows (under the current filter, or ``flt``), in case id order."""
        f = flt or self.state.filter
        if self.state._listed is not None and self.state._listed[0] == f:
            return list(self.state._listed[1])
        unsearched = CaseFilter(f.case_type, f.status, f.verdict, f.disagreement)
        if self.state._unsearched is not None and self.state._unsearched[0] == unsearched:
            base = self.state._unsearched[1]  # typing on in the search box: the other filters' rows are kept
        else:
            if f.verdict is not None and self.state.reveal_all:
                self.state.build_all()  # the one question that needs every case's harness decision
            base = [row for cid in self.state.case_ids if self._matches(row := self.case_row(cid), f)]
            self.state._unsearched = (unsearched, base)
        rows = base
        if f.text:
            found = self.search.positions(f.text) or []
            if len(base) == len(self.state.case_ids):  # no other filter: the rows are the cases, in order
                rows = [base[i] for i in found]
            else:
                ids = {self.state.case_ids[i] for i in found}
                rows = [row for row in base if row.case_id in ids]
        self.state._listed = (f, rows)
        return list(rows)

    def visible_ids(self) -> list[str]:
        return [r.case_id for r in self.cases()]

    @property
    def case(self) -> Case | None:
        return self.state.dataset.cases.get(self.state.case_id) if self.state.case_id else None

    @property
    def response(self) -> Response | None:
        if self.state.response_id is None or self.state.case_id is None:
            return None
        rid = self.state.response_id
        return next((r for r in self.state.responses[self.state.case_id] if r.response_id == rid), None)

    def go_to(self, case_id: str, response_id: str | None = None) -> None:
        """Show ``case_id`` with ``response_id`` (default: its first response)."""
        if case_id not in self.state.dataset.cases:
            raise SessionError(f"unknown case {case_id!r}")
        if response_id is not None and response_id not in {r.response_id for r in self.state.responses[case_id]}:
            raise SessionError(f"case {case_id} has no response {response_id!r}")
        self.state.case_id = case_id
        self.state.response_id = response_id or self.state._first_response(case_id)
        self.state.build_case(case_id)

    def select_response(self, response_id: str) -> None:
        """The scenario switch: show another response (variant) of the same case."""
        if self.state.case_id is None:
            raise SessionError("no case on screen")
        self.go_to(self.state.case_id, response_id)

    def scenarios(self) -> list[tuple[str, str]]:
        """``(response_id, variant)`` of the case on screen (a lesson's: of it only), for the scenario switch."""
        kept, here = self.lesson_responses(self.state.case_id or ""), self.state.responses.get(self.state.case_id or "")
        return [(r.response_id, r.variant) for r in here or [] if kept is None or r.response_id in kept]

    def _step(self, delta: int) -> str | None:
        visible = self.visible_ids()
        target: str | None
        if not visible:
            return None
        if self.state.case_id in visible:
            i = visible.index(self.state.case_id) + delta
            if not 0 <= i < len(visible):
                return None
            target = visible[i]
        else:  # the case on screen is filtered out: go to the nearest visible one in that direction
            pos = self.state.case_ids.index(self.state.case_id) if self.state.case_id in self.state.case_ids else -1
            after = [c for c in visible if self.state.case_ids.index(c) > pos]
            before = [c for c in visible if self.state.case_ids.index(c) < pos]
            target = (after[0] if after else None) if delta > 0 else (before[-1] if before else None)
            if target is None:
                return None
        self.go_to(target)
        return target

    def next_case(self) -> str | None:
        """Move to the next case in the list (or the next view of the queue); None (and no move) at the end."""
        return self._queue_step(+1) if self.state.queue else self._step(+1)

    def prev_case(self) -> str | None:
        """Move to the previous case in the list (or view of the queue); None (and no move) at the start."""
        return self._queue_step(-1) if self.state.queue else self._step(-1)

    def _queue_step(self, delta: int) -> str | None:
        here = (self.state.case_id, self.state.response_id)
        i = self.state.queue.index(here) + delta if here in self.state.queue else (0 if delta > 0 else -1)
        if not 0 <= i < len(self.state.queue) or (here not in self.state.queue and not self.state.queue):
            return None
        cid, rid = self.state.queue[i]
        self.go_to(cid, rid)
        return cid

    def use_queue(self, sample: str | None = None) -> str | None:
        """Follow a queue (:meth:`_use_queue`); the cases of the lesson left and taken are recounted."""
        before = self.lesson_cases() or set()
        try:
            return self._use_queue(sample)
        finally:
            for cid in sorted(before | (self.lesson_cases() or set())):
                self.restat(cid)

    def _use_queue(self, sample: str | None = None) -> str | None:
        """Follow a queue: the calibration sample named ``sample``, else the lesson (``lesson_name``, or the
        newest lesson of the dataset: every student the same units in the same order), else this annotator's
        assignment, if any.

        A queue is a list of unit ids (``Assignment.queues``: the annotator's,
        or ``"*"`` of a calibration sample, in its ranked order); the page
        walks the views (case, response) that hold them, in that order.
        Returns the assignment's name, or None (no queue: the case list).
        Raises :class:`SessionError` for a sample that does not exist.
        """
        self.state.queue_name, self.state.queue_units, self.state.queue, self.state.queue_lesson = None, [], [], False
        self.state._listed = self.state._unsearched = None
        units: tuple[str, ...] = ()
        is_lesson = False
        if sample:
            a = self.state.store.assignment(sample)
            if a is None or a.kind != "calibration_sample":
                names = sorted(x.name for x in self.state.store.assignments() if x.kind == "calibration_sample")
                raise SessionError(f"no calibration sample named {sample!r} (known: {', '.join(names) or 'none'})")
            units, name = a.queues.get("*", ()), a.name
        elif (lesson := self._lesson()) is not None:
            units, name, is_lesson = lesson.units, lesson.name, True
        else:
            if self.state.annotator is None:
                return None
            who, here = self.state.annotator, (self.state.dataset_name, "")
            mine = [a for a in self.state.store.assignments() if a.kind == "queue" and who in a.queues
                    and a.dataset in here]
            if not mine:
                return None
            a = max(mine, key=lambda x: (x.created_at, x.name))
            units, name = a.queues[self.state.annotator], a.name
        self.state.queue_sample = bool(sample)
        self.state.queue_lesson = is_lesson
        self.state.queue_units = [u for u in units if u in self.state.catalog]
        views: list[tuple[str, str | None]] = []
        for u in self.state.queue_units:
            cid, rid = self.state._group[u]
            view = (cid, rid or self.state._first_response(cid))
            if view not in views:
                views.append(view)
        self.state.queue_name, self.state.queue = name, views
        return name

    def _lesson(self) -> Any:
        """The lesson to follow (:func:`playground.lessons.lesson_for_page`), or None."""
        from ..lessons import LessonError, lesson_for_page

        try:
            return lesson_for_page(self.state.store, self.state.dataset_name, self.state.lesson_name)
        except LessonError as exc:
            raise SessionError(str(exc)) from None

    def queue_progress(self) -> Progress | None:
        """Progress on the queue's units (every dimension answered), or None without a queue."""
        return self._progress("", self.state.queue_units) if self.state.queue_name else None

    def _progress(self, case_id: str, ids: Sequence[str]) -> Progress:
        """Units with every dimension answered, and answered (unit, dimension) pairs, of ``ids``."""
        lu = lp = tp = 0
        for uid in ids:
            dims = self.state.catalog[uid].dimensions
            done = sum(self.state.answered(uid, d) for d in dims)
            lu, lp, tp = lu + (done == len(dims)), lp + done, tp + len(dims)
        return Progress(case_id, lu, len(ids), lp, tp)

    def has_unlabelled(self, case_id: str, response_id: str | None) -> bool:
        if case_id not in self.state._built and case_id in self.state._counts and self.state._counts[case_id][1] == 0:
            return False  # nothing to label in the case: no need to build it to know
        return any(not self.state.answered(u, d) for u, d in self.pairs(self.view_ids(case_id, response_id)))

    def next_unlabelled(self) -> tuple[str, str | None] | None:
        """Move to the first (case, response) with an unanswered unit, starting at the one on screen.

        The view on screen is never skipped: while it has something left it is
        the answer (no move).  Then the views after it, wrapping around: the
        annotator's queue when one is in use (:meth:`use_queue`), else the
        case list.  Returns ``(case_id, response_id)`` or None when everything
        is answered (no move).
        """
        views: list[tuple[str, str | None]] = list(self.state.queue)
        if not views:
            for cid in self.visible_ids():
                views += [(cid, r.response_id) for r in self.state.responses[cid]] or [(cid, None)]
        if not views:
            return None
        here = (self.state.case_id, self.state.response_id)
        start = views.index(here) if here in views else 0
        if here not in views and self.state.case_id in self.state.case_ids:
            pos = self.state.case_ids.index(self.state.case_id)
            start = next((i for i, (c, _) in enumerate(views) if self.state.case_ids.index(c) > pos), 0)
        for i in range(len(views)):
            cid, rid = views[(start + i) % len(views)]
            if self.has_unlabelled(cid, rid):
                self.go_to(cid, rid)
                return cid, rid
        return None

    def view_units(self, kind: str | None = None) -> list[ViewUnit]:
        """Units on screen: the case's passages, then the response's claims and facts (optionally one kind)."""
        if self.state.case_id is None:
            return []
        units = list(self.state._view_units.get((self.state.case_id, ""), []))
        if self.state.response_id:
            units += self.state._view_units.get((self.state.case_id, self.state.response_id), [])
        return [u for u in units if kind is None or u.kind == kind]

    def view_progress(self, case_id: str | None = None, response_id: str | None = None) -> Progress:
        """Progress on one view (default: the one on screen)."""
        cid = case_id or self.state.case_id
        rid = response_id if case_id else self.state.response_id
        return self._progress(cid or "", self.view_ids(cid, rid) if cid else [])
