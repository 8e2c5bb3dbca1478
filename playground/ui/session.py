"""The state of one labelling page, without widgets: what the playground shows and does.

A :class:`LabelSession` holds one person's view of the dataset: which case
and which response (scenario) is on screen, their labels, the four rates with
Wilson intervals for the case on screen and pooled over everything they
labelled, the weighted composite, the diagnosis and their agreement with the
automatic harness.  Every method is plain Python (no ipywidgets, IPython or
matplotlib), so the whole behaviour of the page is testable with pytest; the
views in :mod:`playground.ui.views` only draw it.

At start the session runs the harness once on the default configuration
(retrieval, then :func:`playground.harness.run.score_case` for every case),
which gives the retrieved passages people label and the automatic label of
every unit; a dataset of the label store is built per case instead (see "Big
datasets" below).  Labels live in the label store: every change is written at once
(:meth:`LabelSession.set_label`), and kept in memory in a
:class:`~playground.metrics.RateCounter`, so a toggle recomputes in well under
a millisecond plus the store write (see ``bench/bench_session.py``).

What is pooled
--------------
* ``this case``: the passages of the case on screen plus the claims and facts
  of the response on screen (the scenario).
* ``all labelled``: every current label of this annotator, over all cases and
  responses (a micro-average: a case with many claims weighs more).
* A read-only session (instructor dashboard) shows one annotator's labels or,
  with ``annotator=None``, the **consensus** of all annotators (majority per
  unit and dimension; ties are left out and counted in :attr:`Scores.ties`).
  Pooling raw labels of several people would count one unit several times.

Blind labelling
---------------
By default the harness's automatic label of a (unit, dimension) stays hidden
until this annotator has labelled that (unit, dimension), so it cannot anchor
the human judgement; the harness decision of a response stays hidden until
every unit of the response is labelled.  ``reveal_all=True`` (instructors,
teaching demos, read-only dashboards) shows everything.

Big datasets: built per case, on demand
---------------------------------------
A dataset imported into the label store may hold 10,000 samples (150,000
units).  :func:`session_for_dataset` opens it *lazily*: the harness result of
a case (:class:`~playground.ui.harness_cache.CaseHarness`, kept on disk per
case) and its units are made when the case is first needed — shown, walked
by a queue, or holding a label or comment of the person (or, for the
consensus, of anyone), so that the agreement table covers every labelled
unit with its automatic label known.  The case list's counts come from
:func:`unit_counts` (kept on disk per dataset revision), the rates from the
labels alone.  What the page shows is the same as when every case is built
at start (the shipped set, or ``harness_results`` given); only the verdict
filter needs every case's harness decision and computes the missing ones.
``session.catalog`` is a :class:`Catalog`: looking a unit up builds its case;
iterating it builds every case (correct, and as slow as building them all).

Stale labels
------------
A stored label whose unit text changed since (``text_hash`` differs) is not
a current judgement: it is kept in the store, left out of every rate and
shown beside the toggle as "earlier label (text changed)".  Setting the label
again makes it current.
"""
from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..golden import Dataset
from ..metrics import DEFAULT_THRESHOLDS
from ..model import Case, Passage, Response
from ..store import EXPORT_COLUMNS, UNSURE
from .harness_cache import compute_harness, hits_of
from .search import CaseSearch
from .session_catalog import Catalog, CatalogBuilder, unit_counts
from .session_labels import Labelling
from .session_navigation import Navigation
from .session_rates import Rates, agreement_from_table, may_export_everyone
from .session_reveal import Reveal
from .session_types import (
    DEFAULT_WEIGHTS,
    EXPORT_MIME,
    QUESTIONS,
    STATUSES,
    VERDICTS,
    CaseFilter,
    CaseRow,
    DatasetChangedError,
    LabelChange,
    Progress,
    Scores,
    SessionBase,
    SessionError,
    ViewUnit,
    format_weights,
    parse_weights,
    validate_annotator,
)
from .session_verdicts import VERDICT_VALUES, Verdicts

__all__ = [
    "DEFAULT_WEIGHTS",
    "EXPORT_COLUMNS",
    "EXPORT_MIME",
    "QUESTIONS",
    "STATUSES",
    "UNSURE",
    "VERDICTS",
    "VERDICT_VALUES",
    "CaseFilter",
    "CaseRow",
    "Catalog",
    "DatasetChangedError",
    "LabelChange",
    "LabelSession",
    "Progress",
    "Scores",
    "SessionError",
    "ViewUnit",
    "agreement_from_table",
    "compute_harness",
    "env_flag",
    "format_weights",
    "hits_of",
    "may_export_everyone",
    "open_session_dataset",
    "parse_weights",
    "session_for_dataset",
    "session_from_env",
    "unit_counts",
    "validate_annotator",
]


