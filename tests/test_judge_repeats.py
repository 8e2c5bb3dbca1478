"""``calibrate external --judge MODEL --repeats K`` (issue 25.5): the harness's Ollama judge rerun K times on
the calibration samples, its flip rate and per-sample stability, carried in the record and read by the gate.

Ollama is the protocol-level double (tests/ollama_double.py), reached through the official client and
``$OLLAMA_HOST``.  Its judge is deterministic: on the samples whose question says "shaky" it answers "yes" for
an even seed and "no" for an odd one, on every other sample "yes" — so the flip rate is known exactly.
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from calibration_data import write_rows
from ollama_double import OllamaDouble

from playground.calibrate.record import load_record
from playground.calibrate.score_gate import MAX_FLIP_RATE, below_bar
from playground.cli import main
from playground.datasets import open_dataset
from playground.harness.llm import ModelCache, OllamaModels, cache_key
from playground.importers.load import import_dataset
from playground.store import open_store

JUDGE = "qwen2.5:7b"
N, SHAKY = 40, 10  # samples labelled, of which the judge's verdict depends on the seed


def judge_reply(request: dict[str, Any]) -> str:
    """A valid judgement: every claim "yes", except on a shaky sample with an odd seed."""
    user = request["messages"][1]["content"]
    section = user.split("## Claims of the response", 1)[1].split("\n## ", 1)[0]
    numbers = [int(n) for n in re.findall(r"^(\d+)\. ", section, re.M)]
    seed = int(request.get("options", {}).get("seed", 0))
    verdict = "no" if "shaky" in user.split("## Question", 1)[1].split("\n## ", 1)[0] and seed % 2 else "yes"
    return json.dumps({"claims": [{"claim": n, "supported": verdict, "reason": "in passage 1"} for n in numbers],
                       "faithfulness": 1, "citation_accuracy": 1, "answer_relevance": 1})


@pytest.fixture
def labelled(tmp_path):
    """N samples, two claims each, every claim labelled supported (so the judge is calibrated on all N)."""
    rows = [{"user_input": f"Question {i}{' (shaky)' if i < SHAKY else ''}?",
             "response": f"The price is {i} euros. It was set in 2020.",
             "retrieved_contexts": [f"The price is {i} euros, set in 2020."]} for i in range(N)]
    write_rows(tmp_path / "qa.jsonl", rows)
    db = tmp_path / "qa.db"
    with open_store(db) as store:
        import_dataset(tmp_path / "qa.jsonl", "ragas", "qa", store)
        for unit in open_dataset("qa", store).units():
            if unit.unit_kind == "claim" and "supported" in unit.dimensions:
                store.set_label("ann", unit, "supported", 1)
    result = write_rows(tmp_path / "qa_result.jsonl", [{**r, "faithfulness": 0.9} for r in rows])
    return tmp_path, db, result


def _calibrate(tmp: Path, db: Path, result: Path, *extra: str) -> int:
    return main(["calibrate", "external", str(result), "--dataset", "qa", "--db", str(db), "--boot", "20",
                 "--judge", JUDGE, "--judge-cache", str(tmp / "cache"), *extra])


def test_k_runs_give_the_exact_flip_rate_and_the_record_carries_it(labelled, capsys, monkeypatch):
    tmp, db, result = labelled
    with OllamaDouble(chat_reply=judge_reply) as double:
        monkeypatch.setenv("OLLAMA_HOST", double.host)  # the official client's own variable, no --ollama-host
        assert _calibrate(tmp, db, result, "--repeats", "3", "--record", str(tmp / "rec.json"),
                          "--out", str(tmp / "out")) == 0
        sent = double.count("/api/chat")
        seeds = sorted({b["options"]["seed"] for b in double.bodies("/api/chat")})
    assert sent == 3 * N and seeds == [42, 43, 44]  # one call per sample and run, each run its own seed
    out = capsys.readouterr().out
    # shaky samples vote yes, no, yes: m = 2 of 3, flip probability 2*2*1/(3*2) = 2/3; the others 0
    # flip rate = 10 * (2/3) / 40 = 1/6; stability = (30 * 1 + 10 * 2/3) / 40 = 11/12
    assert f"judge:{JUDGE}: 3 runs on 40 samples: flip rate 0.167 (chance two runs disagree), 10 sample(s) not " \
           "the same in every run, mean stability 0.917" in out
    assert f"judge:{JUDGE}: verdict per sample over the runs (pass/runs): 30 of 40 the same every time; not: " in out
    record = load_record(tmp / "rec.json")
    entry = next(e for e in record["scorers"] if e["column"] == f"judge:{JUDGE}")
    assert entry["repeats"] == {"k": 3, "n_units": 40, "unstable_units": 10, "flip_rate": 0.166667,
                                "mean_stability": 0.916667}
    assert entry["identity"]["model"] == JUDGE
    assert f"flip rate 0.166667 > {MAX_FLIP_RATE} on reruns" in below_bar(entry, True)  # the gate will not gate
    import pandas as pd

    units = pd.read_csv(tmp / "out" / "repeats.csv")
    assert len(units) == 40 and sorted(units["passes"].value_counts().items()) == [(2, 10), (3, 30)]
    # stability 2/3 on the shaky samples, as the tables round it
    assert set(units["scorer"]) == {f"judge:{JUDGE}"} and sorted(set(units["stability"])) == [0.6667, 1.0]


def test_cached_reruns_stay_reruns(labelled, capsys, monkeypatch):
    """A second --repeats run is served from the cache, and its runs are still the K different runs."""
    tmp, db, result = labelled
    with OllamaDouble(chat_reply=judge_reply) as double:
        monkeypatch.setenv("OLLAMA_HOST", double.host)
        assert _calibrate(tmp, db, result, "--repeats", "2") == 0
        first = capsys.readouterr().out
        assert _calibrate(tmp, db, result, "--repeats", "2") == 0
        again = capsys.readouterr().out
        assert double.count("/api/chat") == 2 * N  # the second command sent nothing
    # two runs: a shaky sample votes yes then no (flip probability 1): flip rate 10 / 40
    line = f"judge:{JUDGE}: 2 runs on 40 samples: flip rate 0.250"
    assert line in first and line in again


def test_a_deterministic_judge_flips_nothing(labelled, capsys, monkeypatch):
    tmp, db, result = labelled
    steady = lambda request: judge_reply({**request, "options": {**request["options"], "seed": 0}})  # noqa: E731
    with OllamaDouble(chat_reply=steady) as double:
        monkeypatch.setenv("OLLAMA_HOST", double.host)
        assert _calibrate(tmp, db, result, "--repeats", "2", "--record", str(tmp / "rec.json")) == 0
    assert f"judge:{JUDGE}: 2 runs on 40 samples: flip rate 0.000" in capsys.readouterr().out
    entry = next(e for e in load_record(tmp / "rec.json")["scorers"] if e["column"] == f"judge:{JUDGE}")
    assert entry["repeats"]["flip_rate"] == 0.0 and "flip rate" not in below_bar(entry, True)


def test_repeats_without_a_judge_and_below_one_are_refused(labelled, capsys):
    tmp, db, result = labelled
    assert main(["calibrate", "external", str(result), "--dataset", "qa", "--db", str(db), "--repeats", "3"]) == 1
    assert "--repeats reruns the LLM judge: add --judge MODEL" in capsys.readouterr().err
    assert _calibrate(tmp, db, result, "--repeats", "0") == 1
    assert "--repeats must be at least 1, got 0" in capsys.readouterr().err
    assert main(["calibrate", "external", str(result), "--dimension", "supported", "--judge", JUDGE]) == 1
    assert "--judge apply to a --dataset result table only" in capsys.readouterr().err


def test_the_repeat_index_is_in_the_cache_key_and_the_seed(tmp_path):
    msgs = [{"role": "user", "content": "hi"}]
    opts = {"temperature": 0, "seed": 42}
    assert cache_key("chat", JUDGE, msgs, opts, None, 0) == cache_key("chat", JUDGE, msgs, opts, None)
    assert cache_key("chat", JUDGE, msgs, opts, None, 1) != cache_key("chat", JUDGE, msgs, opts, None)
    with OllamaDouble(chat_reply=lambda r: str(r["options"]["seed"])) as double, \
            ModelCache(tmp_path / "c.db") as cache:
        models = OllamaModels(host=double.host, cache=cache)
        assert [models.chat(JUDGE, msgs, repeat=r) for r in (0, 1, 2, 0, 1, 2)] == ["42", "43", "44"] * 2
        assert double.count("/api/chat") == 3 and len(cache) == 3
        with pytest.raises(ValueError, match="repeat must be 0 or more"):
            models.chat(JUDGE, msgs, repeat=-1)


def test_reruns_from_files_get_the_per_sample_stability_too(labelled, capsys):
    """``--rerun FILE``: the same figures for a scorer rerun elsewhere; a rerun sharing no sample is refused."""
    tmp, db, result = labelled
    rows = [json.loads(line) for line in result.read_text().splitlines()]
    flipped = write_rows(tmp / "rerun.jsonl", [{**r, "faithfulness": 0.1 if i < 4 else r["faithfulness"]}
                                               for i, r in enumerate(rows)])
    args = ["calibrate", "external", str(result), "--dataset", "qa", "--db", str(db), "--boot", "20"]
    assert main([*args, "--rerun", str(flipped)]) == 0
    out = capsys.readouterr().out
    # 4 of 40 samples pass in one run and fail in the other: flip rate 4 / 40
    assert "faithfulness: 2 runs on 40 samples: flip rate 0.100 (chance two runs disagree), 4 sample(s)" in out
    assert "faithfulness: verdict per sample over the runs (pass/runs): 36 of 40 the same every time; not: " in out
    empty = write_rows(tmp / "empty.jsonl", [{**r, "faithfulness": None} for r in rows])
    assert main([*args, "--rerun", str(empty)]) == 1
    assert "faithfulness: no sample was scored in every one of the 2 runs, so there is no flip rate" in \
        capsys.readouterr().err
