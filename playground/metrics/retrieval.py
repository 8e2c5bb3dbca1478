"""Retrieval metrics over ranked passage ids and relevance labels: recall, precision, hit at k, nDCG,
reciprocal rank, per query and averaged.
"""
from __future__ import annotations

import math
import numbers
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .rates import _sort_key

__all__ = [
    "RETRIEVAL_METRICS",
    "RetrievalScores",
    "RetrievalSummary",
    "hit_at_k",
    "mean_defined",
    "ndcg_at_k",
    "precision_at_k",
    "recall_at_k",
    "reciprocal_rank",
    "retrieval_scores",
    "retrieval_summary",
]

# --------------------------------------------------------------------------- retrieval


def _check_k(k: Any) -> int:
    if isinstance(k, bool) or not isinstance(k, numbers.Integral) or k < 1:
        raise ValueError(f"k must be an integer >= 1, got {k!r}")
    return int(k)


def _dedupe(retrieved_ids: Iterable[Hashable]) -> list[Hashable]:
    seen: set[Hashable] = set()
    out: list[Hashable] = []
    for r in retrieved_ids:
        if r not in seen:
            seen.add(r)
            out.append(r)
    return out


def _top_k(retrieved_ids: Iterable[Hashable], k: Any) -> list[Hashable]:
    return _dedupe(retrieved_ids)[:_check_k(k)]


def recall_at_k(retrieved_ids: Sequence[Hashable], relevant_ids: Iterable[Hashable],
                k: int) -> float | None:
    """``|relevant ∩ top-k| / |relevant|`` (trec_eval ``recall_k``); None when nothing is relevant.

    A case with no relevant source (out of scope, cross-tenant) has no recall:
    trec_eval leaves such a query out of every mean, and so do
    :func:`retrieval_summary` and the harness (the hard assertions judge those
    cases instead).  ``retrieved_ids`` is in rank order; a repeated id counts
    once, at its first rank, and later ids move up (ranks are among distinct ids).
    """
    relevant = set(relevant_ids)
    top = _top_k(retrieved_ids, k)
    if not relevant:
        return None
    return sum(1 for r in top if r in relevant) / len(relevant)


def precision_at_k(retrieved_ids: Sequence[Hashable], relevant_ids: Iterable[Hashable],
                   k: int) -> float | None:
    """``|relevant ∩ top-k| / k`` (trec_eval ``P_k``); None when nothing is relevant.

    The denominator is k even when fewer than k passages were retrieved (the
    missing ranks count as irrelevant): retrieved [a], relevant {a, b}, k = 5
    gives 0.2.  Undefined without a relevant id, as :func:`recall_at_k`.
    """
    relevant = set(relevant_ids)
    k = _check_k(k)
    top = _top_k(retrieved_ids, k)
    if not relevant:
        return None
    return sum(1 for r in top if r in relevant) / k


def hit_at_k(retrieved_ids: Sequence[Hashable], relevant_ids: Iterable[Hashable],
             k: int) -> float | None:
    """1.0 if any relevant id is in the top k, else 0.0 (trec_eval ``success_k``); None when nothing is relevant."""
    relevant = set(relevant_ids)
    top = _top_k(retrieved_ids, k)
    if not relevant:
        return None
    return 1.0 if any(r in relevant for r in top) else 0.0


def ndcg_at_k(retrieved_ids: Sequence[Hashable], relevant_ids: Iterable[Hashable],
              k: int) -> float | None:
    """Normalised discounted cumulative gain, binary gains (trec_eval ``ndcg_cut_k``); None if nothing is relevant.

    ``DCG@k = sum_{rank r <= k, id relevant} 1 / log2(r + 1)``;
    ``IDCG@k = sum_{r=1}^{min(k, |relevant|)} 1 / log2(r + 1)`` (the ideal
    ranking puts every relevant id first, but only k of them fit);
    ``nDCG@k = DCG@k / IDCG@k``.  E.g. relevant {a, b}, retrieved [x, a, b],
    k = 3: DCG = 1/log2(3) + 1/log2(4) = 1.1309, IDCG = 1 + 1/log2(3) = 1.6309,
    nDCG = 0.6934.
    """
    relevant = set(relevant_ids)
    top = _top_k(retrieved_ids, k)
    if not relevant:
        return None
    dcg = sum(1.0 / math.log2(i + 2) for i, r in enumerate(top) if r in relevant)
    idcg = sum(1.0 / math.log2(i + 2) for i in range(min(int(k), len(relevant))))
    return dcg / idcg


def reciprocal_rank(retrieved_ids: Sequence[Hashable], relevant_ids: Iterable[Hashable]) -> float | None:
    """``1 / rank`` of the first relevant id (ranks from 1, over the whole list); 0.0 if none is retrieved.

    trec_eval ``recip_rank``; the mean over cases is MRR.  None when nothing
    is relevant, as :func:`recall_at_k`.
    """
    relevant = set(relevant_ids)
    if not relevant:
        return None
    for i, r in enumerate(_dedupe(retrieved_ids)):
        if r in relevant:
            return 1.0 / (i + 1)
    return 0.0


