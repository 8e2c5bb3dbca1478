"""Deterministic tokenisation for the harness scorers.

Everything here is a pure function of strings: no models, no downloads, no
randomness.  This module turns a text into its :class:`Analysis` (rules 1-5:
which token is a number, identifier, name or content word, by position); the
rules are implemented in three modules it re-exports:
:mod:`playground.harness.markers` (rule 1, citation and list markers),
:mod:`playground.harness.token_words` (rules 2-4, 6-7: word lists, the token
expression, number values, identifiers, stemming) and
:mod:`playground.harness.token_keys` (rule 8, match keys of claims and
contexts).  The rules:

1. **Normalisation.**  Curly apostrophes become ``'``.  In claims (not in
   contexts) citation and list markers are removed first
   (:func:`strip_markers`): ``[3]``, ``(Passage 2)``, ``passage 2`` /
   ``Passage 2:`` (also source/document; lower, title or upper case),
   ``Step 4:``, list numbers such as ``2.`` at the start of a line or after a
   sentence end, and bullets.  They are formatting, not content.

2. **Tokens** (:data:`TOKEN_RE`, first alternative that matches wins):

   * *date* ``2025-01-13`` and *time* ``09:30`` -- numbers kept whole;
   * *path* ``/v2/endpoints/{id}/replay`` -- an identifier, kept whole;
   * *number*: optional currency sign, digits with optional thousands commas
     and decimals, optional ``%`` or unit suffix of up to three letters
     (``3.5``, ``1,000``, ``15s``, ``$0.65``, ``250``, ``5th``, ``100°F``).  A
     number's *value* (:func:`number_value`) drops the currency sign, the
     thousands commas, trailing decimal zeros and the unit: ``$1,000.50`` ->
     ``1000.5``, ``15s`` -> ``15``.  Units are not compared.  A range ``5-7``
     is two numbers;
   * *word*: a letter or underscore, word characters, and further parts joined
     by ``.``, ``-``, ``'``, ``/`` or ``:`` without spaces (``TW-4291``,
     ``delivery.retry.max_attempts``, ``events:publish``, ``Bergen-Belsen``,
     ``don't``).

3. **Identifiers** (checked exactly, lower-cased): paths; words with an
   underscore, ``:`` or a digit (``snake_case``, ``events:publish``,
   ``TW-4291``, ``v2``); dotted words unless every part is one letter
   (``delivery.retry.max_attempts`` but not ``U.S``); ``/``-joined words with
   a non-letter part (a word list, ``and/or``, ``pants/jeans/shorts``, is
   split into its words); camelCase
   words (a capital right after a lower-case letter, ``maxAttempts``);
   hyphenated words written in capitals (``TW-ENT-HIPAA``); and every token
   that occurs inside a backtick code span (wherever else it occurs in the
   same text).  Any other hyphenated or ``/``-joined word is
   split into its parts (``time-bound`` -> ``time``, ``bound``).  A
   possessive ``'s`` is dropped; ``n't`` becomes ``not``.

4. **Number words** ``two`` .. ``twenty``, ``thirty`` .. ``ninety`` and
   ``dozen`` are numbers with the digit value (``five`` == ``5``); ``one`` is a
   stopword (mostly a pronoun).

5. **Capitalised names**: a word whose first letter is upper-case, at least
   two letters long, not a stopword, number word or :data:`NON_NAME_CAPITALS`
   word (months and weekdays *are* names), and

   * not at the start of a sentence (the text start, after ``. ! ? :`` or a
     line break, or after a removed marker); or
   * at a sentence start but directly followed (only a space between) by
     another capitalised name (``Louis Jordan said`` -> both); or
   * written in capitals (``NASA``).

   Names are kept as stems.  Each part of a hyphenated name is a name.

6. **Stopwords**: the fixed English list :data:`STOPWORDS`.  Negations
   (:data:`NEGATIONS`) are stopwords for coverage but reported separately.

7. **Stemming** (:func:`stem`): light suffix rules on alphabetic words of
   more than three letters: plural ``-ies`` -> ``-y``, ``-sses`` -> ``-ss``,
   ``-es`` after ``ch sh x z`` dropped, ``-s`` dropped (not after ``s u i``);
   then the first of ``-ingly -edly -ing -ied(->y) -ed -ation -ly`` is dropped
   when three letters remain, undoubling a final ``bb dd gg kk mm nn pp rr
   tt`` (``stopped`` -> ``stop``); finally a trailing ``e`` (not ``ee``) is
   dropped from words of four letters or more (``bake``, ``baked``, ``baking``
   -> ``bak``).  The rules conflate inflections; they are not a Porter stemmer.

8. **Matching keys** (:func:`match_key`, :func:`context_keys`): a claim token
   is looked up in a context by its *key*: the first five letters of its stem
   when it is alphabetic (so inflections and derivations match:
   ``motivated`` / ``motivation``, and demonyms: ``Mexico`` / ``Mexican``),
   else the token itself (number values).  A context's keys are the keys of
   its lower-cased tokens except stopwords, each compound token whole (for
   identifiers) and the keys of its parts (``re-examined`` -> ``re``,
   ``exami``), and the number values of number words and numeric parts.
   Identifiers are matched whole (:func:`identifier_present`).
"""
from __future__ import annotations

