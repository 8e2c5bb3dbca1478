"""The calibrated gate: Rogan-Gladen correction, its interval's coverage, the bar, staleness, the tolerance rule,
bad input — each rule at its boundary."""
from __future__ import annotations

import copy
import json
from pathlib import Path

import numpy as np
import pytest

from playground.calibrate.needed import labels_to_lift
from playground.calibrate.record import dumps_record, load_record
from playground.calibrate.score_gate import (
    MAX_FLIP_RATE,
    MIN_CLASS,
    MIN_LOWER,
    MIN_N,
    below_bar,
    gate_scores,
    to_decide,
)
from playground.cli import main
from playground.errors import DataError
from playground.harness.corrected import corrected_rate, rogan_gladen

IDENTITY = {"name": "faithfulness", "version": "ragas 0.4.3", "config_sha256": None, "model": None,
            "prompt_sha256": None}


def entry(tp: int = 60, npos: int = 60, tn: int = 40, nneg: int = 40, **kw) -> dict:
    """A record's scorer entry; intervals are placeholders above the bar unless given."""
    return {"column": "faithfulness", "dimension": "supported", "identity": dict(IDENTITY), "threshold": 0.5,
            "n": npos + nneg, "sample_size": npos + nneg, "outside_sample": 0,
            "confusion": {"tp": tp, "fp": nneg - tn, "fn": npos - tp, "tn": tn},
            "tpr": {"rate": tp / npos, "low": 0.9, "high": 1.0, "successes": tp, "n": npos},
            "tnr": {"rate": tn / nneg, "low": 0.9, "high": 1.0, "successes": tn, "n": nneg},
            "kappa": {"kappa": 1.0, "low": None, "high": None}, "base_rate": 0.6, "balanced_accuracy": 1.0,
            "cv": None, "repeats": None, **kw}


def record(tmp: Path, *entries: dict, dataset: str = "qa", uniform: bool = True) -> Path:
    body = {"kind": "playground-calibration-record", "version": 1, "dataset": {"name": dataset, "revision": "r"},
            "human": {"who": "consensus", "human_threshold": 0.5},
            "sample": {"seed": "7" if uniform else None, "uniform_random": uniform, "unit": "sample", "rule": "-"},
            "scorers": list(entries or [entry()])}
    path = tmp / "record.json"
    path.write_text(dumps_record(body), encoding="utf-8")
    return path


def run(tmp: Path, passed: int, n: int, column: str = "faithfulness", extra: list | None = None) -> Path:
    rows = [{"user_input": f"Q{i}?", "response": "A.", column: 0.9 if i < passed else 0.1} for i in range(n)]
    rows += [{"user_input": f"X{i}?", "response": "A.", column: v} for i, v in enumerate(extra or [])]
    path = tmp / "run.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_rogan_gladen_by_hand():
    assert rogan_gladen(0.6, 0.9, 0.8) == pytest.approx((0.6 + 0.8 - 1) / (0.9 + 0.8 - 1), abs=1e-15)
    assert rogan_gladen(0.1, 0.9, 0.8) == 0.0  # (0.1 + 0.8 - 1) / 0.7 < 0: clipped
    assert rogan_gladen(0.99, 0.9, 0.8) == 1.0  # (0.99 + 0.8 - 1) / 0.7 > 1: clipped
    assert rogan_gladen(0.5, 0.5, 0.5) is None and rogan_gladen(0.5, 0.6, 0.4) is None  # TPR + TNR = 1: chance


def test_the_interval_is_seeded_and_holds_the_estimate():
    a = corrected_rate(300, 500, (80, 90), (50, 60), seed=1)
    assert a == corrected_rate(300, 500, (80, 90), (50, 60), seed=1)
    assert a.estimate == pytest.approx((0.6 + 50 / 60 - 1) / (80 / 90 + 50 / 60 - 1), abs=1e-15)
    assert a.low < a.estimate < a.high
    wider = corrected_rate(300, 500, (80, 90), (50, 60), seed=1, flip_rate=0.2)
    assert wider.high - wider.low > a.high - a.low  # an unstable judge's rate is less certain


