"""Statistics of labels: intervals, agreement, prediction-powered inference.

Pure functions, no widgets, no plotting; every formula is written in the
docstring of the function that computes it, so a reader can check a number by
hand.  Conventions used throughout:

* ``z`` is the two-sided normal quantile of the confidence level:
  ``z = Phi^-1((1 + confidence) / 2)``; 1.959964 for 95%.
* A statistic that is not defined for the data (0/0, one category only, no
  overlap) is returned as ``None`` together with ``defined=False`` and a
  plain-language ``reason``.  No function returns NaN.
* Binary labels are ``0``/``1`` (``True``/``False`` are accepted as 1/0).

Every interval and agreement statistic here is computed in closed form with
the standard library and numpy: importing statsmodels (it pulls scipy and
pandas) costs a kernel about 166 MiB and over a second, and the labelling page
needs these figures on its first view.  statsmodels is the reference the tests
check them against (``tests/test_stats.py``).
"""
from __future__ import annotations

import math
import numbers
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from statistics import NormalDist
from typing import Any

import numpy as np

__all__ = [
    "AgreementStat",
    "KappaResult",
    "PPIResult",
    "PairedDifference",
    "balanced_accuracy",
    "balanced_accuracy_by_table",
    "balanced_accuracy_from_counts",
    "cohens_kappa",
    "cohens_kappa_table",
    "confusion_matrix",
    "f1_score",
    "fleiss_kappa",
    "kappa_by_table",
    "kappa_from_counts",
    "krippendorff_alpha",
    "matthews_corrcoef",
    "pabak",
    "paired_difference",
    "percent_agreement",
    "ppi_labels_needed",
    "ppi_mean",
    "ppi_tuning",
    "wilson_interval",
    "z_value",
]

#: Variances at or below this are treated as exactly zero (floating-point noise).
_VAR_EPS = 1e-12


# --------------------------------------------------------------------------- helpers


def _check_confidence(confidence: float) -> float:
    if isinstance(confidence, bool) or not isinstance(confidence, numbers.Real):
        raise ValueError(f"confidence must be a number in (0, 1), got {confidence!r}")
    c = float(confidence)
    if not (0.0 < c < 1.0):
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    return c


@lru_cache(maxsize=64)
def z_value(confidence: float = 0.95) -> float:
    """Two-sided normal quantile ``z = Phi^-1((1 + confidence) / 2)``.

    ``z_value(0.95) = 1.959964``; ``z_value(0.90) = 1.644854``.
    """
    c = _check_confidence(confidence)
    return NormalDist().inv_cdf((1.0 + c) / 2.0)


def _binary(values: Iterable[Any], name: str) -> list[int]:
    """Values as a list of 0/1 ints; ValueError naming the first bad value."""
    out = []
    for i, v in enumerate(values):
        if isinstance(v, (bool, np.bool_)) or (isinstance(v, numbers.Real) and v in (0, 1)):
            out.append(int(v))  # type: ignore[arg-type]
        else:
            raise ValueError(f"{name}[{i}] = {v!r}: labels must be 0 or 1")
    return out


def _paired(a: Sequence[Any], b: Sequence[Any], names: tuple[str, str] = ("a", "b")) -> tuple[list[int], list[int]]:
    a_ = _binary(a, names[0])
    b_ = _binary(b, names[1])
    if len(a_) != len(b_):
        raise ValueError(
            f"{names[0]} and {names[1]} must have the same length, got {len(a_)} and {len(b_)}"
        )
    return a_, b_


def _is_int(x: Any) -> bool:
    return isinstance(x, (numbers.Integral, np.integer)) and not isinstance(x, (bool, np.bool_))


# --------------------------------------------------------------------------- Wilson


@lru_cache(maxsize=1 << 16)
def _wilson_cached(successes: int, n: int, confidence: float) -> tuple[float, float]:
    z = z_value(confidence)
    z2 = z * z
    centre = (successes + z2 / 2.0) / (n + z2)
    half = z * math.sqrt(successes * (n - successes) / n + z2 / 4.0) / (n + z2)
    low = min(1.0, max(0.0, centre - half))
    high = min(1.0, max(0.0, centre + half))
    # The Wilson bounds are exactly 0 at 0/n and exactly 1 at n/n; remove rounding noise.
    if successes == 0:
        low = 0.0
    if successes == n:
        high = 1.0
    return low, high


