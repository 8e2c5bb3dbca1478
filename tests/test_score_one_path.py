"""One scoring path for support (issue 27): ``support()`` and ``support_detail()`` score through the same function.

The score of both is :func:`playground.harness.support._score` of the claim's view and the context: replacing
that one function changes both, and on real claims the detail's score equals ``support()`` exactly, for every
kind of text.
"""
from __future__ import annotations

from typing import Any

import pytest

from playground.harness import score as S
from playground.harness import support as support_module

CTX = ["Retries are capped at 5 attempts. Keys expire after 45 days.", "The console shows each replay."]
CLAIMS = (
    "Keys expire after 45 days.",
    "Retries are limited to 9 attempts.",  # an exact miss: 0.0 (qa), half its ROUGE-1 precision (summary, dialogue)
    "I think the console shows every replay?",  # speaker items (dialogue)
    "Based on the passages, the console shows each replay [2].",  # preamble and marker removed
    "I hope this helps!",  # nothing left to check
)


def test_support_and_support_detail_both_score_through_the_one_core(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[tuple[str, int]] = []

    def core(view: Any, ctx: S.Context) -> float:
        seen.append((view.cleaned, len(ctx)))
        return 0.125

    monkeypatch.setattr(support_module, "_score", core)
    assert S.support("Keys expire after 45 days.", CTX) == 0.125
    assert S.support_detail("Keys expire after 45 days.", CTX).score == 0.125
    assert seen == [("Keys expire after 45 days.", 2)] * 2


@pytest.mark.parametrize("kind", S.KINDS)
def test_the_detail_score_is_support_exactly_for_every_kind(kind: str) -> None:
    for claim in CLAIMS:
        assert S.support_detail(claim, CTX, kind=kind).score == S.support(claim, CTX, kind=kind), claim


def test_the_exact_miss_scores_by_the_kind_rules_on_both_paths() -> None:
    claim = "Retries are limited to 9 attempts."
    # qa: the number 9 is missing -> EXACT_MISS_SCORE
    assert S.support(claim, CTX) == S.support_detail(claim, CTX).score == 0.0
    # summary: (0.0 + ROUGE-1 precision) / 2; the claim's tokens retries, are, limited, to, 9, attempts:
    # retries, are, attempts occur in the context -> 3/6
    assert S.support(claim, CTX, kind="summary") == S.support_detail(claim, CTX, kind="summary").score == 0.25
