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

from .exact import (
    clopper_pearson_interval,
    exact_labels_needed,
)
from .intervals import (
    wilson_interval,
    z_value,
)
from .many_raters import (
    AgreementStat,
    fleiss_kappa,
    krippendorff_alpha,
)
from .paired import (
    PairedDifference,
    paired_difference,
)
from .ppi import (
    PPIResult,
    ppi_labels_needed,
    ppi_mean,
    ppi_tuning,
    thin_slice,
)
from .two_raters import (
    KappaResult,
    balanced_accuracy,
    balanced_accuracy_by_table,
    balanced_accuracy_from_counts,
    cohens_kappa,
    cohens_kappa_table,
    confusion_matrix,
    f1_score,
    kappa_by_table,
    kappa_from_counts,
    matthews_corrcoef,
    pabak,
    percent_agreement,
)

__all__ = [
    "AgreementStat",
    "KappaResult",
    "PPIResult",
    "PairedDifference",
    "balanced_accuracy",
    "balanced_accuracy_by_table",
    "balanced_accuracy_from_counts",
    "clopper_pearson_interval",
    "cohens_kappa",
    "cohens_kappa_table",
    "confusion_matrix",
    "exact_labels_needed",
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
    "thin_slice",
    "wilson_interval",
    "z_value",
]
