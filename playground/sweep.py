"""Threshold sweeps and grouped cross-validation of an automatic scorer against people.

Pure numpy and deterministic: the same input gives the same output (the only
randomness is a fixed-seed shuffle of the groups and a fixed-seed cluster
bootstrap, both documented below).

Conventions
-----------
* ``scores``: automatic scores (floats); the automatic label at threshold
  ``t`` is ``score >= t`` (True = the *positive* class, e.g. "supported").
* ``human``: the human labels of the same units in the same orientation
  (True = positive, e.g. human "supported").
* ``f1_class``: the class F1, precision and recall are computed for; ``True``
  (default) is the positive class, ``False`` the negative one (e.g.
  "hallucinated" when the positive class is "supported").
* Cohen's kappa from the 2x2 table (``n`` units, ``p_o`` observed agreement)::

      p_e   = (pred_pos * human_pos + pred_neg * human_neg) / n^2
      kappa = (p_o - p_e) / (1 - p_e)         (undefined when p_e = 1)

  This is the same formula as :func:`playground.stats.cohens_kappa`; the sweep
  computes it vectorised over thresholds, and the reported out-of-sample kappa
  takes its analytic interval from ``playground.stats.cohens_kappa`` when that
  module is importable (large-sample standard error of Fleiss, Cohen and
  Everitt 1969), otherwise from the same formula here.
* Balanced accuracy = (recall of the positive class + recall of the negative
  class) / 2; it is the same whichever class is called positive.

Default thresholds: the fixed grid 0.00, 0.01, ..., 1.00 (101 values,
:data:`DEFAULT_GRID`); a fixed grid keeps the candidate set identical across
folds and data sets.  Best threshold: the highest kappa; ties (within 1e-12)
go to the threshold closest to ``default``, then to the lower threshold.
"""
from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field

import numpy as np