class LabelSession(SessionBase):
    """One page's state: see the module docstring.

    ``dataset``: the validated corpus and golden set; ``store``: an open
    :class:`~playground.store.LabelStore`; ``config``: the harness
    configuration (default ``configs/default.yaml``); ``annotator``: a name
    (validated) or None until the person gives one; ``harness_results``:
    precomputed ``score_case`` results by case id (computed when None);
    ``reveal_all``: show automatic labels before labelling; ``passages``:
    the passages of each case as a dataset brings them (used as they are
    instead of retrieval); ``dataset_name``: the name the page shows and puts
    in links (``golden`` for the shipped set).

    Lazy (see "Big datasets" in the module docstring): ``harness`` is an
    object whose ``result(case_id)`` gives a case's ``score_case`` result
    (:class:`~playground.ui.harness_cache.CaseHarness`), with ``passages``
    given and ``unit_counts`` optional (computed when None); ``harness_results``
    and ``hits`` are then not used.

    The parts, one job each, are objects composed in, each given this session as the state it reads and keeps
    (:class:`~playground.ui.session_types.SessionBase` declares that state; it has no behaviour):
    :attr:`catalog_builder` (:class:`~playground.ui.session_catalog.CatalogBuilder`: the catalog, built per case),
    :attr:`labelling` (:class:`~playground.ui.session_labels.Labelling`: the annotator, labels, comments, saving,
    undo), :attr:`navigation` (:class:`~playground.ui.session_navigation.Navigation`: the case list, the case on
    screen, queues), :attr:`reveal` (:class:`~playground.ui.session_reveal.Reveal`: blind labelling), :attr:`rates`
    (:class:`~playground.ui.session_rates.Rates`: the numbers, the URL state, export) and :attr:`verdicts`
    (:class:`~playground.ui.session_verdicts.Verdicts`: a response's verdict, note and failure-mode tags; the
    guidelines).  Their methods are this session's too, under their old names (the same bound methods).
    """

    #: The kind of text its claims are scored as (``playground.harness.score.KINDS``; an imported dataset's own).
    text_kind: str = "qa"

    def __init__(self, dataset: Dataset, store, config=None, annotator: str | None = None,
                 harness_results: Mapping[str, dict] | None = None, *, reveal_all: bool = False,
                 hits: Mapping[str, list] | None = None, passages: Mapping[str, Sequence[Passage]] | None = None,
                 dataset_name: str = "golden", harness: Any = None,
                 unit_counts: Mapping[str, Sequence[int]] | None = None):
        self._compose_parts()
        self.dataset = dataset
        self.dataset_name = dataset_name
        #: The store revision (SHA-256) of an imported dataset as opened ("" for golden); writes check it first.
        self.revision = ""
        #: Where the harness's results came from (``computed``, or the disk cache: ``read``).
        self.harness_source = "computed"
        self.store = store
        self.read_only = bool(store.read_only)
        self.reveal_all = reveal_all or self.read_only
        self._harness = harness
        #: The per-case harness of a lazy session (``describe()`` says how many cases were read or computed).
        self.harness = harness
        self.case_ids: list[str] = sorted(dataset.cases)
        # passages the dataset brought (an import) have no retrieval score: their header shows none
        self.given_passages = passages is not None
        if harness is not None:
            given = passages or {}
            self.results: dict[str, dict] = {}
            self.passages: Mapping[str, Sequence[Passage]] = given  # read per case, when the case is built
            self._hits: dict[str, list] = {}
        else:
            if passages is not None and hits is None:
                hits = hits_of({cid: passages.get(cid, []) for cid in dataset.cases})
            if hits is None or harness_results is None:
                computed_hits, computed = compute_harness(dataset, config, hits)
                hits = hits if hits is not None else computed_hits
                harness_results = harness_results if harness_results is not None else computed
            self.results = dict(harness_results)
            self.passages = {cid: [h.passage for h in hits.get(cid, [])] for cid in dataset.cases}
            self._hits = {cid: list(hits.get(cid, [])) for cid in dataset.cases}
        self.catalog_builder.build_catalog(unit_counts)
        self.weights: dict[str, float] = dict(DEFAULT_WEIGHTS)
        self.gates: dict[str, float] = {}
        self.thresholds: dict[str, float] = dict(DEFAULT_THRESHOLDS)
        self.filter = CaseFilter()
        self.search.prepare()  # fold every case's text now: no keystroke of the search box pays for it
        self.case_id: str | None = self.case_ids[0] if self.case_ids else None
        self.response_id: str | None = self._first_response(self.case_id)
        if self.case_id is not None:
            self.build_case(self.case_id)
        self.annotator: str | None = None
        self.queue_name: str | None = None
        self.queue_units: list[str] = []
        self.queue_sample = False
        # the lesson this page follows (``?lesson=NAME``; None: the newest lesson of the dataset)
        self.lesson_name: str | None = None
        self.queue_lesson = False
        self.queue: list[tuple[str, str | None]] = []
        self._ties: set[tuple[str, str]] = set()
        self._reset_labels()
        if annotator is not None or self.read_only:
            self.set_annotator(annotator)
        else:
            self.refresh()

    @property
    def built_cases(self) -> list[str]:
        """The cases whose units are built so far, sorted (:attr:`catalog_builder`'s)."""
        return self.catalog_builder.built_cases

    @property
    def can_label(self) -> bool:
        """Whether this page may label: a name is given and it is not read-only (:attr:`labelling`'s)."""
        return self.labelling.can_label

    @property
    def ties(self) -> int:
        """Consensus only: pairs whose annotators are split evenly (:attr:`labelling`'s)."""
        return self.labelling.ties

    @property
    def search(self) -> CaseSearch:
        """The case list's text search (:attr:`navigation`'s)."""
        return self.navigation.search

    @property
    def case(self) -> Case | None:
        """The case on screen."""
        return self.navigation.case

    @property
    def response(self) -> Response | None:
        """The response on screen."""
        return self.navigation.response

    def _compose_parts(self) -> None:
        """The parts (:attr:`catalog_builder`, :attr:`labelling`, :attr:`navigation`, :attr:`reveal`, :attr:`rates`,
        :attr:`verdicts`), and their methods under their old names (the same bound methods)."""
        self.catalog_builder = c = CatalogBuilder(self)
        self.build_case, self.build_cases, self.build_all, self.build_case_of, self._first_response = (
            c.build_case, c.build_cases, c.build_all, c.build_case_of, c.first_response)
        self.labelling = b = Labelling(self)
        self.set_annotator, self.dataset_changed, self.check_dataset, self.known_annotators = (
            b.set_annotator, b.dataset_changed, b.check_dataset, b.known_annotators)
        self.annotator_progress, self._build_labelled, self._reset_labels, self.refresh, self.refresh_case = (
            b.annotator_progress, b.build_labelled, b.reset_labels, b.refresh, b.refresh_case)
        self.label, self.answer, self.answered, self.comment, self.set_comment, self.stale_label = (
            b.label, b.answer, b.answered, b.comment, b.set_comment, b.stale_label)
        self.set_label, self._apply, self.undo, self.describe = b.set_label, b.apply, b.undo, b.describe
        self.navigation = g = Navigation(self)
        self._view_ids, self._pairs, self._restat, self.case_row, self.case_types, self.set_filter = (
            g.view_ids, g.pairs, g.restat, g.case_row, g.case_types, g.set_filter)
        self.cases, self.visible_ids, self.go_to, self.select_response, self.scenarios = (
            g.cases, g.visible_ids, g.go_to, g.select_response, g.scenarios)
        self.next_case, self.prev_case, self.use_queue, self.queue_progress = (
            g.next_case, g.prev_case, g.use_queue, g.queue_progress)
        self.has_unlabelled, self.next_unlabelled, self.view_units, self.view_progress = (
            g.has_unlabelled, g.next_unlabelled, g.view_units, g.view_progress)
        self.lesson_cases, self.lesson_responses = g.lesson_cases, g.lesson_responses
        self.reveal = r = Reveal(self)
        self.revealed, self.response_revealed, self.response_name, self.evidence = (
            r.revealed, r.response_revealed, r.response_name, r.evidence)
        self.auto_label, self.auto_detail, self.decision, self._group_of_response = (
            r.auto_label, r.auto_detail, r.decision, r.group_of_response)
        self.rates = n = Rates(self)
        self.rates_current, self.rates_response, self.rates_pooled, self.set_weights, self.set_gate = (
            n.rates_current, n.rates_response, n.rates_pooled, n.set_weights, n.set_gate)
        self.normalised_weights, self.composite, self.agreement, self.progress, self.scores = (
            n.normalised_weights, n.composite, n.agreement, n.progress, n.scores)
        self.url_params, self.export_rows, self.export_file, self.export_text = (
            n.url_params, n.export_rows, n.export_file, n.export_text)
        self.verdicts = v = Verdicts(self)
        self.response_unit, self.verdict, self.set_verdict, self.note, self.set_note = (
            v.response_unit, v.verdict, v.set_verdict, v.note, v.set_note)
        self.tags, self.taxonomy, self.set_tags, self.toggle_tag, self.add_tag = (
            v.tags, v.taxonomy, v.set_tags, v.toggle_tag, v.add_tag)
        self.failure_counts, self.authored, self.guidelines = v.failure_counts, v.authored, v.guidelines


