"""Hard assertions: each check passing, failing and not applying; citation marker parsing; the summary."""
from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from playground.golden import load_dataset
from playground.harness.assertions import (
    ASSERTIONS,
    AssertionResult,
    check_assertions,
    citation_markers,
    summarise,
)
from playground.model import Locator, Passage

MINI = Path(__file__).resolve().parent / "data" / "mini"


@pytest.fixture(scope="module")
def ds():
    return load_dataset(MINI)  # read only


@pytest.fixture(scope="module")
def normal(ds):
    return ds.cases["GC-0001"]  # acme, must_contain ["15"]


@pytest.fixture(scope="module")
def cross(ds):
    return ds.cases["GC-0002"]  # acme, cross_tenant (must abstain), forbidden ["$0.65", "TW-PRO-250"]


def passage(ds, tenant, slug, heading) -> Passage:
    locator = Locator(tenant, slug, heading)
    return Passage(locator, ds.corpus.resolve(locator).text)


@pytest.fixture(scope="module")
def acme(ds):
    return [passage(ds, "acme", "retries", "Timeouts"), passage(ds, "acme", "retries", "Retry schedule")]


@pytest.fixture(scope="module")
def five(ds):
    """Five acme passages: every acme section, then repeats (a retriever may offer near-duplicates)."""
    sections = [Passage(d.locator(s.heading), s.text) for d in ds.corpus.for_tenant("acme") for s in d.sections]
    return (sections * 5)[:5]


def by_name(results):
    return {r.name: r for r in results}


def statuses(results):
    return {r.name: r.status for r in results}


def test_results_come_in_the_fixed_order(normal, cross, acme):
    for case in (normal, cross):
        for passages in ([], acme):
            assert [r.name for r in check_assertions(case, passages, "Anything.", False)] == list(ASSERTIONS)


def test_grounded_correct_answer_passes_what_applies(ds, normal, acme):
    text = ds.responses["GC-0001-R1"].text
    assert statuses(check_assertions(normal, acme, text, False)) == {
        "must_abstain": "n/a",
        "no_cross_tenant_passage": "pass",
        "no_forbidden_text": "n/a",
        "no_fabricated_citation": "pass",
        "must_contain": "pass",
    }


# --- must_abstain -------------------------------------------------------------------------


def test_must_abstain_passes_on_an_abstention(ds, cross, acme):
    results = by_name(check_assertions(cross, acme, ds.responses["GC-0002-R1"].text, True))
    assert results["must_abstain"].status == "pass"
    assert results["no_forbidden_text"].status == "pass"


def test_must_abstain_fails_when_the_response_answers(cross, acme):
    r = by_name(check_assertions(cross, acme, "Globex pays a fixed fee.", False))["must_abstain"]
    assert r.status == "fail" and "cross_tenant" in r.detail


def test_must_abstain_on_a_normal_case_is_not_applicable_not_passed(normal, acme):
    for abstained in (True, False):
        r = by_name(check_assertions(normal, acme, "I can't find that.", abstained))["must_abstain"]
        assert r.status == "n/a"


FRUIT = ["apple", "banana", "cherry", "damson", "elder", "fig", "grape", "hazel", "iris", "juniper", "kiwi", "lemon",
         "mango"]


def test_abstention_cap_is_exactly_twelve_content_tokens(cross, acme):
    """An abstention may keep ABSTENTION_MAX_CONTENT (12) content tokens besides its clause; 13 is an answer."""
    from playground.harness.score import ABSTENTION_MAX_CONTENT, is_abstention

    assert ABSTENTION_MAX_CONTENT == 12
    at_cap = "I don't know. " + " ".join(FRUIT[:12]) + "."
    over = "I don't know. " + " ".join(FRUIT[:13]) + "."
    assert is_abstention(at_cap) and not is_abstention(over)
    assert by_name(check_assertions(cross, acme, at_cap, is_abstention(at_cap)))["must_abstain"].status == "pass"
    assert by_name(check_assertions(cross, acme, over, is_abstention(over)))["must_abstain"].status == "fail"


