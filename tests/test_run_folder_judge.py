"""``judge_from_run`` reads a run's ``cases.jsonl`` in the project's one JSON Lines wording: a bad line is
an error naming its line, never a traceback (it used to raise ``json.JSONDecodeError``)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from playground.calibrate.labellings import CalibrationInputError
from playground.calibrate.run_folder import judge_from_run

CASE = {"case_id": "C1", "responses": [{"response_id": "C1-R1", "judge": {
    "judge_model": "m", "claims": [{"claim_id": "C1-R1::c1", "supported": True},
                                   {"claim_id": "C1-R1::c2", "supported": False}]}}]}


def test_a_run_with_judge_verdicts_reads_each_claim(tmp_path: Path) -> None:
    (tmp_path / "cases.jsonl").write_text(json.dumps(CASE) + "\n\n", encoding="utf-8")
    auto = judge_from_run(tmp_path)
    assert auto is not None and auto.name == "judge:m"
    assert sorted(zip(auto.frame["unit_id"], auto.frame["label"], strict=True)) == [("C1-R1::c1", 1), ("C1-R1::c2", 0)]


def test_bad_lines_are_listed_with_their_numbers(tmp_path: Path) -> None:
    (tmp_path / "cases.jsonl").write_text(json.dumps(CASE) + "\n{broken\n[1, 2]\n", encoding="utf-8")
    with pytest.raises(CalibrationInputError) as info:
        judge_from_run(tmp_path)
    assert info.value.problems == [
        (2, "invalid JSON: Expecting property name enclosed in double quotes (column 2)"),
        (3, "expected a JSON object (one case), got list"),
    ]


def test_span_files_use_the_same_wording(tmp_path: Path) -> None:
    from playground.errors import Problem
    from playground.importers.spans import read_spans

    lines = tmp_path / "spans.jsonl"
    lines.write_text('{"a": \n' + "[" * 100_000 + "\n", encoding="utf-8")
    problems: list[Problem] = []
    assert list(read_spans(lines, problems)) == []
    assert [str(p) for p in problems] == [
        "spans.jsonl:1: invalid JSON: Expecting value (column 7)",
        "spans.jsonl:2: invalid JSON: nested too deep",
    ]
    doc = tmp_path / "spans.json"
    doc.write_text("[" * 100_000, encoding="utf-8")
    problems = []
    assert list(read_spans(doc, problems)) == []
    assert [str(p) for p in problems] == ["spans.json: invalid JSON: nested too deep"]
