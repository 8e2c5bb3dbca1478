"""Agreement of two raters on binary labels: confusion matrix, percent agreement, Cohen's kappa with
its interval, PABAK, Matthews, F1, balanced accuracy, and their vectorised forms over count arrays.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .intervals import _VAR_EPS, _check_confidence, _paired, z_value

__all__ = [
    "KappaResult",
    "balanced_accuracy",
    "balanced_accuracy_by_table",
    "balanced_accuracy_from_counts",
    "cohens_kappa",
    "cohens_kappa_table",
    "confusion_matrix",
    "f1_score",
    "kappa_by_table",
    "kappa_from_counts",
    "matthews_corrcoef",
    "pabak",
    "percent_agreement",
]

# --------------------------------------------------------------------------- two raters


def confusion_matrix(a: Sequence[Any], b: Sequence[Any]) -> tuple[tuple[int, int], tuple[int, int]]:
    """2x2 counts, rows = ``a`` (reference), columns = ``b``: ``((a0b0, a0b1), (a1b0, a1b1))``."""
    a_, b_ = _paired(a, b)
    c = [[0, 0], [0, 0]]
    for x, y in zip(a_, b_, strict=True):
        c[x][y] += 1
    return (c[0][0], c[0][1]), (c[1][0], c[1][1])


def percent_agreement(a: Sequence[Any], b: Sequence[Any]) -> float | None:
    """Share of units on which the two labellings agree, ``(a0b0 + a1b1) / n``; None if n == 0."""
    (n00, n01), (n10, n11) = confusion_matrix(a, b)
    n = n00 + n01 + n10 + n11
    return None if n == 0 else (n00 + n11) / n


@dataclass(frozen=True)
class KappaResult:
    """Cohen's kappa between a reference labelling ``a`` and a labelling ``b``.

    ``kappa``, ``low``, ``high`` are None when undefined (``defined`` False,
    ``reason`` says why).  ``low``/``high`` are also None when kappa is defined
    but its asymptotic standard error is zero (perfect agreement, or one
    labelling constant), with the explanation in ``note``.
    ``agreement`` is the observed agreement p_o (a fraction), ``expected`` the
    chance agreement p_e, ``base_rate`` the accuracy of always predicting
    ``a``'s majority class, ``max(mean(a), 1 - mean(a))``.
    ``confusion`` rows are ``a``, columns ``b``: ``((a0b0, a0b1), (a1b0, a1b1))``.
    """

    kappa: float | None
    low: float | None
    high: float | None
    agreement: float | None
    base_rate: float | None
    n: int
    defined: bool
    reason: str
    confusion: tuple[tuple[int, int], tuple[int, int]]
    expected: float | None = None
    std_error: float | None = None
    confidence: float = 0.95
    note: str = ""


def cohens_kappa(a: Sequence[Any], b: Sequence[Any], confidence: float = 0.95) -> KappaResult:
    """Cohen's kappa of two binary labellings of the same units, with its interval.

    With the 2x2 table ``n_ij`` (rows ``a``, columns ``b``) and ``n`` units::

        p_o   = (n_00 + n_11) / n                          observed agreement
        p_e   = (n_0. n_.0 + n_1. n_.1) / n^2              chance agreement
        kappa = (p_o - p_e) / (1 - p_e)
        interval = kappa -+ z * ASE, clipped to [-1, 1]

    kappa is :func:`kappa_from_counts`; ASE is the large-sample standard error
    of Fleiss, Cohen and Everitt (1969), with ``p_ij = n_ij / n``, row and
    column shares ``r_i``, ``c_j``::

        A     = sum_i p_ii (1 - (r_i + c_i)(1 - kappa))^2
        B     = (1 - kappa)^2 sum_{i != j} p_ij (c_i + r_j)^2
        C     = (kappa - p_e (1 - kappa))^2
        ASE^2 = (A + B - C) / ((1 - p_e)^2 n)

    computed in closed form; it equals ``statsmodels.stats.inter_rater.cohens_kappa``'s
    ``var_kappa`` (the reference in tests/test_stats.py), so at 95% the interval is
    statsmodels' ``kappa_low``/``kappa_upp``.
    Example: table ((20, 5), (10, 15)) -> p_o = 0.70, p_e = 0.50, kappa = 0.40,
    95% CI (0.1511, 0.6489).

    Degenerate inputs (never NaN, never an exception):

    * no units -> undefined, reason "no units";
    * both labellings use the same single class (p_e = 1) -> undefined,
      reason "both labellings use one class only" (agreement is still reported);
    * one labelling constant (or both constant but different) -> kappa = 0 by
      construction, defined, but no interval (ASE = 0), explained in ``note``;
    * perfect agreement with both classes -> kappa = 1, ASE = 0, no interval.

    Kappa is symmetric in ``a`` and ``b``; ``base_rate`` is not (it is ``a``'s).
    """
    a_, b_ = _paired(a, b)
    return cohens_kappa_table(confusion_matrix(a_, b_), confidence)


def cohens_kappa_table(confusion: tuple[tuple[int, int], tuple[int, int]],
                       confidence: float = 0.95) -> KappaResult:
    """:func:`cohens_kappa` from the 2x2 table ``((n_00, n_01), (n_10, n_11))`` (rows ``a``), in O(1)."""
    c = _check_confidence(confidence)
    (n00, n01), (n10, n11) = conf = confusion
    n = n00 + n01 + n10 + n11
    if n == 0:
        return KappaResult(None, None, None, None, None, 0, False, "no units", conf,
                           confidence=c)
    p_o = (n00 + n11) / n
    a1 = n10 + n11
    b1 = n01 + n11
    base_rate = max(a1, n - a1) / n
    p_e = ((n - a1) * (n - b1) + a1 * b1) / (n * n)
    if (a1 in (0, n)) and (b1 == a1):
        # Both labellings put every unit in the same single class: p_e = 1, 0/0.
        return KappaResult(None, None, None, p_o, base_rate, n, False,
                           "both labellings use one class only", conf,
                           expected=p_e, confidence=c)
    # (tp, fp, fn, tn) with a as the reference and b as the prediction
    value = kappa_from_counts(n11, n01, n10, n00)
    if value is None:  # pragma: no cover - excluded above; belt and braces
        return KappaResult(None, None, None, p_o, base_rate, n, False,
                           "kappa is not defined for this table", conf,
                           expected=p_e, confidence=c)
    var = _kappa_variance(conf, value)
    kappa = min(1.0, max(-1.0, value))
    note = ""
    low = high = se = None
    if math.isfinite(var) and var > _VAR_EPS:
        se = math.sqrt(var)
        z = z_value(c)
        low = max(-1.0, kappa - z * se)
        high = min(1.0, kappa + z * se)
    else:
        se = 0.0 if math.isfinite(var) else None
        if a1 in (0, n) or b1 in (0, n):
            note = ("a labelling uses one class only: kappa is 0 by construction and "
                    "carries no information about agreement; no interval")
        elif kappa >= 1.0:
            note = ("perfect agreement: the asymptotic standard error is 0, so no "
                    "interval is given; with few units agreement may still be lower")
        else:  # pragma: no cover - not reachable with a 2x2 table
            note = "the asymptotic standard error is 0; no interval"
    return KappaResult(kappa, low, high, p_o, base_rate, n, True, "", conf,
                       expected=p_e, std_error=se, confidence=c, note=note)


def _kappa_variance(confusion: tuple[tuple[int, int], tuple[int, int]], kappa: float) -> float:
    """ASE^2 of Fleiss, Cohen and Everitt (1969) for a 2x2 table (formula in :func:`cohens_kappa`)."""
    (n00, n01), (n10, n11) = confusion
    n = n00 + n01 + n10 + n11
    r0, r1 = (n00 + n01) / n, (n10 + n11) / n  # row shares (a)
    c0, c1 = (n00 + n10) / n, (n01 + n11) / n  # column shares (b)
    p_e = r0 * c0 + r1 * c1
    rest = 1.0 - kappa
    a = n00 / n * (1.0 - (r0 + c0) * rest) ** 2 + n11 / n * (1.0 - (r1 + c1) * rest) ** 2
    b = rest * rest * (n01 / n * (c0 + r1) ** 2 + n10 / n * (c1 + r0) ** 2)
    c = (kappa - p_e * rest) ** 2
    return (a + b - c) / ((1.0 - p_e) ** 2 * n)


def pabak(a: Sequence[Any], b: Sequence[Any]) -> float | None:
    """Prevalence- and bias-adjusted kappa, ``PABAK = 2 p_o - 1`` (None if no units).

    Kappa with chance agreement fixed at 1/2; useful beside kappa when one class
    dominates (high agreement but low kappa: the "kappa paradox").
    """
    p_o = percent_agreement(a, b)
    return None if p_o is None else 2.0 * p_o - 1.0


def matthews_corrcoef(reference: Sequence[Any], predicted: Sequence[Any]) -> float | None:
    """Matthews correlation coefficient (phi) of two binary labellings.

    With TP = n_11, TN = n_00, FP = n_01, FN = n_10 (rows ``reference``)::

        MCC = (TP TN - FP FN) / sqrt((TP+FP)(TP+FN)(TN+FP)(TN+FN))

    None when any of the four margins is zero (one labelling constant, or no
    units): the correlation is then 0/0.
    """
    (tn, fp), (fn, tp) = confusion_matrix(reference, predicted)
    den = (tp + fp) * (tp + fn) * (tn + fp) * (tn + fn)
    if den == 0:
        return None
    return (tp * tn - fp * fn) / math.sqrt(den)


def f1_score(reference: Sequence[Any], predicted: Sequence[Any], positive: int = 1) -> float | None:
    """F1 of ``predicted`` against ``reference`` for the ``positive`` class.

    ``F1 = 2 TP / (2 TP + FP + FN)``.  None when neither labelling contains the
    positive class (``2 TP + FP + FN = 0``: precision and recall are both 0/0).
    """
    if positive not in (0, 1):
        raise ValueError(f"positive must be 0 or 1, got {positive!r}")
    r, p = _paired(reference, predicted, ("reference", "predicted"))
    tp = sum(1 for x, y in zip(r, p, strict=True) if x == positive and y == positive)
    fp = sum(1 for x, y in zip(r, p, strict=True) if x != positive and y == positive)
    fn = sum(1 for x, y in zip(r, p, strict=True) if x == positive and y != positive)
    den = 2 * tp + fp + fn
    return None if den == 0 else 2 * tp / den


def balanced_accuracy(reference: Sequence[Any], predicted: Sequence[Any]) -> float | None:
    """Mean per-class recall over the classes present in ``reference``.

    ``(TP / (TP + FN) + TN / (TN + FP)) / 2`` when ``reference`` has both
    classes; the recall of the one class when it has one (as scikit-learn);
    None when there are no units.  Computed by :func:`balanced_accuracy_from_counts`.
    """
    (tn, fp), (fn, tp) = confusion_matrix(reference, predicted)
    return balanced_accuracy_from_counts(tp, fp, fn, tn)


def _kappa_arrays(tp: np.ndarray, fp: np.ndarray, fn: np.ndarray, tn: np.ndarray) -> np.ndarray:
    """Cohen's kappa of 2x2 tables, element-wise; NaN where undefined (no units, or p_e = 1)."""
    n = tp + fp + fn + tn
    with np.errstate(divide="ignore", invalid="ignore"):
        p_o = (tp + tn) / n
        pred_pos, ref_pos = tp + fp, tp + fn
        p_e = (pred_pos * ref_pos + (n - pred_pos) * (n - ref_pos)) / (n * n)
        kappa = (p_o - p_e) / (1.0 - p_e)
    undefined = (n == 0) | (p_e >= 1.0 - 1e-15)
    return np.where(undefined, np.nan, kappa)


def _balanced_accuracy_arrays(tp: np.ndarray, fp: np.ndarray, fn: np.ndarray, tn: np.ndarray) -> np.ndarray:
    """Balanced accuracy of 2x2 tables, element-wise; NaN with no units."""
    pos, neg = tp + fn, tn + fp
    with np.errstate(divide="ignore", invalid="ignore"):
        r_pos = tp / pos
        r_neg = tn / neg
    both = (pos > 0) & (neg > 0)
    out = np.where(both, (r_pos + r_neg) / 2, np.where(pos > 0, r_pos, r_neg))
    return np.where((pos + neg) == 0, np.nan, out)


def kappa_from_counts(tp: int, fp: int, fn: int, tn: int) -> float | None:
    """Cohen's kappa of one 2x2 table (the one formula every module uses).

    With ``n = tp + fp + fn + tn`` (tp: both positive; fp: predicted positive,
    reference negative; fn: the reverse; tn: both negative)::

        p_o   = (tp + tn) / n
        p_e   = ((tp + fp)(tp + fn) + (fn + tn)(fp + tn)) / n^2
        kappa = (p_o - p_e) / (1 - p_e)

    None when there are no units or ``p_e = 1`` (both labellings one and the
    same class).  :func:`kappa_by_table` is the same over arrays of tables.
    """
    v = float(_kappa_arrays(*(np.asarray([x], dtype=float) for x in (tp, fp, fn, tn)))[0])
    return None if math.isnan(v) else v


def balanced_accuracy_from_counts(tp: int, fp: int, fn: int, tn: int) -> float | None:
    """Balanced accuracy of one 2x2 table: ``(tp / (tp + fn) + tn / (tn + fp)) / 2``.

    The recall of the one class when the reference has one class only (as
    scikit-learn); None with no units.  :func:`balanced_accuracy_by_table` is
    the same over arrays of tables.
    """
    v = float(_balanced_accuracy_arrays(*(np.asarray([x], dtype=float) for x in (tp, fp, fn, tn)))[0])
    return None if math.isnan(v) else v


def kappa_by_table(tp: np.ndarray, fp: np.ndarray, fn: np.ndarray, tn: np.ndarray) -> np.ndarray:
    """:func:`kappa_from_counts` element-wise over count arrays (threshold sweeps); NaN marks undefined."""
    return _kappa_arrays(*(np.asarray(x, dtype=float) for x in (tp, fp, fn, tn)))


def balanced_accuracy_by_table(tp: np.ndarray, fp: np.ndarray, fn: np.ndarray, tn: np.ndarray) -> np.ndarray:
    """:func:`balanced_accuracy_from_counts` element-wise over count arrays; NaN marks undefined."""
    return _balanced_accuracy_arrays(*(np.asarray(x, dtype=float) for x in (tp, fp, fn, tn)))