__all__ = [
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


def _as_arrays(scores, human) -> tuple[np.ndarray, np.ndarray]:
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


def _rows_from_counts(ts, tp, fp, fn, tn, f1_class) -> list[SweepRow]:
    rows = []
    for t, a, b, c, d in zip(ts, tp, fp, fn, tn):
        a, b, c, d = int(a), int(b), int(c), int(d)
        n = a + b + c + d
        rows.append(_row(float(t), a, b, c, d, n, f1_class))
    return rows


def _row(t: float, tp: int, fp: int, fn: int, tn: int, n: int, f1_class: bool) -> SweepRow:
    if n == 0:
        return SweepRow(t, None, None, None, None, None, 0.0, 0.0, 0, 0, 0, 0, 0, f1_class)
    po = (tp + tn) / n
    pred_pos, hum_pos = tp + fp, tp + fn
    pe = (pred_pos * hum_pos + (n - pred_pos) * (n - hum_pos)) / (n * n)
    kappa = None if pe >= 1.0 - 1e-15 else (po - pe) / (1.0 - pe)
    recalls = []
    if tp + fn:
        recalls.append(tp / (tp + fn))
    if tn + fp:
        recalls.append(tn / (tn + fp))
    bacc = sum(recalls) / len(recalls) if recalls else None
    if f1_class:
        ctp, cfp, cfn = tp, fp, fn
    else:
        ctp, cfp, cfn = tn, fn, fp
    prec = ctp / (ctp + cfp) if ctp + cfp else None
    rec = ctp / (ctp + cfn) if ctp + cfn else None
    f1 = 2 * ctp / (2 * ctp + cfp + cfn) if (2 * ctp + cfp + cfn) else None
    return SweepRow(t, kappa, f1, bacc, prec, rec, po, pred_pos / n, n, tp, fp, fn, tn, f1_class)


def sweep(scores: Sequence[float], human: Sequence[bool], thresholds: Sequence[float] | None = None,
          *, f1_class: bool = True) -> list[SweepRow]:
    """One :class:`SweepRow` per threshold (in the given order; default
    :data:`DEFAULT_GRID`), predicting positive when ``score >= threshold``."""
    s, h = _as_arrays(scores, human)
    ts = np.asarray(DEFAULT_GRID if thresholds is None else list(thresholds), dtype=float)
    pred = s[None, :] >= ts[:, None]
    tp = (pred & h).sum(axis=1)
    fp = (pred & ~h).sum(axis=1)
    fn = (~pred & h).sum(axis=1)
    tn = (~pred & ~h).sum(axis=1)
    return _rows_from_counts(ts, tp, fp, fn, tn, f1_class)


#: What "best" means when a threshold is chosen: the highest Cohen's kappa (agreement
#: beyond chance), or the highest balanced accuracy (mean of the two classes' recalls,
#: i.e. Youden's J + 1/2: the threshold that best *spots* the minority class).
CRITERIA: tuple[str, ...] = ("kappa", "balanced_accuracy")


def best_row(rows: Sequence[SweepRow], default: float = 0.70, criterion: str = "kappa") -> SweepRow:
    """The row with the highest ``criterion`` (kappa or balanced accuracy);
    ties (1e-12) -> closest to ``default``, then the lower threshold.  When the
    criterion is defined on no row, the row closest to ``default`` (then lower)."""
    if criterion not in CRITERIA:
        raise ValueError(f"unknown criterion {criterion!r} (choose from {', '.join(CRITERIA)})")
    if not rows:
        raise ValueError("no sweep rows")

    def value(r: SweepRow) -> float | None:
        return getattr(r, criterion)

    defined = [r for r in rows if value(r) is not None and math.isfinite(value(r))]
    pool = defined or list(rows)
    top = max(value(r) for r in defined) if defined else None
    if top is not None:
        pool = [r for r in defined if value(r) >= top - _TIE]
    return min(pool, key=lambda r: (round(abs(r.threshold - default), 12), r.threshold))


def best_threshold(scores, human, thresholds=None, default: float = 0.70, criterion: str = "kappa") -> float:
    """Threshold of :func:`best_row` over :func:`sweep` (max ``criterion``, tie-breaks there)."""
    return best_row(sweep(scores, human, thresholds), default, criterion).threshold


def metrics_at(scores, human, threshold: float, *, f1_class: bool = True) -> SweepRow:
    """The :class:`SweepRow` of a single threshold."""
    return sweep(scores, human, [threshold], f1_class=f1_class)[0]


def assign_folds(groups: Sequence[Hashable], folds: int = 5, seed: int = 0) -> dict[Hashable, int]:
    """Deterministic fold of every group, balanced by size.

    The distinct groups are sorted by ``str``, shuffled with
    ``numpy.random.default_rng(seed).permutation``, then stably sorted by
    decreasing number of units; each group in turn goes to the fold with the
    fewest units so far (ties: the lowest fold number).  ``folds`` is capped at
    the number of groups (``folds >= n_groups`` is leave-one-group-out).
    A group is in exactly one fold, so no group is ever in both the training
    and the held-out part of a split.
    """
    if folds < 2:
        raise ValueError("folds must be >= 2")
    sizes: dict[Hashable, int] = {}
    for g in groups:
        sizes[g] = sizes.get(g, 0) + 1
    uniq = sorted(sizes, key=lambda g: (str(g), repr(g)))
    if len(uniq) < 2:
        raise ValueError("grouped cross-validation needs at least 2 groups")
    k = min(folds, len(uniq))
    order = [uniq[i] for i in np.random.default_rng(seed).permutation(len(uniq))]
    order.sort(key=lambda g: -sizes[g])  # stable: the shuffle breaks size ties
    load = [0] * k
    out: dict[Hashable, int] = {}
    for g in order:
        f = min(range(k), key=lambda i: (load[i], i))
        out[g] = f
        load[f] += sizes[g]
    return out


def _kappa_only(pred: np.ndarray, h: np.ndarray) -> float | None:
    n = pred.size
    if n == 0:
        return None
    tp = int((pred & h).sum())
    tn = int((~pred & ~h).sum())
    pp, hp = int(pred.sum()), int(h.sum())
    pe = (pp * hp + (n - pp) * (n - hp)) / (n * n)
    if pe >= 1.0 - 1e-15:
        return None
    return ((tp + tn) / n - pe) / (1.0 - pe)


def kappa_interval(human: Sequence[bool], predicted: Sequence[bool],
                   confidence: float = 0.95) -> tuple[float | None, float | None, float | None]:
    """``(kappa, low, high)`` with the large-sample (Fleiss-Cohen-Everitt)
    interval; from ``playground.stats.cohens_kappa`` when available."""
    h = np.asarray(human, dtype=bool)
    p = np.asarray(predicted, dtype=bool)
    try:
        from playground.stats import cohens_kappa  # another module of the project
    except Exception:  # pragma: no cover - fallback while stats is absent
        cohens_kappa = None
    if cohens_kappa is not None:
        r = cohens_kappa(h.astype(int).tolist(), p.astype(int).tolist(), confidence=confidence)
        return r.kappa, r.low, r.high
    # Fallback (stats module absent): kappa -+ z * sqrt(p_o (1 - p_o) / (n (1 - p_e)^2)).
    k = _kappa_only(p, h)
    if k is None:
        return None, None, None
    n = h.size
    po = float((h == p).mean())
    pp, hp = int(p.sum()), int(h.sum())
    pe = (pp * hp + (n - pp) * (n - hp)) / (n * n)
    from statistics import NormalDist
    z = NormalDist().inv_cdf((1 + confidence) / 2)
    se = math.sqrt(po * (1 - po) / (n * (1 - pe) ** 2))
    if se == 0:
        return k, None, None
    return k, max(-1.0, k - z * se), min(1.0, k + z * se)


@dataclass(frozen=True)
class CVResult:
    """Grouped cross-validation of a threshold on a score.

    Out-of-sample figures pool the held-out predictions of every fold (each
    unit is predicted once, by the threshold chosen without its group):
    ``kappa`` with ``kappa_low``/``kappa_high`` (cluster bootstrap over groups,
    ``n_boot`` resamples, percentile 95%) and ``kappa_low_asymptotic`` /
    ``kappa_high_asymptotic`` (large-sample interval, which ignores the
    correlation inside groups and is therefore narrower), ``balanced_accuracy``
    (with its bootstrap interval), ``f1``/``precision``/``recall`` of
    ``f1_class``, ``agreement``.
    ``fold_thresholds`` are the thresholds chosen on each fold's training
    part; ``recommended`` is the threshold chosen on all the data (report it
    with ``threshold_spread`` = (min, max) of the fold thresholds);
    ``in_sample`` is the sweep row of ``recommended`` on all the data (an
    optimistic figure), ``at_default`` the row of the ``default`` threshold.
    """

    n: int
    n_groups: int
    folds: int
    fold_of_group: dict
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
    seed: int = 0
    n_boot: int = 0
    #: What the folds maximised when choosing their threshold (see :data:`CRITERIA`).
    criterion: str = "kappa"

    def summary(self) -> str:
        def f(x):
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


def _bacc(pred: np.ndarray, h: np.ndarray) -> float | None:
    rec = []
    if h.any():
        rec.append(float((pred & h).sum() / h.sum()))
    if (~h).any():
        rec.append(float((~pred & ~h).sum() / (~h).sum()))
    return sum(rec) / len(rec) if rec else None


def grouped_cv(scores: Sequence[float], human: Sequence[bool], groups: Sequence[Hashable],
               folds: int = 5, *, thresholds: Sequence[float] | None = None,
               default: float = 0.70, seed: int = 0, f1_class: bool = True,
               n_boot: int = 2000, confidence: float = 0.95, criterion: str = "kappa") -> CVResult:
    """Grouped cross-validation of the best threshold by ``criterion`` (kappa or balanced accuracy).

    Folds come from :func:`assign_folds` (by group; ``seed`` fixes the
    shuffle).  For each fold the best threshold (:func:`best_row`, max
    ``criterion``, ties -> closest to ``default``, then lower) is chosen on the other folds
    and applied to the held-out fold; the held-out predictions are pooled and
    compared with the human labels.  Intervals: cluster bootstrap (resample
    groups with replacement, ``n_boot`` times, ``numpy.random.default_rng(seed)``;
    percentile interval; resamples where kappa is undefined are skipped) plus
    the asymptotic kappa interval for reference.
    """
    s, h = _as_arrays(scores, human)
    g = list(groups)
    if len(g) != s.size:
        raise ValueError("groups must have one entry per score")
    fold_of = assign_folds(g, folds, seed)
    k = max(fold_of.values()) + 1
    fidx = np.array([fold_of[x] for x in g], dtype=int)
    pred = np.zeros(s.size, dtype=bool)
    fold_ts = []
    sizes = []
    for f in range(k):
        test = fidx == f
        train = ~test
        t = best_row(sweep(s[train], h[train], thresholds, f1_class=f1_class), default, criterion).threshold
        fold_ts.append(t)
        sizes.append(int(test.sum()))
        pred[test] = s[test] >= t
    full_rows = sweep(s, h, thresholds, f1_class=f1_class)
    rec_row = best_row(full_rows, default, criterion)
    oof = _row(float("nan"), int((pred & h).sum()), int((pred & ~h).sum()),
               int((~pred & h).sum()), int((~pred & ~h).sum()), s.size, f1_class)
    kappa, klo_a, khi_a = kappa_interval(h, pred, confidence)
    # cluster bootstrap over groups
    uniq = sorted(set(g), key=lambda x: (str(x), repr(x)))
    gi = {x: i for i, x in enumerate(uniq)}
    gidx = np.array([gi[x] for x in g], dtype=int)
    members = [np.flatnonzero(gidx == i) for i in range(len(uniq))]
    rng = np.random.default_rng(seed)
    ks, bs = [], []
    for _ in range(n_boot):
        pick = rng.integers(0, len(uniq), len(uniq))
        idx = np.concatenate([members[i] for i in pick])
        kb = _kappa_only(pred[idx], h[idx])
        if kb is not None:
            ks.append(kb)
        bb = _bacc(pred[idx], h[idx])
        if bb is not None:
            bs.append(bb)
    a = (1 - confidence) / 2
    klo = float(np.quantile(ks, a)) if ks else None
    khi = float(np.quantile(ks, 1 - a)) if ks else None
    blo = float(np.quantile(bs, a)) if bs else None
    bhi = float(np.quantile(bs, 1 - a)) if bs else None
    default_row = sweep(s, h, [default], f1_class=f1_class)[0]
    return CVResult(
        n=s.size, n_groups=len(uniq), folds=k, fold_of_group=fold_of,
        fold_thresholds=tuple(fold_ts), fold_sizes=tuple(sizes), predicted=pred,
        kappa=kappa, kappa_low=klo, kappa_high=khi,
        kappa_low_asymptotic=klo_a, kappa_high_asymptotic=khi_a,
        balanced_accuracy=oof.balanced_accuracy, balanced_accuracy_low=blo,
        balanced_accuracy_high=bhi, f1=oof.f1, precision=oof.precision, recall=oof.recall,
        agreement=oof.agreement, recommended=rec_row.threshold,
        threshold_spread=(min(fold_ts), max(fold_ts)), in_sample=rec_row,
        at_default=default_row, f1_class=f1_class, seed=seed, n_boot=n_boot, criterion=criterion,
    )