def wilson_interval(successes: int, n: int, confidence: float = 0.95) -> tuple[float, float] | None:
    """Wilson score interval of a proportion ``successes / n``; ``None`` when ``n == 0``.

    Wilson (1927), with ``x = successes`` and ``z`` the normal quantile
    (:func:`z_value`, 1.959964 at 95%)::

        centre    = (x + z^2 / 2) / (n + z^2)
        halfwidth = z * sqrt(x (n - x) / n + z^2 / 4) / (n + z^2)
        interval  = (centre - halfwidth, centre + halfwidth), clamped to [0, 1]

    e.g. 3/10 -> (0.1078, 0.6032); 0/10 -> (0, 0.2775); 10/10 -> (0.7225, 1).
    Computed in closed form and cached by ``(successes, n, confidence)``; it
    equals ``statsmodels.stats.proportion.proportion_confint(method="wilson")``
    to 1e-12 (the reference in tests/test_stats.py).  Unlike the Wald interval it
    never collapses to a point at 0/n or n/n and stays inside [0, 1].

    Raises ValueError unless ``successes`` and ``n`` are integers with
    ``0 <= successes <= n``.
    """
    if not _is_int(successes) or not _is_int(n):
        raise ValueError(
            f"successes and n must be integers, got successes={successes!r}, n={n!r}"
        )
    successes, n = int(successes), int(n)
    if n < 0 or successes < 0 or successes > n:
        raise ValueError(f"need 0 <= successes <= n, got successes={successes}, n={n}")
    c = _check_confidence(confidence)
    if n == 0:
        return None
    return _wilson_cached(successes, n, c)


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


# --------------------------------------------------------------------------- paired difference


@dataclass(frozen=True)
class PairedDifference:
    """The difference of two rates measured on the same units, ``rate_a - rate_b``, with its interval.

    ``a_only`` counts units where ``a`` says 1 and ``b`` 0, ``b_only`` the
    reverse (the discordant pairs; only they move the difference).  ``low``/
    ``high`` None when undefined (no units; ``reason`` says so).
    """

    difference: float | None
    low: float | None
    high: float | None
    n: int
    rate_a: float | None
    rate_b: float | None
    a_only: int
    b_only: int
    confidence: float = 0.95
    defined: bool = True
    reason: str = ""

    @property
    def excludes_zero(self) -> bool:
        """True when the interval lies entirely on one side of 0 (the two rates differ)."""
        return self.low is not None and self.high is not None and (self.low > 0 or self.high < 0)


def paired_difference(a: Sequence[Any], b: Sequence[Any], confidence: float = 0.95) -> PairedDifference:
    """Interval for ``mean(a) - mean(b)`` of two 0/1 labellings of the same units (Newcombe 1998, method 10).

    Two rates of the same units are correlated, so two Wilson intervals side
    by side say nothing about their difference (overlap is not "no
    difference").  With the paired table ``e`` (a = 1, b = 1), ``f`` (a = 1,
    b = 0), ``g`` (a = 0, b = 1), ``h`` (both 0), ``n`` units,
    ``p_a = (e + f) / n``, ``p_b = (e + g) / n``, ``D = p_a - p_b = (f - g) / n``,
    Wilson intervals ``(l_a, u_a)``, ``(l_b, u_b)`` (:func:`wilson_interval`)::

        phi = (e h - f g - n/2) / sqrt((e+f)(g+h)(e+g)(f+h))  when e h - f g > n/2
              0                                               when 0 <= e h - f g <= n/2
              (e h - f g) / sqrt(...)                         when e h - f g < 0
              0                                               when a margin is 0
        low  = D - sqrt((p_a - l_a)^2 - 2 phi (p_a - l_a)(u_b - p_b) + (u_b - p_b)^2)
        high = D + sqrt((p_b - l_b)^2 - 2 phi (p_b - l_b)(u_a - p_a) + (u_a - p_a)^2)

    Newcombe, R. G. (1998), "Improved confidence intervals for the difference
    between binomial proportions based on paired data", *Statistics in
    Medicine* 17, 2635-2650, method 10 (score intervals, no continuity
    correction; ``phi`` as there).  His example e, f, g, h = 36, 12, 2, 0
    gives D = 0.2000, 95% interval (0.0569, 0.3404).  The interval stays
    inside [-1, 1] and is not degenerate at 0/n or n/n.
    """
    c = _check_confidence(confidence)
    a_, b_ = _paired(a, b)
    n = len(a_)
    e = sum(1 for x, y in zip(a_, b_, strict=True) if x and y)
    f = sum(1 for x, y in zip(a_, b_, strict=True) if x and not y)
    g = sum(1 for x, y in zip(a_, b_, strict=True) if y and not x)
    h = n - e - f - g
    if n == 0:
        return PairedDifference(None, None, None, 0, None, None, 0, 0, c, False, "no units")
    p_a, p_b = (e + f) / n, (e + g) / n
    ci_a, ci_b = wilson_interval(e + f, n, c), wilson_interval(e + g, n, c)
    assert ci_a is not None and ci_b is not None
    (l_a, u_a), (l_b, u_b) = ci_a, ci_b
    margins = (e + f) * (g + h) * (e + g) * (f + h)
    cross = e * h - f * g
    if margins == 0 or 0 <= cross <= n / 2:
        phi = 0.0
    else:
        phi = (cross - n / 2 if cross > 0 else cross) / math.sqrt(margins)
    d = (f - g) / n
    low = d - math.sqrt(max(0.0, (p_a - l_a) ** 2 - 2 * phi * (p_a - l_a) * (u_b - p_b) + (u_b - p_b) ** 2))
    high = d + math.sqrt(max(0.0, (p_b - l_b) ** 2 - 2 * phi * (p_b - l_b) * (u_a - p_a) + (u_a - p_a) ** 2))
    return PairedDifference(d, max(-1.0, low), min(1.0, high), n, p_a, p_b, f, g, c)


