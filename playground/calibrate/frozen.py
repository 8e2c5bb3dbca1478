"""Scorers on the frozen part of a real data set, with floors chosen on the tuning part.

The protocol (what a careful reader of a detector's figure asks for):

1. Every scorer's floor is chosen on the **tuning** part only: the floor of
   :data:`playground.harness.score.SUPPORT_FLOOR_GRID` that maximises the
   criterion (balanced accuracy by default) of ``round(score, 6) >= floor``
   against the human "supported" labels (ties: the floor nearest the default,
   then the lower, as :func:`playground.sweep.best_row`).
2. That floor is applied unchanged to the **frozen** part
   (:mod:`playground.calibrate.splits`), and only the frozen part is reported:
   Cohen's kappa, balanced accuracy, recall and precision of the
   *hallucinated* class, overall and per task type.
3. Intervals: percentile cluster bootstrap over the frozen sources (claims of
   one source share their evidence), ``n_boot`` resamples; resample ``b``
   draws source ``stable_hash(seed, f"{b}:{j}") mod G`` for ``j = 0 … G-1``
   (:func:`playground.sampling.stable_hash`, no library random stream).  A
   statistic undefined in a resample (a class absent) is left out of that
   resample's distribution; the number used is reported.

Scores given rather than computed (:class:`GivenScores`: an LLM judge's verdicts, a
user's own scorer run elsewhere) are looked up by :attr:`Item.item_id` and go through
the same protocol.  A yes/no scorer (``yes_no``: verdicts 1.0 / 0.0) has no floor to
choose: a claim passes when its verdict is yes, and its floor column reads ``yes/no``.

Confusion counts, with hallucinated = positive: ``tp`` hallucinated and
flagged (score below the floor), ``fn`` hallucinated and passed, ``fp``
supported and flagged, ``tn`` supported and passed.  ``recall = tp / (tp +
fn)``, ``precision = tp / (tp + fp)``, ``balanced accuracy = (recall + tn /
(tn + fp)) / 2``, ``kappa = (p_o - p_e) / (1 - p_e)`` with ``p_o = (tp + tn)
/ n`` and ``p_e = ((tp + fp)(tp + fn) + (fn + tn)(fp + tn)) / n²``.  The
point values equal :func:`playground.stats.cohens_kappa` and
:func:`playground.stats.balanced_accuracy` (a test checks); the counts form
exists so that thousands of resamples cost one matrix product.
"""
from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
import pandas as pd

from ..harness.floor_choice import choose_floor, counts_metrics
from ..sampling import stable_hash

__all__ = [
    "TASK_KINDS",
    "YES_NO",
    "AnyScorer",
    "GivenScores",
    "Item",
    "KindScorer",
    "PartReport",
    "Scorer",
    "ScorerOnPart",
    "bootstrap_indices",
    "choose_floor",
    "counts_metrics",
    "evaluate_frozen",
    "items_of",
    "only_sources",
    "rouge1_precision",
    "score_items",
    "tuning_cv",
]

Scorer = Callable[[str, Sequence[str]], float]

#: The floor column of a yes/no scorer (no floor is chosen from data).
YES_NO = "yes/no"


@dataclass(frozen=True)
class GivenScores:
    """Per-item scores that were given, not computed from the text, keyed by :attr:`Item.item_id`.

    ``yes_no``: the scores are verdicts (1.0 = supported, 0.0 = not): no floor is
    chosen, a claim passes when ``score >= 0.5``.  Otherwise the scores are on
    [0, 1], higher = more supported, and the floor is chosen on the tuning part
    like every scorer's."""

    scores: Mapping[str, float]
    yes_no: bool = False


AnyScorer = Scorer | GivenScores


@dataclass(frozen=True)
class Item:
    """One labelled claim: its text, grounding passages, the human label
    (``supported`` = not hallucinated), its source (the bootstrap cluster), task type
    and id (the record's ``example_id``: what :class:`GivenScores` are keyed by)."""

    claim: str
    context: tuple[str, ...]
    supported: bool
    source: str
    task: str
    item_id: str = ""
    #: The kind of text (:data:`playground.harness.score.KINDS`): which support rules apply.
    kind: str = "qa"


