"""calibrate external --dataset: a per-sample pass/fail judge against the response verdicts (``pass``) and a
per-failure-mode judge against a tag (``tag:NAME``), like any other dimension (issue 24.6)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from playground.calibrate.external_samples import read_result, verdict_labels, with_verdicts
from playground.cli import main
from playground.datasets import open_dataset
from playground.errors import DataError
from playground.importers.load import import_dataset
from playground.store import open_store
from playground.verdicts import response_units

#: per sample: (ana's verdict, ana's tags, the judge's pass score, the judge's hallucination score)
PLAN = [(1, [], 0.9, 0.1), (1, [], 0.8, 0.2), (1, [], 0.3, 0.1), (0, ["halluc"], 0.2, 0.9),
        (0, ["halluc", "vague"], 0.1, 0.7), (0, ["vague"], 0.4, 0.6), (0, [], 0.7, 0.2), (1, [], 0.6, 0.8)]


def _setup(tmp: Path) -> tuple[Path, Path]:
    rows = [{"user_input": f"Question {i}?", "response": f"Answer {i}.", "retrieved_contexts": [f"Context {i}."]}
            for i in range(len(PLAN))]
    (tmp / "qa.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    db = tmp / "qa.db"
    with open_store(db) as store:
        import_dataset(tmp / "qa.jsonl", "ragas", "qa", store)
        opened = open_dataset("qa", store)
        by_case = {u.case_id: u for u in response_units(opened)}
        for sample, (verdict, tags, _p, _h) in zip(opened.payload["samples"], PLAN, strict=True):
            unit = by_case[sample["case_id"]]
            store.set_label("ana", unit, "pass", verdict)
            store.set_tags("ana", unit, tags)
        store.rename_failure_mode("qa", "halluc", "hallucination", "owner")  # the tag reads through the rename
    result = tmp / "judge.jsonl"
    result.write_text("".join(json.dumps({**r, "judge_pass": p, "judge_halluc": h}) + "\n"
                              for r, (_v, _t, p, h) in zip(rows, PLAN, strict=True)))
    return db, result


def test_verdict_labels_pass_and_tag(tmp_path):
    db, _ = _setup(tmp_path)
    with open_store(db) as store:
        opened = with_verdicts(open_dataset("qa", store))
        labels = verdict_labels(store, opened, "ana", ["pass", "tag:hallucination", "faithfulness"])
    assert sorted((lab.dimension, lab.value) for lab in labels).count(("pass", 1)) == 4
    tag = [lab.value for lab in labels if lab.dimension == "tag:hallucination"]
    assert sorted(tag) == [0, 0, 0, 0, 0, 0, 1, 1]
    assert len(opened.units()) == len(opened._opened.units()) + 8


def test_calibrate_external_pass_and_tag_columns(tmp_path, capsys):
    db, result = _setup(tmp_path)
    base = ["calibrate", "external", str(result), "--dataset", "qa", "--db", str(db), "--annotator", "ana",
            "--boot", "50"]
    assert main([*base, "--metric", "judge_pass=pass", "--metric", "judge_halluc=tag:hallucination"]) == 0
    out = capsys.readouterr().out
    # pass at 0.5: people pass 1,2,3,8; judge >= 0.5 on 1,2,7,8 -> TP 3 (1,2,8), FN 1 (3), TN 3 (4,5,6), FP 1 (7)
    assert "=== judge_pass -> pass (pass; 0 sample(s) without a score)" in out
    assert "=== judge_halluc -> tag:hallucination (tag:hallucination; 0 sample(s) without a score)" in out
    rows = {line.split()[0]: line.split() for line in out.splitlines() if line.strip().startswith("judge_")
            and len(line.split()) == 18}
    # scorer, dimension, n, tpr, tpr_low, tpr_high, tnr: TPR 3/4, TNR 3/4
    assert rows["judge_pass"][1:4] == ["pass", "8", "0.750"] and rows["judge_pass"][6] == "0.750"
    # tag: tagged 4, 5 (hallucination); judge >= 0.5 on 4, 5, 6, 8 -> TP 2, FN 0, TN 4, FP 2: TPR 2/2, TNR 4/6
    assert rows["judge_halluc"][1:4] == ["tag:hallucination", "8", "1.000"] and rows["judge_halluc"][6] == "0.667"
    assert "confusion (rows human, columns automatic): no/no 4  no/yes 2  yes/no 0  yes/yes 2" in out
    # --dimension maps every column that is no known metric
    assert main([*base, "--dimension", "pass", "--ignore", "judge_halluc"]) == 0
    assert "=== judge_pass -> pass" in capsys.readouterr().out


def test_bad_verdict_dimensions_are_refused(tmp_path):
    _db, result = _setup(tmp_path)
    with pytest.raises(ValueError, match="--dimension with a result table: 'relevant' is not pass or tag:NAME"):
        read_result(result, dimension="relevant")
    with pytest.raises(ValueError, match="a tag name is 1 to 40 characters"):
        read_result(result, dimension="tag:Bad")
    with pytest.raises(ValueError, match=r"--metric: unknown rate\(s\) tag:Bad"):
        read_result(result, extra_metrics={"judge_pass": "tag:Bad"})
    with pytest.raises(DataError, match="unknown metric column"):
        read_result(result)