def session_for_dataset(opened: Any, store: Any, *, reveal_all: bool = False, config: Any = None) -> LabelSession:
    """A session on an :class:`~playground.datasets.OpenDataset`: lazy for a dataset of the store.

    The shipped set (``golden``) is built whole at start, its harness run on
    retrieval as before.  An imported dataset is built per case on demand
    (module docstring, "Big datasets"): its harness results are kept per case
    and its :func:`unit_counts` per dataset under
    :func:`~playground.ui.harness_cache.dataset_fingerprint` (name, revision
    in the store, configuration, code), so a changed dataset is never read stale.
    """
    if opened.name == "golden":
        return LabelSession(opened.dataset, store, config, reveal_all=reveal_all, dataset_name=opened.name)
    from ..harness.config import load_config
    from ..harness.run_dataset import text_kind, with_text_kind
    from .harness_cache import CaseHarness, dataset_fingerprint

    config = with_text_kind(config or load_config(), opened.payload)  # the dataset's kind of text (issue 26)
    key = dataset_fingerprint(opened.name, opened.revision or "", config)
    harness = CaseHarness(opened.dataset, opened.passages, config, key)
    kept = harness.files.get("counts")
    counts = kept.get("counts") if isinstance(kept, dict) and kept.get("revision") == opened.revision else None
    if not isinstance(counts, dict) or set(counts) != set(opened.dataset.cases):
        counts = unit_counts(opened.dataset, opened.passages)
        harness.files.put("counts", {"revision": opened.revision, "counts": counts})
    session = LabelSession(opened.dataset, store, config, reveal_all=reveal_all, passages=opened.passages,
                           dataset_name=opened.name, harness=harness, unit_counts=counts)
    session.revision = opened.revision or ""
    session.text_kind = text_kind(opened.payload)
    session.harness_source = harness.describe()
    return session