# --------------------------------------------------------------------------- several raters


@dataclass(frozen=True)
class AgreementStat:
    """A multi-rater agreement coefficient; ``value`` None when not ``defined``.

    ``n_units`` counts the units that entered the statistic (units with at
    least two ratings), ``n_ratings`` the ratings on those units.
    """

    name: str
    value: float | None
    defined: bool
    reason: str
    n_units: int
    n_ratings: int = 0
    note: str = ""


def fleiss_kappa(ratings: Iterable[Sequence[Any]]) -> AgreementStat:
    """Fleiss' kappa of binary labels from several annotators; Fleiss & Cuzick (1979) when counts differ.

    ``ratings`` holds one list per unit with the 0/1 labels it received (from
    any number of annotators); units with fewer than two labels are skipped.
    With ``N`` units, ``n_i`` labels and ``x_i`` "yes" labels on unit i::

        n_bar = sum_i n_i / N                    mean labels per unit
        p     = sum_i x_i / (N n_bar),  q = 1 - p
        kappa = 1 - sum_i x_i (n_i - x_i) / n_i  /  (N (n_bar - 1) p q)

    This is Fleiss, J. L. & Cuzick, J. (1979), "The reliability of dichotomous
    judgments: unequal numbers of judges per subject", *Applied Psychological
    Measurement* 3(4), 537-542.  When every unit has the same number of labels
    it equals Fleiss (1971) (``statsmodels.stats.inter_rater.fleiss_kappa``,
    the reference in tests/test_stats.py); ``note`` says when the counts
    differ.  One formula for both, in closed form.  E.g. ``[[1, 1], [0, 1, 0], [1, 1], [0, 0]]``:
    N = 4, n_bar = 9/4, p = 5/9, sum x(n - x)/n = 2/3, kappa = 1 - (2/3) /
    (4 * 5/4 * 20/81) = 1 - 0.54 = 0.46.  Undefined when no unit has two
    labels, or when every label is the same class (p q = 0).
    """
    table = []
    for i, unit in enumerate(ratings):
        vals = _binary(unit, f"ratings[{i}]")
        if len(vals) >= 2:
            ones = sum(vals)
            table.append((len(vals) - ones, ones))
    n_units = len(table)
    n_ratings = sum(x + y for x, y in table)
    if n_units == 0:
        return AgreementStat("fleiss_kappa", None, False, "no unit has two or more labels",
                             0, 0)
    if all(x == 0 for x, _ in table) or all(y == 0 for _, y in table):
        return AgreementStat("fleiss_kappa", None, False, "every label is the same class",
                             n_units, n_ratings)
    n_bar = n_ratings / n_units
    p = sum(y for _, y in table) / n_ratings
    within = sum(x * y / (x + y) for x, y in table)  # x_i (n_i - x_i) / n_i
    value = 1.0 - within / (n_units * (n_bar - 1.0) * p * (1.0 - p))
    equal = len({x + y for x, y in table}) == 1
    note = "" if equal else "units have different numbers of labels: Fleiss-Cuzick (1979) kappa"
    return AgreementStat("fleiss_kappa", value, True, "", n_units, n_ratings, note)


