"""JSON Lines as the project reads them: the real-data claim files, imported datasets, label files.

Rules (one place, so every reader agrees):

* a file is UTF-8; bytes that are not name the line they are on;
* lines are split on ``"\\n"`` only — :meth:`str.splitlines` would also split
  on U+2028, U+2029, U+0085 and friends, which ``json.dumps(...,
  ensure_ascii=False)`` leaves raw inside strings; a ``"\\r"`` before it (CRLF)
  is part of no value; the newline that ends the last line starts no line;
* a line that is not valid JSON is a problem ``(line_number, message)``
  (1-based), collected with every other problem of the file, never raised alone;
  its message is :func:`json_value`'s, the one wording of the project:
  ``invalid JSON: <why> (column <c>)``, or ``invalid JSON: nested too deep``
  when the decoder runs out of recursion.
"""
from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path

__all__ = ["LineProblems", "json_lines", "json_value", "read_lines", "split_lines"]


class LineProblems(ValueError):
    """A file failed validation; ``problems`` lists every ``(line_number, message)`` found, sorted
    (line 0 = the file as a whole).  ``WHAT`` names the file's kind when no path is given."""

    WHAT = "file"

    def __init__(self, problems: list[tuple[int, str]], path: str = ""):
        self.problems = sorted(problems)
        self.path = path
        head = f"{path or self.WHAT}: {len(self.problems)} problem(s)"
        body = "\n".join(f"  line {ln}: {msg}" for ln, msg in self.problems)
        super().__init__(f"{head}\n{body}")


def split_lines(text: str) -> list[str]:
    """The lines of a JSON Lines text (module rules: ``"\\n"`` only; no line after the final newline)."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def read_lines(path: str | Path, error: type[LineProblems]) -> list[str]:
    """The lines of the UTF-8 file ``path``; bytes that are not UTF-8 raise ``error`` naming their line.

    ``FileNotFoundError`` when the file is absent.
    """
    p = Path(path)
    raw = p.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise error([(line, f"not UTF-8 text ({exc.reason} at byte {exc.start})")], str(p)) from None
    return split_lines(text)


def json_value(text: str) -> tuple[object, str]:
    """``(value, "")`` for JSON ``text``, else ``(None, message)`` in the project's one wording
    (module docstring); a value nested deeper than the decoder's recursion is a message, not a crash."""
    try:
        return json.loads(text), ""
    except json.JSONDecodeError as e:
        return None, f"invalid JSON: {e.msg} (column {e.colno})"
    except RecursionError:
        return None, "invalid JSON: nested too deep"


def json_lines(lines: Sequence[str], problems: list[tuple[int, str]]) -> Iterator[tuple[int, object]]:
    """``(line_number, value)`` of every line that holds JSON; an empty line and a line that is not JSON
    are appended to ``problems`` (``empty line``, or :func:`json_value`'s message)."""
    for ln, raw in enumerate(lines, start=1):
        text = raw.rstrip("\r\n")
        if not text.strip():
            problems.append((ln, "empty line"))
            continue
        value, problem = json_value(text)
        if problem:
            problems.append((ln, problem))
            continue
        yield ln, value