def open_session_dataset(name: str | None, store: Any, *, reveal_all: bool = False, root: str | None = None
                         ) -> LabelSession:
    """A session on the dataset ``name`` (None or ``golden``: the shipped set).

    Uses :func:`playground.datasets.open_dataset` (an imported dataset brings
    its own passages); an unknown name is a :class:`SessionError` naming the known ones.
    """
    from ..datasets import open_dataset

    try:
        opened = open_dataset(name or None, store, root)
    except ValueError as exc:  # DatasetNotFound names the known datasets
        raise SessionError(str(exc)) from None
    return session_for_dataset(opened, store, reveal_all=reveal_all)  # an imported dataset: built per case


def session_from_env(root: str | os.PathLike | None = None, db: str | None = None, read_only: bool | None = None,
                     annotator: str | None = None, reveal_all: bool = False, dataset: str | None = None,
                     create: bool = True) -> LabelSession:
    """A session on ``$PLAYGROUND_ROOT`` (or the repository's data) and ``$PLAYGROUND_DB``.

    ``read_only`` defaults to ``$PLAYGROUND_READ_ONLY`` (``1``/``true``/``yes``);
    ``dataset`` names a dataset of the store (None or ``golden``: the shipped set);
    ``create=False`` (a page's kernel) never creates a store: ``playground serve``
    creates it once, so a store deleted meanwhile is an error, not a fresh empty file.
    """
    from ..golden import load_dataset
    from ..store import open_store

    root = root or os.environ.get("PLAYGROUND_ROOT") or None
    if read_only is None:
        read_only = env_flag("PLAYGROUND_READ_ONLY")
    store = open_store(db or None, read_only=read_only, create=create)
    if dataset not in (None, "", "golden"):
        session = open_session_dataset(dataset, store, reveal_all=reveal_all,
                                       root=None if root is None else str(root))
        if annotator is not None:
            session.set_annotator(annotator)
        return session
    from .harness_cache import cached_harness

    dataset_ = load_dataset(None if root is None else Path(root))
    hits, results, how = cached_harness(dataset_)
    session = LabelSession(dataset_, store, annotator=annotator, reveal_all=reveal_all, harness_results=results,
                           hits=hits)
    session.harness_source = how
    return session


def env_flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in ("1", "true", "yes", "on")
