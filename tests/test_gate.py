"""The CI gate: its tolerance comes from the baseline (or --tolerance), never from the run it judges."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from playground.cli import main
from playground.harness.gate import DEFAULT_MAX_RELATIVE_DROP, baseline_from_report, gate, resolve_tolerance

REPO = Path(__file__).resolve().parent.parent


def _report(metrics: dict, drop: float = 0.05) -> dict:
    return {
        "config": {"name": "t", "gate": {"max_relative_drop": drop}},
        "config_fingerprint": "f", "data_fingerprint": "d",
        "metrics": {"overall": metrics, "by_case_type": {}},
        "assertions": {"gated_failures": 0, "gated": {}},
    }


def _baseline(drop: float = 0.05) -> dict:
    return baseline_from_report(_report({"recall_at_k": 0.80, "mrr": 0.50}, drop))


def test_default_tolerance_is_five_percent():
    assert DEFAULT_MAX_RELATIVE_DROP == 0.05
    assert resolve_tolerance(None) == (0.05, "the default")
    assert resolve_tolerance({"max_relative_drop": None}) == (0.05, "the default")


def test_the_baseline_stores_its_tolerance_and_the_gate_reads_it():
    baseline = _baseline(0.10)
    assert baseline["max_relative_drop"] == 0.10
    # -8%: within the baseline's 10% although the run's own config says 5%
    result = gate(_report({"recall_at_k": 0.736, "mrr": 0.50}, drop=0.05), baseline)
    assert result.passed and result.tolerance == 0.10 and result.tolerance_source == "the baseline"


def test_a_run_cannot_loosen_its_own_gate():
    result = gate(_report({"recall_at_k": 0.60, "mrr": 0.50}, drop=0.25), _baseline(0.05))
    assert not result.passed
    assert result.regressions == ["recall_at_k: 0.8000 → 0.6000 (-25.0%, tolerance 5%)"]
    assert ("note: the run's config asks for gate.max_relative_drop = 0.25; not used: "
            "the gate applies 0.05 from the baseline") in result.lines


def test_agreeing_config_adds_no_note():
    result = gate(_report({"recall_at_k": 0.80, "mrr": 0.50}), _baseline())
    assert not any(line.startswith("note:") for line in result.lines)
    assert result.lines[0] == "tolerance: 5% relative drop (from the baseline)"


def test_explicit_tolerance_wins_over_the_baseline():
    result = gate(_report({"recall_at_k": 0.60, "mrr": 0.50}, drop=0.25), _baseline(0.05), 0.25)
    assert result.passed and result.tolerance_source == "--tolerance"
    result = gate(_report({"recall_at_k": 0.5999, "mrr": 0.50}), _baseline(0.05), 0.25)
    assert not result.passed


@pytest.mark.parametrize("base", [0.80, 0.50, 0.90, 1.0, 0.666667])
def test_exactly_five_percent_passes_just_beyond_fails(base):
    exact = base * (1 - 0.05)
    baseline = baseline_from_report(_report({"recall_at_k": base}))
    assert gate(_report({"recall_at_k": exact}), baseline).passed
    assert not gate(_report({"recall_at_k": exact - 1e-6}), baseline).passed


def test_no_baseline_uses_the_default_and_passes():
    result = gate(_report({"recall_at_k": 0.1}), None)
    assert result.passed and result.tolerance == 0.05


@pytest.mark.parametrize("bad", [-0.01, 1.0, 1.5, True, "0.1"])
def test_bad_tolerance_is_refused(bad):
    with pytest.raises(ValueError, match="tolerance"):
        gate(_report({"recall_at_k": 0.8}), _baseline(), bad)


def test_cli_bad_tolerance_is_one_line(tmp_path, capsys):
    run = tmp_path / "run"
    run.mkdir()
    (run / "report.json").write_text(json.dumps(_report({"recall_at_k": 0.8, "mrr": 0.5})))
    base = tmp_path / "b.json"
    base.write_text(json.dumps(_baseline()))
    assert main(["harness", "gate", str(run), "--baseline", str(base), "--tolerance", "1.5"]) == 2
    err = capsys.readouterr().err
    assert err == "error: the gate tolerance (from --tolerance) must be a number in [0, 1), got 1.5\n"


def test_no_history_with_a_loose_gate_in_its_config_now_fails(tmp_path, capsys):
    """The issue's reproduction: configs/no-history.yaml plus gate: {max_relative_drop: 0.25}."""
    config = tmp_path / "loose.yaml"
    config.write_text((REPO / "configs" / "no-history.yaml").read_text(encoding="utf-8")
                      + "gate:\n  max_relative_drop: 0.25\n", encoding="utf-8")
    out = tmp_path / "run"
    assert main(["harness", "run", "--config", str(config), "--out", str(out), "--quiet"]) == 0
    capsys.readouterr()
    code = main(["harness", "gate", str(out), "--baseline", str(REPO / "golden" / "baseline.json")])
    captured = capsys.readouterr()
    assert code == 1
    assert "note: the run's config asks for gate.max_relative_drop = 0.25" in captured.out
    assert "REGRESSION: [multi_turn] recall_at_k: 1.0000 → 0.8182 (-18.2%, tolerance 5%)" in captured.err


def test_summary_prints_missing_metrics_as_a_dash_and_others_to_three_places():
    from playground.cli.harness import summary

    report = {
        "config": {"name": "t"}, "config_fingerprint": "f",
        "counts": {"cases": 2, "responses": 3},
        "assertions": {"gated_failures": 0, "gated": {}},
        "metrics": {"overall": {"mrr": 0.5, "ndcg_at_k": None, "recall_at_k": 2 / 3}},
        "decisions": {"verdicts": {"ACCEPT": 1, "REVIEW": 2}},
    }
    assert summary(report).splitlines() == [
        "config t (f), 2 cases, 3 responses",
        "hard assertions (gated): PASS — 0 failure(s)",
        "metrics (overall):",
        f"  {'mrr':<26} 0.500",
        f"  {'ndcg_at_k':<26} —",
        f"  {'recall_at_k':<26} 0.667",
        "verdicts: ACCEPT 1, REVIEW 2",
    ]


def test_both_kinds_of_run_end_by_saying_where_the_reports_are(mini_root, tmp_path, capsys):
    out = tmp_path / "golden-run"
    assert main(["harness", "run", "--out", str(out), "--root", str(mini_root), "--quiet"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == f"reports written to {out}/"
    db = tmp_path / "l.db"
    fixture = REPO / "tests" / "fixtures" / "ragas_single.jsonl"
    assert main(["import", "ragas", str(fixture), "--dataset", "demo", "--db", str(db)]) == 0
    capsys.readouterr()
    out = tmp_path / "dataset-run"
    assert main(["harness", "run", "--dataset", "demo", "--db", str(db), "--out", str(out), "--quiet"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == f"reports written to {out}/"