#: Kind of text of a RAGTruth task type or BEGIN corpus (any other task type is ``qa``, the default kind).
TASK_KINDS: dict[str, str] = {"QA": "qa", "Summary": "summary", "Data2txt": "summary", "wow": "dialogue",
                              "cmu_dog": "dialogue", "topicalchat": "dialogue"}


def items_of(records: Iterable[Any], kind: str | None = None) -> list[Item]:
    """Items of RAGTruth or BEGIN records (``claim``, ``context``, ``supported``,
    ``source_id``, ``task_type``, ``example_id``); ``kind``: the kind of every item (BEGIN:
    ``dialogue``), else the kind of its task type (:data:`TASK_KINDS`)."""
    return [Item(r.claim, tuple(r.context), bool(r.supported), r.source_id, r.task_type, r.example_id,
                 kind or TASK_KINDS.get(r.task_type, "qa"))
            for r in records]


class KindScorer:
    """A scorer that reads each item's kind of text: ``fn(claim, context, kind)``."""

    def __init__(self, fn: Callable[[str, Sequence[str], str], float]):
        self.fn = fn

    def __call__(self, claim: str, context: Sequence[str], kind: str = "qa") -> float:
        return self.fn(claim, context, kind)


def only_sources(records: Sequence[Any], sources: Collection[str] | None) -> list[Any]:
    """The records whose ``source_id`` is in ``sources`` (all of them when ``sources`` is None)."""
    return list(records) if sources is None else [r for r in records if r.source_id in sources]


def score_items(scorer: AnyScorer, items: Sequence[Item]) -> np.ndarray:
    """``round(score, 6)`` of every item: computed from claim and context, or looked up
    by item id in :class:`GivenScores` (a ``ValueError`` names the ids without one)."""
    if isinstance(scorer, GivenScores):
        missing = [i.item_id for i in items if i.item_id not in scorer.scores]
        if missing:
            raise ValueError(f"no given score for {len(missing)} item(s): {', '.join(missing[:10])}"
                             + (" …" if len(missing) > 10 else ""))
        return np.round(np.array([float(scorer.scores[i.item_id]) for i in items], dtype=float), 6)
    if isinstance(scorer, KindScorer):
        return np.round(np.array([float(scorer(i.claim, i.context, i.kind)) for i in items], dtype=float), 6)
    return np.round(np.array([float(scorer(i.claim, i.context)) for i in items], dtype=float), 6)


_ROUGE_TOKEN_RE = re.compile(r"[a-z0-9]+")


def rouge1_precision(claim: str, context: Sequence[str] | str) -> float:
    """ROUGE-1 precision of the claim against the context, as ``rouge_score``
    computes it without stemming: tokens are lower-cased ``[a-z0-9]+`` runs;
    ``precision = sum_w min(count_claim(w), count_context(w)) / len(claim
    tokens)``; 0.0 for a claim without tokens.  (A test checks it against
    ``rouge_score.rouge_scorer``; the context is the passages joined by spaces.)"""
    toks = _ROUGE_TOKEN_RE.findall(claim.lower())
    if not toks:
        return 0.0
    text = context if isinstance(context, str) else " ".join(context)
    ref = Counter(_ROUGE_TOKEN_RE.findall(text.lower()))
    return sum(min(c, ref[w]) for w, c in Counter(toks).items()) / len(toks)


@lru_cache(maxsize=64)
def bootstrap_indices(n_groups: int, n_boot: int, seed: int | str) -> np.ndarray:
    """``(n_boot, n_groups)`` source indices: resample ``b`` draws
    ``stable_hash(seed, f"{b}:{j}") mod n_groups`` for ``j = 0 … n_groups-1``."""
    return np.array([[stable_hash(seed, f"{b}:{j}") % n_groups for j in range(n_groups)] for b in range(n_boot)],
                    dtype=np.int64).reshape(n_boot, n_groups)


