"""Style signals of a response: hedging and specificity.

* :func:`hedging`: share of the text's sentences (split at ``. ! ?`` and line breaks) that hold a
  :data:`HEDGE_PATTERNS` phrase ("may", "typically", "it depends" ...).
* :func:`specificity`: ``min(1, exact / content) * (1 - hedging / 2)``, ``exact`` the occurrences of
  numbers, identifiers and capitalised names, ``content`` the content tokens
  (:mod:`playground.harness.tokens`).

Two cheap pre-checks spare the expressions most texts: :data:`HEDGE_HINTS` substrings and
:data:`HEDGE_KEY_WORDS` tokens.
"""
from __future__ import annotations

import re
from bisect import bisect_left

from playground.harness.tokens import Analysis, analyze

__all__ = ["HEDGE_HINTS", "HEDGE_KEY_WORDS", "HEDGE_PATTERNS", "hedging", "specificity"]

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
