# ruff: noqa: F811  (pytest fixtures imported from other test modules are used as arguments)
"""The case list's search (issue 24.4): every word, anywhere in the question, an answer or a context."""
from __future__ import annotations

import sys
from pathlib import Path

from playground.datasets import open_dataset
from playground.ui import apply_view_params
from playground.ui.search import CaseSearch, fold, terms
from playground.ui.session import session_for_dataset
from playground.ui.views import PlaygroundApp

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_session_lazy import imported as store  # noqa: F401  (fixtures used by name: 12 samples as "big")
from test_session_lazy import kept_in_tmp  # noqa: F401


def test_terms_fold_case_and_space():
    assert fold("  Straße\tÜBER  ") == "strasse über"
    assert terms("Retry  retry webhook") == ("retry", "webhook")
    assert terms("   ") == ()


def test_every_word_must_occur_somewhere_in_the_case():
    texts = {"a": ["How does the retry work?", "It waits 2 days."],
             "b": ["What is a webhook?", "Ask support."],
             "c": ["Retry the WEBHOOK", ""]}
    search = CaseSearch(list(texts), texts.__getitem__)
    assert search.matching("") is None  # no search: every case
    assert search.matching("retry") == ["a", "c"]
    assert search.matching("retry webhook") == ["c"]       # both words: AND
    assert search.matching("webhook retry") == ["c"]       # in any order
    assert search.matching("days") == ["a"]                # in the answer
    assert search.matching("zzz") == []


def test_typing_on_narrows_the_last_matches_and_gives_what_a_fresh_search_gives():
    texts = {f"c{i}": [f"word{i % 7} and thing{i % 3}"] for i in range(40)}
    calls: list[str] = []

    def reader(cid: str) -> list[str]:
        calls.append(cid)
        return texts[cid]

    search = CaseSearch(list(texts), reader)
    for typed in ("w", "wo", "wor", "word", "word1", "word1 t", "word1 thing2", "word", "thing"):
        fresh = CaseSearch(list(texts), texts.__getitem__).matching(typed)
        assert search.matching(typed) == fresh, typed
    assert len(calls) == 40  # each case's text read once, on the first search


def test_an_imported_dataset_is_searched_in_its_question_answer_and_contexts(store):
    s = session_for_dataset(open_dataset("big", store), store)
    cases = sorted(s.case_ids)
    # write_samples: sample i asks about "account i", and its contexts and response name the same account
    q = s.dataset.cases[cases[0]].query
    assert [r.case_id for r in s.set_filter(text="account 11?")] == [
        cid for cid in cases if "account 11?" in s.dataset.cases[cid].query]
    only_in_contexts = "lasts 4 days for account 5."  # the third context of sample 5 (1 + 5 % 3 = 3 contexts)
    hit = [r.case_id for r in s.set_filter(text=only_in_contexts)]
    assert len(hit) == 1 and "account 5?" in s.dataset.cases[hit[0]].query
    assert only_in_contexts not in s.dataset.cases[hit[0]].query
    assert all(only_in_contexts not in r.text for r in s.responses[hit[0]])
    assert s.built_cases == [cases[0]]  # searching made no passages and built no case
    assert s.set_filter(text=q.upper())[0].case_id == cases[0]  # case-insensitive
    assert s.url_params()["q"] == q.upper()


def test_the_search_box_filters_the_list_and_the_url_keeps_it(store, monkeypatch):
    s = session_for_dataset(open_dataset("big", store), store)
    app = PlaygroundApp(s, annotator="ann", chart=False)
    app.search.value = "account 10?"
    assert [cid for _, cid in app.case_list.options] == [
        cid for cid in sorted(s.case_ids) if "account 10?" in s.dataset.cases[cid].query]
    assert "1 of 12 cases shown matching “account 10?”" in app.list_note.value
    assert "&q=account%2010%3F" in app.bridge.query
    app.search.value = ""
    assert len(app.case_list.options) == 12 and "q=" not in app.bridge.query
    # a link with q= opens with the search in the box and the list filtered
    again = session_for_dataset(open_dataset("big", store), store)
    assert apply_view_params(again, {"q": "account 10?"}) == []
    app2 = PlaygroundApp(again, annotator="ann", chart=False)
    assert app2.search.value == "account 10?" and len(app2.case_list.options) == 1


def test_the_search_combines_with_the_other_filters(store):
    s = session_for_dataset(open_dataset("big", store), store)
    s.set_annotator("ann")
    cases = sorted(s.case_ids)
    accounts = [cid for cid in cases if "account 1" in s.dataset.cases[cid].query]  # 1, 10, 11
    assert len(accounts) == 3
    s.go_to(accounts[1])
    for vu in s.view_units():
        for d in vu.unit.dimensions:
            s.set_label(vu.unit.unit_id, d, 1)
    assert [r.case_id for r in s.set_filter(text="account 1")] == accounts
    assert [r.case_id for r in s.set_filter(status="done", text="account 1")] == [accounts[1]]
    assert [r.case_id for r in s.set_filter(status="unlabelled", text="account 1")] == [accounts[0], accounts[2]]
    assert len(s.set_filter(status="unlabelled")) == 11  # the search off again: the other filter alone
