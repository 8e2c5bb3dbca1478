"""Threshold sweeps and grouped cross-validation of an automatic scorer against people.

Pure numpy and deterministic: the same input gives the same output.  The only
random choices (fold assignment, bootstrap resamples) come from
:mod:`playground.sampling`'s stable hash, never from a random stream.

Conventions
-----------
* ``scores``: automatic scores (floats); the automatic label at threshold
  ``t`` is ``score >= t`` (True = the *positive* class, e.g. "supported").
* ``human``: the human labels of the same units in the same orientation
  (True = positive, e.g. human "supported").
* ``f1_class``: the class F1, precision and recall are computed for; ``True``
  (default) is the positive class, ``False`` the negative one (e.g.
  "hallucinated" when the positive class is "supported").
* Cohen's kappa and balanced accuracy of each 2x2 table are
  :func:`playground.stats.kappa_from_counts` and
  :func:`playground.stats.balanced_accuracy_from_counts` (their array forms in
  the cross-validation): one formula each in the project.  Balanced accuracy
  is the same whichever class is called positive.

Default thresholds: the fixed grid 0.00, 0.01, ..., 1.00 (101 values,
:data:`DEFAULT_GRID`); a fixed grid keeps the candidate set identical across
folds and data sets.  Best threshold: the highest criterion; ties (within
1e-12) go to the threshold closest to ``default``, then to the lower threshold.
"""
from __future__ import annotations

import functools
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from playground.sampling import fold_of, stable_hash
from playground.stats import (
    balanced_accuracy_by_table,
    balanced_accuracy_from_counts,
    cohens_kappa,
    kappa_by_table,
    kappa_from_counts,
)

__all__ = [
    "CRITERIA",
    "DEFAULT_GRID",
    "CVResult",
    "SweepRow",
    "assign_folds",
    "best_row",
    "best_threshold",
    "grouped_cv",
    "kappa_interval",
    "metrics_at",
    "sweep",
]

#: Scores, labels or thresholds: a sequence or a numpy array.
Values = Sequence[Any] | np.ndarray

#: Default candidate thresholds: 0.00..1.00 step 0.01.
DEFAULT_GRID: tuple[float, ...] = tuple(round(i / 100, 2) for i in range(101))

_TIE = 1e-12


@dataclass(frozen=True)
class SweepRow:
    """Agreement of ``score >= threshold`` with the human labels.

    ``kappa`` is None when undefined (both labellings one and the same class).
    ``precision``/``recall``/``f1`` are for ``f1_class``; None when 0/0.
    ``tp``/``fp``/``fn``/``tn`` count the *positive* class (score >= t) against
    human positives, whatever ``f1_class`` is.
    """

    threshold: float
    kappa: float | None
    f1: float | None
    balanced_accuracy: float | None
    precision: float | None
    recall: float | None
    agreement: float
    predicted_positive_rate: float
    n: int
    tp: int
    fp: int
    fn: int
    tn: int
    f1_class: bool = True


def _as_arrays(scores: Values, human: Values) -> tuple[np.ndarray, np.ndarray]:
    s = np.asarray(scores, dtype=float).reshape(-1)
    h = np.asarray(human).reshape(-1)
    if h.dtype != bool:
        if not np.all(np.isin(h, (0, 1))):
            raise ValueError("human labels must be booleans or 0/1")
        h = h.astype(bool)
    if s.shape != h.shape:
        raise ValueError(f"scores and human must have the same length, got {s.size} and {h.size}")
    if s.size and not np.all(np.isfinite(s)):
        raise ValueError("scores must be finite")
    return s, h


def _counts(s: np.ndarray, h: np.ndarray, ts: np.ndarray) -> tuple[np.ndarray, ...]:
    """``(tp, fp, fn, tn)`` of ``score >= t`` against ``h`` for every ``t`` in ``ts`` (by sorted scores)."""
    pos = np.sort(s[h])
    neg = np.sort(s[~h])
    tp = pos.size - np.searchsorted(pos, ts, side="left")
    fp = neg.size - np.searchsorted(neg, ts, side="left")
    return tp, fp, pos.size - tp, neg.size - fp