def test_citation_marker_exactly_the_number_of_passages_is_valid(normal, five):
    # [n] is valid for 1 <= n <= len(passages): [5] with five passages passes, [6] fails
    assert by_name(check_assertions(normal, five, "Retries [5].", False))["no_fabricated_citation"].status == "pass"
    assert by_name(check_assertions(normal, five, "Retries [6].", False))["no_fabricated_citation"].status == "fail"
    assert by_name(check_assertions(normal, five, "Retries [1].", False))["no_fabricated_citation"].status == "pass"


# --- cross-tenant leak, on the passages -------------------------------------------------------


def test_planted_cross_tenant_passage_fails(ds, cross, acme):
    planted = [*acme, passage(ds, "globex", "billing", "Price")]
    r = by_name(check_assertions(cross, planted, "I can't find that in this knowledge base.", True))[
        "no_cross_tenant_passage"]
    assert r.status == "fail"
    assert "1 of 3 passages" in r.detail and "[3] globex/billing#price" in r.detail
    assert "acme/retries" not in r.detail


def test_a_foreign_section_inside_a_window_also_fails(ds, normal, acme):
    leaky = dataclasses.replace(acme[0], overlaps=(Locator("globex", "billing", "Price"),))
    r = by_name(check_assertions(normal, [leaky], "15 seconds [1].", False))["no_cross_tenant_passage"]
    assert r.status == "fail"


def test_cross_tenant_passage_check_needs_passages(normal):
    assert by_name(check_assertions(normal, [], "15 seconds.", False))["no_cross_tenant_passage"].status == "n/a"


# --- cross-tenant leak, on the answer -------------------------------------------------------


def test_forbidden_text_in_the_answer_fails(cross, acme):
    r = by_name(check_assertions(cross, acme, "Globex pays $0.65 per 10,000 events on tw-pro-250.", False))[
        "no_forbidden_text"]
    assert r.status == "fail"
    assert "'$0.65'" in r.detail and "'TW-PRO-250'" in r.detail  # case-insensitive match, names both


def test_forbidden_text_is_checked_even_on_an_abstention(cross):
    r = by_name(check_assertions(cross, [], "I can't share that Globex price ($0.65).", True))["no_forbidden_text"]
    assert r.status == "fail"


def test_forbidden_text_not_listed_is_not_applicable(normal, acme):
    assert by_name(check_assertions(normal, acme, "$0.65", False))["no_forbidden_text"].status == "n/a"


# --- fabricated citations -------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, expected",
    [
        ("No markers here.", []),
        ("Fifteen seconds [1].", [1]),
        ("Both [1, 3] agree.", [1, 3]),
        ("Tight [1,3;4] list.", [1, 3, 4]),
        ("Stacked [2][7].", [2, 7]),
        ("Range [2-4] and [5–5].", [2, 3, 4, 5]),
        ("Zero [0] and again [1] and [1].", [0, 1, 1]),
        ("Not markers: [a], [1a], [](x), [link](http://x), [ ].", []),
        ("Huge range [1-1000].", [1, 1000]),
    ],
)
def test_citation_markers(text, expected):
    assert citation_markers(text) == expected


def test_fabricated_seven_with_five_passages_fails(normal, five):
    assert len(five) == 5
    r = by_name(check_assertions(normal, five, "It is 15 seconds [1]. Retries back off [7].", False))[
        "no_fabricated_citation"]
    assert r.status == "fail"
    assert r.detail == "[7] cites no passage (valid: [1]..[5])"


def test_marker_zero_fails(normal, five):
    r = by_name(check_assertions(normal, five, "It is 15 seconds [0].", False))["no_fabricated_citation"]
    assert r.status == "fail" and "[0]" in r.detail


