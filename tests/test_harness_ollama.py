"""The harness end to end with local models: the real ollama client against the protocol-level double.

Generation, the embedding retrieval leg fused by RRF, the judge in its
uncertainty window, the cache (a second run makes zero calls and writes the
same bytes), the 25% skip rule, and --resume after the server failed mid-run.
"""
from __future__ import annotations

import json

import pytest
from ollama_double import OllamaDouble
from test_ollama import replies

from playground.cli import main
from playground.harness.config import config_from_dict
from playground.harness.run import REPORT_FILES, run_harness


def _config(host: str, **judge) -> object:
    return config_from_dict({
        "name": "ollama-test",
        "retrieval": {"method": "hybrid", "legs": ["bm25", "embedding"], "k": 5},
        "responses": {"source": "generated"},
        "judge": {"enabled": True, "model": "llama3.1:8b", "use_window": False, **judge},
        "ollama": {"host": host, "timeout": 5.0},
    })


def _bytes(out):
    return {name: (out / name).read_bytes() for name in REPORT_FILES}


def test_generated_run_is_cached_and_reproducible(mini_root, tmp_path):
    with OllamaDouble(chat_reply=replies) as double:
        config = _config(double.host)
        first = run_harness(config, tmp_path / "a", root=mini_root, progress=False)
        calls = len(double.requests)
        assert double.count("/api/chat", "qwen2.5:7b") == 2  # one generated answer per case
        assert double.count("/api/chat", "llama3.1:8b") == 2  # the judge on each (window off)
        assert double.count("/api/embed") == 3
        # a second run into a new folder, sharing the cache: zero model calls, same bytes
        second = run_harness(config, tmp_path / "b", root=mini_root, progress=False,
                             cache_path=tmp_path / "a" / ".cache" / "ollama.db")
        model_calls = [r for r in double.requests[calls:] if r.path in ("/api/chat", "/api/embed", "/api/generate")]
        assert model_calls == []
    assert first["models"]["requests"] == 2 + 2 + 3  # the model requests counted above: generate, judge, embed
    assert first["models"]["cache_misses"] > 0 and second["models"]["cache_misses"] == 0
    assert second["models"]["cache_hits"] == first["models"]["cache_hits"] + first["models"]["cache_misses"]
    a, b = _bytes(tmp_path / "a"), _bytes(tmp_path / "b")
    assert a["cases.jsonl"] == b["cases.jsonl"] and a["units.csv"] == b["units.csv"]
    case = json.loads(a["cases.jsonl"].decode().splitlines()[0])
    response = case["responses"][0]
    assert response["origin"] == "model" and response["variant"] == "generated"
    assert dict(response["meta"])["model"] == "qwen2.5:7b"
    assert response["judge"]["judge_model"] == "llama3.1:8b"
    assert first["judge"]["skipped"] is False and first["judge"]["judged_cases"] == 2


def test_judge_window_and_skip_rule(mini_root, tmp_path):
    # A window no groundedness falls into: the judge runs on no case, so its metrics are skipped.
    with OllamaDouble(chat_reply=replies) as double:
        report = run_harness(_config(double.host, use_window=True, window=[0.999, 0.999]), tmp_path / "w",
                             root=mini_root, progress=False)
        assert double.count("/api/chat", "llama3.1:8b") == 0
    assert report["judge"]["skipped"] is True and "below the 25% minimum" in report["judge"]["reason"]


def test_judge_equal_to_generator_is_refused(mini_root, tmp_path):
    with OllamaDouble(chat_reply=replies) as double:
        with pytest.raises(ValueError, match="differ"):
            run_harness(_config(double.host, model="qwen2.5:7b"), tmp_path / "r", root=mini_root, progress=False)
        assert double.count("/api/chat") == 0  # refused before any work


def test_cli_failure_mid_run_then_resume(mini_root, tmp_path, capsys):
    out = tmp_path / "run"
    with OllamaDouble(chat_reply=replies) as double:
        cfg = tmp_path / "ollama.yaml"
        cfg.write_text(json.dumps({
            "name": "ollama-test", "responses": {"source": "generated"},
            "judge": {"enabled": True, "model": "llama3.1:8b", "use_window": False},
            "ollama": {"host": double.host, "timeout": 5.0}}))
        # the model is removed right after the first case's answer: the second case's generation gets a 404
        real = double.chat_reply
        seen = []

        def flaky(request):
            if request.get("format") is None:
                seen.append(1)
                if len(seen) == 1:
                    double.remove_model("qwen2.5:7b")
            return real(request)

        double.chat_reply = flaky
        args = ["harness", "run", "--config", str(cfg), "--root", str(mini_root), "--out", str(out), "--quiet"]
        assert main(args) == 1
        err = capsys.readouterr().err
        assert "ollama pull qwen2.5:7b" in err and "--resume" in err
        finished = sorted(p.name for p in (out / "checkpoints").glob("*.json"))
        assert len(finished) == 1  # the case finished before the failure is kept
        double.add_model("qwen2.5:7b")
        before = double.count("/api/chat", "qwen2.5:7b")
        assert main([*args, "--resume"]) == 0
        # only the unfinished case asked the generator again
        assert double.count("/api/chat", "qwen2.5:7b") - before == 1
    report = json.loads((out / "report.json").read_text())
    assert report["counts"]["cases"] == 2
