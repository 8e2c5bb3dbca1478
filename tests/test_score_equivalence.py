"""The deterministic scorers' outputs are bit-identical to a reference implementation.

``tests/fixtures/score_reference.json`` holds the outputs of the scorers and
tokeniser as computed by the code of commit d9618ed (main before the speed
work of issue 18, ``bench/bench_score.py``), regenerated once at the commit
that changed the rules deliberately for issue 26 (the artefacts rule, refusal
patterns, word lists, rules per kind: docs/scorers.md) and once at the commit that changed them for
issue 36 (empty claims unverifiable, the entities rule, number words and magnitude suffixes, enumerators
in brackets, ``_emphasis_``, diacritics, Chinese and Japanese segmentation), each before any speed work
on top: that code is the reference implementation, and the fixture is its
output, not the output of the code under test copied back.  The speed work may change how a score is computed,
never what it is; every float is compared exactly (JSON keeps a float's
``repr``, which round-trips).

Four inputs:

* the shipped golden set: every response against its case's expected source
  sections plus the first two sections of the tenant's first article (so
  every context has off-topic passages), with the case's query, reference
  answer and facts;
* the shared RAGTruth sample ``claims.jsonl`` (334 claims, each against its
  evidence passages);
* 100 synthetic responses of the bench's ``fresh`` workload (invented
  numbers, identifiers, names, hedges, citations);
* :data:`TRICKY`, eleven texts at the edges of the tokeniser's rules and of the
  cheap pre-checks that decide whether a regex runs.

Per item the fixture keeps every scorer value (support, support detail,
response signals, relevance, correctness, fact coverage, abstention) and a
digest of the detail's token lists and of the tokeniser's outputs (:func:`tokens.analyze` with and without
markers, :func:`tokens.context_keys`) for every text involved.

To regenerate (only from reference code, e.g. after a deliberate change of a
scoring rule, on the commit that makes it and before any speed change on
top): ``PYTHONPATH=$PWD python tests/test_score_equivalence.py --write``; put
``PYTHONPATH`` at a checkout of the reference code to write it from there.
"""
from __future__ import annotations

import hashlib
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from playground.claims import split_claims
from playground.golden import load_dataset
from playground.harness import score as S
from playground.harness import tokens

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "tests" / "fixtures" / "score_reference.json"
DATA = Path(os.environ.get("PLAYGROUND_SHARED_DATA", ROOT.parent / "shared" / "data"))
RAGTRUTH = DATA / "ragtruth" / "claims.jsonl"
BENCH_RESPONSES = 100


def _digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()[:16]


def _token_digest(texts: Sequence[str]) -> str:
    """One digest of the detail's token lists and of the tokeniser's outputs on ``texts`` (each Analysis field, both
    marker settings, and the sorted context keys)."""
    out = []
    for t in texts:
        row = []
        for markers in (True, False):
            a = tokens.analyze(t, markers=markers)
            row.append([list(a.words), list(a.content), sorted(a.numbers), sorted(a.identifiers),
                        sorted(a.names), list(a.negations), a.exact_count])
        row.append(sorted(tokens.context_keys(t)))
        out.append(row)
    return _digest(out)


def _detail(claim: str, ctx: S.Context) -> list[Any]:
    d = S.support_detail(claim, ctx)
    evidence = [d.content_tokens, d.matched_tokens, d.missing_tokens, d.exact_items, d.missing_exact,
                d.removed, d.negations, d.speaker_items]
    return [d.score, d.coverage, d.best_passage, d.best_passage_coverage, _digest([list(e) for e in evidence])]


def _signals(query: str, response: str, sentences: Sequence[str], ctx: S.Context) -> list[Any]:
    s = S.response_signals(query, response, sentences, ctx)
    return [s.groundedness, s.attribution, s.specificity, s.hedging, s.answer_relevance,
            s.context_quality, s.abstained, s.disagreement, list(s.sentence_support), s.top_retrieval_similarity]


