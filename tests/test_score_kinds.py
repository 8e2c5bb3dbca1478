"""Robust text handling (the *artefacts* rule), refusals as models phrase them, and rules per kind of text."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from playground.harness import score as S
from playground.harness.textnorm import normalise_output

CTX = ("Our store sells pants, jeans and shorts in every size. Returns are accepted within 30 days "
       "with the original receipt.")
SUPPORTED = "The store sells pants, jeans and shorts, and returns are accepted within 30 days."

#: Special and end-of-sequence tokens of common chat templates (Llama 2, ChatML, Llama 3, GPT, Gemma,
#: Mistral, reasoning models), as models leak them into answers.
CHAT_TOKENS = ("</s>", "<s>", "<|im_end|>", "<|im_start|>", "<|eot_id|>", "[/INST]", "[INST]", "<|endoftext|>",
               "<|end|>", "<|assistant|>", "<<SYS>>", "<</SYS>>", "<end_of_turn>", "<start_of_turn>model",
               "<|start_header_id|>assistant<|end_header_id|>", "<eos>", "<pad>", "<unk>", "</think>")


def test_the_supported_claim_is_supported():
    assert S.support(SUPPORTED, CTX) == 1.0


@pytest.mark.parametrize("token", CHAT_TOKENS)
def test_a_chat_template_token_is_no_missing_identifier(token):
    # before the artefacts rule, '</s>' was the path '/s>': a missing identifier, score 0
    d = S.support_detail(SUPPORTED + token, CTX)
    assert d.missing_exact == () and d.score == 1.0


@settings(max_examples=60, deadline=None)
@given(token=st.sampled_from(CHAT_TOKENS), sep=st.sampled_from(["", " ", "\n", "\n\n"]),
       kind=st.sampled_from(S.KINDS), times=st.integers(min_value=1, max_value=3))
def test_appending_chat_template_tokens_never_changes_the_score(token, sep, kind, times):
    for claim in (SUPPORTED, "Returns are accepted within 45 days.", "The store sells hats."):
        assert S.support(claim + (sep + token) * times, CTX, kind=kind) == S.support(claim, CTX, kind=kind)


# Real-looking model output: (claim, what the normalised text must be)
@pytest.mark.parametrize(("raw", "normalised"), [
    ("**Returns** are accepted within *30 days*.", "Returns are accepted within 30 days."),
    ("## Returns\n> Returns are accepted within 30 days.", "\nReturns\n\nReturns are accepted within 30 days."),
    ("See [the policy](https://shop.example.com/returns) for details.", "See the policy for details."),
    ("Details: https://shop.example.com/returns?x=1.", "Details:  ."),
    ("Visit www.example.com, then return it.", "Visit  , then return it."),
    ("| item | price |\n|---|---|\n| jeans | 40 |", "  item   price  \n \n  jeans   40  "),
    ("The store\u2019s \u201cbest\u201d jeans\u2014in every size.", "The store's \"best\" jeans - in every size."),
    ("Returns\u00a0are accepted\u200b within 30\u202fdays.", "Returns are accepted within 30 days."),
    ("Don&rsquo;t lose the receipt &amp; the tag.", "Don't lose the receipt & the tag."),
    ("\uff2a\uff45\uff41\uff4e\uff53 are sold.", "Jeans are sold."),
    ("Use `max_retries` and snake_case names.", "Use `max_retries` and snake_case names."),
    ("* a bullet stays for the marker rule", "* a bullet stays for the marker rule"),
    ("Plain text is returned as it is.", "Plain text is returned as it is."),
])
def test_normalise_output(raw, normalised):
    assert normalise_output(raw) == normalised


@pytest.mark.parametrize("claim", [
    "The store sells **pants/jeans/shorts**.</s>",
    "<|im_start|>assistant\nThe store sells pants/jeans/shorts in every size.<|im_end|>",
    "[INST] [/INST] Returns are accepted within 30 days (see https://shop.example.com/returns).",
    "\u201cReturns are accepted within 30\u00a0days\u201d \u2014 with the original receipt.",
    "### Returns\n- Returns are accepted within **30 days** with the original receipt.<|eot_id|>",
])
def test_supported_model_output_is_supported(claim):
    d = S.support_detail(claim, CTX)
    assert d.missing_exact == () and d.score == 1.0


def test_word_lists_are_split_but_paths_and_versioned_names_stay_identifiers():
    from playground.harness.tokens import analyze

    assert analyze("pants/jeans/shorts").identifiers == frozenset()
    assert analyze("pants/jeans/shorts").content == ("pant", "jean", "short")
    assert analyze("red-green-blue").identifiers == frozenset()
    assert analyze("tcp/ip4").identifiers == frozenset({"tcp/ip4"})
    assert analyze("see /v2/events/replay").identifiers == frozenset({"/v2/events/replay"})
    # a missing word of a list is a missing content token, not an exact miss
    # store, sell, pant, jean, hat: 4 of 5
    assert S.support("The store sells pants/jeans/hats.", CTX) == pytest.approx(4 / 5)


def test_the_artefacts_rule_can_be_switched_off():
    assert S.support(SUPPORTED + "</s>", CTX, off=["artefacts"]) == 0.0


# --------------------------------------------------------------------------- refusals and pleasantries


@pytest.mark.parametrize("text", [
    "Therefore, I cannot provide an answer to this question.",
    "I'm unable to determine the return period from the passages.",
    "The context does not mention the return period.",
    "Unfortunately, there is not enough information to answer.",
    "It is not possible to determine the return period from the given passages.",
    "I can't give a definitive answer based on the provided information.",
    "The passages provide insufficient information about returns.",
])
def test_refusals_as_models_phrase_them_are_abstentions_and_never_unsupported(text):
    assert S.is_abstention(text)
    assert S.support(text, CTX) == 1.0


@pytest.mark.parametrize("text", [
    "Sure, I can help you with that!",
    "I'd be happy to help.",
    "Great question!",
])
def test_pleasantries_assert_nothing(text):
    assert not S.is_abstention(text)
    assert S.support(text, CTX) == 1.0
    assert S.support(text, CTX, kind="dialogue") == 1.0


def test_a_pleasantry_pattern_does_not_swallow_content():
    # "I can help you bake..." goes on to assert something: the clause stays
    assert S.clean_claim("I can help you return jeans within 30 days.") == "I can help you return jeans within 30 days."
    assert S.support("I can help you return jeans within 90 days.", CTX) == 0.0


# --------------------------------------------------------------------------- kinds


def test_every_rule_states_its_kinds_and_the_speaker_rule_is_for_dialogue_only():
    assert set(S.RULE_KINDS) == set(S.SUPPORT_RULES)
    assert all(kinds <= set(S.KINDS) and kinds for kinds in S.RULE_KINDS.values())
    assert S.RULE_KINDS["speaker"] == {"dialogue"}
    assert S.RULE_KINDS["rouge"] == {"summary", "dialogue"}
    assert S.kind_off("dialogue") == frozenset()
    assert S.kind_off("qa") == {"speaker", "names", "rouge"}
    assert S.kind_off("summary") == {"speaker"}
    assert S.kind_off(None) == frozenset()


def test_the_speaker_rule_applies_to_dialogue_only():
    claim = "I think the store sells jeans."  # think, store, sell, jean (+ the speaker item 'I' in dialogue)
    assert S.support(claim, CTX) == 3 / 4
    assert S.support(claim, CTX, kind="summary", off=("rouge",)) == 3 / 4
    assert S.support(claim, CTX, kind="dialogue", off=("rouge",)) == 3 / 5


def test_the_rouge_rule_averages_with_rouge1_precision_on_summary_and_dialogue():
    claim = "I think the store sells jeans."  # ROUGE-1 tokens i think the store sells jeans: 4 of 6 in CTX
    assert S.support(claim, CTX, kind="summary") == (3 / 4 + 4 / 6) / 2
    assert S.support(claim, CTX, kind="dialogue") == (3 / 5 + 4 / 6) / 2
    assert S.support_detail(claim, CTX, kind="dialogue").score == (3 / 5 + 4 / 6) / 2
    # counted with repeats: 'the' twice in the claim, once in the context -> (1 + 1 + 1) / 4
    assert S.support("The store the jeans.", "The store sells jeans.", kind="summary") == (1.0 + 3 / 4) / 2
    # an exact miss scores half the ROUGE-1 precision: 7 is no number of the context (tokens 5 of 6)
    assert S.support("Returns are accepted within 7 days.", CTX, kind="summary") == (0.0 + 5 / 6) / 2
    # a pleasantry leaves no token: the score of step 5 (1.0), as in qa
    assert S.support("Sure, I can help you with that!", CTX, kind="dialogue") == 1.0


def test_an_unknown_kind_is_an_error_naming_the_known_ones():
    with pytest.raises(ValueError, match="unknown kind of text 'chat' \\(known: qa, summary, dialogue\\)"):
        S.support("x", "x", kind="chat")


def test_shipped_floors_one_source_of_truth():
    from playground.harness.config import DEFAULTS, load_config

    assert S.DEFAULT_SUPPORT_FLOOR == S.DEFAULT_SUPPORT_FLOORS["qa"] == 0.55
    assert DEFAULTS["scoring"]["support_floor"] == S.DEFAULT_SUPPORT_FLOOR
    assert load_config()["scoring.support_floor"] == S.DEFAULT_SUPPORT_FLOOR
    assert load_config()["scoring.correctness_floor"] == S.DEFAULT_CORRECTNESS_FLOOR
    assert set(S.DEFAULT_SUPPORT_FLOORS) == set(S.KINDS)