@dataclass(frozen=True)
class ScorerOnPart:
    """One scorer on the part reported: the floor(s) it used and its figures.

    On the frozen part (:func:`evaluate_frozen`) ``floor`` is the floor chosen
    on the tuning part; cross-validated on the tuning part (:func:`tuning_cv`)
    ``fold_floors`` holds the floor chosen in each fold (``None`` where
    undefined) and ``floor`` is None.  ``rows``: one dict per slice (``all``
    and each task type, then each part label) with ``n``, ``hallucinated``,
    each statistic and its interval (``*_low``, ``*_high``).  ``reason``: why
    figures are missing, if they are.  ``yes_no``: a verdict scorer, no floor
    chosen (the table shows :data:`YES_NO`).
    """

    name: str
    floor: float | None
    rows: tuple[dict[str, Any], ...]
    reason: str = ""
    yes_no: bool = False
    fold_floors: tuple[float | None, ...] = ()


STATS = ("kappa", "balanced_accuracy", "recall_hallucinated", "precision_hallucinated")


def _slice_row(task: str, sup: np.ndarray, pred: np.ndarray, groups: np.ndarray, n_boot: int,
               seed: int | str, confidence: float) -> dict[str, Any]:
    uniq = sorted(set(groups.tolist()))  # the slice's own sources, resampled within it
    gi = {g: i for i, g in enumerate(uniq)}
    per = np.zeros((len(uniq), 4))
    for g, h, p in zip(groups.tolist(), sup.tolist(), pred.tolist(), strict=False):
        per[gi[g]] += np.array([(not h) and (not p), h and (not p), (not h) and p, h and p], dtype=float)
    point = counts_metrics(*(np.array([x]) for x in per.sum(axis=0)))
    row: dict[str, Any] = {"task_type": task, "n": int(sup.size), "hallucinated": int((~sup).sum()),
                           "sources": len(uniq)}
    if n_boot > 0 and len(uniq) > 1:
        idx = bootstrap_indices(len(uniq), n_boot, seed)
        w = np.zeros((idx.shape[0], len(uniq)))
        np.add.at(w, (np.repeat(np.arange(idx.shape[0]), idx.shape[1]), idx.ravel()), 1.0)
        c = w @ per
        dist = counts_metrics(c[:, 0], c[:, 1], c[:, 2], c[:, 3])
    else:
        dist = None
    a = (1.0 - confidence) / 2.0
    for k in STATS:
        v = float(point[k][0])
        row[k] = None if np.isnan(v) else round(v, 4)
        lo = hi = None
        if dist is not None:
            d = dist[k][~np.isnan(dist[k])]
            if d.size:
                lo, hi = (round(float(x), 4) for x in np.quantile(d, [a, 1.0 - a]))
        row[f"{k}_low"], row[f"{k}_high"] = lo, hi
    return row


@dataclass(frozen=True)
class PartReport:
    """Scorers on one part of one data set: the frozen part with floors from the tuning part
    (:func:`evaluate_frozen`, ``folds`` 0), or the tuning part cross-validated (:func:`tuning_cv`,
    ``folds`` >= 2).

    ``n``, ``hallucinated``, ``sources``: of the part reported; ``n_tuning``: the tuning items the
    floors were chosen on (the whole tuning part in both cases)."""

    dataset: str
    n_tuning: int
    n: int
    hallucinated: int
    sources: int
    folds: int
    criterion: str
    n_boot: int
    seed: int
    scorers: tuple[ScorerOnPart, ...]
    #: Empty, or what part of the part is reported (``--judge-limit``: the first N sources).
    subset: str = ""

    @property
    def tuning_cv(self) -> bool:
        """The tuning part cross-validated (else: the frozen part)."""
        return self.folds > 0

    def table(self) -> pd.DataFrame:
        """One row per scorer and slice; ``floor`` is the floor used on the frozen part, or the folds'
        floors joined by spaces for a cross-validation, :data:`YES_NO` for a verdict scorer."""
        rows = [{"dataset": self.dataset, "scorer": s.name, "floor": YES_NO if s.yes_no else self._floor(s), **r}
                for s in self.scorers for r in s.rows]
        return pd.DataFrame(rows)

    def _floor(self, s: ScorerOnPart) -> float | str | None:
        if not self.tuning_cv:
            return s.floor
        return " ".join("—" if f is None else f"{f:g}" for f in s.fold_floors)

    def scorer(self, name: str) -> ScorerOnPart:
        return next(s for s in self.scorers if s.name == name)

    def floors(self) -> dict[str, float | None]:
        return {s.name: s.floor for s in self.scorers}


