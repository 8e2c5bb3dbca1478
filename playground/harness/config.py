"""Harness configurations: YAML files under ``configs/``, validated against the defaults below.

A configuration names everything a run depends on — chunking, retrieval,
which responses are scored (authored or model-generated), every scoring and
decision threshold, the gate's tolerance and the optional Ollama legs — so a
report can carry a snapshot of it and two runs with the same configuration
give the same bytes.  Keys not in :data:`DEFAULTS` are rejected (a typo must
not silently fall back to a default), and so are values of the wrong type.
"""
from __future__ import annotations

import copy
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from ..errors import DataError, Problem

DEFAULTS: dict[str, Any] = {
    "name": "default",
    "description": "",
    "chunking": {"method": "heading", "size": 120, "overlap": 30},
    "retrieval": {"method": "bm25", "k": 5, "use_history": True, "rrf_k": 60, "legs": ["bm25"]},
    "responses": {"source": "authored"},
    "scoring": {
        "support_floor": 0.70,
        "correctness_floor": 0.70,
        "relevance_threshold": 0.50,
    },
    "decision": {
        # REJECT when groundedness is below this, or a claim is unsupported and specificity is high.
        "reject_groundedness": 0.45,
        "accept_groundedness": 0.80,
        "high_specificity": 0.35,
        "low_specificity": 0.12,
        "low_attribution": 0.50,
        "min_context_quality": 0.30,
        "min_answer_relevance": 0.25,
        "confidence_review": 0.50,
        "max_signal_disagreement": 0.30,
        "borderline_margin": 0.05,
        "high_hedging": 0.50,
    },
    "gate": {"max_relative_drop": 0.05},
    "ollama": {"host": "http://127.0.0.1:11434", "timeout": 120.0, "seed": 42},
    "generation": {"model": "qwen2.5:7b", "options": {}},
    "embeddings": {"model": "nomic-embed-text"},
    "judge": {"enabled": False, "model": "llama3.1:8b", "window": [0.45, 0.65], "use_window": True, "force_same": False},
}

CHOICES = {
    "chunking.method": ("heading", "fixed"),
    "retrieval.method": ("bm25", "hybrid"),
    "responses.source": ("authored", "generated"),
}


@dataclass(frozen=True)
class Config:
    """A validated configuration; ``data`` is the full tree with defaults filled in."""

    data: dict[str, Any]
    path: str = ""

    def __getitem__(self, dotted: str) -> Any:
        node: Any = self.data
        for part in dotted.split("."):
            node = node[part]
        return node

    @property
    def name(self) -> str:
        return self.data["name"]

    def snapshot(self) -> dict[str, Any]:
        """A deep copy for reports (what produced them)."""
        return copy.deepcopy(self.data)

    def fingerprint(self) -> str:
        """SHA-256 (16 hex) of the canonical JSON of the configuration."""
        blob = json.dumps(self.data, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(blob.encode()).hexdigest()[:16]

    @property
    def uses_models(self) -> bool:
        return (
            self.data["responses"]["source"] == "generated"
            or self.data["judge"]["enabled"]
            or "embedding" in self.data["retrieval"]["legs"]
        )


def _merge(defaults: Any, given: Any, path: str, problems: list[Problem], file: str) -> Any:
    if isinstance(defaults, dict):
        if not isinstance(given, dict):
            problems.append(Problem(file, f"'{path}' must be a mapping, got {type(given).__name__}"))
            return copy.deepcopy(defaults)
        if path == "generation.options":
            return dict(given)
        merged = copy.deepcopy(defaults)
        for key, value in given.items():
            sub = f"{path}.{key}" if path else str(key)
            if key not in defaults:
                problems.append(Problem(file, f"unknown key '{sub}'"))
                continue
            merged[key] = _merge(defaults[key], value, sub, problems, file)
        return merged
    numeric = (int, float)
    if isinstance(defaults, bool) or isinstance(given, bool):
        ok = isinstance(defaults, bool) and isinstance(given, bool)
    elif isinstance(defaults, float):
        ok = isinstance(given, numeric)
        given = float(given) if ok else given
    else:
        ok = isinstance(given, type(defaults))
    if not ok:
        problems.append(Problem(file, f"'{path}' must be {type(defaults).__name__}, got {given!r}"))
        return defaults
    if path in CHOICES and given not in CHOICES[path]:
        problems.append(Problem(file, f"'{path}' must be one of {', '.join(CHOICES[path])}, got {given!r}"))
        return defaults
    return given


def _check(data: dict[str, Any], file: str, problems: list[Problem]) -> None:
    for key in ("support_floor", "correctness_floor", "relevance_threshold"):
        if not 0 <= data["scoring"][key] <= 1:
            problems.append(Problem(file, f"'scoring.{key}' must lie in [0, 1], got {data['scoring'][key]}"))
    if data["retrieval"]["k"] < 1:
        problems.append(Problem(file, f"'retrieval.k' must be >= 1, got {data['retrieval']['k']}"))
    legs = data["retrieval"]["legs"]
    if not legs or any(leg not in ("bm25", "embedding") for leg in legs):
        problems.append(Problem(file, f"'retrieval.legs' must list bm25 and/or embedding, got {legs!r}"))
    if data["retrieval"]["method"] == "bm25" and legs != ["bm25"]:
        problems.append(Problem(file, "'retrieval.legs' other than [bm25] need retrieval.method: hybrid"))
    chunk = data["chunking"]
    if chunk["method"] == "fixed" and not (chunk["size"] >= 1 and 0 <= chunk["overlap"] < chunk["size"]):
        problems.append(Problem(file, "fixed chunking needs size >= 1 and 0 <= overlap < size"))
    window = data["judge"]["window"]
    if not (isinstance(window, list) and len(window) == 2 and 0 <= window[0] <= window[1] <= 1):
        problems.append(Problem(file, f"'judge.window' must be [low, high] within [0, 1], got {window!r}"))
    drop = data["gate"]["max_relative_drop"]
    if not 0 <= drop < 1:
        problems.append(Problem(file, f"'gate.max_relative_drop' must lie in [0, 1), got {drop}"))


def config_from_dict(given: dict[str, Any], file: str = "<config>") -> Config:
    """Merge ``given`` over :data:`DEFAULTS` and validate; raise DataError listing every problem."""
    problems: list[Problem] = []
    data = _merge(DEFAULTS, given, "", problems, file)
    if not problems:
        _check(data, file, problems)
    if problems:
        raise DataError(problems, "invalid configuration")
    return Config(data, file)


def load_config(path: str | Path | None = None) -> Config:
    """Load a YAML configuration (``None``: the repository's ``configs/default.yaml``)."""
    from .. import REPO_ROOT

    path = Path(path) if path is not None else REPO_ROOT / "configs" / "default.yaml"
    try:
        given = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except FileNotFoundError:
        raise DataError([Problem(str(path), "configuration file not found")], "invalid configuration") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise DataError(
            [Problem(str(path), f"malformed YAML: {getattr(exc, 'problem', exc)}", line=mark.line + 1 if mark else None)],
            "invalid configuration",
        ) from None
    if not isinstance(given, dict):
        raise DataError([Problem(str(path), "a configuration must be a mapping")], "invalid configuration")
    return config_from_dict(given, str(path))
