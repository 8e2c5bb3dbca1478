"""Issue 36: ACCEPT means verified -- normalisation a user expects, entity swaps, unverifiable claims.

Every expected score is computed by hand from the rules (docs/scorers.md): qa coverage is present content
tokens / content tokens; an exact miss or a swap scores 0.0; summary and dialogue average that with the
claim's ROUGE-1 precision (its lower-cased ``[a-z0-9]+`` words found in the context, repeats counted).
"""
from __future__ import annotations

import pytest

from playground.harness.config import DEFAULTS
from playground.harness.decide import decide
from playground.harness.score import response_signals, support, support_detail
from playground.harness.support_entities import swapped
from playground.harness.textnorm import normalise_output
from playground.harness.tokens import analyze, number_value

KINDS = ("qa", "summary", "dialogue")
PARIS = "The capital of France is Paris."


# --- 1. normalisation --------------------------------------------------------------------------------------

@pytest.mark.parametrize(("claim", "context"), [
    # content: store, open, 24, hour -- "twenty-four" is 24 (it was 20 and 4, both missing: 0.0)
    ("The store is open twenty-four hours.", "The store is open 24 hours."),
    ("The store is open 24 hours.", "The store is open twenty-four hours."),
    # fee, 1000: "$1k" is 1000 (it was 1: 0.0)
    ("The fee is $1k.", "The fee is $1,000."),
    # support, availabl, 24 (the unit of "24h" is not compared) ...
    ("Support is available 24h.", "Support is available 24 hours."),
    # ... and "24 hours" finds "24h": 24 by value, "hour" by the unit's key
    ("Support is available 24 hours.", "Support is available 24h."),
    # close, letter, polit: "(1) " is a list marker (it was the number 1, missing: 0.0)
    ("(1) Close the letter politely.", "Close the letter politely."),
    ("(b) Close the letter politely.", "Close the letter politely."),
    # "_politely_" is emphasis (it was an identifier, missing: 0.0); "**" as before
    ("Close the letter _politely_.", "Close the letter politely."),
    ("Close the **letter** politely.", "Close the letter politely."),
    # curly quotes and an em dash are plain text
    ("It uses \u201cquotes\u201d \u2014 and dashes.", 'It uses "quotes" - and dashes.'),
    # case and diacritics: sao, paulo, 1950 (name, name, number)
    ("He moved to S\u00e3o Paulo in 1950.", "In 1950 he moved to Sao Paulo."),
    ("He moved to Sao Paulo in 1950.", "In 1950 he moved to S\u00e3o Paulo."),
    ("The CAF\u00c9 opened.", "the cafe opened"),
    # Chinese, segmented by jieba: 巴黎 法国 首都 (是, 的 are function words), a reordered paraphrase
    ("\u5df4\u9ece\u662f\u6cd5\u56fd\u7684\u9996\u90fd\u3002",
     "\u6cd5\u56fd\u7684\u9996\u90fd\u662f\u5df4\u9ece\u3002"),
    # Japanese, segmented by tinysegmenter: 東京 日本 首都 (は, の, です are function words)
    ("\u6771\u4eac\u306f\u65e5\u672c\u306e\u9996\u90fd\u3067\u3059\u3002",
     "\u65e5\u672c\u306e\u9996\u90fd\u306f\u6771\u4eac\u3067\u3059\u3002"),
])
def test_supported_paraphrases_score_one_in_qa(claim, context):
    assert support(claim, context) == 1.0


def test_normalised_numbers_still_differ_by_value():
    assert support("The fee is $1k.", "The fee is $1,500.") == 0.0          # 1000 is not 1500
    assert support("It took twenty-five hours.", "It took 24 hours.") == 0.0
    # support, availabl, 24, hour, day: "day" is missing, 4 of 5
    assert support("Support is available 24 hours a day.", "Support is available 24h.") == 0.8