def krippendorff_alpha(reliability: Sequence[Sequence[Any]]) -> AgreementStat:
    """Krippendorff's alpha (nominal) with missing labels allowed.

    ``reliability`` has one row per annotator and one column per unit, ``None``
    (or NaN) where an annotator did not label a unit.  Only units with at least
    two labels ("pairable" values) enter the statistic.  With the coincidence
    matrix ``o_ck`` of pairable values, ``n_c`` its margins and ``n`` their sum,
    for two classes::

        alpha = 1 - D_o / D_e = 1 - (n - 1) * o_01 / (n_0 * n_1)

    Computed by ``krippendorff.alpha(..., level_of_measurement="nominal")``.
    Undefined when no unit has two labels or when every pairable label is the
    same class (D_e = 0).
    """
    import krippendorff  # maintained implementation; imported lazily (numpy only)

    rows = [list(r) for r in reliability]
    if not rows:
        return AgreementStat("krippendorff_alpha", None, False, "no annotators", 0, 0)
    width = len(rows[0])
    if any(len(r) != width for r in rows):
        raise ValueError("every annotator row must have one entry per unit")
    data = np.full((len(rows), width), np.nan)
    for i, r in enumerate(rows):
        for j, v in enumerate(r):
            if v is None or (isinstance(v, float) and math.isnan(v)):
                continue
            data[i, j] = _binary([v], f"reliability[{i}]")[0]
    counts = (~np.isnan(data)).sum(axis=0)
    pairable = counts >= 2
    n_units = int(pairable.sum())
    n_ratings = int(counts[pairable].sum())
    if n_units == 0:
        return AgreementStat("krippendorff_alpha", None, False,
                             "no unit has two or more labels", 0, 0)
    values = data[:, pairable]
    values = values[~np.isnan(values)]
    if np.all(values == values[0]):
        return AgreementStat("krippendorff_alpha", None, False,
                             "every label on a shared unit is the same class",
                             n_units, n_ratings)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        value = float(krippendorff.alpha(reliability_data=data, value_domain=[0.0, 1.0],
                                         level_of_measurement="nominal"))
    if not math.isfinite(value):  # pragma: no cover - excluded by the checks above
        return AgreementStat("krippendorff_alpha", None, False, "alpha is not defined",
                             n_units, n_ratings)
    return AgreementStat("krippendorff_alpha", value, True, "", n_units, n_ratings)


# --------------------------------------------------------------------------- PPI


@dataclass(frozen=True)
class PPIResult:
    """Prediction-powered estimate of a rate, beside the human-only and automatic-only ones.

    ``estimate``/``low``/``high``: the PPI++ point estimate and interval (None
    when not ``defined``; ``low``/``high`` also None when fewer than two units
    are on either side, see ``reason``).  ``lam`` is the power-tuning
    parameter used (1 = classical PPI, 0 = the human labels alone);
    ``tuned`` says whether it was estimated from the data.  ``rectifier`` =
    mean(human - lam * automatic) on the labelled units.  ``human_only`` is
    the Wilson interval of the human labels, ``human_mean`` their mean;
    ``auto_only`` the mean of all automatic labels (labelled and unlabelled
    units), i.e. what trusting the scorer would say.  The interval is valid
    only when the labelled units are a uniform random sample of all units
    (see :mod:`playground.calibrate.ppi`).
    """

    estimate: float | None
    low: float | None
    high: float | None
    n_labelled: int
    n_unlabelled: int
    human_only: tuple[float, float] | None
    auto_only: float | None
    human_mean: float | None = None
    rectifier: float | None = None
    std_error: float | None = None
    confidence: float = 0.95
    defined: bool = True
    reason: str = ""
    note: str = ""
    lam: float | None = None
    tuned: bool = False

    @property
    def width(self) -> float | None:
        """Width of the PPI interval, ``high - low``."""
        return None if self.low is None or self.high is None else self.high - self.low

    @property
    def human_only_width(self) -> float | None:
        """Width of the human-only Wilson interval."""
        return None if self.human_only is None else self.human_only[1] - self.human_only[0]


