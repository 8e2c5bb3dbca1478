"""The support scorer, beside a plain-coverage baseline, against RAGTruth's human labels.

* Human labelling (:func:`ragtruth_human`): ``supported = not hallucinated``
  per claim, grouped by source id (claims of one source share the question or
  article).
* Automatic labellings (:func:`ragtruth_auto`): the claim's support score
  against its non-empty evidence, label ``round(score, 6) >= floor`` (default
  ``DEFAULT_SUPPORT_FLOOR``, candidates ``SUPPORT_FLOOR_GRID``).  The
  baseline :func:`plain_coverage` is ``|claim words in the context| / |claim
  words|`` over distinct lower-cased words minus stopwords (1.0 when none).
* :func:`calibrate_ragtruth`: per scorer, kappa, balanced accuracy and F1 /
  precision / recall of the *hallucinated* class in-sample at the default and
  the best floor, and out of sample by cross-validation grouped by source id
  (per task type too), kappa with a cluster-bootstrap interval.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..stats import balanced_accuracy, cohens_kappa, f1_score
from ..sweep import CRITERIA, CVResult, SweepRow
from .comparison import paired
from .frozen import AnyScorer, PartReport
from .labellings import AutoLabelling, HumanLabelling, _auto_frame, _human_frame
from .tables import _r
from .thresholds import ThresholdCalibration, threshold_sweep

__all__ = [
    "RagTruthCalibration",
    "ScorerFigures",
    "calibrate_ragtruth",
    "default_ragtruth_path",
    "default_validation_path",
    "frozen_ragtruth",
    "plain_coverage",
    "ragtruth_auto",
    "ragtruth_human",
    "ragtruth_split",
    "real_scorers",
    "tuning_cv_ragtruth",
]

if TYPE_CHECKING:
    from ..importers.ragtruth import RagTruthRecord

_PLAIN_WORD_RE = re.compile(r"[a-z0-9]+")


def plain_coverage(claim: str, context: Sequence[str] | str) -> float:
    """The calibration issue's *baseline* support score: the share of the claim's distinct
    lower-cased ``[a-z0-9]+`` words that are not stopwords
    (:data:`playground.harness.tokens.STOPWORDS`) and occur as words in the
    evidence; 1.0 for a claim without such words.  No stemming, no exact
    items.  Kept to reproduce the baseline figures (kappa 0.1629 at floor 0.70)."""
    from ..harness.tokens import STOPWORDS

    words = {w for w in _PLAIN_WORD_RE.findall(claim.lower()) if w not in STOPWORDS}
    if not words:
        return 1.0
    text = context if isinstance(context, str) else " ".join(context)
    ctx = set(_PLAIN_WORD_RE.findall(text.lower()))
    return len(words & ctx) / len(words)


def default_ragtruth_path() -> Path:
    """``ragtruth/claims.jsonl`` in :func:`playground.begin.shared_data_dir` (the shared RAGTruth sample)."""
    from ..begin import shared_data_dir

    return shared_data_dir() / "ragtruth" / "claims.jsonl"


def _records(sample_or_path: Any) -> list[RagTruthRecord]:
    from ..importers.ragtruth import RagTruthSample, load_ragtruth

    if isinstance(sample_or_path, (str, Path)):
        return list(load_ragtruth(sample_or_path).records)
    if isinstance(sample_or_path, RagTruthSample):
        return list(sample_or_path.records)
    return list(sample_or_path)


def ragtruth_human(sample_or_path: Any) -> HumanLabelling:
    """RAGTruth's human labels: ``supported = not hallucinated`` per claim unit (ids as the importer's).

    Extra columns: ``group`` (the source id: claims of one source share the
    question or article, so cross-validation must keep them together),
    ``task_type``.
    """
    from ..importers.ragtruth import HUMAN_ANNOTATOR, claim_unit

    rows = []
    for r in _records(sample_or_path):
        u = claim_unit(r)
        rows.append({"unit_id": u.unit_id, "unit_kind": "claim", "case_id": u.case_id, "response_id": u.response_id,
                     "dimension": "supported", "value": int(r.supported), "group": r.source_id,
                     "task_type": r.task_type})
    return HumanLabelling(HUMAN_ANNOTATOR, _human_frame(rows, ("group", "task_type")), "ragtruth",
                          "RAGTruth human span annotations mapped to claims (supported = not hallucinated)")


def ragtruth_auto(sample_or_path: Any, scorer: str | Callable[[str, Sequence[str]], float] = "support",
                  floor: float | None = None, name: str | None = None) -> AutoLabelling:
    """Score every RAGTruth claim against its non-empty evidence.

    ``scorer``: ``"support"`` (:func:`playground.harness.score.support`),
    ``"plain"`` (:func:`plain_coverage`) or a callable ``(claim, context) ->
    score``.  ``floor`` defaults to ``DEFAULT_SUPPORT_FLOOR``; candidate
    floors are ``SUPPORT_FLOOR_GRID``.
    """
    from ..harness import score as S
    from ..importers.ragtruth import claim_unit

    fn = {"support": S.support, "plain": plain_coverage}.get(scorer, scorer) if isinstance(scorer, str) else scorer
    if isinstance(fn, str):
        raise ValueError(f"unknown scorer {scorer!r} (known: support, plain)")
    names = {"support": "support scorer", "plain": "plain coverage"}
    label = name or names.get(scorer if isinstance(scorer, str) else "", getattr(fn, "__name__", "scorer"))
    floor = S.DEFAULT_SUPPORT_FLOOR if floor is None else float(floor)
    rows = []
    for r in _records(sample_or_path):
        u = claim_unit(r)
        s = float(fn(r.claim, r.context))
        rows.append({"unit_id": u.unit_id, "unit_kind": "claim", "case_id": u.case_id, "response_id": u.response_id,
                     "dimension": "supported", "score": round(s, 6), "label": int(round(s, 6) >= floor)})
    return AutoLabelling(label, _auto_frame(rows), {"supported": floor}, "ragtruth",
                         {"supported": tuple(S.SUPPORT_FLOOR_GRID)})


@dataclass(frozen=True, eq=False)
class ScorerFigures:
    """One scorer on RAGTruth: in-sample at the default floor and at the best floor, and out of sample.

    ``sweep``: the :class:`ThresholdCalibration` over ``SUPPORT_FLOOR_GRID``
    (F1, precision, recall of the *hallucinated* class), whose ``cv`` is the
    cross-validation grouped by source id; ``by_task``: out-of-sample figures
    per task type (the pooled held-out predictions restricted to it).
    """

    name: str
    scores: tuple[float, ...]
    sweep: ThresholdCalibration
    by_task: pd.DataFrame
    #: The same sweep with the floor chosen by the other criterion (shown beside it, never hidden).
    alternative: ThresholdCalibration | None = None

    @property
    def default_floor(self) -> float:
        floor = self.sweep.default_threshold
        if floor is None:  # ragtruth_auto always names one
            raise ValueError(f"{self.name}: the sweep has no default floor")
        return floor

    @property
    def default(self) -> SweepRow:
        return _sweep_row(self.sweep, "default")

    @property
    def best(self) -> SweepRow:
        return _sweep_row(self.sweep, "best")

    @property
    def cv(self) -> CVResult | None:
        """The grouped cross-validation, None when undefined (:attr:`cv_reason` says why)."""
        return self.sweep.cv

    @property
    def cv_reason(self) -> str:
        return self.sweep.cv_reason

    def rows(self) -> list[dict[str, Any]]:
        """Rounded rows: in-sample at the default floor; then, for the floor chosen by the main
        criterion and by the alternative one, in-sample at the best floor and out of sample."""
        base = {"scorer": self.name}

        def row(evaluation: str, floor: str, r: Any, ci: tuple[float | None, float | None],
                kappa: Any = None) -> dict[str, Any]:
            return {**base, "evaluation": evaluation, "floor": floor,
                    "kappa": _r(r.kappa if kappa is None else kappa), "kappa_low": _r(ci[0]), "kappa_high": _r(ci[1]),
                    "balanced_accuracy": _r(r.balanced_accuracy), "f1_hallucinated": _r(r.f1),
                    "precision_hallucinated": _r(r.precision), "recall_hallucinated": _r(r.recall)}

        t = self.sweep
        d = _sweep_row(t, "default")
        rows = [row("in-sample, default floor", f"{d.threshold:g}", d, t.default_kappa_ci)]
        for sw in (t, self.alternative):
            if sw is None:
                continue
            by = _CRITERION_TEXT[sw.criterion]
            b, cv = _sweep_row(sw, "best"), sw.cv
            rows.append(row(f"in-sample, best floor by {by}", f"{b.threshold:g}", b, sw.best_kappa_ci))
            if cv is None:
                continue
            rows.append(row(f"out-of-sample, {cv.folds}-fold CV by source, floor by {by}",
                            " ".join(f"{x:g}" for x in cv.fold_thresholds), cv, (cv.kappa_low, cv.kappa_high)))
        return rows


_CRITERION_TEXT = {"kappa": "kappa", "balanced_accuracy": "balanced accuracy"}


def _sweep_row(t: ThresholdCalibration, which: str) -> SweepRow:
    """The ``default`` or ``best`` row of a sweep; a ValueError when it has none (no unit labelled by both)."""
    r = t.default if which == "default" else t.best
    if r is None:
        raise ValueError(f"no {which} floor for {t.dimension!r}: {t.cv_reason or 'no units labelled by both'}")
    return r


@dataclass(frozen=True, eq=False)
class RagTruthCalibration:
    """The support scorer and a plain-coverage baseline against RAGTruth's human labels."""

    path: str
    n: int
    hallucinated: int
    sources: int
    responses: int
    folds: int
    seed: int
    n_boot: int
    scorers: tuple[ScorerFigures, ...]
    human: HumanLabelling
    autos: tuple[AutoLabelling, ...]

    def table(self) -> pd.DataFrame:
        """One row per scorer and evaluation (see :meth:`ScorerFigures.rows`)."""
        return pd.DataFrame([r for s in self.scorers for r in s.rows()])

    def by_task(self) -> pd.DataFrame:
        return pd.concat([s.by_task for s in self.scorers], ignore_index=True)

    def scorer(self, name: str) -> ScorerFigures:
        return next(s for s in self.scorers if s.name == name)

    def tables(self) -> dict[str, pd.DataFrame]:
        """Every table by file stem (for ``--out``)."""
        out = {"ragtruth": self.table(), "ragtruth_by_task": self.by_task()}
        for s in self.scorers:
            out[f"sweep_{s.name.replace(' ', '_')}"] = s.sweep.frame()
        return out


