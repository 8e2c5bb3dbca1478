"""The catalog of a page: a case's units and automatic labels, built per case on demand (lazy).

One part of :class:`~playground.ui.session.LabelSession`, composed into it (``session.catalog_builder``, issue
40.1): a :class:`CatalogBuilder` object given the page state it fills (:class:`CatalogState`: the catalog,
responses, automatic labels, keys and decisions the other parts read) in its constructor; the session hands its
methods on under their old names.  See :mod:`playground.ui.session` for the rules."""
from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, Protocol

from ..claims import split_claims
from ..datasets import SHIPPED
from ..golden import Dataset, passage_unit, response_units
from ..model import UNIT_DIMENSIONS, Case, Passage, Response, Unit
from .session_types import (
    SessionError,
    ViewUnit,
)

__all__ = ["Catalog", "CatalogBuilder", "CatalogState", "claim_dimensions", "unit_counts"]


def claim_dimensions(case: Case) -> tuple[str, ...]:
    """The questions asked of a claim: "supported" and "correct", or only "supported" when the case has no
    reference answer (a trace, a sample imported without one): "correct against the reference?" has nothing to
    be checked against, so it is not asked, not counted in progress, and a label on it is refused."""
    dims = UNIT_DIMENSIONS["claim"]
    return dims if case.reference_answer.strip() else tuple(d for d in dims if d != "correct")


class Catalog(Mapping[str, Unit]):
    """``unit_id -> Unit`` of a session, built per case: looking up a unit of a case not built yet builds it.

    ``len`` is the dataset's number of units (counted, nothing built);
    iterating builds every case.  :meth:`built` is what is built so far.
    """

    def __init__(self, builder: CatalogBuilder) -> None:
        self._units: dict[str, Unit] = {}
        self._builder = builder

    def __getitem__(self, unit_id: str) -> Unit:
        unit = self._units.get(unit_id)
        if unit is None and isinstance(unit_id, str) and self._builder.build_case_of(unit_id):
            unit = self._units.get(unit_id)
        if unit is None:
            raise KeyError(unit_id)
        return unit

    def __iter__(self) -> Iterator[str]:
        self._builder.build_all()
        return iter(list(self._units))

    def __len__(self) -> int:
        return self._builder.state.total_units

    def built(self) -> dict[str, Unit]:
        """The units built so far (of the cases built so far)."""
        return self._units


def unit_counts(dataset: Dataset, passages: Mapping[str, Sequence[Passage]]) -> dict[str, list[int]]:
    """``case_id -> [units, pairs]``: the case's units (its passages, then per response claims and facts) and
    (unit, dimension) pairs, counted without building them (what :meth:`LabelSession.case_row` totals)."""
    dims = {kind: len(d) for kind, d in UNIT_DIMENSIONS.items()}
    out: dict[str, list[int]] = {}
    count = getattr(passages, "count", None)  # a StoredPassages counts its contexts without making passages
    for cid in sorted(dataset.cases):
        case = dataset.cases[cid]
        n_facts = len(case.reference_facts)
        units = n_passages = count(cid) if count is not None and cid in passages else len(passages.get(cid, ()))
        pairs = n_passages * dims["passage"]
        per_claim = len(claim_dimensions(case))
        for response in dataset.responses_for(cid):
            n_claims = len(split_claims(response.text, response.response_id))
            units += n_claims + n_facts
            pairs += n_claims * per_claim + n_facts * dims["fact"]
        out[cid] = [units, pairs]
    return out


class CatalogState(Protocol):
    """What :class:`CatalogBuilder` reads of the page's state (a :class:`~playground.ui.session.LabelSession` is
    one: the dataset, its passages and the harness) and fills there (the catalog and everything made with it)."""

    dataset: Dataset
    dataset_name: str
    case_ids: list[str]
    passages: Mapping[str, Sequence[Passage]]
    given_passages: bool
    results: dict[str, dict]
    _hits: dict[str, list]
    _harness: Any
    catalog: Any
    _units: dict[str, Unit]
    responses: dict[str, list[Response]]
    _view_units: dict[tuple[str, str], list[ViewUnit]]
    _case_units: dict[str, list[str]]
    _response_units: dict[str, list[str]]
    _group: dict[str, tuple[str, str]]
    auto: dict[tuple[str, str], int]
    auto_score: dict[tuple[str, str], float | None]
    key: dict[tuple[str, str], int | None]
    decisions: dict[str, dict]
    variants: dict[str, str]
    _built: set[str]
    _counts: dict[str, tuple[int, int]]
    total_units: int
    total_pairs: int
    _restat: Callable[[str], None]


