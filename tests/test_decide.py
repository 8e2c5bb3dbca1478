"""The decision layer: one test per rule (which rule fires), precedence, validation, and the flags."""
from __future__ import annotations

import dataclasses
import inspect
import statistics

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from playground.harness.config import DEFAULTS
from playground.harness.decide import (
    RULES,
    THRESHOLD_KEYS,
    Decision,
    Signals,
    check_thresholds,
    decide,
    flags,
    review_queue,
)

# Written out (not read from DEFAULTS) so that tuning the configuration does not
# silently change what these crafted signals prove.
T = {
    "reject_groundedness": 0.45,
    "accept_groundedness": 0.80,
    "high_specificity": 0.35,
    "low_specificity": 0.12,
    "high_hedging": 0.50,
    "low_attribution": 0.50,
    "min_context_quality": 0.30,
    "min_answer_relevance": 0.25,
    "confidence_review": 0.50,
    "max_signal_disagreement": 0.30,
    "borderline_margin": 0.05,
}
FLOOR = 0.70

GOOD = Signals(
    groundedness=0.90, attribution=0.90, specificity=0.60, hedging=0.0, answer_relevance=0.90,
    context_quality=0.90, top_retrieval_similarity=0.90,
    sentence_support=(0.90, 0.90), sentences=("Endpoints answer within 15 s [1].", "Retries back off [2]."),
)


def sig(support: tuple[float, ...] | None = None, **changes) -> Signals:
    if support is not None:
        changes["sentence_support"] = support
        changes["sentences"] = tuple(f"Sentence {i}." for i in range(len(support)))
    return dataclasses.replace(GOOD, **changes)


def run(signals: Signals) -> Decision:
    return decide(signals, T, FLOOR)


# --- configuration ------------------------------------------------------------------------


def test_every_configured_decision_key_is_read():
    assert set(DEFAULTS["decision"]) <= set(THRESHOLD_KEYS)
    assert set(T) == set(THRESHOLD_KEYS)


def test_configuration_provides_every_threshold():
    assert set(THRESHOLD_KEYS) - set(DEFAULTS["decision"]) == set()
    decide(GOOD, DEFAULTS["decision"], DEFAULTS["scoring"]["support_floor"])


def test_thresholds_are_validated_all_at_once():
    bad = {k: v for k, v in T.items() if k != "high_hedging"} | {"max_disagreement": 0.3, "low_specificity": 1.5}
    with pytest.raises(ValueError) as err:
        decide(GOOD, bad, FLOOR)
    message = str(err.value)
    assert "missing decision threshold(s): high_hedging" in message
    assert "unknown decision threshold(s): max_disagreement" in message
    assert "decision.low_specificity must be a number in [0, 1]" in message
    with pytest.raises(ValueError, match="reject_groundedness must not exceed"):
        check_thresholds(T | {"reject_groundedness": 0.9}, FLOOR)
    with pytest.raises(ValueError, match="support_floor"):
        check_thresholds(T, 1.2)


def test_signals_are_validated():
    with pytest.raises(ValueError, match="2 scores for 1 sentences"):
        Signals(0.5, 0.5, 0.5, 0.0, 0.5, 0.5, 0.5, (0.5, 0.5), ("One.",))
    with pytest.raises(ValueError, match="groundedness"):
        sig(groundedness=1.2)
    with pytest.raises(ValueError, match="attribution"):
        sig(attribution=float("nan"))
    with pytest.raises(ValueError, match=r"sentence_support\[1\]"):
        sig(support=(0.5, -0.1))
    assert sig(support=[0.8, 0.9]).sentence_support == (0.8, 0.9)  # lists become tuples


def test_disagreement_is_the_population_standard_deviation_of_five_signals():
    s = sig(groundedness=1.0, attribution=0.0, specificity=1.0, answer_relevance=0.0, context_quality=1.0,
            hedging=1.0, top_retrieval_similarity=0.0)
    assert s.disagreement == pytest.approx(statistics.pstdev([1, 0, 1, 0, 1]))  # 0.4899, not the sample 0.5477
    assert sig(groundedness=0.5, attribution=0.5, specificity=0.5, answer_relevance=0.5,
               context_quality=0.5).disagreement == 0


