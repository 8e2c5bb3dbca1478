"""Tests of playground.stats: hand-computed expectations, edge cases, properties.

Throughout z = 1.959964 (95%), z^2 = 3.841459.
"""
from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from playground.stats import (
    balanced_accuracy,
    cohens_kappa,
    cohens_kappa_table,
    confusion_matrix,
    f1_score,
    fleiss_kappa,
    krippendorff_alpha,
    matthews_corrcoef,
    pabak,
    percent_agreement,
    wilson_interval,
    z_value,
)

approx = pytest.approx
ROOT = Path(__file__).resolve().parents[1]


# --------------------------------------------------------------------------- z, Wilson


def test_z_value():
    assert z_value(0.95) == approx(1.959964, abs=1e-6)
    assert z_value(0.90) == approx(1.644854, abs=1e-6)


def test_wilson_3_of_10():
    # p = .3, z^2/2n = .192073, 1 + z^2/n = 1.384146
    # centre = .492073 / 1.384146 = .355507
    # half = 1.959964/1.384146 * sqrt(.3*.7/10 + z^2/400) = 1.416008 * .174939 = .247716
    assert wilson_interval(3, 10) == approx((0.107791, 0.603222), abs=1e-5)


def test_wilson_0_of_n_and_n_of_n():
    # 0/10: centre = .192073/1.384146 = .138767 = half -> (0, .277533), lower bound exactly 0
    low, high = wilson_interval(0, 10)
    assert low == 0.0 and high == approx(0.277533, abs=1e-5)
    # 10/10: mirror image -> (1 - .277533, 1) = (.722467, 1), upper bound exactly 1
    low, high = wilson_interval(10, 10)
    assert high == 1.0 and low == approx(0.722467, abs=1e-5)
    # 0/1: centre = 1.920730/4.841459 = .396724 = half -> (0, .793450)
    assert wilson_interval(0, 1) == approx((0.0, 0.793450), abs=1e-5)
    assert wilson_interval(1, 1) == approx((0.206550, 1.0), abs=1e-5)


def test_wilson_other_confidence():
    # 90%: z = 1.644854, z^2 = 2.705543; 3/10: denom = 1.270554,
    # centre = (.3 + .135277)/1.270554 = .342589
    # half = 1.644854/1.270554 * sqrt(.021 + .006764) = 1.294596 * .166625 = .215714
    assert wilson_interval(3, 10, confidence=0.90) == approx((0.126875, 0.558303), abs=1e-5)


WILSON_GRID = [(x, n) for n in (1, 2, 3, 5, 10, 17, 50, 100, 1000, 50_000)
               for x in sorted({0, 1, n // 3, n // 2, n - 1, n} & set(range(n + 1)))]


@pytest.mark.parametrize("confidence", [0.5, 0.8, 0.9, 0.95, 0.99, 0.999])
def test_wilson_closed_form_equals_statsmodels(confidence):
    # statsmodels is the reference; the closed form replaces it on the page (it costs a kernel ~166 MiB)
    from statsmodels.stats.proportion import proportion_confint

    for x, n in WILSON_GRID:
        low, high = proportion_confint(x, n, alpha=1 - confidence, method="wilson")
        ours = wilson_interval(x, n, confidence)
        assert ours == approx((min(1.0, max(0.0, low)), min(1.0, max(0.0, high))), abs=1e-12, rel=0), (x, n)
    assert wilson_interval(0, 7, confidence)[0] == 0.0 and wilson_interval(7, 7, confidence)[1] == 1.0


def test_wilson_no_data_is_none():
    assert wilson_interval(0, 0) is None


@pytest.mark.parametrize("s,n", [(11, 10), (-1, 5), (1, -1), (1, 0)])
def test_wilson_rejects_impossible_counts(s, n):
    with pytest.raises(ValueError, match=rf"successes={s}, n={n}"):
        wilson_interval(s, n)


@pytest.mark.parametrize("s,n", [(3.0, 10), (3, 10.0), ("3", 10), (True, 1), (None, 1)])
def test_wilson_rejects_non_integers(s, n):
    with pytest.raises(ValueError, match="integers"):
        wilson_interval(s, n)


@pytest.mark.parametrize("c", [0, 1, 1.5, -0.1, float("nan")])
def test_wilson_rejects_bad_confidence(c):
    with pytest.raises(ValueError, match="confidence"):
        wilson_interval(3, 10, confidence=c)


def test_wilson_accepts_numpy_integers():
    assert wilson_interval(np.int64(3), np.int32(10)) == approx((0.107791, 0.603222), abs=1e-5)


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 5000).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))))
def test_wilson_contains_estimate(sn):
    s, n = sn
    ci = wilson_interval(s, n)
    if n == 0:
        assert ci is None
        return
    low, high = ci
    assert 0.0 <= low <= s / n <= high <= 1.0


