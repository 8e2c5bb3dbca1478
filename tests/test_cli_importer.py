"""``playground import``: the exact lines of a dry run and of a refused import, for a table importer and RAGTruth."""
from __future__ import annotations

import json
from pathlib import Path

from playground.cli import main

# one RAGAS sample: 2 contexts (passages) + 2 sentences in the response (claims) + 1 reference (fact) = 5 units
RAGAS_ONE = {"user_input": "Is the sky blue?", "retrieved_contexts": ["The sky is blue.", "Grass is green."],
             "response": "The sky is blue. Grass is red.", "reference": "Yes, the sky is blue."}


def ragtruth_claim(index: int, start: int, claim: str, hallucinated: bool) -> dict:
    return {"example_id": f"r1:{index}", "source_id": "s1", "response_id": "r1", "claim_index": index,
            "claim_start": start, "claim_end": start + len(claim), "claim": claim, "label": hallucinated,
            "evidence": ["The sky is blue.", "Grass is green.", "", ""], "evidence_mask": [True, True, False, False],
            "task_type": "QA", "source_name": "demo", "generator_model": "m", "temperature": 0.7,
            "granularity": "sentence", "label_types": ["Evident Baseless Info"] if hallucinated else [],
            "implicit_true": False, "due_to_null": False}


def write_lines(path: Path, rows: list) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def run(capsys, *argv: object) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_table_import_dry_run_and_refusal(tmp_path, capsys):
    data = write_lines(tmp_path / "one.jsonl", [RAGAS_ONE])
    db = tmp_path / "labels.db"
    assert run(capsys, "import", "ragas", data, "--dataset", "d", "--db", db, "--dry-run") == (
        0, f"{data}: valid ragas file — 1 samples, 5 units; nothing written (--dry-run)\n"
           "text kind: qa (inferred: of 1 samples 0 are conversations and 0 ask for a summary, fewer than half "
           "each; --text-kind sets another kind)\n", "")
    assert run(capsys, "import", "table", data, "--dataset", "d", "--map", "x=y", "--db", db) == (
        1, "", "error: --map: unknown field 'x' (fields: question, answer, contexts, context_ids, reference, facts, "
        "history, id)\nnothing was imported\n")
    assert run(capsys, "import", "ragas", data, "--dataset", "d", "--db", tmp_path / "no" / "l.db") == (
        1, "", f"error: cannot create the label store {tmp_path / 'no' / 'l.db'}: directory {tmp_path / 'no'} does "
        "not exist\nnothing was imported\n")
    assert run(capsys, "import", "ragas", tmp_path / "absent.jsonl", "--dataset", "d", "--db", db) == (
        1, "", f"error: no such file: {tmp_path / 'absent.jsonl'}\n")
    assert not db.exists()


def test_ragtruth_dry_run_and_refusal(tmp_path, capsys):
    claims = write_lines(tmp_path / "claims.jsonl", [ragtruth_claim(0, 0, "The sky is blue.", False),
                                                    ragtruth_claim(1, 17, "Grass is red.", True)])
    db = tmp_path / "labels.db"
    assert run(capsys, "import", "ragtruth", claims, "--db", db, "--dry-run") == (
        0, f"{claims}: valid — 2 claims (1 hallucinated), 1 responses, 1 sources, 2 passages; "
        "nothing written (--dry-run)\n", "")
    bad = tmp_path / "bad.jsonl"
    bad.write_text("[]\n{\n", encoding="utf-8")
    assert run(capsys, "import", "ragtruth", bad, "--db", db) == (
        1, "", f"{bad}: 2 problem(s)\n  line 1: expected a JSON object, got list\n"
        "  line 2: invalid JSON: Expecting property name enclosed in double quotes (column 2)\nnothing was imported\n")
    assert run(capsys, "import", "ragtruth", claims, "--db", tmp_path / "no" / "l.db") == (
        1, "", f"error: cannot create the label store {tmp_path / 'no' / 'l.db'}: directory {tmp_path / 'no'} does "
        "not exist\nnothing was imported\n")
    assert run(capsys, "import", "ragtruth", tmp_path / "absent.jsonl") == (
        1, "", f"error: no such file: {tmp_path / 'absent.jsonl'}\n")
    assert not db.exists()
