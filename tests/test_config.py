"""Harness configuration validation: every key's type and range, all problems at once, floors from a file, the host."""
from __future__ import annotations

import hashlib
import importlib
import json
import math
from pathlib import Path

import pytest
from ollama_double import OllamaDouble
from test_ollama import replies

from playground.cli import main
from playground.errors import DataError
from playground.harness.config import DEFAULTS, config_from_dict, load_config
from playground.harness.llm import OllamaModels, parse_host, resolve_host
from playground.harness.run import INCOMPLETE, REPORT_FILES, run_harness


def _messages(given: dict, **kw) -> list[str]:
    with pytest.raises(DataError) as info:
        config_from_dict(given, "c.yaml", **kw)
    return [p.message for p in info.value.problems]


@pytest.mark.parametrize(
    ("given", "message"),
    [
        (
            {"decision": {"reject_groundedness": math.nan}},
            "'decision.reject_groundedness' must be a number, got float nan",
        ),
        ({"decision": {"high_hedging": 1.5}}, "'decision.high_hedging' must lie in [0, 1], got 1.5"),
        ({"decision": {"borderline_margin": -0.01}}, "'decision.borderline_margin' must lie in [0, 1], got -0.01"),
        ({"decision": {"confidence_review": math.inf}}, "'decision.confidence_review' must be a number, got float inf"),
        ({"judge": {"window": ["low", "high"]}}, "'judge.window' must list numbers, got ['low', 'high']"),
        (
            {"judge": {"window": [0.7, 0.3]}},
            "'judge.window' must be [low, high] with 0 <= low <= high <= 1, got [0.7, 0.3]",
        ),
        ({"judge": {"window": [0.5]}}, "'judge.window' must be [low, high] with 0 <= low <= high <= 1, got [0.5]"),
        ({"retrieval": {"rrf_k": -1}}, "'retrieval.rrf_k' must be >= 0, got -1"),
        ({"retrieval": {"k": 0}}, "'retrieval.k' must be >= 1, got 0"),
        ({"retrieval": {"k": 5.0}}, "'retrieval.k' must be an integer, got float 5.0"),
        ({"retrieval": {"use_history": "true"}}, "'retrieval.use_history' must be true or false, got str 'true'"),
        ({"judge": {"enabled": 1}}, "'judge.enabled' must be true or false, got int 1"),
        ({"retrieval": {"k": True}}, "'retrieval.k' must be an integer, got bool True"),
        (
            {"retrieval": {"legs": ["bm25", "bm25"], "method": "hybrid"}},
            "'retrieval.legs' must list bm25 and/or embedding, each once, got ['bm25', 'bm25']",
        ),
        ({"gate": {"max_relative_drop": 1.0}}, "'gate.max_relative_drop' must lie in [0, 1), got 1.0"),
        ({"ollama": {"timeout": 0}}, "'ollama.timeout' must be > 0, got 0.0"),
        ({"ollama": {"host": "ftp://x"}}, "'ollama.host' must be host, host:port or an http(s):// URL, got 'ftp://x'"),
        ({"ollama": {"host": 11434}}, "'ollama.host' must be a non-empty string or null, got 11434"),
        ({"scoring": {"floor_source": ""}}, "'scoring.floor_source' must be a non-empty string or null, got ''"),
        (
            {"generation": {"options": {"temperature": math.nan}}},
            "'generation.options.temperature' must be a string, number, boolean or list of them, got nan",
        ),
        (
            {"decision": {"reject_groundedness": 0.9}},
            "'decision.reject_groundedness' (0.9) must not exceed 'decision.accept_groundedness' (0.8)",
        ),
        (
            {"decision": {"low_specificity": 0.4}},
            "'decision.low_specificity' (0.4) must not exceed 'decision.high_specificity' (0.35)",
        ),
        (
            {"chunking": {"method": "fixed", "size": 10, "overlap": 10}},
            "'chunking.overlap' must be below 'chunking.size' (10) for fixed chunks, got 10",
        ),
        ({"name": " "}, "'name' must not be empty"),
        ({"scoring": []}, "'scoring' must be a mapping, got list []"),
    ],
)
def test_each_bad_value_is_named_with_its_key_path(given, message):
    assert _messages(given) == [message]


@pytest.mark.parametrize(
    ("given", "ok"),
    [
        # the boundaries of each documented range: inclusive ends pass, one step beyond fails
        ({"decision": {"high_hedging": 0.0}}, True),
        ({"decision": {"high_hedging": 1.0}}, True),
        ({"decision": {"high_hedging": 1.0000001}}, False),
        ({"retrieval": {"rrf_k": 0}}, True),
        ({"retrieval": {"k": 1}}, True),
        ({"gate": {"max_relative_drop": 0.0}}, True),
        ({"gate": {"max_relative_drop": 0.999}}, True),
        ({"judge": {"window": [0.5, 0.5]}}, True),
        ({"judge": {"window": [0, 1]}}, True),
        ({"decision": {"reject_groundedness": 0.8}}, True),  # equal to accept_groundedness
        ({"chunking": {"method": "fixed", "size": 10, "overlap": 9}}, True),
        ({"chunking": {"method": "fixed", "size": 1, "overlap": 0}}, True),
        ({"ollama": {"timeout": 0.001}}, True),
    ],
)
def test_range_boundaries(given, ok):
    if ok:
        config_from_dict(given)
    else:
        assert len(_messages(given)) == 1


