"""Deterministic scorers: transparent functions of strings and tokens.

No models, no network, no randomness; tokenisation rules are in
:mod:`playground.harness.tokens`.  Every scorer returns a float in [0, 1].

This module is the scorers' public face: it re-exports them from the modules
that implement them, one job each -- :mod:`~playground.harness.support_rules`
(rules, kinds of text, shipped floors), :mod:`~playground.harness.clauses`
(preamble, abstention and pleasantry clauses), :mod:`~playground.harness.claim_view`
(what of a claim is checked; abstention), :mod:`~playground.harness.context`
(passages tokenised once), :mod:`~playground.harness.support` (the support score
and its evidence, one computation), :mod:`~playground.harness.answers`
(correctness against the reference), :mod:`~playground.harness.relevance`,
:mod:`~playground.harness.style` (hedging, specificity) and
:mod:`~playground.harness.response_level` (groundedness, attribution, all
signals at once).

Support (faithfulness of a claim to the retrieved context)
==========================================================
:func:`support` / :func:`support_detail`, computed in these steps:

0. **Normalise model output** (:mod:`playground.harness.textnorm`, rule
   ``artefacts``): chat-template special tokens (``</s>``, ``<|im_end|>``,
   ``[/INST]`` ...) become sentence breaks; markdown emphasis, headings,
   quotes, rules and tables lose their syntax; URLs are removed (excluded from
   the exact-item rules); curly quotes, dashes, odd spaces and HTML
   entities are mapped to plain ASCII and the text is NFKC-normalised.
1. **Clean the claim.**  Remove a leading answer preamble (:data:`PREAMBLE_RE`:
   "Based on the provided passages, ...", "Here are the steps ...:",
   "Sure!"), every clause that is an abstention or a pleasantry
   (:data:`ABSTENTION_PATTERNS`, :data:`PLEASANTRY_PATTERNS`: "the passages do
   not mention ...", "unable to answer", "I hope this helps"; a clause runs
   between ``. ! ? ; : ,`` followed by a space, brackets and line breaks),
   and citation and list markers (``[2]``, ``(Passage 1)``, ``Step 3:``,
   ``1.``).  Such text asserts nothing about the world, so it cannot be
   unsupported.
2. **Content tokens**: the distinct content tokens of the cleaned claim
   (stopwords dropped, numbers kept, light stemming;
   :mod:`playground.harness.tokens`) minus :data:`DISCOURSE_WORDS` (words
   about the answer itself: "passage", "provided", "summary", "steps" ...).
3. **Coverage** = share of the content tokens present in the context (the
   union of the passages).  A word is present when the first five letters of
   its stem (the whole stem if shorter) equal those of a context word's stem
   (:func:`playground.harness.tokens.match_key`: inflections and derivations
   match, ``motivated`` / ``motivation``); a number when its value occurs; an
   identifier when it occurs whole.  **Speaker items** count as content tokens
   no context holds (:data:`SPEAKER_WORDS`): each first-person pronoun (``I``,
   ``I'm``, ``I've``, ``I'd``, ``I'll``, ``me``, ``my``, ``myself``) and one for
   a question mark -- a personal experience, opinion or question is not
   attributable to any passage ("I think he was the most significant icon",
   "do you like them?").  Coverage = present content tokens / (content tokens
   + speaker items); 1.0 when nothing is left to check.
4. **Exact items**: every number (by value: ``1,000`` == ``1000``, ``five`` ==
   ``5``), identifier (``TW-4291``, ``delivery.retry.max_attempts``,
   ``/v2/endpoints/{id}/replay``, anything in backticks) and capitalised name
   (by its five-letter stem key, so demonyms such as Mexico / Mexican match)
   of the cleaned claim must be present in the context.
4b. **Entities** (the ``entities`` rule, :mod:`playground.harness.support_entities`): names no other rule
   checks, sentence-initial capitalised words (any script) and Chinese and Japanese words must be in the
   context; one that other words replace at the same place in a passage (a swap: "France is London"
   against "France is Paris") is an exact miss; one merely missing makes the claim *unverifiable*
   (:func:`response_signals` reports it, the decision sends the answer to REVIEW).  A claim with nothing
   left to check and nothing removed in step 1 (``""``, ``"9."``) is unverifiable and scores 0.0.
5. **Score** = coverage, or :data:`EXACT_MISS_SCORE` (0.0) when any exact item
   is missing: "Retries are limited to 9 attempts" against a context saying 5
   scores 0 whatever its other tokens, so it is unsupported at every floor in
   :data:`SUPPORT_FLOOR_GRID` (all > 0).
6. **ROUGE-1 blend** (the ``rouge`` rule; summary and dialogue only): the score
   of step 5 averaged with the claim's ROUGE-1 precision against the context
   (``rouge_score``'s, unstemmed: the share of the lower-cased ``[a-z0-9]+``
   tokens of the claim after step 1's preamble and clause removal, counted with
   repeats, found in the passages), so an exact miss scores half the claim's
   ROUGE-1 precision; a claim with no such token left (a pleasantry) keeps the
   score of step 5.  Function words and
   repeats, which steps 2-3 leave out, then count: on BEGIN's tuning part the
   average ranks responses better than either score alone in every one of five
   source-grouped folds.

The automatic label is ``score >= floor``.  Rules and floors depend on the
*kind of text* (:data:`KINDS`: ``qa``, ``summary``, ``dialogue``): each rule
states its kinds (:data:`RULE_KINDS`; ``support(..., kind=...)``), and each kind
has a shipped floor (:data:`DEFAULT_SUPPORT_FLOORS`: qa 0.55, summary 0.50,
dialogue 0.75), chosen on the tuning parts of RAGTruth and BEGIN
(docs/scorers.md); :data:`DEFAULT_SUPPORT_FLOOR` is the qa floor and the harness
configuration's default (one source of truth).  A dataset with enough labels of
its own gets its floors from them (:mod:`playground.harness.dataset_floors`).

Other signals
=============
* :func:`correctness`: the support score of a claim against the reference
  answer and the reference facts (as passages).
* :func:`answer_correct`: case-insensitive, whitespace-normalised containment
  of any accepted string; when the case must be abstained on (out of scope,
  cross-tenant), correct exactly when :func:`is_abstention`.
* :func:`fact_covered`: a fact is covered when one of its ``accept`` strings is
  contained in the response (same normalisation).
* :func:`relevance`: share of the query's content tokens present in the passage
  (same matching as support); relevant when ``>= DEFAULT_RELEVANCE_THRESHOLD``.
  :func:`from_expected_source` is the *gold* check (is the passage's locator
  one of the case's expected sources) -- ground truth for evaluation, never a
  production signal.
* :func:`hedging`, :func:`specificity`, :func:`groundedness`,
  :func:`attribution`, :func:`answer_relevance`, :func:`context_quality`,
  :func:`signal_disagreement`, and :func:`response_signals` for all at once.
"""
from __future__ import annotations

