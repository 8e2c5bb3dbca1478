"""A test at the edge of each documented rule that could otherwise change with every other test still passing.

Each test puts an input exactly on the boundary the rule names and one just beside it (``math.nextafter``),
with the expected side worked out from the rule's text, not from the code's output.
"""
from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from playground.metrics import DimensionRate, agreement, diagnose, rate_from_counts

MINI = Path(__file__).resolve().parent / "data" / "mini"


# --------------------------------------------------------------------------- harness label: score >= floor


def test_a_passage_exactly_at_the_relevance_threshold_is_relevant():
    """Rule (playground/harness/run.py, README "The harness"): a passage is relevant when relevance >= threshold."""
    from playground.datasets import retrieved_passages
    from playground.golden import load_dataset
    from playground.harness import score as S
    from playground.harness.config import config_from_dict
    from playground.harness.retrieve import Hit, case_query
    from playground.harness.run import score_passages

    dataset = load_dataset(MINI)
    passages = retrieved_passages(dataset)
    case = next(c for cid, c in sorted(dataset.cases.items()) if passages[cid])
    passage = passages[case.case_id][0]
    relevance = S.relevance(case_query(case, True), passage.text)
    assert 0 < relevance < 1  # a boundary inside the range a threshold may take

    def relevant(threshold: float) -> int:
        config = config_from_dict({"scoring": {"relevance_threshold": threshold},
                                   "retrieval": {"use_history": True}})
        return score_passages(case, [Hit(passage, 0.0, 1)], config)[0]["relevant"]

    assert relevant(relevance) == 1  # exactly at the floor: relevant
    assert relevant(math.nextafter(relevance, 1.0)) == 0  # the next float above: not relevant
    assert relevant(math.nextafter(relevance, 0.0)) == 1


# --------------------------------------------------------------------------- diagnosis: failure and borderline


def _rate(successes: int, n: int) -> DimensionRate:
    return rate_from_counts("faithfulness", successes, n)


def test_borderline_is_a_passing_rate_whose_interval_low_end_is_below_the_threshold():
    """Rule (metrics.Diagnosis): borderline when rate >= threshold and low < threshold; low == threshold is not."""
    r = _rate(8, 10)  # rate 0.8, Wilson low 0.490
    assert r.low is not None and r.rate == 0.8
    at_low = diagnose({"faithfulness": r}, {"faithfulness": r.low})
    assert at_low.borderline == [] and at_low.failures == []
    above_low = diagnose({"faithfulness": r}, {"faithfulness": math.nextafter(r.low, 1.0)})
    assert above_low.borderline == ["faithfulness"] and above_low.failures == []
    at_rate = diagnose({"faithfulness": r}, {"faithfulness": 0.8})  # rate == threshold passes (fails only when <)
    assert at_rate.failures == [] and at_rate.borderline == ["faithfulness"]


def test_a_failure_is_uncertain_while_the_interval_high_end_reaches_the_threshold():
    """Rule (metrics.Failure): uncertain when high >= threshold."""
    r = _rate(2, 10)  # rate 0.2, Wilson high 0.510
    assert r.high is not None
    at_high = diagnose({"faithfulness": r}, {"faithfulness": r.high}).failures
    assert [f.uncertain for f in at_high] == [True]
    above_high = diagnose({"faithfulness": r}, {"faithfulness": math.nextafter(r.high, 1.0)}).failures
    assert [f.uncertain for f in above_high] == [False]


# --------------------------------------------------------------------------- agreement: one-sided units


def test_agreement_counts_units_of_one_side_only_on_that_side():
    """Rule (metrics.Agreement): only_a counts units only ``a`` (the person) labelled, only_b the other's."""
    human = {"u1": 1, "u2": 0, "h1": 1, "h2": 0, "h3": 1}  # three units only the person labelled
    auto = {"u1": 1, "u2": 1, "a1": 0}  # one unit only the scorer labelled
    result = agreement(human, auto)
    assert (result.n_shared, result.only_a, result.only_b) == (2, 3, 1)
    assert result.confusion == ((0, 1), (0, 1))  # rows human 0/1, columns automatic 0/1: u2 is human 0, auto 1


def test_calibration_comparison_counts_human_only_and_auto_only_units_on_their_side():
    """Rule (calibrate.comparison.compare): human_only = units only people labelled; auto_only = only the scorer."""
    import playground as pg

    human = [{"unit_id": u, "dimension": "supported", "value": 1} for u in ("u1", "u2", "h1", "h2", "h3")]
    scores = [{"unit_id": u, "dimension": "supported", "score": 0.9} for u in ("u1", "u2", "a1")]
    row = pg.calibrate(scores, human, folds=2).to_frame().iloc[0]
    assert (row["n"], row["human_only"], row["auto_only"]) == (2, 3, 1)


# --------------------------------------------------------------------------- gate: the baseline's tolerance


def _report(config) -> dict:
    return {"config": config.snapshot(), "config_fingerprint": "c", "data_fingerprint": "d",
            "metrics": {"overall": {"recall_at_k": 1.0}, "by_case_type": {}}}


def test_a_new_baseline_keeps_the_run_configs_tolerance_and_the_default_when_the_config_is_silent():
    """Rule (README "The harness"): `harness baseline RUN` writes the run config's gate.max_relative_drop;
    a configuration that does not name it has the default, 5%."""
    from playground.harness.config import config_from_dict
    from playground.harness.gate import baseline_from_report, resolve_tolerance

    silent = baseline_from_report(_report(config_from_dict({})))
    assert silent["max_relative_drop"] == 0.05
    assert resolve_tolerance(silent) == (0.05, "the baseline")
    loose = baseline_from_report(_report(config_from_dict({"gate": {"max_relative_drop": 0.25}})))
    assert loose["max_relative_drop"] == 0.25


