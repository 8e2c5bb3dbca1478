"""Bias probes of an Ollama judge (issue 37.2): position bias on pairwise prompts in both orders, and
self-preference on answers the judge's own model wrote — through a protocol-level double of Ollama's API."""
from __future__ import annotations

import json

from calibration_data import case_ids, label_samples, write_rows
from ollama_double import OllamaDouble
from test_calibrate_gate import IDENTITY, entry, record

from playground.calibrate.judge_bias import MARGIN, position_probe, self_preference
from playground.calibrate.record import load_record
from playground.calibrate.score_gate import below_bar
from playground.cli import main
from playground.importers.load import import_dataset
from playground.stats import paired_difference, wilson_interval
from playground.store import open_store


def _pairs(n: int) -> list[tuple[str, str, str]]:
    return [(f"Q{i}?", f"good answer {i}", f"poor answer {i}") for i in range(n)]


def test_position_probe_on_scripted_judges():
    always_a = position_probe(lambda prompt: '{"better": "A"}', _pairs(20))
    assert (always_a["first_chosen"], always_a["verdicts"], always_a["order_flipped_pairs"]) == (40, 40, 20)
    assert always_a["biased"] and always_a["reason"].startswith("the answer shown first is chosen 40/40 = 1.00")

    def fair(prompt: str) -> str:  # picks the good answer wherever it is shown
        return '{"better": "A"}' if prompt.index("good") < prompt.index("poor") else '{"better": "B"}'

    even = position_probe(fair, _pairs(20))
    assert (even["first_chosen"], even["first_rate"], even["order_flipped_pairs"], even["biased"]) == (
        20, 0.5, 0, False)
    broken = position_probe(lambda prompt: "I cannot decide", _pairs(3))
    assert (broken["verdicts"], broken["unreadable"], broken["first_rate"], broken["biased"]) == (0, 6, None, False)


def test_the_position_rule_at_its_margin():
    # 30 of 40 first: Wilson low 0.5980 < 0.6, not a bias; 31 of 40: low 0.6198 > 0.6, a bias
    assert wilson_interval(30, 40)[0] < 0.5 + MARGIN < wilson_interval(31, 40)[0]
    answers = iter(['{"better": "A"}'] * 30 + ['{"better": "B"}'] * 10)
    assert not position_probe(lambda p: next(answers), _pairs(20))["biased"]
    answers = iter(['{"better": "A"}'] * 31 + ['{"better": "B"}'] * 9)
    assert position_probe(lambda p: next(answers), _pairs(20))["biased"]


def test_self_preference_is_the_paired_leniency_against_people():
    judge, human = [1] * 30, [1] * 18 + [0] * 12
    sp = self_preference(judge, human)
    ref = paired_difference(judge, human)
    assert (sp["difference"], sp["low"], sp["high"]) == (ref.difference, ref.low, ref.high) and sp["difference"] == 0.4
    assert sp["biased"] and ref.low > 0
    same = self_preference([1, 0] * 15, [1, 0] * 15)
    assert same["difference"] == 0 and not same["biased"]


def test_calibrate_bias_asks_the_judge_in_both_orders_and_the_gate_reads_it(tmp_path, capsys, monkeypatch):
    db = tmp_path / "labels.db"
    with open_store(db) as store:
        for name, answer in (("run1", "Paris is the capital."), ("run2", "It is Lyon.")):
            rows = [{"user_input": f"Question {i}?", "response": f"{answer} ({i})", "retrieved_contexts": ["C."]}
                    for i in range(12)]
            import_dataset(write_rows(tmp_path / f"{name}.jsonl", rows), "ragas", name, store)
    label_samples(db, "run1", dict.fromkeys(case_ids(db, "run1"), 1))
    result = write_rows(tmp_path / "result.jsonl", [
        {"user_input": f"Question {i}?", "response": f"Paris is the capital. ({i})", "retrieved_contexts": ["C."],
         "context_precision": 0.9} for i in range(12)])
    rec = record(tmp_path, entry(column="context_precision", dimension="relevant",
                                 identity={**IDENTITY, "name": "context_precision", "model": "judge:1b"}),
                 dataset="run1")
    with OllamaDouble(models=("judge:1b",), chat_reply=lambda r: json.dumps({"better": "A"})) as double:
        monkeypatch.setenv("OLLAMA_HOST", double.host)
        assert main(["calibrate", "bias", str(result), "--dataset", "run1", "--record", str(rec), "--db", str(db),
                     "--judge", "judge:1b", "--pairs-with", "run2", "--max-pairs", "10",
                     "--generator", "judge:1b"]) == 0
        assert double.count("/api/chat") == 20  # 10 pairs, each in both orders
    out = capsys.readouterr().out
    assert "judge judge:1b: 10 pair(s) asked in both orders: the first-shown answer chosen 20/20" in out
    assert "POSITION-BIASED" in out
    bias = load_record(rec)["scorers"][0]["bias"]
    assert bias["position"]["biased"] and bias["self_preference"]["n"] == 12
    assert "position bias: the answer shown first is chosen 20/20 = 1.00" in below_bar(load_record(rec)["scorers"][0],
                                                                                         True)


def test_an_unknown_paired_dataset_is_an_error_and_writes_nothing(tmp_path, capsys):
    db = tmp_path / "labels.db"
    rows = [{"user_input": f"Q{i}?", "response": "A.", "retrieved_contexts": ["C."]} for i in range(3)]
    with open_store(db) as store:
        import_dataset(write_rows(tmp_path / "run1.jsonl", rows), "ragas", "run1", store)
    rec = record(tmp_path, entry(column="context_precision", dimension="relevant"), dataset="run1")
    before = rec.read_text()
    result = write_rows(tmp_path / "r.jsonl", [{**r, "context_precision": 0.5} for r in rows])
    assert main(["calibrate", "bias", str(result), "--dataset", "run1", "--record", str(rec), "--db", str(db),
                 "--judge", "j", "--pairs-with", "nope"]) == 2
    assert "no dataset named 'nope'" in capsys.readouterr().err and rec.read_text() == before