def _row(t: float, tp: int, fp: int, fn: int, tn: int, f1_class: bool) -> SweepRow:
    n = tp + fp + fn + tn
    if n == 0:
        return SweepRow(t, None, None, None, None, None, 0.0, 0.0, 0, 0, 0, 0, 0, f1_class)
    if f1_class:
        ctp, cfp, cfn = tp, fp, fn
    else:
        ctp, cfp, cfn = tn, fn, fp
    prec = ctp / (ctp + cfp) if ctp + cfp else None
    rec = ctp / (ctp + cfn) if ctp + cfn else None
    f1 = 2 * ctp / (2 * ctp + cfp + cfn) if (2 * ctp + cfp + cfn) else None
    return SweepRow(t, kappa_from_counts(tp, fp, fn, tn), f1, balanced_accuracy_from_counts(tp, fp, fn, tn),
                    prec, rec, (tp + tn) / n, (tp + fp) / n, n, tp, fp, fn, tn, f1_class)


def sweep(scores: Values, human: Values, thresholds: Values | None = None,
          *, f1_class: bool = True) -> list[SweepRow]:
    """One :class:`SweepRow` per threshold (in the given order; default
    :data:`DEFAULT_GRID`), predicting positive when ``score >= threshold``."""
    s, h = _as_arrays(scores, human)
    ts = np.asarray(DEFAULT_GRID if thresholds is None else list(thresholds), dtype=float)
    tp, fp, fn, tn = _counts(s, h, ts)
    return [_row(float(t), int(a), int(b), int(c), int(d), f1_class)
            for t, a, b, c, d in zip(ts, tp, fp, fn, tn, strict=True)]


#: What "best" means when a threshold is chosen: the highest Cohen's kappa (agreement
#: beyond chance), or the highest balanced accuracy (mean of the two classes' recalls,
#: i.e. Youden's J + 1/2: the threshold that best *spots* the minority class).
CRITERIA: tuple[str, ...] = ("kappa", "balanced_accuracy")


def _best_index(ts: np.ndarray, values: np.ndarray, default: float) -> int:
    """Index of the highest finite ``values`` (ties within 1e-12: closest to ``default``, then lower ``t``);
    with no finite value, the threshold closest to ``default`` (then lower)."""
    finite = np.isfinite(values)
    pool = finite & (values >= values[finite].max() - _TIE) if finite.any() else np.ones(ts.size, dtype=bool)
    idx = np.flatnonzero(pool)
    distance = np.round(np.abs(ts[idx] - default), 12)
    return int(idx[np.lexsort((ts[idx], distance))[0]])


def best_row(rows: Sequence[SweepRow], default: float = 0.70, criterion: str = "kappa") -> SweepRow:
    """The row with the highest ``criterion`` (kappa or balanced accuracy);
    ties (1e-12) -> closest to ``default``, then the lower threshold.  When the
    criterion is defined on no row, the row closest to ``default`` (then lower)."""
    if criterion not in CRITERIA:
        raise ValueError(f"unknown criterion {criterion!r} (choose from {', '.join(CRITERIA)})")
    if not rows:
        raise ValueError("no sweep rows")
    ts = np.array([r.threshold for r in rows], dtype=float)
    values = np.array([np.nan if getattr(r, criterion) is None else getattr(r, criterion) for r in rows],
                      dtype=float)
    return rows[_best_index(ts, values, default)]


def best_threshold(scores: Values, human: Values, thresholds: Values | None = None, default: float = 0.70,
                   criterion: str = "kappa") -> float:
    """Threshold of :func:`best_row` over :func:`sweep` (max ``criterion``, tie-breaks there)."""
    return best_row(sweep(scores, human, thresholds), default, criterion).threshold


def metrics_at(scores: Values, human: Values, threshold: float, *, f1_class: bool = True) -> SweepRow:
    """The :class:`SweepRow` of a single threshold."""
    return sweep(scores, human, [threshold], f1_class=f1_class)[0]


