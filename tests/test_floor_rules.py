"""The rules that choose a kind's floor for the precision goal (playground.calibrate.floor_rules): hand-computed."""
from __future__ import annotations

import numpy as np
import pytest

from playground.calibrate.floor_rules import FloorChoice, choose_by_rule, precision_at, rule_cv
from playground.sampling import fold_of

GRID = (0.3, 0.5, 0.7)
# hallucinated 0.1 0.2 0.4 0.6; supported 0.2 0.45 0.6 0.8 (flagged: score < floor)
SCORES = [0.1, 0.2, 0.4, 0.6, 0.2, 0.45, 0.6, 0.8]
SUPPORTED = [False] * 4 + [True] * 4
# natural-rate claims: hallucinated 0.1; supported 0.2 0.45 0.8 -> prevalence 1/4
NATURAL = [True, False, False, False, True, True, False, True]


def test_precision_at_a_prevalence():
    assert precision_at(0.5, 0.25, 0.25) == 0.4  # 0.125 / (0.125 + 0.1875)
    assert precision_at(0.0, 0.0, 0.25) == 0.0  # nothing flagged


def test_mixture_takes_the_highest_floor_at_exactly_the_target_precision():
    # floor 0.3: recall 2/4, precision 2/3; 0.5: recall 3/4, precision 3/5; 0.7: recall 4/4, precision 4/7
    assert choose_by_rule("mixture", SCORES, SUPPORTED, NATURAL, GRID, min_recall=0.5, target=0.6) == \
        FloorChoice(0.5, 0.75, 0.6)
    assert choose_by_rule("mixture", SCORES, SUPPORTED, NATURAL, GRID, min_recall=0.5, target=0.61) == \
        FloorChoice(0.3, 0.5, 0.6667)  # none at 0.61 from 0.5 up: the most precise, at exactly the min recall


def test_a_claim_at_exactly_the_floor_is_not_flagged():
    at_floor = [0.1, 0.2, 0.4, 0.6, 0.2, 0.5, 0.6, 0.8]  # the supported 0.45 moved to exactly 0.5
    # floor 0.5 now flags hallucinated 3, supported 1: precision 3/4
    assert choose_by_rule("mixture", at_floor, SUPPORTED, NATURAL, GRID, min_recall=0.5, target=0.75) == \
        FloorChoice(0.5, 0.75, 0.75)


def test_recall_just_below_the_minimum_is_not_considered():
    assert choose_by_rule("mixture", SCORES, SUPPORTED, NATURAL, GRID, min_recall=0.51, target=0.61) == \
        FloorChoice(0.5, 0.75, 0.6)  # 0.3 (recall 0.5) is out
    assert choose_by_rule("mixture", SCORES, SUPPORTED, NATURAL, (0.3,), min_recall=0.51) == \
        FloorChoice(None, None, None, "recall below 0.51 at every floor")


def test_reweighted_reads_precision_at_the_natural_prevalence():
    # every claim's rates, prevalence 1/4 of the natural claims: 0.3 -> TPR 1/2, FPR 1/4, precision 0.4;
    # 0.5 -> 3/4, 1/2, 1/3; 0.7 -> 1, 3/4, 4/13
    assert choose_by_rule("reweighted", SCORES, SUPPORTED, NATURAL, GRID, min_recall=0.5, target=0.4) == \
        FloorChoice(0.3, 0.5, 0.4)
    assert choose_by_rule("reweighted", SCORES, SUPPORTED, NATURAL, GRID, min_recall=0.5, target=0.3) == \
        FloorChoice(0.7, 1.0, 0.3077)
    assert choose_by_rule("reweighted", SCORES, SUPPORTED, [False] * 8, GRID).reason == \
        "no hallucinated natural-rate claim: prevalence unknown"


def test_natural_reads_the_natural_claims_only():
    # hallucinated 0.1; supported 0.2 0.45 0.8: 0.3 -> recall 1, precision 1/2; 0.5 and 0.7 -> 1/3
    assert choose_by_rule("natural", SCORES, SUPPORTED, NATURAL, GRID, min_recall=0.55, target=0.3) == \
        FloorChoice(0.7, 1.0, 0.3333)
    assert choose_by_rule("natural", SCORES, SUPPORTED, NATURAL, GRID, min_recall=0.55, target=0.5) == \
        FloorChoice(0.3, 1.0, 0.5)
    with pytest.raises(ValueError, match="unknown floor rule 'best'"):
        choose_by_rule("best", SCORES, SUPPORTED, NATURAL, GRID)


def test_rule_cv_applies_each_folds_floor_chosen_without_it():
    sources = [f"s{i}" for i in range(8)]
    cv = rule_cv("mixture", SCORES, SUPPORTED, NATURAL, sources, GRID, folds=2, seed=0)
    fold = np.array([fold_of(s, 2, 0) for s in sources])
    s = np.array(SCORES)
    for k, floor in enumerate(cv.fold_floors):
        train = fold != k
        assert floor == choose_by_rule("mixture", s[train], np.array(SUPPORTED)[train], np.array(NATURAL)[train],
                                       GRID).floor
        if floor is not None:
            assert list(cv.flagged[fold == k]) == list(s[fold == k] < floor)