@pytest.mark.slow
def test_coverage_of_the_corrected_interval_against_a_known_truth():
    """Seeded simulation: calibration on a random sample, a run of N samples; nominal 95% must cover >= 93%.

    The seeded draws are deterministic, so the hit counts are pinned too (the bar is what the rule says; the
    counts catch any change of the draws or of the interval)."""
    rng = np.random.default_rng(20261201)
    for truth, tpr, tnr, n_cal, n_run, expected in ((0.7, 0.85, 0.8, 200, 500, 386), (0.9, 0.9, 0.7, 100, 2000, 381),
                                                    (0.5, 0.95, 0.95, 300, 300, 377)):
        hits = 0
        for trial in range(400):
            y = rng.random(n_cal) < 0.5
            says = np.where(y, rng.random(n_cal) < tpr, rng.random(n_cal) >= tnr)
            yr = rng.random(n_run) < truth
            run_says = np.where(yr, rng.random(n_run) < tpr, rng.random(n_run) >= tnr)
            r = corrected_rate(int(run_says.sum()), n_run, (int((says & y).sum()), int(y.sum())),
                               (int((~says & ~y).sum()), int((~y).sum())), n_boot=1000, seed=trial)
            hits += r.low is not None and r.low <= truth <= r.high
        assert hits / 400 >= 0.93, (truth, tpr, tnr, hits / 400)
        assert hits == expected, (truth, tpr, tnr, hits)


def test_the_bar_at_its_boundaries():
    ok = entry()
    assert below_bar(ok, True) == ""
    assert below_bar(ok, False) == "its labels are not a drawn random sample (calibrate with --sample-seed)"
    assert below_bar({**ok, "n": MIN_N}, True) == "" and below_bar({**ok, "n": MIN_N - 1}, True) == f"n = 49 < {MIN_N}"
    small = copy.deepcopy(ok)
    small["tpr"]["n"] = MIN_CLASS
    assert below_bar(small, True) == ""
    small["tpr"]["n"] = MIN_CLASS - 1
    assert below_bar(small, True) == "TPR rests on 9 samples < 10"
    low = copy.deepcopy(ok)
    low["tnr"]["low"] = MIN_LOWER
    assert below_bar(low, True) == ""
    low["tnr"]["low"] = 0.5999
    assert below_bar(low, True) == "TNR lower bound 0.5999 < 0.6"
    assert below_bar({**ok, "repeats": {"flip_rate": MAX_FLIP_RATE}}, True) == ""
    assert below_bar({**ok, "repeats": {"flip_rate": 0.1001}}, True) == "flip rate 0.1001 > 0.1 on reruns"
    unknown = {"k": 3, "flip_rate": None, "unstable_units": 0, "n_units": 0}
    assert below_bar({**ok, "repeats": unknown}, True) == "flip rate unknown: no sample was scored in every rerun"
    assert below_bar({**ok, "repeats": None}, True) == ""


def test_the_tolerance_rule_on_corrected_rates(tmp_path):
    rec = load_record(record(tmp_path))  # TPR = TNR = 1: the corrected rate is the raw rate
    ident = {"faithfulness": IDENTITY}
    base = {"metrics": {"faithfulness": 0.5}, "max_relative_drop": 0.05}
    exactly = gate_scores(run(tmp_path, 95, 200), rec, identities=ident, baseline=base, n_boot=200)
    assert exactly.rates["faithfulness"].estimate == pytest.approx(0.475, abs=1e-15)
    assert exactly.passed  # exactly 5% lower passes
    worse = gate_scores(run(tmp_path, 94, 200), rec, identities=ident, baseline=base, n_boot=200)
    assert not worse.passed and worse.regressions == [
        "faithfulness: corrected pass rate 0.5000 → 0.4700 (tolerance 5%)"]
    better = gate_scores(run(tmp_path, 150, 200), rec, identities=ident, baseline=base, n_boot=200)
    assert better.passed and "improved" in better.lines[-1]
    none = gate_scores(run(tmp_path, 10, 200), rec, identities=ident, baseline=None, n_boot=200)
    assert none.passed and any(line.startswith("no baseline: the gate passes") for line in none.lines)
    lacking = gate_scores(run(tmp_path, 95, 200, column="other"), rec, identities=ident,
                          baseline={"metrics": {"faithfulness": 0.5}}, n_boot=200)
    assert not lacking.passed and lacking.regressions == ["faithfulness: in the baseline but missing from the run"]


