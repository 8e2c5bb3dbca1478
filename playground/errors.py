"""One exception type for bad input, carrying every problem found at once; the readers that raise it."""
from __future__ import annotations

import errno
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["DataError", "Problem", "json_type", "load_json_object", "read_text"]


@dataclass(frozen=True, order=True)
class Problem:
    """One thing wrong with the input: the file, the item in it (case/fact id), the line."""

    file: str
    message: str
    where: str = ""
    line: int | None = None

    def __str__(self) -> str:
        place = self.file
        if self.line is not None:
            place += f":{self.line}"
        if self.where:
            place += f" [{self.where}]"
        return f"{place}: {self.message}"


class DataError(ValueError):
    """Raised with the full list of problems; the CLI prints it without a traceback."""

    def __init__(self, problems: list[Problem], summary: str = "invalid data"):
        self.problems = sorted(problems, key=lambda p: (p.file, p.line or 0, p.where, p.message))
        self.summary = summary
        super().__init__(self.report())

    def report(self) -> str:
        lines = [f"{self.summary}: {len(self.problems)} problem(s)"]
        lines += [f"  {p}" for p in self.problems]
        return "\n".join(lines)


def read_text(path: Path, rel: str, problems: list[Problem]) -> str | None:
    """The UTF-8 text of ``path``, or None with one problem appended saying why it cannot be read.

    Covers what a folder of data files can hold besides files: directories with a file's
    name, dangling symbolic links, symbolic link loops, unreadable files, and bytes that are
    not UTF-8 (with the line and byte offset of the first bad byte).
    """
    try:
        raw = path.read_bytes()
    except IsADirectoryError:
        problems.append(Problem(rel, "is a directory, expected a file"))
        return None
    except FileNotFoundError:
        if path.is_symlink():
            problems.append(Problem(rel, f"dangling symbolic link (its target {os.readlink(path)} does not exist)"))
        else:
            problems.append(Problem(rel, "file not found"))
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            problems.append(Problem(rel, "symbolic link loop (following the link leads back to it)"))
        else:
            problems.append(Problem(rel, f"cannot read ({exc.strerror or exc})"))
        return None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        problems.append(Problem(rel, f"not UTF-8 text ({exc.reason} at byte {exc.start})", line=line))
        return None


def json_type(value: object) -> str:
    """The JSON name of a parsed value's type: object, array, string, number, boolean or null."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object" if isinstance(value, dict) else type(value).__name__


def load_json_object(
    path: str | Path,
    what: str,
    required: Sequence[str] = (),
    *,
    summary: str = "",
    shown: str = "",
    hint: str = "",
) -> dict[str, Any]:
    """The JSON object in the UTF-8 file ``path`` holding every key of ``required``, else one DataError.

    ``what`` names what the file should be, with its article ("a baseline"); ``shown`` is the file
    as the error names it (default ``str(path)``); ``summary`` heads the error (default
    ``cannot read <what>``); ``hint``, when given, ends every message after " — ".  The one problem:

    * the file cannot be read or is not UTF-8: as :func:`read_text` says (not UTF-8: with its line);
    * nothing but white space: ``empty file, expected <what> (a JSON object)``;
    * not JSON: ``truncated or not JSON (<why>, column <c>)`` at the line where parsing stopped;
    * JSON but not an object: ``not <what>: a JSON <type>, expected an object``;
    * keys missing: ``not <what> (missing 'k1', 'k2')``, every missing key in the order of ``required``.
    """
    shown = shown or str(path)
    problems: list[Problem] = []
    text = read_text(Path(path), shown, problems)
    data: Any = None
    if text is not None and not text.strip():
        problems.append(Problem(shown, f"empty file, expected {what} (a JSON object)"))
    elif text is not None:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            problems.append(Problem(shown, f"truncated or not JSON ({exc.msg}, column {exc.colno})", line=exc.lineno))
        else:
            if not isinstance(data, dict):
                problems.append(Problem(shown, f"not {what}: a JSON {json_type(data)}, expected an object"))
            elif missing := [k for k in required if k not in data]:
                problems.append(Problem(shown, f"not {what} (missing {', '.join(repr(k) for k in missing)})"))
    if problems:
        if hint:
            problems = [Problem(p.file, f"{p.message} — {hint}", p.where, p.line) for p in problems]
        raise DataError(problems, summary or f"cannot read {what}")
    assert isinstance(data, dict)
    return data
