"""Choosing a score floor from labels, and the agreement figures of confusion counts.

Used by the harness (:mod:`playground.harness.dataset_floors`: an imported dataset's floors) and by the
calibration of real data (:mod:`playground.calibrate.frozen`, which re-exports these names).

Confusion counts, with hallucinated = positive: ``tp`` hallucinated and
flagged (score below the floor), ``fn`` hallucinated and passed, ``fp``
supported and flagged, ``tn`` supported and passed.  ``recall = tp / (tp +
fn)``, ``precision = tp / (tp + fp)``, ``balanced accuracy = (recall + tn /
(tn + fp)) / 2``, ``kappa = (p_o - p_e) / (1 - p_e)`` with ``p_o = (tp + tn)
/ n`` and ``p_e = ((tp + fp)(tp + fn) + (fn + tn)(fp + tn)) / n²``.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["choose_floor", "confusion_counts", "counts_metrics"]


def counts_metrics(tp: np.ndarray, fp: np.ndarray, fn: np.ndarray, tn: np.ndarray) -> dict[str, np.ndarray]:
    """Kappa, balanced accuracy, hallucination recall and precision from
    confusion counts (arrays; NaN where undefined): formulas in the module docstring."""
    tp, fp, fn, tn = (np.asarray(x, dtype=float) for x in (tp, fp, fn, tn))
    n = tp + fp + fn + tn
    with np.errstate(divide="ignore", invalid="ignore"):
        recall = tp / (tp + fn)
        spec = tn / (tn + fp)
        precision = tp / (tp + fp)
        po = (tp + tn) / n
        pe = ((tp + fp) * (tp + fn) + (fn + tn) * (fp + tn)) / (n * n)
        kappa = np.where(pe >= 1.0 - 1e-15, np.nan, (po - pe) / (1.0 - pe))
    return {"kappa": kappa, "balanced_accuracy": (recall + spec) / 2.0, "recall_hallucinated": recall,
            "precision_hallucinated": precision}


def confusion_counts(supported: np.ndarray, predicted: np.ndarray) -> tuple[int, int, int, int]:
    """``(tp, fp, fn, tn)`` with hallucinated (not supported) = positive and flagged (not predicted to pass)."""
    h, p = ~supported, ~predicted  # hallucinated, flagged
    return int((h & p).sum()), int((~h & p).sum()), int((h & ~p).sum()), int((~h & ~p).sum())


def choose_floor(scores: Sequence[float], supported: Sequence[bool], grid: Sequence[float], *,
                 default: float, criterion: str = "balanced_accuracy") -> tuple[float | None, str]:
    """The floor of ``grid`` maximising ``criterion`` on the given (tuning) labels,
    ties to the floor nearest ``default`` then the lower; ``(None, reason)`` when
    the criterion is undefined at every floor (one class only, no items)."""
    s = np.round(np.asarray(scores, dtype=float), 6)
    h = np.asarray(supported, dtype=bool)
    if s.size == 0:
        return None, "no tuning items"
    if h.all() or not h.any():
        return None, f"the tuning part has one class only ({'supported' if h.all() else 'hallucinated'})"
    best: tuple[float, float, float] | None = None
    for f in grid:
        c = confusion_counts(h, s >= f)
        v = float(counts_metrics(*(np.array([x]) for x in c))[criterion][0])
        if np.isnan(v):
            continue
        key = (-v, abs(f - default), f)
        if best is None or key < (best[0], best[1], best[2]):
            best = key
    if best is None:
        return None, f"{criterion} is undefined at every floor"
    return best[2], ""