def test_docstring_table_lists_every_rule_in_order():
    doc = decide.__doc__
    positions = [doc.index(f" {rule.name} ") for rule in RULES]
    assert positions == sorted(positions)


# --- one test per rule ------------------------------------------------------------------------


def test_rule_1_abstained_without_context_is_accepted():
    d = run(sig(abstained=True, context_quality=0.10, groundedness=0.0, support=(0.1,)))
    assert (d.rule, d.verdict, d.failure_type, d.next_action) == ("abstained_no_context", "ACCEPT", None, "serve")
    assert "abstains" in d.reason and "0.10 < 0.30" in d.reason


def test_rule_2_abstained_with_relevant_context_goes_to_review():
    d = run(sig(abstained=True, context_quality=0.62, groundedness=0.0, support=(0.1,)))
    assert (d.rule, d.verdict, d.failure_type, d.next_action) == (
        "abstained_with_context", "REVIEW", "uncertain", "human review")
    assert "although the retrieved context looks relevant (context quality 0.62 >= 0.30)" in d.reason


def test_rule_3_poor_retrieval():
    d = run(sig(context_quality=0.20))
    assert (d.rule, d.verdict, d.failure_type, d.next_action) == (
        "poor_retrieval", "REJECT", "poor_retrieval", "retrieve more documents")
    assert "context quality 0.20 is below 0.30" in d.reason


def test_rule_4_off_topic():
    d = run(sig(answer_relevance=0.10, groundedness=0.60))
    assert (d.rule, d.verdict, d.failure_type, d.next_action) == (
        "off_topic", "REJECT", "off_topic", "retry with a specific prompt")
    assert "answer relevance 0.10 is below 0.25" in d.reason


def test_rule_4a_a_grounded_answer_with_few_question_words_goes_to_review_not_reject():
    # boundary: groundedness exactly at accept_groundedness (0.80) with every sentence above the floor
    d = run(sig(answer_relevance=0.10, groundedness=0.80))
    assert (d.rule, d.verdict, d.failure_type, d.next_action) == (
        "off_topic_grounded", "REVIEW", "off_topic", "human review")
    assert "answer relevance 0.10 is below 0.25, but the answer is grounded (groundedness 0.80 >= 0.80" in d.reason
    # just below accept_groundedness, or a sentence below the floor: rejected as off topic
    assert run(sig(answer_relevance=0.10, groundedness=0.79)).rule == "off_topic"
    assert run(sig((0.90, 0.69), answer_relevance=0.10, groundedness=0.90)).rule == "off_topic"


def test_rule_5_confident_hallucination_names_the_numbers():
    d = run(sig(support=(0.31, 0.42, 0.90, 0.90), specificity=0.52, attribution=0.30, groundedness=0.63))
    assert (d.rule, d.verdict, d.failure_type, d.next_action) == (
        "confident_hallucination", "REJECT", "hallucination", "regenerate with a grounding prompt")
    assert d.reason.startswith("2 of 4 sentences are below the support floor 0.70 (0.31, 0.42) while specificity "
                               "is high (0.52 >= 0.35) and attribution is low (0.30 < 0.50)")
    assert d.reason.endswith("likely confident hallucination")
    assert d.low_coverage_sentences == ((0, "Sentence 0.", 0.31), (1, "Sentence 1.", 0.42))


def test_rule_5_also_fires_on_low_groundedness_with_good_attribution():
    d = run(sig(support=(0.2, 0.3), specificity=0.50, attribution=0.80, groundedness=0.25))
    assert d.rule == "confident_hallucination"
    assert "groundedness is low (0.25 < 0.45)" in d.reason


def test_rule_5_needs_a_sentence_below_the_floor():
    d = run(sig(specificity=0.60, attribution=0.40))
    assert d.rule == "accept"


def test_rule_6_unspecific_is_vague():
    d = run(sig(specificity=0.05, hedging=0.30))
    assert (d.rule, d.verdict, d.failure_type, d.next_action) == (
        "unspecific", "REVIEW", "vague", "retry with a specific prompt")
    assert "specificity 0.05 is below 0.12" in d.reason