def test_stale_records_and_missing_scores_are_advisory_never_gated(tmp_path):
    rec = load_record(record(tmp_path))
    base = {"metrics": {"faithfulness": 0.9}}
    path = run(tmp_path, 10, 200)  # a big drop: it would fail if it were gated
    other = {"faithfulness": {**IDENTITY, "version": "ragas 0.4.4"}}
    stale = gate_scores(path, rec, identities=other, baseline=base, n_boot=200)
    assert stale.passed and stale.advisory == {"faithfulness": "scorer identity differs from the record's (version: "
                                                              "record 'ragas 0.4.3', run 'ragas 0.4.4')"}
    moved = gate_scores(path, rec, identities={"faithfulness": IDENTITY}, threshold=0.6, baseline=base, n_boot=200)
    assert moved.advisory == {"faithfulness": "threshold 0.6 differs from the record's 0.5"}
    same = gate_scores(path, rec, identities={"faithfulness": IDENTITY}, threshold=0.5, baseline=base, n_boot=200)
    assert not same.passed and same.advisory == {}
    gaps = gate_scores(run(tmp_path, 10, 200, extra=[None, float("nan")]), rec,
                       identities={"faithfulness": IDENTITY}, baseline=base, n_boot=200)
    assert gaps.passed and gaps.advisory == {"faithfulness": "2 missing score(s) (empty or NaN)"}
    below = load_record(record(tmp_path, uniform=False))
    unsampled = gate_scores(path, below, identities={"faithfulness": IDENTITY}, baseline=base, n_boot=200)
    assert unsampled.passed and "not a drawn random sample" in unsampled.advisory["faithfulness"]
    assert "no metric was gated (1 advisory): this gate checks nothing yet" in unsampled.lines


def test_bad_input_is_one_clear_error(tmp_path):
    rec = load_record(record(tmp_path))
    with pytest.raises(DataError, match="calibrated on dataset 'qa', not on 'news'"):
        gate_scores(run(tmp_path, 10, 20), rec, dataset="news")
    for bad, message in (("high", "score 'high' is not a number"), (float("inf"), "score inf is outside [0, 1]"),
                         (1.5, "score 1.5 is outside [0, 1] (scores on 0–100? pass --scale 100)")):
        with pytest.raises(DataError) as err:
            gate_scores(run(tmp_path, 10, 20, extra=[bad]), rec)
        assert [p.message for p in err.value.problems] == [message]
    body = json.loads((tmp_path / "record.json").read_text())
    body["scorers"][0]["threshold"] = 0.4
    (tmp_path / "record.json").write_text(json.dumps(body))
    with pytest.raises(DataError, match="fingerprint mismatch"):
        load_record(tmp_path / "record.json")


def test_cli_exit_codes_and_the_baseline_it_writes(tmp_path, capsys):
    rec = record(tmp_path)
    path = run(tmp_path, 100, 200)
    args = ["harness", "gate", "--scores", str(path), "--scorer-version", "ragas 0.4.3", "--boot", "200"]
    assert main(args) == 3  # bad input: not a verdict
    assert "a scorer with no calibration record is not gated" in capsys.readouterr().err
    assert main([*args, "--record", str(rec), "--write-baseline", str(tmp_path / "b.json")]) == 0
    assert json.loads((tmp_path / "b.json").read_text())["metrics"] == {"faithfulness": 0.5}
    assert "calibrated gate: PASS" in capsys.readouterr().out
    run(tmp_path, 80, 200)
    assert main([*args, "--record", str(rec), "--scores-baseline", str(tmp_path / "b.json")]) == 1
    assert "REGRESSION: faithfulness: corrected pass rate 0.5000 → 0.4000" in capsys.readouterr().err
    assert main([*args, "--record", str(rec), "--dataset", "news"]) == 3


def test_reruns_give_the_flip_rate_the_record_carries_and_the_gate_refuses_an_unstable_judge(tmp_path, capsys):
    from calibration_data import make_labelled, write_rows

    from playground.calibrate.repeats import stability

    # 3 runs, 4 samples: verdicts (pass = score >= 0.5) 111, 110, 000, 100 -> flips 0, 2/3, 0, 2/3
    runs = [{c: {"m": s} for c, s in zip("abcd", scores, strict=True)}
            for scores in ([0.9, 0.9, 0.1, 0.9], [0.8, 0.7, 0.2, 0.1], [0.6, 0.2, 0.3, 0.4])]
    assert stability(runs, ["m"], 0.5) == {"m": {"k": 3, "n_units": 4, "unstable_units": 2,
                                                 "flip_rate": (2 / 3 + 2 / 3) / 4,
                                                 "mean_stability": (1 + 2 / 3 + 1 + 2 / 3) / 4}}
    db, result, _h, _s = make_labelled(tmp_path, 60)
    rows = [json.loads(line) for line in result.read_text().splitlines()]
    flipped = [{**r, "context_precision": 1 - r["context_precision"] if i < 12 else r["context_precision"]}
               for i, r in enumerate(rows)]  # 12 of 60 verdicts flip (none sits exactly at 0.5)
    write_rows(tmp_path / "rerun.jsonl", flipped)
    args = ["calibrate", "external", str(result), "--dataset", "qa", "--db", str(db), "--sample-seed", "1",
            "--boot", "20", "--rerun", str(tmp_path / "rerun.jsonl"), "--record", str(tmp_path / "rec.json")]
    assert main(args) == 0
    assert "context_precision: 2 runs on 60 samples: flip rate 0.200" in capsys.readouterr().out
    (entry,) = load_record(tmp_path / "rec.json")["scorers"]
    assert entry["repeats"] == {"k": 2, "n_units": 60, "unstable_units": 12, "flip_rate": 0.2,
                                "mean_stability": 0.9}
    assert "flip rate 0.2 > 0.1 on reruns" in below_bar(entry, True)


