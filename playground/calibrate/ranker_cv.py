"""Learned rankers of RAGTruth claims, out of fold on the tuning part only (issue 26 research).

The question: does a logistic regression on lexical claim and answer features
(:mod:`playground.calibrate.claim_features`) rank hallucinated RAGTruth claims well enough to reach
hallucination **precision >= 0.30 at recall >= 0.55** on natural-rate claims, where the support score alone
does not?  Only the **tuning** part is read (:func:`playground.calibrate.ragtruth.ragtruth_split`); no
frozen claim is scored.

Protocol (:func:`ranker_table`), per kind of text (``qa``: RAGTruth QA, ``summary``: RAGTruth Summary):

1. Each claim's source is in fold ``sampling.fold_of(source, folds, seed)``.
2. For each fold ``k``: the model (:func:`playground.calibrate.logit.fit_logistic`, label 1 = supported,
   penalty ``l2``) is fitted on the other folds and scores the claims of fold ``k``: their out-of-fold score
   is ``P(supported)``.  The floor is chosen by the ``reweighted`` rule
   (:func:`playground.calibrate.floor_rules.choose_by_rule`, grid :data:`LEARNED_GRID`) on *inner*
   out-of-fold scores of the training folds (folds by ``fold_of(source, folds, seed + 1)`` among them), so no
   floor is chosen on scores a model fitted on the same claims gave; the claims of fold ``k`` scoring below it
   are flagged.  The shipped support score and the weakest sentence's support (:data:`UNFITTED`) are run
   through the same protocol (nothing fitted; grid :data:`playground.harness.score.SUPPORT_FLOOR_GRID`).
3. Reported: ROC AUC of the out-of-fold scores on every tuning claim and on the natural-rate ones
   (``validation-sample.jsonl``, not the enriched ``claims.jsonl``), beside plain token coverage's and
   ROUGE-1 precision's; and, on the natural-rate claims, hallucinated claims caught, flags, recall and
   precision; last, both kinds pooled.

:func:`in_sample_ceiling` is the opposite, optimistic, figure: each model fitted on *all* tuning claims of
a kind and its floors (one per kind, any score as a floor) chosen on the same natural-rate claims it is
read on -- the best precision at recall >= 0.55 the scores could show; below 0.30 there, no floor rule
can reach 0.30 out of fold.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from .claim_features import ANSWER_FEATURES, CLAIM_FEATURES, answer_features, claim_features
from .floor_rules import choose_by_rule
from .logit import fit_logistic
from .tuning_kinds import roc_auc

__all__ = ["FEATURE_SETS", "LEARNED_GRID", "UNFITTED", "ClaimRow", "FitPredict", "in_sample_ceiling", "oof_flags",
           "ranker_table", "tuning_rows"]

#: Scores on the support scale used as they are (nothing fitted; the support floor grid): the shipped
#: support score and the weakest sentence's (:mod:`playground.calibrate.claim_features`).
UNFITTED: tuple[str, ...] = ("support", "weakest")

#: Candidate floors of a learned score (``P(supported)``): 0.005 steps, since most claims score near 1.
LEARNED_GRID: tuple[float, ...] = tuple(round(0.005 * i, 3) for i in range(1, 200))
#: The feature sets compared (:mod:`playground.calibrate.claim_features`); ``support`` alone is the shipped score.
FEATURE_SETS: dict[str, tuple[str, ...]] = {
    "rule features": ("support", "coverage", "missing", "exact_miss", "rouge"),
    "+ weakest sentence": ("support", "coverage", "missing", "exact_miss", "rouge", "weakest", "best_passage"),
    "+ length and bigrams": CLAIM_FEATURES,
    "+ answer features": CLAIM_FEATURES + ANSWER_FEATURES,
}
_KINDS = {"QA": "qa", "Summary": "summary"}


@dataclass(frozen=True)
class ClaimRow:
    """One tuning claim: its features, human label (``supported``), source, kind and sampling."""

    claim_id: str
    source: str
    kind: str
    natural: bool
    supported: bool
    features: Mapping[str, float]


def tuning_rows() -> list[ClaimRow]:
    """Every RAGTruth tuning claim with its features (and ``plain``, plain token coverage, a baseline);
    answers' claims in their order (frozen claims are never scored)."""
    from .ragtruth import _records, default_ragtruth_path, plain_coverage, ragtruth_split

    tuning = ragtruth_split()[0]
    enriched = {r.example_id for r in _records(default_ragtruth_path())}
    answers: dict[str, list[Any]] = {}
    for r in tuning:
        answers.setdefault(r.response_id, []).append(r)
    rows: list[ClaimRow] = []
    for claims in answers.values():
        claims.sort(key=lambda r: r.claim_index)
        feats = [claim_features(r.claim, r.context, _KINDS[r.task_type]) for r in claims]
        for r, f, a in zip(claims, feats, answer_features([f["support"] for f in feats]), strict=True):
            rows.append(ClaimRow(r.example_id, r.source_id, _KINDS[r.task_type], r.example_id not in enriched,
                                 r.supported, {**f, **a, "plain": plain_coverage(r.claim, r.context)}))
    return rows


