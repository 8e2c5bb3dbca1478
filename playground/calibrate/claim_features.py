"""Lexical features of a claim against its context, and of the claim within its answer (issue 26 research).

These are the inputs of the learned rankers tried in :mod:`playground.calibrate.ranker_cv`; none of them
is on the default scoring path.  Every feature is a deterministic function of the claim, its passages,
its kind of text and (for the answer features) the other claims of the same answer.

Claim features (:func:`claim_features`; ``d`` = :func:`playground.harness.score.support_detail`):

* ``support``: :func:`playground.harness.score.support` of the kind;
* ``coverage``: ``d.coverage``, the share of the claim's content tokens present (before any exact-item rule);
* ``missing``: ``log(1 + len(d.missing_tokens))``, how many content tokens are missing (a count, not a share);
* ``exact_miss``: 1.0 when a number, identifier or name the kind checks is missing, else 0.0;
* ``rouge``: ROUGE-1 precision of the claim against the passages
  (:func:`playground.calibrate.frozen.rouge1_precision`);
* ``weakest``: the lowest support of the claim's sentences (split at ``. ! ?`` and line breaks) that have
  at least :data:`MIN_SENTENCE_WORDS` words; the claim's own support when none has;
* ``best_passage``: ``d.best_passage_coverage``, the coverage by the single best passage (0.0 without passages);
* ``words``: ``log(1 + w)``, ``w`` the claim's lower-cased ``[a-z0-9]+`` words;
* ``sentences``: how many sentences the claim has (same split as ``weakest``, blank ones left out);
* ``novel_bigrams``: the share of the cleaned claim's adjacent word pairs (``[a-z0-9]+`` words,
  :func:`playground.harness.score.clean_claim`) that never occur adjacent in the passages (0.0 with fewer than
  two words); a pair is adjacent within one passage, not across two.

Answer features (:func:`answer_features`, for the claims of one answer in order):

* ``position``: ``i / (n - 1)`` for the ``i``-th of ``n`` claims (0.0 when ``n`` is 1);
* ``answer_claims``: ``log(n)``;
* ``others_support``: the mean ``support`` of the answer's other claims (the claim's own when it is alone).
"""
from __future__ import annotations

import math
import re
from collections.abc import Sequence
from itertools import pairwise

from ..harness import score as S
from .frozen import rouge1_precision

__all__ = ["ANSWER_FEATURES", "CLAIM_FEATURES", "MIN_SENTENCE_WORDS", "answer_features", "claim_features"]

#: The claim features, in the order of a feature vector (module docstring).
CLAIM_FEATURES: tuple[str, ...] = ("support", "coverage", "missing", "exact_miss", "rouge", "weakest",
                                   "best_passage", "words", "sentences", "novel_bigrams")
#: The answer features (module docstring).
ANSWER_FEATURES: tuple[str, ...] = ("position", "answer_claims", "others_support")
#: A sentence of fewer words is not scored on its own by ``weakest``.
MIN_SENTENCE_WORDS = 3

_SENT_RE = re.compile(r"[^.!?\n]+[.!?]*")
_WORD_RE = re.compile(r"[a-z0-9]+")


def _sentences(claim: str) -> list[str]:
    return [m.group(0) for m in _SENT_RE.finditer(claim) if m.group(0).strip()]


def _weakest(claim: str, ctx: S.Context, kind: str, whole: float) -> float:
    scores = [S.support(s, ctx, kind=kind) for s in _sentences(claim)
              if len(_WORD_RE.findall(s.lower())) >= MIN_SENTENCE_WORDS]
    return min(scores) if scores else whole


def _novel_bigrams(claim: str, ctx: S.Context) -> float:
    words = _WORD_RE.findall(S.clean_claim(claim).lower())
    pairs = list(pairwise(words))
    if not pairs:
        return 0.0
    seen: set[tuple[str, str]] = set()
    for passage in ctx.passages:
        cw = _WORD_RE.findall(passage.lower())
        seen.update(pairwise(cw))
    return sum(1 for p in pairs if p not in seen) / len(pairs)


def claim_features(claim: str, context: Sequence[str], kind: str = S.DEFAULT_KIND) -> dict[str, float]:
    """The :data:`CLAIM_FEATURES` of ``claim`` against ``context`` for ``kind`` (module docstring)."""
    ctx = S.Context(context)
    d = S.support_detail(claim, ctx, kind=kind)
    whole = S.support(claim, ctx, kind=kind)
    return {
        "support": whole,
        "coverage": d.coverage,
        "missing": math.log1p(len(d.missing_tokens)),
        "exact_miss": 1.0 if d.missing_exact else 0.0,
        "rouge": rouge1_precision(claim, list(ctx.passages)),
        "weakest": _weakest(claim, ctx, kind, whole),
        "best_passage": d.best_passage_coverage,
        "words": math.log1p(len(_WORD_RE.findall(claim.lower()))),
        "sentences": float(len(_sentences(claim))),
        "novel_bigrams": _novel_bigrams(claim, ctx),
    }


def answer_features(supports: Sequence[float]) -> list[dict[str, float]]:
    """The :data:`ANSWER_FEATURES` of each claim of one answer, given the claims' ``support`` in answer order."""
    n = len(supports)
    total = sum(supports)
    out = []
    for i, s in enumerate(supports):
        out.append({"position": i / (n - 1) if n > 1 else 0.0, "answer_claims": math.log(n),
                    "others_support": (total - s) / (n - 1) if n > 1 else s})
    return out
