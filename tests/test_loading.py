"""Corpus and golden-set loading: the happy path, locator resolution, and every kind of bad input."""
from __future__ import annotations

import re
from datetime import date
from pathlib import Path

import pytest

from playground.corpus import chunk_by_heading, chunk_corpus, chunk_fixed, load_corpus
from playground.errors import DataError
from playground.golden import load_dataset
from playground.model import Locator


def test_mini_dataset_loads(mini_root):
    ds = load_dataset(mini_root)
    assert ds.corpus.tenants == ("acme", "globex")
    assert [d.slug for d in ds.corpus.documents] == ["retries", "retries-2024", "billing"]
    doc = ds.corpus.document("acme", "retries")
    assert doc.version == 2 and doc.updated == date(2025, 6, 1) and doc.supersedes == "retries-2024"
    assert [s.heading for s in doc.sections] == ["Retry schedule", "Timeouts"]
    assert doc.sections[1].line == 15  # 1-based line of "## Timeouts"
    assert ds.corpus.superseded_by("acme", "retries-2024").slug == "retries"
    assert list(ds.cases) == ["GC-0001", "GC-0002"]
    case = ds.cases["GC-0001"]
    assert case.expected_sources == (Locator("acme", "retries", "Timeouts"),)
    assert case.reference_facts[0].accept == ("15 seconds", "15 s")
    assert ds.cases["GC-0002"].must_abstain
    r2 = ds.responses["GC-0001-R2"]
    assert r2.text == "Endpoints get 45 seconds to answer. The limit is set by Dr. Ada Byron's team."
    assert [k.supported for k in r2.key_claims] == [False, False]
    assert r2.key_facts == (("GC-0001-F1", False),)


def test_locators_resolve_to_sections(mini_root):
    ds = load_dataset(mini_root)
    section = ds.corpus.resolve(Locator("acme", "retries", "Timeouts"))
    assert "15 seconds" in section.text
    assert ds.corpus.resolve(Locator("acme", "retries", "Nope")) is None
    assert ds.corpus.resolve(Locator("globex", "retries", "Timeouts")) is None


def test_units_have_stable_ids(mini_root):
    ds = load_dataset(mini_root)
    ids = [u.unit_id for u in ds.units()]
    assert ids == [u.unit_id for u in load_dataset(mini_root).units()]
    assert "GC-0001-R1::GC-0001-F1" in ids
    assert len(ids) == len(set(ids))
    kinds = {u.unit_kind for u in ds.units()}
    assert kinds == {"claim", "fact"}


def test_chunkers_keep_locators(mini_root):
    ds = load_dataset(mini_root)
    doc = ds.corpus.document("acme", "retries")
    heading = chunk_by_heading(doc)
    assert [p.locator.heading for p in heading] == ["Retry schedule", "Timeouts"]
    assert heading[0].passage_id.startswith("acme/retries#retry-schedule@")
    windows = chunk_fixed(doc, size=10, overlap=3)
    # 15 + 15 words = 30 words; windows start at 0, 7, 14, 21 → the last reaches the end
    assert len(windows) == 4
    assert windows[0].locator.heading == "Retry schedule" and windows[0].overlaps == ()
    assert windows[1].locator.heading == "Retry schedule"
    assert windows[1].overlaps == (Locator("acme", "retries", "Timeouts"),)
    assert windows[-1].locator.heading == "Timeouts"
    with pytest.raises(ValueError, match="overlap"):
        chunk_fixed(doc, size=5, overlap=5)
    with pytest.raises(ValueError, match="unknown chunker"):
        chunk_corpus(ds.corpus, "semantic")


def _problems(root: Path) -> list[str]:
    with pytest.raises(DataError) as info:
        load_dataset(root)
    return [str(p) for p in info.value.problems]


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, f"fixture text {old!r} not in {path}"
    path.write_text(text.replace(old, new, 1))


CASES = "golden/cases/cases.yaml"
RESPONSES = "golden/responses/responses.yaml"
ARTICLE = "corpus/acme/retries.md"