def _matrix(rows: Sequence[ClaimRow], features: Sequence[str]) -> np.ndarray:
    return np.array([[r.features[f] for f in features] for r in rows], dtype=float)


def _fit_predict(train: Sequence[ClaimRow], test: Sequence[ClaimRow], features: Sequence[str],
                 l2: float) -> np.ndarray:
    if len(features) == 1 and features[0] in UNFITTED:
        return _matrix(test, features)[:, 0]
    model = fit_logistic(_matrix(train, features), np.array([r.supported for r in train], dtype=float), l2)
    return model.predict(_matrix(test, features))


#: ``fit(train rows, test rows, features, l2) -> P(supported) of the test rows``: how a model is fitted and applied.
FitPredict = Callable[[Sequence[ClaimRow], Sequence[ClaimRow], Sequence[str], float], np.ndarray]


def _oof(rows: Sequence[ClaimRow], features: Sequence[str], l2: float, folds: int, seed: int,
         fit: FitPredict | None = None) -> np.ndarray:
    from ..sampling import fold_of

    fit = fit or _fit_predict
    fold = np.array([fold_of(r.source, folds, seed) for r in rows])
    out = np.zeros(len(rows))
    for k in range(folds):
        test = [r for r, f in zip(rows, fold, strict=True) if f == k]
        if test:  # a fold without sources has nothing to score
            out[fold == k] = fit([r for r, f in zip(rows, fold, strict=True) if f != k], test, features, l2)
    return out