def _figures(human: HumanLabelling, auto: AutoLabelling, folds: int, seed: int, n_boot: int,
             confidence: float, criterion: str) -> ScorerFigures:
    t, alt = (threshold_sweep(human, auto, "supported", folds=folds, seed=seed, n_boot=n_boot, confidence=confidence,
                              criterion=c)
              for c in (criterion, next(c for c in CRITERIA if c != criterion)))
    p = paired(human, auto, "supported")
    hv = p["human"].astype(int).to_numpy()
    task = dict(zip(human.frame["unit_id"], human.frame["task_type"], strict=False))
    tasks = np.array([task[u] for u in p["unit_id"]])
    trows: list[dict[str, Any]] = []
    if t.cv is None:  # cross-validation undefined (one source, one class): no out-of-sample figures
        return ScorerFigures(auto.name, tuple(float(x) for x in p["score"]), t, pd.DataFrame(trows), alt)
    for name in sorted(set(tasks)):
        m = tasks == name
        h, pr = hv[m].tolist(), t.cv.predicted[m].astype(int).tolist()
        k = cohens_kappa(h, pr, confidence)
        trows.append({"scorer": auto.name, "task_type": name, "n": int(m.sum()), "hallucinated": h.count(0),
                      "cv_kappa": _r(k.kappa), "cv_kappa_low": _r(k.low), "cv_kappa_high": _r(k.high),
                      "cv_balanced_accuracy": _r(balanced_accuracy(h, pr)),
                      "cv_f1_hallucinated": _r(f1_score(h, pr, positive=0))})
    return ScorerFigures(auto.name, tuple(float(x) for x in p["score"]), t, pd.DataFrame(trows), alt)


