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
import unicodedata
from collections.abc import Hashable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from ..claims import split_claims
from ..golden import Dataset, passage_unit, response_units
from ..metrics import (
    DEFAULT_THRESHOLDS,
    DIMENSION_ORDER,
    Agreement,
    Composite,
    Diagnosis,
    DimensionRate,
    RateCounter,
    composite,
    diagnose,
    rate_from_counts,
)
from ..model import DIMENSION_NAMES, DIMENSIONS, UNIT_DIMENSIONS, Case, Passage, Response, Unit
from ..store import EXPORT_COLUMNS, UNSURE, InvalidLabelError, check_annotator, export_table, format_bytes

__all__ = [
    "DEFAULT_WEIGHTS",
    "EXPORT_COLUMNS",
    "EXPORT_MIME",
    "QUESTIONS",
    "STATUSES",
    "UNSURE",
    "VERDICTS",
    "CaseFilter",
    "CaseRow",
    "Catalog",
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
    "parse_weights",
    "session_for_dataset",
    "session_from_env",
    "unit_counts",
    "validate_annotator",
]

#: The page's download formats (``playground.store.io.format_bytes``) and their media types.
EXPORT_MIME: dict[str, str] = {"csv": "text/csv", "jsonl": "application/x-ndjson",
                               "parquet": "application/vnd.apache.parquet"}

#: Statuses of a case for one annotator.
STATUSES: tuple[str, ...] = ("unlabelled", "partial", "done")
#: Verdicts of the harness decision.
VERDICTS: tuple[str, ...] = ("ACCEPT", "REVIEW", "REJECT")
#: The question each label answers, for the page.
QUESTIONS: dict[str, str] = {
    "relevant": "relevant to the question?",
    "supported": "supported by the retrieved passages?",
    "correct": "correct against the reference?",
    "covered": "covered by the response?",
}
DEFAULT_WEIGHTS: dict[str, float] = dict.fromkeys(DIMENSION_ORDER, 0.25)


class SessionError(ValueError):
    """A request the session cannot honour (no annotator, read-only, unknown unit ...); the message is for people."""


def validate_annotator(name: Any) -> str:
    """The annotator name a person typed, tidied (NFC, surrounding and repeated spaces removed), then checked.

    The check is the store's one rule for names everywhere
    (:func:`playground.store.check_annotator`: at most 64 characters, no
    control or format characters, not one of
    :data:`playground.store.RESERVED_ANNOTATORS`); a refused name raises
    :class:`SessionError` with the store's reason.  A name is an identity, not
    authentication: anyone can type any name.
    """
    if not isinstance(name, str):
        raise SessionError("Type your name first.")
    name = " ".join(unicodedata.normalize("NFC", name).split())
    if not name:
        raise SessionError("Type your name first.")
    try:
        return check_annotator(name)
    except InvalidLabelError as exc:
        raise SessionError(f"That name cannot be used: {exc}.") from None


@dataclass(frozen=True)
class ViewUnit:
    """A unit as the page shows it: its position, text and what the harness said."""

    unit: Unit
    kind: str           # passage | claim | fact
    index: int          # 0-based position among its kind on the page
    title: str = ""     # passage: article title and locator; fact: fact id
    detail: str = ""    # passage: rank and retrieval score
    passage: Passage | None = None


@dataclass(frozen=True)
class LabelChange:
    """One change of one label, as the session applied it."""

    unit_id: str
    dimension: str
    old: int | None
    new: int | None
    case_id: str
    response_id: str
    action: str  # set | clear | undo
    #: True when the store's previous value was not what this page showed (another tab changed it).
    conflict: bool = False


@dataclass(frozen=True)
class CaseRow:
    """A case in the case list, with this annotator's progress on it."""

    case_id: str
    case_type: str
    query: str
    status: str
    labelled_units: int
    total_units: int
    labelled_pairs: int
    total_pairs: int
    disagreements: int
    verdicts: tuple[str, ...]


@dataclass(frozen=True)
class Progress:
    """Labelled versus total units and (unit, dimension) pairs."""

    labelled_units: int
    total_units: int
    labelled_pairs: int
    total_pairs: int
    stale: int = 0

    @property
    def fraction(self) -> float:
        return self.labelled_units / self.total_units if self.total_units else 0.0


@dataclass(frozen=True)
class CaseFilter:
    """Which cases the case list shows; ``None``/``False`` means no restriction."""

    case_type: str | None = None
    status: str | None = None
    verdict: str | None = None
    disagreement: bool = False


@dataclass(frozen=True)
class Scores:
    """Everything the score panel shows, recomputed after each change."""

    current: dict[str, DimensionRate]
    pooled: dict[str, DimensionRate]
    composite_current: Composite | None
    composite_pooled: Composite | None
    composite_error: str
    diagnosis_current: Diagnosis
    diagnosis_pooled: Diagnosis
    agreement: dict[str, Agreement]
    progress: Progress
    weights: dict[str, float]
    normalised_weights: dict[str, float]
    gates: dict[str, float]
    ties: int = 0


def agreement_from_table(table: Sequence[int], confidence: float = 0.95) -> Agreement:
    """Agreement from the (human, harness) table ``(n_00, n_01, n_10, n_11)`` (rows human), in O(1).

    The same numbers as :func:`playground.metrics.agreement` on the labels the
    table counts (kappa by :func:`playground.stats.cohens_kappa_table`,
    ``PABAK = 2 p_o - 1``, ``MCC = (n_11 n_00 - n_10 n_01) / sqrt(n_1. n_.1 n_0. n_.0)``), without the list of
    disagreeing units, which the page does not show.
    """
    import math

    from ..stats import cohens_kappa_table

    n00, n01, n10, n11 = (int(x) for x in table)
    conf = ((n00, n01), (n10, n11))
    k = cohens_kappa_table(conf, confidence)
    n = n00 + n01 + n10 + n11
    pabak = None if n == 0 else 2 * (n00 + n11) / n - 1
    denominator = (n11 + n10) * (n11 + n01) * (n00 + n10) * (n00 + n01)
    mcc = None if denominator == 0 else (n11 * n00 - n10 * n01) / math.sqrt(denominator)
    return Agreement(n, 0, 0, k, k.agreement, conf, [], pabak, mcc)


# --- the harness, once ----------------------------------------------------------------------------


def hits_of(passages: Mapping[str, Sequence[Passage]]) -> dict[str, list]:
    """Given passages as retrieval hits (rank in the order given, score 0), for a dataset that brings its own."""
    from ..harness.retrieve import Hit

    return {cid: [Hit(p, 0.0, i + 1) for i, p in enumerate(ps)] for cid, ps in passages.items()}


