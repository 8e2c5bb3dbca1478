"""Retrieval: BM25 over chunks, filtered to the case's tenant, and reciprocal rank fusion.

BM25 comes from ``bm25s`` (sparse-matrix BM25, maintained, numpy/scipy only,
fast enough to rank a 10,000-chunk corpus in well under a millisecond per
query).  We keep our own tokeniser so that exact identifiers survive:
``TW-4291``, ``delivery.retry.max_attempts`` and ``/v2/endpoints/{id}/replay``
are indexed whole *and* by their parts, so a query for the key or for one of
its words both match.

Ranking is deterministic: every passage of the tenant is scored and sorted by
(score descending, passage id ascending) — ties never depend on library
internals.  Passages that share no term with the query (score 0) are not
returned.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..model import Case, Passage

if TYPE_CHECKING:
    import bm25s

    from ..corpus import Corpus
    from ..golden import Dataset
    from .config import Config

__all__ = [
    "STOPWORDS", "BM25Retriever", "Hit", "Leg", "build_retriever", "case_query", "index_terms", "passage_terms",
    "retrieve_cases", "rrf_fuse",
]


#: A small English stopword list for index terms (retrieval only; the scorers keep their own).
STOPWORDS = frozenset({
    "a", "an", "and", "are", "as", "at", "be", "been", "but", "by", "can", "could", "did", "do", "does", "for",
    "from", "had", "has", "have", "how", "i", "if", "in", "into", "is", "it", "its", "me", "my", "no", "not",
    "of", "on", "or", "our", "should", "so", "than", "that", "the", "their", "them", "then", "there", "these",
    "they", "this", "to", "was", "we", "were", "what", "when", "where", "which", "who", "why", "will", "with",
    "would", "you", "your",
})
_TOKEN = re.compile(r"[A-Za-z0-9_$][A-Za-z0-9_.\-/{}$%]*[A-Za-z0-9_}%]|[A-Za-z0-9]")
_PART = re.compile(r"[a-z0-9]+")


def index_terms(text: str) -> list[str]:
    """Lower-cased terms: each token whole, plus its alphanumeric parts when it has punctuation inside.

    ``"Set delivery.retry.max_attempts to 5"`` → ``["set", "delivery.retry.max_attempts",
    "delivery", "retry", "max", "attempts", "5"]``.  Stopwords are dropped.
    """
    terms: list[str] = []
    for token in _TOKEN.findall(text.lower()):
        token = token.rstrip(".")
        if token in STOPWORDS or not token:
            continue
        terms.append(token)
        parts = _PART.findall(token)
        if len(parts) > 1 or (parts and parts[0] != token):
            terms += [p for p in parts if p not in STOPWORDS]
    return terms


def passage_terms(passage: Passage) -> list[str]:
    """What a passage is indexed by: its article title, its heading and its text."""
    return index_terms(f"{passage.title}\n{passage.locator.heading}\n{passage.text}")


def case_query(case: Case, use_history: bool = True) -> str:
    """The retrieval query: the question, preceded by earlier user turns for multi-turn cases."""
    if not use_history:
        return case.query
    earlier = [t.content for t in case.history if t.role == "user"]
    return "\n".join([*earlier, case.query])


@dataclass(frozen=True)
class Hit:
    """One retrieved passage with its rank (1-based) and score."""

    passage: Passage
    score: float
    rank: int


class BM25Retriever:
    """BM25 over the passages of each tenant separately (so ranking never sees other tenants)."""

    def __init__(self, passages: Sequence[Passage], k1: float = 1.5, b: float = 0.75):
        import bm25s  # here, not at the top: Hit alone (a page's kernel) needs no scipy or numba

        self.k1, self.b = k1, b
        self._by_tenant: dict[str, list[Passage]] = {}
        for p in sorted(passages, key=lambda p: p.passage_id):
            self._by_tenant.setdefault(p.locator.tenant, []).append(p)
        self._index: dict[str, bm25s.BM25] = {}
        for tenant, items in self._by_tenant.items():
            index = bm25s.BM25(k1=k1, b=b)
            index.index([passage_terms(p) or ["\x00empty"] for p in items], show_progress=False)
            self._index[tenant] = index

    @property
    def tenants(self) -> tuple[str, ...]:
        return tuple(sorted(self._by_tenant))

    def passages(self, tenant: str) -> list[Passage]:
        return list(self._by_tenant.get(tenant, []))

    def scores(self, query: str, tenant: str) -> np.ndarray:
        """BM25 score of every passage of ``tenant`` (in passage-id order)."""
        if tenant not in self._index:
            return np.zeros(0)
        terms = index_terms(query)
        if not terms:
            return np.zeros(len(self._by_tenant[tenant]))
        return np.asarray(self._index[tenant].get_scores(terms), dtype=np.float64)

    def search(self, query: str, tenant: str, k: int = 5) -> list[Hit]:
        """Top ``k`` passages of ``tenant`` by BM25, ties broken by passage id."""
        if k < 1:
            raise ValueError(f"k must be >= 1, got {k}")
        scores = np.round(self.scores(query, tenant), 9)
        items = self._by_tenant.get(tenant, [])
        # Items are held in passage-id order, so a stable sort on -score breaks ties by passage id.
        order = np.argsort(-scores, kind="stable")[:k]
        return [Hit(items[i], round(float(scores[i]), 6), r + 1) for r, i in enumerate(order) if scores[i] > 0]


def rrf_fuse(rankings: Iterable[Sequence[str]], k: int = 60) -> list[str]:
    """Reciprocal rank fusion: score(id) = Σ over rankings of 1 / (k + rank), rank 1-based.

    Sorted by fused score descending, then id ascending (a stable tie-break).
    An id absent from a ranking contributes nothing for it.
    """
    if k < 0:
        raise ValueError(f"rrf k must be >= 0, got {k}")
    fused: dict[str, float] = {}
    for ranking in rankings:
        seen: set[str] = set()
        for rank, item in enumerate(ranking, start=1):
            if item in seen:
                continue
            seen.add(item)
            fused[item] = fused.get(item, 0.0) + 1.0 / (k + rank)
    return sorted(fused, key=lambda item: (-fused[item], item))


def build_retriever(corpus: Corpus, config: Config) -> BM25Retriever:
    """Chunk ``corpus`` as the configuration says and index it."""
    from ..corpus import chunk_corpus

    chunking = config["chunking"]
    options = {"size": chunking["size"], "overlap": chunking["overlap"]} if chunking["method"] == "fixed" else {}
    return BM25Retriever(chunk_corpus(corpus, chunking["method"], **options))


#: An extra retrieval leg: (query, tenant, the tenant's passages) -> passage ids, best first.
Leg = Callable[[str, str, Sequence[Passage]], Iterable[str]]


def retrieve_cases(
    dataset: Dataset, config: Config, retriever: BM25Retriever | None = None, extra_legs: Sequence[Leg] = ()
) -> dict[str, list[Hit]]:
    """Top-k passages for every case of ``dataset`` (sorted by case id).

    With ``retrieval.method: hybrid`` each callable in ``extra_legs``
    (``leg(query, tenant, passages) -> ranked passage ids``, e.g. the
    embedding leg) is fused with the BM25 ranking by :func:`rrf_fuse`; a
    fused hit's score is its RRF score.
    """
    retriever = retriever or build_retriever(dataset.corpus, config)
    k = config["retrieval.k"]
    out: dict[str, list[Hit]] = {}
    for case_id in sorted(dataset.cases):
        case = dataset.cases[case_id]
        query = case_query(case, config["retrieval.use_history"])
        if config["retrieval.method"] == "hybrid" and extra_legs:
            pool = retriever.passages(case.tenant)
            bm25 = [h.passage.passage_id for h in retriever.search(query, case.tenant, k=max(len(pool), 1))]
            rankings = [bm25] + [list(leg(query, case.tenant, pool)) for leg in extra_legs]
            rrf_k = config["retrieval.rrf_k"]
            fused = rrf_fuse(rankings, rrf_k)[:k]
            by_id = {p.passage_id: p for p in pool}
            scores = {pid: sum(1.0 / (rrf_k + r.index(pid) + 1) for r in rankings if pid in r) for pid in fused}
            out[case_id] = [Hit(by_id[pid], round(scores[pid], 6), i + 1) for i, pid in enumerate(fused)]
        else:
            out[case_id] = retriever.search(query, case.tenant, k)
    return out
