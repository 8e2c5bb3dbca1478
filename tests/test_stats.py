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
    confusion_matrix,
    f1_score,
    fleiss_kappa,
    krippendorff_alpha,
    matthews_corrcoef,
    pabak,
    percent_agreement,
    ppi_labels_needed,
    ppi_mean,
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


def test_fleiss_kappa_varying_raters_and_skips():
    # units (zeros, ones): (0,2), (2,1), (0,2), (2,0); the single-rating unit is skipped
    # P_i = 1, (4+1-3)/6 = 1/3, 1, 1 -> P = .833333
    # p_1 = 5/9 -> P_e = 25/81 + 16/81 = .506173 -> kappa = .327160/.493827 = .6625
    r = fleiss_kappa([[1, 1], [0, 1, 0], [1, 1], [0, 0], [1]])
    assert r.defined and r.value == approx(0.6625)
    assert r.n_units == 4 and r.n_ratings == 9 and "different numbers" in r.note


def test_fleiss_generalised_equals_statsmodels_when_constant():
    from playground.stats import fleiss_kappa as fk

    rng = np.random.default_rng(3)
    ratings = rng.integers(0, 2, size=(30, 4)).tolist()
    equal = fk(ratings).value
    # the generalised formula (used for a varying number of raters) evaluated by hand
    # on this constant-raters table must agree with statsmodels' Fleiss
    table = [(4 - sum(r), sum(r)) for r in ratings]
    p_bar = np.mean([(x * x + y * y - 4) / 12 for x, y in table])
    p1 = sum(y for _, y in table) / 120
    p_e = p1 ** 2 + (1 - p1) ** 2
    assert equal == approx((p_bar - p_e) / (1 - p_e))


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


# --------------------------------------------------------------------------- PPI

# f(X_unlab): [1,1,0,1] x 10 -> N = 40, mean .75, var (ddof 1) = 40*.1875/39 = .192308
# labelled n = 8: f = [1,1,0,1,1,1,0,1], Y = [1,0,0,1,1,1,0,1]
# Y - f = [0,-1,0,0,0,0,0,0]: mean -.125, var (ddof 1) = (7*.125^2 + .875^2)/7 = .125
PPI_U = [1, 1, 0, 1] * 10
PPI_F = [1, 1, 0, 1, 1, 1, 0, 1]
PPI_Y = [1, 0, 0, 1, 1, 1, 0, 1]


def test_ppi_mean_hand_computed():
    # theta = .75 - .125 = .625
    # var = .192308/40 + .125/8 = .0048077 + .015625 = .0204327; se = .142943
    # interval = .625 -+ 1.959964 * .142943 = .625 -+ .280163 = (.344837, .905163)
    r = ppi_mean(PPI_U, PPI_F, PPI_Y)
    assert r.defined
    assert r.estimate == approx(0.625)
    assert r.rectifier == approx(-0.125)
    assert r.std_error == approx(math.sqrt(0.192308 / 40 + 0.125 / 8), abs=1e-6)
    assert (r.low, r.high) == approx((0.344837, 0.905163), abs=1e-5)
    assert r.n_labelled == 8 and r.n_unlabelled == 40
    # auto only: (30 + 6) / 48 = .75 (biased up); human only 5/8 Wilson:
    # centre = (.625 + .240091)/1.480182 = .584448, half = 1.324137 * .210483 = .278709
    assert r.auto_only == approx(0.75)
    assert r.human_mean == approx(0.625)
    assert r.human_only == approx((0.305739, 0.863157), abs=1e-5)
    # with only 8 human labels PPI (.5603 wide) is no narrower than Wilson (.5574): the
    # normal interval is not short at small n; the simulation below shows the narrowing
    assert r.width == approx(2 * 0.280163, abs=1e-5)


