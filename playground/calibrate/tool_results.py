"""Scorer results as their tools write them: Inspect AI eval logs, MLflow evaluation tables, promptfoo output.

:func:`read_scored_rows` is what ``calibrate external`` and the calibrated gate read a result table with: a
file one of these tools wrote is recognised by its content and turned into rows of the shape the other result
tables have (``id``, ``user_input``, ``response``, ``reference`` and one column per metric); any other file
goes to :func:`playground.importers.core.read_rows` (CSV, JSONL, JSON, Parquet, a Hugging Face folder).

=================  ==============================================  ===============================================
tool               file (as the tool writes it)                    rows and metric columns
=================  ==============================================  ===============================================
Inspect AI         an eval log: ``.eval`` (a zip archive holding   one row per sample and epoch; id ``<id>`` (epoch
                   ``header.json`` and ``samples/*.json``) or      > 1: ``<id>#<epoch>``); input: the text of the
                   ``.json`` (``{"version", "eval", "samples"}``)  last user message; response: the model's
                                                                   completion; one column per scorer, its value:
                                                                   ``C`` 1, ``I`` 0, ``P`` 0.5, ``N`` 0, a bool 1/0,
                                                                   a number as it is, a dict one column per key
                                                                   (``scorer/key``)
MLflow             ``eval_results_table.json`` of                  one row per table row; ``inputs``/``request``
                   ``mlflow.evaluate`` (``{"columns", "data"}``,   the input, ``outputs``/``predictions``/
                   pandas' split layout), or a GenAI evaluation    ``response`` the response; the metric columns
                   table saved the same way                        are the ones named ``<metric>/score`` or
                                                                   ``<scorer>/value`` (``yes`` 1, ``no`` 0), kept
                                                                   as named; the rest (justifications, token
                                                                   counts) is left out
promptfoo          the output JSON of ``promptfoo eval -o FILE``   one row per result; id ``<test>:<prompt>``
                   (``{"results": {"results": [...]}}``)           (indexes); input: the test's ``question``,
                                                                   ``query`` or ``input`` var, else the prompt;
                                                                   columns ``score`` (the result's score), ``pass``
                                                                   (1/0) and each named score
=================  ==============================================  ===============================================

A file of these tools that holds no row is a problem naming the file; a value that is no number stays as it
is written, so the score check names it with its row (``score 'maybe' is not a number``).
"""
from __future__ import annotations

import json
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import Problem
from ..importers.core import read_rows
from ..importers.rows import Place, Row
from ..limits import LimitExceeded, check_file

__all__ = ["TOOL_FORMATS", "read_scored_rows", "tool_format"]

#: The tools whose files :func:`read_scored_rows` recognises.
TOOL_FORMATS = ("inspect", "mlflow", "promptfoo")
_INSPECT_VALUES = {"C": 1.0, "I": 0.0, "P": 0.5, "N": 0.0}
#: The zip compression method number of Zstandard (APPNOTE 4.4.5), which Inspect's .eval archives use.
_ZIP_ZSTD = 93


def tool_format(path: Path) -> tuple[str | None, Any]:
    """``(format, the parsed file)`` of a file one of :data:`TOOL_FORMATS` wrote, else ``(None, None)``."""
    if path.is_file() and zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as z:
            if "header.json" in z.namelist():
                return "inspect", None
        return None, None
    if path.suffix.lower() != ".json" or not path.is_file():
        return None, None
    try:
        body = json.loads(path.read_text(encoding="utf-8-sig"))
    except (UnicodeDecodeError, ValueError):
        return None, None  # read_rows says what is wrong with it
    if not isinstance(body, dict):
        return None, None
    if {"eval", "samples"} <= body.keys() and "version" in body:
        return "inspect", body
    if {"columns", "data"} <= body.keys():
        return "mlflow", body
    results = body.get("results")
    if isinstance(results, dict) and isinstance(results.get("results"), list):
        return "promptfoo", body
    return None, None


def read_scored_rows(path: str | Path, problems: list[Problem]) -> tuple[str, list[Row]]:
    """``(format, rows)`` of a result table: a tool's own file (module docstring), else :func:`read_rows`'s."""
    path = Path(path)
    try:
        if path.is_file():
            check_file(path, text=not zipfile.is_zipfile(path))
    except LimitExceeded as exc:
        problems.append(Problem(path.name, str(exc)))
        return "", []
    fmt, body = tool_format(path)
    if fmt is None:
        return read_rows(path, problems)
    readers: dict[str, Callable[[Path, Any], list[Row]]] = {
        "inspect": _inspect_rows, "mlflow": _mlflow_rows, "promptfoo": _promptfoo_rows}
    rows = readers[fmt](path, body)
    if not rows:
        problems.append(Problem(path.name, f"a {fmt} file with no scored row"))
    return fmt, rows


# --------------------------------------------------------------------------- Inspect AI


