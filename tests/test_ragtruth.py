"""Loading and validating RAGTruth claim files (playground.importers.ragtruth)."""
from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

import pytest

from playground.importers.ragtruth import (
    RagTruthError,
    RagTruthRecord,
    group_by_response,
    load_ragtruth,
)

# The shared data are required, never skipped: $PLAYGROUND_SHARED_DATA or ../shared/data beside the repository.
SHARED = Path(os.environ.get("PLAYGROUND_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data")) \
    / "ragtruth" / "claims.jsonl"



def _record(response_id="r1", index=0, start=0, claim="The sky is blue.", label=False,
            source_id="s1", **over) -> dict:
    rec = {
        "example_id": f"{response_id}:{index}", "source_id": source_id,
        "response_id": response_id, "claim_index": index, "claim_start": start,
        "claim_end": start + len(claim), "claim": claim, "label": label,
        "evidence": ["The sky is blue on clear days.", "Grass is green.", "", ""],
        "evidence_mask": [True, True, False, False], "task_type": "QA",
        "source_name": "MARCO", "generator_model": "llama-2-7b-chat", "temperature": 0.7,
        "granularity": "claim", "label_types": ["Evident Conflict"] if label else [],
        "implicit_true": False, "due_to_null": False,
    }
    rec.update(over)
    return rec


def _valid_lines() -> list[str]:
    recs = [
        _record("r1", 0, 0, "The sky is blue."),
        _record("r1", 1, 17, "Grass is purple.", label=True),
        _record("r2", 0, 0, "Grass is green.", source_id="s2"),
    ]
    return [json.dumps(r) for r in recs]


def _write(tmp_path: Path, lines: list[str]) -> Path:
    p = tmp_path / "claims.jsonl"
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return p


def _problems(path: Path) -> list[tuple[int, str]]:
    with pytest.raises(RagTruthError) as exc:
        load_ragtruth(path)
    assert isinstance(exc.value, ValueError)
    return exc.value.problems


def test_valid_file_loads(tmp_path):
    s = load_ragtruth(_write(tmp_path, _valid_lines()))
    assert len(s) == 3 and s.positives == 1
    r = s.records[1]
    assert isinstance(r, RagTruthRecord)
    assert r.example_id == "r1:1" and r.label is True and r.supported is False
    assert r.line == 2
    assert r.context == ("The sky is blue on clear days.", "Grass is green.")
    assert r.label_types == ("Evident Conflict",)
    assert s.sources == ("s1", "s2")
    groups = s.responses
    assert list(groups) == ["r1", "r2"] and [x.claim_index for x in groups["r1"]] == [0, 1]
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.label = False  # frozen


def test_group_by_response_sorts_by_index():
    a = RagTruthRecord("r:2", "s", "r", 2, 10, 11, "x", False, (), ("a", "", "", ""),
                       (True, False, False, False), "QA", "MARCO", "m", 0.7, "claim", False, False)
    b = RagTruthRecord("r:0", "s", "r", 0, 0, 1, "y", False, (), ("a", "", "", ""),
                       (True, False, False, False), "QA", "MARCO", "m", 0.7, "claim", False, False)
    assert [x.claim_index for x in group_by_response([a, b])["r"]] == [0, 2]


def test_bad_json_line_reports_its_number(tmp_path):
    lines = _valid_lines()
    lines[1] = lines[1][:-5]
    probs = _problems(_write(tmp_path, lines))
    assert [ln for ln, _ in probs] == [2]
    assert "invalid JSON" in probs[0][1]


def test_missing_field(tmp_path):
    lines = _valid_lines()
    rec = json.loads(lines[2])
    del rec["evidence"]
    lines[2] = json.dumps(rec)
    probs = _problems(_write(tmp_path, lines))
    assert probs == [(3, "missing field 'evidence'")]


@pytest.mark.parametrize("field,value", [("claim_index", "0"), ("label", 0), ("temperature", True),
                                         ("source_id", 15592), ("evidence", "text")])
def test_wrong_type(tmp_path, field, value):
    lines = _valid_lines()
    rec = json.loads(lines[0])
    rec[field] = value
    lines[0] = json.dumps(rec)
    probs = _problems(_write(tmp_path, lines))
    assert len(probs) == 1 and probs[0][0] == 1
    assert f"field {field!r} must be" in probs[0][1]


def test_mismatched_span(tmp_path):
    lines = _valid_lines()
    rec = json.loads(lines[1])
    rec["claim_end"] += 3
    lines[1] = json.dumps(rec)
    probs = _problems(_write(tmp_path, lines))
    assert probs[0][0] == 2 and "claim_end - claim_start" in probs[0][1]