import re
from itertools import chain
from typing import NamedTuple

from playground.harness.markers import strip_markers
from playground.harness.token_cjk import has_cjk, segment_cjk
from playground.harness.token_keys import KeySet, context_keys, identifier_present, match_key, match_keys
from playground.harness.token_words import (
    CACHE_SIZES,
    NEGATIONS,
    NON_NAME_CAPITALS,
    NUMBER_WORDS,
    PREFIX_LEN,
    STOPWORDS,
    TOKEN_RE,
    _word_info,
    number_value,
    stem,
)

__all__ = [
    "CACHE_SIZES",
    "NEGATIONS",
    "NON_NAME_CAPITALS",
    "NUMBER_WORDS",
    "PREFIX_LEN",
    "STOPWORDS",
    "TOKEN_RE",
    "Analysis",
    "KeySet",
    "analyze",
    "content_stems",
    "context_keys",
    "identifier_present",
    "match_key",
    "match_keys",
    "number_value",
    "stem",
    "strip_markers",
    "tokenize",
]


class Analysis(NamedTuple):
    """Tokens of one text.

    ``words``: every token lower-cased (stopwords kept, possessives dropped,
    compound non-identifiers split).  ``content``: content tokens in order
    (stopwords dropped; words stemmed, numbers as values, identifiers whole).
    ``numbers``: number values.  ``identifiers``: lower-cased identifiers.
    ``names``: stems of capitalised names.  ``negations``: negation words
    found.  ``exact_count``: occurrences of numbers, identifiers and names.
    ``initials``: stems of capitalised words at a sentence start that rule 5 does not count as names
    (a name or a common word: the ``entities`` rule of support checks them against the context).
    """

    words: tuple[str, ...]
    content: tuple[str, ...]
    numbers: frozenset[str]
    identifiers: frozenset[str]
    names: frozenset[str]
    negations: tuple[str, ...]
    exact_count: int = 0
    initials: frozenset[str] = frozenset()

    @property
    def exact(self) -> frozenset[str]:
        """Numbers, identifiers and names: the items checked exactly."""
        return self.numbers | self.identifiers | self.names

# A backtick code span: every token inside one is an identifier, wherever it occurs in the text (rule 3).
_CODE_RE = re.compile(r"`([^`\n]+)`")


def analyze(text: str, *, markers: bool = True) -> Analysis:
    """Analyse ``text`` (a claim, query or response) by the module's rules.

    ``markers``: strip citation/list markers first (:func:`strip_markers`).
    Results are cached by ``(text, markers)``.
    """
    cache = _ANALYSES[markers]
    a = cache.get(text)
    if a is None:
        a = _analyze(text, markers)
        if len(cache) >= CACHE_SIZES["analyses"]:
            cache.clear()
        cache[text] = a
    return a