def test_rule_7_ungrounded_is_rejected():
    d = run(sig(support=(0.2, 0.5, 0.8), groundedness=0.30, specificity=0.30, attribution=0.80))
    assert (d.rule, d.verdict, d.failure_type, d.next_action) == (
        "ungrounded", "REJECT", "hallucination", "regenerate with a grounding prompt")
    assert "groundedness 0.30 is below 0.45" in d.reason
    assert "2 of 3 sentences are below the support floor 0.70 (0.20, 0.50)" in d.reason


def test_rule_8_hedged_is_vague():
    d = run(sig(hedging=0.70, specificity=0.30))
    assert (d.rule, d.verdict, d.failure_type, d.next_action) == (
        "hedged", "REVIEW", "vague", "retry with a specific prompt")
    assert "hedging 0.70 is at or above 0.50" in d.reason


def test_rule_9_signals_disagree():
    s = sig(groundedness=0.95, attribution=0.95, specificity=0.15, answer_relevance=0.30, context_quality=0.95,
            support=(0.95, 0.95))
    assert s.disagreement > 0.30
    d = run(s)
    assert (d.rule, d.verdict, d.failure_type, d.next_action) == (
        "signals_disagree", "REVIEW", "uncertain", "human review")
    assert f"population standard deviation {s.disagreement:.2f} > 0.30" in d.reason


def test_rule_10_low_confidence():
    d = run(sig(top_retrieval_similarity=0.30))
    assert (d.rule, d.verdict, d.failure_type, d.next_action) == (
        "low_confidence", "REVIEW", "uncertain", "human review")
    assert d.confidence == 0.30
    assert "confidence 0.30 = min(top retrieval similarity 0.30, groundedness 0.90) is below 0.50" in d.reason


@pytest.mark.parametrize(
    "changes, expect",
    [
        ({"groundedness": 0.78}, "groundedness 0.78 is within 0.05 of the accept threshold 0.80"),
        ({"groundedness": 0.75}, "within 0.05 of the accept threshold"),  # inclusive, despite float error
        ({"groundedness": 0.84}, "within 0.05 of the accept threshold"),
        ({"support": (0.90, 0.72)}, "1 sentence within 0.05 of the support floor 0.70 (0.72)"),
        ({"support": (0.68, 0.90)}, "1 sentence within 0.05 of the support floor 0.70 (0.68)"),
    ],
)
def test_rule_11_borderline(changes, expect):
    d = run(sig(**changes))
    assert (d.rule, d.verdict, d.failure_type, d.next_action) == ("borderline", "REVIEW", "borderline", "human review")
    assert expect in d.reason


def test_rule_11_borderline_keeps_the_low_sentence():
    d = run(sig(support=(0.68, 0.90)))
    assert d.low_coverage_sentences == ((0, "Sentence 0.", 0.68),)


def test_rule_12_accept():
    d = run(GOOD)
    assert (d.rule, d.verdict, d.failure_type, d.next_action) == ("accept", "ACCEPT", None, "serve")
    assert d.confidence == 0.90 and d.low_coverage_sentences == ()
    assert "groundedness 0.90 >= 0.80" in d.reason


@pytest.mark.parametrize(
    "changes, expect",
    [
        (
            {"groundedness": 0.60},
            "groundedness 0.60 lies between the reject threshold 0.45 and the accept threshold 0.80",
        ),
        (
            {"support": (0.90, 0.20), "specificity": 0.30},
            "1 of 2 sentences is below the support floor 0.70 (0.20) although groundedness is 0.90",
        ),
    ],
)
def test_rule_13_otherwise_uncertain(changes, expect):
    d = run(sig(**changes))
    assert (d.rule, d.verdict, d.failure_type, d.next_action) == ("otherwise", "REVIEW", "uncertain", "human review")
    assert d.reason == expect


# --- precedence ---------------------------------------------------------------------------


def test_abstention_is_judged_before_everything_else():
    d = run(sig(abstained=True, context_quality=0.10, answer_relevance=0.0, groundedness=0.0, support=(0.0,)))
    assert d.rule == "abstained_no_context"


def test_poor_retrieval_is_named_before_the_answer_is_blamed():
    d = run(sig(context_quality=0.10, answer_relevance=0.10, groundedness=0.10, support=(0.1, 0.1)))
    assert d.rule == "poor_retrieval"


