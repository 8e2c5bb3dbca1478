"""The retrieved passages of a claim, tokenised once (:class:`Context`).

A context's match keys are the union of its passages' keys
(:func:`playground.harness.tokens.context_keys`); its lower-cased text and its ROUGE-1 word counts
are computed on first use.  The union of a case's passages is cached by the passages (the responses of
one case share them).
"""
from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from itertools import chain
from typing import NoReturn

from playground.harness.tokens import KeySet, context_keys, identifier_present, match_key

__all__ = ["Context"]

#: ROUGE-1 tokens (the ``rouge`` rule): lower-cased runs of ASCII letters and digits, as ``rouge_score``'s.
_ROUGE_TOKEN_RE = re.compile(r"[a-z0-9]+")


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