# --------------------------------------------------------------------------- Cohen's kappa


def _from_table(n00, n01, n10, n11):
    a = [0] * (n00 + n01) + [1] * (n10 + n11)
    b = [0] * n00 + [1] * n01 + [0] * n10 + [1] * n11
    return a, b


def test_cohens_kappa_hand_computed():
    # table ((20, 5), (10, 15)), n = 50
    # p_o = 35/50 = .70; margins a: 25/25, b: 30/20; p_e = (25*30 + 25*20)/2500 = .50
    # kappa = (.70 - .50)/(1 - .50) = .40
    # ASE^2 = [sum p_ii (1-(p_i.+p_.i)(1-k))^2 + (1-k)^2 sum_{i!=j} p_ij (p_.i+p_j.)^2
    #          - (k - p_e(1-k))^2] / (n (1-p_e)^2)
    #       = [.4*.34^2 + .3*.46^2 + .36*(.1*1.21 + .2*.81) - .1^2] / 12.5
    #       = (.10972 + .10188 - .01)/12.5 = .016128; ASE = .126996
    # CI = .40 -+ 1.959964 * .126996 = (.151093, .648907)
    a, b = _from_table(20, 5, 10, 15)
    k = cohens_kappa(a, b)
    assert k.defined and k.reason == ""
    assert k.kappa == approx(0.40)
    assert k.std_error == approx(math.sqrt(0.016128))
    assert (k.low, k.high) == approx((0.151093, 0.648907), abs=1e-5)
    assert k.agreement == approx(0.70)
    assert k.expected == approx(0.50)
    assert k.base_rate == approx(0.50)  # a is 25/25
    assert k.n == 50
    assert k.confusion == ((20, 5), (10, 15))


def test_cohens_kappa_matches_statsmodels_interval():
    from statsmodels.stats.inter_rater import cohens_kappa as sm

    a, b = _from_table(7, 3, 2, 11)
    res = sm(np.array([[7, 3], [2, 11]]))
    k = cohens_kappa(a, b)
    assert (k.kappa, k.low, k.high) == approx((res.kappa, res.kappa_low, res.kappa_upp))


@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")  # statsmodels' z of a 0 ASE
@pytest.mark.parametrize("confidence", [0.8, 0.95, 0.99])
def test_cohens_kappa_closed_form_variance_equals_statsmodels(confidence):
    from statsmodels.stats.inter_rater import cohens_kappa as sm

    tables = [(7, 3, 2, 11), (20, 5, 10, 15), (1, 0, 0, 1), (0, 1, 1, 0), (3, 1, 0, 0), (50, 1, 2, 0),
              (0, 4, 5, 9), (400, 37, 21, 1002), (1, 2, 3, 4)]
    z = z_value(confidence)
    for t in tables:
        n00, n01, n10, n11 = t
        res = sm(np.array([[n00, n01], [n10, n11]], dtype=float))
        k = cohens_kappa_table(((n00, n01), (n10, n11)), confidence)
        assert k.kappa == approx(res.kappa, abs=1e-12), t
        assert k.std_error == approx(res.std_kappa if res.var_kappa > 1e-12 else 0.0, abs=1e-12), t
        if k.low is not None:
            assert (k.low, k.high) == approx((max(-1.0, res.kappa - z * res.std_kappa),
                                              min(1.0, res.kappa + z * res.std_kappa)), abs=1e-12), t


