"""calibrate external RESULT --dataset NAME: per-sample tool scores against human per-sample rates."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from playground.calibrate.external_samples import calibrate_samples, metric_key, read_result
from playground.datasets import open_dataset
from playground.errors import DataError
from playground.importers.export import label_rows
from playground.importers.load import import_dataset
from playground.store import open_store

FIX = Path(__file__).resolve().parent / "fixtures"
# per sample: how many of its 4 passages people call relevant, and the tool's context_precision
RELEVANT = [4, 3, 3, 2, 1, 0, 4, 1]
SCORES = [0.9, 0.8, 0.55, 0.6, 0.3, 0.1, 0.7, 0.45]


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture
def labelled(tmp_path):
    rows = [{"user_input": f"Question {i}?", "response": f"Answer {i}.",
             "retrieved_contexts": [f"Context {i}.{j}." for j in range(4)]} for i in range(8)]
    write_jsonl(tmp_path / "ds.jsonl", rows)
    db = tmp_path / "l.db"
    with open_store(db) as store:
        import_dataset(tmp_path / "ds.jsonl", "ragas", "ctx", store)
        opened = open_dataset("ctx", store)
        for i, sample in enumerate(opened.payload["samples"]):
            passages = [u for u in opened.units() if u.case_id == sample["case_id"] and u.unit_kind == "passage"]
            # the first 3 passages labelled (RELEVANT[i] capped by 3 → the 4th is unlabelled unless all 4 relevant)
            for j, unit in enumerate(passages[:3] if RELEVANT[i] < 4 else passages):
                store.set_label("ann", unit, "relevant", int(j < RELEVANT[i]))
    result = [{**r, "context_precision": s, "answer_relevancy": 0.5} for r, s in zip(rows, SCORES, strict=True)]
    return tmp_path, db, write_jsonl(tmp_path / "result.jsonl", result)


def test_per_sample_comparison_against_reference_implementations(labelled):
    from scipy import stats

    _tmp, db, result = labelled
    table = read_result(result)
    assert table.rates == {"context_precision": "context_relevance"} and table.ignored == ("answer_relevancy",)
    with open_store(db) as store:
        opened = open_dataset("ctx", store)
        labels, who, _ = label_rows(store, opened.catalog(), "ann")
    report = calibrate_samples(table, opened, labels, who, threshold=0.5)
    (c,) = report.comparisons
    human = [4 / 4, 3 / 3, 3 / 3, 2 / 3, 1 / 3, 0 / 3, 4 / 4, 1 / 3]
    assert (report.matched, report.unmatched_rows, report.unmatched_samples) == (8, (), ())
    assert c.n == 8
    assert c.pearson.r == pytest.approx(float(np.corrcoef(human, SCORES)[0, 1]), abs=1e-12)
    assert c.spearman.r == pytest.approx(stats.spearmanr(human, SCORES).statistic, abs=1e-12)
    assert c.pearson.low < c.pearson.r < c.pearson.high
    assert c.mae == pytest.approx(sum(abs(h - s) for h, s in zip(human, SCORES, strict=True)) / 8, abs=1e-12)
    # human pass (rate >= 0.5): 1 1 1 1 0 0 1 0 ; tool pass (score >= 0.5): 1 1 1 1 0 0 1 0 -> perfect
    assert c.kappa.kappa == 1.0 and c.human_pass_rate == 5 / 8
    assert c.best_threshold == 0.5  # 0.45 < t <= 0.55 all perfect; ties to the lower
    # PPI at the unit level: 26 labelled passages, 6 unlabelled (the 4th of the six samples with < 4 relevant)
    assert (c.ppi.n_labelled, c.ppi.n_unlabelled) == (26, 6)
    f_u = [s for s, r in zip(SCORES, RELEVANT, strict=True) if r < 4]
    y = [int(j < r) for r in RELEVANT for j in range(4 if r == 4 else 3)]
    f_l = [s for s, r in zip(SCORES, RELEVANT, strict=True) for _ in range(4 if r == 4 else 3)]
    # PPI++ (power-tuned lambda), as the reference implementation computes it
    from ppi_py import ppi_mean_pointestimate

    tuned = float(np.asarray(ppi_mean_pointestimate(np.array(y, float), np.array(f_l, float),
                                                    np.array(f_u, float))).ravel()[0])
    from playground.stats import ppi_mean

    assert ppi_mean(f_u, f_l, y, min_each=1).estimate == pytest.approx(min(1.0, max(0.0, tuned)), abs=1e-12)
    # the slice is thin (the scores are on the person's side of 1/2 on all but a few passages): the comparison
    # shows the human rate, 18 of 26, with its exact interval instead (issue 42.4)
    assert sum(abs(a - b) >= 0.5 for a, b in zip(y, f_l, strict=True)) < 5
    assert "disagree on only" in c.ppi.fallback and c.ppi.estimate == sum(y) / 26 == 18 / 26


def test_boundary_of_the_thresholds(labelled):
    _tmp, db, result = labelled
    with open_store(db) as store:
        opened = open_dataset("ctx", store)
        labels, who, _ = label_rows(store, opened.catalog(), "ann")
    # at threshold 0.55 the sample scored exactly 0.55 still passes (score >= t)
    (c,) = calibrate_samples(read_result(result), opened, labels, who, threshold=0.55).comparisons
    assert c.kappa.kappa == 1.0
    (c,) = calibrate_samples(read_result(result), opened, labels, who, threshold=0.5500001).comparisons
    assert c.kappa.kappa < 1.0
    # a human rate of exactly 2/3 >= 2/3 passes; above it fails
    (c,) = calibrate_samples(read_result(result), opened, labels, who, human_threshold=2 / 3).comparisons
    assert c.human_pass_rate == 5 / 8


def test_unknown_columns_bad_scores_and_the_scale(tmp_path):
    rows = [{"user_input": "Q?", "response": "A.", "faithfulness": 1.5, "my_metric": 0.2, "Context Recall": 101}]
    path = write_jsonl(tmp_path / "r.jsonl", rows)
    with pytest.raises(DataError) as err:
        read_result(path)
    assert [str(p) for p in err.value.problems] == [
        "r.jsonl: unknown metric column(s) 'my_metric': map with --metric COLUMN=RATE (rates: context_relevance, "
        "faithfulness, correctness, coverage) or drop with --ignore COLUMN",
        "r.jsonl:1 ['Context Recall']: score 101 is outside [0, 1]",  # 101 does not look like 0–100: no hint
        "r.jsonl:1 ['faithfulness']: score 1.5 is outside [0, 1] (scores on 0–100? pass --scale 100)",
    ]
    with pytest.raises(DataError) as err:  # 101 is outside 0–100 too
        read_result(path, scale=100.0, extra_metrics={"my_metric": "correctness"})
    assert [str(p) for p in err.value.problems] == ["r.jsonl:1 ['Context Recall']: score 101 is outside [0, 100]"]
    table = read_result(path, scale=100.0, extra_metrics={"my_metric": "correctness"}, ignore=("Context Recall",))
    assert table.rates == {"faithfulness": "faithfulness", "my_metric": "correctness"}
    ((_place, _id, _key, scores),) = table.rows
    assert scores == {"faithfulness": 0.015, "my_metric": 0.002}


def test_exactly_at_the_scale_boundary(tmp_path):
    path = write_jsonl(tmp_path / "r.jsonl", [{"user_input": "Q?", "response": "A.", "faithfulness": 1.0},
                                             {"user_input": "Q2?", "response": "B.", "faithfulness": 0.0}])
    assert [r[3]["faithfulness"] for r in read_result(path).rows] == [1.0, 0.0]
    path = write_jsonl(tmp_path / "s.jsonl", [{"user_input": "Q?", "response": "A.", "faithfulness": 100}])
    assert read_result(path, scale=100.0).rows[0][3]["faithfulness"] == 1.0


def test_metric_names_are_normalised():
    assert metric_key("Contextual Relevancy") == "contextual_relevancy"
    assert metric_key("factual_correctness(mode=f1)") == "factual_correctness"
    assert metric_key("Faithfulness Score") == "faithfulness"


def test_cli_with_the_ragas_result_fixture_and_unmatched_rows(tmp_path, capsys):
    from playground.cli import main

    db = tmp_path / "l.db"
    assert main(["import", "ragas", str(FIX / "ragas_single.jsonl"), "--dataset", "demo", "--db", str(db)]) == 0
    lines = (FIX / "ragas_result.csv").read_text().splitlines()
    (tmp_path / "res.csv").write_text("\n".join([*lines[:3], lines[3].replace("free trial", "free lunch")]) + "\n")
    capsys.readouterr()
    assert main(["calibrate", "external", str(tmp_path / "res.csv"), "--dataset", "demo", "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert "dataset demo: 2 of 3 result rows matched to samples; human side: consensus" in out
    assert "unmatched result rows (1): line 4" in out
    assert "samples without a result row (1): demo:h" in out
    assert main(["calibrate", "external", str(FIX / "ragas_result.csv"), "--dataset", "nope", "--db", str(db)]) == 1
    assert "no dataset named 'nope'" in capsys.readouterr().err


def test_a_deepeval_style_result_table_matches_by_id(tmp_path):
    rows = [{"input": "ignored when the id matches", "actual_output": "x", "Contextual Relevancy": s,
             "Contextual Relevancy_reason": "because", "success": True,
             "additional_metadata": json.dumps({"id": f"trace-{i}"})}
            for i, s in ((1, 0.5), (2, 1.0), (9, 0.2))]
    path = write_jsonl(tmp_path / "de.jsonl", rows)
    table = read_result(path)
    assert table.rates == {"Contextual Relevancy": "context_relevance"}
    with open_store(tmp_path / "l.db") as store:
        import_dataset(FIX / "deepeval_goldens.json", "deepeval", "de", store)
        opened = open_dataset("de", store)
        report = calibrate_samples(table, opened, [], "consensus")
    assert (report.matched, report.unmatched_rows, report.unmatched_samples) == (2, ("line 3",), ("trace-3",))
    (c,) = report.comparisons
    assert c.n == 0 and c.ppi.n_unlabelled == 5  # trace-1 has 2 passages, trace-2 has 3; nothing labelled