def compute_harness(dataset: Dataset, config=None, hits: Mapping[str, list] | None = None
                    ) -> tuple[dict[str, list], dict[str, dict]]:
    """Retrieve (unless ``hits`` are given) and score every case on ``config``: ``(hits, results)`` by case id.

    Authored responses and BM25 only: the playground never calls a model.
    """
    from ..harness.config import load_config
    from ..harness.retrieve import retrieve_cases
    from ..harness.run import score_case

    config = config or load_config()
    hits = dict(hits) if hits is not None else retrieve_cases(dataset, config)
    results = {cid: score_case(dataset.cases[cid], hits[cid], dataset.responses_for(cid), config)
               for cid in sorted(dataset.cases)}
    return hits, results


def unit_counts(dataset: Dataset, passages: Mapping[str, Sequence[Passage]]) -> dict[str, list[int]]:
    """``case_id -> [units, pairs]``: the case's units (its passages, then per response claims and facts) and
    (unit, dimension) pairs, counted without building them (what :meth:`LabelSession.case_row` totals)."""
    dims = {kind: len(d) for kind, d in UNIT_DIMENSIONS.items()}
    out: dict[str, list[int]] = {}
    count = getattr(passages, "count", None)  # a StoredPassages counts its contexts without making passages
    for cid in sorted(dataset.cases):
        n_facts = len(dataset.cases[cid].reference_facts)
        units = n_passages = count(cid) if count is not None and cid in passages else len(passages.get(cid, ()))
        pairs = n_passages * dims["passage"]
        for response in dataset.responses_for(cid):
            n_claims = len(split_claims(response.text, response.response_id))
            units += n_claims + n_facts
            pairs += n_claims * dims["claim"] + n_facts * dims["fact"]
        out[cid] = [units, pairs]
    return out


class Catalog(Mapping[str, Unit]):
    """``unit_id -> Unit`` of a session, built per case: looking up a unit of a case not built yet builds it.

    ``len`` is the dataset's number of units (counted, nothing built);
    iterating builds every case.  :meth:`built` is what is built so far.
    """

    def __init__(self, session: LabelSession) -> None:
        self._units: dict[str, Unit] = {}
        self._session = session

    def __getitem__(self, unit_id: str) -> Unit:
        unit = self._units.get(unit_id)
        if unit is None and isinstance(unit_id, str) and self._session.build_case_of(unit_id):
            unit = self._units.get(unit_id)
        if unit is None:
            raise KeyError(unit_id)
        return unit

    def __iter__(self) -> Iterator[str]:
        self._session.build_all()
        return iter(list(self._units))

    def __len__(self) -> int:
        return self._session.total_units

    def built(self) -> dict[str, Unit]:
        """The units built so far (of the cases built so far)."""
        return self._units


# --- the session ------------------------------------------------------------------------------------