def test_cohens_kappa_base_rate_is_reference_majority():
    # a has 8 ones of 10 -> always predicting 1 is right 80% of the time
    a = [1] * 8 + [0] * 2
    b = [1] * 5 + [0] * 5
    assert cohens_kappa(a, b).base_rate == approx(0.8)
    assert cohens_kappa(b, a).base_rate == approx(0.5)


def test_cohens_kappa_no_units():
    k = cohens_kappa([], [])
    assert not k.defined and k.reason == "no units"
    assert k.kappa is None and k.low is None and k.high is None
    assert k.agreement is None and k.base_rate is None and k.n == 0


def test_cohens_kappa_one_class_both():
    k = cohens_kappa([1, 1, 1], [1, 1, 1])
    assert not k.defined and k.reason == "both labellings use one class only"
    assert k.kappa is None and k.low is None
    assert k.agreement == 1.0  # still reported


def test_cohens_kappa_single_unit():
    k = cohens_kappa([0], [0])
    assert not k.defined and k.kappa is None
    # a single disagreeing unit: p_o = 0, p_e = 0 -> kappa = 0, ASE = 0, no interval
    k = cohens_kappa([0], [1])
    assert k.defined and k.kappa == 0.0 and k.low is None and k.high is None
    assert "one class" in k.note


def test_cohens_kappa_one_labelling_constant():
    # a = 0,0,0; b = 0,1,1: p_o = 1/3, p_e = (3*1 + 0)/9 = 1/3 -> kappa = 0 by construction
    k = cohens_kappa([0, 0, 0], [0, 1, 1])
    assert k.defined and k.kappa == 0.0
    assert k.low is None and k.high is None and k.note


def test_cohens_kappa_perfect_agreement():
    k = cohens_kappa([0, 1, 0, 1], [0, 1, 0, 1])
    assert k.defined and k.kappa == 1.0 and k.low is None and "perfect" in k.note


def test_cohens_kappa_validates():
    with pytest.raises(ValueError, match="same length"):
        cohens_kappa([0, 1], [0])
    with pytest.raises(ValueError, match=r"b\[1\] = 2"):
        cohens_kappa([0, 1], [0, 2])


def test_cohens_kappa_never_nan():
    for table in [(0, 0, 0, 5), (5, 0, 0, 0), (0, 5, 0, 0), (0, 0, 5, 0), (3, 2, 0, 0),
                  (0, 0, 2, 3), (1, 0, 0, 0)]:
        k = cohens_kappa(*_from_table(*table))
        for v in (k.kappa, k.low, k.high, k.agreement, k.base_rate, k.std_error):
            assert v is None or math.isfinite(v)


binary_pairs = st.integers(0, 40).flatmap(
    lambda n: st.tuples(st.lists(st.integers(0, 1), min_size=n, max_size=n),
                        st.lists(st.integers(0, 1), min_size=n, max_size=n)))


@settings(max_examples=200, deadline=None)
@given(binary_pairs)
def test_cohens_kappa_symmetric_and_bounded(ab):
    a, b = ab
    k1, k2 = cohens_kappa(a, b), cohens_kappa(b, a)
    assert k1.defined == k2.defined
    if k1.defined:
        assert k1.kappa == approx(k2.kappa, abs=1e-12)
        assert -1.0 <= k1.kappa <= 1.0
        if k1.low is not None:
            assert k1.low == approx(k2.low, abs=1e-9) and k1.high == approx(k2.high, abs=1e-9)
            assert -1.0 <= k1.low <= k1.kappa <= k1.high <= 1.0
    assert k1.agreement == k2.agreement


# --------------------------------------------------------------------------- other two-rater


