"""BM25 retrieval: tenant filtering, exact identifiers, stable ties, reciprocal rank fusion."""
import pytest

from playground.harness.retrieve import BM25Retriever, case_query, index_terms, rrf_fuse
from playground.model import Case, Locator, Passage, Turn


def P(tenant, slug, heading, text):
    return Passage(Locator(tenant, slug, heading), text, slug)


PASSAGES = [
    P("acme", "errors", "TW-4291", "TW-4291 means the endpoint throttled the delivery."),
    P("acme", "errors", "TW-4219", "TW-4219 means the account publish limit was hit."),
    P("acme", "retries", "Schedule", "Deliveries are retried 5 times with backoff."),
    P("globex", "retries", "Schedule", "Deliveries are retried 9 times, TW-4291 included."),
]


def test_index_terms_keep_identifiers_whole_and_split():
    assert index_terms("Set delivery.retry.max_attempts to 5") == [
        "set", "delivery.retry.max_attempts", "delivery", "retry", "max", "attempts", "5"]
    assert "tw-4291" in index_terms("Error TW-4291.") and "4291" in index_terms("Error TW-4291.")


def test_exact_identifier_ranks_its_own_entry_first():
    r = BM25Retriever(PASSAGES)
    hits = r.search("What does TW-4291 mean?", "acme", k=5)
    assert hits[0].passage.locator.heading == "TW-4291"
    assert [h.rank for h in hits] == list(range(1, len(hits) + 1))


def test_search_never_leaves_the_tenant():
    r = BM25Retriever(PASSAGES)
    for query in ("retried 9 times", "TW-4291", "deliveries"):
        assert all(h.passage.locator.tenant == "acme" for h in r.search(query, "acme", k=10))
    assert r.search("anything", "initech") == []


def test_ties_break_by_passage_id():
    same = [Passage(Locator("acme", f"doc-{c}", "H"), "identical words here", "Same title") for c in "cab"]
    hits = BM25Retriever(same).search("identical words", "acme", k=3)
    assert [h.passage.locator.slug for h in hits] == ["doc-a", "doc-b", "doc-c"]
    assert len({h.score for h in hits}) == 1


def test_no_shared_term_returns_nothing_and_k_is_checked():
    r = BM25Retriever(PASSAGES)
    assert r.search("zebra", "acme") == []
    with pytest.raises(ValueError):
        r.search("x", "acme", k=0)


def test_rrf_fuse_by_hand():
    # k=60: a: 1/61 + 1/62, b: 1/62 + 1/61, c: 1/63 → a and b tie, broken by id
    assert rrf_fuse([["a", "b", "c"], ["b", "a"]], k=60) == ["a", "b", "c"]
    # d only in the second list at rank 1 (1/61) beats c at rank 3 (1/63)
    assert rrf_fuse([["a", "b", "c"], ["d"]], k=60)[:3] == ["a", "d", "b"]
    assert rrf_fuse([["x", "x", "y"]]) == ["x", "y"]  # duplicates count once


def test_multi_turn_query_includes_earlier_user_turns():
    case = Case("GC-0001", "multi_turn", "acme", "And the second one?",
                (Turn("user", "What is TW-4291?"), Turn("assistant", "A throttle.")), (), "", ())
    assert case_query(case) == "What is TW-4291?\nAnd the second one?"
    assert case_query(case, use_history=False) == "And the second one?"
