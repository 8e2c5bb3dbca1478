"""The deterministic scorers against BEGIN's human attribution labels, on its frozen part.

BEGIN's "Not fully attributable" is broader than RAGTruth's "hallucinated"
(it covers opinions, questions and unverifiable chit-chat too; see
``shared/data/begin/README.md``), so the floors chosen here are BEGIN's own.
The grounding is the knowledge snippet only (the previous turn is not evidence);
the task type is the dialogue corpus (``wow``, ``cmu_dog``, ``topicalchat``).
"""
from __future__ import annotations

from collections.abc import Collection, Sequence
from pathlib import Path

from ..begin import BeginRecord, load_begin
from .frozen import AnyScorer, PartReport, evaluate_frozen, items_of, only_sources
from .ragtruth import real_scorers

__all__ = ["begin_split", "frozen_begin", "tuning_cv_begin"]


def begin_split(path: str | Path | None = None) -> tuple[list[BeginRecord], list[BeginRecord]]:
    """``(tuning, frozen)`` records of a BEGIN file (default the shared one) by the
    committed frozen source list (:mod:`playground.calibrate.splits`)."""
    from .splits import frozen_sources

    fs = frozen_sources("begin")
    records = list(load_begin(path).records)
    return [r for r in records if r.source_id not in fs], [r for r in records if r.source_id in fs]


def frozen_begin(path: str | Path | None = None, *, criterion: str = "balanced_accuracy", n_boot: int = 2000,
                 seed: int = 0, confidence: float = 0.95, scorers: Sequence[tuple[str, AnyScorer]] | None = None,
                 sources: Collection[str] | None = None, subset: str = "") -> PartReport:
    """Every scorer on BEGIN's frozen part, its floor chosen on the tuning part
    (``sources``: only the frozen responses of these sources are reported)."""
    from ..harness import score as S

    tuning, frozen = begin_split(path)
    return evaluate_frozen("BEGIN", items_of(tuning, "dialogue"),
                           items_of(only_sources(frozen, sources), "dialogue"),
                           scorers or real_scorers(), grid=S.SUPPORT_FLOOR_GRID, default=S.DEFAULT_SUPPORT_FLOOR,
                           criterion=criterion, n_boot=n_boot, seed=seed, confidence=confidence, subset=subset)


def tuning_cv_begin(path: str | Path | None = None, *, folds: int = 5, criterion: str = "balanced_accuracy",
                    n_boot: int = 1000, seed: int = 0, confidence: float = 0.95,
                    scorers: Sequence[tuple[str, AnyScorer]] | None = None,
                    sources: Collection[str] | None = None, subset: str = "") -> PartReport:
    """Every scorer cross-validated on BEGIN's *tuning* part only, grouped by source
    (:func:`playground.calibrate.frozen.tuning_cv`; no frozen response is scored;
    ``sources``: only the tuning responses of these sources take part)."""
    from ..harness import score as S
    from .frozen import tuning_cv

    tuning, _ = begin_split(path)
    return tuning_cv("BEGIN", items_of(only_sources(tuning, sources), "dialogue"), scorers or real_scorers(),
                     grid=S.SUPPORT_FLOOR_GRID, default=S.DEFAULT_SUPPORT_FLOOR, folds=folds, criterion=criterion,
                     n_boot=n_boot, seed=seed, confidence=confidence, subset=subset)
