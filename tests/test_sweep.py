"""Threshold sweeps and grouped cross-validation (playground.sweep)."""
from __future__ import annotations

import numpy as np
import pytest

from playground.sweep import (
    DEFAULT_GRID,
    assign_folds,
    best_row,
    best_threshold,
    grouped_cv,
    kappa_interval,
    metrics_at,
    sweep,
)


def test_default_grid_is_0_to_1_step_001():
    assert len(DEFAULT_GRID) == 101
    assert DEFAULT_GRID[0] == 0.0 and DEFAULT_GRID[-1] == 1.0
    assert DEFAULT_GRID[70] == 0.70


def test_row_counts_and_metrics_by_hand():
    # predicted positive at t=0.5: scores 0.6, 0.7, 0.9, 0.55
    scores = [0.1, 0.6, 0.7, 0.2, 0.9, 0.55, 0.3, 0.05]
    human = [False, True, True, True, True, False, False, False]
    r = metrics_at(scores, human, 0.5)
    assert (r.tp, r.fp, r.fn, r.tn) == (3, 1, 1, 3)
    assert r.n == 8
    assert r.agreement == pytest.approx(6 / 8)
    assert r.predicted_positive_rate == pytest.approx(4 / 8)
    # p_o = .75, p_e = (4*4 + 4*4)/64 = .5 -> kappa = .5
    assert r.kappa == pytest.approx(0.5)
    assert r.precision == pytest.approx(3 / 4) and r.recall == pytest.approx(3 / 4)
    assert r.f1 == pytest.approx(0.75)
    assert r.balanced_accuracy == pytest.approx(0.75)
    # the negative class: tn=3, "fp" for negatives = fn = 1, "fn" = fp = 1
    neg = metrics_at(scores, human, 0.5, f1_class=False)
    assert neg.f1 == pytest.approx(0.75) and neg.f1_class is False
    assert neg.kappa == r.kappa and neg.balanced_accuracy == r.balanced_accuracy


def test_kappa_matches_the_textbook_table():
    # table rows human, columns predicted: ((20, 5), (10, 15)) -> kappa 0.40
    human = [False] * 25 + [True] * 25
    scores = [0.0] * 20 + [1.0] * 5 + [0.0] * 10 + [1.0] * 15
    r = metrics_at(scores, human, 0.5)
    assert r.kappa == pytest.approx(0.40)
    k, low, high = kappa_interval(human, [s >= 0.5 for s in scores])
    assert k == pytest.approx(0.40)
    assert low == pytest.approx(0.1511, abs=1e-3) and high == pytest.approx(0.6489, abs=1e-3)


def test_kappa_undefined_when_both_labellings_are_one_class():
    r = metrics_at([0.9, 0.8], [True, True], 0.5)
    assert r.kappa is None
    assert r.agreement == 1.0


def test_best_threshold_known_exactly():
    scores = [0.1, 0.2, 0.3, 0.35, 0.62, 0.7, 0.8, 0.9]
    human = [False, False, False, False, True, True, True, True]
    # any t in (0.35, 0.62] separates perfectly; closest to the default 0.70 is 0.62
    assert best_threshold(scores, human) == pytest.approx(0.62)
    # closest to 0.5 is 0.50 itself
    assert best_threshold(scores, human, default=0.5) == pytest.approx(0.50)
    rows = sweep(scores, human)
    best = best_row(rows)
    assert best.kappa == pytest.approx(1.0)


def test_tie_break_lower_threshold_when_equally_close():
    scores = [0.1, 0.2, 0.8, 0.9]
    human = [False, False, True, True]
    # 0.45 and 0.55 both give kappa 1 and are 0.05 from 0.5: the lower wins
    assert best_threshold(scores, human, thresholds=[0.45, 0.55], default=0.5) == 0.45


def test_best_row_picks_max_kappa_not_default():
    scores = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6]
    human = [False, False, False, True, True, True]
    rows = sweep(scores, human, [0.2, 0.35, 0.7])
    assert best_row(rows, default=0.7).threshold == 0.35


def test_sweep_rejects_bad_input():
    with pytest.raises(ValueError):
        sweep([0.1, 0.2], [True])
    with pytest.raises(ValueError):
        sweep([0.1, float("nan")], [True, False])
    with pytest.raises(ValueError):
        sweep([0.1, 0.2], [2, 0])


