"""Bias probes (issue 37.2, length): Spearman's rho of score and answer length per human class, its interval,
the bias rule at its boundaries, the record keeping it and the gate turning a biased record advisory."""
from __future__ import annotations

import json
import math

import pytest
from calibration_data import case_ids, label_samples, write_rows
from test_calibrate_gate import IDENTITY, entry, record

from playground.calibrate.bias import MAX_RHO, MIN_PER_CLASS, length_bias, rho_interval
from playground.calibrate.record import load_record
from playground.calibrate.score_gate import below_bar, gate_scores, to_decide
from playground.cli import main
from playground.importers.load import import_dataset
from playground.store import open_store


def test_rho_interval_by_hand():
    # z = atanh(0.5) = 0.549306, se = sqrt(1.06 / 25) = 0.205913, 1.959964 * se = 0.403582
    low, high = rho_interval(0.5, 28)
    assert low == pytest.approx(math.tanh(0.549306 - 0.403582), abs=1e-5) == pytest.approx(0.14468, abs=1e-4)
    assert high == pytest.approx(math.tanh(0.549306 + 0.403582), abs=1e-5)
    assert rho_interval(1.0, 10)[1] < 1.0  # clipped to 0.999999: finite
    with pytest.raises(ValueError, match="n >= 4"):
        rho_interval(0.1, 3)


def test_spearman_by_hand_and_the_rule_at_its_boundaries():
    scores = [0.1, 0.4, 0.35, 0.8, 0.5, 0.9, 0.2, 0.7, 0.6, 0.3]
    lengths = [10, 40, 30, 90, 60, 100, 20, 70, 80, 50]
    # ranks: scores 1 5 4 9 6 10 2 8 7 3; lengths 1 4 3 9 6 10 2 7 8 5; d^2 = 0 1 1 0 0 0 0 1 1 4 = 8
    rho = 1 - 6 * 8 / (10 * 99)
    probe = length_bias(scores, lengths, [1] * 10)
    assert probe["by_class"]["yes"]["rho"] == pytest.approx(rho, abs=1e-12)
    assert probe["biased"] and "among human-'yes' samples score follows length (Spearman rho 0.95" in probe["reason"]
    assert probe["by_class"]["no"] == {"n": 0, "rho": None, "low": None, "high": None,
                                       "note": f"fewer than {MIN_PER_CLASS} samples"}
    nine = length_bias(scores[:9], lengths[:9], [0] * 9)  # one short of MIN_PER_CLASS: decides nothing
    assert not nine["biased"] and nine["by_class"]["no"]["rho"] is None
    flat = length_bias([0.5] * 10, lengths, [1] * 10)
    assert not flat["biased"] and flat["by_class"]["yes"]["note"] == "scores or lengths all equal"
    unrelated = length_bias(scores, [10, 90, 20, 30, 100, 40, 80, 50, 60, 70], [0] * 10)
    fig = unrelated["by_class"]["no"]
    assert fig["low"] < MAX_RHO and not unrelated["biased"]
    with pytest.raises(ValueError, match="differ in length"):
        length_bias([0.1], [1, 2], [1])


def test_a_biased_record_is_advisory_with_the_reason():
    biased = {**entry(), "bias": {"length": {"biased": True, "reason": "among human-'yes' samples score follows "
                                             "length (Spearman rho 0.60 [0.40, 0.75], n = 60)"}}}
    assert below_bar(biased, True) == ("length bias: among human-'yes' samples score follows length "
                                       "(Spearman rho 0.60 [0.40, 0.75], n = 60)")
    assert to_decide(biased, True)[-1].startswith("a scorer whose scores do not follow answer length")
    fair = {**entry(), "bias": {"length": {"biased": False, "reason": ""}}}
    assert below_bar(fair, True) == ""


def test_calibrate_bias_writes_the_probe_into_the_record_and_the_gate_reads_it(tmp_path, capsys):
    db = tmp_path / "labels.db"
    n = 40
    rows = [{"user_input": f"Question {i}?", "response": "Answer" + " and more" * (i % 20),
             "retrieved_contexts": [f"Context {i}."]} for i in range(n)]
    with open_store(db) as store:
        import_dataset(write_rows(tmp_path / "qa.jsonl", rows), "ragas", "qa", store)
    cases = case_ids(db, "qa")
    label_samples(db, "qa", {c: int(i % 2 == 0) for i, c in enumerate(cases)})  # 20 yes, 20 no
    # the score grows with the answer's length whatever people said: a length-biased scorer
    result = write_rows(tmp_path / "result.jsonl", [{**r, "context_precision": round(0.3 + 0.03 * (i % 20), 4)}
                                                    for i, r in enumerate(rows)])
    rec = record(tmp_path, entry(column="context_precision", dimension="relevant",
                                 identity={**IDENTITY, "name": "context_precision"}))
    assert main(["calibrate", "bias", str(result), "--dataset", "qa", "--record", str(rec), "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert "context_precision: length probe on 40 labelled sample(s)" in out and "LENGTH-BIASED" in out
    body = load_record(rec)  # the fingerprint was written again: the record loads
    probe = body["scorers"][0]["bias"]["length"]
    assert probe["biased"] and probe["by_class"]["yes"]["n"] == 20 and probe["by_class"]["yes"]["rho"] == 1.0
    gated = gate_scores(result, body, identities={"context_precision": {**IDENTITY, "name": "context_precision"}},
                        n_boot=50)
    assert gated.verdict == "INCONCLUSIVE" and gated.advisory["context_precision"].startswith("length bias:")
    assert json.loads(rec.read_text())["fingerprint"] == body["fingerprint"]