# Analyses by text, one dict per ``markers`` value (no tuple key to build per call).
_ANALYSES: dict[bool, dict[str, Analysis]] = {True: {}, False: {}}
# One empty frozenset for the (frequent) texts without numbers, identifiers or
# names: fewer objects for the garbage collector to walk in the caches.
_NO_ITEMS: frozenset[str] = frozenset()


_SENT_END_RE = re.compile(r"[.!?:\n]")

# Per-token facts independent of position:
# (words, content, numbers, identifiers, negations, name_stems, all_caps, n_exact)
_TokInfo = tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...], tuple[str, ...], tuple[str, ...],
                 tuple[str, ...] | None, bool, int]
# A token of a chunk: its _TokInfo, then (gap_has_end, gap_is_space, kind, token).
_ChunkToken = tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...], tuple[str, ...], tuple[str, ...],
                    tuple[str, ...] | None, bool, int, bool, bool, str | None, str]
# The concatenated (numbers, identifiers, negations, n_exact) of a chunk's tokens.
_Extra = tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...], int]
# The concatenated (words, content, extra) of a chunk none of whose tokens can be
# a capitalised name (None otherwise, and for a chunk without tokens): such a
# chunk is taken whole, position does not matter.  ``extra`` is None when the
# chunk has no number, identifier or negation (most chunks).
_Plain = tuple[tuple[str, ...], tuple[str, ...], _Extra | None]
# A chunk's tokens, the has_end and is_space facts of its tail, and its _Plain.
_ChunkEntry = tuple[tuple[_ChunkToken, ...], bool, bool, _Plain | None]


def _token_info(kind: str | None, tok: str, code: bool = False) -> _TokInfo:
    # kind: the TOKEN_RE group matched (Match.lastgroup, typed str | None although
    # every alternative of TOKEN_RE is a named group); anything else is a word.
    if kind == "num" or kind == "date" or kind == "time":
        v = number_value(tok) if kind == "num" else tok
        return ((tok.lower(),), (v,), (v,), (), (), None, False, 1)
    if kind == "path" or code:
        low = tok.lower()
        return ((low,), (low,), (), (low,), (), None, False, 1)
    is_id, low, pieces, cont, nums, negs, name_stems, all_caps = _word_info(tok)
    if is_id:
        return ((low,), (low,), (), (low,), (), None, False, 1)
    return (pieces, cont, nums, (), negs, name_stems, all_caps, len(nums))


_NO_GAP = (False, True)


def _gap_facts(gap: str) -> tuple[bool, bool]:
    """(contains a sentence end, is whitespace only) of the text between tokens."""
    if not gap:
        return _NO_GAP
    return (_SENT_END_RE.search(gap) is not None, not gap.strip())


class _ChunkTokens(dict[str, _ChunkEntry]):
    """A space-separated chunk of (marker-stripped) text -> its tokens, each as
    its token info (8 fields, :func:`_token_info`) followed by
    ``(gap_has_end, gap_is_space, kind, token)`` for the gap before it
    inside the chunk, the same two facts for the chunk's tail, and the chunk
    taken whole when position cannot matter (``_Plain``).  No token spans a
    space, so a text's tokens are its chunks' tokens in order."""

    def __missing__(self, chunk: str) -> _ChunkEntry:
        toks: list[_ChunkToken] = []
        prev = 0
        for m in TOKEN_RE.finditer(chunk):
            kind = m.lastgroup
            end_, ws = _gap_facts(chunk[prev:m.start()])
            toks.append((*_token_info(kind, m.group()), end_, ws, kind, m.group()))
            prev = m.end()
        plain: _Plain | None = None
        if toks and all(t[5] is None for t in toks):
            if len(toks) == 1:
                t0 = toks[0]
                w, c, extra = t0[0], t0[1], (t0[2], t0[3], t0[4], t0[7])
            else:
                w, c = tuple(chain.from_iterable(t[0] for t in toks)), tuple(chain.from_iterable(t[1] for t in toks))
                extra = (tuple(chain.from_iterable(t[2] for t in toks)), tuple(chain.from_iterable(t[3] for t in toks)),
                         tuple(chain.from_iterable(t[4] for t in toks)), sum(t[7] for t in toks))
            plain = (w, c, extra if extra[2] or extra[3] else None)
        entry = (tuple(toks), *_gap_facts(chunk[prev:]), plain)
        if len(self) >= CACHE_SIZES["chunk_tokens"]:
            self.clear()
        self[chunk] = entry
        return entry