def test_two_rater_companions_hand_computed():
    # same table ((20, 5), (10, 15)): TN = 20, FP = 5, FN = 10, TP = 15
    a, b = _from_table(20, 5, 10, 15)
    assert confusion_matrix(a, b) == ((20, 5), (10, 15))
    assert percent_agreement(a, b) == approx(0.70)
    assert pabak(a, b) == approx(0.40)  # 2 * .70 - 1
    # MCC = (15*20 - 5*10) / sqrt(20 * 25 * 25 * 30) = 250 / 612.3724 = .408248
    assert matthews_corrcoef(a, b) == approx(0.408248, abs=1e-6)
    # F1 = 2*15 / (30 + 5 + 10) = .666667; for class 0: 2*20/(40 + 10 + 5) = .727273
    assert f1_score(a, b) == approx(2 / 3)
    assert f1_score(a, b, positive=0) == approx(40 / 55)
    # balanced accuracy = (20/25 + 15/25) / 2 = .70
    assert balanced_accuracy(a, b) == approx(0.70)


def test_two_rater_companions_degenerate():
    assert pabak([], []) is None and percent_agreement([], []) is None
    assert matthews_corrcoef([1, 1], [1, 0]) is None  # reference constant
    assert matthews_corrcoef([], []) is None
    assert f1_score([0, 0], [0, 0]) is None  # no positive anywhere
    assert f1_score([1, 0], [0, 0]) == 0.0
    assert balanced_accuracy([], []) is None
    assert balanced_accuracy([1, 1, 1], [1, 0, 1]) == approx(2 / 3)  # one class: its recall
    with pytest.raises(ValueError):
        f1_score([1], [1], positive=2)


# --------------------------------------------------------------------------- Fleiss, Krippendorff


def test_fleiss_kappa_hand_computed():
    # 4 units x 3 raters, (zeros, ones) = (3,0), (0,3), (2,1), (1,2)
    # P_i = 1, 1, (4+1-3)/6 = 1/3, 1/3 -> P = (2 + 2/3)/4 = .666667
    # p_1 = 6/12 = .5 -> P_e = .25 + .25 = .5 -> kappa = (.666667 - .5)/.5 = .333333
    r = fleiss_kappa([[0, 0, 0], [1, 1, 1], [0, 0, 1], [0, 1, 1]])
    assert r.defined and r.value == approx(1 / 3)
    assert r.n_units == 4 and r.n_ratings == 12 and r.note == ""


def test_fleiss_kappa_varying_raters_is_fleiss_cuzick():
    # Fleiss & Cuzick (1979); the single-rating unit is skipped.
    # n_i = 2, 3, 2, 2; x_i = 2, 1, 2, 0: N = 4, n_bar = 9/4, p = 5/9, q = 4/9
    # sum x(n - x)/n = 0 + 2/3 + 0 + 0 = 2/3
    # kappa = 1 - (2/3) / (4 * (9/4 - 1) * 20/81) = 1 - (2/3) / (100/81) = 1 - .54 = .46
    r = fleiss_kappa([[1, 1], [0, 1, 0], [1, 1], [0, 0], [1]])
    assert r.defined and r.value == approx(0.46, abs=1e-12)
    assert r.n_units == 4 and r.n_ratings == 9 and "Fleiss-Cuzick" in r.note


def test_fleiss_cuzick_second_hand_computed_table():
    # n_i = 3, 2, 4; x_i = 3, 1, 2 -> N = 3, n_bar = 3, p = 6/9 = 2/3, pq = 2/9
    # sum x(n - x)/n = 0 + 1/2 + 1 = 3/2; kappa = 1 - 1.5 / (3 * 2 * 2/9) = 1 - 1.5/1.333333 = -.125
    r = fleiss_kappa([[1, 1, 1], [1, 0], [1, 1, 0, 0]])
    assert r.value == approx(-0.125, abs=1e-12)


