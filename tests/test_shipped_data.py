"""The shipped corpus and golden set: they load, they hold what the issues require, the gate passes."""
from __future__ import annotations

import json
from collections import Counter

import pytest

from playground import REPO_ROOT
from playground.claims import split_claims
from playground.cli import main
from playground.golden import load_dataset
from playground.harness.config import load_config
from playground.harness.gate import gate
from playground.harness.run import run_harness
from playground.model import CASE_TYPES, VARIANTS


@pytest.fixture(scope="module")
def shipped():
    return load_dataset(REPO_ROOT)


@pytest.mark.slow
def test_data_check_passes_with_counts(capsys):
    assert main(["data", "check"]) == 0
    out = capsys.readouterr().out
    assert "valid" in out and "cross_tenant" in out and "grounded_correct" in out


def test_corpus_requirements(shipped):
    docs = shipped.corpus.documents
    assert len(docs) >= 24 and set(shipped.corpus.tenants) == {"bluefin", "northwind"}
    assert sum(1 for d in docs if d.supersedes) >= 4
    for d in docs:
        if d.supersedes:
            old = shipped.corpus.document(d.tenant, d.supersedes)
            assert old.updated < d.updated and old.version < d.version, d.slug
    # content for one tenant only: article slugs that the other tenant lacks
    slugs = {t: {d.slug for d in shipped.corpus.for_tenant(t)} for t in shipped.corpus.tenants}
    assert slugs["northwind"] - slugs["bluefin"] and slugs["bluefin"] - slugs["northwind"]


def test_golden_requirements(shipped):
    cases = shipped.cases.values()
    assert len(shipped.cases) >= 60
    per_type = Counter(c.case_type for c in cases)
    assert set(per_type) == set(CASE_TYPES) and min(per_type.values()) >= 8
    assert all(c.history for c in cases if c.case_type == "multi_turn")
    assert all(c.forbidden_text and not c.expected_sources for c in cases if c.case_type == "cross_tenant")
    per_case = Counter(r.case_id for r in shipped.responses.values())
    assert all(per_case[c] >= 2 for c in shipped.cases)
    assert {r.variant for r in shipped.responses.values()} == set(VARIANTS)


def test_answer_key_covers_every_claim_the_splitter_produces(shipped):
    for response in shipped.responses.values():
        split = [c.text for c in split_claims(response.text, response.response_id)]
        assert split == [k.text for k in response.key_claims], response.response_id
        case = shipped.cases[response.case_id]
        assert {f for f, _ in response.key_facts} == {f.fact_id for f in case.reference_facts}


def test_authored_files_say_they_are_authored():
    for path in sorted((REPO_ROOT / "golden" / "responses").glob("*.yaml")):
        assert "Authored, not generated" in path.read_text(encoding="utf-8").splitlines()[0], path.name


@pytest.mark.slow
def test_default_config_passes_the_gate_against_the_committed_baseline(tmp_path):
    """What CI's gate step would do: the committed baseline matches the shipped data and scorers."""
    report = run_harness(load_config(), tmp_path / "run", progress=False)
    baseline = json.loads((REPO_ROOT / "golden" / "baseline.json").read_text(encoding="utf-8"))
    result = gate(report, baseline)
    assert result.passed, result.regressions
    assert report["assertions"]["gated_failures"] == 0
    # the failure variants are caught by the assertions built for them
    caught = report["assertions"]["caught_in_failure_variants"]
    assert caught["no_forbidden_text"] >= 11 and caught["no_fabricated_citation"] >= 1