def oof_flags(rows: Sequence[ClaimRow], features: Sequence[str], l2: float = 1.0, *, folds: int = 5,
              seed: int = 0, fit: FitPredict | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``(out-of-fold scores, held-out flags)`` of ``rows`` (module docstring, steps 1-2); ``fit``: another
    model than the logistic regression (:data:`FitPredict`; a research script passes gradient boosting)."""
    from ..harness.score import SUPPORT_FLOOR_GRID
    from ..sampling import fold_of

    unfitted = len(features) == 1 and features[0] in UNFITTED
    grid = SUPPORT_FLOOR_GRID if unfitted else LEARNED_GRID
    fold = np.array([fold_of(r.source, folds, seed) for r in rows])
    scores = _oof(rows, features, l2, folds, seed, fit)
    flags = np.zeros(len(rows), dtype=bool)
    for k in range(folds):
        train = [r for r, f in zip(rows, fold, strict=True) if f != k]
        inner = _oof(train, features, l2, folds, seed + 1, fit)
        choice = choose_by_rule("reweighted", inner, [r.supported for r in train], [r.natural for r in train], grid)
        if choice.floor is not None:
            flags[fold == k] = np.round(scores[fold == k], 6) < choice.floor
    return scores, flags


def _auc(scores: np.ndarray, supported: np.ndarray) -> float | None:
    a = roc_auc(scores, list(supported))
    return None if a is None else round(a, 4)


def _row(name: str, kind: str, rows: Sequence[ClaimRow], scores: np.ndarray, flags: np.ndarray) -> dict[str, Any]:
    sup = np.array([r.supported for r in rows])
    nat = np.array([r.natural for r in rows])
    h = ~sup & nat
    caught, n_flags = int((flags & h).sum()), int((flags & nat).sum())
    return {"scorer": name, "kind": kind, "n": len(rows), "auc": _auc(scores, sup),
            "auc natural": _auc(scores[nat], sup[nat]), "caught": f"{caught}/{int(h.sum())}", "flags": n_flags,
            "recall": round(caught / int(h.sum()), 4) if h.any() else None,
            "precision": round(caught / n_flags, 4) if n_flags else None}


def ranker_table(*, folds: int = 5, seed: int = 0, l2s: Sequence[float] = (1.0, 10.0, 30.0),
                 rows: Sequence[ClaimRow] | None = None) -> pd.DataFrame:
    """The out-of-fold table of the module docstring: the shipped support score, then each feature set of
    :data:`FEATURE_SETS` at each penalty of ``l2s``; per kind, then both kinds pooled (natural-rate claims)."""
    data = list(rows) if rows is not None else tuning_rows()
    variants: list[tuple[str, tuple[str, ...], float]] = [("support (shipped)", ("support",), 0.0),
                                                          ("weakest sentence (no fit)", ("weakest",), 0.0)]
    variants += [(f"LR {name}, l2={l2:g}", feats, l2) for name, feats in FEATURE_SETS.items() for l2 in l2s]
    out: list[dict[str, Any]] = []
    for kind in ("qa", "summary"):
        kr = [r for r in data if r.kind == kind]
        sup = np.array([r.supported for r in kr])
        nat = np.array([r.natural for r in kr])
        for base, label in (("plain", "plain token coverage"), ("rouge", "ROUGE-1 precision")):
            s = _matrix(kr, (base,))[:, 0]
            out.append({"scorer": label, "kind": kind, "n": len(kr), "auc": _auc(s, sup),
                        "auc natural": _auc(s[nat], sup[nat])})
        for name, feats, l2 in variants:
            scores, flags = oof_flags(kr, feats, l2, folds=folds, seed=seed)
            out.append({**_row(name, kind, kr, scores, flags), "_flags": flags, "_rows": kr})
    out += _pooled(out)
    return pd.DataFrame([{k: v for k, v in r.items() if not k.startswith("_")} for r in out])


def _pooled(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    pooled: list[dict[str, Any]] = []
    names = dict.fromkeys(r["scorer"] for r in rows if "_flags" in r)
    for name in names:
        parts = [r for r in rows if r["scorer"] == name and "_flags" in r]
        flags = np.concatenate([p["_flags"] for p in parts])
        claims = [c for p in parts for c in p["_rows"]]
        nat = np.array([c.natural for c in claims])
        h = ~np.array([c.supported for c in claims]) & nat
        caught, n_flags = int((flags & h).sum()), int((flags & nat).sum())
        pooled.append({"scorer": name, "kind": "qa+summary", "n": len(claims), "caught": f"{caught}/{int(h.sum())}",
                       "flags": n_flags, "recall": round(caught / int(h.sum()), 4),
                       "precision": round(caught / n_flags, 4) if n_flags else None})
    return pooled


def _catches(scores: np.ndarray, hallucinated: np.ndarray) -> list[tuple[int, int]]:
    """``(caught, flags)`` at every floor that flags a different set of claims (each distinct score, and above all)."""
    floors = np.unique(np.r_[scores, np.inf])
    return [(int(((scores < f) & hallucinated).sum()), int((scores < f).sum())) for f in floors]


def in_sample_ceiling(rows: Sequence[ClaimRow], features: Sequence[str], l2: float = 1.0,
                      min_recall: float = 0.55) -> tuple[int, int, int]:
    """``(caught, flags, hallucinated)`` of the best pair of per-kind floors on the natural-rate claims, in
    sample (module docstring): the highest precision among the pairs catching at least ``min_recall`` of them."""
    per_kind: list[list[tuple[int, int]]] = []
    n_h = 0
    for kind in ("qa", "summary"):
        kr = [r for r in rows if r.kind == kind]
        s = _fit_predict(kr, kr, features, l2)
        nat = np.array([r.natural for r in kr])
        h = ~np.array([r.supported for r in kr])
        n_h += int((h & nat).sum())
        per_kind.append(_catches(s[nat], h[nat]))
    best = (0, 0)
    for cq, fq in per_kind[0]:
        for cs, fs in per_kind[1]:
            c, f = cq + cs, fq + fs
            if f and c >= min_recall * n_h and (best[1] == 0 or c * best[1] > best[0] * f):
                best = (c, f)
    return best[0], best[1], n_h
