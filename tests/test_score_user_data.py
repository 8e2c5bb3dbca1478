"""The scorers and the decision layer on a user's imported QA data: kind, floors from labels, verdicts."""
from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from playground.datasets import open_dataset
from playground.harness import score as S
from playground.harness.config import load_config
from playground.harness.dataset_floors import MIN_PER_CLASS, calibrate_floor, human_labels
from playground.harness.run_dataset import run_dataset, text_kind
from playground.importers.load import import_dataset, payload_units, prepare, prepare_units
from playground.model import Label
from playground.store import open_store

#: 30 public-style questions (facts from encyclopaedias, written for this test) whose answers are
#: correct and paraphrase the reference: the people would label every answer correct and supported.
PUBLIC_QA = Path(__file__).parent / "fixtures" / "public_qa.jsonl"


def _run(tmp_path: Path, file: Path, labels: Path | None = None, **kw) -> dict:
    with open_store(tmp_path / "labels.db") as store:
        import_dataset(file, "ragas", "pq", store, labels=labels, **kw)
        opened = open_dataset("pq", store)
        stored = store.current_labels(opened.catalog())
    return run_dataset(load_config(), opened, tmp_path / "run", progress=False, labels=stored)


def _verdicts(tmp_path: Path) -> list[str]:
    rows = [json.loads(line) for line in (tmp_path / "run" / "cases.jsonl").read_text().splitlines()]
    return [r["decision"]["verdict"] for c in rows for r in c["responses"]]


def test_correct_paraphrased_answers_are_accepted_or_reviewed_never_rejected(tmp_path):
    report = _run(tmp_path, PUBLIC_QA)
    verdicts = _verdicts(tmp_path)
    assert len(verdicts) == 30
    assert "REJECT" not in verdicts
    assert report["dataset"]["text_kind"] == "qa"
    # issue 36.4: the run report names the support rules applied (qa: speaker, names and rouge are off)
    assert report["dataset"]["support_rules"] == ["artefacts", "preamble", "clauses", "markers", "discourse",
                                                  "numbers", "identifiers", "entities"]
    fs = report["floor_source"]["support_floor"]
    assert (fs["source"], fs["floor"], fs["kind"]) == ("default", S.DEFAULT_SUPPORT_FLOORS["qa"], "qa")
    assert "is the shipped default for qa text, not a calibration" in fs["note"]


def test_the_kind_of_text_is_recorded_at_import_and_read_by_the_run(tmp_path):
    assert "text_kind" not in prepare(PUBLIC_QA, "ragas", "pq")  # qa: the default, not written
    assert prepare_units(PUBLIC_QA, "ragas", "pq", text_kind="dialogue")[0]["text_kind"] == "dialogue"
    assert text_kind({}) == "qa" and text_kind({"text_kind": "summary"}) == "summary"
    report = _run(tmp_path, PUBLIC_QA, text_kind="dialogue")
    assert report["dataset"]["text_kind"] == "dialogue"
    assert report["config"]["scoring"]["kind"] == "dialogue"
    fs = report["floor_source"]["support_floor"]
    assert (fs["source"], fs["floor"]) == ("default", S.DEFAULT_SUPPORT_FLOORS["dialogue"])


def _with_wrong_answers(tmp_path: Path) -> tuple[Path, Path]:
    """The public set with the numbers of three answers in four made wrong, and a labels table: an
    annotator's ``supported`` label per claim, 0 for the claims of the changed answers."""
    rows = [json.loads(line) for line in PUBLIC_QA.read_text().splitlines()]
    swap = {"1": "7", "2": "8", "3": "9", "4": "6", "5": "3", "6": "4", "7": "1", "8": "2", "9": "5", "0": "0"}
    wrong = set()
    for i, row in enumerate(rows):
        if i % 4 and any(ch.isdigit() for ch in row["response"]):
            row["response"] = "".join(swap.get(ch, ch) for ch in row["response"])
            wrong.add(i)
    data = tmp_path / "qa.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    payload = prepare(data, "ragas", "pq")
    case_index = {s["case_id"]: i for i, s in enumerate(payload["samples"])}
    table = tmp_path / "qa.labels.csv"
    with table.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["annotator", "unit_id", "dimension", "value"])
        for u in payload_units(payload):
            if u.unit_kind == "claim":
                w.writerow(["ana", u.unit_id, "supported", 0 if case_index[u.case_id] in wrong else 1])
    return data, table