def _golden() -> dict[str, Any]:
    ds = load_dataset()
    out: dict[str, Any] = {}
    for rid, resp in ds.responses.items():
        case = ds.cases[resp.case_id]
        passages = [sec.text for loc in case.expected_sources if (sec := ds.corpus.resolve(loc)) is not None]
        docs = ds.corpus.for_tenant(case.tenant)
        passages += [s.text for s in docs[0].sections[:2]] if docs else []
        passages = list(dict.fromkeys(passages))
        ctx = S.Context(passages)
        sentences = [c.text for c in split_claims(resp.text, rid)]
        facts = [f.statement for f in case.reference_facts]
        out[rid] = {
            "signals": _signals(case.query, resp.text, sentences, ctx),
            "details": [_detail(s, ctx) for s in sentences],
            "correctness": [S.correctness(s, case.reference_answer, facts) for s in sentences],
            "relevance": [S.relevance(case.query, p) for p in passages],
            "context_quality": S.context_quality(case.query, passages),
            "answer_relevance": S.answer_relevance(case.query, resp.text),
            "groundedness": S.groundedness(sentences, passages),
            "attribution": S.attribution(sentences, passages),
            "specificity": S.specificity(resp.text),
            "hedging": S.hedging(resp.text),
            "abstention": [S.is_abstention(resp.text), *(S.is_abstention(s) for s in sentences)],
            "covered": [S.fact_covered(resp.text, f.accept) for f in case.reference_facts],
            "tokens": _token_digest([case.query, resp.text, case.reference_answer, *sentences, *passages]),
        }
    return out


def _ragtruth() -> dict[str, Any]:
    out: dict[str, Any] = {}
    for line in RAGTRUTH.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        claim, evidence = row["claim"], list(row["evidence"])
        ctx = S.Context(evidence)
        out[row["example_id"]] = {
            "support": S.support(claim, evidence),
            "detail": _detail(claim, ctx),
            "signals": _signals(claim, claim, [claim], ctx),
            "relevance": [S.relevance(claim, p) for p in evidence],
            "abstention": S.is_abstention(claim),
            "tokens": _token_digest([claim, *evidence]),
        }
    return out


def _bench() -> dict[str, Any]:
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        from bench_score import make_responses  # type: ignore[import-not-found]
    finally:
        sys.path.pop(0)
    out: dict[str, Any] = {}
    for i, r in enumerate(make_responses(BENCH_RESPONSES, workload="fresh")):
        ctx = S.Context(r["passages"])
        ref = S.Context([r["reference"]])
        out[str(i)] = {
            "signals": _signals(r["query"], r["response"], r["claims"], ctx),
            "relevance": [S.relevance(r["query"], p) for p in r["passages"]],
            "correctness": [S.support(c, ref) for c in r["claims"]],
            "details": [_detail(c, ctx) for c in r["claims"]],
            "covered": S.fact_covered(r["response"], r["accept"]),
            "tokens": _token_digest([r["query"], r["response"], *r["claims"], *r["passages"]]),
        }
    return out


#: Edge cases of the tokeniser and the pre-checks in front of its regexes: case
#: changes that alter length or depend on context (final sigma, dotted I), curly
#: apostrophes, markers and bullets at a text or line start or not, list numbers,
#: code spans, identifiers, numbers with leading zeros and non-ASCII digits,
#: hedges split over a line break or inside longer words.
TRICKY: tuple[str, ...] = (
    "- Retries are capped at 5 attempts [2].\n* Keys expire after 045 days.",
    "Retries - five of them - are capped; see Passage 3: the limit is 5.",
    "1. Open the console.\n2. Click Replay (Passage 2, 3).\nStep 3: wait 15s.",
    "The ΑΣ team and ΟΔΟΣ met in İstanbul on 2025-01-13 at 09:30.",
    "Tidewell’s `maxAttempts` and `delivery.retry.max_attempts` default to 007 and 0.",
    "It depends\non the plan; results can\n vary, roughly 3.50% of jobs may be dismayed.",
    "The Bergen-Belsen camp was re-examined ٣ times; TW-4291 failed at /v2/endpoints/{id}/replay.",
    "NASA said Louis Jordan found $1,000.50 and 15s, 5th and 100°F in U.S. records.",
    "  •  Sometimes approximately some somewhat-likely cases I think are not sure.",
    "don't isn't it's TW-ENT-HIPAA events:publish and/or snake_case v2 — fine?",
    "東京 and TWa met McDonald, iPhone, eBay, ÉCOLE and Ünited at Tidewell2 in ΣΟΦΊΑ.",
    "**Keys** expire after 45 days.</s> See [docs](https://x.example/keys) or www.example.com.<|im_end|>",
    "## Retries\n> pants/jeans/shorts | 5 |\n[/INST] I can't provide an answer; great question! ―\u00a0done",
)