def test_ppi_mean_degenerate():
    r = ppi_mean([1, 0, 1], [], [])
    assert not r.defined and r.estimate is None and "no human labels" in r.reason
    assert r.human_only is None and r.auto_only == approx(2 / 3)
    r = ppi_mean([], [1, 0], [1, 1])
    assert not r.defined and r.estimate is None and "human_only" in r.reason
    r = ppi_mean([1, 0, 1], [1], [1])  # one labelled unit: estimate, no interval
    assert r.defined and r.estimate == approx(2 / 3) and r.low is None and "at least 2" in r.reason
    r = ppi_mean([1, 1, 1, 1], [1, 1], [1, 1])  # perfect agreement: zero variance -> note
    assert r.estimate == 1.0 and r.low == 1.0 and r.high == 1.0 and "too narrow" in r.note
    with pytest.raises(ValueError, match="same length"):
        ppi_mean([1], [1, 0], [1])
    with pytest.raises(ValueError):
        ppi_mean([1.5], [1], [1])


def test_ppi_mean_clips_to_unit_interval():
    # f_unlab mean .9, rectifier +.5 -> raw 1.4 -> estimate clipped to 1
    r = ppi_mean([1] * 9 + [0], [0, 0, 1, 1], [1, 1, 1, 1])
    assert r.estimate == 1.0 and 0.0 <= r.low <= r.estimate <= r.high == 1.0


def test_ppi_labels_needed_hand_computed():
    # width .4 -> h = .2: (h/z)^2 = .0104128; minus s_f^2/N = .0048077 -> .0056051
    # n >= .125 / .0056051 = 22.30 -> 23
    assert ppi_labels_needed(PPI_U, PPI_F, PPI_Y, width=0.4) == 23
    # width .2: (.1/z)^2 = .0026032 < .0048077 -> unreachable by human labels alone
    assert ppi_labels_needed(PPI_U, PPI_F, PPI_Y, width=0.2) is None
    # check: with n = 23 the half-width is <= .2, with n = 22 it is not
    half = lambda n: z_value() * math.sqrt(0.192308 / 40 + 0.125 / n)  # noqa: E731
    assert half(23) <= 0.2 < half(22)
    assert ppi_labels_needed(PPI_U, PPI_F[:1], PPI_Y[:1], width=0.4) is None
    with pytest.raises(ValueError):
        ppi_labels_needed(PPI_U, PPI_F, PPI_Y, width=0)


def test_ppi_coverage_simulation():
    """The PPI interval covers the true rate in ~95% of seeded repeated draws."""
    rng = np.random.default_rng(20240601)
    true_rate, n_lab, n_unlab, draws = 0.7, 80, 2000, 400
    covered, ppi_width, human_width, auto_bias = 0, 0.0, 0.0, 0.0
    for _ in range(draws):
        y = (rng.random(n_lab + n_unlab) < true_rate).astype(int)
        # a biased scorer: misses 10% of positives, accepts 30% of negatives
        flip = np.where(y == 1, rng.random(y.size) < 0.10, rng.random(y.size) < 0.30)
        f = np.where(flip, 1 - y, y)
        r = ppi_mean(f[n_lab:].tolist(), f[:n_lab].tolist(), y[:n_lab].tolist())
        covered += r.low <= true_rate <= r.high
        ppi_width += r.width / draws
        human_width += r.human_only_width / draws
        auto_bias += (r.auto_only - true_rate) / draws
    assert 0.92 <= covered / draws <= 0.98
    assert ppi_width < human_width  # the automatic labels narrow the interval
    # E[f] = .7*.9 + .3*.3 = .72: trusting the scorer alone is biased by +.02
    assert auto_bias == approx(0.02, abs=0.005)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(0, 1), max_size=30),
       st.lists(st.tuples(st.integers(0, 1), st.integers(0, 1)), max_size=30))
def test_ppi_interval_contains_estimate(unlab, lab):
    r = ppi_mean(unlab, [f for f, _ in lab], [y for _, y in lab])
    if r.estimate is not None:
        assert 0.0 <= r.estimate <= 1.0
    if r.low is not None:
        assert 0.0 <= r.low <= r.estimate <= r.high <= 1.0


# --------------------------------------------------------------------------- imports


def test_no_heavy_or_ui_imports():
    code = ("import sys, playground.stats, playground.metrics; "
            "bad = [m for m in ('statsmodels.api', 'ipywidgets', 'IPython', 'matplotlib') "
            "if m in sys.modules]; print(bad)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                         env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}, check=True)
    assert out.stdout.strip() == "[]"