def test_number_values():
    assert [number_value(t) for t in ("$1k", "5K", "$2.5m", "$3bn", "5m", "1.25k", "24h")] == [
        "1000", "5000", "2500000", "3000000000", "5", "1250", "24"]


def test_summary_scores_average_rouge_precision_by_hand():
    # twenty-four: support 1.0; ROUGE-1 words the store is open twenty four hours, 5 of 7 in the context
    assert support("The store is open twenty-four hours.", "The store is open 24 hours.",
                   kind="summary") == pytest.approx((1 + 5 / 7) / 2, abs=1e-15)


def test_snake_case_and_dunder_names_stay_identifiers():
    assert "max_attempts" in analyze("Set max_attempts to 5.").identifiers
    text = "Use snake_case, _private and a_b_c here."
    assert normalise_output(text) == text
    assert support("Set max_attempts to 5.", "Set attempts to 5.") == 0.0  # the identifier is missing


# --- 2. entity swaps, in every kind -------------------------------------------------------------------------

@pytest.mark.parametrize("kind", KINDS)
def test_entity_swaps_are_not_supported(kind):
    # qa: capit, franc, london -- London is missing and Paris stands at its place after "France is": a swap,
    # 0.0 (it was 2/3 with the names rule off).  summary/dialogue: the names rule already scores 0.0, averaged
    # with ROUGE-1 precision 5/6 (the capital of france is: 5 of 6 words)
    expected = 0.0 if kind == "qa" else (0 + 5 / 6) / 2
    assert support("The capital of France is London.", PARIS, kind=kind) == pytest.approx(expected, abs=1e-15)
    # a name opening the sentence, in Cyrillic: "Москва" is missing, "Париж" stands before "является
    # столицей"; ROUGE-1 has no [a-z0-9] word in Cyrillic, so every kind keeps 0.0
    assert support("\u041c\u043e\u0441\u043a\u0432\u0430 \u044f\u0432\u043b\u044f\u0435\u0442\u0441\u044f "
                   "\u0441\u0442\u043e\u043b\u0438\u0446\u0435\u0439 \u0424\u0440\u0430\u043d\u0446\u0438\u0438.",
                   "\u041f\u0430\u0440\u0438\u0436 \u044f\u0432\u043b\u044f\u0435\u0442\u0441\u044f "
                   "\u0441\u0442\u043e\u043b\u0438\u0446\u0435\u0439 \u0424\u0440\u0430\u043d\u0446\u0438\u0438.",
                   kind=kind) == 0.0
    # a year: numbers are exact in every kind (summary: 0 averaged with 4 of 5 words)
    assert support("He was born in 1948.", "He was born in 1950.", kind=kind) == pytest.approx(
        0.0 if kind == "qa" else 0.4, abs=1e-15)
    # another person's name, two words long: the span grows over both missing words
    assert support("The novel was written by Charlotte Bronte.", "The novel was written by Jane Austen.",
                   kind=kind) == pytest.approx(0.0 if kind == "qa" else (0 + 5 / 7) / 2, abs=1e-15)


def test_chinese_and_japanese_swaps():
    # 德国 for 法国 between 是 and 的首都
    assert support("\u5df4\u9ece\u662f\u5fb7\u56fd\u7684\u9996\u90fd\u3002",
                   "\u5df4\u9ece\u662f\u6cd5\u56fd\u7684\u9996\u90fd\u3002") == 0.0
    # 大阪 for 東京 before は日本の首都
    assert support("\u5927\u962a\u306f\u65e5\u672c\u306e\u9996\u90fd\u3067\u3059\u3002",
                   "\u6771\u4eac\u306f\u65e5\u672c\u306e\u9996\u90fd\u3067\u3059\u3002") == 0.0


def test_swap_needs_two_anchor_words_one_of_them_content():
    # "Conserving" opens the claim; only "water" follows it in both texts: one anchor word is too weak
    claim, ctx = "Conserving water helps.", "Here are 20 water saving tips."
    assert not swapped(claim, "conserv", [ctx], frozenset({"conse", "help"}))
    # mosco, capit, franc: "is the capital" after it (content word "capital") and Paris there: a swap
    assert support("Moscow is the capital of France.", "Paris is the capital of France.") == 0.0


