"""Where to cut the score, and how well the score tracks the human "yes" rate.

* Threshold sweep (:func:`threshold_sweep`): the automatic label at ``t``
  is ``score >= t``; for every candidate ``t`` kappa, F1, precision and
  recall (of the "no" class unless asked otherwise).  The best threshold is
  the highest kappa, ties broken by closeness to the default, then the
  lower ``t``.
* Cross-validated figure: folds grouped by the human labelling's ``group``
  column (RAGTruth: source id), else by case id; the threshold is chosen on
  the other folds and applied to each held-out fold; kappa of the pooled
  held-out predictions.
* Small-set warning (:func:`small_set_warning`): fewer than
  :data:`SMALL_N` units or fewer than :data:`SMALL_MINORITY` of the minority
  human class.
* Reliability (:func:`reliability`): equal-width score bins, bin ``i`` =
  ``[low + i w, low + (i+1) w)`` with ``w = (high - low) / bins`` (the last
  bin closed), against the human "yes" rate per bin with its Wilson interval;
  a calibrated score has ``yes_rate`` close to ``mean_score`` in every bin.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ..stats import cohens_kappa, wilson_interval
from ..sweep import DEFAULT_GRID, CVResult, SweepRow, best_row, grouped_cv, sweep
from .comparison import paired
from .labellings import BINARY_THRESHOLD, AutoLabelling, HumanLabelling
from .tables import _r, _round_frame

__all__ = [
    "SMALL_MINORITY",
    "SMALL_N",
    "ThresholdCalibration",
    "reliability",
    "reliability_for",
    "small_set_warning",
    "threshold_sweep",
]

#: A labelled set is "small" below this many units ...
SMALL_N = 100
#: ... or with fewer than this many units of the minority human class.
SMALL_MINORITY = 20


def small_set_warning(n: int, minority: int) -> str:
    """A warning when the labelled set is too small to trust an in-sample best threshold ('' otherwise).

    Small means fewer than :data:`SMALL_N` units or fewer than
    :data:`SMALL_MINORITY` units of the minority human class.
    """
    why = []
    if n < SMALL_N:
        why.append(f"{n} labelled units (< {SMALL_N})")
    if minority < SMALL_MINORITY:
        why.append(f"{minority} of the minority class (< {SMALL_MINORITY})")
    if not why:
        return ""
    return ("small labelled set: " + " and ".join(why) + ". The in-sample best threshold is optimistic and may "
            "not hold on new data; read the cross-validated figure and label more units.")


@dataclass(frozen=True, eq=False)
class ThresholdCalibration:
    """A threshold sweep of one dimension's score against the human labels.

    ``rows``: one :class:`playground.sweep.SweepRow` per candidate threshold
    (F1, precision and recall of the "no" class unless ``f1_class`` is True);
    ``default``/``best``: the rows of the current default threshold and of the
    highest ``criterion`` (ties: closest to the default, then lower);
    ``default_kappa_ci``/``best_kappa_ci``: Cohen's kappa intervals of those
    two rows; ``cv``: grouped cross-validation (None with fewer than two
    groups or one human class, ``cv_reason`` says why); ``warning``: see
    :func:`small_set_warning`; ``binary``: the score takes two values at most,
    so there is nothing to sweep.
    """

    dimension: str
    n: int
    minority: int
    thresholds: tuple[float, ...]
    rows: tuple[SweepRow, ...]
    default_threshold: float | None
    default: SweepRow | None
    best: SweepRow | None
    default_kappa_ci: tuple[float | None, float | None]
    best_kappa_ci: tuple[float | None, float | None]
    cv: CVResult | None
    cv_reason: str
    warning: str
    group_by: str
    binary: bool = False
    f1_class: bool = False
    #: What "best" maximises: ``kappa`` or ``balanced_accuracy`` (:data:`playground.sweep.CRITERIA`).
    criterion: str = "kappa"

    def frame(self) -> pd.DataFrame:
        """The sweep as a rounded table (one row per threshold)."""
        cols = ["threshold", "kappa", "f1", "precision", "recall", "balanced_accuracy", "agreement",
                "predicted_positive_rate", "tp", "fp", "fn", "tn"]
        return _round_frame(pd.DataFrame([{c: getattr(r, c) for c in cols} for r in self.rows], columns=cols))

    def summary(self) -> dict[str, Any]:
        """The headline figures as one flat, rounded row."""
        d, b, cv = self.default, self.best, self.cv
        return {
            "dimension": self.dimension, "n": self.n, "minority": self.minority,
            "default_threshold": _r(self.default_threshold),
            "default_kappa": _r(d.kappa) if d else None,
            "default_kappa_low": _r(self.default_kappa_ci[0]), "default_kappa_high": _r(self.default_kappa_ci[1]),
            "default_f1": _r(d.f1) if d else None,
            "best_threshold": _r(b.threshold) if b else None, "best_kappa": _r(b.kappa) if b else None,
            "best_kappa_low": _r(self.best_kappa_ci[0]), "best_kappa_high": _r(self.best_kappa_ci[1]),
            "best_f1": _r(b.f1) if b else None,
            "cv_kappa": _r(cv.kappa) if cv else None, "cv_kappa_low": _r(cv.kappa_low) if cv else None,
            "cv_kappa_high": _r(cv.kappa_high) if cv else None,
            "cv_balanced_accuracy": _r(cv.balanced_accuracy) if cv else None,
            "cv_f1": _r(cv.f1) if cv else None,
            "cv_fold_thresholds": " ".join(f"{t:g}" for t in cv.fold_thresholds) if cv else "",
            "cv_folds": cv.folds if cv else None, "cv_groups": cv.n_groups if cv else None,
            "group_by": self.group_by, "warning": self.warning, "note": self.cv_reason,
        }


def _grid_for(auto: AutoLabelling, dimension: str, scores: np.ndarray, default: float | None) -> tuple[float, ...]:
    if dimension in auto.grids:
        grid = list(auto.grids[dimension])
    elif scores.size == 0 or (scores.min() >= 0 and scores.max() <= 1):
        grid = list(DEFAULT_GRID)
    else:  # scores outside [0, 1]: their own distinct values (at most 101 quantiles)
        uniq = np.unique(scores)
        if uniq.size > 101:
            uniq = np.unique(np.quantile(uniq, np.linspace(0, 1, 101), method="lower"))
        grid = [float(x) for x in uniq]
    if default is not None and all(abs(t - default) > 1e-12 for t in grid):
        grid.append(float(default))
    return tuple(sorted(round(float(t), 6) for t in grid))


def _kappa_ci(human: Sequence[int], scores: np.ndarray, t: float | None,
              confidence: float) -> tuple[float | None, float | None]:
    if t is None or len(human) == 0:
        return (None, None)
    k = cohens_kappa(list(human), (scores >= t).astype(int).tolist(), confidence)
    return (k.low, k.high)


def threshold_sweep(human: HumanLabelling, auto: AutoLabelling, dimension: str, *,
                    thresholds: Sequence[float] | None = None, default: float | None = None, folds: int = 5,
                    seed: int = 0, f1_class: bool = False, n_boot: int = 1000,
                    confidence: float = 0.95, criterion: str = "kappa") -> ThresholdCalibration:
    """Sweep the threshold of ``dimension``'s score against the human labels (see :class:`ThresholdCalibration`).

    Candidates: ``thresholds``, else the labelling's grid for the dimension,
    else 0.00..1.00 step 0.01 (scores outside [0, 1]: their distinct values);
    the default threshold is always added.  The best threshold is the highest
    ``criterion`` — kappa, or balanced accuracy for a detector whose job is to
    spot the minority class (:func:`playground.sweep.best_row`).  The cross-validated figure is
    :func:`playground.sweep.grouped_cv` grouped by the human labelling's
    ``group`` column (RAGTruth: source id), else by case id: the threshold is
    chosen on the other folds and applied to each held-out fold.
    """
    p = paired(human, auto, dimension)
    scores = p["score"].to_numpy(dtype=float)
    hv = p["human"].astype(int).to_numpy()
    default = auto.threshold(dimension) if default is None else float(default)
    grid = tuple(thresholds) if thresholds is not None else _grid_for(auto, dimension, scores, default)
    n = len(p)
    minority = int(min(hv.sum(), n - hv.sum())) if n else 0
    group_by = ("source_id" if human.kind == "ragtruth" else "group") if "group" in human.frame.columns else "case_id"
    binary = dimension not in auto.grids and thresholds is None and set(np.unique(scores)) <= {0.0, 1.0}
    if n == 0:
        return ThresholdCalibration(dimension, 0, 0, grid, (), default, None, None, (None, None), (None, None),
                                    None, "no units labelled by both", small_set_warning(0, 0), group_by, binary,
                                    f1_class, criterion)
    rows = tuple(sweep(scores, hv.astype(bool), grid, f1_class=f1_class))
    ref = default if default is not None else BINARY_THRESHOLD
    best = best_row(rows, ref, criterion)
    drow = next((r for r in rows if default is not None and abs(r.threshold - default) < 1e-9), None)
    cv, reason = None, ""
    n_groups = p["group"].nunique()
    if n_groups < 2:
        reason = "cross-validation needs units from at least 2 groups"
    elif minority == 0:
        reason = "the human labels use one class only: kappa is not defined"
    else:
        cv = grouped_cv(scores, hv.astype(bool), p["group"].astype(str).tolist(), folds=folds, thresholds=grid,
                        default=ref, seed=seed, f1_class=f1_class, n_boot=n_boot, confidence=confidence,
                        criterion=criterion)
    if binary:
        reason = (reason + "; " if reason else "") + "the score is binary (0/1): every threshold in (0, 1] is the same"
    return ThresholdCalibration(
        dimension, n, minority, grid, rows, default, drow, best,
        _kappa_ci(hv.tolist(), scores, default, confidence), _kappa_ci(hv.tolist(), scores, best.threshold, confidence),
        cv, reason, small_set_warning(n, minority), group_by, bool(binary), f1_class, criterion,
    )


def reliability(scores: Sequence[float], human: Sequence[int], bins: int = 10, *,
                confidence: float = 0.95, low: float | None = None, high: float | None = None) -> pd.DataFrame:
    """Automatic score in equal-width bins against the human "yes" rate per bin, with Wilson intervals.

    Bins span [0, 1] when every score is in it (else [min, max], or ``low``/
    ``high``); bin i is ``[low + i w, low + (i+1) w)``, the last one closed.
    Columns: ``bin, bin_low, bin_high, n, mean_score, yes, yes_rate, low, high``;
    empty bins are left out.  A well-calibrated score has ``yes_rate`` close
    to ``mean_score`` in every bin.
    """
    if bins < 1:
        raise ValueError("bins must be >= 1")
    s = np.asarray(list(scores), dtype=float)
    h = np.asarray([int(v) for v in human], dtype=int)
    if s.shape != h.shape:
        raise ValueError("scores and human labels must have the same length")
    cols = ["bin", "bin_low", "bin_high", "n", "mean_score", "yes", "yes_rate", "low", "high"]
    if s.size == 0:
        return pd.DataFrame(columns=cols)
    lo = low if low is not None else (0.0 if s.min() >= 0 and s.max() <= 1 else float(s.min()))
    hi = high if high is not None else (1.0 if s.min() >= 0 and s.max() <= 1 else float(s.max()))
    width = (hi - lo) / bins if hi > lo else 1.0
    idx = np.floor(np.round((s - lo) / width, 9)).astype(int).clip(0, bins - 1)
    rows = []
    for i in range(bins):
        m = idx == i
        n = int(m.sum())
        if not n:
            continue
        yes = int(h[m].sum())
        ci = wilson_interval(yes, n, confidence)
        assert ci is not None  # n > 0 in a kept bin
        rows.append({"bin": i, "bin_low": _r(lo + i * width), "bin_high": _r(lo + (i + 1) * width), "n": n,
                     "mean_score": _r(float(s[m].mean())), "yes": yes, "yes_rate": _r(yes / n),
                     "low": _r(ci[0]), "high": _r(ci[1])})
    return pd.DataFrame(rows, columns=cols)


def reliability_for(human: HumanLabelling, auto: AutoLabelling, dimension: str, bins: int = 10) -> pd.DataFrame:
    """:func:`reliability` on the units of ``dimension`` both labellings have."""
    p = paired(human, auto, dimension)
    return reliability(p["score"].tolist(), p["human"].tolist(), bins)