def test_confident_hallucination_before_ungrounded():
    # both 5 and 7 hold; 5 names the specific failure
    d = run(sig(support=(0.1, 0.2), groundedness=0.15, specificity=0.60, attribution=0.10))
    assert d.rule == "confident_hallucination"


def test_confident_hallucination_before_hedged():
    d = run(sig(support=(0.1, 0.9), groundedness=0.50, specificity=0.40, attribution=0.20, hedging=0.80))
    assert d.rule == "confident_hallucination"


def test_unspecific_before_ungrounded():
    # nothing concrete and unsupported: vague (REVIEW, sharper prompt), not a hallucination REJECT
    d = run(sig(support=(0.1, 0.2), groundedness=0.15, specificity=0.05, attribution=0.10, hedging=0.9))
    assert (d.rule, d.verdict, d.failure_type) == ("unspecific", "REVIEW", "vague")


def test_ungrounded_before_hedged():
    # hedged but still asserting unsupported specifics: rejected, not softened to vague
    d = run(sig(support=(0.3, 0.4), groundedness=0.35, specificity=0.30, attribution=0.60, hedging=0.80))
    assert (d.rule, d.verdict, d.failure_type) == ("ungrounded", "REJECT", "hallucination")


def test_hedged_before_disagreement_and_borderline():
    d = run(sig(hedging=0.60, specificity=0.20, groundedness=0.78, answer_relevance=0.30))
    assert d.rule == "hedged"


# --- invariants -----------------------------------------------------------------------------

unit = st.floats(0, 1)


@settings(max_examples=300, deadline=None)
@given(
    values=st.tuples(unit, unit, unit, unit, unit, unit, unit),
    support=st.lists(unit, max_size=5),
    abstained=st.booleans(),
)
def test_decide_invariants(values, support, abstained):
    g, a, sp, h, ar, cq, top = values
    s = Signals(g, a, sp, h, ar, cq, top, tuple(support), tuple(f"S{i}." for i in range(len(support))), abstained)
    d = decide(s, T, FLOOR)
    rule = next(r for r in RULES if r.name == d.rule)
    assert (d.verdict, d.failure_type, d.next_action) == (rule.verdict, rule.failure_type, rule.next_action)
    assert d.confidence == min(top, g)
    assert [i for i, _, _ in d.low_coverage_sentences] == [i for i, x in enumerate(support) if x < FLOOR]
    assert d.reason
    if d.verdict == "ACCEPT" and not abstained:
        assert not review_queue(s, support_floor=FLOOR, confidence_review=T["confidence_review"])


# --- flags ------------------------------------------------------------------------------


def _flags(signals=GOOD, supported=(True, True), correct=(True, True), answer_correct=True):
    return flags(
        signals,
        run(signals),
        claim_supported=supported,
        claim_correct=correct,
        answer_correct=answer_correct,
        support_floor=FLOOR,
        thresholds=T,
    )


def test_hallucination_needs_an_unsupported_and_wrong_claim():
    assert _flags(supported=(True, False), correct=(True, False), answer_correct=False).hallucination
    # unsupported but correct is not a hallucination
    assert not _flags(supported=(True, False), correct=(True, True)).hallucination
    # wrong but supported is not a hallucination (it is grounded-but-wrong)
    assert not _flags(supported=(True, True), correct=(False, True)).hallucination
    # the unsupported and the wrong claim must be the same claim
    assert not _flags(supported=(False, True), correct=(True, False)).hallucination


def test_grounded_but_wrong():
    assert _flags(supported=(True, True), correct=(True, False), answer_correct=None).grounded_but_wrong
    assert _flags(supported=(True, True), correct=(True, True), answer_correct=False).grounded_but_wrong
    assert not _flags(supported=(True, True), correct=(True, True), answer_correct=None).grounded_but_wrong
    assert not _flags(supported=(True, False), correct=(True, False), answer_correct=False).grounded_but_wrong
    empty = sig(support=())
    assert not flags(
        empty, run(empty), claim_supported=(), claim_correct=(), answer_correct=False, support_floor=FLOOR, thresholds=T
    ).grounded_but_wrong