def assign_folds(groups: Sequence[Hashable], folds: int = 5, seed: int | str = 0) -> dict[Hashable, int]:
    """The fold of every group, by the stable hash of its id (:func:`playground.sampling.fold_of`).

    With ``g`` distinct groups and ``k = min(folds, g)``: when ``k == g``,
    leave one group out (the groups in sorted order get folds 0 .. g-1);
    otherwise group ``x`` goes to ``fold_of(str(x), k, seed)``, the folds that
    received no group are dropped and the rest renumbered 0, 1, ... in order.
    Should every group hash into one fold, leave one group out instead.  A
    group's fold depends on its own id and the seed only (not on the other
    groups, nor on numpy's random stream), so a bootstrap resample keeps each
    group in its fold, and no group is ever in both the training and the
    held-out part of a split.
    """
    if folds < 2:
        raise ValueError("folds must be >= 2")
    uniq = sorted(set(groups), key=lambda g: (str(g), repr(g)))
    if len(uniq) < 2:
        raise ValueError("grouped cross-validation needs at least 2 groups")
    k = min(folds, len(uniq))
    raw = {g: (i if k == len(uniq) else fold_of(str(g), k, seed)) for i, g in enumerate(uniq)}
    used = sorted(set(raw.values()))
    if len(used) < 2:
        return {g: i for i, g in enumerate(uniq)}
    renumber = {f: i for i, f in enumerate(used)}
    return {g: renumber[f] for g, f in raw.items()}


def kappa_interval(human: Values, predicted: Values,
                   confidence: float = 0.95) -> tuple[float | None, float | None, float | None]:
    """``(kappa, low, high)`` with the large-sample (Fleiss-Cohen-Everitt)
    interval of :func:`playground.stats.cohens_kappa`."""
    h = np.asarray(human, dtype=bool)
    p = np.asarray(predicted, dtype=bool)
    r = cohens_kappa(h.astype(int).tolist(), p.astype(int).tolist(), confidence=confidence)
    return r.kappa, r.low, r.high


@dataclass(frozen=True)
class CVResult:
    """Grouped cross-validation of a threshold on a score.

    Out-of-sample figures pool the held-out predictions of every fold (each
    unit is predicted once, by the threshold chosen without its group):
    ``kappa`` with ``kappa_low``/``kappa_high`` (cluster bootstrap of the
    whole selection, see :func:`grouped_cv`) and ``kappa_low_asymptotic`` /
    ``kappa_high_asymptotic`` (large-sample interval of the pooled
    predictions, which ignores both the correlation inside groups and the
    choice of the threshold, and is therefore too narrow), ``balanced_accuracy``
    (with its bootstrap interval), ``f1``/``precision``/``recall`` of
    ``f1_class``, ``agreement``.
    ``fold_thresholds`` are the thresholds chosen on each fold's training
    part; ``recommended`` is the threshold chosen on all the data (report it
    with ``threshold_spread`` = (min, max) of the fold thresholds);
    ``in_sample`` is the sweep row of ``recommended`` on all the data (an
    optimistic figure), ``at_default`` the row of the ``default`` threshold.
    ``n_boot_used`` counts the resamples that gave a kappa (a resample whose
    groups fall into a single fold, or whose pooled predictions make kappa
    undefined, is skipped).
    """

    n: int
    n_groups: int
    folds: int
    fold_of_group: dict[Hashable, int]
    fold_thresholds: tuple[float, ...]
    fold_sizes: tuple[int, ...]
    predicted: np.ndarray = field(repr=False)
    kappa: float | None
    kappa_low: float | None
    kappa_high: float | None
    kappa_low_asymptotic: float | None
    kappa_high_asymptotic: float | None
    balanced_accuracy: float | None
    balanced_accuracy_low: float | None
    balanced_accuracy_high: float | None
    f1: float | None
    precision: float | None
    recall: float | None
    agreement: float
    recommended: float
    threshold_spread: tuple[float, float]
    in_sample: SweepRow
    at_default: SweepRow
    f1_class: bool = True
    seed: int | str = 0
    n_boot: int = 0
    #: What the folds maximised when choosing their threshold (see :data:`CRITERIA`).
    criterion: str = "kappa"
    n_boot_used: int = 0

    def summary(self) -> str:
        def f(x: float | None) -> str:
            return "n/a" if x is None else f"{x:.3f}"
        return (
            f"out-of-sample ({self.folds}-fold grouped CV, {self.n_groups} groups, n={self.n}): "
            f"kappa {f(self.kappa)} [{f(self.kappa_low)}, {f(self.kappa_high)}], "
            f"balanced accuracy {f(self.balanced_accuracy)} "
            f"[{f(self.balanced_accuracy_low)}, {f(self.balanced_accuracy_high)}], "
            f"F1 {f(self.f1)}; fold thresholds {list(self.fold_thresholds)}; "
            f"recommended {self.recommended:.2f} (in-sample kappa {f(self.in_sample.kappa)}, "
            f"balanced accuracy {f(self.in_sample.balanced_accuracy)})"
        )


