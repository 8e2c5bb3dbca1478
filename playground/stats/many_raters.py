"""Agreement of several raters: Fleiss' kappa and Krippendorff's alpha (nominal)."""
from __future__ import annotations

import math
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .intervals import _binary

__all__ = ["AgreementStat", "fleiss_kappa", "krippendorff_alpha"]

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