def calibrate_ragtruth(sample_or_path: Any = None, *, folds: int = 5, seed: int = 0, n_boot: int = 2000,
                       floor: float | None = None, confidence: float = 0.95,
                       criterion: str = "balanced_accuracy") -> RagTruthCalibration:
    """The deterministic support scorer against RAGTruth's human labels, beside a plain-coverage baseline.

    For each scorer: in-sample kappa (with its interval), balanced accuracy and
    F1 of the hallucinated class at the default floor (``floor``, default
    ``DEFAULT_SUPPORT_FLOOR``) and at the best floor of ``SUPPORT_FLOOR_GRID``;
    then out of sample: ``folds``-fold cross-validation grouped by source id
    (claims of one source share the question or article), the floor chosen on
    the training folds, pooled held-out predictions, kappa with a cluster
    bootstrap interval (``n_boot`` resamples of sources, ``seed``).

    "Best" is ``criterion``: by default balanced accuracy, because the
    scorer's job here is to spot hallucinated claims (19% of the sample) and
    balanced accuracy weighs the recall of both classes equally; the floor
    that maximises kappa is reported beside it.
    """
    path = default_ragtruth_path() if sample_or_path is None else sample_or_path
    records = _records(path)
    human = ragtruth_human(records)
    autos = (ragtruth_auto(records, "plain", floor), ragtruth_auto(records, "support", floor))
    figs = tuple(_figures(human, a, folds, seed, n_boot, confidence, criterion) for a in autos)
    return RagTruthCalibration(
        str(path) if isinstance(path, (str, Path)) else "", len(records), sum(r.label for r in records),
        len({r.source_id for r in records}), len({r.response_id for r in records}), folds, seed, n_boot, figs,
        human, autos,
    )


# --------------------------------------------------------------------------- frozen split


