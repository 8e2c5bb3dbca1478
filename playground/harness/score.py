"""Deterministic scorers: transparent functions of strings and tokens.

No models, no network, no randomness; tokenisation rules are in
:mod:`playground.harness.tokens`.  Every scorer returns a float in [0, 1].

Support (faithfulness of a claim to the retrieved context)
==========================================================
:func:`support` / :func:`support_detail`, computed in seven steps:

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

import math
import re
from bisect import bisect_left
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import chain
from typing import TYPE_CHECKING, Any, NamedTuple, NoReturn

from playground.harness.signals import Signals
from playground.harness.textnorm import normalise_output
from playground.harness.tokens import (
    Analysis,
    KeySet,
    analyze,
    context_keys,
    identifier_present,
    match_key,
    match_keys,
    stem,
)

if TYPE_CHECKING:
    from playground.model import Locator

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
    "signal_disagreement",
    "specificity",
    "support",
    "support_detail",
]

#: The shipped support floor of each kind of text (:data:`KINDS`), used when a dataset's own labels are
#: too few to calibrate one, chosen on the tuning parts of the real data (docs/scorers.md): summary by the
#: ``reweighted`` rule of :mod:`playground.calibrate.floor_rules` (``playground calibrate goals
#: --tuning-cv``), dialogue as BEGIN's tuning-part CV chooses it in four of five folds (``playground
#: calibrate ablation --tuning-cv``); qa keeps 0.55 (the rule would choose 0.50: docs/scorers.md says why
#: it was not changed).  The automatic label is ``support(...) >= floor``.
DEFAULT_SUPPORT_FLOORS: dict[str, float] = {"qa": 0.55, "summary": 0.50, "dialogue": 0.75}
#: The shipped support floor of the default kind (qa): the harness configuration's default
#: ``scoring.support_floor`` (one source of truth; ``configs/*.yaml`` do not repeat it).
DEFAULT_SUPPORT_FLOOR: float = DEFAULT_SUPPORT_FLOORS["qa"]
#: The shipped correctness floor (``scoring.correctness_floor``): correctness is support against the
#: reference answer and facts, on the golden set's authored keys best near 0.70.
DEFAULT_CORRECTNESS_FLOOR: float = 0.70
#: Candidate floors for calibrating the support score: 0.05 .. 0.95 step 0.05
#: (all above :data:`EXACT_MISS_SCORE`, so a missing exact item is never
#: supported at any candidate; a coarse grid keeps the choice stable).
SUPPORT_FLOOR_GRID: tuple[float, ...] = tuple(round(0.05 * i, 2) for i in range(1, 20))
#: Score of a claim whose number, identifier or name is missing from the context.
EXACT_MISS_SCORE: float = 0.0
#: A passage is relevant to a query when ``relevance >= this``.  Not
#: calibrated against human labels (none exist yet); on the synthetic golden
#: set's authored passage keys 0.5 agreed better than 0.4 (kappa 0.40 vs 0.30).
DEFAULT_RELEVANCE_THRESHOLD: float = 0.5

#: Words about the answer itself rather than the world (dropped from the
#: content tokens of claims): compared by stem.
DISCOURSE_WORDS: frozenset[str] = frozenset(
    stem(w) for w in [
        "passage", "passages", "context", "provided", "given", "based", "according", "mentioned", "mention",
        "states", "stated", "summary", "article", "text", "source", "sources", "document", "documents",
        "excerpt", "excerpts", "answer", "question", "following", "below", "above", "here", "word", "words",
        "tip", "tips", "step", "steps", "way", "ways", "information",
        # discourse markers of model answers (what is left of a refusal or pleasantry clause's sentence)
        "unfortunately", "sorry", "sure", "certainly", "overall",
    ]
)

#: Leading answer preambles removed from claims (up to the first colon of a
#: "here is/are" lead-in, or a leading "based on / according to the passages,").
PREAMBLE_RE = re.compile(
    r"""^\s*(?:(?:sure|certainly|of\ course)[!,.]?\s*)?
    (?:(?:based\ on|according\ to|from|using)\s+(?:the|these|this|your)\s+(?:\w+\s+){0,2}?
       (?:passages?|information|context|sources?|texts?|articles?|documents?|excerpts?|knowledge\ base)
       \s*,?\s*)?
    (?:here(?:'s|\ is|\ are)[^:\n]*:)?""",
    re.I | re.X,
)

_SRC = (r"(?:the\s+)?(?:provided\s+|given\s+)?(?:passages?|context|articles?|texts?|sources?|documents?|"
        r"documentation|docs|excerpts?|search\s+results?|knowledge\s+base|information(?:\s+provided)?)")
_NOT = r"(?:do(?:es)?|did)\s*(?:not|n't)"

#: Phrases of an abstention (refusal to answer): regular expressions, case-
#: insensitive.  Used by :func:`is_abstention` and removed (whole clause) from
#: claims before support is scored.
ABSTENTION_PATTERNS: tuple[str, ...] = (
    r"\bi\s+(?:do\s*(?:not|n't)|don't)\s+know\b",
    r"\bi\s*(?:'m|\s+am)\s+not\s+(?:able|sure)\s+(?:to\s+)?(?:answer|find|say)\b",
    r"\bi\s+(?:could\s*(?:not|n't)|can(?:\s*not|'t)|cannot|was\s+unable\s+to|am\s+unable\s+to|"
    r"did\s*(?:not|n't))\s+(?:find|locate|see|answer|determine)\b",
    r"\b(?:unable|not\s+able)\s+to\s+(?:answer|find|determine|provide\s+an?\s+answer)\b",
    rf"\b{_SRC}\s+(?:{_NOT}|lacks?|has\s+no|have\s+no)\s+(?:\w+ly\s+)?"
    r"(?:provide|mention|say|specify|contain|include|state|give|address|discuss|cover|"
    r"offer|explain|list|describe|have|answer)\b",
    r"\b(?:it|they|this|these)\s+(?:do(?:es)?|did)\s*(?:not|n't)\s+(?:\w+ly\s+)?"
    r"(?:mention|say|specify|state|address|discuss|explain|describe|cover|document|give|list|"
    r"provide\s+(?:\w+\s+){0,2}(?:information|details?|guid\w+|instructions?|data|answers?|specifics))\b",
    rf"\b{_SRC}\s+(?:has|have|contains?|holds?)\s+no\b",
    r"\bno\s+(?:specific\s+|relevant\s+|further\s+)?(?:information|mention|details?|data|record)\s+"
    r"(?:about|on|of|regarding|for|in)\b",
    r"\bthere\s+is\s+no\s+(?:\w+\s+)?(?:information|mention|answer)\b",
    r"\b(?:is|are)\s+not\s+(?:clear|specified|mentioned|provided|stated|covered|documented)\s+"
    r"(?:in|from|by)\b",
    r"\bit\s+is\s+(?:not|un)clear\s+(?:from|in|based|how|what|whether|which|if)\b",
    r"\bcannot\s+be\s+(?:determined|answered|found)\b",
    r"\b(?:outside|beyond)\s+(?:the\s+)?(?:scope|knowledge\s+base)\b",
    r"\b(?:i|we)\s+(?:do\s*(?:not|n't)|don't)\s+have\s+(?:any\s+)?(?:information|access|data|details)\b",
    # refusals as models phrase them: "I cannot provide an answer", "unable to give a definitive response"
    r"\b(?:can\s*not|can't|could\s*(?:not|n't)|unable\s+to|not\s+able\s+to)\s+(?:provide|give|offer)\s+"
    r"(?:you\s+(?:with\s+)?)?(?:an?\s+|any\s+|the\s+)?(?:\w+\s+){0,2}?(?:answer|response|information|details?)\b",
    r"\b(?:not|n't)\s+(?:possible|enough\s+information)\s+to\s+(?:answer|determine|say|tell|know)\b",
    r"\b(?:not\s+enough|insufficient|no\s+sufficient)\s+(?:information|context|details?|data)\b",
)
#: Conversational pleasantries removed (whole clause) from claims.
PLEASANTRY_PATTERNS: tuple[str, ...] = (
    r"\bhope\s+(?:this|that|it)\s+helps\b",
    r"\bfeel\s+free\s+to\b",
    r"\blet\s+me\s+know\b",
    r"\bif\s+you\s+have\s+any\s+(?:further\s+|other\s+|more\s+|additional\s+)?questions\b",
    # "Sure, I can help you with that!", "I'd be happy to help", "Great question"
    r"\b(?:i\s+can|i'd\s+be\s+(?:happy|glad)\s+to|i\s+am\s+(?:happy|glad)\s+to|happy\s+to|glad\s+to)\s+"
    r"(?:help|assist)(?:\s+you)?(?:\s+with\s+(?:that|this|it|your\s+question))?(?=\s*[!.,;:]|\s*$)",
    r"\bgreat\s+question\b",
)
#: Every pattern of :data:`ABSTENTION_PATTERNS` and :data:`PLEASANTRY_PATTERNS`
#: starts with ``\b`` and then one of these letters (a test matches each pattern
#: on an example and compares the combined expressions with a plain alternation).
CLAUSE_FIRST_LETTERS = "abcdefghiklnopstuw"


def _alternatives(patterns: Sequence[str]) -> str:
    r"""One expression that matches where the first of ``patterns`` to match does, with the same
    span: ``\b``, a look-ahead for :data:`CLAUSE_FIRST_LETTERS`, then the patterns without their
    ``\b``.  Checking the letter first spares the engine trying every alternative at every word
    start (9.1 -> 5.5 us per claim that reaches the expression)."""
    if not all(p.startswith(r"\b") for p in patterns):
        raise ValueError("every abstention and pleasantry pattern must start with \\b")
    return rf"\b(?=[{CLAUSE_FIRST_LETTERS}])(?:" + "|".join(f"(?:{p[2:]})" for p in patterns) + ")"


# The patterns are written in lower case and applied to lower-cased text (much
# faster than re.I); :func:`_lower_same` falls back to re.I when lower-casing
# changes the length of the text (rare non-ASCII letters).
_REMOVABLE_RE = re.compile(_alternatives(ABSTENTION_PATTERNS + PLEASANTRY_PATTERNS))
_ABSTENTION_RE_I = re.compile(_alternatives(ABSTENTION_PATTERNS), re.I)
_REMOVABLE_RE_I = re.compile(_REMOVABLE_RE.pattern, re.I)
# Every abstention or pleasantry pattern contains one of these substrings: a
# text without any of them cannot match (a cheap pre-check).
_TRIGGERS: tuple[str, ...] = ("not", "n't", "unable", "lack", "no ", "no\n", "unclear",
                              "outside", "beyond", "hope", "free", "let me", "question", "insufficient",
                              "help", "assist")
# Clause boundaries: sentence punctuation, a comma, colon or semicolon
# followed by space or the end, line breaks, brackets.
_DELIM_RE = re.compile(r"[.!?:;,](?=\s|$)|[\n()\[\]]")


def _lower_same(text: str) -> tuple[str, bool]:
    low = text.lower()
    return low, len(low) == len(text)


def _may_trigger(low: str) -> bool:
    """Whether ``low`` holds any of :data:`_TRIGGERS`: one ``in`` per trigger, written out (half the
    instructions of ``any(map(low.__contains__, _TRIGGERS))``; a test checks it against the tuple)."""
    return ("not" in low or "n't" in low or "unable" in low or "lack" in low or "no " in low or "no\n" in low
            or "unclear" in low or "outside" in low or "beyond" in low or "hope" in low or "free" in low
            or "let me" in low or "question" in low or "insufficient" in low or "help" in low or "assist" in low)


def _remove_clauses(text: str) -> tuple[str, tuple[str, ...]]:
    """Remove every clause (text between :data:`_DELIM_RE` boundaries, its
    closing delimiter included) that contains an abstention or pleasantry."""
    low, same = _lower_same(text)
    if not _may_trigger(low if same else text.lower()):
        return text, ()
    rx, target = (_REMOVABLE_RE, low) if same else (_REMOVABLE_RE_I, text)
    matches = list(rx.finditer(target))
    if not matches:
        return text, ()
    delims = [m.start() for m in _DELIM_RE.finditer(text)]
    spans: list[tuple[int, int]] = []
    for m in matches:
        i = bisect_left(delims, m.start())
        a = delims[i - 1] + 1 if i > 0 else 0
        j = bisect_left(delims, m.end())
        b = delims[j] + 1 if j < len(delims) else len(text)
        if spans and a <= spans[-1][1]:
            spans[-1] = (spans[-1][0], max(b, spans[-1][1]))
        else:
            spans.append((a, b))
    removed = tuple(text[a:b].strip() for a, b in spans if text[a:b].strip())
    out, last = [], 0
    for a, b in spans:
        out.append(text[last:a])
        out.append(" ")
        last = b
    out.append(text[last:])
    return "".join(out), removed


#: Hedge phrases (case-insensitive, whole words): lower specificity.
HEDGE_PATTERNS: tuple[str, ...] = (
    "may", "might", "could", "can vary", "may vary", "typically", "generally", "usually",
    "often", "sometimes", "possibly", "perhaps", "probably", "likely", "it depends",
    "depending on", "depends on", "in some cases", "in most cases", "approximately",
    "roughly", "around", "about", "somewhat", "i think", "i believe", "it seems",
    "seems to", "tends to", "not sure", "in general", "various", "some",
)
_HEDGE_RE = re.compile(  # applied to lower-cased text
    r"\b(?:" + "|".join(re.escape(h).replace(r"\ ", r"\s+") for h in
                        sorted(HEDGE_PATTERNS, key=len, reverse=True)) + r")\b")
#: Substrings one of which every :data:`HEDGE_PATTERNS` phrase contains: text
#: without any of them has no hedge (a cheap pre-check before the regex).
HEDGE_HINTS: tuple[str, ...] = (
    "may", "might", "could", "vary", "typical", "general", "usual", "often", "some", "possibl", "perhaps",
    "probabl", "likely", "depend", "cases", "approximately", "rough", "around", "about", "think", "believe",
    "seem", "tend", "sure", "various",
)
_HEDGE_HINT_RE = re.compile("|".join(map(re.escape, HEDGE_HINTS)))
#: The longest word of each :data:`HEDGE_PATTERNS` phrase: a phrase matches only where
#: this word stands whole, so a sentence none of whose tokens (``Analysis.words``) is one
#: of these has no hedge -- unless it holds a token kept whole around a word boundary: an
#: identifier (``.``, ``:``, code spans, paths) or a word joined by an apostrophe
#: (``might've``); such sentences go to the expressions.
HEDGE_KEY_WORDS: frozenset[str] = frozenset(max(h.split(), key=len) for h in HEDGE_PATTERNS)
_SENT_RE = re.compile(r"[^.!?\n]+[.!?]*")
_CITE_RE = re.compile(r"\[(\d+(?:\s*,\s*\d+)*)\]")


# --------------------------------------------------------------------------- context


class Context:
    """Retrieved passages with their match keys precomputed once.

    Accepts a string (one passage), a sequence of strings, or a ``Context``
    (returned as is by :meth:`of`).  Empty strings are ignored.  Objects with a
    ``text`` attribute (e.g. :class:`playground.model.Passage`) are accepted as
    passages.  Immutable after construction.  ``keys`` is the union of the
    passages' keys (:func:`playground.harness.tokens.context_keys`).
    """

    __slots__ = ("_lowered", "_words", "keys", "passage_keys", "passages")

    passages: tuple[str, ...]
    passage_keys: tuple[KeySet, ...]
    keys: KeySet
    _lowered: str | None
    _words: Counter[str] | None

    def __init__(self, context: str | Sequence[str] | Context):
        if isinstance(context, Context):
            passages = context.passages
        elif isinstance(context, str):
            passages = (context,) if context else ()
        else:
            passages = tuple(p for p in map(_text_of, context) if p)
        pk = tuple(map(context_keys, passages))
        object.__setattr__(self, "passages", passages)
        object.__setattr__(self, "passage_keys", pk)
        object.__setattr__(self, "keys", pk[0] if len(pk) == 1 else _union_keys(passages, pk))
        object.__setattr__(self, "_lowered", None)
        object.__setattr__(self, "_words", None)

    def _single(self, i: int) -> Context:
        """The context of passage ``i`` alone (its keys already computed)."""
        one = object.__new__(Context)
        keys = self.passage_keys[i]
        object.__setattr__(one, "passages", (self.passages[i],))
        object.__setattr__(one, "passage_keys", (keys,))
        object.__setattr__(one, "keys", keys)
        object.__setattr__(one, "_lowered", None)
        object.__setattr__(one, "_words", None)
        return one

    def __setattr__(self, name: str, value: object) -> NoReturn:
        raise AttributeError("Context is immutable")

    def __len__(self) -> int:
        return len(self.passages)

    def __repr__(self) -> str:
        return f"Context({len(self.passages)} passages, {len(self.keys)} keys)"

    @property
    def lowered(self) -> str:
        """The passages lower-cased and joined by blank lines (computed once)."""
        low = self._lowered
        if low is None:
            low = "\n\n".join(self.passages).lower().replace("’", "'")
            object.__setattr__(self, "_lowered", low)
        return low

    @property
    def words(self) -> Counter[str]:
        """How often each ROUGE-1 token (lower-cased ``[a-z0-9]+`` run) occurs in the passages (computed once)."""
        words = self._words
        if words is None:
            words = Counter(_ROUGE_TOKEN_RE.findall(self.lowered))
            object.__setattr__(self, "_words", words)
        return words

    def has(self, token: str, identifier: bool = False) -> bool:
        """Whether a claim token (stem, number value, name stem, or -- with
        ``identifier`` -- a lower-cased identifier) is present in the context."""
        if identifier:
            return identifier_present(token, self.keys, self.lowered if token.isalpha() else "")
        return match_key(token) in self.keys

    @classmethod
    def of(cls, context: str | Sequence[str] | Context) -> Context:
        """``context`` itself if it is a Context, else a new one."""
        return context if isinstance(context, Context) else cls(context)


def _union_keys(passages: tuple[str, ...], passage_keys: tuple[KeySet, ...]) -> KeySet:
    """Union of the passages' keys, cached by the passages (the responses of
    one case share their retrieved passages)."""
    keys = _UNIONS.get(passages)
    if keys is None:
        keys = dict.fromkeys(chain.from_iterable(passage_keys))
        if len(_UNIONS) >= _UNION_CACHE_SIZE:
            _UNIONS.clear()
        _UNIONS[passages] = keys
    return keys


_UNIONS: dict[tuple[str, ...], KeySet] = {}
_UNION_CACHE_SIZE = 256


def _text_of(p: object) -> str:
    if isinstance(p, str):
        return p
    text = getattr(p, "text", None)
    if isinstance(text, str):
        return text
    raise TypeError(f"a passage must be a string or have a .text string, got {type(p).__name__}")


# --------------------------------------------------------------------------- support

#: ROUGE-1 tokens (the ``rouge`` rule): lower-cased runs of ASCII letters and digits, as ``rouge_score``'s.
_ROUGE_TOKEN_RE = re.compile(r"[a-z0-9]+")


class _ClaimView(NamedTuple):
    cleaned: str
    removed: tuple[str, ...]
    analysis: Analysis
    content: tuple[str, ...]          # distinct content tokens (discourse words dropped)
    content_keys: tuple[str | None, ...]  # match key per content token, None = identifier
    number_keys: tuple[str, ...]
    identifiers: tuple[str, ...]
    name_keys: tuple[tuple[str, str], ...]  # (name stem, key)
    abstained: bool                   # an abstention clause was removed
    n_content: int                    # content token occurrences, discourse words dropped
    speaker: tuple[str, ...] = ()     # speaker items (step 3): pronouns found, and "?"
    words: tuple[tuple[str, int], ...] = ()  # ROUGE-1 tokens and counts of the normalised claim (rouge rule)
    n_words: int = 0                  # how many ROUGE-1 tokens it has


#: The rules of :func:`support`, each switchable off (``off=``) for the ablation
#: (``playground calibrate ablation``): ``artefacts`` (step 0, chat-template
#: tokens, markdown, URLs and unicode variants normalised:
#: :mod:`playground.harness.textnorm`), ``preamble`` (step 1, leading answer
#: preamble removed), ``clauses`` (step 1, abstention and pleasantry clauses
#: removed), ``markers`` (step 1, citation and list markers removed),
#: ``discourse`` (step 2, :data:`DISCOURSE_WORDS` dropped), ``speaker`` (step 3,
#: first-person pronouns and a question mark count as missing content),
#: ``numbers``, ``identifiers``, ``names`` (step 4, each kind of exact item must
#: be present), ``rouge`` (step 6, the score averaged with the claim's ROUGE-1 precision).
SUPPORT_RULES: tuple[str, ...] = ("artefacts", "preamble", "clauses", "markers", "discourse", "speaker", "numbers",
                                  "identifiers", "names", "rouge")
#: Speaker items of step 3: first-person pronouns, as lower-cased word tokens of
#: the cleaned claim (so ``i.e.`` is not one); a question mark is counted
#: separately (once per claim).
SPEAKER_WORDS: frozenset[str] = frozenset({"i", "i'm", "i've", "i'd", "i'll", "me", "my", "myself"})
_NO_RULES_OFF: frozenset[str] = frozenset()

#: The kinds of text a dataset can hold: ``qa`` (answers to questions over retrieved passages; the
#: default of an imported dataset and of the golden set), ``summary`` (summaries of a given text) and
#: ``dialogue`` (conversational turns grounded in a knowledge snippet).
KINDS: tuple[str, ...] = ("qa", "summary", "dialogue")
DEFAULT_KIND = "qa"
_ALL_KINDS = frozenset(KINDS)
#: The kinds of text each rule of :data:`SUPPORT_RULES` is for.  A rule is switched off for a kind
#: when switching it off raises both ROC AUC and 5-fold cross-validated kappa on that kind's tuning
#: data by at least 0.005 (``playground calibrate ablation --tuning-cv``; figures in docs/scorers.md):
#: *speaker* is for dialogue only, *names* is off for qa.  A new rule is switched on for a kind when it
#: raises ROC AUC or CV kappa there by at least 0.005 and lowers neither by as much: *rouge* is for
#: summary (kappa +0.038, AUC +0.000) and dialogue (AUC +0.014, kappa +0.004), not qa (kappa -0.036).
#: *markers* is kept for qa although switching it off scores better there: the gain comes from list
#: ordinals ("7.") demanded as exact numbers, which would score correct numbered answers 0 on other data
#: (docs/scorers.md).
RULE_KINDS: dict[str, frozenset[str]] = {
    **dict.fromkeys(SUPPORT_RULES, _ALL_KINDS),
    "speaker": frozenset({"dialogue"}),
    "names": frozenset({"summary", "dialogue"}),
    "rouge": frozenset({"summary", "dialogue"}),
}
#: The rules switched off for each kind (the complement of :data:`RULE_KINDS`).
KIND_OFF: dict[str, frozenset[str]] = {
    kind: frozenset(r for r in SUPPORT_RULES if kind not in RULE_KINDS[r]) for kind in KINDS
}


def _rules_off(off: Iterable[str], kind: str | None = DEFAULT_KIND) -> frozenset[str]:
    out = frozenset(off)
    bad = sorted(out - set(SUPPORT_RULES))
    if bad:
        raise ValueError(f"unknown support rule(s) {', '.join(bad)} (known: {', '.join(SUPPORT_RULES)})")
    return out | kind_off(kind)


def kind_off(kind: str | None) -> frozenset[str]:
    """The rules switched off for ``kind`` (:data:`KIND_OFF`; none for ``None``, which the ablation uses
    to switch rules on and off by hand); a ``ValueError`` names an unknown kind."""
    if kind is None:
        return _NO_RULES_OFF
    off = KIND_OFF.get(kind)
    if off is None:
        raise ValueError(f"unknown kind of text {kind!r} (known: {', '.join(KINDS)})")
    return off


@lru_cache(maxsize=8_192)
def _claim_view(claim: str, off: frozenset[str] = _NO_RULES_OFF) -> _ClaimView:
    text = normalise_output(claim) if "artefacts" not in off else claim
    if not text.isascii():  # an ASCII text has no curly quote
        text = text.replace("’", "'").replace("‘", "'")
    removed: list[str] = []
    m = PREAMBLE_RE.match(text) if "preamble" not in off else None
    if m and m.end() > 0 and text[: m.end()].strip():
        removed.append(text[: m.end()].strip())
        text = text[m.end():]
    gone: tuple[str, ...] = ()
    if "clauses" not in off:
        text, gone = _remove_clauses(text)
    removed.extend(gone)
    abstained = bool(gone) and any(_ABSTENTION_RE_I.search(g) for g in gone)
    words = () if "rouge" in off else tuple(Counter(_ROUGE_TOKEN_RE.findall(text.lower())).items())
    a = analyze(text, markers="markers" not in off)
    all_content = [t for t in a.content if t not in DISCOURSE_WORDS] if "discourse" not in off else list(a.content)
    content = tuple(dict.fromkeys(all_content))
    ids = a.identifiers
    keys = tuple(None if t in ids else match_key(t) for t in content) if ids else tuple(match_keys(content))
    return _ClaimView(text, tuple(removed), a, content, keys,
                      (tuple(sorted(a.numbers)) if a.numbers else ()) if "numbers" not in off else (),
                      (tuple(sorted(ids)) if ids else ()) if "identifiers" not in off else (),
                      (tuple((n, match_key(n)) for n in sorted(a.names)) if a.names else ())
                      if "names" not in off else (),
                      abstained, len(all_content), _speaker(text, a.words) if "speaker" not in off else (),
                      words, sum(n for _, n in words))


_QA_OFF = KIND_OFF[DEFAULT_KIND]
_NO_SPEAKER: tuple[str, ...] = ()
_QUESTION: tuple[str, ...] = ("?",)


def _speaker(text: str, words: tuple[str, ...]) -> tuple[str, ...]:
    if SPEAKER_WORDS.isdisjoint(words):  # most claims: one pass in C
        return _QUESTION if "?" in text else _NO_SPEAKER
    items = tuple(w for w in words if w in SPEAKER_WORDS)
    return (*items, "?") if "?" in text else items


def clean_claim(claim: str) -> str:
    """The claim after step 1 of support (preamble, abstention and pleasantry
    clauses removed; markers are removed later, by tokenisation)."""
    return _claim_view(claim, _QA_OFF).cleaned


@dataclass(frozen=True)
class SupportDetail:
    """Why a claim got its support score (see the module docstring).

    ``score``: the support score.  ``coverage``: share of ``content_tokens``
    present in the context.  ``matched_tokens``/``missing_tokens``: the content
    tokens found / not found.  ``exact_items``: the claim's numbers,
    identifiers and names; ``missing_numbers``/``missing_identifiers``/
    ``missing_names`` those not in the context, ``missing_exact`` all three.
    ``removed``: text removed in step 1 (preamble, abstention, pleasantry).
    ``best_passage``: index of the single passage with the highest coverage
    (None without passages), ``best_passage_coverage`` that coverage.
    ``negations``: negation words in the cleaned claim.  ``speaker_items``:
    first-person pronouns and ``"?"`` found (step 3; each counts as missing).
    """

    score: float
    coverage: float
    content_tokens: tuple[str, ...]
    matched_tokens: tuple[str, ...]
    missing_tokens: tuple[str, ...]
    exact_items: tuple[str, ...]
    missing_numbers: tuple[str, ...]
    missing_identifiers: tuple[str, ...]
    missing_names: tuple[str, ...]
    removed: tuple[str, ...] = ()
    best_passage: int | None = None
    best_passage_coverage: float = 0.0
    negations: tuple[str, ...] = ()
    speaker_items: tuple[str, ...] = ()

    @property
    def missing_exact(self) -> tuple[str, ...]:
        """Numbers, identifiers and names of the claim missing from the context."""
        return self.missing_numbers + self.missing_identifiers + self.missing_names

    def supported(self, floor: float = DEFAULT_SUPPORT_FLOOR) -> bool:
        """The automatic label: ``score >= floor``."""
        return self.score >= floor


def _present(v: _ClaimView, ctx: Context) -> list[bool]:
    keys = ctx.keys
    return [ctx.has(t, True) if k is None else k in keys
            for t, k in zip(v.content, v.content_keys, strict=False)]


def _exact_ok(v: _ClaimView, ctx: Context) -> bool:
    keys = ctx.keys
    for x in v.number_keys:
        if x not in keys:
            return False
    for _, k in v.name_keys:
        if k not in keys:
            return False
    return all(ctx.has(x, True) for x in v.identifiers)


def _coverage(v: _ClaimView, hits: int) -> float:
    """Step 3: ``hits / (content tokens + speaker items)``; 1.0 when nothing is checked (0.0 when only
    speaker items are)."""
    n = len(v.content) + len(v.speaker)
    if not n:
        return 1.0
    return hits / n


def _hits(v: _ClaimView, ctx: Context) -> int:
    """How many of the claim's content tokens are present in the context (``sum(_present(v, ctx))``,
    without the list)."""
    keys = ctx.keys
    hit = 0
    for t, k in zip(v.content, v.content_keys, strict=False):
        if (k in keys) if k is not None else ctx.has(t, True):
            hit += 1
    return hit


def _score(v: _ClaimView, ctx: Context) -> float:
    """Steps 3-6 of support for a claim view: the one computation behind :func:`support` and
    :func:`support_detail`."""
    score = _coverage(v, _hits(v, ctx)) if _exact_ok(v, ctx) else EXACT_MISS_SCORE
    if v.words:
        return (score + _rouge1_precision(v, ctx)) / 2
    return score


def _rouge1_precision(v: _ClaimView, ctx: Context) -> float:
    """Step 6 (the ``rouge`` rule): the ROUGE-1 precision of the claim against the context, as
    ``rouge_score`` computes it without stemming -- ``sum_w min(n_claim(w), n_context(w)) / n_claim`` over
    lower-cased ``[a-z0-9]+`` tokens of the claim after step 1's preamble and clause removal (0.0 without
    tokens; :func:`_score` then keeps the score of step 5)."""
    if not v.n_words:
        return 0.0
    words = ctx.words
    return sum(min(n, words[w]) for w, n in v.words) / v.n_words


def _view(claim: str, off: Iterable[str], kind: str | None) -> _ClaimView:
    if not off and kind == DEFAULT_KIND:
        return _claim_view(claim, _QA_OFF)
    return _claim_view(claim, _rules_off(off, kind))


def support(claim: str, context: str | Sequence[str] | Context, *, off: Iterable[str] = (),
            kind: str | None = DEFAULT_KIND) -> float:
    """Support score of ``claim`` by ``context`` in [0, 1] (module docstring):
    content-token coverage, or 0.0 when a number, identifier or capitalised
    name of the claim is missing from the context.  Supported when
    ``>= floor`` (default :data:`DEFAULT_SUPPORT_FLOOR`).  ``kind``: the kind of
    text (:data:`KINDS`), which switches off the rules not for it
    (:data:`RULE_KINDS`; ``None``: every rule on); ``off`` names further rules of
    :data:`SUPPORT_RULES` to switch off (for the ablation)."""
    return _score(_view(claim, off, kind), Context.of(context))


def support_detail(claim: str, context: str | Sequence[str] | Context, *,
                   kind: str = DEFAULT_KIND) -> SupportDetail:
    """:func:`support` with its evidence (:class:`SupportDetail`); ``score`` is :func:`support`'s."""
    ctx = Context.of(context)
    v = _view(claim, (), kind)
    present = _present(v, ctx)
    matched = tuple(t for t, p in zip(v.content, present, strict=False) if p)
    missing = tuple(t for t, p in zip(v.content, present, strict=False) if not p)
    keys = ctx.keys
    nums = tuple(x for x in v.number_keys if x not in keys)
    ids = tuple(x for x in v.identifiers if not ctx.has(x, True))
    names = tuple(n for n, k in v.name_keys if k not in keys)
    best, best_cov = None, 0.0
    for i in range(len(ctx.passages)):
        c = _coverage(v, _hits(v, ctx._single(i)))
        if best is None or c > best_cov:
            best, best_cov = i, c
    a = v.analysis
    exact = tuple(sorted(a.numbers)) + tuple(sorted(a.identifiers)) + tuple(sorted(a.names))
    return SupportDetail(
        score=_score(v, ctx), coverage=_coverage(v, len(matched)), content_tokens=v.content,
        matched_tokens=matched, missing_tokens=missing, exact_items=exact, missing_numbers=nums,
        missing_identifiers=ids, missing_names=names, removed=v.removed, best_passage=best,
        best_passage_coverage=best_cov, negations=a.negations, speaker_items=v.speaker,
    )


# --------------------------------------------------------------------------- correctness


def correctness(claim: str, reference_answer: str, facts_texts: Sequence[str] = (), *,
                kind: str = DEFAULT_KIND) -> float:
    """Support of ``claim`` against the reference answer and the reference facts
    taken as passages (same rules as :func:`support` for ``kind``)."""
    return support(claim, [reference_answer, *facts_texts], kind=kind)


def _norm(text: str) -> str:
    return " ".join(text.replace("’", "'").replace("‘", "'").split()).casefold()


def is_abstention(text: str) -> bool:
    """Whether a response (or claim) abstains: a conservative refusal detector.

    True when (a) a clause with one of :data:`ABSTENTION_PATTERNS` ("I don't
    know", "I couldn't find", "the knowledge base does not cover", "no
    information about", "unable to answer", "is not mentioned in", "outside
    the scope" ...) is found after the answer preamble and (b) the rest of the
    text -- preamble, abstention and pleasantry clauses removed, as in
    :func:`clean_claim` -- holds no number or identifier and at most
    :data:`ABSTENTION_MAX_CONTENT` (12) content tokens.  Condition (b) keeps
    answers that refuse and then answer anyway ("the docs don't say, but the
    limit is 7 attempts") from counting as abstentions.
    """
    return _is_abstention(text)


#: An abstaining text may keep at most this many content tokens besides its
#: abstention and pleasantry clauses (and no number or identifier).
ABSTENTION_MAX_CONTENT = 12


def _abstains(views: Sequence[_ClaimView]) -> bool:
    if not any(v.abstained for v in views):
        return False
    if any(v.analysis.numbers or v.analysis.identifiers for v in views):
        return False
    return sum(v.n_content for v in views) <= ABSTENTION_MAX_CONTENT


@lru_cache(maxsize=4_096)
def _is_abstention(text: str) -> bool:
    low = text.lower()
    if not _may_trigger(low.replace("’", "'")):
        return False
    return _abstains([_claim_view(text, _QA_OFF)])


def fact_covered(response_text: str, accept: Sequence[str]) -> bool:
    """A reference fact is covered when one of its ``accept`` strings is
    contained in the response, case-insensitively after collapsing whitespace
    (and straightening curly apostrophes).  Empty accept strings never match."""
    r = _norm(response_text)
    return any(a_n and a_n in r for a_n in (_norm(a) for a in accept))


def answer_correct(response_text: str, accepted: Sequence[str], *,
                   must_abstain: bool = False) -> bool:
    """Answer-level correctness.

    For cases that must be abstained on (``must_abstain``: out of scope,
    cross-tenant) correct exactly when :func:`is_abstention`; otherwise correct
    when any accepted string is contained in the response (as
    :func:`fact_covered`).
    """
    if must_abstain:
        return is_abstention(response_text)
    return fact_covered(response_text, accepted)


# --------------------------------------------------------------------------- relevance


@lru_cache(maxsize=4_096)
def _query_keys(query: str) -> tuple[str, ...]:
    """Match keys of the query's distinct content tokens (identifiers whole)."""
    return tuple(dict.fromkeys(map(match_key, analyze(query).content)))


def relevance(query: str, passage_text: str) -> float:
    """Query-passage relevance in [0, 1]: the share of the query's distinct
    content tokens (stopwords dropped, light stemming, numbers and identifiers
    kept) present in the passage, matched by key as in :func:`support` (the
    first five letters of the stem; number values; identifiers whole -- an
    alphabetic identifier by its key here).  0.0 for a query without content
    tokens.  Relevant when ``>= DEFAULT_RELEVANCE_THRESHOLD`` (0.5).

    This is a *production* signal (no ground truth); compare
    :func:`from_expected_source`, the gold signal.
    """
    q = _query_keys(query)
    if not q:
        return 0.0
    keys = context_keys(_text_of(passage_text))
    return sum(map(keys.__contains__, q)) / len(q)


def from_expected_source(passage: object, expected_sources: Iterable[Locator]) -> bool:
    """Gold signal (evaluation only, not available in production): whether the
    passage's locator (a :class:`playground.model.Locator`, or an object with a
    ``locator``) is one of the case's expected sources; tenant and slug must be
    equal and headings equal after slugging."""
    from playground.model import slugify

    loc: Any = getattr(passage, "locator", passage)  # a Locator, or anything with a .locator
    key = (loc.tenant, loc.slug, slugify(loc.heading))
    return any((e.tenant, e.slug, slugify(e.heading)) == key for e in expected_sources)


def context_quality(query: str, passages: Sequence[str] | Context) -> float:
    """Mean :func:`relevance` of the retrieved passages to the query (0.0 when
    there are none): how much of what was retrieved is on topic."""
    if isinstance(passages, Context):
        keys = passages.passage_keys
    else:
        keys = tuple(context_keys(p) for p in map(_text_of, passages) if p)
    if not keys:
        return 0.0
    q = _query_keys(query)
    if not q:
        return 0.0
    n = len(q)
    return sum([sum(map(pk.__contains__, q)) / n for pk in keys]) / len(keys)


def _content_keys(text: str) -> frozenset[str]:
    """Match keys of the content tokens of a response or sentence."""
    return frozenset(match_keys(analyze(text).content))


def _answer_relevance(query: str, response_keys: frozenset[str]) -> float:
    q = _query_keys(query)
    if not q:
        return 0.0
    return sum(map(response_keys.__contains__, q)) / len(q)


def answer_relevance(query: str, response: str) -> float:
    """Share of the query's content tokens among the response's content tokens
    (both by match key, as in :func:`relevance`); 0.0 for an abstention (it
    does not answer) and for a query without content tokens."""
    if is_abstention(response):
        return 0.0
    return _answer_relevance(query, _content_keys(response))


# --------------------------------------------------------------------------- style signals


def _sentence_spans(text: str) -> list[tuple[int, int]]:
    return [(m.start(), m.end()) for m in _SENT_RE.finditer(text) if m.group(0).strip()]


def _sentence_count(text: str) -> int:
    """``len(_sentence_spans(text))`` (a span is never empty, so blank is isspace)."""
    return sum(1 for g in _SENT_RE.findall(text) if not g.isspace())


def _may_hedge(low: str) -> bool:
    """False when the lower-cased text holds no :data:`HEDGE_HINTS` substring, so
    no hedge phrase."""
    return _HEDGE_HINT_RE.search(low) is not None


def _hedge_counts(text: str, low: str | None = None) -> tuple[int, int]:
    """``(sentences with a hedge, sentences)`` of ``text`` (``low``: ``text.lower()``, if already made)."""
    spans = _sentence_spans(text)
    if not spans:
        return 0, 0
    if low is None:
        low = text.lower()
    if len(low) != len(text):  # pragma: no cover - rare non-ASCII case changes
        return sum(1 for a, b in spans if _HEDGE_RE.search(text[a:b].lower())), len(spans)
    if not _may_hedge(low):
        return 0, len(spans)
    hits = [m.start() for m in _HEDGE_RE.finditer(low)]
    if not hits:
        return 0, len(spans)
    n = 0
    for a, b in spans:
        i = bisect_left(hits, a)
        if i < len(hits) and hits[i] < b:
            n += 1
    return n, len(spans)


def _sentence_hedges(text: str, a: Analysis) -> tuple[int, int]:
    """:func:`_hedge_counts` of ``text`` whose analysis is ``a``, without a regular expression
    for most texts: one none of whose tokens is a :data:`HEDGE_KEY_WORDS` word, with no
    identifier and no apostrophe, has no hedge (only its sentences are counted)."""
    if (not a.identifiers and HEDGE_KEY_WORDS.isdisjoint(a.words)
            and "'" not in text and "’" not in text and "‘" not in text):
        return 0, _sentence_count(text)
    low = text.lower()
    if len(low) == len(text) and not _may_hedge(low):
        return 0, _sentence_count(text)
    return _hedge_counts(text, low)


def hedging(text: str) -> float:
    """Share of the text's sentences (split at ``. ! ?`` and line breaks) that
    contain at least one :data:`HEDGE_PATTERNS` phrase ("may", "might",
    "typically", "it depends", "generally" ...); 0.0 for empty text."""
    h, n = _hedge_counts(text)
    return h / n if n else 0.0


def specificity(text: str) -> float:
    """How specific the text is: ``density * (1 - hedging / 2)`` where
    ``density = min(1, exact / content)`` -- occurrences of numbers,
    identifiers and capitalised names per content token -- and ``hedging`` is
    :func:`hedging`.  0.0 for text without content tokens.  A confident
    answer full of figures scores high; "it may vary" scores low."""
    a = analyze(text)
    if not a.content:
        return 0.0
    density = min(1.0, a.exact_count / len(a.content))
    return density * (1.0 - hedging(text) / 2.0)


# --------------------------------------------------------------------------- response level


def groundedness(sentences: Sequence[str], context: str | Sequence[str] | Context, *,
                 kind: str = DEFAULT_KIND) -> float:
    """Mean :func:`support` of the response's sentences by the whole context
    (0.0 when there are no sentences)."""
    sents = [s for s in sentences if s and s.strip()]
    if not sents:
        return 0.0
    ctx = Context.of(context)
    return sum(support(s, ctx, kind=kind) for s in sents) / len(sents)


def attribution(sentences: Sequence[str], passages: Sequence[str] | Context,
                floor: float = DEFAULT_SUPPORT_FLOOR, *, kind: str = DEFAULT_KIND) -> float:
    """Share of sentences supported by a *single* passage (0.0 without sentences).

    A sentence with citation markers ``[n]`` (1-based) is attributed when one
    of the cited passages supports it (``support >= floor``); a citation to a
    passage that does not exist attributes nothing.  A sentence without
    citations is attributed when its best single passage supports it.  Unlike
    :func:`groundedness`, a sentence stitched from several passages, or one
    that cites the wrong passage, is not attributed.
    """
    sents = [s for s in sentences if s and s.strip()]
    if not sents:
        return 0.0
    ctx = Context.of(passages)
    return _attribution(sents, ctx, floor, [support(s, ctx, kind=kind) for s in sents], kind)


def _attribution(sents: Sequence[str], ctx: Context, floor: float, supports: Sequence[float],
                 kind: str = DEFAULT_KIND) -> float:
    """:func:`attribution` of non-empty ``sents`` whose support by the whole
    context is ``supports``."""
    singles: list[Context | None] = [None] * len(ctx.passages)
    hit = 0
    for s, sup in zip(sents, supports, strict=True):
        # A single passage's keys are a subset of the union's, so a sentence
        # the whole context does not support is supported by no passage.
        if sup < floor:
            continue
        cites = [int(x) for m in _CITE_RE.finditer(s) for x in m.group(1).split(",")]
        idx = [c - 1 for c in cites if 1 <= c <= len(singles)] if cites else range(len(singles))
        for i in idx:
            single = singles[i]
            if single is None:
                single = singles[i] = ctx._single(i)
            if support(s, single, kind=kind) >= floor:
                hit += 1
                break
    return hit / len(sents)


def signal_disagreement(values: Iterable[float | None]) -> float:
    """Population standard deviation of the signals (``None``/NaN ignored):
    ``sqrt(mean((x - mean(x))^2))``; 0.0 for fewer than two values."""
    xs = [float(v) for v in values if v is not None and not math.isnan(float(v))]
    if len(xs) < 2:
        return 0.0
    m = sum(xs) / len(xs)
    return math.sqrt(sum((x - m) ** 2 for x in xs) / len(xs))


def response_signals(query: str, response: str, sentences: Sequence[str],
                     passages: Sequence[str] | Context,
                     floor: float = DEFAULT_SUPPORT_FLOOR, *, kind: str = DEFAULT_KIND,
                     top_retrieval_similarity: float | None = None) -> Signals:
    """All response-level signals at once (:class:`playground.harness.signals.Signals`), tokenising the
    context once.

    ``sentences`` are the response's claims (e.g. from
    :func:`playground.claims.split_claims`; blank ones are dropped); specificity and hedging are
    computed over them (the same as over ``response`` when they partition it).  ``kind``: the kind of
    text, as for :func:`support`.  ``top_retrieval_similarity``: the best passage's retrieval
    similarity; by default the highest :func:`relevance` of a passage to the query.  ``abstained``:
    the sentences together abstain (:func:`is_abstention`'s rule), or any one of them does -- a good
    refusal may go on to say what the knowledge base does cover.
    """
    ctx = Context.of(passages)
    off = kind_off(kind)
    sents = [s for s in sentences if s and s.strip()]
    claim_support = tuple(support(s, ctx, kind=kind) for s in sents)
    g = sum(claim_support) / len(claim_support) if claim_support else 0.0
    att = _attribution(sents, ctx, floor, claim_support, kind) if sents else 0.0
    # specificity and hedging over the sentences (equal to specificity(response)
    # and hedging(response) when the sentences partition the response)
    exact = content = hedged = n_sent = 0
    for s in sents:
        a = analyze(s)
        exact += a.exact_count
        content += len(a.content)
        h, n = _sentence_hedges(s, a)
        hedged += h
        n_sent += n
    hed = hedged / n_sent if n_sent else 0.0
    spec = min(1.0, exact / content) * (1.0 - hed / 2.0) if content else 0.0
    # abstention and answer relevance over the sentences (the same as over the
    # response when the sentences partition it)
    views = [_claim_view(s, off) for s in sents]
    abstained = _abstains(views)
    if abstained:
        ar = 0.0
    else:
        ar = _answer_relevance(query, frozenset(match_keys(chain.from_iterable(analyze(s).content for s in sents))))
    cq = context_quality(query, ctx)
    if top_retrieval_similarity is None:
        top_retrieval_similarity = max((relevance(query, p) for p in ctx.passages), default=0.0)
    return Signals(
        groundedness=g, attribution=att, specificity=spec, hedging=hed, answer_relevance=ar,
        context_quality=cq, top_retrieval_similarity=top_retrieval_similarity, sentence_support=claim_support,
        # any one sentence abstaining: is_abstention's rule on each sentence's view
        sentences=tuple(sents), abstained=abstained or any(_abstains((v,)) for v in views),
    )