def test_a_labelled_random_slice_of_the_run_gives_ppi_plus_plus(tmp_path, capsys):
    from calibration_data import case_ids, label_samples, make_labelled
    from ppi_py import ppi_mean_ci, ppi_mean_pointestimate

    from playground.sampling import ranked

    db, result, human, scores = make_labelled(tmp_path, 120, label_every=0)
    cases = case_ids(db, "qa")
    # the run's random slice: 40 of 120 samples labelled, in ranking order (seed 2: the scorer and people
    # disagree on 7 of them, enough for PPI's normal interval; seed 5's slice is thin, see the next test)
    chosen = ranked(cases, "2")[:40]
    label_samples(db, "qa", {c: human[cases.index(c)] for c in chosen})
    body = json.loads(record(tmp_path).read_text())
    body["scorers"][0].update(column="context_precision", dimension="relevant",
                              identity={**IDENTITY, "name": "context_precision"})
    (tmp_path / "record.json").write_text(dumps_record(body))
    args = ["harness", "gate", "--scores", str(result), "--record", str(tmp_path / "record.json"), "--dataset", "qa",
            "--db", str(db), "--scorer-version", "ragas 0.4.3", "--boot", "200"]
    assert main([*args, "--sample-seed", "2"]) == 0
    out = capsys.readouterr().out
    verdict = [float(s >= 0.5) for s in scores]
    inside = {cases.index(c) for c in chosen}
    y = np.array([human[i] for i in sorted(inside, key=lambda i: chosen.index(cases[i]))], float)
    f_l = np.array([verdict[i] for i in sorted(inside, key=lambda i: chosen.index(cases[i]))])
    f_u = np.array([verdict[i] for i in range(120) if i not in inside])
    estimate = float(np.asarray(ppi_mean_pointestimate(y, f_l, f_u)).ravel()[0])
    low, high = (float(np.asarray(x).ravel()[0]) for x in ppi_mean_ci(y, f_l, f_u, alpha=0.05))
    line = next(line for line in out.splitlines() if line.startswith("context_precision (PPI++)"))
    assert f"{estimate:.3f}" in line and f"[{low:.3f}, {high:.3f}]" in line
    assert main([*args, "--sample-seed", "6"]) == 0  # another seed: its prefix is short, the correction is used
    assert "context_precision (PPI++)" not in capsys.readouterr().out


def test_a_thin_labelled_slice_gives_the_exact_human_interval_not_ppi(tmp_path, capsys):
    """Seed 5's slice of 40: the scorer and people disagree on 3 (fewer than 5): the gate's corrected rate is
    the human pass rate with its Clopper-Pearson interval (statsmodels' "beta"), not PPI's normal one."""
    from calibration_data import case_ids, label_samples, make_labelled
    from statsmodels.stats.proportion import proportion_confint

    from playground.sampling import ranked

    db, result, human, _scores = make_labelled(tmp_path, 120, label_every=0)
    cases = case_ids(db, "qa")
    chosen = ranked(cases, "5")[:40]
    label_samples(db, "qa", {c: human[cases.index(c)] for c in chosen})
    body = json.loads(record(tmp_path).read_text())
    body["scorers"][0].update(column="context_precision", dimension="relevant",
                              identity={**IDENTITY, "name": "context_precision"})
    (tmp_path / "record.json").write_text(dumps_record(body))
    assert main(["harness", "gate", "--scores", str(result), "--record", str(tmp_path / "record.json"),
                 "--dataset", "qa", "--db", str(db), "--scorer-version", "ragas 0.4.3", "--boot", "200",
                 "--sample-seed", "5"]) == 0
    yes = sum(human[cases.index(c)] for c in chosen)
    assert yes == 27
    low, high = proportion_confint(yes, 40, method="beta")
    line = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("context_precision"))
    assert f"{yes / 40:.3f}" in line and f"[{low:.3f}, {high:.3f}]" in line


