"""Correctness and relevance scorers against the golden set's answer key, on its frozen cases.

* **Correctness** of a claim (key: the authored ``correct`` label): the harness's
  :func:`playground.harness.score.correctness` (support of the claim by the
  reference answer and facts; on a must-abstain case, 1 exactly for an abstention),
  beside ROUGE-1 precision of the claim against the reference answer.
* **Relevance** of a retrieved passage (key: :func:`playground.golden.passage_key`,
  an expected source or an authored relevant section): the harness's query-only
  :func:`playground.harness.score.relevance`, beside the reference-aware
  :func:`reference_relevance` for cases that have a reference answer to look for
  (cases that must be abstained on have none), and beside ROUGE-1 recall of the
  reference answer alone.

Floors are chosen on the tuning cases and reported on the frozen cases
(:mod:`playground.calibrate.splits`, corpus ``golden``) exactly as for the real
data sets (:func:`playground.calibrate.frozen.evaluate_frozen`; the "hallucinated"
class there is the *no* class here: incorrect, irrelevant).  The golden set is
synthetic and shaped the harness defaults before the split existed.
"""
from __future__ import annotations

import csv
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..model import Case
from .frozen import _ROUGE_TOKEN_RE, Item, PartReport, evaluate_frozen, rouge1_precision

__all__ = ["golden_key_reports", "reference_relevance", "rouge1_recall"]


def rouge1_recall(reference: str, passage: str) -> float:
    """ROUGE-1 recall of ``reference`` in ``passage`` (``rouge_score`` without
    stemming): ``sum_w min(count_ref(w), count_passage(w)) / len(reference tokens)``;
    0.0 for a reference without tokens."""
    toks = _ROUGE_TOKEN_RE.findall(reference.lower())
    if not toks:
        return 0.0
    have = Counter(_ROUGE_TOKEN_RE.findall(passage.lower()))
    return sum(min(c, have[w]) for w, c in Counter(toks).items()) / len(toks)


def reference_relevance(query: str, reference: str, passage: str) -> float:
    """Reference-aware relevance in [0, 1]: the mean of the query-only
    :func:`playground.harness.score.relevance` and :func:`rouge1_recall` of the
    reference answer in the passage.  A passage is relevant when it is on the
    question's topic *and* holds the words of the answer."""
    from ..harness.score import relevance

    return (relevance(query, passage) + rouge1_recall(reference, passage)) / 2.0


@dataclass(frozen=True)
class _KeyedRun:
    """A harness run's keyed units on the golden set: per dimension, ``(on a frozen case, item)`` pairs
    and the harness's scores, with the unit texts and each unit's case."""

    texts: dict[str, str]
    case_by_unit: dict[str, Case]
    claim_score: dict[str, float]
    passage_score: dict[str, float]
    claims: list[tuple[bool, Item]]
    passages: list[tuple[bool, Item]]

    def split(self, items: list[tuple[bool, Item]], abstain: bool = True) -> tuple[list[Item], list[Item]]:
        """``(tuning, frozen)`` items; with ``abstain=False`` the units of must-abstain cases are left out."""
        keep = [(f, i) for f, i in items if abstain or not self.case_by_unit[i.claim].must_abstain]
        return [i for f, i in keep if not f], [i for f, i in keep if f]


def _keyed_run(run_dir: str | Path, root: str | Path | None) -> _KeyedRun:
    """The rows of ``run_dir/units.csv`` that carry a key (``correct`` claims, ``relevant`` passages),
    each marked frozen when its case is one of the golden corpus's frozen cases."""
    from ..golden import load_dataset
    from .splits import frozen_sources

    dataset = load_dataset(root)
    cases = {c.case_id: c for c in (dataset.cases.values() if isinstance(dataset.cases, dict) else dataset.cases)}
    from ..units import dataset_units

    texts = {u.unit_id: u.text for u in dataset_units(dataset)}
    with open(Path(run_dir) / "units.csv", encoding="utf-8", newline="") as fh:
        rows = [r for r in csv.DictReader(fh) if r["key"] not in ("", None)]
    fz = frozen_sources("golden")
    claim_score: dict[str, float] = {}
    passage_score: dict[str, float] = {}
    claims: list[tuple[bool, Item]] = []
    passages: list[tuple[bool, Item]] = []
    for r in rows:
        case = cases[r["case_id"]]
        item = Item(r["unit_id"], (), r["key"] == "1", case.case_id, case.case_type)
        if r["dimension"] == "correct":
            claim_score[r["unit_id"]] = float(r["score"])
            claims.append((case.case_id in fz, item))
        elif r["dimension"] == "relevant":
            passage_score[r["unit_id"]] = float(r["score"])
            passages.append((case.case_id in fz, item))

    case_by_unit = {r["unit_id"]: cases[r["case_id"]] for r in rows}
    return _KeyedRun(texts, case_by_unit, claim_score, passage_score, claims, passages)


def _correctness_report(run: _KeyedRun, n_boot: int, seed: int, criterion: str) -> PartReport:
    """The harness's correctness beside ROUGE-1 precision against the reference answer, on every keyed claim."""
    from ..harness import score as S

    def harness_correctness(uid: str, _: Sequence[str]) -> float:
        return run.claim_score[uid]

    def rouge_p(uid: str, _: Sequence[str]) -> float:
        return rouge1_precision(run.texts[uid], [run.case_by_unit[uid].reference_answer])

    t, f = run.split(run.claims)
    return evaluate_frozen("golden key: correctness of claims", t, f,
                           [("correctness", harness_correctness), ("ROUGE-1 precision", rouge_p)],
                           grid=S.SUPPORT_FLOOR_GRID, default=0.70, criterion=criterion, n_boot=n_boot,
                           seed=seed)


def _relevance_report(run: _KeyedRun, n_boot: int, seed: int, criterion: str) -> PartReport:
    """Query-only relevance beside reference-aware relevance and ROUGE-1 recall of the reference, on the
    keyed passages of cases with a reference answer (not must-abstain)."""
    from ..harness import score as S

    def query_only(uid: str, _: Sequence[str]) -> float:
        return run.passage_score[uid]

    def ref_aware(uid: str, _: Sequence[str]) -> float:
        c = run.case_by_unit[uid]
        return reference_relevance(c.query, c.reference_answer, run.texts[uid])

    def ref_recall(uid: str, _: Sequence[str]) -> float:
        return rouge1_recall(run.case_by_unit[uid].reference_answer, run.texts[uid])

    t, f = run.split(run.passages, abstain=False)
    return evaluate_frozen("golden key: relevance of passages (cases with a reference answer)", t, f,
                           [("query only", query_only), ("reference-aware", ref_aware),
                            ("ROUGE-1 recall of the reference", ref_recall)],
                           grid=S.SUPPORT_FLOOR_GRID, default=S.DEFAULT_RELEVANCE_THRESHOLD,
                           criterion=criterion, n_boot=n_boot, seed=seed)


def golden_key_reports(run_dir: str | Path, root: str | Path | None = None, *, n_boot: int = 2000,
                       seed: int = 0, criterion: str = "balanced_accuracy") -> tuple[PartReport, PartReport]:
    """``(correctness, relevance)`` reports of a harness run folder on the frozen golden cases."""
    run = _keyed_run(run_dir, root)
    return _correctness_report(run, n_boot, seed, criterion), _relevance_report(run, n_boot, seed, criterion)
