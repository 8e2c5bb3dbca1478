"""A gate per failure mode (issue 37.5): each open-coded tag's rate with its Wilson interval, against a baseline."""
from __future__ import annotations

import json

import pytest
from calibration_data import write_rows

from playground.calibrate.failure_modes import gate_modes
from playground.cli import main
from playground.datasets import open_dataset
from playground.importers.load import import_dataset
from playground.stats import wilson_interval
from playground.store import open_store
from playground.verdicts import FailureModeRow, response_units


def row(name: str, k: int, n: int) -> FailureModeRow:
    low, high = wilson_interval(k, n)
    return FailureModeRow(name, k, n, k / n, low, high)


def test_the_rule_at_its_boundary():
    r = row("wrong_price", 4, 20)  # 0.2, Wilson [0.0807, 0.4160]
    at = gate_modes([r], {"modes": {"wrong_price": r.low}}, 0.0)  # lower bound exactly the baseline: passes
    assert at.verdict == "PASS" and at.regressions == []
    above = gate_modes([r], {"modes": {"wrong_price": r.low - 1e-6}}, 0.0)
    assert above.verdict == "FAIL" and above.regressions[0].startswith("wrong_price: 0.0807 → 0.2000")
    tolerated = gate_modes([r], {"modes": {"wrong_price": r.low / 1.1}}, 0.1)  # base x 1.1 = the bound: passes
    assert tolerated.verdict == "PASS"
    assert gate_modes([r], None, 0.0).verdict == "INCONCLUSIVE"  # nothing to gate against
    missing = gate_modes([r], {"modes": {"wrong_price": 0.5, "vague": 0.1}}, 0.0)
    assert missing.verdict == "INCONCLUSIVE" and missing.unchecked == ["vague: no judged response in the run"]
    new = gate_modes([r, row("vague", 1, 20)], {"modes": {"wrong_price": 0.5}}, 0.0)
    assert new.verdict == "PASS" and new.lines[1].startswith("vague") and new.lines[1].endswith("not in the baseline")
    with pytest.raises(ValueError, match="tolerance"):
        gate_modes([r], None, 1.0)


def test_calibrate_modes_end_to_end(tmp_path, capsys):
    db = tmp_path / "labels.db"
    rows = [{"user_input": f"Question {i}?", "response": f"Answer {i}.", "retrieved_contexts": [f"C {i}."]}
            for i in range(20)]
    with open_store(db) as store:
        import_dataset(write_rows(tmp_path / "run.jsonl", rows), "ragas", "run", store)
        for i, unit in enumerate(response_units(open_dataset("run", store))):
            store.set_label("ann", unit, "pass", int(i >= 4))
            if i < 4:
                store.set_tags("ann", unit, ["wrong_price"], dataset="run")
    args = ["calibrate", "modes", "--dataset", "run", "--db", str(db)]
    assert main([*args, "--write-baseline", str(tmp_path / "b.json")]) == 2  # no baseline yet: inconclusive
    out = capsys.readouterr().out
    line = next(x for x in out.splitlines() if x.startswith("wrong_price"))
    assert line.split() == ["wrong_price", "4", "20", "0.200", "[0.081,", "0.416]", "—", "not", "in", "the",
                            "baseline"]
    assert json.loads((tmp_path / "b.json").read_text())["modes"] == {"wrong_price": 0.2}
    assert main([*args, "--baseline", str(tmp_path / "b.json")]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "failure-mode gate: PASS"
    (tmp_path / "low.json").write_text(json.dumps({"modes": {"wrong_price": 0.05}}))
    assert main([*args, "--baseline", str(tmp_path / "low.json")]) == 1
    assert "REGRESSION: wrong_price: 0.0500 → 0.2000, lower bound 0.0807 above 0.0500" in capsys.readouterr().err
