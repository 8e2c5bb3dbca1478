"""The room's projector view, without widgets: one compact row per unit and an agreement summary.

* :func:`unit_grid` — per unit of the lesson (in lesson order) and per
  dimension: the class's votes (yes / no / unsure), the answer key and the
  share of yes/no votes that match it (``accuracy = matching / (yes + no)``,
  None without a key or without a yes/no vote), and whether the vote is
  *divided* (the smaller side holds at least a quarter of the yes/no votes;
  a single slip in a class of 30 is not a divided class).
* :func:`agreement_summary` — per dimension: Fleiss' kappa, Krippendorff's
  alpha and the ``lowest`` pairs by Cohen's kappa (undefined kappas last),
  so the pairwise table can stay folded away.
* :func:`answer_key_values` — the golden set's key per ``(unit_id,
  dimension)``: claims ``supported``/``correct``, facts ``covered``, passages
  :func:`playground.golden.passage_key` (relevance to the question).
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..model import DIMENSIONS, Unit
from ..store import UNSURE
from .room_agreement import DimensionAgreement, PairKappa
from .room_state import RoomState

__all__ = ["DIVIDED_SHARE", "AgreementSummary", "GridCell", "agreement_summary", "answer_key_values", "unit_grid"]


#: A vote is divided when the smaller side holds at least this share of the yes/no votes.
DIVIDED_SHARE = 0.25


@dataclass(frozen=True)
class GridCell:
    """One (unit, dimension) of the grid: the vote, the key and the accuracy against it."""

    unit_id: str
    dimension: str
    yes: int
    no: int
    unsure: int
    key: int | None
    matching: int

    @property
    def accuracy(self) -> float | None:
        n = self.yes + self.no
        return self.matching / n if self.key is not None and n else None

    @property
    def divided(self) -> bool:
        """The class is split: the smaller side holds at least :data:`DIVIDED_SHARE` of the yes/no votes
        (``min(yes, no) >= 0.25 * (yes + no)``: 1 of 4 and 7 of 28 are divided, 2 of 25 is a slip)."""
        return min(self.yes, self.no) > 0 and min(self.yes, self.no) >= DIVIDED_SHARE * (self.yes + self.no)


def unit_grid(state: RoomState, catalog: Mapping[str, Unit],
              key: Mapping[tuple[str, str], int] | None = None) -> list[tuple[Unit, list[GridCell]]]:
    """Every unit of ``catalog`` (its order) with one :class:`GridCell` per dimension (module docstring)."""
    key = key or {}
    out = []
    for uid, unit in catalog.items():
        cells = []
        for d in unit.dimensions:
            votes = state.votes.get((uid, d), {})
            yes = sum(1 for v in votes.values() if v == 1)
            no = sum(1 for v in votes.values() if v == 0)
            unsure = sum(1 for v in votes.values() if v == UNSURE)
            k = key.get((uid, d))
            matching = 0 if k is None else (yes if k == 1 else no)
            cells.append(GridCell(uid, d, yes, no, unsure, k, matching))
        out.append((unit, cells))
    return out


@dataclass(frozen=True)
class AgreementSummary:
    """One dimension's agreement in one line: group statistics and the pairs that agree least."""

    dimension: str
    annotators: int
    fleiss: float | None
    fleiss_reason: str
    krippendorff: float | None
    krippendorff_reason: str
    lowest: tuple[PairKappa, ...]
    pairs: int


def agreement_summary(agreement: Mapping[str, DimensionAgreement], lowest: int = 3) -> list[AgreementSummary]:
    """Per dimension with labels (dimension order): Fleiss, Krippendorff and the ``lowest`` pairs by Cohen's
    kappa (ascending; pairs whose kappa is undefined after every defined one; then by names)."""
    out = []
    for d in DIMENSIONS:
        ag = agreement.get(d)
        if ag is None or not ag.n_items:
            continue
        ranked = sorted(ag.pairs, key=lambda p: (p.kappa is None, p.kappa if p.kappa is not None else 0.0,
                                                 p.annotator_a, p.annotator_b))
        out.append(AgreementSummary(d, len(ag.annotators), ag.fleiss, ag.fleiss_reason, ag.krippendorff,
                                    ag.krippendorff_reason, tuple(ranked[:lowest]), len(ag.pairs)))
    return out


def answer_key_values(od: Any, units: Sequence[Unit] | None = None) -> dict[tuple[str, str], int]:
    """The key of every unit of the open dataset ``od`` that has one (an imported dataset without an authored
    key has none): ``{(unit_id, dimension): 0/1}``."""
    from ..golden import passage_key, passage_unit, response_units

    ds = od.dataset
    wanted = None if units is None else {u.unit_id for u in units}
    cases = sorted({u.case_id for u in units}) if units is not None else sorted(ds.cases)
    out: dict[tuple[str, str], int] = {}
    for cid in cases:
        case = ds.cases.get(cid)
        if case is None:
            continue
        if case.expected_sources or case.must_abstain:  # a golden case: relevance has a key
            for p in od.passages.get(cid, ()):
                out[(passage_unit(case, p).unit_id, "relevant")] = int(passage_key(case, p))
        for response in ds.responses_for(cid):
            facts = dict(response.key_facts)
            for unit in response_units(case, response):
                if unit.unit_kind == "claim":
                    k = next((c for c in response.key_claims if c.text == unit.text), None)
                    if k is not None:
                        out[(unit.unit_id, "supported")] = int(k.supported)
                        out[(unit.unit_id, "correct")] = int(k.correct)
                elif unit.unit_kind == "fact":
                    fid = unit.unit_id.split("::", 1)[1]
                    if fid in facts:
                        out[(unit.unit_id, "covered")] = int(facts[fid])
    return out if wanted is None else {k: v for k, v in out.items() if k[0] in wanted}
