"""The diagnosis of every authored response, labelled exactly as the golden set's answer key says.

What a class that labels perfectly would see on the page for one response:
the case's retrieved passages (key: :func:`playground.golden.passage_key`,
relevant to the question), the response's claims (key: ``supported``,
``correct``) and the case's reference facts (key: ``covered``), pooled into
the four rates and diagnosed at the teaching thresholds
(:data:`playground.metrics.DEFAULT_THRESHOLDS`: context relevance < 50%,
the others < 70%).  The lesson plan (``docs/lesson-plan.md``) picks its cases
from this table: where nothing fails, and where each dimension fails alone.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from .golden import Dataset, passage_key
from .metrics import DIMENSION_ORDER, Diagnosis, DimensionRate, diagnose, rate_from_counts
from .model import Case, Passage, Response

__all__ = ["KeyDiagnosis", "key_diagnoses", "key_rates", "lone_failures"]


@dataclass(frozen=True)
class KeyDiagnosis:
    """One response's diagnosis under the key; ``failing`` the failing dimensions in
    :data:`~playground.metrics.DIMENSION_ORDER` (empty: nothing fails)."""

    case_id: str
    response_id: str
    variant: str
    diagnosis: Diagnosis

    @property
    def failing(self) -> tuple[str, ...]:
        return tuple(f.dimension for f in self.diagnosis.failures)


def key_rates(case: Case, passages: Sequence[Passage], response: Response) -> dict[str, DimensionRate]:
    """The four rates of ``response`` labelled as the key says: relevant passages / passages,
    supported claims / claims, correct claims / claims, covered facts / keyed facts."""
    claims = response.key_claims
    facts = [covered for _, covered in response.key_facts]
    counts = {
        "context_relevance": (sum(passage_key(case, p) for p in passages), len(passages)),
        "faithfulness": (sum(c.supported for c in claims), len(claims)),
        "correctness": (sum(c.correct for c in claims), len(claims)),
        "coverage": (sum(facts), len(facts)),
    }
    return {d: rate_from_counts(d, *counts[d]) for d in DIMENSION_ORDER}


def key_diagnoses(dataset: Dataset, passages_by_case: Mapping[str, Sequence[Passage]],
                  thresholds: Mapping[str, float] | None = None) -> list[KeyDiagnosis]:
    """Every authored response of ``dataset`` (by case, then response id) diagnosed under the key."""
    out = []
    for case_id in sorted(dataset.cases):
        case = dataset.cases[case_id]
        for response in sorted(dataset.responses_for(case_id), key=lambda r: r.response_id):
            rates = key_rates(case, passages_by_case.get(case_id, ()), response)
            out.append(KeyDiagnosis(case_id, response.response_id, response.variant, diagnose(rates, thresholds)))
    return out


def lone_failures(table: Sequence[KeyDiagnosis]) -> dict[str, list[str]]:
    """``dimension -> response ids`` where that dimension is the only one failing, plus ``"none"`` for
    responses where nothing fails (and every dimension with data passes)."""
    out: dict[str, list[str]] = {"none": [], **{d: [] for d in DIMENSION_ORDER}}
    for row in table:
        if not row.failing:
            out["none"].append(row.response_id)
        elif len(row.failing) == 1:
            out[row.failing[0]].append(row.response_id)
    return out