def default_validation_path() -> Path:
    """``ragtruth/validation-sample.jsonl`` in :func:`playground.begin.shared_data_dir`
    (the natural-rate RAGTruth sample)."""
    from ..begin import shared_data_dir

    return shared_data_dir() / "ragtruth" / "validation-sample.jsonl"


def ragtruth_split(files: Sequence[Any] | None = None) -> tuple[list[Any], list[Any]]:
    """``(tuning, frozen)`` records of the RAGTruth files (default: ``claims.jsonl`` and
    ``validation-sample.jsonl``), split by the committed frozen source list
    (:mod:`playground.calibrate.splits`); a claim in several files is kept once (first file wins)."""
    from .splits import frozen_sources

    paths = [default_ragtruth_path(), default_validation_path()] if files is None else list(files)
    seen: set[str] = set()
    records = []
    for p in paths:
        for r in _records(p):
            if r.example_id not in seen:
                seen.add(r.example_id)
                records.append(r)
    fs = frozen_sources("ragtruth")
    return [r for r in records if r.source_id not in fs], [r for r in records if r.source_id in fs]


def real_scorers(off: Sequence[str] = ()) -> list[tuple[str, Callable[..., float]]]:
    """The scorers reported on the real data sets: the support scorer with the rules of each item's
    kind of text (:class:`playground.calibrate.frozen.KindScorer`; with the rules ``off`` switched off
    too, if any), plain token coverage and ROUGE-1 precision."""
    from ..harness import score as S
    from .frozen import KindScorer, rouge1_precision

    def support(claim: str, context: Sequence[str], kind: str) -> float:
        return S.support(claim, context, off=off, kind=kind)

    return [("support", KindScorer(support)), ("plain coverage", plain_coverage),
            ("ROUGE-1 precision", rouge1_precision)]


def frozen_ragtruth(files: Sequence[Any] | None = None, *, criterion: str = "balanced_accuracy",
                    n_boot: int = 2000, seed: int = 0, confidence: float = 0.95,
                    scorers: Sequence[tuple[str, AnyScorer]] | None = None,
                    sources: Collection[str] | None = None, subset: str = "") -> PartReport:
    """Every scorer on RAGTruth's frozen part, its floor chosen on the tuning part
    (:func:`playground.calibrate.frozen.evaluate_frozen`; per task type QA / Summary).

    ``sources``: report only the frozen claims of these sources (floors are still
    chosen on the whole tuning part); ``subset`` says so in the report."""
    from ..harness import score as S
    from .frozen import evaluate_frozen, items_of, only_sources

    tuning, frozen = ragtruth_split(files)
    return evaluate_frozen("RAGTruth", items_of(tuning), items_of(only_sources(frozen, sources)),
                           scorers or real_scorers(), grid=S.SUPPORT_FLOOR_GRID, default=S.DEFAULT_SUPPORT_FLOOR,
                           criterion=criterion, n_boot=n_boot, seed=seed, confidence=confidence, subset=subset)


def tuning_cv_ragtruth(files: Sequence[Any] | None = None, *, folds: int = 5, criterion: str = "balanced_accuracy",
                       n_boot: int = 1000, seed: int = 0, confidence: float = 0.95,
                       scorers: Sequence[tuple[str, AnyScorer]] | None = None,
                       sources: Collection[str] | None = None, subset: str = "") -> PartReport:
    """Every scorer cross-validated on RAGTruth's *tuning* part only, grouped by source
    (:func:`playground.calibrate.frozen.tuning_cv`; no frozen claim is scored).

    Besides the task types, the pooled held-out predictions are reported per
    file (a claim in both files counts for the first): the frozen part comes
    from the natural-rate ``validation-sample.jsonl`` alone, so its tuning
    claims are the slice most like it (``claims.jsonl`` is enriched for
    hallucinations, and the rules were written on it).  ``sources``: only the
    tuning claims of these sources take part; ``subset`` says so in the report."""
    from ..harness import score as S
    from .frozen import items_of, only_sources, tuning_cv

    paths = [default_ragtruth_path(), default_validation_path()] if files is None else list(files)
    tuning, _ = ragtruth_split(paths)
    tuning = only_sources(tuning, sources)
    origin: dict[str, str] = {}
    for p in paths:
        name = Path(p).name if isinstance(p, (str, Path)) else "records"
        for r in _records(p):
            origin.setdefault(r.example_id, f"file {name}")
    return tuning_cv("RAGTruth", items_of(tuning), scorers or real_scorers(), grid=S.SUPPORT_FLOOR_GRID,
                     default=S.DEFAULT_SUPPORT_FLOOR, folds=folds, criterion=criterion, n_boot=n_boot, seed=seed,
                     confidence=confidence, parts=[origin[r.example_id] for r in tuning], subset=subset)
