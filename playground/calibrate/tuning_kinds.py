"""The support scorer per kind of text: threshold-free goals and the per-kind ablation.

Three labelled sets, one kind of text each (:data:`playground.harness.score.KINDS`):
RAGTruth's QA claims (``qa``), RAGTruth's summary claims (``summary``) and BEGIN's
dialogue responses (``dialogue``).  Every figure is computed on one *part*: the
**tuning** part (what rules and floors may be chosen on) or, once, at the end, the
**frozen** part (:mod:`playground.calibrate.splits`).

* **ROC AUC** (threshold-free; :func:`roc_auc`): the probability that a supported
  claim scores higher than a hallucinated one, ties counting one half --
  ``U / (n_supported * n_hallucinated)`` with ``U`` the Mann-Whitney statistic of
  the supported claims' scores against the hallucinated claims' (:func:`scipy.stats.mannwhitneyu`;
  a test checks it against ``sklearn.metrics.roc_auc_score``).  Nothing is fitted,
  so on the tuning part it is an out-of-sample figure for a scorer whose rules were
  not chosen on that part, and an in-sample one for the rules that were.
* **Cross-validated kappa** (:func:`playground.calibrate.frozen.tuning_cv`): the
  floor chosen on four folds of sources, applied to the fifth, pooled.
* **At the shipped floor**: hallucination precision and recall when the claims
  below :data:`playground.harness.score.DEFAULT_SUPPORT_FLOORS` of their kind are
  flagged (no floor chosen on the data reported).

:func:`kind_ablation` switches each rule of
:data:`playground.harness.score.SUPPORT_RULES` (on for the kind by
:data:`playground.harness.score.RULE_KINDS`) off in turn -- and each rule off for
the kind on -- and reports the change of AUC and of cross-validated kappa: a rule
whose switching off raises either on a kind is a candidate to switch off for it.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import mannwhitneyu

from .frozen import Item, counts_metrics, items_of, rouge1_precision, score_items, tuning_cv

__all__ = ["PARTS", "floor_rule_table", "goals_table", "kind_ablation", "kind_items", "roc_auc"]

#: The parts a figure can be computed on.
PARTS: tuple[str, ...] = ("tuning", "frozen")
_RAGTRUTH_KIND = {"QA": "qa", "Summary": "summary"}


def roc_auc(scores: Sequence[float] | np.ndarray, supported: Sequence[bool]) -> float | None:
    """ROC AUC of ``scores`` for telling supported claims (high) from hallucinated ones (module
    docstring); None when one class is absent."""
    s = np.asarray(scores, dtype=float)
    h = np.asarray(supported, dtype=bool)
    if h.all() or not h.any():
        return None
    u = mannwhitneyu(s[h], s[~h], alternative="two-sided").statistic
    return float(u) / (int(h.sum()) * int((~h).sum()))


def kind_items(part: str = "tuning") -> dict[str, tuple[str, list[Item]]]:
    """``{data set label: (kind, items)}`` of one part: ``RAGTruth QA``, ``RAGTruth Summary``, ``BEGIN``."""
    from .begin import begin_split
    from .ragtruth import ragtruth_split

    if part not in PARTS:
        raise ValueError(f"unknown part {part!r} (known: {', '.join(PARTS)})")
    i = PARTS.index(part)
    rt, bg = ragtruth_split()[i], begin_split()[i]
    out: dict[str, tuple[str, list[Item]]] = {}
    for task, kind in _RAGTRUTH_KIND.items():
        out[f"RAGTruth {task}"] = (kind, items_of([r for r in rt if r.task_type == task]))
    out["BEGIN"] = ("dialogue", items_of(bg, "dialogue"))
    return out


def _support(kind: str, off: Sequence[str] = (), on: Sequence[str] = ()) -> Callable[[str, Sequence[str]], float]:
    """Support of ``kind`` with the rules ``off`` switched off and the rules ``on`` switched on."""
    from ..harness import score as S

    rules_off = tuple(sorted((S.kind_off(kind) - set(on)) | set(off)))
    if rules_off == tuple(sorted(S.kind_off(kind))):
        def fn(claim: str, context: Sequence[str]) -> float:
            return S.support(claim, context, kind=kind)
    else:
        def fn(claim: str, context: Sequence[str]) -> float:
            return S.support(claim, context, off=rules_off, kind=None)

    return fn


def _at_floor(scores: np.ndarray, items: Sequence[Item], floor: float) -> dict[str, float | None]:
    sup = np.array([i.supported for i in items], dtype=bool)
    flagged = scores < floor
    h = ~sup
    c = [np.array([int(x)]) for x in ((h & flagged).sum(), (sup & flagged).sum(), (h & ~flagged).sum(),
                                      (sup & ~flagged).sum())]
    m = counts_metrics(*c)
    return {k: (None if np.isnan(v[0]) else round(float(v[0]), 4)) for k, v in m.items()}


def goals_table(part: str = "tuning") -> pd.DataFrame:
    """Per data set and kind: ROC AUC of support, plain token coverage and ROUGE-1 precision, and
    support's hallucination precision, recall, kappa and balanced accuracy at the shipped floor of
    the kind; plus RAGTruth's two kinds together (each at its kind's floor)."""
    from ..harness import score as S
    from .ragtruth import plain_coverage

    rows: list[dict[str, Any]] = []
    pooled_s: list[np.ndarray] = []
    pooled_f: list[np.ndarray] = []
    pooled_items: list[Item] = []
    for label, (kind, items) in kind_items(part).items():
        sup = [i.supported for i in items]
        s = score_items(_support(kind), items)
        floor = S.DEFAULT_SUPPORT_FLOORS[kind]
        row: dict[str, Any] = {"data": label, "part": part, "kind": kind, "n": len(items),
                               "hallucinated": sum(not x for x in sup)}
        for name, scores in (("support", s), ("plain coverage", score_items(plain_coverage, items)),
                             ("ROUGE-1 precision", score_items(rouge1_precision, items))):
            auc = roc_auc(scores, sup)
            row[f"auc {name}"] = None if auc is None else round(auc, 4)
        row["floor"] = floor
        row.update(_at_floor(s, items, floor))
        rows.append(row)
        if label.startswith("RAGTruth"):
            pooled_s.append(s)
            pooled_f.append(np.full(len(items), floor))
            pooled_items += items
    s_all, f_all = np.concatenate(pooled_s), np.concatenate(pooled_f)
    sup_all = [i.supported for i in pooled_items]
    row = {"data": "RAGTruth (QA + Summary)", "part": part, "kind": "qa+summary", "n": len(pooled_items),
           "hallucinated": sum(not x for x in sup_all)}
    for name, fn in (("support", None), ("plain coverage", plain_coverage), ("ROUGE-1 precision", rouge1_precision)):
        scores = s_all if fn is None else score_items(fn, pooled_items)
        auc = roc_auc(scores, sup_all)
        row[f"auc {name}"] = None if auc is None else round(auc, 4)
    row["floor"] = "per kind"
    row.update(_at_floor(s_all - f_all, pooled_items, 0.0))
    rows.append(row)
    return pd.DataFrame(rows)


def kind_ablation(*, folds: int = 5, seed: int = 0, criterion: str = "balanced_accuracy") -> pd.DataFrame:
    """Per data set and kind, on the tuning part: the shipped rules of the kind, then each rule
    toggled (``without R`` for a rule on for the kind, ``with R`` for one off): ROC AUC and
    cross-validated kappa, balanced accuracy, hallucination recall and precision, and the deltas
    against the shipped rules."""
    from ..harness import score as S

    rows: list[dict[str, Any]] = []
    for label, (kind, items) in kind_items("tuning").items():
        sup = [i.supported for i in items]
        off_now = S.kind_off(kind)
        variants = [("shipped rules", _support(kind))]
        variants += [(f"with {r}", _support(kind, on=(r,))) if r in off_now else
                     (f"without {r}", _support(kind, off=(r,))) for r in S.SUPPORT_RULES]
        cv = tuning_cv(label, items, variants, grid=S.SUPPORT_FLOOR_GRID, default=S.DEFAULT_SUPPORT_FLOORS[kind],
                       folds=folds, criterion=criterion, n_boot=0, seed=seed)
        base: dict[str, Any] = {}
        for (name, fn), scv in zip(variants, cv.scorers, strict=True):
            r = scv.rows[0] if scv.rows else {}
            auc = roc_auc(score_items(fn, items), sup)
            row = {"data": label, "kind": kind, "support": name, "auc": None if auc is None else round(auc, 4),
                   "kappa": r.get("kappa"), "balanced_accuracy": r.get("balanced_accuracy"),
                   "recall_hallucinated": r.get("recall_hallucinated"),
                   "precision_hallucinated": r.get("precision_hallucinated"),
                   "floors": " ".join("—" if f is None else f"{f:g}" for f in scv.fold_floors)}
            if not base:
                base = row
            for k in ("auc", "kappa"):
                x, y = row[k], base[k]
                row[f"delta_{k}"] = None if x is None or y is None else round(x - y, 4)
            rows.append(row)
    return pd.DataFrame(rows)


def _natural_mask(items: Sequence[Item]) -> np.ndarray:
    """Which RAGTruth items are natural-rate claims (not in the enriched ``claims.jsonl``)."""
    from .ragtruth import _records, default_ragtruth_path

    enriched = {r.example_id for r in _records(default_ragtruth_path())}
    return np.array([i.item_id not in enriched for i in items], dtype=bool)


def _flag_row(flagged: np.ndarray, hallucinated: np.ndarray) -> dict[str, Any]:
    tp, n_flag, n_h = int((flagged & hallucinated).sum()), int(flagged.sum()), int(hallucinated.sum())
    return {"caught": f"{tp}/{n_h}", "flags": n_flag, "recall": round(tp / n_h, 4) if n_h else None,
            "precision": round(tp / n_flag, 4) if n_flag else None}


def floor_rule_table(*, folds: int = 5, seed: int = 0) -> pd.DataFrame:
    """Per RAGTruth kind and floor rule (:mod:`playground.calibrate.floor_rules`), on the tuning part only:
    the floor the rule chooses on the whole part, the floors chosen out of fold, and the pooled held-out
    recall and precision on every claim and on the natural-rate claims; ``shipped floors`` applies
    :data:`playground.harness.score.DEFAULT_SUPPORT_FLOORS` as they are.  Last, RAGTruth's two kinds
    together on the natural-rate claims, each kind at its own rule's floors."""
    from ..harness import score as S
    from .floor_rules import RULES, choose_by_rule, rule_cv

    rows: list[dict[str, Any]] = []
    pooled: dict[str, list[tuple[np.ndarray, np.ndarray]]] = {}
    for label, (kind, items) in kind_items("tuning").items():
        if not label.startswith("RAGTruth"):
            continue
        s = np.round(score_items(_support(kind), items), 6)
        sup = np.array([i.supported for i in items], dtype=bool)
        nat, src = _natural_mask(items), [i.source for i in items]
        shipped = S.DEFAULT_SUPPORT_FLOORS[kind]
        runs = [("shipped floors", f"{shipped:g}", s < shipped, "")]
        for rule in RULES:
            cv = rule_cv(rule, s, sup, nat, src, S.SUPPORT_FLOOR_GRID, folds=folds, seed=seed)
            whole = choose_by_rule(rule, s, sup, nat, S.SUPPORT_FLOOR_GRID).floor
            runs.append((rule, "—" if whole is None else f"{whole:g}", cv.flagged,
                         " ".join("—" if f is None else f"{f:g}" for f in cv.fold_floors)))
        for name, whole_floor, flagged, fold_floors in runs:
            a, n = _flag_row(flagged, ~sup), _flag_row(flagged[nat], ~sup[nat])
            rows.append({"data": label, "kind": kind, "rule": name, "floor": whole_floor, "fold floors": fold_floors,
                         **{f"all {k}": v for k, v in a.items()}, **{f"natural {k}": v for k, v in n.items()}})
            pooled.setdefault(name, []).append((flagged[nat], ~sup[nat]))
    for name, parts in pooled.items():
        flagged, hall = (np.concatenate([p[i] for p in parts]) for i in (0, 1))
        rows.append({"data": "RAGTruth (QA + Summary)", "kind": "qa+summary", "rule": name, "floor": "per kind",
                     "fold floors": "",
                     **dict.fromkeys(("all caught", "all flags", "all recall", "all precision"), "—"),
                     **{f"natural {k}": v for k, v in _flag_row(flagged, hall).items()}})
    return pd.DataFrame(rows)