def test_duplicate(tmp_path):
    lines = _valid_lines()
    lines.append(lines[0])
    probs = _problems(_write(tmp_path, lines))
    assert any(ln == 4 and "duplicate example_id 'r1:0'" in msg and "line 1" in msg
               for ln, msg in probs)


@pytest.mark.parametrize("over,fragment", [
    ({"example_id": "r1:9"}, "example_id"),
    ({"label_types": ["Evident Conflict"]}, "label is False"),
    ({"evidence": ["a", "b", "c"], "evidence_mask": [True, True, True]}, "4 strings"),
    ({"evidence_mask": [True, True, True, False]}, "evidence_mask"),
    ({"evidence": ["", "", "", ""], "evidence_mask": [False] * 4}, "no non-empty"),
])
def test_other_field_rules(tmp_path, over, fragment):
    lines = _valid_lines()
    rec = json.loads(lines[0])
    rec.update(over)
    lines[0] = json.dumps(rec)
    probs = _problems(_write(tmp_path, lines))
    assert any(ln == 1 and fragment in msg for ln, msg in probs), probs


def test_response_level_consistency(tmp_path):
    lines = _valid_lines()
    rec = json.loads(lines[1])
    rec["source_id"] = "other"
    rec["claim_start"] = 5  # overlaps the previous claim of r1 (0..16)
    rec["claim_end"] = 5 + len(rec["claim"])
    lines[1] = json.dumps(rec)
    probs = _problems(_write(tmp_path, lines))
    msgs = [m for ln, m in probs if ln == 2]
    assert any("source_id" in m for m in msgs) and any("overlaps" in m for m in msgs)


def test_all_problems_collected_at_once(tmp_path):
    lines = _valid_lines()
    lines[0] = "{not json"
    rec = json.loads(lines[2])
    del rec["claim"]
    lines[2] = json.dumps(rec)
    lines.insert(1, "")
    probs = _problems(_write(tmp_path, lines))
    assert [ln for ln, _ in probs] == [1, 2, 4]
    with pytest.raises(RagTruthError) as exc:
        load_ragtruth(_write(tmp_path, lines))
    assert "3 problem(s)" in str(exc.value)


def test_shared_sample_loads():
    s = load_ragtruth(SHARED)
    assert len(s) == 334
    assert len(s.responses) == 58
    assert s.positives == 63
    assert len(s.sources) == 23
    assert sum(r.task_type == "QA" for r in s) == 185
    assert all(len(r.evidence) == 4 and r.context for r in s)


@pytest.mark.parametrize("breakage,fragment", [
    ("json", "invalid JSON"),
    ("missing", "missing field 'label'"),
    ("type", "field 'claim_start' must be"),
    ("span", "claim_end - claim_start"),
    ("duplicate", "duplicate example_id"),
])
def test_broken_copies_of_the_shared_sample(tmp_path, breakage, fragment):
    lines = SHARED.read_text(encoding="utf-8").splitlines()
    k = 100  # 0-based index: line 101
    rec = json.loads(lines[k])
    if breakage == "json":
        lines[k] = lines[k].replace('"claim":', '"claim"', 1)
    elif breakage == "missing":
        del rec["label"]
        lines[k] = json.dumps(rec, ensure_ascii=False)
    elif breakage == "type":
        rec["claim_start"] = str(rec["claim_start"])
        lines[k] = json.dumps(rec, ensure_ascii=False)
    elif breakage == "span":
        rec["claim"] = rec["claim"] + " extra"
        lines[k] = json.dumps(rec, ensure_ascii=False)
    else:
        lines.insert(k + 1, lines[k])
    path = tmp_path / "claims.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    probs = _problems(path)
    line = k + 2 if breakage == "duplicate" else k + 1
    assert any(ln == line and fragment in msg for ln, msg in probs), probs[:5]


def test_baseline_reproduces_the_issue_figures():
    from playground.calibrate.ragtruth import calibrate_ragtruth

    plain = calibrate_ragtruth(SHARED, floor=0.70, n_boot=0, criterion="kappa").scorer("plain coverage")
    assert plain.default.kappa == pytest.approx(0.1629, abs=5e-5)  # issue 15: "0.1629", not a range
    assert plain.default.balanced_accuracy == pytest.approx(0.6494, abs=5e-5)
    assert plain.best.kappa == pytest.approx(0.2269, abs=5e-5)  # best in-sample, README's 0.227
