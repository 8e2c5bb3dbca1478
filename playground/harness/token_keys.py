"""Match keys: how a claim token is looked up in a context (rule 8 of :mod:`playground.harness.tokens`).

A claim token's key (:func:`match_key`) is the first :data:`~playground.harness.token_words.PREFIX_LEN`
(5) letters of its stem when it is alphabetic, else the token itself (number values).  A context's
keys (:func:`context_keys`) are the keys of its lower-cased tokens except stopwords, each compound
token whole (for identifiers) and the keys of its parts, and the number values of number words and
numeric parts.  Identifiers are matched whole (:func:`identifier_present`).  Cached by text and by
chunk, bounded by :data:`~playground.harness.token_words.CACHE_SIZES`.
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from functools import lru_cache
from itertools import chain

from playground.harness.textnorm import FOLD_DIACRITICS
from playground.harness.token_cjk import has_cjk, segment_cjk
from playground.harness.token_words import (
    _FAST_RE,
    CACHE_SIZES,
    NEGATIONS,
    NUMBER_WORDS,
    PREFIX_LEN,
    STOPWORDS,
    compound_number,
    number_value,
    stem,
)

__all__ = ["UNIT_KEYS", "KeySet", "context_keys", "identifier_present", "match_key", "match_keys"]

#: A set of match keys (:func:`context_keys`): a dict whose keys are the members
#: and whose values are None; read it, never change it (it is cached and shared).
#: Not a frozenset because CPython's garbage collector tracks every set and walks
#: it at each collection while it is young, but does not track a dict that holds
#: only strings: for fresh passages, walking their key sets was about 6% of the
#: scorers' time (``bench/bench_score.py --workload fresh``).
KeySet = Mapping[str, None]

_PART_SPLIT_RE = re.compile(r"[-./:']")

#: Abbreviated units after a number in a context (``24h``, ``30min``, ``5yrs``) and the match key of the
#: word they abbreviate, so that "24 hours" in a claim finds "24h" (the other way round, a claim's unit is
#: not checked: a number is compared by value).
UNIT_KEYS: dict[str, str] = {
    **dict.fromkeys(("h", "hr", "hrs"), "hour"), **dict.fromkeys(("min", "mins"), "minut"),
    **dict.fromkeys(("s", "sec", "secs"), "secon"), "ms": "milli", "d": "day", **dict.fromkeys(("wk", "wks"), "week"),
    **dict.fromkeys(("yr", "yrs"), "year"), **dict.fromkeys(("mo", "mos"), "month"),
}


def match_key(token: str) -> str:
    """The key under which a claim token (a stem, number value or name stem) is
    looked up in a context: its first :data:`PREFIX_LEN` letters when it is
    alphabetic, else the token itself.  (Identifiers are matched whole, see
    :func:`identifier_present`.)"""
    return token[:PREFIX_LEN] if token.isalpha() else token


class _MatchKeys(dict[str, str]):
    """token -> :func:`match_key` (computed on first use)."""

    def __missing__(self, token: str) -> str:
        key = match_key(token)
        if len(self) >= CACHE_SIZES["match_keys"]:
            self.clear()
        self[token] = key
        return key


_MATCH_KEYS = _MatchKeys()


def match_keys(tokens: Iterable[str]) -> Iterator[str]:
    """:func:`match_key` of each token, in order (a cached lookup per token)."""
    return map(_MATCH_KEYS.__getitem__, tokens)


def _keys_of(tok: str) -> tuple[str, ...]:
    """Keys of one lower-cased context token (rule 8)."""
    c0 = tok[0]
    if c0.isdigit() or c0 in "$€£":
        if (len(tok) == 10 and tok[4] == "-") or ":" in tok:
            return (tok,)  # date or time
        if tok[-1].isalpha():  # "24h": the value, and "hour" for a claim that spells the unit out
            unit = UNIT_KEYS.get(tok.lstrip("$€£0123456789.,"))
            if unit is not None:
                return (number_value(tok), unit)
        return (number_value(tok),)
    if tok.isalpha():
        if tok in STOPWORDS:
            return ("not",) if tok in NEGATIONS else ()
        v = NUMBER_WORDS.get(tok)
        k = stem(tok)[:PREFIX_LEN]
        return (k,) if v is None else (k, v)
    base = tok
    out: list[str] = []
    if base.endswith("'s"):
        base = base[:-2]
    elif base.endswith("n't"):
        out.append("not")
    if base.isalpha():
        if base not in STOPWORDS:
            out.append(stem(base)[:PREFIX_LEN])
        return tuple(out)
    out.append(base)  # the whole compound token: identifiers are matched whole
    parts = _PART_SPLIT_RE.split(base)
    if len(parts) == 2 and "-" in base:
        compound = compound_number(parts)  # "twenty-four": 24 (its parts' keys are kept too)
        if compound is not None:
            out.append(compound)
    for p in parts:
        if not p:
            continue
        if p.isalpha():
            out.append(stem(p)[:PREFIX_LEN])
            if p in NUMBER_WORDS:
                out.append(NUMBER_WORDS[p])
        else:
            out.append(p)
            if p[0].isdigit():
                out.append(number_value(p))
    return tuple(out)


class _ChunkKeys(dict[str, tuple[str, ...]]):
    """Keys of a whitespace-separated chunk of lower-cased context text.  No
    token pattern spans whitespace, so the keys of a text are the union of the
    keys of its chunks; a missing chunk is computed on first use."""

    def __missing__(self, chunk: str) -> tuple[str, ...]:
        out: list[str] = []
        for tok in _FAST_RE.findall(chunk):
            out.extend(_keys_of(tok))
        keys = tuple(dict.fromkeys(out))
        if len(self) >= CACHE_SIZES["chunk_keys"]:
            self.clear()
        self[chunk] = keys
        return keys


_CHUNK_KEYS = _ChunkKeys()


def context_keys(text: str) -> KeySet:
    """The match keys of every token of a context text (rule 8), as a :data:`KeySet`.

    Cached by text.  A claim's content token, number or name is *present* in
    the context when its :func:`match_key` is in this set; an identifier when
    :func:`identifier_present` says so.
    """
    keys = _CONTEXT_KEYS.get(text)
    if keys is None:
        low = text.lower()
        if not low.isascii():
            low = low.replace("’", "'").translate(FOLD_DIACRITICS)
            if has_cjk(low):
                low = segment_cjk(low)
        keys = dict.fromkeys(chain.from_iterable(map(_CHUNK_KEYS.__getitem__, low.split())))
        if len(_CONTEXT_KEYS) >= CACHE_SIZES["context_keys"]:
            _CONTEXT_KEYS.clear()
        _CONTEXT_KEYS[text] = keys
    return keys


_CONTEXT_KEYS: dict[str, dict[str, None]] = {}


@lru_cache(maxsize=4_096)
def _identifier_re(ident: str) -> re.Pattern[str]:
    return re.compile(r"(?<![\w.\-/])" + re.escape(ident) + r"(?![\w]|[.\-/:]\w)")


def identifier_present(ident: str, keys: KeySet, lowered: str) -> bool:
    """Whether a (lower-cased) identifier occurs whole in a context: as a whole
    token key when it contains a non-letter (``tw-4291``,
    ``delivery.retry.max_attempts``), else -- camelCase or code-span words,
    whose case the keys do not keep -- by a search of the lower-cased context
    text, not inside a longer identifier."""
    if not ident.isalpha():
        return ident in keys
    return _identifier_re(ident).search(lowered) is not None
