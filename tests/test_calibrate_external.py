"""calibrate external RESULT --dataset NAME: the full report per metric, RAGAS column names and float noise,
options that are used or refused, and the calibration record."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from calibration_data import case_ids, label_samples, make_labelled, write_rows
from statsmodels.stats.proportion import proportion_confint

from playground.calibrate.external_report import calibrate_result
from playground.calibrate.external_samples import read_result
from playground.calibrate.record import load_record
from playground.cli import main
from playground.cli.calibrate_external import metric_map as _metric_map
from playground.datasets import open_dataset
from playground.errors import DataError
from playground.importers.export import label_rows
from playground.sampling import ranked
from playground.store import open_store


def _report(db: Path, result: Path, **kw):
    with open_store(db) as store:
        opened = open_dataset("qa", store)
        labels, who, _ = label_rows(store, opened.catalog(), None)
    return calibrate_result(read_result(result), opened, labels, who, n_boot=50, **kw), opened


def test_metric_maps_a_column_with_parentheses_and_equals_signs():
    assert _metric_map(["rouge_score(mode=fmeasure)=correctness", "Answer Correctness=correctness"]) == {
        "rouge_score(mode=fmeasure)": "correctness", "Answer Correctness": "correctness"}
    for bad in ("correctness", "=correctness"):
        with pytest.raises(ValueError, match="expected COLUMN=RATE"):
            _metric_map([bad])


def test_float_noise_is_clamped_and_counted_and_the_scale_hint_is_given_only_for_percentages(tmp_path):
    rows = [{"user_input": f"Q{i}?", "response": "A.", "bleu_score": v}
            for i, v in enumerate([1.0000000000000004, -1e-10, 1 + 1e-9, 0.5])]
    table = read_result(write_rows(tmp_path / "r.jsonl", rows), extra_metrics={"bleu_score": "correctness"})
    assert [r[3]["bleu_score"] for r in table.rows] == [1.0, 0.0, 1.0, 0.5]
    assert table.clamped == {"bleu_score": 3}

    def problems(values):
        rows = [{"user_input": f"Q{i}?", "response": "A.", "faithfulness": v} for i, v in enumerate(values)]
        with pytest.raises(DataError) as err:
            read_result(write_rows(tmp_path / "p.jsonl", rows))
        return [p.message for p in err.value.problems]

    assert problems([1 + 2e-9]) == ["score 1.000000002 is outside [0, 1]"]  # beyond the clamp; not a percentage
    assert problems([0.2, 1.01]) == ["score 1.01 is outside [0, 1]"]  # exactly the hint's bound: no hint
    assert problems([0.2, 1.0101]) == ["score 1.0101 is outside [0, 1] (scores on 0–100? pass --scale 100)"]
    assert problems([50, 80, 101]) == ["score 50 is outside [0, 1]", "score 80 is outside [0, 1]",
                                       "score 101 is outside [0, 1]"]
    assert problems(["high", float("inf")]) == ["score 'high' is not a number", "score inf is outside [0, 1]"]


def test_every_option_is_used_or_refused(tmp_path, capsys):
    db, result, _h, _s = make_labelled(tmp_path, 20)
    base = ["calibrate", "external", str(result), "--db", str(db)]
    assert main([*base, "--dataset", "qa", "--human", "store", "--dimension", "relevant"]) == 1
    assert "error: --human apply to a per-unit scores file" in capsys.readouterr().err
    assert main([*base, "--scale", "100", "--record", str(tmp_path / "r.json")]) == 1
    assert "error: --scale, --record apply to a --dataset result table only" in capsys.readouterr().err
    assert not (tmp_path / "r.json").exists()


def test_the_report_against_hand_counts_and_wilson(tmp_path):
    db, result, human, scores = make_labelled(tmp_path, 120)
    ext, _opened = _report(db, result, threshold=0.5)
    (m,) = ext.metrics
    c = m.report.comparisons["relevant"]
    tp = sum(1 for h, s in zip(human, scores, strict=True) if h and s >= 0.5)
    tn = sum(1 for h, s in zip(human, scores, strict=True) if not h and s < 0.5)
    pos, neg = sum(human), len(human) - sum(human)
    assert (c.n, c.tpr.successes, c.tpr.n, c.tnr.successes, c.tnr.n) == (120, tp, pos, tn, neg)
    assert c.confusion == ((tn, neg - tn), (pos - tp, tp))
    low, high = proportion_confint(tp, pos, method="wilson")
    assert (c.tpr.low, c.tpr.high) == (pytest.approx(low, abs=1e-12), pytest.approx(high, abs=1e-12))
    assert c.balanced_accuracy == pytest.approx((tp / pos + tn / neg) / 2, abs=1e-12)
    sweep = m.report.sweeps["relevant"]
    assert sweep.cv is not None and sweep.cv.n_groups == 120  # grouped CV, one group per sample
    top = max(r.kappa for r in sweep.rows if r.kappa is not None)
    tied = [r.threshold for r in sweep.rows if r.kappa is not None and abs(r.kappa - top) <= 1e-12]
    # ties: the threshold closest to the given one (0.5), then the lower
    assert sweep.best.threshold == min(tied, key=lambda t: (abs(t - 0.5), t))
    dis = m.report.disagreements()
    assert len(dis) == (neg - tn) + (pos - tp)
    assert all(link.startswith("?dataset=qa&case=qa%3A") for link in dis["link"])


def test_a_seeded_sample_is_the_labelled_prefix_of_the_ranked_samples_and_only_it_gets_ppi(tmp_path):
    db, result, human, _s = make_labelled(tmp_path, 60, label_every=0)
    cases = case_ids(db, "qa")
    order = ranked(cases, "7")
    # the first 40 of the ranking labelled, then a gap, then 5 more labelled beyond the gap
    chosen = order[:40] + order[41:46]
    label_samples(db, "qa", {c: human[cases.index(c)] for c in chosen})
    ext, _opened = _report(db, result)
    (m,) = ext.metrics
    assert m.report.comparisons["relevant"].n == 45 and m.sample_size == 0
    assert m.report.ppi["ppi_low"].isna().all() and not m.report.ppi["valid"].any()
    seeded, _ = _report(db, result, sample_seed="7")
    (m,) = seeded.metrics
    assert (m.sample_size, m.outside_sample) == (40, 5)
    assert m.report.comparisons["relevant"].n == 40
    ppi = m.report.ppi.iloc[0]
    assert ppi["valid"] and (ppi["n_labelled"], ppi["n_unlabelled"]) == (40, 20)
    assert ppi["ppi_low"] <= ppi["ppi_rate"] <= ppi["ppi_high"]


def test_out_and_a_deterministic_fingerprinted_record(tmp_path, capsys):
    db, result, _h, _s = make_labelled(tmp_path, 40)
    args = ["calibrate", "external", str(result), "--dataset", "qa", "--db", str(db), "--sample-seed", "3",
            "--boot", "20", "--scorer-version", "ragas 0.4.3"]
    assert main([*args, "--out", str(tmp_path / "out"), "--record", str(tmp_path / "a.json")]) == 0
    assert main([*args, "--record", str(tmp_path / "b.json")]) == 0
    out = capsys.readouterr().out
    assert "every metric on the same samples" in out and "TPR " in out
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()
    assert (tmp_path / "out" / "scorers.csv").is_file()
    assert {p.name for p in (tmp_path / "out" / "context_precision").iterdir()} >= {
        "comparison.csv", "thresholds.csv", "disagreements.csv", "sweep_relevant.csv", "sweep_relevant.png",
        "confusion_relevant.png", "ppi.csv"}
    record = load_record(tmp_path / "a.json")
    (entry,) = record["scorers"]
    assert record["sample"] == {"seed": "3", "uniform_random": True, "unit": "sample",
                                "rule": "longest labelled prefix of playground.sampling.ranked(case ids, seed)"}
    assert entry["identity"] == {"name": "context_precision", "version": "ragas 0.4.3", "config_sha256": None,
                                 "model": None, "prompt_sha256": None}
    assert entry["n"] == 40 and entry["tpr"]["n"] + entry["tnr"]["n"] == 40 and entry["threshold"] == 0.5
    body = json.loads((tmp_path / "a.json").read_text())
    body["scorers"][0]["tpr"]["successes"] += 1
    (tmp_path / "a.json").write_text(json.dumps(body))
    with pytest.raises(DataError, match="fingerprint mismatch"):
        load_record(tmp_path / "a.json")


def test_labels_needed_for_a_width_and_when_it_is_reached():
    from playground.calibrate.needed import class_labels_needed, needed_for_rates, needed_text
    from playground.stats import wilson_interval

    m = class_labels_needed(66, 72, 0.1)
    assert m == 121  # checked by hand: 110/121 is 0.0999 wide, 109/120 is 0.1008 wide
    low, high = wilson_interval(round(66 / 72 * m), m)
    low1, high1 = wilson_interval(round(66 / 72 * (m - 1)), m - 1)
    assert high - low <= 0.1 < high1 - low1
    need = needed_for_rates(66, 72, 40, 48, 0.1)
    # TPR: 121 - 72 = 49 more human-"yes" samples at a share of 72/120 -> ceil(49 / 0.6) = 82
    assert need.more_for_tpr == 82 and need.more == need.more_for_tnr > 82 and not need.reached
    wide = wilson_interval(40, 48)
    exactly = needed_for_rates(66, 72, 40, 48, wide[1] - wide[0])  # TNR exactly at the width: reached for TNR
    assert exactly.more_for_tnr == 0 and exactly.more_for_tpr == 0 and exactly.reached
    assert needed_text(exactly).startswith("reached: both intervals are at most")
    assert needed_text(need).startswith(f"about {need.more} more labels of the random sample")


@pytest.mark.slow
def test_the_harness_beside_the_metrics_on_the_same_samples(tmp_path, capsys):
    db, result, _h, _s = make_labelled(tmp_path, 30)
    assert main(["harness", "run", "--dataset", "qa", "--db", str(db), "--out", str(tmp_path / "run"),
                 "--quiet"]) == 0
    capsys.readouterr()
    assert main(["calibrate", "external", str(result), "--dataset", "qa", "--db", str(db), "--boot", "20",
                 "--run", str(tmp_path / "run"), "--out", str(tmp_path / "out")]) == 0
    import pandas as pd

    table = pd.read_csv(tmp_path / "out" / "scorers.csv")
    assert table["scorer"].tolist()[0] == "context_precision" and "harness:relevant" in table["scorer"].tolist()
    assert set(table.loc[table["scorer"].isin(["context_precision", "harness:relevant"]), "n"]) == {30}


def test_a_result_table_written_by_ragas_itself(tmp_path):
    """tests/fixtures/gate_qa_result.csv: ragas 0.4.3's evaluate() with five non-LLM metrics."""
    import csv

    fixture = Path(__file__).resolve().parent / "fixtures" / "gate_qa_result.csv"
    rows = list(csv.DictReader(fixture.open(encoding="utf-8")))
    over = sum(1 for r in rows if float(r["bleu_score"]) > 1)
    assert over == 181 and max(float(r["bleu_score"]) for r in rows) == 1.0000000000000004
    table = read_result(fixture, extra_metrics=_metric_map(["rouge_score(mode=fmeasure)=correctness",
                                                            "bleu_score=correctness"]),
                        ignore=("non_llm_string_similarity", "non_llm_context_precision_with_reference",
                                "non_llm_context_recall"))
    assert table.rates == {"rouge_score(mode=fmeasure)": "correctness", "bleu_score": "correctness"}
    assert table.clamped == {"bleu_score": over}
    assert max(r[3]["bleu_score"] for r in table.rows) == 1.0