def test_a_failing_hard_assertion_fails_the_combined_gate_whatever_the_scores_say(tmp_path, capsys):
    report = {"config": {"name": "t", "gate": {"max_relative_drop": 0.05}}, "config_fingerprint": "f",
              "data_fingerprint": "d", "metrics": {"overall": {}, "by_case_type": {}},
              "assertions": {"gated_failures": 1, "gated": {"no_fabricated_citation": {"failing": ["GC-0001"]}}}}
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "report.json").write_text(json.dumps(report))
    rec = record(tmp_path)
    scores = run(tmp_path, 150, 200)  # the calibrated gate alone passes (no baseline)
    args = ["harness", "gate", str(tmp_path / "run"), "--baseline", str(tmp_path / "none.json"), "--scores",
            str(scores), "--record", str(rec), "--scorer-version", "ragas 0.4.3", "--boot", "200"]
    assert main(args) == 1
    captured = capsys.readouterr()
    assert "calibrated gate: PASS" in captured.out and "gate: FAIL" in captured.out
    assert "hard assertion no_fabricated_citation failed: GC-0001" in captured.err


def test_options_that_would_be_ignored_are_refused(tmp_path, capsys):
    (tmp_path / "run").mkdir()
    assert main(["harness", "gate", str(tmp_path / "run"), "--record", "r.json", "--boot", "10"]) == 2
    err = capsys.readouterr().err
    assert "error: --record, --boot would be ignored here: they belong to the calibrated gate" in err
    assert main(["harness", "gate", "--scores", "s.csv", "--record", "r.json", "--baseline", "b.json"]) == 2
    assert "--baseline (the harness run's; use --scores-baseline) would be ignored" in capsys.readouterr().err
    assert main(["calibrate", "external", "s.csv", "--scorer-version", "1", "--rerun", "x.csv"]) == 1
    assert "error: --rerun, --scorer-version apply to a --dataset result table only" in capsys.readouterr().err


def test_a_metric_without_a_record_is_listed_as_advisory(tmp_path):
    rec = load_record(record(tmp_path))
    rows = [{"user_input": f"Q{i}?", "response": "A.", "faithfulness": 0.9, "answer_relevancy": 0.2,
             "faithfulness_reason": "fine", "retrieved_contexts": ["c"]} for i in range(20)]
    path = tmp_path / "run.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    result = gate_scores(path, rec, identities={"faithfulness": IDENTITY}, n_boot=100)
    assert result.advisory == {"answer_relevancy": "no calibration record: a scorer is gated only with one"}
    assert "answer_relevancy             ADVISORY, not gated: no calibration record" in result.lines


# --------------------------------------------------------------------------- three verdicts (issue 37.1)


def _lift_reference(k: int, n: int, bar: float, least: int = 0) -> int | None:
    """statsmodels' Wilson interval, scanned upwards: the smallest m >= max(n, least) whose lower bound reaches bar."""
    from statsmodels.stats.proportion import proportion_confint

    if n == 0 or k / n <= bar:
        return None
    for m in range(max(n, least), n + 100_001):
        if proportion_confint(round(k / n * m), m, alpha=0.05, method="wilson")[0] >= bar - 1e-12:
            return m - n
    return None


def test_labels_to_lift_at_its_boundaries():
    # k = n: the Wilson lower bound is n / (n + z^2) >= 0.6 from n >= 1.5 z^2 = 5.76, i.e. n = 6
    assert labels_to_lift(5, 5, 0.6) == 1 and labels_to_lift(6, 6, 0.6) == 0
    assert labels_to_lift(6, 6, 0.6, least=10) == 4  # MIN_CLASS: at least 10 of the class
    assert labels_to_lift(6, 10, 0.6) is None  # the rate is exactly the bar: no number of labels lifts it
    assert labels_to_lift(0, 0, 0.6) is None
    for k, n in ((7, 10), (45, 60), (30, 40), (9, 9), (61, 100)):
        assert labels_to_lift(k, n, MIN_LOWER, MIN_CLASS) == _lift_reference(k, n, MIN_LOWER, MIN_CLASS), (k, n)