def _cross_validate(s: np.ndarray, h: np.ndarray, fidx: np.ndarray, ts: np.ndarray, default: float,
                    criterion: str) -> tuple[np.ndarray, list[float], list[int]] | None:
    """Held-out predictions: for each non-empty fold, the best threshold on the other folds.

    None when the units fall into fewer than two folds (nothing to train on).
    """
    folds = np.unique(fidx)
    if folds.size < 2:
        return None
    pred = np.zeros(s.size, dtype=bool)
    fold_ts, sizes = [], []
    # a training part's counts are the whole set's minus the held-out fold's (integers: exact)
    tests = [fidx == f for f in folds]
    held = [np.stack(_counts(s[test], h[test], ts)) for test in tests]
    total = np.sum(held, axis=0)
    by_table = kappa_by_table if criterion == "kappa" else balanced_accuracy_by_table
    for test, counts in zip(tests, held, strict=True):
        train = total - counts
        t = float(ts[_best_index(ts, by_table(*train), default)])
        fold_ts.append(t)
        sizes.append(int(test.sum()))
        pred[test] = s[test] >= t
    return pred, fold_ts, sizes


def _table(pred: np.ndarray, h: np.ndarray) -> tuple[int, int, int, int]:
    return (int((pred & h).sum()), int((pred & ~h).sum()), int((~pred & h).sum()), int((~pred & ~h).sum()))


def _percentile(values: list[float], q: float) -> float | None:
    return float(np.quantile(values, q)) if values else None


def grouped_cv(scores: Values, human: Values, groups: Sequence[Hashable],
               folds: int = 5, *, thresholds: Values | None = None,
               default: float = 0.70, seed: int | str = 0, f1_class: bool = True,
               n_boot: int = 2000, confidence: float = 0.95, criterion: str = "kappa") -> CVResult:
    """Grouped cross-validation of the best threshold by ``criterion`` (kappa or balanced accuracy).

    Folds come from :func:`assign_folds` (by the stable hash of the group id
    and ``seed``).  For each fold the best threshold (:func:`best_row`, max
    ``criterion``, ties -> closest to ``default``, then lower) is chosen on the
    other folds and applied to the held-out fold; the held-out predictions are
    pooled and compared with the human labels.

    Interval: a cluster bootstrap of the *whole selection*.  Resample ``b``
    (``b = 0 .. n_boot-1``) draws as many groups as there are, with
    replacement, the j-th being group number ``stable_hash(seed,
    "boot:b:j") mod n_groups`` (sorted group order); every unit of a drawn
    group comes along, in its group's fold; the cross-validation above is
    then run again on the resample (so each fold's threshold is chosen inside
    the resample) and the pooled kappa and balanced accuracy recorded.  The
    interval is the percentile interval of those values (numpy's linear
    quantile).  The asymptotic kappa interval of the pooled predictions is
    reported for reference.  Raises ValueError with fewer than 2 groups.
    """
    if criterion not in CRITERIA:
        raise ValueError(f"unknown criterion {criterion!r} (choose from {', '.join(CRITERIA)})")
    s, h = _as_arrays(scores, human)
    g = list(groups)
    if len(g) != s.size:
        raise ValueError("groups must have one entry per score")
    fold_of_group = assign_folds(g, folds, seed)
    ts = np.asarray(DEFAULT_GRID if thresholds is None else list(thresholds), dtype=float)
    fidx = np.array([fold_of_group[x] for x in g], dtype=int)
    cv = _cross_validate(s, h, fidx, ts, default, criterion)
    assert cv is not None  # assign_folds always gives two folds or more
    pred, fold_ts, sizes = cv
    full_rows = sweep(s, h, ts, f1_class=f1_class)
    rec_row = best_row(full_rows, default, criterion)
    oof = _row(float("nan"), *_table(pred, h), f1_class)
    kappa, klo_a, khi_a = kappa_interval(h, pred, confidence)
    ks, bs = _bootstrap(s, h, g, fold_of_group, ts, default, criterion, seed, n_boot)
    a = (1 - confidence) / 2
    default_row = sweep(s, h, [default], f1_class=f1_class)[0]
    return CVResult(
        n=s.size, n_groups=len(fold_of_group), folds=len(fold_ts), fold_of_group=fold_of_group,
        fold_thresholds=tuple(fold_ts), fold_sizes=tuple(sizes), predicted=pred,
        kappa=kappa, kappa_low=_percentile(ks, a), kappa_high=_percentile(ks, 1 - a),
        kappa_low_asymptotic=klo_a, kappa_high_asymptotic=khi_a,
        balanced_accuracy=oof.balanced_accuracy, balanced_accuracy_low=_percentile(bs, a),
        balanced_accuracy_high=_percentile(bs, 1 - a), f1=oof.f1, precision=oof.precision, recall=oof.recall,
        agreement=oof.agreement, recommended=rec_row.threshold,
        threshold_spread=(min(fold_ts), max(fold_ts)), in_sample=rec_row,
        at_default=default_row, f1_class=f1_class, seed=seed, n_boot=n_boot, criterion=criterion,
        n_boot_used=len(ks),
    )