class LabelSession:
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
    """

    def __init__(self, dataset: Dataset, store, config=None, annotator: str | None = None,
                 harness_results: Mapping[str, dict] | None = None, *, reveal_all: bool = False,
                 hits: Mapping[str, list] | None = None, passages: Mapping[str, Sequence[Passage]] | None = None,
                 dataset_name: str = "golden", harness: Any = None,
                 unit_counts: Mapping[str, Sequence[int]] | None = None):
        self.dataset = dataset
        self.dataset_name = dataset_name
        #: Where the harness's results came from (``computed``, or the disk cache: ``read``).
        self.harness_source = "computed"
        self.store = store
        self.read_only = bool(store.read_only)
        self.reveal_all = reveal_all or self.read_only
        self._harness = harness
        #: The per-case harness of a lazy session (``describe()`` says how many cases were read or computed).
        self.harness = harness
        self.case_ids: list[str] = sorted(dataset.cases)
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
        self._build_catalog(unit_counts)
        self.weights: dict[str, float] = dict(DEFAULT_WEIGHTS)
        self.gates: dict[str, float] = {}
        self.thresholds: dict[str, float] = dict(DEFAULT_THRESHOLDS)
        self.filter = CaseFilter()
        self.case_id: str | None = self.case_ids[0] if self.case_ids else None
        self.response_id: str | None = self._first_response(self.case_id)
        if self.case_id is not None:
            self.build_case(self.case_id)
        self.annotator: str | None = None
        self.queue_name: str | None = None
        self.queue_units: list[str] = []
        self.queue_sample = False
        self.queue: list[tuple[str, str | None]] = []
        self._evidence: dict[str, Any] = {}
        self._ties: set[tuple[str, str]] = set()
        self._reset_labels()
        if annotator is not None or self.read_only:
            self.set_annotator(annotator)
        else:
            self.refresh()

    # --- catalog and automatic labels ---------------------------------------------------------------
    def _build_catalog(self, counts: Mapping[str, Sequence[int]] | None) -> None:
        ds = self.dataset
        self.catalog = Catalog(self)
        self._units = self.catalog.built()
        self.responses: dict[str, list[Response]] = {}
        self._view_units: dict[tuple[str, str], list[ViewUnit]] = {}
        self._case_units: dict[str, list[str]] = {}
        self._response_units: dict[str, list[str]] = {}
        self._group: dict[str, tuple[str, str]] = {}
        self.auto: dict[tuple[str, str], int] = {}
        self.auto_score: dict[tuple[str, str], float | None] = {}
        self.key: dict[tuple[str, str], int | None] = {}
        self.decisions: dict[str, dict] = {}
        self.variants: dict[str, str] = {}
        self._built: set[str] = set()
        self._counts: dict[str, tuple[int, int]] = {}
        for cid in self.case_ids:
            responses = ds.responses_for(cid)
            if len(responses) > 1:
                responses.sort(key=lambda r: r.response_id)
            self.responses[cid] = responses
            for response in responses:
                self.variants[response.response_id] = response.variant
        if self._harness is None:
            for cid in self.case_ids:
                self._build_case(cid)
        else:
            if counts is None or set(counts) != set(self.case_ids):
                counts = unit_counts(ds, self.passages)
            self._counts = {cid: (int(counts[cid][0]), int(counts[cid][1])) for cid in self.case_ids}
        self.total_units = sum(c[0] for c in self._counts.values())
        self.total_pairs = sum(c[1] for c in self._counts.values())

    @property
    def built_cases(self) -> list[str]:
        """The cases whose units are built so far, sorted (every case unless lazy)."""
        return sorted(self._built)

    def build_case(self, case_id: str) -> None:
        """Build the units of ``case_id`` and their automatic labels, if not built yet (lazy sessions)."""
        if case_id not in self._built and case_id in self.dataset.cases:
            self._build_case(case_id)
            if hasattr(self, "_case_stats"):  # built after the labels were loaded: it holds none of them
                self._restat(case_id)

    def build_cases(self, case_ids: Iterable[str]) -> None:
        for cid in sorted(set(case_ids)):
            self.build_case(cid)

    def build_all(self) -> None:
        """Build every case (the verdict filter, iterating the catalog)."""
        self.build_cases(self.case_ids)

    def build_case_of(self, unit_id: str) -> bool:
        """Build the case a unit id names: its id starts with ``<case id>:`` or ``<response id>:``.

        Every such prefix is tried, shortest first, until the unit is built;
        returns whether it was.
        """
        start = 0
        while (i := unit_id.find(":", start)) >= 0:
            prefix = unit_id[:i]
            start = i + 1
            cid = prefix if prefix in self.dataset.cases else None
            if cid is None and prefix in self.dataset.responses:
                cid = self.dataset.responses[prefix].case_id
            if cid is not None and cid not in self._built:
                self.build_case(cid)
                if unit_id in self._units:
                    return True
        return False

    def _case_hits(self, cid: str) -> list:
        hits = self._hits.get(cid)
        if hits is None:
            from .harness_cache import KeptHit

            hits = self._hits[cid] = [KeptHit(p, 0.0, i + 1) for i, p in enumerate(self.passages.get(cid, []))]
        return hits

    def _build_case(self, cid: str) -> None:
        ds = self.dataset
        case = ds.cases[cid]
        result = self.results.get(cid)
        if result is None and self._harness is not None:
            result = self.results[cid] = self._harness.result(cid)
        if result is None:
            raise SessionError(f"no harness result for case {cid}")
        self._built.add(cid)
        passage_rows = {p["unit_id"]: p for p in result["passages"]}
        case_units: list[ViewUnit] = []
        for i, hit in enumerate(self._case_hits(cid)):
            unit = passage_unit(case, hit.passage)
            row = passage_rows.get(unit.unit_id, {})
            self._add(unit, cid, "")
            self.auto[(unit.unit_id, "relevant")] = int(row.get("relevant", 0))
            self.auto_score[(unit.unit_id, "relevant")] = row.get("relevance")
            self.key[(unit.unit_id, "relevant")] = (
                None if "from_expected_source" not in row else int(bool(row["from_expected_source"])))
            loc = hit.passage.locator
            title = hit.passage.title or loc.slug
            case_units.append(ViewUnit(
                unit, "passage", i, f"{title} — {loc.heading} ({loc.tenant}/{loc.slug})",
                f"rank {hit.rank}, BM25 {hit.score:.2f}"
                + (f", updated {hit.passage.updated}" if hit.passage.updated else ""), hit.passage))
        self._case_units[cid] = [v.unit.unit_id for v in case_units]
        responses = self.responses[cid]
        scored = {r["response_id"]: r for r in result["responses"]}
        self._view_units[(cid, "")] = case_units
        n_units, n_pairs = len(case_units), len(case_units) * len(UNIT_DIMENSIONS["passage"])
        for response in responses:
            rid = response.response_id
            rrow = scored.get(rid, {"claims": [], "facts": [], "decision": None})
            self.decisions[rid] = rrow.get("decision") or {}
            claims = {c["unit_id"]: c for c in rrow["claims"]}
            facts = {f["unit_id"]: f for f in rrow["facts"]}
            units = []
            ci = fi = 0
            fact_of = {f"{rid}::{f.fact_id}": f for f in case.reference_facts}
            for unit in response_units(case, response):
                self._add(unit, cid, rid)
                if unit.unit_kind == "claim":
                    c = claims.get(unit.unit_id, {})
                    for dim, score in (("supported", "support"), ("correct", "correctness")):
                        self.auto[(unit.unit_id, dim)] = int(c.get(dim, 0))
                        self.auto_score[(unit.unit_id, dim)] = c.get(score)
                        self.key[(unit.unit_id, dim)] = c.get(f"key_{dim}")
                    units.append(ViewUnit(unit, "claim", ci))
                    ci += 1
                else:
                    f = facts.get(unit.unit_id, {})
                    self.auto[(unit.unit_id, "covered")] = int(f.get("covered", 0))
                    self.auto_score[(unit.unit_id, "covered")] = None
                    self.key[(unit.unit_id, "covered")] = f.get("key_covered")
                    fact = fact_of.get(unit.unit_id)
                    units.append(ViewUnit(unit, "fact", fi, fact.fact_id if fact else ""))
                    fi += 1
            self._response_units[rid] = [v.unit.unit_id for v in units]
            self._view_units[(cid, rid)] = units
            n_units += len(units)
            n_pairs += sum(len(v.unit.dimensions) for v in units)
        if self._harness is None:
            self._counts[cid] = (n_units, n_pairs)

    def _add(self, unit: Unit, case_id: str, response_id: str) -> None:
        self._units[unit.unit_id] = unit
        self._group[unit.unit_id] = (case_id, response_id)

    def _first_response(self, case_id: str | None) -> str | None:
        if case_id is None:
            return None
        responses = self.responses.get(case_id) or []
        return responses[0].response_id if responses else None

    # --- annotator and labels ------------------------------------------------------------------------
    def set_annotator(self, name: str | None) -> str | None:
        """Label (or, read-only, view) as ``name``; loads their labels from the store.

        ``None`` is allowed only on a read-only session: the consensus of all
        annotators.  Returns the tidied name.
        """
        if name is None:
            if not self.read_only:
                raise SessionError("Type your name first.")
            self.annotator = None
        else:
            self.annotator = validate_annotator(name)
        self.refresh()
        return self.annotator

    @property
    def can_label(self) -> bool:
        return self.annotator is not None and not self.read_only

    def known_annotators(self) -> list[str]:
        return self.store.annotators()

    def annotator_progress(self) -> list[tuple[str, Progress]]:
        """Every annotator's progress on this dataset (for an instructor's dashboard), by name."""
        out = []
        self._build_labelled(everyone=True)
        for name in self.known_annotators():  # the store never lists the reserved names
            p = self.store.progress(self._units, annotator=name)
            # every labelled unit is built; the units of cases not built yet are counted, not built
            out.append((name, Progress(p.labelled_units, self.total_units, p.labelled_pairs, self.total_pairs,
                                       p.stale_pairs)))
        return out

    def _build_labelled(self, everyone: bool = False, labels: Iterable[Any] | None = None) -> None:
        """Build every case holding a label or comment of this annotator (``everyone``: of anyone)."""
        if self._harness is None:
            return
        who = None if everyone else self.annotator
        if labels is None:
            labels = self.store.labels(annotator=who, include_unsure=True)
        cases = {lb.case_id for lb in labels}
        cases |= {c.case_id for c in self.store.comments(annotator=who)}
        self.build_cases(c for c in cases if c in self.dataset.cases)

    def _reset_labels(self) -> None:
        self.counter = RateCounter(cast(Mapping[Hashable, Hashable], self._group))
        self.labels: dict[tuple[str, str], int] = {}
        self.unsure: set[tuple[str, str]] = set()
        self.comments: dict[str, str] = {}
        self.stale: dict[tuple[str, str], int] = {}
        # (human, harness) table per label dimension, kept as labels change: agreement in O(1) per toggle
        self._tables: dict[str, list[int]] = {d: [0, 0, 0, 0] for d in DIMENSIONS}
        self._agreement_cache: dict[str, Agreement] = {}
        self._case_stats: dict[str, tuple] = {}
        self._rows: dict[str, tuple[tuple, CaseRow]] = {}
        self._listed: tuple[CaseFilter, list[CaseRow]] | None = None
        self._ties = set()

    def _my_labels(self, **where: Any) -> list:
        """This annotator's stored labels, unsure ones included."""
        return list(self.store.labels(annotator=self.annotator, **where, include_unsure=True))

    def _load_comments(self, unit_ids: Iterable[str] | None = None) -> dict[str, str]:
        if self.annotator is None:
            return {}
        ids = None if unit_ids is None else list(unit_ids)
        return {c.unit_id: c.text for c in self.store.comments(unit_ids=ids, annotator=self.annotator)
                if c.unit_id in self._units and c.text}

    def refresh(self) -> None:
        """Reload this annotator's labels (or the consensus) from the store: another tab's changes appear."""
        self._reset_labels()
        if self.annotator is None and self.read_only:
            self._build_labelled(everyone=True)
            for row in self.store.consensus(catalog=self._units):
                if row.value is None:
                    self._ties.add((row.unit_id, row.dimension))
                else:
                    self._put(row.unit_id, row.dimension, row.value)
        elif self.annotator is not None:
            mine = self._my_labels()
            self._build_labelled(labels=mine)
            self.comments = self._load_comments()
            for label in mine:
                unit = self._units.get(label.unit_id)
                if unit is None or label.dimension not in unit.dimensions:
                    continue  # orphaned: a unit of another configuration or dataset
                if unit.text_hash != label.text_hash:
                    self.stale[(label.unit_id, label.dimension)] = label.value
                    continue
                self._put(label.unit_id, label.dimension, label.value)
        for cid in self.case_ids:
            self._restat(cid)

    def refresh_case(self, case_id: str | None = None) -> int:
        """Reload one case's labels from the store (cheap: one query); returns how many changed.

        The page calls it when a case comes on screen, so a second tab's
        changes show up without a full :meth:`refresh`.
        """
        cid = case_id or self.case_id
        if cid is None or (self.annotator is None and not self.read_only):
            return 0
        self.build_case(cid)
        ids = list(self._case_units.get(cid, []))
        for r in self.responses.get(cid, []):
            ids += self._response_units.get(r.response_id, [])
        fresh: dict[tuple[str, str], int] = {}
        stale: dict[tuple[str, str], int] = {}
        if self.annotator is None:
            here = set(ids)
            self._ties -= {k for k in self._ties if k[0] in here}
            for row in self.store.consensus(catalog=self._units, unit_ids=ids):
                if row.value is None:
                    self._ties.add((row.unit_id, row.dimension))
                else:
                    fresh[(row.unit_id, row.dimension)] = row.value
        else:
            for label in self._my_labels(case_id=cid):
                unit = self._units.get(label.unit_id)
                if unit is None or label.dimension not in unit.dimensions:
                    continue
                target = fresh if unit.text_hash == label.text_hash else stale
                target[(label.unit_id, label.dimension)] = label.value
        changed = 0
        if self.annotator is not None:
            here_comments = self._load_comments(ids)
            for uid in ids:
                if self.comments.get(uid, "") != here_comments.get(uid, ""):
                    changed += 1
                    if uid in here_comments:
                        self.comments[uid] = here_comments[uid]
                    else:
                        self.comments.pop(uid, None)
        for uid, dim in self._pairs(ids):
            key = (uid, dim)
            new = fresh.get(key)
            if self.answer(uid, dim) != new:
                self._put(uid, dim, new)
                changed += 1
            if key in stale and new is None:
                self.stale[key] = stale[key]
            elif key not in stale:
                self.stale.pop(key, None)
        if changed:
            self._restat(cid)
        return changed

    @property
    def ties(self) -> int:
        """Consensus only: (unit, dimension) pairs whose annotators are split evenly (left out of every rate)."""
        return len(self._ties)

    def _put(self, unit_id: str, dimension: str, value: int | None) -> None:
        """Record an answer (1, 0, :data:`UNSURE` or None) in memory: labels, unsure set, counts and agreement."""
        key = (unit_id, dimension)
        old = self.labels.get(key)
        auto = self.auto.get(key)
        if old is not None and auto is not None:
            self._tables[dimension][2 * old + auto] -= 1
        if value is None or value == UNSURE:
            self.labels.pop(key, None)
            if value == UNSURE:
                self.unsure.add(key)
                self.stale.pop(key, None)
            else:
                self.unsure.discard(key)
            self.counter.set(unit_id, dimension, None)  # unsure is counted in no rate
        else:
            v = int(value)
            self.labels[key] = v
            self.unsure.discard(key)
            self.stale.pop(key, None)
            if auto is not None:
                self._tables[dimension][2 * v + auto] += 1
            self.counter.set(unit_id, dimension, v)
        self._agreement_cache.pop(dimension, None)

    def label(self, unit_id: str, dimension: str) -> int | None:
        """This annotator's current label (1, 0) or None (no label, or unsure)."""
        return self.labels.get((unit_id, dimension))

    def answer(self, unit_id: str, dimension: str) -> int | None:
        """This annotator's answer: 1, 0, :data:`UNSURE` or None (not answered)."""
        key = (unit_id, dimension)
        if key in self.unsure:
            return UNSURE
        return self.labels.get(key)

    def answered(self, unit_id: str, dimension: str) -> bool:
        """Whether this annotator gave an answer (an unsure one counts: they have looked at it)."""
        key = (unit_id, dimension)
        return key in self.labels or key in self.unsure

    def comment(self, unit_id: str) -> str:
        """This annotator's comment on a unit ("" when none)."""
        return self.comments.get(unit_id, "")

    def set_comment(self, unit_id: str, text: str) -> bool:
        """Save a comment on a unit ("" removes it); returns whether the store changed."""
        if self.read_only:
            raise SessionError("This page is read-only: comments cannot be changed here.")
        if self.annotator is None:
            raise SessionError("Type your name first: comments are saved under it.")
        unit = self.catalog.get(unit_id)
        if unit is None:
            raise SessionError(f"unknown unit {unit_id!r}")
        text = str(text).strip()
        event = self.store.set_comment(self.annotator, unit, text)
        if text:
            self.comments[unit_id] = text
        else:
            self.comments.pop(unit_id, None)
        return event is not None

    def stale_label(self, unit_id: str, dimension: str) -> int | None:
        """An earlier label of this unit whose text has changed since, or None."""
        return self.stale.get((unit_id, dimension))

    def _unit(self, unit_id: str, dimension: str) -> Unit:
        unit = self.catalog.get(unit_id)
        if unit is None:
            raise SessionError(f"unknown unit {unit_id!r}")
        if dimension not in unit.dimensions:
            raise SessionError(f"{unit.unit_kind} units are not labelled on {dimension!r}")
        return unit

    def set_label(self, unit_id: str, dimension: str, value: int | None) -> LabelChange | None:
        """Save ``value`` (1, 0, or None to clear) at once; returns the change, or None if nothing changed."""
        if self.read_only:
            raise SessionError("This page is read-only (an instructor dashboard): labels cannot be changed here.")
        if self.annotator is None:
            raise SessionError("Type your name first: labels are saved under it.")
        if value is not None and value not in (0, 1, UNSURE):
            raise SessionError(f"a label is 1 (yes), 0 (no), {UNSURE} (unsure) or None (clear), not {value!r}")
        unit = self._unit(unit_id, dimension)
        shown = self.answer(unit_id, dimension)
        event = self.store.set_label(self.annotator, unit, dimension, None if value is None else int(value))
        if event is None:
            # Nothing changed in the store; make sure the page agrees with it.
            if shown != (None if value is None else int(value)):
                self._apply(unit_id, dimension, value)
            return None
        self._apply(unit_id, dimension, event.new_value)
        cid, rid = self._group[unit_id]
        return LabelChange(unit_id, dimension, event.old_value, event.new_value, cid, rid, event.action,
                           conflict=event.old_value != shown)

    def _apply(self, unit_id: str, dimension: str, value: int | None) -> None:
        self._put(unit_id, dimension, value)
        cid = self._group[unit_id][0]
        self._restat(cid)

    def undo(self) -> LabelChange | None:
        """Revert this annotator's last change (in the store, whichever tab made it); None when nothing is left."""
        if self.read_only:
            raise SessionError("This page is read-only: nothing to undo.")
        if self.annotator is None:
            raise SessionError("Type your name first.")
        event = self.store.undo(self.annotator)
        if event is None:
            return None
        unit = self.catalog.get(event.unit_id)
        if unit is None:
            self.refresh()
            return LabelChange(event.unit_id, event.dimension, event.old_value, event.new_value, event.case_id, "",
                               "undo")
        if event.new_value is not None and event.text_hash != unit.text_hash:
            self.refresh()  # restored a label of older text: it is stale, not current
        else:
            self._apply(event.unit_id, event.dimension, event.new_value)
        cid, rid = self._group[event.unit_id]
        return LabelChange(event.unit_id, event.dimension, event.old_value, event.new_value, cid, rid, "undo")

    def describe(self, unit_id: str) -> str:
        """A short name of a unit for messages: ``claim 2 of GC-0001 (confident hallucination)``."""
        if unit_id not in self._group:
            return unit_id
        cid, rid = self._group[unit_id]
        for vu in self._view_units.get((cid, rid), []):
            if vu.unit.unit_id == unit_id:
                where = f" of {cid}" + (f" ({self.response_name(rid)})" if rid else "")
                return f"{vu.kind} {vu.index + 1}{where}"
        return unit_id

    # --- what the harness said (blind until labelled) ------------------------------------------------------
    def revealed(self, unit_id: str, dimension: str) -> bool:
        return self.reveal_all or self.answered(unit_id, dimension)

    def response_revealed(self, response_id: str) -> bool:
        """Blind mode: a response's variant and verdict show once every unit of it is answered (or reveal is on)."""
        if self.reveal_all:
            return True
        cid = self._group_of_response(response_id)
        return all(self.answered(u, d) for u, d in self._pairs(self._view_ids(cid, response_id)))

    def response_name(self, response_id: str) -> str:
        """``Response 2`` while blind; ``Response 2 · confident hallucination`` once revealed."""
        cid = self._group_of_response(response_id)
        ids = [r.response_id for r in self.responses.get(cid, [])]
        name = f"Response {ids.index(response_id) + 1}" if response_id in ids else response_id
        if self.response_revealed(response_id):
            name += f" · {self.variants.get(response_id, '').replace('_', ' ')}"
        return name

    def evidence(self, unit_id: str) -> Any:
        """What the harness's support score of a claim rests on (``playground.harness.score.SupportDetail``).

        None for other units, and in blind mode until the claim's "supported" is answered.
        """
        unit = self.catalog.get(unit_id)
        if unit is None or unit.unit_kind != "claim" or not self.revealed(unit_id, "supported"):
            return None
        cached = self._evidence.get(unit_id)
        if cached is None:
            from ..harness.score import support_detail

            cid = self._group[unit_id][0]
            cached = self._evidence[unit_id] = support_detail(unit.text, [p.text for p in self.passages.get(cid, [])])
        return cached

    def auto_label(self, unit_id: str, dimension: str) -> int | None:
        """The harness's label, or None while it is hidden (blind mode, not labelled yet)."""
        if not self.revealed(unit_id, dimension):
            return None
        return self.auto.get((unit_id, dimension))

    def auto_detail(self, unit_id: str, dimension: str) -> dict[str, Any] | None:
        """``{label, score, key}`` of the harness and the authored answer key; None while hidden."""
        if not self.revealed(unit_id, dimension):
            return None
        return {"label": self.auto.get((unit_id, dimension)), "score": self.auto_score.get((unit_id, dimension)),
                "key": self.key.get((unit_id, dimension))}

    def decision(self, response_id: str | None = None) -> dict | None:
        """The harness decision of the response, or None while hidden (blind and not fully labelled)."""
        rid = response_id or self.response_id
        if rid is None:
            return None
        if not self.response_revealed(rid):
            return None
        return self.decisions.get(rid)

    def _group_of_response(self, response_id: str) -> str:
        ids = self._response_units.get(response_id)
        if ids:
            return self._group[ids[0]][0]
        known = self.dataset.responses.get(response_id)
        if known is not None and known.case_id in self.responses:
            return known.case_id
        for cid, rs in self.responses.items():
            if any(r.response_id == response_id for r in rs):
                return cid
        raise SessionError(f"unknown response {response_id!r}")

    # --- cases: list, filters, navigation -------------------------------------------------------------------
    def _view_ids(self, case_id: str, response_id: str | None) -> list[str]:
        self.build_case(case_id)
        ids = list(self._case_units.get(case_id, []))
        if response_id:
            ids += self._response_units.get(response_id, [])
        return ids

    def _pairs(self, unit_ids: Iterable[str]):
        for uid in unit_ids:
            for d in self._units[uid].dimensions:
                yield uid, d

    def _restat(self, case_id: str) -> None:
        self._case_stats[case_id] = self._compute_case_stats(case_id)
        self._listed = None  # the case list changes with any case's stats

    def _compute_case_stats(self, case_id: str) -> tuple[int, int, int, int, int]:
        if case_id not in self._built:  # nothing of it is labelled (a labelled case is built): counted only
            units, pairs = self._counts[case_id]
            return 0, units, 0, pairs, 0
        ids = list(self._case_units.get(case_id, []))
        for r in self.responses.get(case_id, []):
            ids += self._response_units.get(r.response_id, [])
        lu = lp = tp = dis = 0
        for uid in ids:
            dims = self._units[uid].dimensions
            done = 0
            for d in dims:
                v = self.labels.get((uid, d))
                if v is not None or (uid, d) in self.unsure:
                    done += 1
                    if v is not None and v != self.auto.get((uid, d)):
                        dis += 1
            lu += done == len(dims)
            lp += done
            tp += len(dims)
        return lu, len(ids), lp, tp, dis

    def case_row(self, case_id: str) -> CaseRow:
        """A case of the list; ``verdicts`` of a case whose harness result is not computed yet (lazy) are ()."""
        stats = self._case_stats[case_id]
        kept = self._rows.get(case_id)
        if kept is not None and kept[0] is stats:  # new stats (a label, a build) are a new tuple
            return kept[1]
        case = self.dataset.cases[case_id]
        lu, tu, lp, tp, dis = stats
        status = "unlabelled" if lp == 0 else ("done" if lp == tp else "partial")
        verdicts = () if case_id not in self._built else tuple(
            (self.decisions.get(r.response_id) or {}).get("verdict", "") for r in self.responses[case_id])
        row = CaseRow(case_id, case.case_type, case.query, status, lu, tu, lp, tp, dis, verdicts)
        self._rows[case_id] = (stats, row)
        return row

    def case_types(self) -> list[str]:
        return sorted({c.case_type for c in self.dataset.cases.values()})

    def set_filter(self, case_type: str | None = None, status: str | None = None, verdict: str | None = None,
                   disagreement: bool = False) -> list[CaseRow]:
        """Restrict the case list; returns the visible cases.  The case on screen does not change."""
        if case_type is not None and case_type not in self.case_types():
            raise SessionError(f"unknown case type {case_type!r}")
        if status is not None and status not in STATUSES:
            raise SessionError(f"unknown status {status!r} (known: {', '.join(STATUSES)})")
        if verdict is not None and verdict not in VERDICTS:
            raise SessionError(f"unknown verdict {verdict!r} (known: {', '.join(VERDICTS)})")
        self.filter = CaseFilter(case_type, status, verdict, bool(disagreement))
        return self.cases()

    def _matches(self, row: CaseRow, f: CaseFilter) -> bool:
        return ((f.case_type is None or row.case_type == f.case_type)
                and (f.status is None or row.status == f.status)
                and (f.verdict is None or f.verdict in row.verdicts)
                and (not f.disagreement or row.disagreements > 0))

    def cases(self, flt: CaseFilter | None = None) -> list[CaseRow]:
        """The cases the list shows (under the current filter, or ``flt``), in case id order."""
        f = flt or self.filter
        if self._listed is not None and self._listed[0] == f:
            return list(self._listed[1])
        if f.verdict is not None:
            self.build_all()  # the one question that needs every case's harness decision
        rows = [row for cid in self.case_ids if self._matches(row := self.case_row(cid), f)]
        self._listed = (f, rows)
        return list(rows)

    def visible_ids(self) -> list[str]:
        return [r.case_id for r in self.cases()]

    @property
    def case(self) -> Case | None:
        return self.dataset.cases.get(self.case_id) if self.case_id else None

    @property
    def response(self) -> Response | None:
        if self.response_id is None or self.case_id is None:
            return None
        return next((r for r in self.responses[self.case_id] if r.response_id == self.response_id), None)

    def go_to(self, case_id: str, response_id: str | None = None) -> None:
        """Show ``case_id`` with ``response_id`` (default: its first response)."""
        if case_id not in self.dataset.cases:
            raise SessionError(f"unknown case {case_id!r}")
        if response_id is not None and response_id not in {r.response_id for r in self.responses[case_id]}:
            raise SessionError(f"case {case_id} has no response {response_id!r}")
        self.case_id = case_id
        self.response_id = response_id or self._first_response(case_id)
        self.build_case(case_id)

    def select_response(self, response_id: str) -> None:
        """The scenario switch: show another response (variant) of the same case."""
        if self.case_id is None:
            raise SessionError("no case on screen")
        self.go_to(self.case_id, response_id)

    def scenarios(self) -> list[tuple[str, str]]:
        """``(response_id, variant)`` of the case on screen, for the scenario switch."""
        return [(r.response_id, r.variant) for r in self.responses.get(self.case_id or "", [])]

    def _step(self, delta: int) -> str | None:
        visible = self.visible_ids()
        target: str | None
        if not visible:
            return None
        if self.case_id in visible:
            i = visible.index(self.case_id) + delta
            if not 0 <= i < len(visible):
                return None
            target = visible[i]
        else:  # the case on screen is filtered out: go to the nearest visible one in that direction
            pos = self.case_ids.index(self.case_id) if self.case_id in self.case_ids else -1
            after = [c for c in visible if self.case_ids.index(c) > pos]
            before = [c for c in visible if self.case_ids.index(c) < pos]
            target = (after[0] if after else None) if delta > 0 else (before[-1] if before else None)
            if target is None:
                return None
        self.go_to(target)
        return target

    def next_case(self) -> str | None:
        """Move to the next case in the list (or the next view of the queue); None (and no move) at the end."""
        return self._queue_step(+1) if self.queue else self._step(+1)

    def prev_case(self) -> str | None:
        """Move to the previous case in the list (or view of the queue); None (and no move) at the start."""
        return self._queue_step(-1) if self.queue else self._step(-1)

    def _queue_step(self, delta: int) -> str | None:
        here = (self.case_id, self.response_id)
        i = self.queue.index(here) + delta if here in self.queue else (0 if delta > 0 else -1)
        if not 0 <= i < len(self.queue) or (here not in self.queue and not self.queue):
            return None
        cid, rid = self.queue[i]
        self.go_to(cid, rid)
        return cid

    # --- queues: an assignment, or a calibration sample --------------------------------------------------
    def use_queue(self, sample: str | None = None) -> str | None:
        """Follow a queue: the calibration sample named ``sample``, else this annotator's assignment, if any.

        A queue is a list of unit ids (``Assignment.queues``: the annotator's,
        or ``"*"`` of a calibration sample, in its ranked order); the page
        walks the views (case, response) that hold them, in that order.
        Returns the assignment's name, or None (no queue: the case list).
        Raises :class:`SessionError` for a sample that does not exist.
        """
        self.queue_name, self.queue_units, self.queue = None, [], []
        units: tuple[str, ...] = ()
        if sample:
            a = self.store.assignment(sample)
            if a is None or a.kind != "calibration_sample":
                names = sorted(x.name for x in self.store.assignments() if x.kind == "calibration_sample")
                raise SessionError(f"no calibration sample named {sample!r} (known: {', '.join(names) or 'none'})")
            units, name = a.queues.get("*", ()), a.name
        else:
            if self.annotator is None:
                return None
            mine = [a for a in self.store.assignments()
                    if a.kind == "queue" and self.annotator in a.queues and a.dataset in (self.dataset_name, "")]
            if not mine:
                return None
            a = max(mine, key=lambda x: (x.created_at, x.name))
            units, name = a.queues[self.annotator], a.name
        self.queue_sample = bool(sample)
        self.queue_units = [u for u in units if u in self.catalog]
        views: list[tuple[str, str | None]] = []
        for u in self.queue_units:
            cid, rid = self._group[u]
            view = (cid, rid or self._first_response(cid))
            if view not in views:
                views.append(view)
        self.queue_name, self.queue = name, views
        return name

    def queue_progress(self) -> Progress | None:
        """Progress on the queue's units (every dimension answered), or None without a queue."""
        if not self.queue_name:
            return None
        lu = lp = tp = 0
        for uid in self.queue_units:
            dims = self.catalog[uid].dimensions
            done = sum(self.answered(uid, d) for d in dims)
            lu += done == len(dims)
            lp += done
            tp += len(dims)
        return Progress(lu, len(self.queue_units), lp, tp)

    def has_unlabelled(self, case_id: str, response_id: str | None) -> bool:
        if case_id not in self._built and case_id in self._counts and self._counts[case_id][1] == 0:
            return False  # nothing to label in the case: no need to build it to know
        return any(not self.answered(u, d) for u, d in self._pairs(self._view_ids(case_id, response_id)))

    def next_unlabelled(self) -> tuple[str, str | None] | None:
        """Move to the first (case, response) with an unanswered unit, starting at the one on screen.

        The view on screen is never skipped: while it has something left it is
        the answer (no move).  Then the views after it, wrapping around: the
        annotator's queue when one is in use (:meth:`use_queue`), else the
        case list.  Returns ``(case_id, response_id)`` or None when everything
        is answered (no move).
        """
        views: list[tuple[str, str | None]] = list(self.queue)
        if not views:
            for cid in self.visible_ids():
                views += [(cid, r.response_id) for r in self.responses[cid]] or [(cid, None)]
        if not views:
            return None
        here = (self.case_id, self.response_id)
        start = views.index(here) if here in views else 0
        if here not in views and self.case_id in self.case_ids:
            pos = self.case_ids.index(self.case_id)
            start = next((i for i, (c, _) in enumerate(views) if self.case_ids.index(c) > pos), 0)
        for i in range(len(views)):
            cid, rid = views[(start + i) % len(views)]
            if self.has_unlabelled(cid, rid):
                self.go_to(cid, rid)
                return cid, rid
        return None

    # --- the case on screen --------------------------------------------------------------------------------
    def view_units(self, kind: str | None = None) -> list[ViewUnit]:
        """Units on screen: the case's passages, then the response's claims and facts (optionally one kind)."""
        if self.case_id is None:
            return []
        units = list(self._view_units.get((self.case_id, ""), []))
        if self.response_id:
            units += self._view_units.get((self.case_id, self.response_id), [])
        return [u for u in units if kind is None or u.kind == kind]

    def view_progress(self, case_id: str | None = None, response_id: str | None = None) -> Progress:
        """Progress on one view (default: the one on screen)."""
        cid = case_id or self.case_id
        rid = response_id if case_id else self.response_id
        ids = self._view_ids(cid, rid) if cid else []
        lu = lp = tp = 0
        for uid in ids:
            dims = self.catalog[uid].dimensions
            done = sum(self.answered(uid, d) for d in dims)
            lu += done == len(dims)
            lp += done
            tp += len(dims)
        return Progress(lu, len(ids), lp, tp)

    # --- scores ---------------------------------------------------------------------------------------------
    def rates_current(self) -> dict[str, DimensionRate]:
        """The four rates over the view on screen (its passages plus the response's claims and facts)."""
        if self.case_id is None:
            return self.counter.rates(("", ""))
        groups = [(self.case_id, "")] + ([(self.case_id, self.response_id)] if self.response_id else [])
        return self._rates_of(groups)

    def rates_response(self, response_id: str) -> dict[str, DimensionRate]:
        """Rates of one response of the case on screen (its claims and facts plus the case's passages)."""
        cid = self._group_of_response(response_id)
        return self._rates_of([(cid, ""), (cid, response_id)])

    def _rates_of(self, groups) -> dict[str, DimensionRate]:
        succ = [0] * 4
        n = [0] * 4
        for g in groups:
            for i, (s, m) in enumerate(self.counter.counts(g).values()):
                succ[i] += s
                n[i] += m
        return {d: rate_from_counts(d, succ[i], n[i], self.counter.confidence) for i, d in enumerate(DIMENSION_ORDER)}

    def rates_pooled(self) -> dict[str, DimensionRate]:
        """The four rates over every current label of this annotator (or the consensus)."""
        return self.counter.rates()

    def set_weights(self, weights: Mapping[str, float]) -> None:
        """Composite weights (any non-negative numbers; normalised over dimensions with data)."""
        w = dict(self.weights)
        for d, v in weights.items():
            if d not in DIMENSION_ORDER:
                raise SessionError(f"unknown dimension {d!r}")
            v = float(v)
            if not v >= 0:
                raise SessionError(f"a weight cannot be negative ({d}: {v})")
            w[d] = v
        self.weights = w

    def set_gate(self, dimension: str, floor: float | None) -> None:
        """A hard gate: the composite is gated when ``dimension`` is below ``floor`` (None removes it)."""
        if dimension not in DIMENSION_ORDER:
            raise SessionError(f"unknown dimension {dimension!r}")
        if floor is None:
            self.gates.pop(dimension, None)
        else:
            floor = float(floor)
            if not 0.0 <= floor <= 1.0:
                raise SessionError("a gate floor is between 0 and 1")
            self.gates[dimension] = floor

    def normalised_weights(self) -> dict[str, float]:
        """The weights as shares of their total (what the sliders mean), before dropping dimensions without data."""
        total = sum(self.weights.values())
        return {d: (self.weights[d] / total if total > 0 else 0.0) for d in DIMENSION_ORDER}

    def composite(self, rates: Mapping[str, DimensionRate]) -> Composite | None:
        """The weighted composite of ``rates`` with the session's weights and gates (None if all weights are 0)."""
        try:
            return composite(rates, self.weights, self.gates)
        except ValueError:
            return None

    def agreement(self) -> dict[str, Agreement]:
        """Human (reference) versus harness, per dimension, on the units this annotator labelled."""
        out = {}
        for label_dim in DIMENSIONS:
            cached = self._agreement_cache.get(label_dim)
            if cached is None:
                cached = self._agreement_cache[label_dim] = agreement_from_table(self._tables[label_dim])
            out[DIMENSION_NAMES[label_dim]] = cached
        return out

    def progress(self) -> Progress:
        """Overall progress of this annotator: units with every dimension labelled / all units."""
        lu = tu = lp = tp = 0
        for stats in self._case_stats.values():
            lu += stats[0]
            tu += stats[1]
            lp += stats[2]
            tp += stats[3]
        return Progress(lu, tu, lp, tp, len(self.stale))

    def scores(self) -> Scores:
        """Everything the score panel shows (rates, composite, diagnosis, agreement, progress)."""
        current = self.rates_current()
        pooled = self.rates_pooled()
        cc = self.composite(current)
        cp = self.composite(pooled)
        error = "" if cc is not None else "Every weight is 0: give at least one dimension a weight."
        return Scores(
            current, pooled, cc, cp, error, diagnose(current, self.thresholds), diagnose(pooled, self.thresholds),
            self.agreement(), self.progress(), dict(self.weights), self.normalised_weights(), dict(self.gates),
            self.ties,
        )

    # --- the URL -----------------------------------------------------------------------------------------
    def url_params(self) -> dict[str, str]:
        """What the page's URL holds so that a link reopens this view (issue 13.6), in a fixed order.

        ``annotator``, ``dataset`` (unless the shipped set), ``sample`` (a
        calibration sample being walked), ``case``, ``response``, ``weights``
        and ``gates`` (``dimension:value,...``, only when not the defaults) and
        ``reveal=1``.
        """
        out: dict[str, str] = {}
        if self.annotator and not self.read_only:
            out["annotator"] = self.annotator
        if self.dataset_name != "golden":
            out["dataset"] = self.dataset_name
        if self.queue_name and self.queue_sample:
            out["sample"] = self.queue_name
        if self.case_id:
            out["case"] = self.case_id
        if self.response_id:
            out["response"] = self.response_id
        if self.weights != DEFAULT_WEIGHTS:
            out["weights"] = format_weights(self.weights)
        if self.gates:
            out["gates"] = format_weights(self.gates)
        if self.reveal_all and not self.read_only:
            out["reveal"] = "1"
        return out

    # --- export ---------------------------------------------------------------------------------------------
    def export_rows(self, scope: str = "mine") -> list[dict[str, str]]:
        """The store's export table (:func:`playground.store.export_table`) of ``mine``, ``all`` or ``consensus``.

        Columns :data:`EXPORT_COLUMNS` (issue 14.7), every value a string:
        ``value`` is ``1``, ``0`` or ``unsure``; ``comment`` the annotator's
        comment on the unit (an adjudicated consensus row: ``adjudicated by
        NAME``); ``time`` when the label was last set.  A unit commented on but
        not labelled gives one row with empty ``dimension`` and ``value``.
        Only this dataset's units; stale labels (on text that changed since)
        are left out.  Sorted by (annotator, unit_id, dimension).
        """
        if scope not in ("mine", "all", "consensus"):
            raise SessionError(f"unknown export scope {scope!r} (mine, all, consensus)")
        if scope == "mine" and self.annotator is None:
            raise SessionError("Type your name first (or choose an annotator) to export their labels.")
        if scope == "all" and not may_export_everyone(self.read_only):  # serve engineer, issue 29: roles
            raise SessionError("Every annotator's labels are for the instructor's link; export your own labels.")
        self._build_labelled(everyone=scope != "mine")
        return export_table(self.store, self._units, annotator=self.annotator if scope == "mine" else None,
                            consensus=scope == "consensus")

    def export_file(self, fmt: str = "csv", scope: str = "mine") -> tuple[str, bytes, int]:
        """``(filename, content, rows)`` of an export, for a download link: :meth:`export_rows` in ``fmt``.

        ``fmt`` is one of :data:`EXPORT_MIME` (``csv``, ``jsonl``, ``parquet``),
        written by :func:`playground.store.format_bytes`: CSV cells that a
        spreadsheet would run as a formula get a leading ``'``.
        """
        if fmt not in EXPORT_MIME:
            raise SessionError(f"unknown export format {fmt!r} ({', '.join(EXPORT_MIME)})")
        rows = self.export_rows(scope)
        who = self.annotator if scope == "mine" else scope
        safe = "".join(ch if ch.isalnum() or ch in "-_" else "-" for ch in (who or "labels")).strip("-") or "labels"
        return f"labels-{safe}.{fmt}", format_bytes(rows, fmt, EXPORT_COLUMNS), len(rows)

    def export_text(self, fmt: str = "csv", scope: str = "mine") -> tuple[str, str, int]:
        """:meth:`export_file` of a text format (``csv`` or ``jsonl``), decoded from UTF-8."""
        if fmt == "parquet":
            raise SessionError("parquet is binary: use export_file")
        name, content, n = self.export_file(fmt, scope)
        return name, content.decode("utf-8"), n