def _frozen_rows(sup: np.ndarray, pred: np.ndarray, groups: np.ndarray, tasks: np.ndarray, n_boot: int,
                 seed: int | str, confidence: float) -> tuple[dict[str, Any], ...]:
    rows = [_slice_row("all", sup, pred, groups, n_boot, seed, confidence)]
    for t in sorted(set(tasks.tolist())):
        m = tasks == t
        rows.append(_slice_row(t, sup[m], pred[m], groups[m], n_boot, seed, confidence))
    return tuple(rows)


def evaluate_frozen(dataset: str, tuning: Sequence[Item], frozen: Sequence[Item],
                    scorers: Sequence[tuple[str, AnyScorer]], *, grid: Sequence[float], default: float,
                    criterion: str = "balanced_accuracy", n_boot: int = 2000, seed: int | str = 0,
                    confidence: float = 0.95, floors: dict[str, float] | None = None,
                    subset: str = "") -> PartReport:
    """Choose each scorer's floor on ``tuning`` (or take it from ``floors``), report on ``frozen``.

    A yes/no scorer (:class:`GivenScores` with ``yes_no``) reads no tuning item: it
    has no floor to choose, a frozen item passes when its verdict is yes.
    ``subset``: the report's note when ``frozen`` is a part of the frozen part."""
    frozen_sources = sorted({i.source for i in frozen})
    sup_f = np.array([i.supported for i in frozen], dtype=bool)
    groups = np.array([i.source for i in frozen], dtype=object)
    tasks = np.array([i.task for i in frozen], dtype=object)
    out = []
    for name, fn in scorers:
        yes_no = isinstance(fn, GivenScores) and fn.yes_no
        floor: float | None
        reason = ""
        if yes_no:
            floor = None
        elif floors is not None and name in floors:
            floor = floors[name]
        else:
            ts = score_items(fn, tuning).tolist()
            floor, reason = choose_floor(ts, [i.supported for i in tuning], grid, default=default,
                                         criterion=criterion)
        if (floor is None and not yes_no) or not frozen:
            out.append(ScorerOnPart(name, floor, (), reason or "no frozen items", yes_no))
            continue
        pred = score_items(fn, frozen) >= (0.5 if floor is None else floor)
        out.append(ScorerOnPart(name, floor, _frozen_rows(sup_f, pred, groups, tasks, n_boot, seed, confidence),
                                yes_no=yes_no))
    return PartReport(dataset, len(tuning), len(frozen), int((~sup_f).sum()), len(frozen_sources), 0, criterion,
                      n_boot, seed if isinstance(seed, int) else 0, tuple(out), subset)


# --------------------------------------------------------------------------- tuning-only cross-validation


def _held_out(s: np.ndarray, sup: np.ndarray, fold: np.ndarray, folds: int, yes_no: bool, grid: Sequence[float],
              default: float, criterion: str) -> tuple[np.ndarray, np.ndarray, list[float | None], list[str]]:
    """:func:`tuning_cv` for one scorer's scores ``s``: ``(predicted, used, fold floors, reasons)``.

    A yes/no scorer (``folds`` 0) predicts ``s >= 0.5`` on every item; otherwise each fold ``k`` gets the
    floor chosen on the other folds, and its items are used only when a floor was found."""
    pred = s >= 0.5 if yes_no else np.zeros(len(s), dtype=bool)
    used = np.full(len(s), yes_no, dtype=bool)
    floors: list[float | None] = []
    reasons = []
    for k in range(folds):
        train, test = fold != k, fold == k
        f, why = choose_floor(s[train].tolist(), sup[train].tolist(), grid, default=default, criterion=criterion)
        floors.append(f)
        if f is None:
            if test.any():
                reasons.append(f"fold {k}: {why}")
            continue
        pred[test] = s[test] >= f
        used |= test
    return pred, used, floors, reasons


