"""Rules that choose a kind's shipped support floor for the precision goal, and their out-of-fold test.

The goal (issue 26): on RAGTruth, hallucination **precision >= 0.30 at recall >= 0.55** at the
shipped floor, on claims at the *natural* rate of hallucination.  The RAGTruth tuning part mixes
``claims.jsonl`` (enriched: 63 of 334 claims hallucinated) with the tuning claims of the
natural-rate ``validation-sample.jsonl``; precision depends on prevalence, so a floor chosen for
precision on the mixture aims at the wrong target.

A floor ``f`` flags the claims scoring below it.  On labelled claims it has a hallucination recall
``TPR(f)`` (flagged hallucinated / hallucinated) and a false-alarm rate ``FPR(f)`` (flagged supported
/ supported).  Its **precision at prevalence** ``p`` is::

    P_p(f) = p * TPR(f) / (p * TPR(f) + (1 - p) * FPR(f))       (0 when nothing is flagged)

-- the precision the same detector has on claims of which a share ``p`` is hallucinated (the
classes reweighted, each class's score distribution kept).  Every rule below considers only the
floors of the grid whose recall is at least ``min_recall`` (0.55) and takes the **highest** of them
whose precision is at least ``target`` (0.30: more recall for the same precision); when none
reaches ``target``, the one of highest precision (ties: the lower floor).  They differ in the
claims and the precision they read (:data:`RULES`):

* ``mixture``: every tuning claim, precision as observed (the rule the floors were shipped by);
* ``reweighted``: every tuning claim, precision at the prevalence of the natural-rate claims
  (their share of hallucinated claims, measured on the claims the rule is given);
* ``natural``: the natural-rate claims only, precision as observed (already at their prevalence).

:func:`rule_cv` tests a rule out of fold: each claim's source in fold
``sampling.fold_of(source, folds, seed)``, the floor chosen on the other folds, applied to the
claims of the fold, the held-out flags pooled.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["MIN_RECALL", "RULES", "TARGET_PRECISION", "FloorChoice", "RuleCV", "choose_by_rule",
           "precision_at", "rule_cv"]

#: The recall every rule requires on the claims it reads, and the precision it aims at (issue 26).
MIN_RECALL = 0.55
TARGET_PRECISION = 0.30
#: The rules (module docstring), in the order they are reported.
RULES: tuple[str, ...] = ("mixture", "reweighted", "natural")


def precision_at(tpr: float, fpr: float, prevalence: float) -> float:
    """``P_p`` of the module docstring: precision at prevalence ``prevalence``; 0.0 when nothing is flagged."""
    flagged = prevalence * tpr + (1.0 - prevalence) * fpr
    return 0.0 if flagged <= 0.0 else prevalence * tpr / flagged


@dataclass(frozen=True)
class FloorChoice:
    """The floor a rule chose, with the recall and precision it read there (None: no floor qualified)."""

    floor: float | None
    recall: float | None
    precision: float | None
    reason: str = ""


def _rates(scores: np.ndarray, hallucinated: np.ndarray, floor: float) -> tuple[float, float]:
    flagged = scores < floor
    return (float((flagged & hallucinated).sum() / hallucinated.sum()),
            float((flagged & ~hallucinated).sum() / (~hallucinated).sum()))


def choose_by_rule(rule: str, scores: Sequence[float] | np.ndarray, supported: Sequence[bool] | np.ndarray,
                   natural: Sequence[bool] | np.ndarray, grid: Sequence[float], *, min_recall: float = MIN_RECALL,
                   target: float = TARGET_PRECISION) -> FloorChoice:
    """The floor of ``grid`` that ``rule`` (:data:`RULES`) chooses on these claims (module docstring).

    ``natural``: which claims are at the natural rate.  Scores are rounded to 6 decimals first, as
    :func:`playground.harness.floor_choice.choose_floor` does.  A rule whose claims lack a class, or whose
    recall stays below ``min_recall`` at every floor, chooses no floor (``reason`` says why)."""
    if rule not in RULES:
        raise ValueError(f"unknown floor rule {rule!r} (known: {', '.join(RULES)})")
    s = np.round(np.asarray(scores, dtype=float), 6)
    h = ~np.asarray(supported, dtype=bool)
    nat = np.asarray(natural, dtype=bool)
    use = nat if rule == "natural" else np.ones(len(s), dtype=bool)
    if not (h & use).any() or not (~h & use).any():
        return FloorChoice(None, None, None, "the claims the rule reads lack a class")
    prevalence = None
    if rule == "reweighted":
        if not nat.any() or not (h & nat).any():
            return FloorChoice(None, None, None, "no hallucinated natural-rate claim: prevalence unknown")
        prevalence = float((h & nat).sum() / nat.sum())
    best: tuple[float, float, float] | None = None  # (precision, recall, floor) of the best below target
    chosen: tuple[float, float, float] | None = None
    for f in sorted(grid):
        tpr, fpr = _rates(s[use], h[use], f)
        if tpr < min_recall:
            continue
        if prevalence is None:
            flagged = int((s[use] < f).sum())
            prec = float((s[use] < f)[h[use]].sum() / flagged) if flagged else 0.0
        else:
            prec = precision_at(tpr, fpr, prevalence)
        if prec >= target:
            chosen = (prec, tpr, f)  # the highest qualifying floor wins: later floors are higher
        if best is None or prec > best[0]:
            best = (prec, tpr, f)
    pick = chosen or best
    if pick is None:
        return FloorChoice(None, None, None, f"recall below {min_recall:g} at every floor")
    return FloorChoice(pick[2], round(pick[1], 4), round(pick[0], 4))


@dataclass(frozen=True)
class RuleCV:
    """A rule's out-of-fold test: the floor of each fold and the pooled held-out flags."""

    rule: str
    fold_floors: tuple[float | None, ...]
    flagged: np.ndarray  # held-out flag of each claim (False where its fold chose no floor)
    judged: np.ndarray  # whether the claim's fold chose a floor


def rule_cv(rule: str, scores: Sequence[float] | np.ndarray, supported: Sequence[bool] | np.ndarray,
            natural: Sequence[bool] | np.ndarray, sources: Sequence[str], grid: Sequence[float], *,
            folds: int = 5, seed: int = 0) -> RuleCV:
    """``rule`` chosen on ``folds - 1`` folds of sources and applied to the last, for every fold."""
    from ..sampling import fold_of

    s = np.round(np.asarray(scores, dtype=float), 6)
    sup = np.asarray(supported, dtype=bool)
    nat = np.asarray(natural, dtype=bool)
    fold = np.array([fold_of(src, folds, seed) for src in sources], dtype=np.int64)
    flagged = np.zeros(len(s), dtype=bool)
    judged = np.zeros(len(s), dtype=bool)
    floors: list[float | None] = []
    for k in range(folds):
        train, test = fold != k, fold == k
        choice = choose_by_rule(rule, s[train], sup[train], nat[train], grid)
        floors.append(choice.floor)
        if choice.floor is not None:
            flagged[test] = s[test] < choice.floor
            judged[test] = True
    return RuleCV(rule, tuple(floors), flagged, judged)