def test_sentence_initial_common_word_in_the_context_is_fine():
    # "Customers" opens the sentence and is in the context: verified, nothing unverifiable
    d = support_detail("Customers can return jeans within 90 days.", "Customers can return jeans within 90 days.")
    assert d.score == 1.0


# --- 3. unverifiable: empty claims and names the passages never mention ------------------------------------

@pytest.mark.parametrize("claim", ["", "   ", "9.", "Documents:\n9.", "It is.", "(Passage 1)\n3."])
@pytest.mark.parametrize("kind", KINDS)
def test_empty_and_emptied_claims_are_not_supported(claim, kind):
    assert support(claim, "Paris is the capital of France.", kind=kind) == 0.0


def test_pleasantries_still_assert_nothing():
    # removed as a clause, not emptied: 1.0 as before (docs/scorers.md)
    assert support("Sure, I can help you with that!", PARIS) == 1.0


def _decision(sentences, passages, query="What is the capital of France?"):
    signals = response_signals(query, " ".join(sentences), sentences, passages)
    return signals, decide(signals, DEFAULTS["decision"], 0.55)


def test_an_emptied_line_sends_the_answer_to_review_with_the_reason():
    signals, d = _decision([PARIS, "9."], [PARIS])
    assert signals.unverifiable == ((1, "empty claim: nothing left to check"),)
    assert signals.groundedness == 1.0  # over the verifiable sentence only
    assert (d.verdict, d.rule) == ("REVIEW", "unverifiable")
    assert d.reason == "unverifiable: sentence 2 ('9.'): empty claim: nothing left to check"


def test_a_name_the_passages_never_mention_is_unverifiable_not_accepted():
    # qa: capit, franc, paris, said, jacqu -- "Jacques" is not in the passage and no other word stands at its
    # place after "said" (not in the passage either): coverage 3/5 stays, and the claim is unverifiable
    s = "The capital of France is Paris, said Jacques."
    signals, d = _decision([s], ["The capital of France is Paris."])
    assert signals.sentence_support == (0.6,)
    assert signals.unverifiable == ((0, "'Jacques' is not in the context"),)
    assert (d.verdict, d.rule) == ("REVIEW", "unverifiable")


def test_the_verified_answer_is_accepted():
    signals, d = _decision([PARIS], [PARIS])
    assert signals.unverifiable == ()
    assert d.verdict == "ACCEPT"


def test_a_swap_is_judged_by_the_grounding_rules_not_sent_to_review_as_unverifiable():
    signals, d = _decision(["The capital of France is London."], [PARIS])
    assert signals.sentence_support == (0.0,) and signals.unverifiable == ()
    assert d.verdict == "REJECT"


def test_a_missing_name_in_an_otherwise_unsupported_sentence_is_judged_as_unsupported():
    # hambu, harbo, larg, europ: 'Hamburg' (a missing sentence-initial word) and every other content token are
    # missing: coverage 0/4 = 0.0, unsupported; only a claim scoring above 0.0 is reported unverifiable
    signals, d = _decision(["Hamburg has the largest harbour in Europe."], [PARIS])
    assert signals.sentence_support == (0.0,) and signals.unverifiable == ()
    assert d.verdict == "REJECT"
    # 'Jacques' and 'said' missing, 3/5 = 0.6: unverifiable, and below a floor of 0.7, where it counts as
    # unsupported (below the floor) and the unverifiable row does not decide
    s = "The capital of France is Paris, said Jacques."
    signals = response_signals("What is the capital of France?", s, [s], [PARIS])
    assert signals.unverifiable == ((0, "'Jacques' is not in the context"),)
    assert signals.below_floor(0.7) == ((0, s, 0.6),)
    assert decide(signals, DEFAULTS["decision"], 0.7).rule != "unverifiable"
