"""BEGIN loader, the frozen split, the frozen-part report and the real-data CLI."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from real_data import DATA
from real_data import run_main as _cli

from playground.begin import BeginError, load_begin, parse_begin_lines
from playground.calibrate.frozen import (
    Item,
    bootstrap_indices,
    choose_floor,
    counts_metrics,
    evaluate_frozen,
    rouge1_precision,
)
from playground.calibrate.splits import FROZEN_FRACTION, frozen_sources, split_sources
from playground.stats import balanced_accuracy, cohens_kappa

GOOD = {"example_id": "begin-dev-wow-1", "source_id": "sha1:aa", "corpus": "wow", "claim": "Paris is in France",
        "evidence": ["Paris is the capital of France.", "where is paris?"], "label": False,
        "label_raw": "Fully attributable", "model_name": "t5"}


def _line(**kw):
    return json.dumps({**GOOD, **kw})


def test_loader_reads_a_good_line_with_knowledge_as_the_only_context():
    s = parse_begin_lines([_line()])
    (r,) = s.records
    assert r.context == ("Paris is the capital of France.",)
    assert r.message == "where is paris?"
    assert r.supported is True and r.task_type == "wow" and r.line == 1


def test_loader_lists_every_problem_with_its_line():
    lines = [_line(), "{not json", _line(example_id="begin-dev-wow-1"), _line(example_id="x2", label=True),
             _line(example_id="x3", corpus="reddit", evidence=[" ", "m"]), _line(example_id="x4", label="no"),
             "", _line(example_id="x5", label_raw="Generic")]
    with pytest.raises(BeginError) as e:
        parse_begin_lines(lines, "f.jsonl")
    assert e.value.problems == [
        (2, "invalid JSON: Expecting property name enclosed in double quotes (column 2)"),
        (3, "duplicate example_id 'begin-dev-wow-1' (first on line 1)"),
        (4, "label is True but label_raw is 'Fully attributable'"),
        (5, "corpus 'reddit' is not one of wow, cmu_dog, topicalchat"),
        (5, "evidence[0] (the knowledge snippet) is blank"),
        (6, "field 'label' must be a boolean, got str 'no'"),
        (7, "empty line"),
        (8, "label_raw 'Generic' is not one of 'Fully attributable', 'Not fully attributable'"),
    ]
    assert str(e.value).startswith("f.jsonl: 8 problem(s)")


def test_shared_begin_file_loads_with_the_readme_counts():
    s = load_begin(DATA / "begin" / "claims.jsonl")
    assert len(s) == 613
    assert sum(r.label for r in s) == 404
    assert {r.corpus for r in s} == {"wow", "cmu_dog", "topicalchat"}


def _ids(path: Path) -> list[str]:
    return [json.loads(x)["source_id"] for x in path.read_text(encoding="utf-8").splitlines()]


def test_the_rule_reproduces_the_committed_frozen_lists():
    claims = _ids(DATA / "ragtruth" / "claims.jsonl")
    val = _ids(DATA / "ragtruth" / "validation-sample.jsonl")
    assert frozenset(split_sources("ragtruth", claims + val, exclude=claims)) == frozen_sources("ragtruth")
    assert frozenset(split_sources("begin", _ids(DATA / "begin" / "claims.jsonl"))) == frozen_sources("begin")
    # sources tuned on before the split never enter the frozen part
    assert not set(claims) & frozen_sources("ragtruth")
    from playground.golden import load_dataset

    d = load_dataset()
    case_ids = list(d.cases) if isinstance(d.cases, dict) else [c.case_id for c in d.cases]
    assert frozenset(split_sources("golden", case_ids)) == frozen_sources("golden")
    assert (len(frozen_sources("ragtruth")), len(frozen_sources("begin")), len(frozen_sources("golden"))) == (
        33, 195, 25)
    assert FROZEN_FRACTION == 0.40


def test_rouge1_precision_matches_rouge_score():
    from rouge_score import rouge_scorer

    sc = rouge_scorer.RougeScorer(["rouge1"])
    pairs = [("the the cat flew", "the cat sat on the mat"), ("Retries: 5 attempts, 30s apart.", "5 retries"),
             ("Anne Frank died in 1945 at Bergen-Belsen", "Anne Frank died of typhus in Bergen-Belsen, 1945.")]
    for claim, ctx in pairs:
        assert rouge1_precision(claim, [ctx]) == pytest.approx(sc.score(ctx, claim)["rouge1"].precision, abs=1e-12)
    assert rouge1_precision("the the cat flew", ["the cat sat on the mat"]) == 0.75  # min(2,2)+1 of 4 tokens
    assert rouge1_precision("...", ["x"]) == 0.0


def test_counts_metrics_hand_computed_and_equal_to_stats():
    # tp 3, fp 2, fn 1, tn 4: recall 3/4, specificity 4/6, precision 3/5, p_o 0.7, p_e (5*4 + 5*6)/100 = 0.5
    m = counts_metrics(np.array([3]), np.array([2]), np.array([1]), np.array([4]))
    assert m["recall_hallucinated"][0] == 0.75
    assert m["precision_hallucinated"][0] == 0.6
    assert m["balanced_accuracy"][0] == pytest.approx((0.75 + 4 / 6) / 2, abs=1e-15)
    assert m["kappa"][0] == pytest.approx(0.4, abs=1e-15)
    # the same units as 0/1 labels (1 = supported): hallucinated = 0
    human = [0, 0, 0, 1, 1, 0, 1, 1, 1, 1]
    auto = [0, 0, 0, 0, 0, 1, 1, 1, 1, 1]
    assert m["kappa"][0] == pytest.approx(cohens_kappa(human, auto).kappa, abs=1e-12)
    assert m["balanced_accuracy"][0] == pytest.approx(balanced_accuracy(human, auto), abs=1e-12)
    assert np.isnan(counts_metrics([0], [0], [0], [5])["kappa"][0])  # one class, one prediction: undefined


def test_choose_floor_boundary_score_equal_to_floor_is_supported():
    assert choose_floor([0.55, 0.5], [True, False], [0.5, 0.55, 0.6], default=0.55) == (0.55, "")
    assert choose_floor([0.55, 0.5], [True, True], [0.5, 0.55], default=0.55) == (
        None, "the tuning part has one class only (supported)")
    assert choose_floor([], [], [0.5], default=0.5) == (None, "no tuning items")


def test_bootstrap_indices_come_from_the_stable_hash():
    from playground.sampling import stable_hash

    idx = bootstrap_indices(7, 3, 5)
    assert idx.shape == (3, 7)
    assert idx[2, 4] == stable_hash(5, "2:4") % 7


def test_evaluate_frozen_uses_the_tuning_floor_on_the_frozen_part():
    tuning = [Item("a", ("a",), True, "s1", "QA"), Item("b", ("a",), False, "s2", "QA")]
    frozen = [Item("x", ("x",), True, "s3", "QA"), Item("y", ("x",), False, "s4", "QA"),
              Item("z", ("x",), False, "s5", "Summary")]
    scores = {"a": 0.9, "b": 0.2, "x": 0.7, "y": 0.5, "z": 0.1}
    rep = evaluate_frozen("T", tuning, frozen, [("s", lambda c, ctx: scores[c])], grid=[0.3, 0.6, 0.8],
                          default=0.6, n_boot=50)
    s = rep.scorer("s")
    assert s.floor == 0.6  # 0.3, 0.6 and 0.8 all separate the tuning part; nearest the default wins
    overall = s.rows[0]
    # frozen at 0.6: x passed (supported), y and z flagged (hallucinated): perfect
    assert (overall["n"], overall["hallucinated"], overall["balanced_accuracy"], overall["kappa"]) == (3, 2, 1.0, 1.0)
    assert [r["task_type"] for r in s.rows] == ["all", "QA", "Summary"]


def test_calibrate_ragtruth_one_source_prints_the_reason(tmp_path, capsys, shared_env):
    f = tmp_path / "one.jsonl"
    f.write_text("".join((DATA / "ragtruth" / "claims.jsonl").read_text(encoding="utf-8").splitlines(True)[:18]),
                 encoding="utf-8")
    rc, out, err = _cli(capsys, "calibrate", "ragtruth", str(f))
    assert rc == 0, err
    assert "cross-validation is undefined: cross-validation needs units from at least 2 groups" in out
    assert "Traceback" not in err


@pytest.mark.parametrize("keep", ["negatives", "one unit"])
def test_calibrate_ragtruth_one_class_or_one_unit_prints_the_reason(tmp_path, capsys, shared_env, keep):
    lines = (DATA / "ragtruth" / "claims.jsonl").read_text(encoding="utf-8").splitlines(True)
    picked = [x for x in lines if not json.loads(x)["label"]] if keep == "negatives" else lines[:1]
    f = tmp_path / "f.jsonl"
    f.write_text("".join(picked), encoding="utf-8")
    rc, out, err = _cli(capsys, "calibrate", "ragtruth", str(f))
    assert rc == 0, err
    assert "out-of-sample figures: not computed — cross-validation is undefined" in out


def test_calibrate_begin_prints_the_frozen_report_and_saves_floors(tmp_path, capsys, shared_env):
    floors = tmp_path / "floors.json"
    rc, out, err = _cli(capsys, "calibrate", "begin", "--boot", "200", "--save-floors", str(floors))
    assert rc == 0, err
    assert "figures on the frozen part only: 256 claims, 168 hallucinated (65.6%), 195 sources" in out
    doc = json.loads(floors.read_text(encoding="utf-8"))
    assert set(doc) == {"floors", "source", "criterion", "data"}
    assert doc["floors"] == {"faithfulness": 0.75}  # the tuning part's choice: the shipped dialogue floor
    assert doc["criterion"] == "balanced_accuracy"


def test_calibrate_ragtruth_frozen_counts(capsys, shared_env):
    rc, out, err = _cli(capsys, "calibrate", "ragtruth", "--frozen", "--boot", "100")
    assert rc == 0, err
    assert "RAGTruth: floors chosen on the tuning part (1204 claims)" in out
    assert "532 claims, 22 hallucinated (4.1%), 33 sources" in out


def test_rouge1_recall_and_reference_relevance_hand_computed():
    from rouge_score import rouge_scorer

    from playground.calibrate.golden_key import reference_relevance, rouge1_recall

    assert rouge1_recall("the cat sat", "the cat") == pytest.approx(2 / 3, abs=1e-15)
    sc = rouge_scorer.RougeScorer(["rouge1"])
    for ref, passage in [("the cat sat", "the cat"), ("Kept for 14 days.", "Dead letters are kept 14 days.")]:
        assert rouge1_recall(ref, passage) == pytest.approx(sc.score(ref, passage)["rouge1"].recall, abs=1e-12)
    # query: long, dead, letter, kept -> 3 of 4 in the passage; reference: kept, for, 14, days -> 3 of 4
    assert reference_relevance("How long are dead letters kept?", "Kept for 14 days.",
                               "Dead letters are kept 14 days.") == pytest.approx(0.75, abs=1e-15)


def test_calibrate_golden_key_on_a_run(tmp_path, capsys):
    from playground.harness.config import load_config
    from playground.harness.run import run_harness

    run_harness(load_config(None), tmp_path, progress=False)
    floors = tmp_path / "floors.json"
    rc, out, err = _cli(capsys, "calibrate", "golden-key", "--run", str(tmp_path), "--boot", "100",
                        "--save-floors", str(floors))
    assert rc == 0, err
    # relevance floor 0.55 (was 0.6 with the "from an expected source" key): GC-0013's superseded copy of the
    # answering section is relevant by the authored key (issue 23) and scores 0.571 query-only; correctness 0.70
    # since names are not exact items in qa text (score.RULE_KINDS): a claim with a wrong name keeps part of its
    # coverage instead of 0.0, and the floor chosen on the tuning cases rises (0.35 before)
    assert json.loads(floors.read_text(encoding="utf-8"))["floors"] == {"correctness": 0.7, "context_relevance": 0.55}
    assert "golden key: correctness of claims: floors chosen on the tuning part (257 units)" in out
    # frozen part: + GC-0034-R4 (3 claims, 2 incorrect) and -R5 (3 claims, all correct): 152 + 6 = 158 units,
    # 53 + 2 = 55 no (34.8%)
    assert "figures on the frozen part only: 158 units, 55 no (34.8%), 25 cases" in out
    assert "reference-aware" in out and "query only" in out


def test_split_boundary_is_strict(monkeypatch):
    import playground.calibrate.splits as sp

    values = {"ragtruth:a": 0.40, "ragtruth:b": 0.39999999, "ragtruth:c": 0.0, "ragtruth:d": 0.9}
    monkeypatch.setattr(sp, "uniform", lambda seed, key: values[key])
    assert sp.split_sources("ragtruth", ["a", "b", "c", "d", "b"]) == ["b", "c"]  # exactly 0.40 is tuning
    assert sp.split_sources("ragtruth", ["a", "b", "c"], exclude=["c"]) == ["b"]
    with pytest.raises(ValueError, match="unknown corpus 'halueval'"):
        sp.split_path("halueval")
