"""Response-level signals from the per-claim scores: groundedness, attribution, disagreement, all at once.

* :func:`groundedness`: mean support of the response's sentences by the whole context.
* :func:`attribution`: share of sentences supported by a *single* passage (a cited one when the
  sentence cites ``[n]``).
* :func:`signal_disagreement`: population standard deviation of the signals.
* :func:`response_signals`: every signal of a response (:class:`playground.harness.signals.Signals`),
  tokenising the context once.
"""
from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from itertools import chain

from playground.harness.claim_view import _abstains, _claim_view
from playground.harness.context import Context
from playground.harness.relevance import _answer_relevance, context_quality, relevance
from playground.harness.signals import Signals
from playground.harness.style import _sentence_hedges
from playground.harness.support import _assess, support
from playground.harness.support_rules import DEFAULT_KIND, DEFAULT_SUPPORT_FLOOR, kind_off
from playground.harness.tokens import analyze, match_keys

__all__ = ["attribution", "groundedness", "response_signals", "signal_disagreement"]

_CITE_RE = re.compile(r"\[(\d+(?:\s*,\s*\d+)*)\]")


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
    off = kind_off(kind)
    hit = 0
    for s, sup in zip(sents, supports, strict=True):
        # A single passage's keys are a subset of the union's, so a sentence
        # the whole context does not support is supported by no passage.
        if sup < floor:
            continue
        cites = [int(x) for m in _CITE_RE.finditer(s) for x in m.group(1).split(",")]
        idx: Sequence[int] = [c - 1 for c in cites if 1 <= c <= len(singles)] if cites else range(len(singles))
        checks = _claim_view(s, off).checks
        if checks and len(idx) > 1:
            # passages that hold every name the entities rule checks first: the order does not change the
            # result (any one passage attributes), but a passage missing one costs a swap search
            idx = sorted(idx, key=lambda i: not all(k in ctx.passage_keys[i] for _, k in checks))
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
    refusal may go on to say what the knowledge base does cover.  ``unverifiable``: the sentences the
    support rules cannot verify, with the reason (an empty claim; a name not in the passages and not
    swapped for another); groundedness is the mean support of the sentences but the empty ones (0.0 when
    none is left).
    """
    ctx = Context.of(passages)
    off = kind_off(kind)
    sents = [s for s in sentences if s and s.strip()]
    views = [_claim_view(s, off) for s in sents]
    assessed = [_assess(v, ctx) for v in views]
    claim_support = tuple(a[0] for a in assessed)
    unverifiable = tuple((i, "; ".join(why)) for i, (_, why) in enumerate(assessed) if why)
    # groundedness leaves out the empty sentences (support 0.0 and unverifiable: neither evidence for nor
    # against the answer; the decision sends the answer to a person for them)
    verified = [x for x, (_, why) in zip(claim_support, assessed, strict=True) if not (why and x == 0.0)] \
        if unverifiable else claim_support
    g = sum(verified) / len(verified) if verified else 0.0
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
        unverifiable=unverifiable,
    )