from playground.harness.answers import answer_correct, correctness, fact_covered
from playground.harness.claim_view import (
    ABSTENTION_MAX_CONTENT,
    DISCOURSE_WORDS,
    SPEAKER_WORDS,
    clean_claim,
    is_abstention,
)
from playground.harness.clauses import (
    ABSTENTION_PATTERNS,
    CLAUSE_FIRST_LETTERS,
    PLEASANTRY_PATTERNS,
    PREAMBLE_RE,
)
from playground.harness.context import Context
from playground.harness.relevance import (
    DEFAULT_RELEVANCE_THRESHOLD,
    answer_relevance,
    context_quality,
    from_expected_source,
    relevance,
)
from playground.harness.response_level import attribution, groundedness, response_signals, signal_disagreement
from playground.harness.signals import Signals
from playground.harness.style import HEDGE_HINTS, HEDGE_KEY_WORDS, HEDGE_PATTERNS, hedging, specificity
from playground.harness.support import SupportDetail, support, support_detail
from playground.harness.support_rules import (
    DEFAULT_CORRECTNESS_FLOOR,
    DEFAULT_KIND,
    DEFAULT_SUPPORT_FLOOR,
    DEFAULT_SUPPORT_FLOORS,
    EXACT_MISS_SCORE,
    KIND_OFF,
    KINDS,
    RULE_KINDS,
    SUPPORT_FLOOR_GRID,
    SUPPORT_RULES,
    kind_off,
    rules_on,
)

__all__ = [
    "ABSTENTION_MAX_CONTENT",
    "ABSTENTION_PATTERNS",
    "CLAUSE_FIRST_LETTERS",
    "DEFAULT_CORRECTNESS_FLOOR",
    "DEFAULT_KIND",
    "DEFAULT_RELEVANCE_THRESHOLD",
    "DEFAULT_SUPPORT_FLOOR",
    "DEFAULT_SUPPORT_FLOORS",
    "DISCOURSE_WORDS",
    "EXACT_MISS_SCORE",
    "HEDGE_HINTS",
    "HEDGE_KEY_WORDS",
    "HEDGE_PATTERNS",
    "KINDS",
    "KIND_OFF",
    "PLEASANTRY_PATTERNS",
    "PREAMBLE_RE",
    "RULE_KINDS",
    "SPEAKER_WORDS",
    "SUPPORT_FLOOR_GRID",
    "SUPPORT_RULES",
    "Context",
    "Signals",
    "SupportDetail",
    "answer_correct",
    "answer_relevance",
    "attribution",
    "clean_claim",
    "context_quality",
    "correctness",
    "fact_covered",
    "from_expected_source",
    "groundedness",
    "hedging",
    "is_abstention",
    "kind_off",
    "relevance",
    "response_signals",
    "rules_on",
    "signal_disagreement",
    "specificity",
    "support",
    "support_detail",
]
