"""Relevance of passages and responses to the query.

* :func:`relevance`: share of the query's distinct content tokens present in the passage, by match key
  (:mod:`playground.harness.tokens`); relevant when ``>= DEFAULT_RELEVANCE_THRESHOLD``.
* :func:`context_quality`: mean relevance of the retrieved passages.
* :func:`answer_relevance`: share of the query's content tokens among the response's (0.0 for an
  abstention).
* :func:`from_expected_source`: the *gold* check (the passage's locator is one of the case's
  expected sources), for evaluation only.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from playground.harness.claim_view import is_abstention
from playground.harness.context import Context, _text_of
from playground.harness.tokens import analyze, context_keys, match_key, match_keys

if TYPE_CHECKING:
    from playground.model import Locator

__all__ = ["DEFAULT_RELEVANCE_THRESHOLD", "answer_relevance", "context_quality", "from_expected_source", "relevance"]

#: A passage is relevant to a query when ``relevance >= this``.  Not
#: calibrated against human labels (none exist yet); on the synthetic golden
#: set's authored passage keys 0.5 agreed better than 0.4 (kappa 0.40 vs 0.30).
DEFAULT_RELEVANCE_THRESHOLD: float = 0.5


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