def test_review_queue_from_low_confidence_alone():
    s = sig(top_retrieval_similarity=0.40)  # every sentence well supported
    f = _flags(s)
    assert f.review_queue
    assert f.review_reasons == ("confidence 0.40 is below 0.50",)


def test_review_queue_from_one_unsupported_sentence_alone():
    s = sig(support=(0.90, 0.50, 0.90), groundedness=0.77)  # confidence 0.77 >= 0.50
    f = _flags(s, supported=(True, False, True), correct=(True, True, True))
    assert f.review_queue
    assert f.review_reasons == ("1 sentence below the support floor 0.70 (0.50)",)


def test_review_queue_never_reads_gold():
    # the function behind it cannot see gold: its parameters hold none
    assert set(inspect.signature(review_queue).parameters) == {"signals", "support_floor", "confidence_review"}
    # wildly different gold labels, same production signals: same queue decision
    for s in (GOOD, sig(top_retrieval_similarity=0.2)):
        results = {
            _flags(s, supported=sup, correct=cor, answer_correct=ans).review_queue
            for sup in ((True, True), (False, False))
            for cor in ((True, True), (False, False))
            for ans in (True, False, None)
        }
        assert len(results) == 1
    assert not _flags(GOOD, supported=(False, False), correct=(False, False), answer_correct=False).review_queue


def test_flags_reject_misaligned_labels():
    with pytest.raises(ValueError, match="misaligned"):
        _flags(supported=(True,), correct=(True, True))
    with pytest.raises(ValueError, match="confidence differs"):
        flags(GOOD, run(sig(top_retrieval_similarity=0.3)), claim_supported=(True, True),
              claim_correct=(True, True), answer_correct=True, support_floor=FLOOR, thresholds=T)


# --- every documented threshold, exactly at its boundary ------------------------------------


@pytest.mark.parametrize("changes,at_rule,beyond,beyond_rule", [
    # "<" rules do not fire exactly at the threshold, and fire just below it
    ({"context_quality": 0.30}, "accept", {"context_quality": 0.2999}, "poor_retrieval"),
    ({"answer_relevance": 0.25}, "accept", {"answer_relevance": 0.2499}, "off_topic_grounded"),
    ({"answer_relevance": 0.25, "groundedness": 0.70}, "otherwise", {"answer_relevance": 0.2499, "groundedness": 0.70},
     "off_topic"),
    ({"specificity": 0.12}, "signals_disagree", {"specificity": 0.1199}, "unspecific"),
    ({"groundedness": 0.45}, "low_confidence", {"groundedness": 0.4499}, "ungrounded"),
    # ">=" rules fire exactly at the threshold, not just below it
    ({"hedging": 0.50}, "hedged", {"hedging": 0.4999}, "accept"),
    ({"support": (0.31, 0.9), "specificity": 0.35, "attribution": 0.30}, "confident_hallucination",
     {"support": (0.31, 0.9), "specificity": 0.3499, "attribution": 0.30}, "otherwise"),
    # attribution "<" low_attribution: exactly 0.50 is not weak
    ({"support": (0.31, 0.9), "specificity": 0.52, "attribution": 0.50, "groundedness": 0.63}, "otherwise",
     {"support": (0.31, 0.9), "specificity": 0.52, "attribution": 0.4999, "groundedness": 0.63},
     "confident_hallucination"),
    # an abstention with context quality exactly at min_context_quality counts as "with context"
    ({"abstained": True, "context_quality": 0.30, "groundedness": 0.0, "support": (0.1,)}, "abstained_with_context",
     {"abstained": True, "context_quality": 0.2999, "groundedness": 0.0, "support": (0.1,)}, "abstained_no_context"),
])
def test_threshold_boundaries(changes, at_rule, beyond, beyond_rule):
    assert run(sig(**changes)).rule == at_rule
    assert run(sig(**beyond)).rule == beyond_rule


def test_a_sentence_exactly_at_the_support_floor_is_not_below_it():
    s = sig(support=(0.70, 0.6999))
    assert s.below_floor(0.70) == ((1, "Sentence 1.", 0.6999),)
    assert sig(support=(0.70, 0.70)).below_floor(0.70) == ()