#: Names of the per-case retrieval metrics, in display order.
RETRIEVAL_METRICS: tuple[str, ...] = ("recall", "precision", "hit", "ndcg", "reciprocal_rank")


@dataclass(frozen=True)
class RetrievalScores:
    """The retrieval metrics of one case at cut-off ``k``; all None when the case has no relevant id."""

    case_id: str
    case_type: str
    k: int
    recall: float | None
    precision: float | None
    hit: float | None
    ndcg: float | None
    reciprocal_rank: float | None
    n_relevant: int
    n_retrieved: int

    def as_dict(self) -> dict[str, Any]:
        return {f: getattr(self, f) for f in (
            "case_id", "case_type", "k", *RETRIEVAL_METRICS, "n_relevant", "n_retrieved")}


def retrieval_scores(case_id: str, case_type: str, retrieved_ids: Sequence[Hashable],
                     relevant_ids: Iterable[Hashable], k: int) -> RetrievalScores:
    """All retrieval metrics of one case."""
    relevant = set(relevant_ids)
    retrieved = _dedupe(retrieved_ids)
    return RetrievalScores(
        case_id, case_type, _check_k(k),
        recall_at_k(retrieved, relevant, k), precision_at_k(retrieved, relevant, k),
        hit_at_k(retrieved, relevant, k), ndcg_at_k(retrieved, relevant, k),
        reciprocal_rank(retrieved, relevant), len(relevant), len(retrieved))


@dataclass(frozen=True)
class RetrievalSummary:
    """Per-case retrieval scores and their means (macro averages over cases), as trec_eval.

    ``rows`` sorted by case id (every case, including those without a
    relevant id); ``overall`` the mean over the ``n_with_expected`` cases
    that expect at least one source, ``by_case_type`` the same per case type
    (a type none of whose cases expects a source has None means).
    ``n_without_relevant`` counts the cases left out of the means, and
    ``n_by_case_type`` / ``n_with_expected_by_case_type`` count cases per type.
    """

    k: int
    rows: list[RetrievalScores]
    by_case_type: dict[str, dict[str, float | None]]
    n_by_case_type: dict[str, int]
    overall: dict[str, float | None]
    n_cases: int
    n_with_expected: int
    n_with_expected_by_case_type: dict[str, int] = field(default_factory=dict)

    @property
    def n_without_relevant(self) -> int:
        """Cases with no relevant id: left out of every mean."""
        return self.n_cases - self.n_with_expected

    def as_rows(self) -> list[dict[str, Any]]:
        """Per-case rows as plain dicts (e.g. for ``pandas.DataFrame``)."""
        return [r.as_dict() for r in self.rows]


def mean_defined(values: Iterable[float | None]) -> float | None:
    """Mean of the values that are not None; None when there is none (how trec_eval averages)."""
    kept = [v for v in values if v is not None]
    return sum(kept) / len(kept) if kept else None


def _means(rows: Sequence[RetrievalScores]) -> dict[str, float | None]:
    return {m: mean_defined(getattr(r, m) for r in rows) for m in RETRIEVAL_METRICS}


def retrieval_summary(per_case: Iterable[tuple[str, str, Sequence[Hashable], Iterable[Hashable]]],
                      k: int) -> RetrievalSummary:
    """Score every case ``(case_id, case_type, retrieved_ids, relevant_ids)`` and average.

    Each mean is the unweighted mean over the cases with at least one
    relevant id (mean of ``reciprocal_rank`` is MRR), so the figures equal
    trec_eval's (``recall_k``, ``P_k``, ``success_k``, ``ndcg_cut_k``,
    ``recip_rank``).  Raises ValueError on a repeated case id.
    """
    k = _check_k(k)
    rows = []
    seen = set()
    for case_id, case_type, retrieved, relevant in per_case:
        if case_id in seen:
            raise ValueError(f"case {case_id!r} appears twice")
        seen.add(case_id)
        rows.append(retrieval_scores(case_id, case_type, retrieved, relevant, k))
    rows.sort(key=lambda r: _sort_key(r.case_id))
    types = sorted({r.case_type for r in rows}, key=_sort_key)
    by_type = {t: _means([r for r in rows if r.case_type == t]) for t in types}
    n_by_type = {t: sum(1 for r in rows if r.case_type == t) for t in types}
    n_exp_by_type = {t: sum(1 for r in rows if r.case_type == t and r.n_relevant) for t in types}
    return RetrievalSummary(k, rows, by_type, n_by_type, _means(rows), len(rows),
                            sum(1 for r in rows if r.n_relevant), n_exp_by_type)
