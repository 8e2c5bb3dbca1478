"""Harness configurations: YAML files under ``configs/``, validated against the defaults below.

A configuration names everything a run depends on — chunking, retrieval,
which responses are scored (authored or model-generated), every scoring and
decision threshold, the gate's tolerance and the optional Ollama legs — so a
report can carry a snapshot of it and two runs with the same configuration
give the same bytes.

Validation happens before a run writes anything and lists every problem at
once, each with its key path (and line, when read from a file):

* keys not in :data:`DEFAULTS` are rejected (a typo must not silently fall back);
* every value has the type of its default — a boolean is ``true``/``false``,
  never the string ``"true"`` nor 0/1; an integer is not ``5.0``; a number is
  never NaN or infinite;
* ranges (:data:`RANGES`): thresholds, floors and the judge window in [0, 1],
  ``retrieval.k`` and ``chunking.size`` ≥ 1, ``rrf_k`` and ``overlap`` ≥ 0,
  ``ollama.timeout`` > 0, ``gate.max_relative_drop`` in [0, 1);
* relations: ``decision.reject_groundedness`` ≤ ``accept_groundedness``,
  ``low_specificity`` ≤ ``high_specificity``, ``judge.window`` low ≤ high,
  fixed chunks need ``overlap < size``, legs other than ``[bm25]`` need
  ``retrieval.method: hybrid``.

``scoring.floor_source: PATH`` (relative to the configuration file) names a
JSON file written by ``playground calibrate ... --save-floors``:
``{"floors": {"faithfulness": f, "correctness": f, "context_relevance": f}, "source": ..., ...}``.
Its floors override ``scoring.support_floor``, ``scoring.correctness_floor``
and ``scoring.relevance_threshold`` respectively; the configuration then
carries a ``floors_from`` record (path as written, SHA-256 of the file, its
``source``/``criterion``/``data`` and the floors applied), which the report's
snapshot and the fingerprint include.

``ollama.host`` may be left out (``null``): the host then comes from the
``OLLAMA_HOST`` environment variable, parsed as the official client does
(:func:`playground.harness.llm.parse_host`), else ``127.0.0.1:11434``.
"""
from __future__ import annotations

import copy
import hashlib
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import safeyaml
from ..errors import DataError, Problem, read_text
from .score import DEFAULT_CORRECTNESS_FLOOR, DEFAULT_KIND, DEFAULT_SUPPORT_FLOOR, KINDS

__all__ = [
    "CHOICES", "DEFAULTS", "FLOOR_KEYS", "RANGES", "Config", "config_from_dict", "load_config", "load_floors",
]