def test_grouped_markers_within_range_pass(normal, five):
    r = by_name(check_assertions(normal, five, "It is 15 seconds [1, 3]. Retries back off [2][5].", False))[
        "no_fabricated_citation"]
    assert r.status == "pass"


def test_stacked_markers_name_only_the_fabricated_one(normal, five):
    r = by_name(check_assertions(normal, five, "It is 15 seconds [2][7].", False))["no_fabricated_citation"]
    assert r.status == "fail" and "[7]" in r.detail and "[2]" not in r.detail


def test_any_marker_without_passages_is_fabricated(normal):
    r = by_name(check_assertions(normal, [], "It is 15 seconds [1].", False))["no_fabricated_citation"]
    assert r.status == "fail" and "no passages were offered" in r.detail


def test_no_marker_is_not_applicable(normal, five):
    assert by_name(check_assertions(normal, five, "It is 15 seconds.", False))["no_fabricated_citation"].status == "n/a"


# --- must_contain ---------------------------------------------------------------------------


def test_must_contain_fails_when_a_literal_is_missing(normal, acme):
    r = by_name(check_assertions(normal, acme, "It is fifteen seconds [1].", False))["must_contain"]
    assert r.status == "fail" and "'15'" in r.detail


def test_must_contain_is_case_insensitive(normal, acme):
    case = dataclasses.replace(normal, must_contain=("15", "Endpoint.Timeout_MS"))
    r = by_name(check_assertions(case, acme, "Set endpoint.timeout_ms to 15000 [1].", False))["must_contain"]
    assert r.status == "pass"


def test_must_contain_on_a_must_abstain_case_is_not_applicable(cross, acme):
    case = dataclasses.replace(cross, must_contain=("never",))
    r = by_name(check_assertions(case, acme, "I can't find that.", True))["must_contain"]
    assert r.status == "n/a"


def test_must_contain_not_listed_is_not_applicable(normal, acme):
    case = dataclasses.replace(normal, must_contain=())
    assert by_name(check_assertions(case, acme, "Anything.", False))["must_contain"].status == "n/a"


# --- summary ----------------------------------------------------------------------------------


def test_summarise_counts_and_never_counts_na_as_passed(ds, normal, cross, acme, five):
    per_case = {
        "GC-0002": check_assertions(cross, [*acme, passage(ds, "globex", "billing", "Price")],
                                    "Globex pays $0.65 [1].", False),
        "GC-0001": check_assertions(normal, five, "It is 15 seconds [7].", False),
        "GC-0003": check_assertions(normal, acme, "It is 15 seconds.", False),
    }
    summary = summarise(per_case)
    assert list(summary) == list(ASSERTIONS)
    assert summary["must_abstain"] == {"passed": 0, "failed": 1, "not_applicable": 2, "failing_cases": ["GC-0002"]}
    assert summary["no_cross_tenant_passage"] == {
        "passed": 2, "failed": 1, "not_applicable": 0, "failing_cases": ["GC-0002"]}
    assert summary["no_forbidden_text"] == {
        "passed": 0, "failed": 1, "not_applicable": 2, "failing_cases": ["GC-0002"]}
    assert summary["no_fabricated_citation"] == {
        "passed": 1, "failed": 1, "not_applicable": 1, "failing_cases": ["GC-0001"]}
    assert summary["must_contain"] == {"passed": 2, "failed": 0, "not_applicable": 1, "failing_cases": []}


def test_summarise_sorts_failing_cases_and_rejects_unknown_status():
    fail = AssertionResult("must_abstain", "fail", "")
    summary = summarise({"GC-0009": [fail], "GC-0002": [fail]})
    assert summary["must_abstain"]["failing_cases"] == ["GC-0002", "GC-0009"]
    assert summarise({})["must_contain"] == {"passed": 0, "failed": 0, "not_applicable": 0, "failing_cases": []}
    with pytest.raises(ValueError, match="unknown assertion status"):
        summarise({"GC-0001": [AssertionResult("must_abstain", "skipped", "")]})
