"""The room's "how many labels, and when to stop" (issue 25.6): consensus on the sample, counts, the sentence."""
from __future__ import annotations

from playground.calibrate.room_needed import harness_labels, needed_rows, sample_consensus
from playground.store import UNSURE
from playground.ui.room_analysis import needed_html

VOTES = {
    ("u1", "supported"): {"a": 1, "b": 1, "c": 0},  # majority yes
    ("u2", "supported"): {"a": 0, "b": 0},  # no
    ("u3", "supported"): {"a": 1, "b": 0},  # a tie, settled below
    ("u4", "supported"): {"a": UNSURE},  # unsure only: left out
    ("u6", "supported"): {"a": 1, "b": 0, "c": UNSURE},  # a tie (unsure does not break it): left out
    ("u5", "supported"): {"a": 1},  # not in the sample
}


def test_consensus_on_the_sample_is_the_adjudication_else_the_yes_no_majority():
    got = sample_consensus(VOTES, {("u3", "supported"): 1}, ["u1", "u2", "u3", "u4", "u6"])
    assert got == {("u1", "supported"): 1, ("u2", "supported"): 0, ("u3", "supported"): 1}


def test_harness_labels_read_from_the_per_case_results():
    result = {"passages": [{"unit_id": "p1", "relevant": 1}],
              "responses": [{"claims": [{"unit_id": "c1", "supported": 0, "correct": 1}],
                             "facts": [{"unit_id": "f1", "covered": 0}]}]}
    assert harness_labels([result]) == {("p1", "relevant"): 1, ("c1", "supported"): 0, ("c1", "correct"): 1,
                                        ("f1", "covered"): 0}


def test_labels_needed_per_scorer_and_dimension_by_hand():
    consensus = {("u1", "supported"): 1, ("u2", "supported"): 0, ("u3", "supported"): 1}
    auto = {("u1", "supported"): 1, ("u2", "supported"): 1, ("u3", "supported"): 1}
    rows = needed_rows(consensus, {"harness": auto}, 0.5, ("supported", "covered"))
    sup, cov = rows
    # TPR 2/2, TNR 0/1.  Width 0.5: at rate 1, Wilson(4 of 4) is [0.510, 1] (0.490 wide) and 3 of 3 is 0.561 wide,
    # so 4 positives: 2 more at a share of 2/3 -> 3 samples.  At rate 0, Wilson's upper end is z²/(m+z²) <= 0.5
    # from m = 4 (3.8416): 3 more negatives at a share of 1/3 -> 9 samples.  The scorer needs the larger: 9.
    assert (sup.tp, sup.positives, sup.tn, sup.negatives) == (2, 2, 0, 1)
    assert sup.need is not None and (sup.need.more_for_tpr, sup.need.more_for_tnr, sup.need.more) == (3, 9, 9)
    assert sup.text.startswith("about 9 more labels of the random sample")
    assert cov.need is None and cov.n == 0 and "label the sample" in cov.text
    # Width 0.8: Wilson(2 of 2) is 0.658 wide, Wilson(0 of 1) 0.793: both under, reached
    reached = needed_rows(consensus, {"harness": auto}, 0.8, ("supported",))[0]
    assert reached.need is not None and reached.need.reached and reached.text.startswith("reached:")
    html = needed_html([reached], "sample-1", 5, 0.8)
    assert "pr-needed-harness-supported pr-needed-reached" in html and "✔ reached" in html
    assert "Calibration sample sample-1 (5 units)" in html


def test_no_sample_no_figure():
    html = needed_html([], None, 0, 0.2)
    assert "pr-needed-none" in html and "draw one" in html
