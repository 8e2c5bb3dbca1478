"""Agreement between labellings of the same units: human against automatic, pairs of annotators, many
raters.
"""
from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from typing import Any

from playground.stats import (
    AgreementStat,
    KappaResult,
    cohens_kappa,
    fleiss_kappa,
    krippendorff_alpha,
    matthews_corrcoef,
    pabak,
)

from .rates import _label_value, _sort_key

__all__ = ["Agreement", "MultiRater", "PairAgreement", "agreement", "multi_rater"]

# --------------------------------------------------------------------------- agreement


@dataclass(frozen=True)
class Agreement:
    """Two labellings ``a`` (reference) and ``b`` compared on the units both labelled.

    ``percent`` is the observed agreement as a fraction (None with no shared
    unit); ``kappa`` the :class:`playground.stats.KappaResult`; ``confusion``
    rows ``a``, columns ``b``; ``disagreements`` ``(unit_id, a_value,
    b_value)`` sorted by unit id; ``only_a``/``only_b`` count units labelled
    by one side only (not compared).  ``pabak`` and ``mcc`` are None when
    undefined.
    """

    n_shared: int
    only_a: int
    only_b: int
    kappa: KappaResult
    percent: float | None
    confusion: tuple[tuple[int, int], tuple[int, int]]
    disagreements: list[tuple[Any, int, int]]
    pabak: float | None = None
    mcc: float | None = None


def agreement(a: Mapping[Hashable, int], b: Mapping[Hashable, int],
              confidence: float = 0.95) -> Agreement:
    """Compare two labellings ``{unit_id: 0/1}`` over their shared unit ids (sorted).

    Percent agreement ``(n_00 + n_11) / n``, Cohen's kappa with its interval
    (:func:`playground.stats.cohens_kappa`), PABAK ``2 p_o - 1``, MCC, the
    confusion matrix and every disagreeing unit.  No shared unit gives an
    undefined kappa ("no units") and ``percent`` None, not an error.
    """
    shared = sorted(set(a) & set(b), key=_sort_key)
    av = [_label_value(a[u], f"a[{u!r}]") for u in shared]
    bv = [_label_value(b[u], f"b[{u!r}]") for u in shared]
    k = cohens_kappa(av, bv, confidence)
    dis = [(u, x, y) for u, x, y in zip(shared, av, bv, strict=True) if x != y]
    return Agreement(len(shared), len(set(a) - set(b)), len(set(b) - set(a)), k, k.agreement,
                     k.confusion, dis, pabak(av, bv), matthews_corrcoef(av, bv))


@dataclass(frozen=True)
class PairAgreement:
    """Agreement of one pair of annotators (``annotator_a`` sorts first)."""

    annotator_a: Hashable
    annotator_b: Hashable
    agreement: Agreement


@dataclass(frozen=True)
class MultiRater:
    """Agreement among several annotators.

    ``pairwise`` for every pair (sorted), ``fleiss`` over the units with at
    least two labels (a varying number of labels per unit is allowed, see
    :func:`playground.stats.fleiss_kappa`), ``krippendorff`` nominal alpha with
    missing labels.  ``units`` is the sorted union of labelled unit ids.
    """

    annotators: list[Any]
    units: list[Any]
    pairwise: list[PairAgreement]
    fleiss: AgreementStat
    krippendorff: AgreementStat


def multi_rater(labels_by_annotator: Mapping[Any, Mapping[Any, int]],
                confidence: float = 0.95) -> MultiRater:
    """Pairwise Cohen's kappas, Fleiss' kappa and Krippendorff's alpha of several annotators."""
    annotators = sorted(labels_by_annotator, key=_sort_key)
    units = sorted({u for ann in annotators for u in labels_by_annotator[ann]}, key=_sort_key)
    pairs = [PairAgreement(x, y, agreement(labels_by_annotator[x], labels_by_annotator[y],
                                           confidence))
             for i, x in enumerate(annotators) for y in annotators[i + 1:]]
    ratings = [[labels_by_annotator[ann][u] for ann in annotators if u in labels_by_annotator[ann]]
               for u in units]
    reliability = [[labels_by_annotator[ann].get(u) for u in units] for ann in annotators]
    return MultiRater(annotators, units, pairs, fleiss_kappa(ratings),
                      krippendorff_alpha(reliability))