def test_assign_folds_deterministic_balanced_and_exclusive():
    groups = [f"g{i % 11}" for i in range(200)]
    a = assign_folds(groups, folds=5, seed=3)
    b = assign_folds(groups, folds=5, seed=3)
    assert a == b
    assert set(a) == set(groups)
    assert set(a.values()) == set(range(5))
    sizes = np.bincount([a[g] for g in groups])
    assert sizes.max() - sizes.min() <= 19  # at most about one group apart
    # leave-one-group-out when folds >= groups
    c = assign_folds(["x", "y", "z"], folds=10)
    assert sorted(c.values()) == [0, 1, 2]
    with pytest.raises(ValueError):
        assign_folds(["x", "y"], folds=1)
    with pytest.raises(ValueError):
        assign_folds(["x", "x"], folds=2)


def _cv_data(seed=0):
    rng = np.random.default_rng(seed)
    groups, scores, human = [], [], []
    for g in range(12):
        for _ in range(int(rng.integers(5, 15))):
            h = bool(rng.random() < 0.6)
            s = float(np.clip(rng.normal(0.7 if h else 0.35, 0.15), 0, 1))
            groups.append(f"src{g}")
            scores.append(s)
            human.append(h)
    return scores, human, groups


def test_grouped_cv_never_puts_a_group_in_train_and_test():
    scores, human, groups = _cv_data()
    cv = grouped_cv(scores, human, groups, folds=4, n_boot=50)
    fold = np.array([cv.fold_of_group[g] for g in groups])
    for f in range(cv.folds):
        test_groups = {g for g, x in zip(groups, fold) if x == f}
        train_groups = {g for g, x in zip(groups, fold) if x != f}
        assert test_groups and not (test_groups & train_groups)
    assert sum(cv.fold_sizes) == len(scores)


def test_grouped_cv_out_of_fold_predictions_use_the_training_threshold():
    scores, human, groups = _cv_data(1)
    s = np.array(scores)
    h = np.array(human)
    cv = grouped_cv(scores, human, groups, folds=3, n_boot=0)
    fold = np.array([cv.fold_of_group[g] for g in groups])
    for f, t in enumerate(cv.fold_thresholds):
        train = fold != f
        assert t == best_row(sweep(s[train], h[train])).threshold
        assert np.array_equal(cv.predicted[fold == f], s[fold == f] >= t)
    assert cv.recommended == best_threshold(scores, human)
    assert cv.threshold_spread == (min(cv.fold_thresholds), max(cv.fold_thresholds))
    assert cv.in_sample.threshold == cv.recommended
    # pooled out-of-fold kappa is the kappa of the pooled predictions
    k, _, _ = kappa_interval(h, cv.predicted)
    assert cv.kappa == pytest.approx(k)


def test_grouped_cv_is_deterministic_and_reports_intervals():
    scores, human, groups = _cv_data(2)
    a = grouped_cv(scores, human, groups, folds=5, n_boot=200, seed=7)
    b = grouped_cv(scores, human, groups, folds=5, n_boot=200, seed=7)
    assert a.kappa == b.kappa and a.kappa_low == b.kappa_low and a.fold_thresholds == b.fold_thresholds
    assert a.kappa_low <= a.kappa <= a.kappa_high
    assert a.balanced_accuracy_low <= a.balanced_accuracy <= a.balanced_accuracy_high
    assert a.kappa_low_asymptotic <= a.kappa <= a.kappa_high_asymptotic
    assert "kappa" in a.summary()


def test_grouped_cv_separable_data_is_perfect():
    scores = [0.1, 0.2, 0.9, 0.8] * 5
    human = [False, False, True, True] * 5
    groups = [f"g{i // 4}" for i in range(20)]
    cv = grouped_cv(scores, human, groups, folds=5, n_boot=20)
    assert cv.kappa == pytest.approx(1.0)
    assert cv.balanced_accuracy == pytest.approx(1.0)


def test_best_row_by_balanced_accuracy():
    # 2 "no" and 8 "yes"; scores put both "no" low, but one "yes" (0.2) below them.
    scores = [0.1, 0.3, 0.2, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99]
    human = [False, False, True, True, True, True, True, True, True, True]
    rows = sweep(scores, human, [0.15, 0.25, 0.35])
    by = {r.threshold: r for r in rows}
    # at 0.35: tp 7, fn 1, tn 2, fp 0 → BA (7/8 + 2/2)/2 = 0.9375; at 0.25: tp 7, tn 1 → (7/8 + 1/2)/2 = 0.6875
    assert by[0.35].balanced_accuracy == pytest.approx(0.9375)
    assert best_row(rows, criterion="balanced_accuracy").threshold == 0.35
    with pytest.raises(ValueError, match="unknown criterion"):
        best_row(rows, criterion="accuracy")
    cv = grouped_cv(scores, human, list(range(10)), folds=2, n_boot=0, criterion="balanced_accuracy")
    assert cv.criterion == "balanced_accuracy"
