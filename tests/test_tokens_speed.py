"""The shortcuts the speed work put in front of the tokeniser's regexes and caches.

Each shortcut must give what the long way gives; expectations are written by
hand from the rules in :mod:`playground.harness.tokens` (the broad check against
the reference code is ``tests/test_score_equivalence.py``).
"""
from __future__ import annotations

import pytest

from playground.harness import score as S
from playground.harness import tokens as T


@pytest.mark.parametrize(("token", "value"), [
    ("007", "7"), ("0", "0"), ("000", "0"), ("1000", "1000"),  # ASCII digits: the fast path
    ("1,000", "1000"), ("$0.65", "0.65"), ("15s", "15"), ("3.50", "3.5"), ("1.2.3", "1.2.3"),
    ("٣", "٣"), ("٠٣", "٠٣"),  # Arabic-Indic digits: decimal but not ASCII, the regex path (no "0" to strip)
])
def test_number_value(token: str, value: str) -> None:
    assert T.number_value(token) == value


def test_match_keys_is_match_key_per_token() -> None:
    tokens = ["motivated", "motivation", "tw-4291", "5", "fly", "bergen"]
    assert list(T.match_keys(tokens)) == ["motiv", "motiv", "tw-4291", "5", "fly", "berge"]
    assert list(T.match_keys(tokens)) == [T.match_key(t) for t in tokens]  # again, from the cache


@pytest.mark.parametrize(("text", "stripped"), [
    ("- Keys expire.", " \nKeys expire."),            # a bullet at the text start
    ("  * Keys expire.", " \nKeys expire."),          # after spaces
    ("Keys\n• expire.", "Keys\n \nexpire."),          # at a line start
    ("Keys - expire.", "Keys - expire."),             # not at a line start: kept
    ("-Keys expire.", "-Keys expire."),               # no space after the dash: no bullet
    ("2. Keys expire.", " \n Keys expire."),          # a list number at the text start
    ("Done. 3. Keys expire.", "Done. \n Keys expire."),  # after a sentence end
    ("Version 3.5 keys.", "Version 3.5 keys."),       # a decimal is no list number
])
def test_markers_at_line_starts_only(text: str, stripped: str) -> None:
    assert T.strip_markers(text) == stripped


def test_camel_case_needs_a_capital_after_a_lower_case_letter() -> None:
    for word, camel in [("maxAttempts", True), ("iPhone", True), ("Tidewell", False), ("TWa", False),
                        ("NASA", False), ("McDonald", True), ("東京", False)]:
        assert (word.lower() in T.analyze(f"see {word} now").identifiers) is camel, word


def test_hedge_hints_cover_every_phrase_and_nothing_is_lost() -> None:
    assert all(any(h in phrase for h in S.HEDGE_HINTS) for phrase in S.HEDGE_PATTERNS)
    # the hedge split over a line break counts in the first of three sentences
    assert S.hedging("It can\n vary. Keys expire.") == 1 / 3
    sig = S.response_signals("keys", "It can vary. Keys expire.", ["It can vary.", "Keys expire."], ["Keys expire."])
    assert sig.hedging == 0.5
    sig = S.response_signals("keys", "Keys expire. Keys rotate.", ["Keys expire.", "Keys rotate."], ["Keys expire."])
    assert sig.hedging == 0.0