def _as_rates(values: Iterable[Any], name: str) -> np.ndarray:
    arr = np.asarray([float(v) for v in values], dtype=float)
    if arr.size and (not np.all(np.isfinite(arr)) or arr.min() < 0 or arr.max() > 1):
        raise ValueError(f"{name} must be finite numbers in [0, 1]")
    return arr


def _ppi_inputs(auto_unlabelled: Sequence[Any], auto_labelled: Sequence[Any],
                human_labelled: Sequence[Any]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The three PPI inputs as float arrays, checked: rates in [0, 1], human labels 0/1, paired lengths."""
    f_u = _as_rates(auto_unlabelled, "auto_unlabelled")
    f_l = _as_rates(auto_labelled, "auto_labelled")
    y = np.asarray(_binary(human_labelled, "human_labelled"), dtype=float)
    if len(f_l) != len(y):
        raise ValueError(
            f"auto_labelled and human_labelled must have the same length, "
            f"got {len(f_l)} and {len(y)}")
    return f_u, f_l, y


def _check_lam(lam: float | None) -> float | None:
    if lam is None:
        return None
    if isinstance(lam, bool) or not isinstance(lam, numbers.Real) or not 0 <= lam <= 1:
        raise ValueError(f"lam must be a number in [0, 1] or None (tuned), got {lam!r}")
    return float(lam)


def ppi_tuning(f_u: np.ndarray, f_l: np.ndarray, y: np.ndarray) -> float:
    """The power-tuning parameter of PPI++ for a mean (Angelopoulos, Duchi & Zrnic 2023, eq. for the mean)::

        lam = Cov(Y, f(X)) / ((1 + n / N) Var(f(X)))     clipped to [0, 1]

    with ``Cov`` over the n labelled units (ddof = 0) and ``Var`` over all n + N
    automatic labels (ddof = 1), as ``ppi_py.ppi_mean_ci``.  It minimises the
    estimated variance of the PPI++ estimate; 0 (the human labels alone) when
    the automatic labels do not vary.
    """
    n, big_n = len(y), len(f_u)
    var_f = float(np.var(np.concatenate([f_l, f_u]), ddof=1))
    if var_f <= _VAR_EPS or n < 2 or big_n < 1:
        return 0.0
    cov = float(np.mean((y - y.mean()) * (f_l - f_l.mean())))
    return min(1.0, max(0.0, cov / ((1.0 + n / big_n) * var_f)))


def ppi_mean(auto_unlabelled: Sequence[Any], auto_labelled: Sequence[Any], human_labelled: Sequence[Any],
             confidence: float = 0.95, lam: float | None = None) -> PPIResult:
    """Prediction-powered inference for a rate: PPI++ (power-tuned) by default, classical PPI with ``lam=1``.

    ``auto_unlabelled`` are automatic labels f(X) on the N units no person
    labelled; ``auto_labelled``/``human_labelled`` the automatic and human
    labels on the n units a person did label (same order).  Labels are 0/1 (a
    score in [0, 1] is also accepted for ``f``).  With ``lam`` from
    :func:`ppi_tuning` unless given::

        theta = lam * mean(f(X_unlab)) + mean(Y_lab - lam * f(X_lab))
        var   = Var(lam * f(X_unlab)) / N + Var(Y_lab - lam * f(X_lab)) / n     (ddof = 0)
        interval = theta -+ z * sqrt(var), clipped to [0, 1]

    PPI: Angelopoulos, Bates, Fannjiang, Jordan & Zrnic, *Science* 382 (2023);
    PPI++ and ``lam``: Angelopoulos, Duchi & Zrnic, "PPI++: Efficient
    prediction-powered inference", arXiv:2311.01453 (2023).  Equal to
    ``ppi_py.ppi_mean_ci`` / ``ppi_mean_pointestimate`` (checked in the tests).
    ``lam = 1`` is classical PPI, ``lam = 0`` the human labels' own normal
    interval; the tuned ``lam`` is never wider than either (asymptotically).

    Valid only when the labelled units are a uniform random sample of all
    units.  The point estimate is clipped to [0, 1].  The interval needs
    N >= 2 and n >= 2 (else ``low``/``high`` are None and ``reason`` says
    why); when the automatic labels agree with every human label the
    rectifier variance is 0 and the interval can be misleadingly narrow
    (``note`` warns).  Undefined (``estimate`` None) when there are no human
    labels or no unlabelled units.
    """
    c = _check_confidence(confidence)
    lam_given = _check_lam(lam)
    f_u, f_l, y = _ppi_inputs(auto_unlabelled, auto_labelled, human_labelled)
    n, big_n = len(y), len(f_u)
    human_ci = wilson_interval(int(y.sum()), n, c)
    human_mean = float(y.mean()) if n else None
    all_auto = np.concatenate([f_u, f_l])
    auto_only = float(all_auto.mean()) if all_auto.size else None
    common: dict[str, Any] = {"n_labelled": n, "n_unlabelled": big_n, "human_only": human_ci,
                              "auto_only": auto_only, "human_mean": human_mean, "confidence": c}
    if n == 0:
        return PPIResult(None, None, None, defined=False,
                         reason="no human labels: nothing to rectify the automatic labels with",
                         **common)
    if big_n == 0:
        return PPIResult(None, None, None, defined=False,
                         reason="no unlabelled units: use the human labels alone (human_only)",
                         **common)
    used = lam_given if lam_given is not None else ppi_tuning(f_u, f_l, y)
    tuned = lam_given is None
    diff = y - used * f_l
    rectifier = float(diff.mean())
    raw = used * float(f_u.mean()) + rectifier
    estimate = min(1.0, max(0.0, raw))
    if n < 2 or big_n < 2:
        return PPIResult(estimate, None, None, rectifier=rectifier, lam=used, tuned=tuned,
                         reason="an interval needs at least 2 labelled and 2 unlabelled units",
                         **common)
    var = float(np.var(used * f_u)) / big_n + float(np.var(diff)) / n
    se = math.sqrt(max(var, 0.0))
    z = z_value(c)
    low = min(1.0, max(0.0, raw - z * se))
    high = min(1.0, max(0.0, raw + z * se))
    note = ""
    if float(np.var(y - f_l)) <= _VAR_EPS:
        note = ("the automatic labels agree with every human label, so the rectifier "
                "variance is 0 and the interval may be too narrow; label more units")
    return PPIResult(estimate, low, high, rectifier=rectifier, std_error=se, note=note,
                     lam=used, tuned=tuned, **common)


def ppi_labels_needed(auto_unlabelled: Sequence[Any], auto_labelled: Sequence[Any],
                      human_labelled: Sequence[Any], width: float,
                      confidence: float = 0.95, lam: float | None = None) -> int | None:
    """Total number of human labels n for which the PPI++ interval would be ``width`` wide.

    From the current estimates, with ``lam`` tuned as in :func:`ppi_mean`
    unless given, ``s_f^2 = Var(lam f(X_unlab))`` and ``s_r^2 = Var(Y_lab -
    lam f(X_lab))`` (ddof = 0, as the interval), holding N (the unlabelled
    units) fixed, the half-width ``h = width / 2`` requires::

        z * sqrt(s_f^2 / N + s_r^2 / n) <= h
        n >= s_r^2 / ((h / z)^2 - s_f^2 / N)          (rounded up, at least 2)

    Returns the *total* n (subtract the current ``n_labelled`` for the extra
    labels to collect), or None when the width cannot be reached by more human
    labels alone (``(h / z)^2 <= s_f^2 / N``: the unlabelled term by itself is
    already wider) or when fewer than 2 units are on either side.  The
    estimate is only as good as ``s_r^2``: from a handful of labels it is rough
    (0 when the scorer happened to agree with every human label), ``lam`` is
    held at its current value, and the clipping to [0, 1] is ignored.
    """
    c = _check_confidence(confidence)
    lam_given = _check_lam(lam)
    if not (isinstance(width, numbers.Real) and 0 < width <= 2 and math.isfinite(width)):
        raise ValueError(f"width must be a number in (0, 2], got {width!r}")
    f_u, f_l, y = _ppi_inputs(auto_unlabelled, auto_labelled, human_labelled)
    if len(y) < 2 or len(f_u) < 2:
        return None
    used = lam_given if lam_given is not None else ppi_tuning(f_u, f_l, y)
    s_f2 = float(np.var(used * f_u))
    s_r2 = float(np.var(y - used * f_l))
    budget = (width / 2.0 / z_value(c)) ** 2 - s_f2 / len(f_u)
    if budget <= 0:
        return None
    return max(2, math.ceil(s_r2 / budget - 1e-9))
