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
    # the reference: statsmodels' asymptotic interval on the same table (standard error 0.126996)
    from statsmodels.stats.inter_rater import cohens_kappa

    ref = cohens_kappa(np.array([[20, 5], [10, 15]]))
    assert (low, high) == pytest.approx((ref.kappa_low, ref.kappa_upp), abs=1e-12)
    assert (round(low, 4), round(high, 4)) == (0.1511, 0.6489)


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


def test_assign_folds_by_the_stable_hash_of_the_group():
    from playground.sampling import fold_of

    groups = [f"g{i % 11}" for i in range(200)]
    a = assign_folds(groups, folds=5, seed=3)
    assert a == assign_folds(list(reversed(groups)), folds=5, seed=3)
    assert set(a) == set(groups)
    # each group's fold is its own hash, renumbered over the folds that received a group
    raw = {g: fold_of(g, 5, 3) for g in set(groups)}
    used = sorted(set(raw.values()))
    assert a == {g: used.index(f) for g, f in raw.items()}
    # a group's fold does not depend on which other groups are present
    sub = assign_folds(["g1", "g2", "g3", "g4", "g5", "g6"], folds=5, seed=3)
    raw6 = {g: fold_of(g, 5, 3) for g in sub}
    assert all((raw6[x] == raw6[y]) == (sub[x] == sub[y]) for x in sub for y in sub)
    # leave-one-group-out when folds >= groups (sorted order)
    assert assign_folds(["z", "x", "y"], folds=10) == {"x": 0, "y": 1, "z": 2}
    assert assign_folds(["z", "x", "y"], folds=3) == {"x": 0, "y": 1, "z": 2}  # exactly k == groups
    with pytest.raises(ValueError):
        assign_folds(["x", "y"], folds=1)
    with pytest.raises(ValueError):
        assign_folds(["x", "x"], folds=2)


def test_assign_folds_falls_back_to_leave_one_out_when_every_group_hashes_together():
    from playground.sampling import fold_of

    # find three groups that hash into one of 2 folds under seed 0 (deterministic search)
    same = [g for g in (f"s{i}" for i in range(100)) if fold_of(g, 2, 0) == 0][:3]
    assert assign_folds(same, folds=2, seed=0) == {g: i for i, g in enumerate(sorted(same))}


def _cv_data(seed=0):
    """12 groups of 5..14 units; human yes with probability .6; score around .7 (yes) or .35 (no)."""
    from statistics import NormalDist

    from playground.sampling import uniform

    groups, scores, human = [], [], []
    for g in range(12):
        for i in range(5 + int(uniform(seed, f"size{g}") * 10)):
            h = uniform(seed, f"h{g}/{i}") < 0.6
            z = NormalDist().inv_cdf(min(max(uniform(seed, f"s{g}/{i}"), 1e-9), 1 - 1e-9))
            groups.append(f"src{g}")
            scores.append(float(np.clip((0.7 if h else 0.35) + 0.15 * z, 0, 1)))
            human.append(h)
    return scores, human, groups


def test_grouped_cv_never_puts_a_group_in_train_and_test():
    scores, human, groups = _cv_data()
    cv = grouped_cv(scores, human, groups, folds=4, n_boot=50)
    fold = np.array([cv.fold_of_group[g] for g in groups])
    for f in range(cv.folds):
        test_groups = {g for g, x in zip(groups, fold, strict=True) if x == f}
        train_groups = {g for g, x in zip(groups, fold, strict=True) if x != f}
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
    assert (a.kappa, a.kappa_low, a.kappa_high, a.fold_thresholds) == (b.kappa, b.kappa_low, b.kappa_high,
                                                                        b.fold_thresholds)
    assert a.kappa_low <= a.kappa <= a.kappa_high
    assert a.balanced_accuracy_low <= a.balanced_accuracy <= a.balanced_accuracy_high
    assert a.kappa_low_asymptotic <= a.kappa <= a.kappa_high_asymptotic
    assert a.n_boot_used == 200 and "kappa" in a.summary()


def _bootstrap_by_hand(scores, human, groups, cv, n_boot, seed, confidence=0.95):
    """The documented resampling written out plainly: draw groups by stable hash, rerun the whole CV."""
    from playground.sampling import stable_hash
    from playground.stats import balanced_accuracy_from_counts, kappa_from_counts

    uniq = sorted(set(groups))
    ks, bs = [], []
    for b in range(n_boot):
        picked = [uniq[stable_hash(seed, f"boot:{b}:{j}") % len(uniq)] for j in range(len(uniq))]
        s_ = np.array([x for g in picked for x, gg in zip(scores, groups, strict=True) if gg == g])
        h_ = np.array([x for g in picked for x, gg in zip(human, groups, strict=True) if gg == g])
        f_ = np.array([cv.fold_of_group[g] for g in picked for gg in groups if gg == g])
        if len(set(f_)) < 2:
            continue
        pred = np.zeros(s_.size, dtype=bool)
        for f in sorted(set(f_)):
            train = f_ != f
            t = best_row(sweep(s_[train], h_[train])).threshold  # the floor is chosen inside the resample
            pred[f_ == f] = s_[f_ == f] >= t
        table = (int((pred & h_).sum()), int((pred & ~h_).sum()), int((~pred & h_).sum()), int((~pred & ~h_).sum()))
        if kappa_from_counts(*table) is not None:
            ks.append(kappa_from_counts(*table))
        bs.append(balanced_accuracy_from_counts(*table))
    a = (1 - confidence) / 2
    return (float(np.quantile(ks, a)), float(np.quantile(ks, 1 - a)), len(ks),
            float(np.quantile(bs, a)), float(np.quantile(bs, 1 - a)))


def test_bootstrap_resamples_the_whole_selection_exactly_as_documented():
    scores, human, groups = _cv_data(4)
    cv = grouped_cv(scores, human, groups, folds=4, n_boot=40, seed=11)
    assert (cv.kappa_low, cv.kappa_high, cv.n_boot_used, cv.balanced_accuracy_low,
            cv.balanced_accuracy_high) == _bootstrap_by_hand(scores, human, groups, cv, 40, 11)


def test_bootstrap_interval_is_wider_than_holding_the_fold_floors_fixed():
    """Choosing the floor inside each resample adds the selection's own variability."""
    from playground.sampling import stable_hash
    from playground.stats import kappa_from_counts

    scores, human, groups = _cv_data(5)
    cv = grouped_cv(scores, human, groups, folds=4, n_boot=200, seed=3)
    uniq = sorted(set(groups))
    h, p = np.array(human), cv.predicted
    fixed = []
    for b in range(200):  # the old procedure: resample the pooled predictions, floors held fixed
        idx = [i for j in range(len(uniq)) for i, g in enumerate(groups)
               if g == uniq[stable_hash(3, f"boot:{b}:{j}") % len(uniq)]]
        k = kappa_from_counts(int((p[idx] & h[idx]).sum()), int((p[idx] & ~h[idx]).sum()),
                              int((~p[idx] & h[idx]).sum()), int((~p[idx] & ~h[idx]).sum()))
        fixed.append(k)
    assert cv.kappa_high - cv.kappa_low > float(np.quantile(fixed, 0.975) - np.quantile(fixed, 0.025))


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
