"""A fix that worked (issue 37.4): exact McNemar per metric between two runs on the same samples, Holm across
metrics — checked against statsmodels' mcnemar(exact=True) and multipletests(method="holm") — on the scorer's
verdicts and on the human-checked slice, printed beside the corrected rates."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from calibration_data import case_ids, label_samples, write_rows
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.multitest import multipletests
from test_calibrate_gate import IDENTITY, entry, record

from playground.calibrate.external_samples import read_result
from playground.calibrate.paired_runs import holm, mcnemar_exact, paired_tests, scorer_verdicts
from playground.cli import main
from playground.errors import DataError
from playground.importers.load import import_dataset
from playground.store import open_store


def test_mcnemar_exact_by_hand_and_against_statsmodels():
    assert mcnemar_exact(7, 1) == pytest.approx(18 / 256, abs=1e-15)  # 2 * (C(8,0) + C(8,1)) / 2^8
    assert mcnemar_exact(0, 0) == 1.0  # no discordant sample: nothing moved
    assert mcnemar_exact(3, 3) == 1.0
    for fixed, broke in ((0, 5), (1, 9), (12, 4), (30, 18), (2, 2), (0, 1)):
        ref = mcnemar(np.array([[10, broke], [fixed, 10]]), exact=True).pvalue
        assert mcnemar_exact(fixed, broke) == pytest.approx(ref, abs=1e-12), (fixed, broke)
    with pytest.raises(ValueError, match="must be >= 0"):
        mcnemar_exact(-1, 2)


def test_holm_by_hand_and_against_statsmodels():
    # sorted 0.01, 0.03, 0.04 -> 3*0.01, max(0.03, 2*0.03), max(0.06, 1*0.04)
    assert holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06], abs=1e-15)
    assert holm([0.5]) == [0.5] and holm([]) == [] and holm([0.6, 0.9]) == [1.0, 1.0]
    rng = np.random.default_rng(11)
    for m in (2, 3, 5, 8):
        p = rng.random(m) ** 3
        p[0] = p[-1]  # a tie
        assert holm(list(p)) == pytest.approx(list(multipletests(p, method="holm")[1]), abs=1e-12)


def test_paired_tests_count_the_discordant_samples_per_metric():
    before = {"a": {"m": 0, "k": 1}, "b": {"m": 0, "k": 1}, "c": {"m": 1, "k": 1}, "d": {"m": 1}, "e": {"m": 0}}
    after = {"a": {"m": 1, "k": 1}, "b": {"m": 1, "k": 0}, "c": {"m": 0, "k": 1}, "d": {"m": 1}, "x": {"m": 1}}
    m, k = paired_tests(before, after, ["m", "k"], "scorer's verdicts")
    assert (m.n, m.fixed, m.broke, m.before, m.after) == (4, 2, 1, 0.5, 0.75)  # e and x are in one run only
    assert (k.n, k.fixed, k.broke) == (3, 0, 1)
    assert m.p_value == 1.0 and k.p_value == 1.0 and m.holm == 1.0
    (none,) = paired_tests({}, {}, ["m"], "s")
    assert (none.n, none.before, none.p_value) == (0, None, 1.0)


def _run(path: Path, passes: list[int]) -> Path:
    return write_rows(path, [{"id": f"s{i}", "user_input": f"Q{i}?", "response": "A.",
                              "faithfulness": 0.9 if p else 0.1} for i, p in enumerate(passes)])


def test_rows_that_cannot_be_paired_are_refused(tmp_path):
    path = write_rows(tmp_path / "r.jsonl", [{"user_input": "Q?", "response": "A.", "faithfulness": 0.5}] * 2)
    with pytest.raises(DataError) as err:
        scorer_verdicts(read_result(path), {"faithfulness": 0.5}, "r.jsonl")
    assert [p.message for p in err.value.problems] == ["sample 'Q?' again: rows cannot be paired"]


def test_the_gate_prints_the_paired_test_beside_the_corrected_rates(tmp_path, capsys):
    # 60 samples: 40 pass in both, 12 fixed (fail -> pass), 2 broke (pass -> fail), 6 fail in both
    before = [1] * 40 + [0] * 12 + [1] * 2 + [0] * 6
    after = [1] * 40 + [1] * 12 + [0] * 2 + [0] * 6
    rec = record(tmp_path)
    args = ["harness", "gate", "--scores", str(_run(tmp_path / "after.jsonl", after)), "--record", str(rec),
            "--scorer-version", "ragas 0.4.3", "--boot", "100",
            "--paired-with", str(_run(tmp_path / "before.jsonl", before))]
    assert main(args) == 0
    out = capsys.readouterr().out.splitlines()
    p = mcnemar(np.array([[40, 2], [12, 6]]), exact=True).pvalue  # 2 * P(X <= 2 | 14, 1/2) = 0.01294
    start = out.index("paired test, before vs after the fix, on the scorer's verdicts (exact McNemar; Holm across "
                      "1 metric(s), alpha 0.05):")
    row = out[start + 2].split()
    assert row[:6] == ["faithfulness", "60", "12", "2", f"{42 / 60:.3f}", f"{52 / 60:.3f}"]
    assert row[7:] == [f"{p:.4f}", f"{p:.4f}", "significant:", "better"]
    assert out[-1] == "calibrated gate: PASS"


def test_the_human_checked_slice_pairs_samples_labelled_in_both_runs(tmp_path, capsys):
    db = tmp_path / "labels.db"
    rows = [{"user_input": f"Question {i}?", "response": "Answer.", "retrieved_contexts": [f"Context {i}."]}
            for i in range(30)]
    with open_store(db) as store:
        for name in ("before", "after"):
            import_dataset(write_rows(tmp_path / f"{name}.jsonl", rows), "ragas", name, store)
    old, new = case_ids(db, "before"), case_ids(db, "after")
    assert [c.split(":", 1)[1] for c in old] == [c.split(":", 1)[1] for c in new]  # one id per question
    # 20 samples labelled in both: 9 fixed, 1 broke, 10 the same; 5 more labelled only after the fix
    label_samples(db, "before", {c: int(i >= 9 and i != 19) for i, c in enumerate(old[:20])} | {old[19]: 1})
    label_samples(db, "after", {c: int(i != 19) for i, c in enumerate(new[:25])})
    body = json.loads(record(tmp_path, entry(column="context_precision", dimension="relevant",
                                             identity={**IDENTITY, "name": "context_precision"})).read_text())
    (tmp_path / "record.json").write_text(json.dumps(body))
    scores = write_rows(tmp_path / "scores.jsonl", [{**r, "context_precision": 0.9} for r in rows])
    args = ["harness", "gate", "--scores", str(scores), "--record", str(tmp_path / "record.json"), "--db", str(db),
            "--paired-datasets", "before", "after", "--scorer-version", "ragas 0.4.3", "--boot", "50"]
    assert main(args) == 0
    out = capsys.readouterr().out.splitlines()
    start = next(i for i, line in enumerate(out) if "on the human-checked slice" in line)
    p = mcnemar(np.array([[10, 1], [9, 0]]), exact=True).pvalue  # 2 * P(X <= 1 | 10, 1/2) = 0.02148
    assert out[start + 2].split()[:4] == ["context_precision", "20", "9", "1"]
    assert f"{p:.4f}" in out[start + 2] and out[start + 2].endswith("significant: better")