# --------------------------------------------------------------------------- RAGAS multi-turn contexts


def test_ragas_multi_turn_contexts_are_the_tool_messages_after_the_last_question(tmp_path):
    """Rule (README "Label your own RAG system"): the last human turn is the question, the AI messages after it
    the response, the tool messages *after it* the contexts; a tool message before it is history, not context."""
    from playground.importers.ragas import read_samples

    messages = [
        {"type": "human", "content": "Which plan do I have?"},
        {"type": "tool", "content": "EARLIER TOOL RESULT: account on the Basic plan."},
        {"type": "ai", "content": "You are on the Basic plan."},
        {"type": "human", "content": "What does the Pro plan cost?"},
        {"type": "ai", "content": "Let me look that up."},
        {"type": "tool", "content": "The Pro plan costs $49 per month."},
        {"type": "tool", "content": "   "},
        {"type": "ai", "content": "The Pro plan costs $49 per month."},
    ]
    path = tmp_path / "multi.jsonl"
    path.write_text(json.dumps({"user_input": messages, "reference": "It costs $49."}) + "\n", encoding="utf-8")
    problems: list = []
    _, samples = read_samples(path, problems)
    assert problems == []
    (sample,) = samples
    assert sample.query == "What does the Pro plan cost?"
    assert sample.contexts == ("The Pro plan costs $49 per month.",)  # not the earlier tool result, not blanks
    assert sample.response == "Let me look that up.\n\nThe Pro plan costs $49 per month."
    assert [t.content for t in sample.history] == ["Which plan do I have?", "You are on the Basic plan."]


# --------------------------------------------------------------------------- serving: the class token


@pytest.mark.slow
def test_the_class_token_is_not_in_the_environment_voila_and_its_kernels_start_with(monkeypatch):
    """Rule (serving.app.main): the token reaches the server through $PLAYGROUND_SERVE_TOKEN and is removed from
    the environment before Voila starts, so no kernel (spawned with the server's environment) can read it."""
    from playground.serving import app

    seen: dict = {}

    def launch(args, **kwargs):
        seen["env"] = dict(__import__("os").environ)
        seen["token"] = kwargs.get("token")

    monkeypatch.setattr(app.guards, "install", lambda: None)
    monkeypatch.setattr(app.PlaygroundVoila, "launch_instance", launch)
    monkeypatch.setenv(app.TOKEN_ENV, "class-token-123")
    app.main(["notebook.ipynb"])
    assert seen["token"] == "class-token-123"
    assert app.TOKEN_ENV not in seen["env"]
    assert "class-token-123" not in json.dumps(seen["env"])


# --------------------------------------------------------------------------- queue progress


def test_queue_progress_counts_a_unit_only_when_every_dimension_is_answered():
    """Rule (assign.queue_progress): a unit is done when it has an answer (1, 0 or unsure) on every dimension."""
    from playground.assign import queue_progress
    from playground.store import UNSURE
    from playground.store.types import Assignment, StoredLabel

    def label(unit: str, dimension: str, value: int, who: str = "ana") -> StoredLabel:
        return StoredLabel(who, "claim", unit, "C1", dimension, value, "h", "t")

    plan = Assignment("a", "queue", "golden", 7, 1, {"ana": ("c1", "c2", "c3")})
    dims = {"c1": ("supported", "correct"), "c2": ("supported", "correct"), "c3": ("supported", "correct")}
    labels = [label("c1", "supported", 1), label("c1", "correct", UNSURE),  # every dimension: done
              label("c2", "supported", 0),  # one of two: not done
              label("c3", "supported", 1, "ben"), label("c3", "correct", 1, "ben")]  # someone else's answers
    (progress,) = queue_progress(plan, labels, dims)
    assert (progress.annotator, progress.done, progress.size) == ("ana", 1, 3)
    (more,) = queue_progress(plan, [*labels, label("c2", "correct", 0)], dims)
    assert more.done == 2


# --------------------------------------------------------------------------- the environment check itself


@pytest.mark.slow
def test_a_test_that_leaves_the_environment_changed_fails_and_the_next_runs_clean(tmp_path):
    """tests/conftest.py's autouse check, run on a two-test file in a separate pytest."""
    import shutil
    import subprocess
    import sys

    for helper in ("conftest.py", "slow_marks.py", "hostile_index.py"):  # the conftest and what it imports
        shutil.copy(Path(__file__).with_name(helper), tmp_path / helper)
    (tmp_path / "test_probe.py").write_text(
        "import os\n"
        "def test_leaks():\n    os.environ['HOUSE_PROBE_LEAK'] = '1'\n"
        "def test_sets_with_monkeypatch(monkeypatch):\n    monkeypatch.setenv('HOUSE_PROBE_OK', '1')\n"
        "def test_after():\n    assert 'HOUSE_PROBE_LEAK' not in os.environ\n", encoding="utf-8")
    out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:phoenix",
                          str(tmp_path)], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert "test_probe.py::test_leaks left os.environ changed: HOUSE_PROBE_LEAK" in out.stdout, out.stdout
    assert out.stdout.strip().splitlines()[-1].startswith("3 passed, 1 error"), out.stdout