def test_to_decide_names_the_class_and_the_count():
    ok = entry()
    assert to_decide(ok, True) == []
    few = entry(tp=8, npos=8, tn=40, nneg=40)
    few["tpr"]["low"] = 0.68  # 8/8: 8 / (8 + z^2) = 0.6756
    assert to_decide(few, True) == [
        "2 more label(s) of either class (n 48 → 50)",
        "2 more human-'yes' (positive) label(s) at today's TPR 8/8 (Wilson lower bound → ≥ 0.6)"]
    weak = entry(tn=24, nneg=40)
    weak["tnr"]["low"] = 0.4469  # 24/40 = 0.6: at the bar itself
    assert to_decide(weak, False) == [
        "re-calibrate on a drawn random sample (calibrate external --sample-seed S)",
        "no number of labels: TNR 24/40 is itself ≤ 0.6, more labels only narrow its interval under the bar "
        "(a better scorer or threshold would)"]


def _two(tmp: Path, weak: bool) -> Path:
    """A record of two scorers; the second (answer_relevancy) below the bar when ``weak``."""
    second = entry(tp=8, npos=8, tn=40, nneg=40) if weak else entry()
    second.update(column="answer_relevancy", identity={**IDENTITY, "name": "answer_relevancy"})
    if weak:
        second["tpr"]["low"] = 0.68
    return record(tmp, entry(), second)


def test_three_verdicts_at_their_boundaries(tmp_path):
    rows = [{"user_input": f"Q{i}?", "response": "A.", "faithfulness": 0.9 if i < 100 else 0.1,
             "answer_relevancy": 0.9, "context_recall": 0.5} for i in range(200)]
    path = tmp_path / "run.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    ids = {"faithfulness": IDENTITY, "answer_relevancy": {**IDENTITY, "name": "answer_relevancy"}}
    both = gate_scores(path, load_record(_two(tmp_path, weak=False)), identities=ids, n_boot=100)
    # context_recall has no record: advisory, but not asked for, so the verdict is PASS
    assert both.verdict == "PASS" and both.gated == ["faithfulness", "answer_relevancy"]
    assert both.undecided == {} and "context_recall" in both.advisory
    one_weak = gate_scores(path, load_record(_two(tmp_path, weak=True)), identities=ids, n_boot=100)
    assert one_weak.verdict == "INCONCLUSIVE" and one_weak.gated == ["faithfulness"]
    assert one_weak.undecided == {"answer_relevancy": "n = 48 < 50; TPR rests on 8 samples < 10; to decide: 2 more "
                                  "label(s) of either class (n 48 → 50); 2 more human-'yes' (positive) label(s) at "
                                  "today's TPR 8/8 (Wilson lower bound → ≥ 0.6)"}
    base = {"metrics": {"faithfulness": 0.9}}
    failed = gate_scores(path, load_record(_two(tmp_path, weak=True)), identities=ids, baseline=base, n_boot=100)
    assert failed.verdict == "FAIL"  # a regression decides, whatever else is undecided
    stale = gate_scores(path, load_record(_two(tmp_path, weak=False)), identities={}, threshold=0.6, n_boot=100)
    assert stale.gated == [] and stale.verdict == "INCONCLUSIVE"
    assert "this gate checks nothing yet" in stale.lines[-3] and "PASS" not in "\n".join(stale.lines)
    lacking = gate_scores(run(tmp_path, 100, 200), load_record(_two(tmp_path, weak=False)), identities=ids,
                          n_boot=100)
    assert lacking.verdict == "INCONCLUSIVE" and lacking.undecided == {
        "answer_relevancy": "not in the run; to decide: a run that has this column"}


def test_cli_exit_2_on_inconclusive_and_never_pass_when_nothing_is_gated(tmp_path, capsys):
    rec = record(tmp_path, uniform=False)
    args = ["harness", "gate", "--scores", str(run(tmp_path, 100, 200)), "--record", str(rec),
            "--scorer-version", "ragas 0.4.3", "--boot", "100"]
    assert main(args) == 2
    out = capsys.readouterr().out
    assert out.splitlines()[-1] == "calibrated gate: INCONCLUSIVE" and "PASS" not in out
    assert ("undecided: faithfulness: its labels are not a drawn random sample (calibrate with --sample-seed); "
            "to decide: re-calibrate on a drawn random sample (calibrate external --sample-seed S)") in out