def test_every_problem_is_listed_at_once_with_its_line(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text(
        "name: x\ndecision:\n  reject_groundedness: .nan\n  high_hedging: 2\n"
        "judge:\n  window: [a, b]\nretrieval:\n  rrf_k: -1\n  use_history: 'yes'\ntypo: 1\n"
    )
    with pytest.raises(DataError) as info:
        load_config(path)
    found = [(p.line, p.message) for p in info.value.problems]
    assert found == [
        (3, "'decision.reject_groundedness' must be a number, got float nan"),
        (4, "'decision.high_hedging' must lie in [0, 1], got 2.0"),
        (6, "'judge.window' must list numbers, got ['a', 'b']"),
        (8, "'retrieval.rrf_k' must be >= 0, got -1"),
        (9, "'retrieval.use_history' must be true or false, got str 'yes'"),
        (10, "unknown key 'typo'"),
    ]


def test_a_bad_config_writes_nothing(tmp_path, capsys):
    bad = tmp_path / "bad.yaml"
    bad.write_text("decision: {reject_groundedness: .nan}\njudge: {window: [x, y]}\nretrieval: {rrf_k: -1}\n")
    out = tmp_path / "run"
    assert main(["harness", "run", "--config", str(bad), "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert err.splitlines()[0] == "invalid configuration: 3 problem(s)"
    assert "Traceback" not in err
    assert not out.exists()


def test_shipped_configs_load_and_name_no_ollama_host(repo_root):
    for path in sorted((repo_root / "configs").glob("*.yaml")):
        config = load_config(path)
        assert config["ollama.host"] is None, path.name
    assert DEFAULTS["ollama"]["host"] is None


# --- floors from calibration ------------------------------------------------------------------


def _floors_file(path: Path, floors: dict, **extra) -> Path:
    path.write_text(
        json.dumps(
            {
                "floors": floors,
                "source": "calibrate ragtruth",
                "criterion": "balanced accuracy",
                "data": "ragtruth/claims.jsonl",
                **extra,
            }
        )
    )
    return path


def test_floor_source_overrides_the_config_floors_and_is_recorded(tmp_path):
    _floors_file(tmp_path / "floors.json", {"faithfulness": 0.55, "context_relevance": 0.4})
    cfg = tmp_path / "c.yaml"
    cfg.write_text("scoring:\n  support_floor: 0.9\n  correctness_floor: 0.6\n  floor_source: floors.json\n")
    config = load_config(cfg)  # the path is relative to the configuration file, not the cwd
    assert config["scoring.support_floor"] == 0.55
    assert config["scoring.relevance_threshold"] == 0.4
    assert config["scoring.correctness_floor"] == 0.6  # not in the file: the config's own
    record = config.snapshot()["floors_from"]
    digest = hashlib.sha256((tmp_path / "floors.json").read_bytes()).hexdigest()
    assert record == {
        "path": "floors.json",
        "sha256": digest,
        "floors": {"faithfulness": 0.55, "context_relevance": 0.4},
        "source": "calibrate ragtruth",
        "criterion": "balanced accuracy",
        "data": "ragtruth/claims.jsonl",
    }
    plain = tmp_path / "plain.yaml"
    plain.write_text("scoring:\n  support_floor: 0.9\n  correctness_floor: 0.6\n")
    assert load_config(plain).fingerprint() != config.fingerprint()


def test_floor_source_in_the_run_report(mini_root, tmp_path):
    _floors_file(tmp_path / "floors.json", {"faithfulness": 0.0, "correctness": 1.0})
    config = config_from_dict({"scoring": {"floor_source": "floors.json"}}, base=tmp_path)
    report = run_harness(config, tmp_path / "run", root=mini_root, progress=False)
    assert report["config"]["floors_from"]["floors"] == {"faithfulness": 0.0, "correctness": 1.0}
    assert report["config"]["scoring"]["support_floor"] == 0.0
    assert report["metrics"]["overall"]["faithfulness"] == 1.0  # floor 0: every claim is supported
    assert "floors_from:" in (tmp_path / "run" / "config.yaml").read_text()


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"floors": {"faithfulness": 1.2}}', "'floors.faithfulness' must be a number in [0, 1], got 1.2"),
        (
            '{"floors": {"coverage": 0.5}}',
            "unknown dimension 'coverage' in 'floors' (known: faithfulness, correctness, context_relevance)",
        ),
        (
            '{"floors": {}}',
            "expected an object with a non-empty 'floors' object (written by `playground calibrate ... --save-floors`)",
        ),
        ('{"floors": {"faithfulness": "0.5"}}', "'floors.faithfulness' must be a number in [0, 1], got '0.5'"),
        ('{"floors": ', "invalid JSON: Expecting value (column 12)"),
    ],
)
def test_bad_floors_files(tmp_path, content, message):
    (tmp_path / "floors.json").write_text(content)
    [found] = _messages({"scoring": {"floor_source": "floors.json"}}, base=tmp_path)
    assert found.startswith("'scoring.floor_source': ") and found.endswith(message), found


