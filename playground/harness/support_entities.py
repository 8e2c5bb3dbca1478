"""The ``entities`` rule of support: names in any position, entity swaps, and what cannot be verified.

Rule 5 of :mod:`playground.harness.tokens` reads a capitalised word at a sentence start as a name only when
another name follows; the ``names`` rule checks names for summary and dialogue text only.  This rule closes
both gaps without reading a sentence-initial common word ("Customers can ...") as a made-up name:

* **Candidates** (:func:`entity_candidates`): the claim's names that no other rule checks exactly (every
  name when ``names`` is off, as for qa) and its sentence-initial capitalised words (``Analysis.initials``:
  "Москва является ...", "Paris is ...").  A candidate whose match key is in the context is verified.
* **Swap** (:func:`swapped`): a missing candidate is *swapped* when the context holds different words at
  the same place: the claim's words around it (its anchors, up to three on each side within the sentence,
  at least two words and one of them a content word; a sentence edge is an anchor too, but not one of
  the two words) surround one to three other words, one of them a content word with a letter, in a
  passage, e.g. "... France is **London**." against "... France is Paris.", or "**Москва** является
  столицей" against "Париж является столицей".  A swapped claim is not supported:
  it scores :data:`~playground.harness.support_rules.EXACT_MISS_SCORE`.
* **Unverifiable**: a missing candidate that is not swapped may be a name the passages never mention or a
  common word; the rules cannot tell, so the claim keeps its coverage score and is reported as
  unverifiable (``name 'X' is not in the context``), which sends the answer to REVIEW
  (:mod:`playground.harness.decide`, rule ``unverifiable``), never to ACCEPT.

Words are compared lower-cased, diacritics folded (:data:`playground.harness.textnorm.FOLD_DIACRITICS`),
Chinese and Japanese segmented; a passage's words are found once per passage text (cached), and only for a
passage that holds every anchor word.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

from playground.harness.textnorm import FOLD_DIACRITICS
from playground.harness.token_cjk import has_cjk, segment_cjk
from playground.harness.token_words import STOPWORDS, stem

__all__ = ["MAX_SWAP_WORDS", "swapped"]

#: The most context words that can stand in a swapped candidate's place.
MAX_SWAP_WORDS = 3

# Sentence ends, each made a line break first; then words (letters and digits, inner apostrophes kept) and
# line breaks, in order, are found by one expression.
_SENTENCE_END_RE = re.compile(r"[.!?;:\n]+(?=\s|$)|[。！？]")
_WORD_OR_END_RE = re.compile(r"[^\W_]+(?:'[^\W_]+)*|\n")
_END = "\n"
# Anchors: up to three words on each side; the smallest choice with a content word wins.
_MAX_ANCHOR = 3
_ANCHOR_SIZES = tuple(sorted(((nl, nr) for nl in range(1, 4) for nr in range(1, 4)), key=lambda s: (sum(s), s)))


@lru_cache(maxsize=4_096)
def _folded(text: str) -> str:
    """``text`` lower-cased, curly apostrophes plain, Latin diacritics folded."""
    low = text.lower()
    return low.replace("’", "'").translate(FOLD_DIACRITICS) if not low.isascii() else low


@lru_cache(maxsize=4_096)
def _words(text: str) -> tuple[str, ...]:
    """Lower-cased, folded words of ``text``; every sentence end as :data:`_END`."""
    low = _folded(text)
    if not low.isascii() and has_cjk(low):
        low = segment_cjk(low)
    return tuple(_WORD_OR_END_RE.findall(_SENTENCE_END_RE.sub("\n", low)))


@lru_cache(maxsize=1_024)
def _passage_words(text: str) -> tuple[str, ...]:
    """A passage's words (:func:`_words`), padded with :data:`_END` at both edges."""
    return (_END, *_words(text), _END)


def _is_content(w: str) -> bool:
    return w != _END and w not in STOPWORDS


def _is_word(w: str) -> bool:
    """A content word with a letter (a name can stand there; a bare list number cannot)."""
    return _is_content(w) and not w.isdigit()


def _anchors(claim: Sequence[str], start: int, end: int) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """The anchors of the span ``claim[start:end]``: up to three words on each side within the sentence, a
    sentence edge as :data:`_END`; the smallest choice with at least two words (a sentence edge does not
    count), one of them a content word.  None when no choice has them."""
    left: list[str] = []
    i = start - 1
    while len(left) < _MAX_ANCHOR:
        if i < 0:
            left.insert(0, _END)
            break
        left.insert(0, claim[i])
        if claim[i] == _END:
            break
        i -= 1
    right: list[str] = []
    i = end
    while len(right) < _MAX_ANCHOR:
        if i >= len(claim):
            right.append(_END)
            break
        right.append(claim[i])
        if claim[i] == _END:
            break
        i += 1
    for nl, nr in _ANCHOR_SIZES:
        lw, rw = tuple(left[-nl:]), tuple(right[:nr])
        real = [w for w in lw + rw if w != _END]
        if len(real) >= 2 and any(map(_is_content, real)):
            return lw, rw
    return None


def _found_elsewhere(words: tuple[str, ...], left: tuple[str, ...], right: tuple[str, ...],
                     span: tuple[str, ...]) -> bool:
    """Whether ``left`` + one to :data:`MAX_SWAP_WORDS` words other than ``span`` + ``right`` occur in a
    passage (no sentence end among the middle words, and one of them a content word with a letter)."""
    n = len(left)
    first = left[0]
    for p in (i for i, w in enumerate(words) if w == first):
        if words[p:p + n] != left:
            continue
        for m in range(1, MAX_SWAP_WORDS + 1):
            mid = words[p + n:p + n + m]
            if len(mid) < m or _END in mid:
                break
            if words[p + n + m:p + n + m + len(right)] == right and mid != span and any(map(_is_word, mid)):
                return True
    return False


def swapped(claim_text: str, candidate: str, passages: Sequence[str], missing_keys: frozenset[str]) -> bool:
    """Whether the claim's missing ``candidate`` (a name or sentence-initial word stem) is swapped: the
    passages hold other words at its place (module docstring).  ``missing_keys``: the match keys of the
    claim's words missing from the context; the span around the candidate's first occurrence grows over
    neighbouring missing content words ("Charlotte Brontë" for "Jane Austen")."""
    claim = _words(claim_text)
    at = next((i for i, w in enumerate(claim) if w != _END and stem(w) == candidate), None)
    if at is None:
        return False
    start, end = at, at + 1
    while start > 0 and _missing(claim[start - 1], missing_keys):
        start -= 1
    while end < len(claim) and _missing(claim[end], missing_keys):
        end += 1
    anchors = _anchors(claim, start, end)
    if anchors is None:
        return False
    left, right = anchors
    span = claim[start:end]
    need = [w for w in left + right if w != _END]
    for text in passages:
        low = _folded(text)
        if not all(w in low for w in need):  # a cheap necessary condition before the passage's word index
            continue
        if _found_elsewhere(_passage_words(text), left, right, span):
            return True
    return False


def _missing(w: str, missing_keys: frozenset[str]) -> bool:
    return _is_content(w) and stem(w)[:5] in missing_keys