def test_enough_labels_calibrate_the_floors_by_grouped_cross_validation(tmp_path):
    data, table = _with_wrong_answers(tmp_path)
    labels = list(csv.DictReader(table.open()))
    n_no = sum(r["value"] == "0" for r in labels)
    assert n_no >= MIN_PER_CLASS and len(labels) - n_no >= MIN_PER_CLASS
    report = _run(tmp_path, data, labels=table)
    fs = report["floor_source"]["support_floor"]
    assert fs["source"] == "labels"
    assert (fs["n"], fs["positives"], fs["negatives"], fs["cases"]) == (len(labels), len(labels) - n_no, n_no, 30)
    assert len(fs["fold_floors"]) == 5 and fs["cv_kappa"] is not None
    claims = {c["unit_id"]: c for r in report_rows(tmp_path) for resp in r["responses"] for c in resp["claims"]}
    yes = [claims[r["unit_id"]]["support"] for r in labels if r["value"] == "1"]
    no = [claims[r["unit_id"]]["support"] for r in labels if r["value"] == "0"]
    # a wrong number is an exact miss (0.0); the correct paraphrases score at least the default floor, so
    # every floor of the grid in (0, min(yes)] separates the classes perfectly, and ties go to the floor
    # nearest the kind's default: the default itself
    assert max(no) == 0.0 and min(yes) >= S.DEFAULT_SUPPORT_FLOORS["qa"]
    assert fs["floor"] == S.DEFAULT_SUPPORT_FLOORS["qa"] and fs["cv_balanced_accuracy"] == 1.0
    assert report["config"]["scoring"]["support_floor"] == fs["floor"]
    # correctness has no labels here: its floor is the default, and the report says so
    assert report["floor_source"]["correctness_floor"]["source"] == "default"


def report_rows(tmp_path: Path) -> list[dict]:
    return [json.loads(line) for line in (tmp_path / "run" / "cases.jsonl").read_text().splitlines()]


def test_calibrate_floor_boundary_of_the_minimum_per_class():
    # 10 yes at 0.9 and 9 no at 0.1 in 19 cases: one short of the minimum -> the default
    scores = {f"u{i}": (0.9 if i < 10 else 0.1) for i in range(19)}
    cases = {u: f"c{u}" for u in scores}
    labels = {u: int(s > 0.5) for u, s in scores.items()}
    fs = calibrate_floor("support_floor", scores, cases, labels, kind="qa", default=0.55)
    assert (fs.source, fs.floor, fs.positives, fs.negatives) == ("default", 0.55, 10, 9)
    # one more "no": calibrated; every floor in (0.1, 0.9] separates perfectly, ties to the default 0.55
    scores["u19"], cases["u19"], labels["u19"] = 0.1, "cu19", 0
    fs = calibrate_floor("support_floor", scores, cases, labels, kind="qa", default=0.55)
    assert (fs.source, fs.floor, fs.cv_kappa, fs.cv_balanced_accuracy) == ("labels", 0.55, 1.0, 1.0)


def test_human_labels_adjudication_wins_then_majority_ties_dropped_harness_ignored():
    labels = [Label("a", "claim", "u1", "supported", 1), Label("b", "claim", "u1", "supported", 0),
              Label("consensus", "claim", "u1", "supported", 0),
              Label("a", "claim", "u2", "supported", 1), Label("b", "claim", "u2", "supported", 0),
              Label("a", "claim", "u3", "supported", 1), Label("b", "claim", "u3", "supported", 1),
              Label("c", "claim", "u3", "supported", 0), Label("harness", "claim", "u4", "supported", 1),
              Label("a", "claim", "u3", "correct", 0)]
    assert human_labels(labels, "supported") == {"u1": 0, "u3": 1}


@pytest.mark.parametrize("key", ["support_floor", "correctness_floor"])
def test_a_configured_floor_is_kept_and_said_to_come_from_the_configuration(tmp_path, key):
    from playground.harness.config import config_from_dict

    data, table = _with_wrong_answers(tmp_path)
    with open_store(tmp_path / "labels.db") as store:
        import_dataset(data, "ragas", "pq", store, labels=table)
        opened = open_dataset("pq", store)
        stored = store.current_labels(opened.catalog())
    report = run_dataset(config_from_dict({"scoring": {key: 0.9}}), opened, tmp_path / "run", progress=False,
                         labels=stored)
    fs = report["floor_source"][key]
    assert (fs["source"], fs["floor"]) == ("configuration", 0.9)


def test_calibrate_store_without_run_uses_the_datasets_floors_from_its_labels(tmp_path, capsys):
    """``calibrate store --dataset`` without ``--run`` scores the dataset as ``harness run --dataset`` does:
    the floors from the dataset's own labels when they suffice (here: 30 cases, both classes >= 10)."""
    from playground.cli import main

    data, table = _with_wrong_answers(tmp_path)
    db = tmp_path / "labels.db"
    with open_store(db) as store:
        import_dataset(data, "ragas", "pq", store, labels=table)
    assert main(["calibrate", "store", "--dataset", "pq", "--db", str(db), "--boot", "0"]) == 0
    err = capsys.readouterr().err
    floor = S.DEFAULT_SUPPORT_FLOORS["qa"]
    assert f"floor: support_floor {floor:g} calibrated on this dataset's supported labels of" in err
    assert "floor: correctness_floor 0.7 is the shipped default for qa text, not a calibration" in err
