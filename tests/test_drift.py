"""Drift (issue 37.3): a recorded scorer re-checked on the frozen anchor set; the record says when it last held,
and a changed agreement beyond the record's interval makes the gate leave it advisory."""
from __future__ import annotations

import pytest
from calibration_data import case_ids, label_samples, write_rows
from test_calibrate_gate import IDENTITY, entry, record

from playground.calibrate.drift import anchor_check
from playground.calibrate.record import load_record
from playground.calibrate.score_gate import below_bar, gate_scores
from playground.cli import main
from playground.importers.load import import_dataset
from playground.store import open_store


def recorded() -> dict:
    e = entry()
    e["tpr"].update(low=0.8, high=0.95)
    e["tnr"].update(low=0.7, high=0.9)
    return e


def test_the_interval_rule_at_its_boundaries():
    e = recorded()
    # 10 human-yes: 8 pass (TPR 0.8, the lower bound itself: held); 10 human-no: 9 fail (TNR 0.9, the upper bound)
    scores = [0.9] * 8 + [0.1] * 2 + [0.1] * 9 + [0.9]
    human = [1] * 10 + [0] * 10
    held = anchor_check(e, scores, human, "2026-12-01")
    assert held["held"] and held["last_held"] == "2026-12-01" and held["tpr"] == {"successes": 8, "n": 10, "rate": 0.8}
    e["anchor"] = held
    worse = anchor_check(e, [0.9] * 7 + [0.1] * 3 + [0.1] * 9 + [0.9], human, "2026-12-07")  # TPR 0.7 < 0.8
    assert not worse["held"] and worse["last_held"] == "2026-12-01"
    assert worse["reason"] == "TPR 7/10 = 0.700 on the anchor set, outside the record's [0.800, 0.950]"
    e["anchor"] = worse
    assert below_bar(e, True) == ("drift on the anchor set (checked 2026-12-07, last held 2026-12-01): "
                                  "TPR 7/10 = 0.700 on the anchor set, outside the record's [0.800, 0.950]")
    only_yes = anchor_check(recorded(), [0.9] * 9 + [0.1], [1] * 10, "2026-12-07")  # no human-no: TNR not compared
    assert only_yes["held"] and only_yes["tnr"] == {"successes": 0, "n": 0, "rate": None}
    with pytest.raises(ValueError, match="2 scores for 1 human"):
        anchor_check(recorded(), [0.1, 0.2], [1], "d")


def test_calibrate_drift_records_the_check_and_the_gate_reads_it(tmp_path, capsys):
    db = tmp_path / "labels.db"
    rows = [{"user_input": f"Question {i}?", "response": f"Answer {i}.", "retrieved_contexts": [f"Context {i}."]}
            for i in range(20)]
    with open_store(db) as store:
        import_dataset(write_rows(tmp_path / "qa.jsonl", rows), "ragas", "qa", store)
    human = {c: int(i < 10) for i, c in enumerate(case_ids(db, "qa"))}
    label_samples(db, "qa", human)
    e = recorded()
    e.update(column="context_precision", dimension="relevant", identity={**IDENTITY, "name": "context_precision"})
    rec = record(tmp_path, e)
    same = write_rows(tmp_path / "anchor.jsonl", [{**r, "context_precision": 0.9 if i < 9 or i == 19 else 0.1}
                                                   for i, r in enumerate(rows)])  # TPR 9/10, TNR 9/10
    args = ["calibrate", "drift", "--dataset", "qa", "--record", str(rec), "--db", str(db)]
    assert main([*args, "--anchor", str(same), "--on", "2026-12-01"]) == 0
    assert "anchor set of 20 labelled sample(s) on 2026-12-01: TPR 9/10" in capsys.readouterr().out
    assert load_record(rec)["scorers"][0]["anchor"]["held"]
    lenient = write_rows(tmp_path / "anchor2.jsonl", [{**r, "context_precision": 0.9} for r in rows])  # TNR 0/10
    assert main([*args, "--anchor", str(lenient), "--on", "2026-12-07"]) == 0
    out = capsys.readouterr().out
    # a change either way is drift: TPR rose above its interval, TNR fell below
    assert ("CHANGED (TPR 10/10 = 1.000 on the anchor set, outside the record's [0.800, 0.950]; TNR 0/10 = 0.000 "
            "on the anchor set, outside the record's [0.700, 0.900]); last held 2026-12-01") in out
    body = load_record(rec)
    result = gate_scores(lenient, body, identities={"context_precision": {**IDENTITY, "name": "context_precision"}},
                         n_boot=50)
    assert result.verdict == "INCONCLUSIVE" and "drift on the anchor set" in result.advisory["context_precision"]