def test_fleiss_cuzick_formula_equals_statsmodels_when_counts_are_equal():
    from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss

    from playground.sampling import uniform

    ratings = [[int(uniform(3, f"{i}/{j}") < 0.4) for j in range(4)] for i in range(30)]
    table = [(4 - sum(r), sum(r)) for r in ratings]
    # the Fleiss-Cuzick expression evaluated by hand on this equal-count table ...
    n, p = 30, sum(y for _, y in table) / 120
    fc = 1 - sum(x * y / 4 for x, y in table) / (n * 3 * p * (1 - p))
    # ... equals statsmodels' Fleiss (1971), the reference
    assert fleiss_kappa(ratings).value == approx(fc, abs=1e-12)
    assert fc == approx(float(sm_fleiss(np.array(table, dtype=float))), abs=1e-12)
    assert fleiss_kappa(ratings).note == ""


def test_fleiss_kappa_degenerate():
    r = fleiss_kappa([])
    assert not r.defined and r.value is None and r.reason == "no unit has two or more labels"
    r = fleiss_kappa([[1], [0]])
    assert not r.defined and r.n_units == 0
    r = fleiss_kappa([[1, 1], [1, 1, 1]])
    assert not r.defined and r.reason == "every label is the same class" and r.n_units == 2
    r = fleiss_kappa([[0, 1]])  # a single unit with a disagreement: P = 0, P_e = .5 -> -1
    assert r.defined and r.value == approx(-1.0)


def test_krippendorff_alpha_hand_computed():
    # 2 coders, 4 units: (1,1), (0,0), (1,1), (1,0); n = 8 pairable values
    # o_00 = 2, o_11 = 4, o_01 = o_10 = 1; n_0 = 3, n_1 = 5
    # alpha = 1 - (n-1) o_01 / (n_0 n_1) = 1 - 7/15 = .533333
    r = krippendorff_alpha([[1, 0, 1, 1], [1, 0, 1, 0]])
    assert r.defined and r.value == approx(8 / 15)
    assert r.n_units == 4 and r.n_ratings == 8


def test_krippendorff_alpha_missing():
    # units: (1,1,-), (0,1,0), (1,1,-), (-,0,0), (-,-,1) [unpairable, ignored]
    # pairable values n = 9; unit 2 (m = 3) gives o_01 = 2*1/(3-1) = 1; n_0 = 4, n_1 = 5
    # alpha = 1 - 8 * 1 / 20 = .6
    r = krippendorff_alpha([[1, 0, 1, None, None],
                            [1, 1, 1, 0, None],
                            [None, 0, None, 0, 1]])
    assert r.defined and r.value == approx(0.6)
    assert r.n_units == 4 and r.n_ratings == 9


def test_krippendorff_alpha_degenerate():
    r = krippendorff_alpha([[1, None], [None, 0]])
    assert not r.defined and r.reason == "no unit has two or more labels"
    r = krippendorff_alpha([[1, 1, 0], [1, 1, None]])  # pairable values all 1
    assert not r.defined and "same class" in r.reason and r.value is None
    r = krippendorff_alpha([])
    assert not r.defined
    r = krippendorff_alpha([[], []])
    assert not r.defined and r.n_units == 0
    with pytest.raises(ValueError):
        krippendorff_alpha([[1, 0], [1]])
    with pytest.raises(ValueError):
        krippendorff_alpha([[1, 2], [1, 1]])


# --------------------------------------------------------------------------- one kappa, one balanced accuracy


def test_kappa_from_counts_hand_computed_and_undefined():
    from playground.stats import kappa_by_table, kappa_from_counts

    # tp 15, fp 5, fn 10, tn 20 (n 50): p_o = .70, p_e = (20*25 + 30*25)/2500 = .50, kappa = .40
    assert kappa_from_counts(15, 5, 10, 20) == approx(0.4, abs=1e-12)
    assert kappa_from_counts(0, 0, 0, 0) is None
    assert kappa_from_counts(7, 0, 0, 0) is None  # both labellings one class: p_e = 1
    assert kappa_from_counts(0, 3, 0, 4) == 0.0   # one labelling constant: kappa 0 by construction
    arr = kappa_by_table(np.array([15, 7]), np.array([5, 0]), np.array([10, 0]), np.array([20, 0]))
    assert arr[0] == approx(0.4, abs=1e-12) and math.isnan(arr[1])