def tuning_cv(dataset: str, tuning: Sequence[Item], scorers: Sequence[tuple[str, AnyScorer]], *,
              grid: Sequence[float], default: float, folds: int = 5, criterion: str = "balanced_accuracy",
              n_boot: int = 1000, seed: int = 0, confidence: float = 0.95,
              parts: Sequence[str] | None = None, subset: str = "") -> PartReport:
    """Grouped cross-validation on the tuning part alone (never reads a frozen item).

    Item ``i`` is in fold ``fold_of(source_i, folds, seed)``
    (:func:`playground.sampling.fold_of`: claims of one source stay together).
    For each fold ``k`` the floor is chosen (:func:`choose_floor`, ``criterion``)
    on the items of the other folds and applied to the items of fold ``k``; the
    held-out predictions of all folds are pooled and reported as
    :func:`evaluate_frozen` reports the frozen part (kappa, balanced accuracy,
    hallucination recall and precision, overall and per task type, with
    percentile cluster-bootstrap intervals over sources; the bootstrap
    resamples the pooled predictions and does not re-choose floors).  A fold
    whose training part has one class only gets no floor and its items are
    left out (``reason`` says so).  ``parts``: an optional label per item (e.g.
    the file it came from); the pooled predictions are then also reported per
    part, after the task types, as rows whose ``task_type`` is the label.  A
    yes/no scorer (:class:`GivenScores` with ``yes_no``) chooses no floor: its
    verdicts are the held-out predictions of every item.  ``subset``: the
    report's note when ``tuning`` is a part of the tuning part.
    """
    from ..sampling import fold_of

    if folds < 2:
        raise ValueError(f"cross-validation needs at least 2 folds, got {folds}")
    sup = np.array([i.supported for i in tuning], dtype=bool)
    groups = np.array([i.source for i in tuning], dtype=object)
    tasks = np.array([i.task for i in tuning], dtype=object)
    fold = np.array([fold_of(i.source, folds, seed) for i in tuning], dtype=np.int64)
    if parts is not None and len(parts) != len(tuning):
        raise ValueError(f"parts has {len(parts)} labels for {len(tuning)} items")
    part = np.array(list(parts) if parts is not None else [""] * len(tuning), dtype=object)
    out = []
    for name, fn in scorers:
        yes_no = isinstance(fn, GivenScores) and fn.yes_no
        pred, used, floors, reasons = _held_out(score_items(fn, tuning), sup, fold, 0 if yes_no else folds,
                                                yes_no, grid, default, criterion)
        if not used.any():
            out.append(ScorerOnPart(name, None, (), "; ".join(reasons) or "no tuning items",
                                    fold_floors=tuple(floors)))
            continue
        u_sup, u_pred, u_grp, u_task, u_part = sup[used], pred[used], groups[used], tasks[used], part[used]
        rows = [_slice_row("all", u_sup, u_pred, u_grp, n_boot, seed, confidence)]
        for col, labels in ((u_task, sorted(set(u_task.tolist()))),
                            (u_part, sorted(set(u_part.tolist())) if parts is not None else [])):
            for t in labels:
                m = col == t
                rows.append(_slice_row(t, u_sup[m], u_pred[m], u_grp[m], n_boot, seed, confidence))
        out.append(ScorerOnPart(name, None, tuple(rows), "; ".join(reasons), yes_no, tuple(floors)))
    return PartReport(dataset, len(tuning), len(tuning), int((~sup).sum()), len(set(groups.tolist())), folds,
                      criterion, n_boot, seed, tuple(out), subset)
