"""The four evaluation dimensions, the composite, the diagnosis; retrieval metrics; agreement.

Pure functions over labels and ids: no widgets, no plotting, no I/O.  Each
formula is in the docstring of the function that computes it.

Four dimensions, each a proportion over *labelled* units only (an unlabelled
unit is not in the denominator; a dimension with no labelled unit has no data,
which is neither 0% nor an error):

==================  =================  ==================================
dimension           label dimension    rate
==================  =================  ==================================
context_relevance   ``relevant``       relevant / labelled passages
faithfulness        ``supported``      supported / labelled claims
correctness         ``correct``        correct / judged claims
coverage            ``covered``        covered / labelled reference facts
==================  =================  ==================================

"supported" (by the retrieved context) and "correct" (against the reference)
are separate judgements of the same claim and never stand in for each other.
Every rate carries a Wilson interval (:func:`playground.stats.wilson_interval`).
"""
from __future__ import annotations

from .composite_score import (
    Composite,
    composite,
)
from .diagnosis import (
    Diagnosis,
    Failure,
    diagnose,
)
from .rater_agreement import (
    Agreement,
    MultiRater,
    PairAgreement,
    agreement,
    multi_rater,
)
from .rates import (
    CAUSES,
    COMPOSITE_LABEL,
    DEFAULT_THRESHOLDS,
    DIMENSION_LABELS,
    DIMENSION_ORDER,
    LABEL_DIMENSION,
    DimensionRate,
    RateCounter,
    rate_from_counts,
    rates_by_group,
    rates_from_labels,
)
from .retrieval import (
    RETRIEVAL_METRICS,
    RetrievalScores,
    RetrievalSummary,
    hit_at_k,
    mean_defined,
    ndcg_at_k,
    precision_at_k,
    recall_at_k,
    reciprocal_rank,
    retrieval_scores,
    retrieval_summary,
)

__all__ = [
    "CAUSES",
    "COMPOSITE_LABEL",
    "DEFAULT_THRESHOLDS",
    "DIMENSION_LABELS",
    "DIMENSION_ORDER",
    "LABEL_DIMENSION",
    "RETRIEVAL_METRICS",
    "Agreement",
    "Composite",
    "Diagnosis",
    "DimensionRate",
    "Failure",
    "MultiRater",
    "PairAgreement",
    "RateCounter",
    "RetrievalScores",
    "RetrievalSummary",
    "agreement",
    "composite",
    "diagnose",
    "hit_at_k",
    "mean_defined",
    "multi_rater",
    "ndcg_at_k",
    "precision_at_k",
    "rate_from_counts",
    "rates_by_group",
    "rates_from_labels",
    "recall_at_k",
    "reciprocal_rank",
    "retrieval_scores",
    "retrieval_summary",
]