class CatalogBuilder:
    """The catalog of a page: a case's units and automatic labels, built per case on demand (lazy)."""

    def __init__(self, state: CatalogState):
        self.state = state

    def build_catalog(self, counts: Mapping[str, Sequence[int]] | None) -> None:
        """Make the catalog and its tables empty, every case's responses, and (unless lazy) every case."""
        ds = self.state.dataset
        self.state.catalog = Catalog(self)
        self.state._units = self.state.catalog.built()
        self.state.responses = {}
        self.state._view_units = {}
        self.state._case_units = {}
        self.state._response_units = {}
        self.state._group = {}
        self.state.auto = {}
        self.state.auto_score = {}
        self.state.key = {}
        self.state.decisions = {}
        self.state.variants = {}
        self.state._built = set()
        self.state._counts = {}
        for cid in self.state.case_ids:
            responses = ds.responses_for(cid)
            if len(responses) > 1:
                responses.sort(key=lambda r: r.response_id)
            self.state.responses[cid] = responses
            for response in responses:
                self.state.variants[response.response_id] = response.variant
        if self.state._harness is None:
            for cid in self.state.case_ids:
                self._build_case(cid)
        else:
            if counts is None or set(counts) != set(self.state.case_ids):
                counts = unit_counts(ds, self.state.passages)
            self.state._counts = {cid: (int(counts[cid][0]), int(counts[cid][1])) for cid in self.state.case_ids}
        self.state.total_units = sum(c[0] for c in self.state._counts.values())
        self.state.total_pairs = sum(c[1] for c in self.state._counts.values())

    @property
    def built_cases(self) -> list[str]:
        """The cases whose units are built so far, sorted (every case unless lazy)."""
        return sorted(self.state._built)

    def build_case(self, case_id: str) -> None:
        """Build the units of ``case_id`` and their automatic labels, if not built yet (lazy sessions)."""
        if case_id not in self.state._built and case_id in self.state.dataset.cases:
            self._build_case(case_id)
            if hasattr(self.state, "_case_stats"):  # built after the labels were loaded: it holds none of them
                self.state._restat(case_id)

    def build_cases(self, case_ids: Iterable[str]) -> None:
        for cid in sorted(set(case_ids)):
            self.build_case(cid)

    def build_all(self) -> None:
        """Build every case (the verdict filter, iterating the catalog)."""
        self.build_cases(self.state.case_ids)

    def build_case_of(self, unit_id: str) -> bool:
        """Build the case a unit id names: its id starts with ``<case id>:`` or ``<response id>:``.

        Every such prefix is tried, shortest first, until the unit is built;
        returns whether it was.
        """
        start = 0
        while (i := unit_id.find(":", start)) >= 0:
            prefix = unit_id[:i]
            start = i + 1
            cid = prefix if prefix in self.state.dataset.cases else None
            if cid is None and prefix in self.state.dataset.responses:
                cid = self.state.dataset.responses[prefix].case_id
            if cid is not None and cid not in self.state._built:
                self.build_case(cid)
                if unit_id in self.state._units:
                    return True
        return False

    def _case_hits(self, cid: str) -> list:
        hits = self.state._hits.get(cid)
        if hits is None:
            from .harness_cache import KeptHit

            given = self.state.passages.get(cid, [])
            hits = self.state._hits[cid] = [KeptHit(p, 0.0, i + 1) for i, p in enumerate(given)]
        return hits

    def _build_case(self, cid: str) -> None:
        case = self.state.dataset.cases[cid]
        result = self.state.results.get(cid)
        if result is None and self.state._harness is not None:
            result = self.state.results[cid] = self.state._harness.result(cid)
        if result is None:
            raise SessionError(f"no harness result for case {cid}")
        self.state._built.add(cid)
        case_units = self._build_passages(case, result)
        self.state._case_units[cid] = [v.unit.unit_id for v in case_units]
        scored = {r["response_id"]: r for r in result["responses"]}
        self.state._view_units[(cid, "")] = case_units
        n_units, n_pairs = len(case_units), len(case_units) * len(UNIT_DIMENSIONS["passage"])
        for response in self.state.responses[cid]:
            units = self._build_response(case, response, scored.get(response.response_id))
            n_units += len(units)
            n_pairs += sum(len(v.unit.dimensions) for v in units)
        if self.state._harness is None:
            self.state._counts[cid] = (n_units, n_pairs)

    def _build_passages(self, case: Case, result: dict) -> list[ViewUnit]:
        """The passage units of a case with the harness's relevance and the answer key's."""
        cid = case.case_id
        passage_rows = {p["unit_id"]: p for p in result["passages"]}
        case_units: list[ViewUnit] = []
        for i, hit in enumerate(self._case_hits(cid)):
            unit = passage_unit(case, hit.passage)
            row = passage_rows.get(unit.unit_id, {})
            self._add(unit, cid, "")
            self.state.auto[(unit.unit_id, "relevant")] = int(row.get("relevant", 0))
            self.state.auto_score[(unit.unit_id, "relevant")] = row.get("relevance")
            # the key of "relevant?" is the authored passage key (golden.passage_key); older runs: the source.
            # Only the shipped set has one: an import has no expected sources, so its "no" would be no key at all.
            key_field = "key_relevant" if "key_relevant" in row else "from_expected_source"
            authored = self.state.dataset_name == SHIPPED and key_field in row
            self.state.key[(unit.unit_id, "relevant")] = int(bool(row[key_field])) if authored else None
            loc = hit.passage.locator
            title = hit.passage.title or loc.slug
            case_units.append(ViewUnit(
                unit, "passage", i, f"{title} — {loc.heading} ({loc.tenant}/{loc.slug})",
                f"rank {hit.rank}" + ("" if self.state.given_passages else f", BM25 {hit.score:.2f}")
                + (f", updated {hit.passage.updated}" if hit.passage.updated else ""), hit.passage))
        return case_units

    def _build_response(self, case: Case, response: Response, rrow: dict | None) -> list[ViewUnit]:
        """The claim and fact units of one response, with the harness's labels, scores and the answer key's."""
        rid = response.response_id
        rrow = rrow or {"claims": [], "facts": [], "decision": None}
        self.state.decisions[rid] = rrow.get("decision") or {}
        claims = {c["unit_id"]: c for c in rrow["claims"]}
        facts = {f["unit_id"]: f for f in rrow["facts"]}
        units = []
        ci = fi = 0
        fact_of = {f"{rid}::{f.fact_id}": f for f in case.reference_facts}
        asked = claim_dimensions(case)
        for unit in response_units(case, response):
            if unit.unit_kind == "claim" and unit.dimensions != asked:
                unit = dataclasses.replace(unit, dimensions=asked)  # no reference: "correct" is not asked
            self._add(unit, case.case_id, rid)
            if unit.unit_kind == "claim":
                c = claims.get(unit.unit_id, {})
                for dim, score in (("supported", "support"), ("correct", "correctness")):
                    self.state.auto[(unit.unit_id, dim)] = int(c.get(dim, 0))
                    self.state.auto_score[(unit.unit_id, dim)] = c.get(score)
                    self.state.key[(unit.unit_id, dim)] = c.get(f"key_{dim}")
                units.append(ViewUnit(unit, "claim", ci))
                ci += 1
            else:
                f = facts.get(unit.unit_id, {})
                self.state.auto[(unit.unit_id, "covered")] = int(f.get("covered", 0))
                self.state.auto_score[(unit.unit_id, "covered")] = None
                self.state.key[(unit.unit_id, "covered")] = f.get("key_covered")
                fact = fact_of.get(unit.unit_id)
                units.append(ViewUnit(unit, "fact", fi, fact.fact_id if fact else ""))
                fi += 1
        self.state._response_units[rid] = [v.unit.unit_id for v in units]
        self.state._view_units[(case.case_id, rid)] = units
        return units

    def _add(self, unit: Unit, case_id: str, response_id: str) -> None:
        self.state._units[unit.unit_id] = unit
        self.state._group[unit.unit_id] = (case_id, response_id)

    def first_response(self, case_id: str | None) -> str | None:
        if case_id is None:
            return None
        responses = self.state.responses.get(case_id) or []
        return responses[0].response_id if responses else None
