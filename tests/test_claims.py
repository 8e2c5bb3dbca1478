"""The claim splitter: sentences, with numbers, abbreviations and citation markers kept whole."""
import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from playground.claims import split_claims


def texts(text):
    return [c.text for c in split_claims(text, "R")]


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Retries are capped at 5. The timeout is 15 s.", ["Retries are capped at 5.", "The timeout is 15 s."]),
        # decimals and versions never split
        (
            "Version 3.5 adds replay. It costs $0.65 per 1,000.",
            ["Version 3.5 adds replay.", "It costs $0.65 per 1,000."],
        ),
        # abbreviations stay inside their sentence
        ("Use a key, e.g. the staging key. Then retry.", ["Use a key, e.g. the staging key.", "Then retry."]),
        (
            "Limits differ (i.e. per plan). Dr. Byron owns them.",
            ["Limits differ (i.e. per plan).", "Dr. Byron owns them."],
        ),
        ("J. Smith approves it. Ask ext. 42 first.", ["J. Smith approves it.", "Ask ext. 42 first."]),
        # a citation marker after the sentence end belongs to that sentence
        ("Retries are capped at 5. [2] Then wait.", ["Retries are capped at 5. [2]", "Then wait."]),
        (
            "The limit is 250 requests/s.[1] Older docs said 100 [3].",
            ["The limit is 250 requests/s.[1]", "Older docs said 100 [3]."],
        ),
        ("Both agree. [1, 2] Done.", ["Both agree. [1, 2]", "Done."]),
        ("Check logs [1][3]. Then replay.", ["Check logs [1][3].", "Then replay."]),
        # lower-case continuation after a dot is not a new sentence
        ("Set timeout_ms. then restart", ["Set timeout_ms. then restart"]),
        # etc. ends a sentence only before an upper-case letter
        (
            "Retries, timeouts, etc. and more. Ask etc. Then go.",
            ["Retries, timeouts, etc. and more.", "Ask etc.", "Then go."],
        ),
        # questions, exclamations, quotes
        ('Is it 5? Yes! "Always" he said.', ["Is it 5?", "Yes!", '"Always" he said.']),
        # list items and blank lines always break
        (
            "Steps:\n- Open the console.\n- Click Replay.\n\nDone.",
            ["Steps:", "- Open the console.", "- Click Replay.", "Done."],
        ),
        ("1. First step\n2. Second step", ["1. First step", "2. Second step"]),
        # identifiers, paths and domains with dots stay whole
        (
            "Set delivery.retry.max_attempts to 5. Call GET /v2/deliveries.",
            ["Set delivery.retry.max_attempts to 5.", "Call GET /v2/deliveries."],
        ),
        ("", []),
        ("   \n\n  ", []),
    ],
)
def test_split(text, expected):
    assert texts(text) == expected


def test_offsets_and_ids_are_stable():
    text = "Retries are capped at 5 [1]. The timeout is 15 s."
    claims = split_claims(text, "GC-0001-R1")
    assert [(c.index, c.start, c.end) for c in claims] == [(0, 0, 28), (1, 29, 49)]
    assert all(text[c.start : c.end] == c.text for c in claims)
    assert claims[0].claim_id.startswith("GC-0001-R1:c0:")
    assert split_claims(text, "GC-0001-R1") == claims  # deterministic


@given(st.text(alphabet=st.sampled_from("ab .?!\n[]12-"), max_size=80))
def test_offsets_always_index_the_original(text):
    claims = split_claims(text, "R")
    for c in claims:
        assert text[c.start : c.end] == c.text and c.text == c.text.strip() and c.text
    # claims are in order and never overlap
    assert all(a.end <= b.start for a, b in itertools.pairwise(claims))