_CHUNK_TOKENS = _ChunkTokens()


def _prepared(text: str, markers: bool) -> str:
    """``text`` before tokens: curly apostrophes plain, Chinese and Japanese segmented, markers stripped."""
    if not text.isascii():
        text = text.replace("’", "'").replace("‘", "'")
        if has_cjk(text):
            text = segment_cjk(text)
    return strip_markers(text) if markers else text


def _new_sets() -> tuple[set[str], set[str], set[str], set[str]]:
    return set(), set(), set(), set()


def _analyze(text: str, markers: bool) -> Analysis:
    t = _prepared(text, markers)
    code = {m.group() for span in _CODE_RE.findall(t) for m in TOKEN_RE.finditer(span)} if "`" in t else None
    words: list[str] = []
    content: list[str] = []
    negations: list[str] = []
    numbers, identifiers, names, initials = _new_sets()  # plain set(): set[str]() would cost a generic alias
    pending: str | None = None  # stem of a sentence-initial capitalised word just seen
    # carry_*: facts of the gap before the next chunk's first token; whole: no code span, plain chunks taken whole
    exact_count, first, carry_end, carry_ws, whole = 0, True, True, True, not code
    for toks, tail_end, tail_ws, plain in map(_CHUNK_TOKENS.__getitem__, t.split(" ")):
        if plain is not None and whole:
            w, c, extra = plain
            words.extend(w)
            content.extend(c)
            if extra is not None:
                nums, ids, negs, n_exact = extra
                exact_count += n_exact  # 0 when the chunk has no number or identifier
                if nums:
                    numbers.update(nums)
                if ids:
                    identifiers.update(ids)
                if negs:
                    negations.extend(negs)
            pending = None
            first = False
            carry_end = tail_end
            carry_ws = tail_ws
            continue
        for w, c, nums, ids, negs, name_stems, all_caps, n_exact, g_end, g_ws, kind, tok in toks:
            g_end, g_ws = carry_end or g_end, carry_ws and g_ws  # the carry counts before the first token only
            carry_end, carry_ws = False, True
            if code and kind == "word" and tok in code:
                w, c, nums, ids, negs, name_stems, all_caps, n_exact = _token_info(kind, tok, True)
            words.extend(w)
            content.extend(c)
            exact_count += n_exact
            if nums:
                numbers.update(nums)
            if ids:
                identifiers.update(ids)
            if negs:
                negations.extend(negs)
            if name_stems is not None and (all_caps or not (first or g_end)):
                names.update(name_stems)
                exact_count += len(name_stems)
                if pending is not None and g_ws:
                    names.add(pending)
                    exact_count += 1
                pending = None
            else:
                pending = None if name_stems is None else name_stems[0]
                if pending is not None:
                    initials.add(pending)
            first = False
        carry_end, carry_ws = carry_end or tail_end, carry_ws and tail_ws  # a chunk without tokens joins the two
    return Analysis(tuple(words), tuple(content), frozenset(numbers) if numbers else _NO_ITEMS,
                    frozenset(identifiers) if identifiers else _NO_ITEMS, frozenset(names) if names else _NO_ITEMS,
                    tuple(negations), exact_count, frozenset(initials - names) if initials else _NO_ITEMS)


def tokenize(text: str) -> list[str]:
    """Lower-cased tokens of ``text`` (stopwords and markers kept)."""
    return list(analyze(text, markers=False).words)


def content_stems(text: str) -> tuple[str, ...]:
    """Content tokens of ``text`` in order (markers stripped; see :class:`Analysis`)."""
    return analyze(text).content