def _inspect_samples(path: Path, body: Any) -> list[dict[str, Any]]:
    if body is not None:
        return list(body.get("samples") or [])
    with zipfile.ZipFile(path) as z, path.open("rb") as raw:
        infos = sorted((i for i in z.infolist() if i.filename.startswith("samples/") and i.filename.endswith(".json")),
                       key=lambda i: i.filename)
        return [json.loads(_member(z, raw, i).decode("utf-8")) for i in infos]


def _member(z: zipfile.ZipFile, raw: Any, info: zipfile.ZipInfo) -> bytes:
    """A member's bytes; zstd (zip method 93, what Inspect writes) read from the raw archive and decompressed."""
    if info.compress_type != _ZIP_ZSTD:
        return z.read(info)
    import zstandard

    raw.seek(info.header_offset)
    header = raw.read(30)  # the local file header: its name and extra field lengths at bytes 26-29
    name_len, extra_len = int.from_bytes(header[26:28], "little"), int.from_bytes(header[28:30], "little")
    raw.seek(info.header_offset + 30 + name_len + extra_len)
    reader = zstandard.ZstdDecompressor().stream_reader(raw.read(info.compress_size), read_across_frames=True)
    return bytes(reader.read())


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(_text(part.get("text", "")) if isinstance(part, dict) else _text(part) for part in content)
    return "" if content is None else str(content)


def _inspect_input(value: Any) -> str:
    if isinstance(value, list):
        users = [m for m in value if isinstance(m, dict) and m.get("role") == "user"]
        return _text(users[-1].get("content")) if users else ""
    return _text(value)


def _inspect_value(name: str, value: Any) -> dict[str, Any]:
    if isinstance(value, dict):
        return {f"{name}/{k}": v for k, sub in value.items() for v in _inspect_value(name, sub).values()}
    if isinstance(value, bool):
        return {name: 1.0 if value else 0.0}
    if isinstance(value, str) and value in _INSPECT_VALUES:
        return {name: _INSPECT_VALUES[value]}
    return {name: value}


def _inspect_rows(path: Path, body: Any) -> list[Row]:
    samples = sorted(_inspect_samples(path, body), key=lambda s: (int(s.get("epoch") or 1), str(s.get("id"))))
    rows = []
    for i, s in enumerate(samples, 1):
        epoch = int(s.get("epoch") or 1)
        data: dict[str, Any] = {"id": f"{s.get('id')}" + (f"#{epoch}" if epoch > 1 else ""),
                                "user_input": _inspect_input(s.get("input")),
                                "response": _text((s.get("output") or {}).get("completion")),
                                "reference": _text(s.get("target"))}
        for name, score in sorted((s.get("scores") or {}).items()):
            data.update(_inspect_value(name, (score or {}).get("value")))
        rows.append(Row(Place(path.name, "sample", i), data))
    return rows


# --------------------------------------------------------------------------- MLflow

_MLFLOW_INPUT = ("inputs", "request", "input", "question")
_MLFLOW_OUTPUT = ("outputs", "predictions", "response", "output")
_MLFLOW_TARGET = ("targets", "ground_truth", "expected_response")


def _first(row: dict[str, Any], names: tuple[str, ...]) -> Any:
    return next((row[n] for n in names if row.get(n) is not None), None)


def _mlflow_value(value: Any) -> Any:
    if isinstance(value, str) and value.strip().lower() in ("yes", "no"):
        return 1.0 if value.strip().lower() == "yes" else 0.0
    return float(value) if isinstance(value, bool) else value


def _mlflow_rows(path: Path, body: Any) -> list[Row]:
    columns = [str(c) for c in body["columns"]]
    metrics = [c for c in columns if c.endswith(("/score", "/value"))]
    rows = []
    for i, values in enumerate(body["data"], 1):
        row = dict(zip(columns, values, strict=False))
        data: dict[str, Any] = {"id": str(row.get("id", i - 1)), "user_input": _text(_first(row, _MLFLOW_INPUT)),
                                "response": _text(_first(row, _MLFLOW_OUTPUT)),
                                "reference": _text(_first(row, _MLFLOW_TARGET))}
        data.update({c: _mlflow_value(row.get(c)) for c in metrics})
        rows.append(Row(Place(path.name, "row", i), data))
    return rows


# --------------------------------------------------------------------------- promptfoo


def _promptfoo_rows(path: Path, body: Any) -> list[Row]:
    rows = []
    for i, r in enumerate(body["results"]["results"], 1):
        variables = r.get("vars") or (r.get("testCase") or {}).get("vars") or {}
        question = _first(variables, ("question", "query", "input")) or (r.get("prompt") or {}).get("raw")
        output = (r.get("response") or {}).get("output")
        data: dict[str, Any] = {
            "id": f"{r.get('testIdx', i - 1)}:{r.get('promptIdx', 0)}", "user_input": _text(question),
            "response": output if isinstance(output, str) else json.dumps(output, sort_keys=True),
            "score": r.get("score"), "pass": None if r.get("success") is None else float(bool(r["success"]))}
        data.update(r.get("namedScores") or {})
        rows.append(Row(Place(path.name, "result", i), data))
    return rows