def test_missing_floors_file(tmp_path):
    [found] = _messages({"scoring": {"floor_source": "nowhere.json"}}, base=tmp_path)
    assert found == f"'scoring.floor_source': {tmp_path / 'nowhere.json'}: file not found"


# --- the Ollama host ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("host", "url"),
    [
        # the official client's documented examples (ollama/_client.py, _parse_host)
        (None, "http://127.0.0.1:11434"),
        ("", "http://127.0.0.1:11434"),
        ("1.2.3.4", "http://1.2.3.4:11434"),
        (":56789", "http://127.0.0.1:56789"),
        ("1.2.3.4:56789", "http://1.2.3.4:56789"),
        ("http://1.2.3.4", "http://1.2.3.4:80"),
        ("https://1.2.3.4", "https://1.2.3.4:443"),
        ("https://example.com:56789/path/", "https://example.com:56789/path"),
        ("example.com", "http://example.com:11434"),
        ("example.com/path", "http://example.com:11434/path"),
        ("[0001:002:003:0004::1]", "http://[0001:002:003:0004::1]:11434"),
        ("https://[0001:002:003:0004::1]:56789/path", "https://[0001:002:003:0004::1]:56789/path"),
    ],
)
def test_parse_host_matches_the_official_client(host, url):
    # the reference implementation (``ollama._client`` the module: ``ollama._client`` the attribute is a Client)
    reference = importlib.import_module("ollama._client")

    assert parse_host(host) == url
    assert reference._parse_host(host) == url


def test_host_precedence():
    env = {"OLLAMA_HOST": "gpu-box:9999"}
    assert resolve_host(None, env) == "http://gpu-box:9999"
    assert resolve_host("http://other:1", env) == "http://other:1"
    assert resolve_host(None, {}) == "http://127.0.0.1:11434"
    assert resolve_host(None, {"OLLAMA_HOST": ""}) == "http://127.0.0.1:11434"


def test_models_from_config_read_ollama_host(monkeypatch):
    monkeypatch.setenv("OLLAMA_HOST", "127.0.0.1:4321")
    assert OllamaModels.from_config(config_from_dict({})).host == "http://127.0.0.1:4321"
    assert OllamaModels.from_config(config_from_dict({"ollama": {"host": "localhost:1"}})).host == "http://localhost:1"


def _ollama_config(tmp_path: Path, host_line: str = "") -> Path:
    cfg = tmp_path / "ollama.yaml"
    cfg.write_text("name: o\nresponses: {source: generated}\n" + host_line)
    return cfg


def test_run_reaches_ollama_through_OLLAMA_HOST(mini_root, tmp_path, monkeypatch, capsys):
    with OllamaDouble(chat_reply=replies) as double:
        monkeypatch.setenv("OLLAMA_HOST", f"127.0.0.1:{double.port}")
        code = main(
            [
                "harness",
                "run",
                "--config",
                str(_ollama_config(tmp_path)),
                "--out",
                str(tmp_path / "run"),
                "--root",
                str(mini_root),
            ]
        )
        assert code == 0, capsys.readouterr().err
        assert double.count("/api/chat", "qwen2.5:7b") == 2


def test_ollama_host_option_overrides_config_and_environment(mini_root, tmp_path, monkeypatch, capsys):
    with OllamaDouble(chat_reply=replies) as double:
        monkeypatch.setenv("OLLAMA_HOST", "127.0.0.1:1")  # nothing listens there
        cfg = _ollama_config(tmp_path, "ollama: {host: 'http://127.0.0.1:2'}\n")
        code = main(
            [
                "harness",
                "run",
                "--config",
                str(cfg),
                "--out",
                str(tmp_path / "run"),
                "--root",
                str(mini_root),
                "--ollama-host",
                f"localhost:{double.port}",
            ]
        )
        assert code == 0, capsys.readouterr().err
        assert double.count("/api/chat", "qwen2.5:7b") == 2
        port = double.port
    report = json.loads((tmp_path / "run" / "report.json").read_text())
    assert report["config"]["ollama"]["host"] == f"localhost:{port}"


def test_unreachable_host_is_named_and_the_folder_marked(mini_root, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("OLLAMA_HOST", "127.0.0.1:1")
    out = tmp_path / "run"
    assert (
        main(["harness", "run", "--config", str(_ollama_config(tmp_path)), "--out", str(out), "--root", str(mini_root)])
        == 1
    )
    err = capsys.readouterr().err.splitlines()
    assert err[0] == "error: Ollama is not running at http://127.0.0.1:1 — start it with `ollama serve`"
    assert (out / INCOMPLETE).is_file() and not any((out / f).exists() for f in REPORT_FILES if f != "config.yaml")