@functools.lru_cache(maxsize=8)
def _picks(seed: int | str, n_boot: int, n_groups: int) -> np.ndarray:
    """``picks[b, j] = stable_hash(seed, "boot:b:j") mod n_groups``: the groups of every resample (read-only).

    Cached: every scorer calibrated on the same groups (several metrics of one
    result table) draws the same resamples, and the hashes are the slow part.
    """
    picks = np.array([[stable_hash(seed, f"boot:{b}:{j}") % n_groups for j in range(n_groups)]
                      for b in range(n_boot)], dtype=np.int64).reshape(n_boot, n_groups)
    picks.setflags(write=False)
    return picks


def _bootstrap(s: np.ndarray, h: np.ndarray, g: list[Any], fold_of_group: dict[Hashable, int], ts: np.ndarray,
               default: float, criterion: str, seed: int | str, n_boot: int) -> tuple[list[float], list[float]]:
    """Kappas and balanced accuracies of the cross-validation rerun on ``n_boot`` cluster resamples.

    A resample's units are the members of each picked group, group after group
    in pick order, each group's members in their original order.
    """
    uniq = sorted(fold_of_group, key=lambda x: (str(x), repr(x)))
    position = {x: i for i, x in enumerate(uniq)}
    gidx = np.array([position[x] for x in g], dtype=int)
    order = np.argsort(gidx, kind="stable")  # units grouped by group, original order inside a group
    sizes = np.bincount(gidx, minlength=len(uniq))
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    group_fold = np.array([fold_of_group[x] for x in uniq], dtype=int)
    ks: list[float] = []
    bs: list[float] = []
    for pick in _picks(seed, n_boot, len(uniq)):
        lengths = sizes[pick]
        offsets = np.repeat(np.cumsum(lengths) - lengths, lengths)
        idx = order[np.repeat(starts[pick], lengths) + np.arange(int(lengths.sum())) - offsets]
        fidx = np.repeat(group_fold[pick], lengths)
        cv = _cross_validate(s[idx], h[idx], fidx, ts, default, criterion)
        if cv is None:
            continue
        table = _table(cv[0], h[idx])
        kb = kappa_from_counts(*table)
        if kb is not None:
            ks.append(kb)
        bb = balanced_accuracy_from_counts(*table)
        if bb is not None:
            bs.append(bb)
    return ks, bs