def _tricky() -> dict[str, Any]:
    out: dict[str, Any] = {}
    for i, t in enumerate(TRICKY):
        ctx = S.Context([t, TRICKY[(i + 1) % len(TRICKY)]])
        out[str(i)] = {
            "tokens": _token_digest([t]),
            "markers": tokens.strip_markers(t),
            "hedging": S.hedging(t),
            "specificity": S.specificity(t),
            "detail": _detail(t, ctx),
            "signals": _signals(t, t, [t, *t.split("\n")], ctx),
            "relevance": S.relevance(t, TRICKY[(i + 3) % len(TRICKY)]),
            "numbers": [tokens.number_value(x) for x in t.split() if x[:1].isdigit()],
        }
    return out


def compute() -> dict[str, Any]:
    """Every output the fixture holds, computed by the code on the path."""
    return {"golden": _golden(), "ragtruth": _ragtruth(), "bench": _bench(), "tricky": _tricky()}


@pytest.fixture(scope="module")
def reference() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(FIXTURE.read_text(encoding="utf-8"))
    return data


def _mismatches(expected: dict[str, Any], actual: dict[str, Any]) -> list[str]:
    assert sorted(expected) == sorted(actual)
    bad = []
    for key, exp in expected.items():
        for field, value in exp.items():
            if actual[key][field] != value:
                bad.append(f"{key}.{field}: expected {value!r}, got {actual[key][field]!r}")
    return bad


def test_golden_outputs_match_reference(reference: dict[str, Any]) -> None:
    actual = _golden()
    assert len(actual) == 200
    # the reference outputs were regenerated for issue 36 (empty claims, the entities rule, number words,
    # magnitude suffixes, enumerators, diacritics, CJK segmentation), so they hold every golden response
    assert sorted(set(actual) - set(reference["golden"])) == []
    actual = {rid: out for rid, out in actual.items() if rid in reference["golden"]}
    assert _mismatches(reference["golden"], actual) == []


def test_ragtruth_outputs_match_reference(reference: dict[str, Any]) -> None:
    # the shared data are required (no skip), as in the other real-data tests
    assert RAGTRUTH.exists(), f"the shared RAGTruth sample {RAGTRUTH} is missing (set PLAYGROUND_SHARED_DATA)"
    actual = _ragtruth()
    assert len(actual) == 334
    assert _mismatches(reference["ragtruth"], actual) == []


def test_bench_outputs_match_reference(reference: dict[str, Any]) -> None:
    actual = _bench()
    assert len(actual) == BENCH_RESPONSES
    assert _mismatches(reference["bench"], actual) == []


def test_edge_cases_match_reference(reference: dict[str, Any]) -> None:
    assert _mismatches(reference["tricky"], _tricky()) == []


def test_every_hedge_phrase_has_a_hint() -> None:
    """The hedge regex runs only on text holding a hint substring: every hedge
    phrase must contain one (else a hedge would be missed)."""
    hints = S.HEDGE_HINTS
    assert all(any(h in phrase for h in hints) for phrase in S.HEDGE_PATTERNS)
    assert S.hedging("Results may vary.") == 1.0 and S.hedging("Results vary.") == 0.0


def test_reference_has_varied_values(reference: dict[str, Any]) -> None:
    """The fixture would catch a change: its scores are spread, not all 0 or 1."""
    supports = [v["support"] for v in reference["ragtruth"].values()]
    assert sum(0.0 < s < 1.0 for s in supports) >= 100
    assert sum(s == 0.0 for s in supports) >= 10
    claim_support = [x for v in reference["bench"].values() for x in v["signals"][8]]
    assert len(set(claim_support)) >= 30


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        raise SystemExit("usage: PYTHONPATH=$PWD python tests/test_score_equivalence.py --write")
    FIXTURE.write_text(json.dumps(compute(), sort_keys=True, separators=(",", ":")) + "\n", encoding="utf-8")
    print(f"wrote {FIXTURE} ({FIXTURE.stat().st_size:,} bytes)")