BAD_INPUTS = {
    # kind of bad input: (file, old, new, expected message regex)
    "malformed front matter": (
        ARTICLE,
        "tenant: acme\n",
        "tenant: [acme\n",
        r"corpus/acme/retries.md:\d+: malformed YAML front matter",
    ),
    "no front matter": (
        ARTICLE,
        "---\ntitle: Retry policy\n",
        "title: Retry policy\n",
        r"retries.md:1: missing YAML front matter",
    ),
    "missing front matter key": (ARTICLE, "version: 2\n", "", r"retries.md: front matter lacks 'version'"),
    "mistyped front matter key": (ARTICLE, "version: 2\n", "version: two\n", r"'version' must be int, got str"),
    "unknown front matter key": (
        ARTICLE,
        "version: 2\n",
        "version: 2\nauthor: me\n",
        r"unknown front matter key 'author'",
    ),
    "tenant differs from folder": (
        ARTICLE,
        "tenant: acme",
        "tenant: globex",
        r"tenant 'globex' differs from its folder 'acme'",
    ),
    "text before first heading": (
        ARTICLE,
        "# Retry policy\n",
        "# Retry policy\nStray text.\n",
        r"retries.md:10: text before the first '##'",
    ),
    "duplicate heading": (
        ARTICLE,
        "## Timeouts",
        "## Retry schedule",
        r"retries.md:15: duplicate heading 'Retry schedule' \(first at line 11\)",
    ),
    "deep heading": (
        ARTICLE,
        "## Timeouts\n",
        "## Timeouts\n### Detail\n",
        r"retries.md:16: headings deeper than '##'",
    ),
    "supersedes nothing": (
        ARTICLE,
        "supersedes: retries-2024",
        "supersedes: retries-2023",
        r"supersedes 'retries-2023', which is not an article",
    ),
    "malformed case yaml": (
        CASES,
        "  - case_id: GC-0002\n",
        "  - case_id: [GC-0002\n",
        r"cases.yaml:\d+: malformed YAML",
    ),
    "missing case field": (CASES, "    notes: One source.\n", "", r"cases.yaml:2 \[GC-0001\]: missing field 'notes'"),
    "mistyped case field": (
        CASES,
        "    history: []\n    expected_sources:\n      - {tenant: acme",
        "    history: nope\n    expected_sources:\n      - {tenant: acme",
        r"\[GC-0001\]: field 'history' must be list, got str",
    ),
    "unknown case type": (CASES, "case_type: normal", "case_type: trivia", r"\[GC-0001\]: unknown case_type 'trivia'"),
    "bad case id": (CASES, "case_id: GC-0001\n", "case_id: case-1\n", r"case_id 'case-1' is not of the form GC-0001"),
    "duplicate case id": (
        CASES,
        "case_id: GC-0002",
        "case_id: GC-0001",
        r"cases.yaml:17 \[GC-0001\]: duplicate case_id",
    ),
    "unresolved locator": (
        CASES,
        "heading: Timeouts}",
        "heading: Time-outs}",
        r"\[GC-0001\]: locator acme/retries § 'Time-outs' resolves to nothing",
    ),
    "unknown tenant": (
        CASES,
        "tenant: acme\n    query: What does",
        "tenant: initech\n    query: What does",
        r"\[GC-0002\]: unknown tenant 'initech'",
    ),
    "duplicate fact id": (
        CASES,
        '      - fact_id: GC-0001-F1\n        statement: The endpoint timeout is 15 seconds.\n'
        '        accept: ["15 seconds", "15 s"]\n',
        '      - fact_id: GC-0001-F1\n        statement: The endpoint timeout is 15 seconds.\n'
        '        accept: ["15 seconds", "15 s"]\n'
        '      - fact_id: GC-0001-F1\n        statement: Again.\n        accept: ["again"]\n',
        r"\[GC-0001-F1\]: duplicate fact_id",
    ),
    "cross tenant without forbidden text": (
        CASES,
        'forbidden_text: ["$0.65", "TW-PRO-250"]',
        "forbidden_text: []",
        r"cross_tenant case needs forbidden_text",
    ),
    "unknown response case": (
        RESPONSES,
        "case_id: GC-0002\n",
        "case_id: GC-0009\n",
        r"\[GC-0002-R1\]: unknown case_id 'GC-0009'",
    ),
    "unknown variant": (RESPONSES, "variant: proper_abstention", "variant: polite", r"unknown variant 'polite'"),
    "duplicate response id": (
        RESPONSES,
        "response_id: GC-0001-R2",
        "response_id: GC-0001-R1",
        r"\[GC-0001-R1\]: duplicate response_id",
    ),
    "key does not match splitter": (
        RESPONSES,
        '"Endpoints get 45 seconds to answer."',
        '"Endpoints get 45 seconds. To answer."',
        r"splitter cuts this response into 3 claim\(s\)",
    ),
    "claim key not boolean": (
        RESPONSES,
        "supported: true, correct: true}\n    facts: {GC-0001-F1: true}",
        "supported: yes please, correct: true}\n    facts: {GC-0001-F1: true}",
        r"claim must be \{text, supported: bool",
    ),
    "fact key missing": (
        RESPONSES,
        "facts: {GC-0001-F1: false}",
        "facts: {}",
        r"\[GC-0001-R2\]: answer key lacks fact 'GC-0001-F1'",
    ),
    "fact key unknown": (
        RESPONSES,
        "facts: {}",
        "facts: {GC-0001-F1: true}",
        r"\[GC-0002-R1\]: answer key names fact 'GC-0001-F1', which case GC-0002 does not have",
    ),
}


@pytest.mark.parametrize("kind", sorted(BAD_INPUTS))
def test_bad_input_is_reported_with_place(mini_root, kind):
    file, old, new, pattern = BAD_INPUTS[kind]
    _edit(mini_root / file, old, new)
    problems = _problems(mini_root)
    assert any(re.search(pattern, p) for p in problems), problems


def test_all_problems_come_together(mini_root):
    """Corpus and golden-set problems in different files are reported in one error, none dropped."""
    _edit(mini_root / ARTICLE, "version: 2\n", "version: two\n")
    _edit(mini_root / CASES, "heading: Timeouts}", "heading: Gone}")
    _edit(mini_root / RESPONSES, "variant: proper_abstention", "variant: polite")
    problems = _problems(mini_root)
    assert len(problems) >= 3
    assert any("'version' must be int" in p for p in problems)
    assert any("resolves to nothing" in p for p in problems)
    assert any("unknown variant 'polite'" in p for p in problems)


def test_missing_folders(tmp_path):
    problems = _problems(tmp_path)
    assert any("corpus folder does not exist" in p for p in problems)
    assert any("no case files" in p for p in problems)


def test_corpus_loader_alone_raises(mini_root):
    _edit(mini_root / ARTICLE, "slug: retries\n", "slug: Retries\n")
    with pytest.raises(DataError, match="slug 'Retries' differs from the file name"):
        load_corpus(mini_root / "corpus")
