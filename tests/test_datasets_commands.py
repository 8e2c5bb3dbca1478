"""Every command that reads units or labels, run on an imported dataset with --dataset (issue 24, must-hold 2).

Two annotators label the imported RAGAS fixture (three samples, 14 units); each
command must see them, print the dataset's links and name ``--dataset`` in
its advice.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from playground.datasets import open_dataset
from playground.importers.load import import_dataset
from playground.store import open_store

FIX = Path(__file__).resolve().parent / "fixtures"


def run(capsys, *argv) -> tuple[int, str, str]:
    from playground.cli import main

    code = main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture(scope="module")
def labelled(tmp_path_factory):
    """A store with the dataset 'demo' labelled by ana and ben: they disagree (a tie) on one claim."""
    db = tmp_path_factory.mktemp("cmd") / "l.db"
    with open_store(db) as store:
        import_dataset(FIX / "ragas_single.jsonl", "ragas", "demo", store)
        units = sorted(open_dataset("demo", store).units(), key=lambda u: u.unit_id)
        claim = next(u for u in units if u.unit_kind == "claim")
        for unit in units:
            for dim in unit.dimensions:
                store.set_label("ana", unit, dim, 1)
                store.set_label("ben", unit, dim, 0 if unit is claim and dim == "supported" else 1)
    return db, claim


def test_units(labelled, capsys):
    db, _claim = labelled
    code, out, _ = run(capsys, "units", "--dataset", "demo", "--db", db, "--format", "jsonl")
    rows = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and len(rows) == 14 and all(r["unit_id"].startswith("demo:") for r in rows)
    code, _, err = run(capsys, "units", "--dataset", "nope", "--db", db)
    assert code == 1 and "no dataset named 'nope'" in err


def test_labels_stats_per_dataset(labelled, capsys):
    db, _claim = labelled
    code, out, _ = run(capsys, "labels", "stats", "--dataset", "demo", "--db", db)
    assert code == 0
    assert "dataset: demo (14 units)" in out
    # 19 pairs: 6 passages (relevant), 5 claims (supported, correct), 3 facts (covered); each labelled twice
    assert "annotators: 2; current labels (1/0): 38; unsure answers: 0; comments: 0" in out
    assert "progress (any annotator): 14/14 units fully labelled (100%), 19/19 unit-dimension pairs" in out
    assert "consensus: 19 item(s) — unanimous 18, majority 0, single 0, adjudicated 0, tie 1" in out
    code, out, _ = run(capsys, "labels", "stats", "--db", db)
    assert code == 0 and "per dataset (`playground labels stats --dataset NAME` for one):" in out
    assert "  demo: 14 units, 38 current label(s) (unsure answers and adjudications included), 2 annotator(s)" in out
    assert "  golden: " in out and "golden: 0 units" not in out


def test_labels_export(labelled, capsys, tmp_path):
    db, _claim = labelled
    code, _out, _err = run(capsys, "labels", "export", "--dataset", "demo", "--db", db, "--format", "jsonl",
                           "--out", tmp_path / "x.jsonl")
    rows = [json.loads(line) for line in (tmp_path / "x.jsonl").read_text().splitlines()]
    assert code == 0 and len(rows) == 38 and {r["annotator"] for r in rows} == {"ana", "ben"}
    code, _out, err = run(capsys, "labels", "export", "--dataset", "demo", "--include-stale", "--db", db)
    assert code == 1 and "cannot be limited to one --dataset" in err


def test_calibrate_annotators(labelled, capsys):
    db, claim = labelled
    code, out, _ = run(capsys, "calibrate", "annotators", "--dataset", "demo", "--db", db)
    assert code == 0
    assert "annotators with current labels of dataset demo: 2 (ana, ben)" in out
    assert "settle with: playground calibrate adjudicate --dataset demo UNIT_ID DIMENSION 1|0" in out
    assert f"?dataset=demo&case=demo%3A{claim.case_id.split(':')[1]}" in out
    assert "accuracy against an answer key: dataset demo has none" in out
    code, out, _ = run(capsys, "calibrate", "annotators", "--db", db)  # the shipped set: nobody labelled it
    assert code == 0 and "annotators with current labels: 0 (-)" in out
    assert "(the imported dataset(s) demo have labels: pass --dataset NAME)" in out


def test_calibrate_adjudicate_takes_an_imported_unit(labelled, capsys):
    db, claim = labelled
    code, out, err = run(capsys, "calibrate", "adjudicate", claim.unit_id, "supported", "1", "--adjudicator", "cy",
                         "--db", db)
    assert code == 0, err
    assert out == f"{claim.unit_id} supported: consensus 1 (adjudicated by cy)\n"
    code, out, _ = run(capsys, "calibrate", "adjudicate", claim.unit_id, "supported", "clear", "--adjudicator", "cy",
                       "--dataset", "demo", "--db", db)
    assert code == 0 and "consensus cleared" in out
    code, _, err = run(capsys, "calibrate", "adjudicate", claim.unit_id, "supported", "1", "--adjudicator", "cy",
                       "--dataset", "golden", "--db", db)
    assert code == 1 and "not in dataset golden (see 'playground units')" in err


def test_calibrate_sample(labelled, capsys):
    db, _claim = labelled
    code, out, _ = run(capsys, "calibrate", "sample", "--dataset", "demo", "--size", "3", "--seed", "1", "--db", db)
    lines = out.splitlines()
    assert code == 0 and "the first 3 of 14 units" in lines[0]
    assert "'playground calibrate store --dataset demo'" in lines[0]
    assert len(lines) == 5 and all(line.split("\t")[1].startswith("demo:") for line in lines[2:])


def test_calibrate_store_links_and_advice_carry_the_dataset(labelled, capsys):
    db, _claim = labelled
    code, out, err = run(capsys, "calibrate", "store", "--dataset", "demo", "--db", db)
    assert code == 0, err
    assert "`playground calibrate sample --dataset demo --size N --seed S`" in out
    links = [w for w in out.split() if w.startswith("?")]
    assert links and all(w.startswith("?dataset=demo&case=demo%3A") for w in links)


def test_assign(labelled, capsys):
    db, _claim = labelled
    code, out, _ = run(capsys, "assign", "--dataset", "demo", "--annotators", "ana,ben", "--seed", "7", "--db", db)
    assert code == 0 and out.startswith("saved assignment demo-queues (demo, seed 7): 14 unit(s)")
    code, out, _ = run(capsys, "assign", "show", "--dataset", "demo", "--db", db)
    assert code == 0 and "demo-queues: queue, dataset demo" in out and "7 / 7" in out
    code, out, _ = run(capsys, "assign", "show", "--dataset", "golden", "--db", db)
    assert code == 0 and out == "no assignments of dataset golden saved\n"
