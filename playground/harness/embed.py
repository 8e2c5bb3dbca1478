"""Embeddings through Ollama: a retrieval leg and a semantic similarity signal.

:class:`EmbeddingIndex` embeds passages (each text once, cached like every
model call) and ranks them by cosine similarity to a query, ties broken by
passage id.  It is the embedding leg of hybrid retrieval: call it as
``index(query, tenant, passages)`` (the ``extra_legs`` signature of
:func:`playground.harness.retrieve.retrieve_cases`) and fuse with BM25 by
:func:`~playground.harness.retrieve.rrf_fuse`.

nomic-embed-text expects task prefixes (``search_query: `` for questions,
``search_document: `` for passages); they are applied automatically for
``nomic-embed*`` models and can be set for others.

Cosines are summed with :func:`math.fsum` (exactly rounded), so the ranking
does not depend on the machine's BLAS; scores are rounded to 12 digits before
sorting so that equal vectors tie exactly and fall back to the id order.
"""
from __future__ import annotations

import math
from collections.abc import Sequence

from ..model import Passage
from .llm import DEFAULT_EMBED_MODEL, OllamaModels

__all__ = ["EmbeddingIndex", "cosine", "semantic_similarity", "task_prefixes"]


def task_prefixes(model: str) -> tuple[str, str]:
    """(query prefix, document prefix) a model was trained with; empty when none is known."""
    if model.lower().split("/")[-1].startswith("nomic-embed"):
        return "search_query: ", "search_document: "
    return "", ""


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """Cosine similarity; 0.0 when either vector is zero."""
    if len(a) != len(b):
        raise ValueError(f"vectors of different lengths ({len(a)} and {len(b)})")
    norm_a = math.sqrt(math.fsum(x * x for x in a))
    norm_b = math.sqrt(math.fsum(y * y for y in b))
    if norm_a == 0 or norm_b == 0:
        return 0.0
    return math.fsum(x * y for x, y in zip(a, b, strict=True)) / (norm_a * norm_b)


class EmbeddingIndex:
    """Passages embedded by ``model``; rank them against a query by cosine similarity."""

    def __init__(
        self,
        models: OllamaModels,
        model: str = DEFAULT_EMBED_MODEL,
        *,
        query_prefix: str | None = None,
        document_prefix: str | None = None,
        batch_size: int = 64,
    ):
        self.models = models
        self.model = model
        auto_query, auto_document = task_prefixes(model)
        self.query_prefix = auto_query if query_prefix is None else query_prefix
        self.document_prefix = auto_document if document_prefix is None else document_prefix
        self.batch_size = batch_size
        self._vectors: dict[str, list[float]] = {}

    def _document_text(self, passage: Passage) -> str:
        head = f"{passage.title} — {passage.locator.heading}\n" if passage.title else ""
        return f"{self.document_prefix}{head}{passage.text}"

    def add(self, passages: Sequence[Passage]) -> None:
        """Embed every passage not embedded yet (batched; cached across runs)."""
        todo: dict[str, str] = {}
        for p in passages:
            if p.passage_id not in self._vectors and p.passage_id not in todo:
                todo[p.passage_id] = self._document_text(p)
        ids = sorted(todo)
        for start in range(0, len(ids), self.batch_size):
            chunk = ids[start : start + self.batch_size]
            for pid, vector in zip(chunk, self.models.embed(self.model, [todo[i] for i in chunk]), strict=True):
                self._vectors[pid] = vector

    def vector(self, passage: Passage) -> list[float]:
        self.add([passage])
        return self._vectors[passage.passage_id]

    def scores(self, query: str, passages: Sequence[Passage]) -> list[tuple[str, float]]:
        """(passage id, cosine) for each passage, best first, ties by passage id."""
        if not passages:
            return []
        self.add(passages)
        qv = self.models.embed(self.model, [self.query_prefix + query])[0]
        seen: set[str] = set()
        scored: list[tuple[str, float]] = []
        for p in passages:
            if p.passage_id in seen:
                continue
            seen.add(p.passage_id)
            scored.append((p.passage_id, round(cosine(qv, self._vectors[p.passage_id]), 12)))
        scored.sort(key=lambda item: (-item[1], item[0]))
        return scored

    def rank(self, query: str, tenant_passages: Sequence[Passage], k: int | None = None) -> list[str]:
        """Passage ids, most similar first (ties by id); the top ``k`` when given."""
        ranked = [pid for pid, _ in self.scores(query, tenant_passages)]
        return ranked if k is None else ranked[:k]

    def __call__(self, query: str, tenant: str, passages: Sequence[Passage]) -> list[str]:
        """The retrieval-leg signature ``leg(query, tenant, passages) -> ranked ids``."""
        return self.rank(query, [p for p in passages if p.locator.tenant == tenant])


def semantic_similarity(
    models: OllamaModels, a: str, b: str, *, model: str = DEFAULT_EMBED_MODEL, prefix: str = ""
) -> float:
    """Cosine similarity of the embeddings of ``a`` and ``b`` (in [-1, 1]; clamp if a scorer needs [0, 1])."""
    va, vb = models.embed(model, [prefix + a, prefix + b])
    return round(cosine(va, vb), 12)