def format_weights(weights: Mapping[str, float]) -> str:
    """``faithfulness:0.4,correctness:0.3`` in dimension order (for the URL)."""
    return ",".join(f"{d}:{weights[d]:g}" for d in DIMENSION_ORDER if d in weights)


def parse_weights(text: str, what: str = "weights", unit_interval: bool = False) -> dict[str, float]:
    """The inverse of :func:`format_weights`; one :class:`SessionError` lists every bad item."""
    out: dict[str, float] = {}
    problems: list[str] = []
    for item in (x for x in text.split(",") if x.strip()):
        name, sep, value = item.partition(":")
        name = name.strip()
        if not sep or name not in DIMENSION_ORDER:
            problems.append(f"{item.strip()!r} is not dimension:value (dimensions: {', '.join(DIMENSION_ORDER)})")
            continue
        try:
            v = float(value)
        except ValueError:
            problems.append(f"{name}: {value.strip()!r} is not a number")
            continue
        if not (v >= 0 and (v <= 1 or not unit_interval)) or v != v or v == float("inf"):
            problems.append(f"{name}: {v:g} is out of range ({'0 to 1' if unit_interval else 'at least 0'})")
            continue
        out[name] = v
    if problems:
        raise SessionError(f"The link's {what} cannot be used: " + "; ".join(problems) + ".")
    return out


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
    from .harness_cache import CaseHarness, dataset_fingerprint

    config = config or load_config()
    key = dataset_fingerprint(opened.name, opened.revision or "", config)
    harness = CaseHarness(opened.dataset, opened.passages, config, key)
    kept = harness.files.get("counts")
    counts = kept.get("counts") if isinstance(kept, dict) and kept.get("revision") == opened.revision else None
    if not isinstance(counts, dict) or set(counts) != set(opened.dataset.cases):
        counts = unit_counts(opened.dataset, opened.passages)
        harness.files.put("counts", {"revision": opened.revision, "counts": counts})
    session = LabelSession(opened.dataset, store, config, reveal_all=reveal_all, passages=opened.passages,
                           dataset_name=opened.name, harness=harness, unit_counts=counts)
    session.harness_source = harness.describe()
    return session


def may_export_everyone(read_only: bool) -> bool:
    """Whether this page may export every annotator's labels and comments (serve engineer, issue 29): the
    instructor's or an observer's page (the room's roles, :func:`playground.ui.request.role`), or a read-only
    dashboard; never a student's page, where it would show other students' answers and comments."""
    from .request import role

    return read_only or role() in ("instructor", "observer")


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
        from . import open_session_dataset

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