DEFAULTS: dict[str, Any] = {
    "name": "default",
    "description": "",
    "chunking": {"method": "heading", "size": 120, "overlap": 30},
    "retrieval": {"method": "bm25", "k": 5, "use_history": True, "rrf_k": 60, "legs": ["bm25"]},
    "responses": {"source": "authored"},
    "scoring": {
        # The one source of truth of the shipped support floor: playground.harness.score.DEFAULT_SUPPORT_FLOOR.
        "support_floor": DEFAULT_SUPPORT_FLOOR,
        "correctness_floor": DEFAULT_CORRECTNESS_FLOOR,
        # The kind of text scored (qa, summary, dialogue): which support rules apply (score.RULE_KINDS).
        "kind": DEFAULT_KIND,
        "relevance_threshold": 0.50,
        # A JSON file of floors from `playground calibrate ... --save-floors` (relative to this file).
        "floor_source": None,
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
    # host null: $OLLAMA_HOST, else 127.0.0.1:11434 (as the official client does).
    "ollama": {"host": None, "timeout": 120.0, "seed": 42},
    "generation": {"model": "qwen2.5:7b", "options": {}},
    "embeddings": {"model": "nomic-embed-text"},
    "judge": {
        "enabled": False,
        "model": "llama3.1:8b",
        "window": [0.45, 0.65],
        "use_window": True,
        "force_same": False,
    },
}

CHOICES: dict[str, tuple[str, ...]] = {
    "scoring.kind": KINDS,
    "chunking.method": ("heading", "fixed"),
    "retrieval.method": ("bm25", "hybrid"),
    "responses.source": ("authored", "generated"),
}

#: Keys whose default is None and the type they take when given.
OPTIONAL_STRINGS = frozenset({"scoring.floor_source", "ollama.host"})

#: Key path → (low, high, low inclusive, high inclusive); None is unbounded.
RANGES: dict[str, tuple[float | None, float | None, bool, bool]] = {
    "chunking.size": (1, None, True, True),
    "chunking.overlap": (0, None, True, True),
    "retrieval.k": (1, None, True, True),
    "retrieval.rrf_k": (0, None, True, True),
    "scoring.support_floor": (0, 1, True, True),
    "scoring.correctness_floor": (0, 1, True, True),
    "scoring.relevance_threshold": (0, 1, True, True),
    **{f"decision.{k}": (0, 1, True, True) for k in DEFAULTS["decision"]},
    "gate.max_relative_drop": (0, 1, True, False),
    "ollama.timeout": (0, None, False, True),
}

#: Dimension names in a floors file → the scoring key each overrides.
FLOOR_KEYS: dict[str, str] = {
    "faithfulness": "support_floor",
    "correctness": "correctness_floor",
    "context_relevance": "relevance_threshold",
}


@dataclass(frozen=True)
class Config:
    """A validated configuration; ``data`` is the full tree with defaults filled in."""

    data: dict[str, Any]
    path: str = ""
    #: Where the configuration came from (for resolving relative paths); not part of the data.
    base: Path | None = field(default=None, compare=False)

    def __getitem__(self, dotted: str) -> Any:
        node: Any = self.data
        for part in dotted.split("."):
            node = node[part]
        return node

    @property
    def name(self) -> str:
        return str(self.data["name"])

    def snapshot(self) -> dict[str, Any]:
        """A deep copy for reports (what produced them)."""
        return copy.deepcopy(self.data)

    def fingerprint(self) -> str:
        """SHA-256 (16 hex) of the canonical JSON of the configuration."""
        blob = json.dumps(self.data, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(blob.encode()).hexdigest()[:16]

    @property
    def uses_models(self) -> bool:
        return bool(
            self.data["responses"]["source"] == "generated"
            or self.data["judge"]["enabled"]
            or "embedding" in self.data["retrieval"]["legs"]
        )

    def with_ollama_host(self, host: str) -> Config:
        """The same configuration with ``ollama.host`` set (``--ollama-host``); validated like a file's."""
        given = copy.deepcopy(self.data)
        given.pop("floors_from", None)
        given["ollama"]["host"] = host
        return config_from_dict(given, self.path or "<config>", base=self.base)


# --- structure and types ------------------------------------------------------------------


def _type_name(value: Any) -> str:
    return "null" if value is None else type(value).__name__


class _Validator:
    """Merges a given tree over :data:`DEFAULTS`, collecting every problem with its key path."""

    def __init__(self, file: str, lines: dict[str, int]):
        self.file = file
        self.lines = lines
        self.problems: list[Problem] = []

    def problem(self, path: str, message: str) -> None:
        self.problems.append(Problem(self.file, message, line=self.lines.get(path)))

    def merge(self, defaults: Any, given: Any, path: str) -> Any:
        if isinstance(defaults, dict):
            return self._mapping(defaults, given, path)
        if path in OPTIONAL_STRINGS:
            if given is None:
                return None
            if isinstance(given, str) and given.strip():
                return given
            self.problem(path, f"'{path}' must be a non-empty string or null, got {given!r}")
            return defaults
        if isinstance(defaults, list):
            return self._list(defaults, given, path)
        return self._scalar(defaults, given, path)

    def _mapping(self, defaults: dict[str, Any], given: Any, path: str) -> Any:
        if not isinstance(given, dict):
            self.problem(path, f"'{path}' must be a mapping, got {_type_name(given)} {given!r}")
            return copy.deepcopy(defaults)
        if path == "generation.options":
            return self._options(given, path)
        merged = copy.deepcopy(defaults)
        for key, value in given.items():
            sub = f"{path}.{key}" if path else str(key)
            if key not in defaults:
                self.problem(sub, f"unknown key '{sub}'")
                continue
            merged[key] = self.merge(defaults[key], value, sub)
        return merged

    def _options(self, given: dict[Any, Any], path: str) -> dict[str, Any]:
        """Model options pass through to Ollama: string keys, JSON scalar or list values, finite numbers."""
        out: dict[str, Any] = {}
        for key, value in given.items():
            sub = f"{path}.{key}"
            if not isinstance(key, str):
                self.problem(sub, f"'{sub}': option names must be strings, got {_type_name(key)}")
            elif not _json_scalar_or_list(value):
                self.problem(sub, f"'{sub}' must be a string, number, boolean or list of them, got {value!r}")
            else:
                out[key] = value
        return out

    def _list(self, defaults: list[Any], given: Any, path: str) -> Any:
        if not isinstance(given, list):
            self.problem(path, f"'{path}' must be a list, got {_type_name(given)} {given!r}")
            return list(defaults)
        kind = type(defaults[0])
        bad = [v for v in given if not _is_kind(v, kind)]
        if bad:
            what = "numbers" if kind is float else f"{kind.__name__} values"
            self.problem(path, f"'{path}' must list {what}, got {given!r}")
            return list(defaults)
        return [float(v) for v in given] if kind is float else list(given)

    def _scalar(self, defaults: Any, given: Any, path: str) -> Any:
        kind = type(defaults)
        if not _is_kind(given, kind):
            expected = {bool: "true or false", float: "a number", int: "an integer", str: "a string"}[kind]
            self.problem(path, f"'{path}' must be {expected}, got {_type_name(given)} {given!r}")
            return defaults
        if path in CHOICES and given not in CHOICES[path]:
            self.problem(path, f"'{path}' must be one of {', '.join(CHOICES[path])}, got {given!r}")
            return defaults
        return float(given) if kind is float else given


def _is_kind(value: Any, kind: type) -> bool:
    """Strict YAML typing: bools are not numbers, floats are finite, ints are not floats."""
    if kind is bool or isinstance(value, bool):
        return kind is bool and isinstance(value, bool)
    if kind is float:
        return isinstance(value, int | float) and math.isfinite(value)
    return isinstance(value, kind)


def _json_scalar_or_list(value: Any) -> bool:
    if isinstance(value, list):
        return all(_json_scalar_or_list(v) and not isinstance(v, list) for v in value)
    if isinstance(value, float):
        return math.isfinite(value)
    return isinstance(value, str | int | bool) or value is None


# --- ranges and relations ----------------------------------------------------------------


def _in_range(value: float, low: float | None, high: float | None, low_in: bool, high_in: bool) -> bool:
    if low is not None and (value < low or (value == low and not low_in)):
        return False
    return not (high is not None and (value > high or (value == high and not high_in)))


def _describe(low: float | None, high: float | None, low_in: bool, high_in: bool) -> str:
    if high is None:
        return f"must be {'>=' if low_in else '>'} {low:g}" if low is not None else "must be a number"
    return f"must lie in {'[' if low_in else '('}{low:g}, {high:g}{']' if high_in else ')'}"


def _check(data: dict[str, Any], v: _Validator) -> None:
    """Ranges (:data:`RANGES`) and the relations between keys (see the module docstring)."""
    for path, (low, high, low_in, high_in) in RANGES.items():
        section, key = path.split(".")
        value = data[section][key]
        if not _in_range(value, low, high, low_in, high_in):
            v.problem(path, f"'{path}' {_describe(low, high, low_in, high_in)}, got {value}")
    decision = data["decision"]
    for low_key, high_key in (("reject_groundedness", "accept_groundedness"), ("low_specificity", "high_specificity")):
        if decision[low_key] > decision[high_key]:
            v.problem(
                f"decision.{low_key}",
                f"'decision.{low_key}' ({decision[low_key]}) must not exceed "
                f"'decision.{high_key}' ({decision[high_key]})",
            )
    legs = data["retrieval"]["legs"]
    if not legs or any(leg not in ("bm25", "embedding") for leg in legs) or len(set(legs)) != len(legs):
        v.problem("retrieval.legs", f"'retrieval.legs' must list bm25 and/or embedding, each once, got {legs!r}")
    elif data["retrieval"]["method"] == "bm25" and legs != ["bm25"]:
        v.problem("retrieval.legs", "'retrieval.legs' other than [bm25] need retrieval.method: hybrid")
    chunk = data["chunking"]
    if chunk["method"] == "fixed" and chunk["size"] >= 1 and not chunk["overlap"] < chunk["size"]:
        v.problem(
            "chunking.overlap",
            f"'chunking.overlap' must be below 'chunking.size' ({chunk['size']}) "
            f"for fixed chunks, got {chunk['overlap']}",
        )
    window = data["judge"]["window"]
    if not (len(window) == 2 and 0 <= window[0] <= window[1] <= 1):
        v.problem("judge.window", f"'judge.window' must be [low, high] with 0 <= low <= high <= 1, got {window!r}")
    for path in ("name", "generation.model", "embeddings.model", "judge.model"):
        node: Any = data
        for part in path.split("."):
            node = node[part]
        if not node.strip():
            v.problem(path, f"'{path}' must not be empty")
    host = data["ollama"]["host"]
    if host is not None and "://" in host and host.split("://", 1)[0] not in ("http", "https"):
        v.problem("ollama.host", f"'ollama.host' must be host, host:port or an http(s):// URL, got {host!r}")


# --- floors from calibration ---------------------------------------------------------------


def load_floors(path: Path, shown: str) -> tuple[dict[str, float], dict[str, Any]]:
    """Read a ``--save-floors`` file: (scoring key → floor, the file's JSON); DataError listing every problem."""
    problems: list[Problem] = []
    text = read_text(path, shown, problems)
    data: Any = None
    if text is not None:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            problems.append(Problem(shown, f"invalid JSON: {exc.msg} (column {exc.colno})", line=exc.lineno))
    well_formed = isinstance(data, dict) and isinstance(data.get("floors"), dict) and bool(data["floors"])
    if text is not None and not problems and not well_formed:
        problems.append(Problem(shown, "expected an object with a non-empty 'floors' object "
                                "(written by `playground calibrate ... --save-floors`)"))
    floors: dict[str, float] = {}
    if not problems:
        for dim, value in data["floors"].items():
            if dim not in FLOOR_KEYS:
                problems.append(
                    Problem(shown, f"unknown dimension '{dim}' in 'floors' (known: {', '.join(FLOOR_KEYS)})")
                )
            elif not _is_kind(value, float) or not 0 <= value <= 1:
                problems.append(Problem(shown, f"'floors.{dim}' must be a number in [0, 1], got {value!r}"))
            else:
                floors[FLOOR_KEYS[dim]] = float(value)
    if problems:
        raise DataError(problems, "invalid floors file")
    return floors, data


def _apply_floors(data: dict[str, Any], base: Path | None, v: _Validator) -> None:
    source = data["scoring"]["floor_source"]
    if source is None:
        return
    path = Path(source)
    if not path.is_absolute() and base is not None:
        path = base / path
    try:
        floors, raw = load_floors(path, str(path))
    except DataError as exc:
        for p in exc.problems:
            v.problem("scoring.floor_source", f"'scoring.floor_source': {p}")
        return
    data["scoring"].update(floors)
    data["floors_from"] = {
        "path": source,
        "sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
        "floors": {dim: floors[key] for dim, key in FLOOR_KEYS.items() if key in floors},
        **{k: raw[k] for k in ("source", "criterion", "data") if k in raw},
    }


# --- entry points --------------------------------------------------------------------------


def config_from_dict(
    given: dict[str, Any], file: str = "<config>", *, base: Path | None = None, lines: dict[str, int] | None = None
) -> Config:
    """Merge ``given`` over :data:`DEFAULTS` and validate; raise DataError listing every problem.

    ``base``: the folder a relative ``scoring.floor_source`` is resolved against (default: the
    current directory); ``lines``: key path → line in ``file``, for the messages.
    """
    v = _Validator(file, lines or {})
    data = v.merge(DEFAULTS, given, "")
    _check(data, v)
    if not v.problems:
        _apply_floors(data, base, v)
    if v.problems:
        raise DataError(v.problems, "invalid configuration")
    return Config(data, file, base)


def _key_lines(node: Any, prefix: str = "") -> dict[str, int]:
    """Key path → 1-based line of every mapping key in a composed YAML tree."""
    out: dict[str, int] = {}
    if node is None or not hasattr(node, "value") or not isinstance(node.value, list):
        return out
    for item in node.value:
        if isinstance(item, tuple):
            key, value = item
            path = f"{prefix}{key.value}"
            out[path] = key.start_mark.line + 1
            out.update(_key_lines(value, path + "."))
    return out


def load_config(path: str | Path | None = None) -> Config:
    """Load a YAML configuration (``None``: the repository's ``configs/default.yaml``)."""
    from ..installed import REPO_ROOT

    path = Path(path) if path is not None else REPO_ROOT / "configs" / "default.yaml"
    problems: list[Problem] = []
    text = read_text(path, str(path), problems)
    if text is None:
        if problems[0].message == "file not found":
            problems = [Problem(str(path), "configuration file not found")]
        raise DataError(problems, "invalid configuration")
    try:
        node, given = safeyaml.load_with_node(text)
    except safeyaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise DataError(
            [
                Problem(
                    str(path), f"malformed YAML: {getattr(exc, 'problem', exc)}", line=mark.line + 1 if mark else None
                )
            ],
            "invalid configuration",
        ) from None
    given = given if given is not None else {}
    if not isinstance(given, dict):
        raise DataError([Problem(str(path), "a configuration must be a mapping", line=1)], "invalid configuration")
    return config_from_dict(given, str(path), base=path.parent, lines=_key_lines(node))