def test_balanced_accuracy_from_counts_hand_computed():
    from playground.stats import balanced_accuracy_from_counts

    # recall of positives 15/25 = .6, of negatives 20/25 = .8 -> .7
    assert balanced_accuracy_from_counts(15, 5, 10, 20) == approx(0.7, abs=1e-12)
    assert balanced_accuracy_from_counts(3, 0, 1, 0) == 0.75  # one reference class: its recall
    assert balanced_accuracy_from_counts(0, 0, 0, 0) is None


def test_every_kappa_in_the_project_is_the_one_formula():
    """cohens_kappa, the sweep rows and the cross-validation all give kappa_from_counts."""
    from playground.stats import kappa_from_counts
    from playground.sweep import metrics_at

    human = [1] * 25 + [0] * 25
    scores = [0.9] * 15 + [0.1] * 10 + [0.9] * 5 + [0.1] * 20
    row = metrics_at(scores, [bool(h) for h in human], 0.5)
    pred = [int(x >= 0.5) for x in scores]
    assert row.kappa == kappa_from_counts(15, 5, 10, 20) == cohens_kappa(human, pred).kappa
    assert row.balanced_accuracy == balanced_accuracy(human, pred)


# --------------------------------------------------------------------------- paired difference


def _pairs(e, f, g, h):
    return [1] * e + [1] * f + [0] * g + [0] * h, [1] * e + [0] * f + [1] * g + [0] * h


@pytest.mark.parametrize("table,expected", [
    # Newcombe (1998), Statistics in Medicine 17:2635, Table II, method 10
    ((36, 12, 2, 0), (0.2, 0.0569, 0.3404)),
    ((18, 12, 2, 18), (0.2, 0.0562, 0.3290)),
    ((53, 0, 0, 1), (0.0, -0.0729, 0.0729)),
    ((0, 30, 0, 0), (1.0, 0.8395, 1.0)),
])
def test_paired_difference_newcombe_worked_examples(table, expected):
    from playground.stats import paired_difference

    r = paired_difference(*_pairs(*table))
    assert (round(r.difference, 4), round(r.low, 4), round(r.high, 4)) == expected
    assert (r.a_only, r.b_only) == (table[1], table[2])


def test_paired_difference_hand_computed_36_12_2_0():
    from playground.stats import paired_difference

    # p_a = 48/50 = .96, Wilson (.865408, .988958); p_b = 38/50 = .76, Wilson (.626037, .857006)
    # e h - f g = -24 < 0 -> phi = -24 / sqrt(48 * 2 * 38 * 12) = -24 / 209.3442 = -.114644
    # low = .2 - sqrt(.094592^2 + 2 * .114644 * .094592 * .097006 + .097006^2) = .2 - .143071 = .056929
    r = paired_difference(*_pairs(36, 12, 2, 0))
    assert r.low == approx(0.056930, abs=1e-5) and r.excludes_zero
    assert (r.rate_a, r.rate_b, r.n) == (0.96, 0.76, 50)


def test_paired_difference_degenerate_and_symmetric():
    from playground.stats import paired_difference

    r = paired_difference([], [])
    assert not r.defined and r.low is None and r.reason == "no units"
    a, b = _pairs(10, 4, 7, 9)
    ab, ba = paired_difference(a, b), paired_difference(b, a)
    assert (ab.difference, ab.low, ab.high) == approx((-ba.difference, -ba.high, -ba.low), abs=1e-12)
    same = paired_difference(a, a)
    assert same.difference == 0.0 and same.low < 0 < same.high and not same.excludes_zero
    with pytest.raises(ValueError, match="same length"):
        paired_difference([1], [1, 0])


# --------------------------------------------------------------------------- imports


def test_no_heavy_or_ui_imports():
    code = ("import sys, playground.stats, playground.metrics; "
            "bad = [m for m in ('statsmodels.api', 'ipywidgets', 'IPython', 'matplotlib') "
            "if m in sys.modules]; print(bad)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                         env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}, check=True)
    assert out.stdout.strip() == "[]"
